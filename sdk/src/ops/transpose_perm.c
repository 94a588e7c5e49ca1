/* sdk/src/ops/transpose_perm.c - a Transpose's permutation, whether a
 * permutation moves any element, whether it swaps the last two dims, and
 * the type of a transposed value (layout passes: transpose_to_reshape, simplify_layout_chain,
 * demerge_transpose; MatMul folds: fuse_gemm_activation).  See
 * op_helpers.h. */
#include <stdint.h>

#include "passhost/passhost.h"

PH_API int ph_node_transpose_perm(const ph_node *t, int64_t *perm, size_t max)
{
    if (!t || !perm || ph_node_op(t) != PH_OP_Transpose || ph_node_input_count(t) < 1 ||
        !ph_node_input(t, 0))
        return PH_ENOTFOUND;
    /* one lookup of the attribute when it is there (many passes ask this of
     * every Transpose) */
    const int64_t *p = NULL;
    ptrdiff_t r = ph_node_attr_ints(t, "perm", &p);
    if (r < 0) {
        if (ph_node_attr_type(t, "perm") != PH_ATTR_NONE)
            return PH_ENOTFOUND; /* a perm that is no list of ints */
        p = NULL;
        r = ph_value_rank(ph_node_input(t, 0));
        if (r < 0 && ph_node_output_count(t) > 0)
            r = ph_value_rank(ph_node_output(t, 0));
        if (r < 0)
            return PH_ENOTFOUND;
    }
    if ((size_t)r > max || r > INT32_MAX)
        return PH_ERANGE;
    for (ptrdiff_t i = 0; i < r; i++) {
        int64_t v = p ? p[i] : r - 1 - i;
        if (v < 0 || v >= r)
            return PH_ENOTFOUND;
        for (ptrdiff_t j = 0; j < i; j++)
            if (perm[j] == v)
                return PH_ENOTFOUND;
        perm[i] = v;
    }
    return (int)r;
}

PH_API int ph_perm_keeps_order(int rank, const int64_t *dims, const int64_t *perm)
{
    int64_t last = -1;
    for (int i = 0; i < rank; i++) {
        int64_t k = perm[i];
        if (k < 0 || k >= rank)
            return 0;
        if (dims[k] == 1)
            continue;
        if (k < last)
            return 0;
        last = k;
    }
    return 1;
}

PH_API int ph_node_transpose_swap_rank(const ph_node *t)
{
    int64_t perm[64];
    int r = ph_node_transpose_perm(t, perm, sizeof perm / sizeof perm[0]);
    if (r < 2)
        return 0;
    for (int i = 0; i < r - 2; i++)
        if (perm[i] != i)
            return 0;
    return perm[r - 2] == r - 1 && perm[r - 1] == r - 2 ? r : 0;
}

PH_API int ph_value_set_type_transposed(ph_value *v, const ph_value *x, int rank, const int64_t *perm)
{
    int64_t dims[64];
    if (!v || !x || (rank > 0 && !perm) || rank > 64)
        return PH_EINVAL;
    if (ph_value_rank(x) != rank)
        return 0;
    for (int i = 0; i < rank; i++)
        dims[i] = ph_value_dim(x, (int)perm[i]);
    int rc = ph_value_set_type(v, ph_value_dtype(x), rank, dims);
    for (int i = 0; !rc && i < rank; i++)
        if (ph_value_dim_param(x, (int)perm[i]))
            rc = ph_value_set_dim_param(v, i, ph_value_dim_param(x, (int)perm[i]));
    return rc;
}
