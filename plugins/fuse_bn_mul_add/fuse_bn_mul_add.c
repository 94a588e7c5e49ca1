/* fuse_bn_mul_add - fold a per-channel constant Mul, Div, Add or Sub after an
 * inference BatchNormalization into the BN's scale and bias.
 *
 * Requires: BatchNormalization in inference mode (training_mode absent or
 *   0, spatial absent or 1) with constant scale and bias vectors of C
 *   values (mean and var may be anything), whose output Y (of known rank
 *   R >= 2 and float dtype) feeds only a Mul or Add (either input order),
 *   or a Sub or Div with Y first, whose other operand is a constant k of Y's
 *   dtype that, broadcast against Y, varies along axis 1 only: [C,1,1] or
 *   [1,C,1,1] for NCHW, [C] for [N,C], a scalar, [1], ...  k has at most
 *   rank R and dims of 1 except at axis 1, so the result has Y's shape; a
 *   constant that widens the shape or varies along another axis is left
 *   alone, and so is an operator with the legacy (opset < 7) axis attribute,
 *   which aligns k differently.  For Mul and Div every k must be finite, for Div also non-zero
 *   (inf * 0 inside the BN would not give what it gives after it).
 * Changes: with Y = scale * xhat + bias per channel, Y * k becomes a BN with
 *   scale * k and bias * k (Div: / k), Y + k one with bias + k (Sub: - k).
 *   The new BN keeps the old one's attributes, name, input x, mean and var.
 *   A chain (Mul then Add) folds one node per rewrite.
 * Exact: fp (the new scale and bias are computed in double, rounded once).
 */
#include <math.h>
#include <passhost/passhost.h>
#include <passhost/constant.h>

static int fold(ph_rewriter *rw, const ph_match *m)
{
    const ph_tensor *s = ph_match_const(m, "s"), *t = ph_match_const(m, "t"), *k = ph_match_const(m, "k");
    ph_value *y = ph_match_value(m, "y");
    ph_op op = ph_node_op(ph_match_root(m));
    int R = ph_value_rank(y), scales = op == PH_OP_Mul || op == PH_OP_Div;
    int64_t C = ph_tensor_numel(s), cv[1] = {C};
    double *S = ph_rw_alloc(rw, (size_t)(3 * C + 1) * sizeof *S), *T = S + C, *K = T + C;
    if (!S)
        return PH_ENOMEM;
    if (R < 2 || C < 1 || ph_tensor_dtype(k) != ph_value_dtype(y) || ph_tensor_read_f64(s, 1, cv, S) ||
        ph_tensor_read_f64(t, 1, cv, T) || ph_const_channel_values(k, R, 1, C, K))
        return 0; /* rank unknown, another dtype, or not per channel */
    for (int64_t c = 0; c < C; c++) {
        if (scales && (!isfinite(K[c]) || (op == PH_OP_Div && K[c] == 0)))
            return 0;
        switch (op) {
        case PH_OP_Mul: S[c] *= K[c]; T[c] *= K[c]; break;
        case PH_OP_Div: S[c] /= K[c]; T[c] /= K[c]; break;
        case PH_OP_Add: T[c] += K[c]; break;
        default: T[c] -= K[c]; break;
        }
    }
    ph_node *bn = ph_match_node(m, "y");
    ph_value *in[5] = {ph_match_value(m, "x"), ph_match_value(m, "s"),
                       ph_rw_initializer(rw, "bn_bias", ph_tensor_from_f64(ph_tensor_dtype(t), 1, cv, T)),
                       ph_match_value(m, "mean"), ph_match_value(m, "var")};
    if (scales)
        in[1] = ph_rw_initializer(rw, "bn_scale", ph_tensor_from_f64(ph_tensor_dtype(s), 1, cv, S));
    ph_node *nb = in[1] && in[2] ? ph_rw_clone(rw, bn, NULL, 5, in) : NULL;
    if (!nb)
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "z"), ph_node_output(nb, 0)) ? PH_ENOMEM : 1;
}

#define BN "y = BatchNormalization(x, s:const:rank=1, t:const:rank=1, mean, var) {training_mode?=0, spatial?=1}\n"

static const ph_rule rules[] = {
    {"bn_mul", BN "z = Mul(y, k:const:floating) {!axis}", NULL, fold},
    {"bn_div", BN "z = Div(y, k:const:floating) {!axis}", NULL, fold},
    {"bn_add", BN "z = Add(y, k:const:floating) {!axis}", NULL, fold},
    {"bn_sub", BN "z = Sub(y, k:const:floating) {!axis}", NULL, fold},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_bn_mul_add",
    .summary = "BatchNormalization -> Mul/Add by per-channel constants becomes one BN with folded scale and bias",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
