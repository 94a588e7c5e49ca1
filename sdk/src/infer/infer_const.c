/* sdk/src/infer/infer_const.c - constants and shape-constant arithmetic.
 *
 * Constant, ConstantOfShape, Range, RandomNormal/RandomUniform produce
 * values from attributes or small constant inputs; integer results of at
 * most INFER_PC_MAX elements are tracked as shape constants (infer.h).
 *
 * infer_pc_elementwise evaluates elementwise integer ops (Add Sub Mul Div Mod
 * Max Min Neg Abs Identity Cast Equal Less Greater Not And Or Where) on
 * shape constants entry by entry.  Symbolic entries survive x+0, x-0, x*1,
 * x/1, Identity/Cast, Max(x,x), and Where with a known condition;
 * Equal(dim, negative) is false since dims are never negative (torch
 * exports test Reshape targets for -1 that way).
 */
#include <math.h>
#include <string.h>

#include "infer.h"

static int is_int_dtype(int dt)
{
    switch (dt) {
    case PH_DT_INT8: case PH_DT_INT16: case PH_DT_INT32: case PH_DT_INT64: case PH_DT_UINT8:
    case PH_DT_UINT16: case PH_DT_UINT32: case PH_DT_UINT64: case PH_DT_BOOL:
        return 1;
    default:
        return 0;
    }
}

/* Entry a (kind ka) op entry b (kind kb) into (*v, *k). */
static void pc_binop(ph_op op, int64_t a, int ka, int64_t b, int kb, int64_t *v, uint8_t *k)
{
    *k = INFER_PC_UNK;
    *v = 0;
    if (ka == INFER_PC_NUM && kb == INFER_PC_NUM) {
        int64_t r;
        switch (op) {
        /* an overflow leaves the entry unknown */
        case PH_OP_Add: if (__builtin_add_overflow(a, b, &r)) return; break;
        case PH_OP_Sub: if (__builtin_sub_overflow(a, b, &r)) return; break;
        case PH_OP_Mul: if (ir_mul_ovf(a, b, &r)) return; break;
        case PH_OP_Div: if (!b || (a == INT64_MIN && b == -1)) return; r = a / b; break;
        case PH_OP_Mod: if (!b || (a == INT64_MIN && b == -1)) return; r = a % b; if (r && ((r < 0) != (b < 0))) r += b; break;
        case PH_OP_Max: r = a > b ? a : b; break;
        case PH_OP_Min: r = a < b ? a : b; break;
        case PH_OP_Equal: r = a == b; break;
        case PH_OP_Less: r = a < b; break;
        case PH_OP_Greater: r = a > b; break;
        case PH_OP_LessOrEqual: r = a <= b; break;
        case PH_OP_GreaterOrEqual: r = a >= b; break;
        case PH_OP_And: r = a && b; break;
        case PH_OP_Or: r = a || b; break;
        default: return;
        }
        *v = r;
        *k = INFER_PC_NUM;
        return;
    }
    /* one or both symbolic */
    int sa = ka == INFER_PC_SYM, sb = kb == INFER_PC_SYM;
    if (!sa && !sb)
        return;
    switch (op) {
    case PH_OP_Add:
        if (sa && kb == INFER_PC_NUM && b == 0) *v = a, *k = INFER_PC_SYM;
        if (sb && ka == INFER_PC_NUM && a == 0) *v = b, *k = INFER_PC_SYM;
        break;
    case PH_OP_Sub:
        if (sa && kb == INFER_PC_NUM && b == 0) *v = a, *k = INFER_PC_SYM;
        if (sa && sb && a == b) *v = 0, *k = INFER_PC_NUM;
        break;
    case PH_OP_Mul:
        if (sa && kb == INFER_PC_NUM && b == 1) *v = a, *k = INFER_PC_SYM;
        if (sb && ka == INFER_PC_NUM && a == 1) *v = b, *k = INFER_PC_SYM;
        if ((kb == INFER_PC_NUM && b == 0) || (ka == INFER_PC_NUM && a == 0)) *v = 0, *k = INFER_PC_NUM;
        break;
    case PH_OP_Div:
        if (sa && kb == INFER_PC_NUM && b == 1) *v = a, *k = INFER_PC_SYM;
        if (sa && sb && a == b) *v = 1, *k = INFER_PC_NUM;
        break;
    case PH_OP_Max: case PH_OP_Min:
        if (sa && sb && a == b) *v = a, *k = INFER_PC_SYM;
        break;
    case PH_OP_Equal:
        if (sa && sb && a == b) *v = 1, *k = INFER_PC_NUM;
        if ((sa && kb == INFER_PC_NUM && b < 0) || (sb && ka == INFER_PC_NUM && a < 0)) *v = 0, *k = INFER_PC_NUM;
        break;
    case PH_OP_Less: /* dim < negative is false, negative < dim is true */
        if (sa && kb == INFER_PC_NUM && b <= 0) *v = 0, *k = INFER_PC_NUM;
        if (sb && ka == INFER_PC_NUM && a < 0) *v = 1, *k = INFER_PC_NUM;
        break;
    case PH_OP_Greater:
        if (sa && kb == INFER_PC_NUM && b < 0) *v = 1, *k = INFER_PC_NUM;
        if (sb && ka == INFER_PC_NUM && a <= 0) *v = 0, *k = INFER_PC_NUM;
        break;
    default:
        break;
    }
}

