/* mul_add_to_batchnorm - a per-channel constant Mul then Add on a 4-D tensor
 * becomes one BatchNormalization, for targets that run BN as one instruction.
 *
 * Requires: x of a known channel count C = dim 1 (bfloat16 from opset 14); a
 *   and b vary along axis 1 only, with dim 1 either 1 or C.  The parameter
 *   epsilon must be finite and >= 0 (else the pass fails).
 * Changes: y = BatchNormalization(x, scale, bias, mean 0, var 1) {epsilon}
 *   of C values: bias = b, scale = a (epsilon 0, the default: ONNX sets no
 *   lower bound, and BN computes x * a + b) or a * sqrt(1 + epsilon) in
 *   double (for runtimes that require a positive epsilon).
 * Exact: fp (runtimes compute a BN their way; epsilon > 0 rounds the scale).
 */
#include <math.h>
#include <passhost/passhost.h>

static int to_bn(ph_rewriter *rw, const ph_match *m)
{
    const ph_tensor *a = ph_match_const(m, "a"), *b = ph_match_const(m, "b");
    int dt = ph_value_dtype(ph_match_value(m, "x"));
    int64_t C = ph_value_dim(ph_match_value(m, "x"), 1), cv[1] = {C};
    double eps = ph_params_float(ph_rw_params(rw), "epsilon");
    if (!(eps >= 0) || !isfinite((float)eps))
        return ph_ctx_error(ph_rw_ctx(rw), PH_EINVAL, "parameter epsilon is %g: it must be a finite number >= 0", eps);
    double *S = C < 1 ? NULL : ph_rw_alloc(rw, 2 * (size_t)C * sizeof *S), *B = S ? S + C : NULL;
    if (!S || (dt == PH_DT_BFLOAT16 && ph_rw_opset(rw) < 14) || ph_const_channel_values(a, 4, 1, C, S) ||
        ph_const_channel_values(b, 4, 1, C, B))
        return ph_rw_status(rw); /* C unknown, or a channel dim that is neither 1 nor C */
    for (int64_t c = 0; c < C; c++)
        S[c] *= sqrt(1.0 + (double)(float)eps); /* the epsilon the BN holds */
    ph_rw_bind(rw, "s", ph_rw_initializer(rw, "bn_scale", ph_tensor_from_f64(dt, 1, cv, S)));
    ph_rw_bind(rw, "b2", ph_rw_initializer(rw, "bn_bias", ph_tensor_from_f64(dt, 1, cv, B)));
    ph_rw_bind(rw, "mean", ph_rw_constant(rw, "bn_mean", NULL, dt, 1, cv, 0.0));
    ph_rw_bind(rw, "var", ph_rw_constant(rw, "bn_var", NULL, dt, 1, cv, 1.0));
    ph_rw_bind_float(rw, "eps", eps);
    return 1;
}

static const ph_rule rules[] = {
    {"mul_add",
     "opset >= 7\n"
     "m = Mul(x:rank=4:floating:dtype=$t, a:const:perchannel=1:dtype=$t)\n"
     "y = Add(m, b:const:perchannel=1:dtype=$t)\n"
     "=>\ny = BatchNormalization(x, s, b2, mean, var) {epsilon=$eps}",
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
