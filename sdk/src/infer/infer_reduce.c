/* sdk/src/infer/infer_reduce.c - shape inference of reductions.
 *
 * Reduce* (axes as an attribute, or as an input from opset 13 for
 * ReduceSum and from opset 18 for the others; keepdims;
 * noop_with_empty_axes), ArgMax/ArgMin (int64, one axis), TopK (K from the
 * input since opset 10, from the attribute before; values and int64
 * indices).
 */
#include "infer.h"

static int infer_reduce(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0].dtype = x->dtype;
    if (x->rank < 0)
        return 0;
    int keep = ph_node_attr_int(c->n, "keepdims", 1) != 0;
    int64_t axes[INFER_MAXRANK];
    int from = c->n->op == PH_OP_ReduceSum ? 13 : 18;
    int na = infer_ints_attr_or_input(c, "axes", 1, from, axes, INFER_MAXRANK);
    if (na == -2) {
        /* axes not known: with keepdims the rank stays */
        if (keep) {
            c->out[0].rank = x->rank;
            for (int k = 0; k < x->rank; k++)
                c->out[0].d[k] = INFER_DIM_UNK;
        }
        return 0;
    }
    int red[INFER_MAXRANK] = {0};
    if (na <= 0) {
        if (na == 0 && ph_node_attr_int(c->n, "noop_with_empty_axes", 0)) {
            c->out[0] = *x;
            return 0;
        }
        for (int k = 0; k < x->rank; k++)
            red[k] = 1;
    } else {
        for (int i = 0; i < na; i++) {
            int ax = infer_inf_axis(axes[i], x->rank);
            if (ax < 0)
                return infer_fail(c, "axis %lld out of range for rank %d", (long long)axes[i], x->rank);
            red[ax] = 1;
        }
    }
    int r = 0;
    for (int k = 0; k < x->rank; k++) {
        if (!red[k])
            c->out[0].d[r++] = x->d[k];
        else if (keep)
            c->out[0].d[r++] = 1;
    }
    c->out[0].rank = r;
    return 0;
}

static int infer_argmax(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0].dtype = PH_DT_INT64;
    if (x->rank < 0)
        return 0;
    int keep = ph_node_attr_int(c->n, "keepdims", 1) != 0;
    int ax = infer_inf_axis(ph_node_attr_int(c->n, "axis", 0), x->rank);
    if (ax < 0)
        return infer_fail(c, "axis out of range for rank %d", x->rank);
    int r = 0;
    for (int k = 0; k < x->rank; k++) {
        if (k != ax)
            c->out[0].d[r++] = x->d[k];
        else if (keep)
            c->out[0].d[r++] = 1;
    }
    c->out[0].rank = r;
    return 0;
}

static int infer_topk(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0] = *x;
    if (c->nout > 1) {
        c->out[1] = *x;
        c->out[1].dtype = PH_DT_INT64;
    }
    if (x->rank < 0)
        return 0;
    int ax = infer_inf_axis(ph_node_attr_int(c->n, "axis", -1), x->rank);
    if (ax < 0)
        return infer_fail(c, "axis out of range for rank %d", x->rank);
    infer_dim k = INFER_DIM_UNK;
    int64_t kv;
    if (c->opset < 10 && ph_node_attr_type(c->n, "k") == PH_ATTR_INT) {
        k = ph_node_attr_int(c->n, "k", -1);
    } else if (infer_in_ints(c, 1, &kv, 1) == 1) {
        k = kv;
    } else {
        const infer_pc *p = infer_in_pc(c, 1);
        if (p && p->n == 1)
            k = infer_pc_dim(p, 0);
    }
    if (k >= 0 && x->d[ax] >= 0 && k > x->d[ax])
        return infer_fail(c, "K = %lld exceeds the axis length %lld", (long long)k, (long long)x->d[ax]);
    for (size_t i = 0; i < c->nout && i < 2; i++)
        c->out[i].d[ax] = k;
    return 0;
}

infer_fn infer_reduce_fn(ph_op op)
{
    switch (op) {
    case PH_OP_ReduceMean: case PH_OP_ReduceSum: case PH_OP_ReduceMax: case PH_OP_ReduceMin:
    case PH_OP_ReduceProd: case PH_OP_ReduceL1: case PH_OP_ReduceL2: case PH_OP_ReduceLogSum:
    case PH_OP_ReduceLogSumExp: case PH_OP_ReduceSumSquare:
        return infer_reduce;
    case PH_OP_ArgMax: case PH_OP_ArgMin:
        return infer_argmax;
    case PH_OP_TopK:
        return infer_topk;
    default:
        return NULL;
    }
}