int infer_pc_elementwise(infer_ictx *c)
{
    ph_op op = c->n->op;
    int dt = c->out[0].dtype;
    if (!is_int_dtype(dt) || c->nin < 1 || c->nin > 3 || (c->out[0].rank > 1))
        return 0;
    const infer_pc *p[3] = {0};
    int len = 1;
    for (size_t i = 0; i < c->nin; i++) {
        p[i] = infer_in_pc(c, i);
        if (!p[i])
            return 0;
        if (p[i]->n != 1) {
            if (len != 1 && p[i]->n != len)
                return 0;
            len = p[i]->n;
        }
    }
    infer_pc *o = infer_out_pc(c, 0);
    if (!o)
        return 0;
    o->n = len;
#define AT(i, j) (p[i]->n == 1 ? 0 : (j))
    for (int j = 0; j < len; j++) {
        int64_t a = p[0]->v[AT(0, j)];
        int ka = p[0]->k[AT(0, j)];
        o->k[j] = INFER_PC_UNK;
        o->v[j] = 0;
        switch (op) {
        case PH_OP_Identity:
            o->v[j] = a, o->k[j] = (uint8_t)ka;
            break;
        case PH_OP_Cast: case PH_OP_CastLike:
            if (dt == PH_DT_BOOL && ka == INFER_PC_NUM)
                o->v[j] = a != 0, o->k[j] = INFER_PC_NUM;
            else if (dt != PH_DT_BOOL)
                o->v[j] = a, o->k[j] = (uint8_t)ka;
            break;
        case PH_OP_Neg:
            if (ka == INFER_PC_NUM)
                o->v[j] = -a, o->k[j] = INFER_PC_NUM;
            break;
        case PH_OP_Abs:
            if (ka == INFER_PC_NUM)
                o->v[j] = a < 0 ? -a : a, o->k[j] = INFER_PC_NUM;
            else if (ka == INFER_PC_SYM)
                o->v[j] = a, o->k[j] = INFER_PC_SYM;
            break;
        case PH_OP_Not:
            if (ka == INFER_PC_NUM)
                o->v[j] = !a, o->k[j] = INFER_PC_NUM;
            break;
        case PH_OP_Where:
            if (c->nin == 3 && ka == INFER_PC_NUM) {
                int s = a ? 1 : 2;
                o->v[j] = p[s]->v[AT(s, j)];
                o->k[j] = p[s]->k[AT(s, j)];
            } else if (c->nin == 3 && p[1]->k[AT(1, j)] == p[2]->k[AT(2, j)] &&
                       p[1]->v[AT(1, j)] == p[2]->v[AT(2, j)]) {
                o->v[j] = p[1]->v[AT(1, j)];
                o->k[j] = p[1]->k[AT(1, j)];
            }
            break;
        default:
            if (c->nin >= 2) {
                uint8_t k;
                int64_t v;
                pc_binop(op, a, ka, p[1]->v[AT(1, j)], p[1]->k[AT(1, j)], &v, &k);
                for (size_t i = 2; i < c->nin && k != INFER_PC_UNK; i++)
                    pc_binop(op, v, k, p[i]->v[AT(i, j)], p[i]->k[AT(i, j)], &v, &k);
                o->v[j] = v;
                o->k[j] = k;
            }
            break;
        }
    }
#undef AT
    return 0;
}

