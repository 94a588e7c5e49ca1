/* sdk/src/const/tensor_columns.c - a block of columns of a constant, the
 * part of a fused weight that one of its split parts keeps (see
 * ph_tensor_slice_columns in constant.h). */
#include <string.h>

#include "internal.h"
#include "passhost/constant.h"

#define TC_MAX_RANK 64

PH_API ph_tensor *ph_tensor_slice_columns(const ph_tensor *t, int64_t parts, int64_t inner, int64_t start,
                                          int64_t len)
{
    size_t rank = t ? ph_tensor_rank(t) : 0, es = t ? ph_dtype_size(ph_tensor_dtype(t)) : 0;
    if (!rank || rank > TC_MAX_RANK || !es || parts < 1 || inner < 1 || start < 0 || len < 1 || start + len > parts)
        return NULL;
    int64_t K = ph_tensor_dim(t, rank - 1), dims[TC_MAX_RANK], rows = 1;
    if (K % (parts * inner))
        return NULL;
    int64_t outer = K / (parts * inner);
    memcpy(dims, ph_tensor_dims(t), rank * sizeof *dims);
    for (size_t i = 0; i + 1 < rank; i++)
        rows *= dims[i];
    dims[rank - 1] = outer * len * inner;
    const unsigned char *src = ph_tensor_data(t);
    void *out;
    if (!src && ph_tensor_numel(t))
        return NULL;
    ph_tensor *r = ph_tensor_new_uninit(ph_tensor_dtype(t), rank, dims, &out);
    if (!r)
        return NULL;
    unsigned char *dst = out;
    size_t run = (size_t)(len * inner) * es; /* one block: len consecutive parts of `inner` */
    for (int64_t h = 0; h < rows; h++)
        for (int64_t o = 0; o < outer; o++, dst += run)
            memcpy(dst, src + (size_t)(h * K + (o * parts + start) * inner) * es, run);
    return r;
}
