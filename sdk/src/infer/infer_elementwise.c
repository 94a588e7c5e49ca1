/* sdk/src/infer/infer_elementwise.c - shape inference of elementwise operators.
 *
 * Unary ops keep their input's type (activations, math, Softmax-like ops
 * that work along an axis, Identity, Dropout, Clip, CumSum, Trilu, ...);
 * Cast/CastLike change only the dtype; binary and variadic ops broadcast
 * numpy-style (an error naming the node when two static dims > 1 differ),
 * comparisons and logic give bool, Where broadcasts three inputs.  Integer
 * results computed from shape constants are propagated by
 * infer_pc_elementwise (infer_const.c).
 */
#include "infer.h"

static int same_as_input(infer_ictx *c)
{
    c->out[0] = *infer_in(c, 0);
    return infer_pc_elementwise(c);
}

static int unary_bool(infer_ictx *c)
{
    c->out[0] = *infer_in(c, 0);
    c->out[0].dtype = PH_DT_BOOL;
    return infer_pc_elementwise(c);
}

static int infer_dropout(infer_ictx *c)
{
    c->out[0] = *infer_in(c, 0);
    if (c->nout > 1) {
        c->out[1] = *infer_in(c, 0);
        c->out[1].dtype = PH_DT_BOOL;
    }
    return 0;
}

static int infer_cast(infer_ictx *c)
{
    c->out[0] = *infer_in(c, 0);
    c->out[0].dtype = (int)ph_node_attr_int(c->n, "to", PH_DT_UNDEFINED);
    return infer_pc_elementwise(c);
}

static int infer_cast_like(infer_ictx *c)
{
    c->out[0] = *infer_in(c, 0);
    c->out[0].dtype = infer_in(c, 1)->dtype;
    return infer_pc_elementwise(c);
}

/* EyeLike, RandomNormalLike, RandomUniformLike, Bernoulli: input shape, dtype attr or input's. */
static int infer_like(infer_ictx *c)
{
    c->out[0] = *infer_in(c, 0);
    c->out[0].dtype = (int)ph_node_attr_int(c->n, "dtype", infer_in(c, 0)->dtype);
    return 0;
}

/* Broadcast every input; dtype from input `dt_from` (or bool when -1). */
static int broadcast_all(infer_ictx *c, int first, int dt_from)
{
    infer_shape s = *infer_in(c, (size_t)first);
    for (size_t i = (size_t)first + 1; i < c->nin; i++) {
        if (!infer_has_in(c, i))
            continue;
        int rc = infer_broadcast(c, &s, infer_in(c, i), &s);
        if (rc)
            return rc;
    }
    c->out[0] = s;
    c->out[0].dtype = PH_DT_UNDEFINED;
    if (dt_from < 0)
        c->out[0].dtype = PH_DT_BOOL;
    else
        for (size_t i = (size_t)dt_from; i < c->nin && !c->out[0].dtype; i++)
            c->out[0].dtype = infer_in(c, i)->dtype;
    return infer_pc_elementwise(c);
}

static int infer_binary(infer_ictx *c) { return broadcast_all(c, 0, 0); }
static int infer_compare(infer_ictx *c) { return broadcast_all(c, 0, -1); }

static int infer_where(infer_ictx *c)
{
    int rc = broadcast_all(c, 0, 1);
    if (!rc && !c->out[0].dtype)
        c->out[0].dtype = infer_in(c, 2)->dtype;
    return rc;
}

/* PRelu: slope broadcasts to X (unidirectionally); the output is X's shape.
 * Before opset 7 a 1-D slope of X's channel count is per channel (dim 1),
 * not numpy-broadcast: there only X's shape is given to the output. */
static int infer_prelu(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0), *sl = infer_in(c, 1);
    if (c->opset < 7 && sl->rank == 1 && x->rank >= 3) {
        c->out[0] = *x;
        return 0;
    }
    infer_shape s;
    int rc = infer_broadcast(c, infer_in(c, 0), infer_in(c, 1), &s);
    if (rc)
        return rc;
    c->out[0] = *infer_in(c, 0);
    if (c->out[0].rank < 0 && s.rank >= 0) {
        c->out[0].rank = s.rank;
        for (int i = 0; i < s.rank; i++)
            c->out[0].d[i] = s.d[i];
    }
    return 0;
}

infer_fn infer_elementwise_fn(ph_op op)
{
    switch (op) {
    case PH_OP_Abs: case PH_OP_Acos: case PH_OP_Acosh: case PH_OP_Asin: case PH_OP_Asinh: case PH_OP_Atan:
    case PH_OP_Atanh: case PH_OP_Ceil: case PH_OP_Celu: case PH_OP_Cos: case PH_OP_Cosh: case PH_OP_Elu:
    case PH_OP_Erf: case PH_OP_Exp: case PH_OP_Floor: case PH_OP_Gelu: case PH_OP_HardSigmoid:
    case PH_OP_HardSwish: case PH_OP_Hardmax: case PH_OP_Identity: case PH_OP_LeakyRelu: case PH_OP_Log:
    case PH_OP_LogSoftmax: case PH_OP_LpNormalization: case PH_OP_LRN: case PH_OP_Mish: case PH_OP_Neg:
    case PH_OP_Reciprocal: case PH_OP_Relu: case PH_OP_Round: case PH_OP_Selu: case PH_OP_Shrink:
    case PH_OP_Sigmoid: case PH_OP_Sign: case PH_OP_Sin: case PH_OP_Sinh: case PH_OP_Softmax:
    case PH_OP_Softplus: case PH_OP_Softsign: case PH_OP_Sqrt: case PH_OP_Tan: case PH_OP_Tanh:
    case PH_OP_ThresholdedRelu: case PH_OP_BitwiseNot: case PH_OP_Clip: case PH_OP_CumSum:
    case PH_OP_Trilu: case PH_OP_ReverseSequence: case PH_OP_Scatter: case PH_OP_ScatterElements:
    case PH_OP_ScatterND:
        return same_as_input;
    case PH_OP_Not:
        return same_as_input;
    case PH_OP_IsInf: case PH_OP_IsNaN:
        return unary_bool;
    case PH_OP_Dropout:
        return infer_dropout;
    case PH_OP_Cast:
        return infer_cast;
    case PH_OP_CastLike:
        return infer_cast_like;
    case PH_OP_EyeLike: case PH_OP_RandomNormalLike: case PH_OP_RandomUniformLike: case PH_OP_Bernoulli:
        return infer_like;
    case PH_OP_Add: case PH_OP_Sub: case PH_OP_Mul: case PH_OP_Div: case PH_OP_Pow: case PH_OP_Mod:
    case PH_OP_BitShift: case PH_OP_BitwiseAnd: case PH_OP_BitwiseOr: case PH_OP_BitwiseXor: case PH_OP_Max:
    case PH_OP_Min: case PH_OP_Sum: case PH_OP_Mean:
        return infer_binary;
    case PH_OP_And: case PH_OP_Or: case PH_OP_Xor: case PH_OP_Equal: case PH_OP_Less: case PH_OP_Greater:
    case PH_OP_LessOrEqual: case PH_OP_GreaterOrEqual:
        return infer_compare;
    case PH_OP_Where:
        return infer_where;
    case PH_OP_PRelu:
        return infer_prelu;
    default:
        return NULL;
    }
}