/* ------------------------------------------------------------ Constant */

static int infer_constant(infer_ictx *c)
{
    const ph_node *n = c->n;
    const ph_tensor *t = ph_node_attr_tensor(n, "value");
    if (t) {
        size_t r = ph_tensor_rank(t);
        if (r > INFER_MAXRANK)
            return 0;
        c->out[0].dtype = ph_tensor_dtype(t);
        c->out[0].rank = (int)r;
        for (size_t i = 0; i < r; i++)
            c->out[0].d[i] = ph_tensor_dim(t, i);
        infer_pc pc;
        if (infer_pc_from_tensor(t, &pc)) {
            infer_pc *o = infer_out_pc(c, 0);
            if (o)
                *o = pc;
        }
        return 0;
    }
    const int64_t *iv;
    const float *fv;
    ptrdiff_t k;
    if (ph_node_attr_type(n, "value_int") == PH_ATTR_INT) {
        infer_shape_set(&c->out[0], PH_DT_INT64, 0, NULL);
        infer_pc *o = infer_out_pc(c, 0);
        if (o) {
            o->n = 1;
            o->v[0] = ph_node_attr_int(n, "value_int", 0);
            o->k[0] = INFER_PC_NUM;
        }
    } else if ((k = ph_node_attr_ints(n, "value_ints", &iv)) >= 0) {
        infer_dim d = k;
        infer_shape_set(&c->out[0], PH_DT_INT64, 1, &d);
        infer_pc *o = k <= INFER_PC_MAX ? infer_out_pc(c, 0) : NULL;
        if (o) {
            o->n = (int)k;
            for (ptrdiff_t i = 0; i < k; i++)
                o->v[i] = iv[i], o->k[i] = INFER_PC_NUM;
        }
    } else if (ph_node_attr_type(n, "value_float") == PH_ATTR_FLOAT) {
        infer_shape_set(&c->out[0], PH_DT_FLOAT, 0, NULL);
    } else if ((k = ph_node_attr_floats(n, "value_floats", &fv)) >= 0) {
        infer_dim d = k;
        infer_shape_set(&c->out[0], PH_DT_FLOAT, 1, &d);
    } else if (ph_node_attr_type(n, "value_string") == PH_ATTR_STRING) {
        infer_shape_set(&c->out[0], PH_DT_STRING, 0, NULL);
    } else if (ph_node_attr_type(n, "value_strings") == PH_ATTR_STRINGS) {
        infer_shape_set(&c->out[0], PH_DT_STRING, 1, NULL);
    }
    return 0;
}

/* The dims named by a shape-constant input (Expand, ConstantOfShape, ...):
 * fills out->rank and out->d; rank -1 when not even the length is known. */
void infer_dims_from_shape_input(infer_ictx *c, size_t i, infer_shape *out)
{
    const infer_pc *pc = infer_in_pc(c, i);
    out->rank = -1;
    if (pc && pc->n <= INFER_MAXRANK) {
        out->rank = pc->n;
        for (int k = 0; k < pc->n; k++)
            out->d[k] = infer_pc_dim(pc, k);
        return;
    }
    const infer_shape *s = infer_in(c, i);
    if (s->rank == 1 && s->d[0] >= 0 && s->d[0] <= INFER_MAXRANK) {
        out->rank = (int)s->d[0];
        for (int k = 0; k < out->rank; k++)
            out->d[k] = INFER_DIM_UNK;
    } else if (s->rank == 0) {
        out->rank = 0;
    }
}

