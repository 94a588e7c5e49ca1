/* sdk/src/ops/axes.c - the axes operand of Squeeze, Unsqueeze and the
 * Reduce* operators (and Split's sizes), which moved from an attribute to an
 * input at opset 13 (Squeeze, Unsqueeze, ReduceSum, Split) or 18 (the other
 * Reduce*).  See op_helpers.h.  Added for squeeze_to_reshape,
 * stack_unstack_to_reshape, reducemean_to_pool, gathers_to_split and
 * slices_to_split. */
#include <string.h>

#include "passhost/passhost.h"

PH_API int ph_op_axes_is_input(ph_op op, int64_t opset)
{
    switch (op) {
    case PH_OP_Squeeze:
    case PH_OP_Unsqueeze:
    case PH_OP_ReduceSum:
    case PH_OP_Split:
        return opset >= 13;
    case PH_OP_ReduceMean:
    case PH_OP_ReduceMax:
    case PH_OP_ReduceMin:
    case PH_OP_ReduceProd:
    case PH_OP_ReduceL1:
    case PH_OP_ReduceL2:
    case PH_OP_ReduceLogSum:
    case PH_OP_ReduceLogSumExp:
    case PH_OP_ReduceSumSquare:
        return opset >= 18;
    default:
        return PH_EINVAL;
    }
}

PH_API ptrdiff_t ph_node_axes(const ph_node *n, int rank, int64_t *out, size_t max)
{
    if (!n || rank < 0)
        return PH_EINVAL;
    ptrdiff_t k;
    const ph_value *in = ph_node_input_count(n) > 1 ? ph_node_input(n, 1) : NULL;
    if (in) {
        k = ph_value_const_ints(in, out, NULL, max);
        if (k < 0)
            return k; /* PH_ENOTFOUND, PH_ERANGE */
    } else {
        const int64_t *v;
        ph_attr_type t = ph_node_attr_type(n, "axes");
        if (t == PH_ATTR_NONE)
            return 0;
        k = t == PH_ATTR_INTS ? ph_node_attr_ints(n, "axes", &v) : -1;
        if (k < 0)
            return PH_EINVAL; /* an "axes" that is no list of ints */
        if ((size_t)k > max)
            return PH_ERANGE;
        if (k)
            memcpy(out, v, (size_t)k * sizeof *v);
    }
    for (ptrdiff_t i = 0; i < k; i++) {
        if (out[i] < 0)
            out[i] += rank;
        if (out[i] < 0 || out[i] >= rank)
            return PH_EINVAL;
        for (ptrdiff_t j = 0; j < i; j++)
            if (out[j] == out[i])
                return PH_EINVAL;
    }
    return k;
}

PH_API int ph_factor_within(int64_t k, int64_t limit, int64_t *f, int max)
{
    int n = 0;
    if (k < 1 || limit < 1)
        return -1;
    while (k > 1) {
        int64_t d = limit < k ? limit : k;
        while (d > 1 && k % d)
            d--;
        if (d <= 1 || n == max)
            return -1;
        f[n++] = d;
        k /= d;
    }
    return n;
}
