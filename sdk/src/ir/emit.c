/* sdk/src/ir/emit.c - small helpers for passes that emit operators of other
 * domains (e.g. ONNX Runtime's com.microsoft contrib operators): shape
 * inference does not know those operators, so their outputs keep only the
 * type a pass gives them, and the model must import their domain. */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

static int ph_value_copy_type_(ph_value *dst, const ph_value *src)
{
    if (!dst || !src)
        return PH_EINVAL;
    if (dst == src)
        return 0;
    int rank = ph_value_rank(src);
    int64_t small[16];
    int64_t *dims = rank > 16 ? malloc((size_t)rank * sizeof *dims) : small;
    if (!dims)
        return PH_ENOMEM;
    for (int i = 0; i < rank; i++)
        dims[i] = ph_value_dim(src, i);
    int rc = ph_value_set_type(dst, ph_value_dtype(src), rank, dims);
    for (int i = 0; !rc && i < rank; i++) {
        const char *p = ph_value_dim_param(src, i);
        if (p)
            rc = ph_value_set_dim_param(dst, i, p);
    }
    if (dims != small)
        free(dims);
    return rc;
}

PH_API int ph_value_copy_type(ph_value *dst, const ph_value *src)
{
    if (!dst || !src)
        return PH_EINVAL;
    return ir_note(dst && dst->graph ? dst->graph->model : NULL, ph_value_copy_type_(dst, src));
}

static int ph_model_require_opset_(ph_model *m, const char *domain, int64_t version)
{
    if (!m || version < 1)
        return PH_EINVAL;
    int64_t have = ph_model_opset(m, domain ? domain : "");
    return have >= version ? 0 : ph_model_set_opset(m, domain ? domain : "", version);
}

PH_API int ph_model_require_opset(ph_model *m, const char *domain, int64_t version)
{
    if (!m)
        return PH_EINVAL;
    return ir_note(m, ph_model_require_opset_(m, domain, version));
}
