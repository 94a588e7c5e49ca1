/* sdk/src/ops/batchnorm.c - an inference BatchNormalization read as a
 * per-channel affine map (op_helpers.h, ph_bn_affine). */
#include <math.h>
#include <stdlib.h>

#include "passhost/constant.h"

PH_API int ph_bn_affine(const ph_node *bn, int64_t C, double *scale, double *shift)
{
    if (!bn || !scale || !shift || C < 1 || ph_node_op(bn) != PH_OP_BatchNormalization ||
        ph_node_input_count(bn) != 5)
        return PH_EINVAL;
    const ph_tensor *t[4];
    for (size_t i = 0; i < 4; i++) {
        t[i] = ph_value_const(ph_node_input(bn, i + 1));
        if (!t[i] || ph_tensor_rank(t[i]) != 1 || ph_tensor_dim(t[i], 0) != C)
            return PH_EINVAL;
    }
    double *mean = malloc(2 * (size_t)C * sizeof *mean), *var = mean ? mean + C : NULL;
    if (!mean)
        return PH_ENOMEM;
    const int64_t dims[1] = {C};
    int rc = ph_tensor_read_f64(t[0], 1, dims, scale);
    if (!rc)
        rc = ph_tensor_read_f64(t[1], 1, dims, shift);
    if (!rc)
        rc = ph_tensor_read_f64(t[2], 1, dims, mean);
    if (!rc)
        rc = ph_tensor_read_f64(t[3], 1, dims, var);
    double eps = ph_node_attr_float(bn, "epsilon", 1e-5f);
    for (int64_t c = 0; c < C && !rc; c++) {
        scale[c] /= sqrt(var[c] + eps);
        shift[c] -= mean[c] * scale[c];
        if (!isfinite(scale[c]) || !isfinite(shift[c]))
            rc = PH_EINVAL;
    }
    free(mean);
    return rc;
}
