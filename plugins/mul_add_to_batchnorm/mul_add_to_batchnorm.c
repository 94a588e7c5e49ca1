/* mul_add_to_batchnorm - a per-channel constant Mul then Add on a 4-D tensor
 * becomes one BatchNormalization (seed 004 ConvertMultiplyAdd2BatchnormPass),
 * for targets that run BN as one instruction.
 *
 * Requires: default-domain m = Mul(x, a) feeding only y = Add(m, b) (either
 *   input order for both), x of known rank 4, a float dtype and a known
 *   channel count C = dim 1 (opset >= 7; bfloat16 from opset 14); a and b
 *   constants of x's dtype that vary along axis 1 only, each of rank <= 4
 *   with dims 1 except dim 1, which is 1 or C, so neither widens the shape.
 *   The parameter epsilon must be finite and >= 0 (else the pass fails).
 * Changes: y becomes BatchNormalization(x, scale, bias, mean = 0, var = 1)
 *   {epsilon} with vectors of C values: bias = b and scale = a (epsilon 0,
 *   the default: ONNX sets no lower bound, and BN then computes x * a + b),
 *   or scale = a * sqrt(1 + epsilon) computed in double (for runtimes that
 *   require a positive epsilon).  a and b go when nothing else reads them.
 *   Main graph and every If/Loop/Scan body.
 * Exact: fp (the runtime may compute the BN as x * (scale / sqrt(var +
 *   epsilon)) + (bias - mean * ...); with epsilon > 0 the scale is rounded).
 */
#include <math.h>
#include <passhost/passhost.h>
#include <passhost/constant.h>

static int to_bn(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    const ph_tensor *a = ph_match_const(m, "a"), *b = ph_match_const(m, "b");
    int dt = ph_value_dtype(x);
    int64_t C = ph_value_dim(x, 1), opset = ph_rw_opset(rw), cv[1] = {C};
    double eps = ph_params_float(ph_rw_params(rw), "epsilon");
    if (!(eps >= 0) || !isfinite((float)eps))
        return ph_ctx_error(ph_rw_ctx(rw), PH_EINVAL, "parameter epsilon is %g: it must be a finite number >= 0", eps);
    if (C < 1 || opset < 7 || (dt == PH_DT_BFLOAT16 && opset < 14) || ph_tensor_dtype(a) != dt ||
        ph_tensor_dtype(b) != dt)
        return 0;
    double *S = ph_rw_alloc(rw, 4 * (size_t)C * sizeof *S), *B = S ? S + C : NULL, *Z = B ? B + C : NULL,
           *V = Z ? Z + C : NULL;
    if (!S)
        return PH_ENOMEM;
    if (ph_const_channel_values(a, 4, 1, C, S) || ph_const_channel_values(b, 4, 1, C, B))
        return 0; /* a channel dim that is neither 1 nor C */
    for (int64_t c = 0; c < C; c++) {
        S[c] *= sqrt(1.0 + (double)(float)eps); /* the epsilon the BN holds */
        Z[c] = 0;
        V[c] = 1;
    }
    ph_value *in[5] = {x, ph_rw_initializer(rw, "bn_scale", ph_tensor_from_f64(dt, 1, cv, S)),
                       ph_rw_initializer(rw, "bn_bias", ph_tensor_from_f64(dt, 1, cv, B)),
                       ph_rw_initializer(rw, "bn_mean", ph_tensor_from_f64(dt, 1, cv, Z)),
                       ph_rw_initializer(rw, "bn_var", ph_tensor_from_f64(dt, 1, cv, V))};
    ph_node *bn = in[1] && in[2] && in[3] && in[4] ? ph_rw_node(rw, "BatchNormalization", 5, in, 1) : NULL;
    if (!bn || ph_node_set_attr_float(bn, "epsilon", (float)eps) < 0)
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(bn, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"mul_add",
     "m = Mul(x:rank=4:floating, a:const:perchannel=1)\n"
     "y = Add(m, b:const:perchannel=1)",
     NULL, to_bn},
    {0}};

static const ph_param_def params[] = {
    {"epsilon", PH_PARAM_FLOAT, "0",
     "epsilon of the BatchNormalization made (>= 0); when not 0 the scale is a * sqrt(1 + epsilon)"},
    {NULL, 0, NULL, NULL},
};

PH_PASS_DEFINE(
    .name = "mul_add_to_batchnorm",
    .summary = "per-channel constant Mul then Add on a 4-D tensor -> BatchNormalization",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_FP,
    .params = params,
    .rules = rules)
