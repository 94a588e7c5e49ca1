/* sdk/src/pattern/rw_const.c - a rewrite's constants of a given dtype and
 * shape, made from a matched constant or filled (ph_rw_constant in
 * pattern.h).  Added for fuse_layernorm and fuse_skip_layernorm. */
#include <string.h>

#include "pattern.h"
#include "passhost/constant.h"

#define MAX_RANK 64

PH_API ph_value *ph_rw_constant(ph_rewriter *rw, const char *hint, ph_value *from, int dtype, size_t rank,
                                const int64_t *dims, double fill)
{
    const ph_tensor *t = from ? ph_value_const(from) : NULL;
    size_t tr = t ? ph_tensor_rank(t) : 0, r = tr > rank ? tr : rank;
    if ((from && !t) || r > MAX_RANK) {
        if (!rw->failed)
            rw->failed = PH_EINVAL;
        return NULL;
    }
    if (t && ph_tensor_dtype(t) == dtype && tr == rank &&
        (rank == 0 || !memcmp(ph_tensor_dims(t), dims, rank * sizeof *dims)))
        return from; /* already what is asked */
    int64_t padded[MAX_RANK], n = 1; /* dims with leading 1s up to t's rank */
    for (size_t i = 0; i < r; i++)
        n *= padded[i] = i < r - rank ? 1 : dims[i - (r - rank)];
    double *vals = ph_rw_alloc(rw, (size_t)(n > 0 ? n : 1) * sizeof *vals);
    for (int64_t i = 0; vals && !t && i < n; i++)
        vals[i] = fill;
    if (!vals || (t && ph_tensor_read_f64(t, r, padded, vals))) {
        if (!rw->failed)
            rw->failed = PH_EINVAL;
        return NULL;
    }
    return ph_rw_initializer(rw, hint, ph_tensor_from_f64(dtype, rank, dims, vals));
}
