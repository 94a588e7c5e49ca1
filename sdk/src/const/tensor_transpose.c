/* sdk/src/const/tensor_transpose.c - a constant transposed the way a
 * broadcast operand must be when a Transpose moves across the operator that
 * reads it (see ph_tensor_transpose in constant.h). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "passhost/constant.h"

#define TT_MAX_RANK 64

PH_API ph_tensor *ph_tensor_transpose(const ph_tensor *t, size_t rank, const int64_t *perm)
{
    if (!t || !perm || rank > TT_MAX_RANK)
        return NULL;
    size_t tr = ph_tensor_rank(t), es = ph_dtype_size(ph_tensor_dtype(t));
    if (tr > rank || es == 0)
        return NULL;
    int64_t in[TT_MAX_RANK], out[TT_MAX_RANK], stride[TT_MAX_RANK], idx[TT_MAX_RANK] = {0};
    unsigned char seen[TT_MAX_RANK] = {0};
    for (size_t i = 0; i < rank; i++) /* aligned on the right, leading 1s */
        in[i] = i < rank - tr ? 1 : ph_tensor_dim(t, i - (rank - tr));
    for (size_t i = 0; i < rank; i++) {
        if (perm[i] < 0 || (size_t)perm[i] >= rank || seen[perm[i]]++)
            return NULL;
        out[i] = in[perm[i]];
    }
    int64_t s = 1;
    for (size_t i = rank; i-- > 0;) {
        stride[i] = s;
        s *= in[i];
    }
    int64_t n = ph_tensor_numel(t);
    const uint8_t *src = n ? ph_tensor_data(t) : NULL;
    if (n && !src)
        return NULL;
    if (!n)
        return ph_tensor_new(ph_tensor_dtype(t), rank, rank ? out : NULL, NULL);
    uint8_t *dst = malloc((size_t)n * es);
    if (!dst)
        return NULL;
    /* walk the output in row-major order; off = the input element it holds */
    int64_t off = 0;
    for (int64_t k = 0; k < n; k++) {
        memcpy(dst + (size_t)k * es, src + (size_t)off * es, es);
        for (size_t i = rank; i-- > 0;) {
            off += stride[perm[i]];
            if (++idx[i] < out[i])
                break;
            off -= stride[perm[i]] * out[i];
            idx[i] = 0;
        }
    }
    ph_tensor *r = ph_tensor_new(ph_tensor_dtype(t), rank, rank ? out : NULL, dst);
    free(dst);
    return r;
}
