/* slice_before_elementwise - slice the input of an elementwise op instead of
 * its output (seed 003 operator forward: Slice and Mul), so the op computes
 * only the elements the Slice keeps.
 *
 * Requires: s = Slice(y, ...) the only reader of y = op(ins...), op an
 *   elementwise default-domain op with one output (ph_node_is_elementwise:
 *   unary maths and activations, Add/Sub/Mul/Div/Pow/Max/Min/Sum/Mean,
 *   comparisons, logical ops, Where, PRelu, ...) without a legacy axis or
 *   broadcast attribute, exactly one of whose inputs, x, is not a constant
 *   (the others are initializers, or omitted); x of known rank; the Slice's
 *   parameters constant (ends may be a symbolic dim when x takes the
 *   Slice as it is).  Each operand is aligned on the right against y's rank
 *   r (the largest of theirs); on every sliced axis, with D the dim of y:
 *     - an operand whose dim there is D is sliced the same way,
 *     - an operand of dim 1 (or without the axis) while D != 1 is kept
 *       (it is broadcast; slicing it would be wrong);
 *   so x's dim must be known on a sliced axis where a constant's dim is not
 *   1 (x could be 1 or D there: refused otherwise).  Where every constant
 *   has 1 (or lacks the axis), x is sliced whatever its dim.  A constant is
 *   never sliced at a symbolic end.
 * Changes: Slice(op(x, c...)) becomes op(Slice'(x), c'...): x gets a copy of
 *   the Slice (its very inputs) when it is sliced on all the Slice's axes
 *   and has rank r, else a new Slice on its own axes with the same starts,
 *   ends and steps (no Slice at all when it is sliced on none); each
 *   constant sliced on some axis becomes a new initializer holding those
 *   elements (clamped as ONNX does), the others are read as they are.  The
 *   op keeps its attributes and name; y and its op go.
 * Exact: yes (the same operation on the same elements; any dtype).
 */
#include <string.h>

#include <passhost/passhost.h>

#define MAX_IN 16

/* The elements of t (rank rt, right-aligned in rank r) that Slice sp keeps
 * on the y axes in mask: a new tensor (caller owns it), NULL on failure. */
static ph_tensor *slice_const(ph_rewriter *rw, const ph_tensor *t, int r, uint64_t mask, const ph_slice_params *sp)
{
    int rt = (int)ph_tensor_rank(t), off = r - rt;
    size_t es = ph_dtype_size(ph_tensor_dtype(t));
    const unsigned char *src = ph_tensor_data(t);
    int64_t *dims = ph_rw_alloc(rw, (size_t)(4 * rt + 1) * sizeof *dims), *first = dims + rt, *step = first + rt,
            *ix = step + rt, total = 1;
    if (!dims || !es || !src)
        return NULL;
    for (int d = 0; d < rt; d++) {
        dims[d] = ph_tensor_dim(t, d), first[d] = 0, step[d] = 1;
        for (int k = 0; k < sp->n; k++)
            if (sp->axis[k] == d + off && (mask >> (d + off) & 1)) {
                step[d] = sp->step[k];
                dims[d] = ph_slice_length(ph_tensor_dim(t, d), sp->start[k], sp->end[k], sp->step[k], &first[d]);
            }
        total *= dims[d];
    }
    unsigned char *dst = ph_rw_alloc(rw, (size_t)(total ? total : 1) * es);
    if (!dst)
        return NULL;
    for (int64_t e = 0; e < total; e++) {
        int64_t at = 0; /* source offset of output element e, whose index is ix */
        for (int d = 0; d < rt; d++)
            at = at * ph_tensor_dim(t, d) + first[d] + ix[d] * step[d];
        memcpy(dst + (size_t)e * es, src + (size_t)at * es, es);
        for (int d = rt - 1; d >= 0 && ++ix[d] == dims[d]; d--)
            ix[d] = 0;
    }
    return ph_tensor_new(ph_tensor_dtype(t), (size_t)rt, dims, dst);
}

/* What a match becomes: per input, the y axes (bits) it is sliced on. */
typedef struct plan {
    ph_node *op, *slice;
    size_t n_in, xi; /* inputs; index of x */
    int r;           /* y's rank */
    uint64_t mask[MAX_IN], all;
    ph_slice_params sp;
} plan;

/* Rank of input i (a constant's, or x's known rank); -1 if absent. */
static int in_rank(const ph_node *n, size_t i)
{
    ph_value *v = ph_node_input(n, i);
    const ph_tensor *t = v ? ph_value_const(v) : NULL;
    return !v ? -1 : t ? (int)ph_tensor_rank(t) : ph_value_rank(v);
}

/* Dim of input i on y axis a (1 if it lacks the axis, -1 unknown). */
static int64_t in_dim(const ph_node *n, size_t i, int r, int a)
{
    ph_value *v = ph_node_input(n, i);
    const ph_tensor *t = ph_value_const(v);
    int ri = in_rank(n, i), d = a - (r - ri);
    return d < 0 ? 1 : t ? ph_tensor_dim(t, (size_t)d) : ph_value_dim(v, d);
}