static int infer_constant_of_shape(infer_ictx *c)
{
    const ph_tensor *t = ph_node_attr_tensor(c->n, "value");
    infer_dims_from_shape_input(c, 0, &c->out[0]);
    c->out[0].dtype = t ? ph_tensor_dtype(t) : PH_DT_FLOAT;
    for (int k = 0; k < c->out[0].rank; k++)
        if (c->out[0].d[k] < 0 && c->out[0].d[k] != INFER_DIM_UNK && !infer_is_sym(c->out[0].d[k]))
            return infer_fail(c, "negative dim in shape");
    int64_t numel = infer_shape_numel(&c->out[0]);
    infer_pc val;
    if (c->out[0].rank <= 1 && numel >= 0 && numel <= INFER_PC_MAX && is_int_dtype(c->out[0].dtype) &&
        (!t || (infer_pc_from_tensor(t, &val) && val.n == 1))) {
        infer_pc *o = infer_out_pc(c, 0);
        if (o) {
            o->n = (int)numel;
            for (int k = 0; k < o->n; k++)
                o->v[k] = t ? val.v[0] : 0, o->k[k] = INFER_PC_NUM;
        }
    }
    return 0;
}

static int infer_range(infer_ictx *c)
{
    double s, l, d;
    c->out[0].dtype = infer_in(c, 0)->dtype;
    c->out[0].rank = 1;
    c->out[0].d[0] = INFER_DIM_UNK;
    if (infer_in_doubles(c, 0, &s, 1) == 1 && infer_in_doubles(c, 1, &l, 1) == 1 && infer_in_doubles(c, 2, &d, 1) == 1) {
        if (d == 0)
            return infer_fail(c, "delta is 0");
        double n = ceil((l - s) / d);
        if (!(n < 4.6e18)) { /* NaN or too long: never an out-of-range conversion */
            c->out[0].d[0] = INFER_DIM_UNK;
            return 0;
        }
        int64_t cnt = n > 0 ? (int64_t)n : 0;
        c->out[0].d[0] = cnt;
        if (is_int_dtype(c->out[0].dtype) && cnt <= INFER_PC_MAX && fabs(s) < 9.2e18 && fabs(d) < 9.2e18) {
            infer_pc *o = infer_out_pc(c, 0);
            if (o) {
                o->n = (int)cnt;
                for (int64_t k = 0; k < cnt; k++)
                    o->v[k] = (int64_t)((uint64_t)(int64_t)s + (uint64_t)k * (uint64_t)(int64_t)d), o->k[k] = INFER_PC_NUM;
            }
        }
        return 0;
    }
    /* Range(0, dim, 1) has that dim's length */
    const infer_pc *lim = infer_in_pc(c, 1);
    if (lim && lim->n == 1 && lim->k[0] == INFER_PC_SYM && infer_in_doubles(c, 0, &s, 1) == 1 && s == 0 &&
        infer_in_doubles(c, 2, &d, 1) == 1 && d == 1)
        c->out[0].d[0] = lim->v[0];
    return 0;
}

static int infer_random(infer_ictx *c)
{
    const int64_t *sh;
    ptrdiff_t r = ph_node_attr_ints(c->n, "shape", &sh);
    c->out[0].dtype = (int)ph_node_attr_int(c->n, "dtype", PH_DT_FLOAT);
    if (r >= 0 && r <= INFER_MAXRANK)
        infer_shape_set(&c->out[0], c->out[0].dtype, (int)r, sh);
    return 0;
}

infer_fn infer_const_fn(ph_op op)
{
    switch (op) {
    case PH_OP_Constant: return infer_constant;
    case PH_OP_ConstantOfShape: return infer_constant_of_shape;
    case PH_OP_Range: return infer_range;
    case PH_OP_RandomNormal: case PH_OP_RandomUniform: return infer_random;
    default: return NULL;
    }
}
