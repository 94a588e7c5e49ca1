/* fuse_bn_mul_add - fold a per-channel constant Mul, Div, Add or Sub after an
 * inference BatchNormalization into the BN's scale and bias.
 *
 * Requires: scale and bias constant vectors of C values (mean and var may be
 *   anything); Y of known rank R >= 2; k of Y's dtype, varying along axis 1
 *   only against Y without widening it ([C,1,1], [1,C,1,1], [C] for [N,C],
 *   a scalar, ...); no legacy (opset < 7) axis attribute, which aligns k
 *   otherwise.  For Mul and Div every k finite, for Div non-zero (inf * 0
 *   inside the BN would not give what it gives after it).
 * Changes: with Y = scale * xhat + bias per channel, Y * k becomes a BN with
 *   scale * k and bias * k (Div: / k), Y + k one with bias + k (Sub: - k),
 *   and the old one's attributes, name, x, mean and var.  A chain (Mul then
 *   Add) folds one node per rewrite.
 * Exact: fp (the new scale and bias are computed in double, rounded once).
 */

#include <math.h>
#include <passhost/passhost.h>

static int fold(ph_rewriter *rw, const ph_match *m)
{
    const ph_tensor *s = ph_match_const(m, "s"), *t = ph_match_const(m, "t"), *k = ph_match_const(m, "k");
    ph_op op = ph_node_op(ph_match_root(m));
    int R = ph_value_rank(ph_match_value(m, "y")), scales = op == PH_OP_Mul || op == PH_OP_Div;
    int64_t C = ph_tensor_numel(s), cv[1] = {C};
    double *S = ph_rw_alloc(rw, (size_t)(3 * C + 1) * sizeof *S), *T = S + C, *K = T + C;
    if (!S || R < 2 || C < 1 || ph_tensor_read_f64(s, 1, cv, S) || ph_tensor_read_f64(t, 1, cv, T) ||
        ph_const_channel_values(k, R, 1, C, K))
        return ph_rw_status(rw); /* rank unknown, or not per channel */
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
    ph_rw_bind(rw, "t2", ph_rw_initializer(rw, "bn_bias", ph_tensor_from_f64(ph_tensor_dtype(t), 1, cv, T)));
    ph_rw_bind(rw, "s2", scales ? ph_rw_initializer(rw, "bn_scale", ph_tensor_from_f64(ph_tensor_dtype(s), 1, cv, S))
                                : ph_match_value(m, "s"));
    return 1;
}

static const ph_rule rules[] = {
    {"bn_affine",
     "y = BatchNormalization(x, s:const:rank=1, t:const:rank=1, mean, var) {training_mode(0)=0, spatial(1)=1}\n"
     "z = Mul|Div|Add|Sub(y:dtype=$t, k:const:floating:dtype=$t) {!axis}\n"
     "=>\nz = BatchNormalization(x, s2, t2, mean, var) like y",
     NULL, fold},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_bn_mul_add",
    .summary = "BatchNormalization -> Mul/Add by per-channel constants becomes one BN with folded scale and bias",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