static int make_plan(const ph_match *m, plan *p)
{
    memset(p, 0, sizeof *p);
    p->op = ph_match_node(m, "y");
    p->slice = ph_match_root(m);
    p->n_in = ph_node_input_count(p->op);
    p->xi = MAX_IN;
    if (!ph_node_is_elementwise(p->op) || ph_node_attr_type(p->op, "axis") != PH_ATTR_NONE ||
        ph_node_attr_type(p->op, "broadcast") != PH_ATTR_NONE || p->n_in == 0 || p->n_in > MAX_IN)
        return 0;
    for (size_t i = 0; i < p->n_in; i++) {
        ph_value *v = ph_node_input(p->op, i);
        if (v && !ph_value_const(v)) {
            if (p->xi != MAX_IN)
                return 0; /* two inputs that are not constant */
            p->xi = i;
        }
        int ri = in_rank(p->op, i);
        if (v && ri < 0)
            return 0;
        p->r = ri > p->r ? ri : p->r;
    }
    if (p->xi == MAX_IN || p->r > 64 || ph_node_slice_params(p->slice, p->r, &p->sp))
        return 0;
    for (int k = 0; k < p->sp.n; k++) {
        int a = (int)p->sp.axis[k], unknown = 0;
        int64_t D = 1;
        for (size_t i = 0; i < p->n_in; i++) {
            if (!ph_node_input(p->op, i))
                continue;
            int64_t d = in_dim(p->op, i, p->r, a);
            if (d < 0)
                unknown = 1;
            else if (d != 1 && D != 1 && d != D)
                return 0;
            else if (d != 1)
                D = d;
        }
        for (size_t i = 0; i < p->n_in; i++) {
            if (!ph_node_input(p->op, i))
                continue;
            int has = a >= p->r - in_rank(p->op, i);
            int64_t d = in_dim(p->op, i, p->r, a);
            if (D == 1 && unknown) /* only x is unknown: y's dim is x's, constants broadcast */
                has = i == p->xi;
            else if (D != 1 && has && d < 0)
                return 0; /* x could be D or broadcast: static shape needed */
            else if (D != 1)
                has = has && d == D;
            if (!has)
                continue;
            if (i != p->xi && p->sp.end_sym[k])
                return 0; /* a constant cannot be sliced at a symbolic end */
            p->mask[i] |= (uint64_t)1 << a;
        }
        p->all |= (uint64_t)1 << a;
    }
    return 1;
}

static int check(const ph_match *m, const ph_params *params)
{
    plan p;
    return make_plan(m, &p);
}

static int forward(ph_rewriter *rw, const ph_match *m)
{
    plan p;
    if (!make_plan(m, &p))
        return 0;
    ph_value *in[MAX_IN];
    for (size_t i = 0; i < p.n_in; i++) {
        in[i] = ph_node_input(p.op, i);
        if (!p.mask[i])
            continue;
        if (i != p.xi) {
            ph_tensor *t = slice_const(rw, ph_value_const(in[i]), p.r, p.mask[i], &p.sp);
            if (!t || !(in[i] = ph_rw_initializer(rw, "sliced", t)))
                return PH_ENOMEM;
            continue;
        }
        int rx = ph_value_rank(in[i]), off = p.r - rx;
        if (p.mask[i] == p.all && off == 0) { /* the Slice as it is, on x */
            ph_value *sin[5];
            size_t n = ph_node_input_count(p.slice);
            for (size_t j = 0; j < n && j < 5; j++)
                sin[j] = j ? ph_node_input(p.slice, j) : in[i];
            ph_node *c = n <= 5 ? ph_rw_clone(rw, p.slice, NULL, n, sin) : NULL;
            if (!c)
                return n <= 5 ? PH_ENOMEM : 0;
            in[i] = ph_node_output(c, 0);
            continue;
        }
        int64_t st[64], en[64], ax[64], sp[64];
        size_t n = 0;
        int steps = 0;
        for (int k = 0; k < p.sp.n; k++)
            if (p.mask[i] >> p.sp.axis[k] & 1) {
                if (p.sp.end_sym[k])
                    return 0;
                st[n] = p.sp.start[k], en[n] = p.sp.end[k], ax[n] = p.sp.axis[k] - off, sp[n] = p.sp.step[k];
                steps |= sp[n++] != 1;
            }
        if (!(in[i] = ph_rw_slice(rw, in[i], n, st, en, ax, steps ? sp : NULL)))
            return PH_ENOMEM;
    }
    ph_node *op = ph_rw_clone(rw, p.op, NULL, p.n_in, in);
    if (!op)
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "s"), ph_node_output(op, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"slice_forward",
     "y = Abs|Acos|Acosh|Asin|Asinh|Atan|Atanh|BitwiseNot|Cast|Ceil|Celu|Clip|Cos|Cosh|Elu|Erf|Exp"
     "|Floor|Gelu|HardSigmoid|HardSwish|Identity|IsInf|IsNaN|LeakyRelu|Log|Mish|Neg|Not|Reciprocal"
     "|Relu|Round|Selu|Shrink|Sigmoid|Sign|Sin|Sinh|Softplus|Softsign|Sqrt|Tan|Tanh|ThresholdedRelu"
     "|Add|And|BitShift|BitwiseAnd|BitwiseOr|BitwiseXor|Div|Equal|Greater|GreaterOrEqual|Less"
     "|LessOrEqual|Max|Mean|Min|Mod|Mul|Or|PRelu|Pow|Sub|Sum|Where|Xor(ins*)\n"
     "s = Slice(y, params*)",
     check, forward},
    {0}};

PH_PASS_DEFINE(
    .name = "slice_before_elementwise",
    .summary = "elementwise op with constant operands feeding only a Slice -> Slice first, the op on the "
               "sliced constants",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
