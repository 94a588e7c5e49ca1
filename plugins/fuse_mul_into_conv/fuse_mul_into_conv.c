/* fuse_mul_into_conv - fold a per-output-channel constant multiplying a
 * Conv's output into the Conv's weights and bias.
 *
 * Requires: Conv with constant weights W [M, C/group, k...] of a float dtype
 *   (rank >= 3) and an optional constant bias b [M], feeding only a Mul (in
 *   either input order) or a Div (Conv output first), without the legacy
 *   (opset < 7) axis attribute, by a constant s of W's dtype that varies
 *   along axis 1 only against the Conv output [N, M, ...] without widening
 *   it: [M,1,1], [1,M,1,1], a scalar, [1], ...  Every s[m] finite, and
 *   non-zero for Div (inf * 0 or x / 0 inside the Conv's sum would differ).
 * Changes: y = Conv(x, W, b) * s becomes Conv(x, W', b') with W'[m] =
 *   W[m] * s[m], b' = b * s (Div: W[m] / s[m], b / s); no b, no b'.  The
 *   attributes and the name are kept: the scale is per output channel,
 *   which every group and tap shares.
 * Exact: fp (W' and b' are computed in double and rounded once).
 */

#include <math.h>
#include <passhost/passhost.h>

static int fold(ph_rewriter *rw, const ph_match *m)
{
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b"), *s = ph_match_const(m, "s");
    int div = ph_node_op(ph_match_root(m)) == PH_OP_Div, dt = ph_tensor_dtype(w), r = (int)ph_tensor_rank(w);
    int64_t M = ph_tensor_dim(w, 0), n = ph_tensor_numel(w), one[1] = {M};
    double *B = ph_rw_alloc(rw, (size_t)(2 * M + 1) * sizeof *B), *S = B + M;
    if (!B || r < 3 || M < 1 || n % M || ph_tensor_dtype(s) != dt || (b && ph_tensor_dtype(b) != dt) ||
        ph_const_channel_values(s, r, 1, M, S) || (b && ph_tensor_read_f64(b, 1, one, B)))
        return ph_rw_status(rw); /* not per channel, another dtype, or a bias that is not [M] */
    for (int64_t c = 0; c < M; c++) {
        if (!isfinite(S[c]) || (div && S[c] == 0))
            return 0;
        B[c] = div ? B[c] / S[c] : B[c] * S[c];
    }
    ph_tensor *w2;
    int rc = ph_tensor_scaled(w, n / M, M, S, div, &w2); /* W'[c] = W[c] * S[c] (or / S[c]) */
    if (rc)
        return rc == PH_ENOMEM ? PH_ENOMEM : 0;
    ph_rw_bind(rw, "w2", ph_rw_initializer(rw, "conv_mul_w", w2));
    if (b)
        ph_rw_bind(rw, "b2", ph_rw_initializer(rw, "conv_mul_b", ph_tensor_from_f64(dt, 1, one, B)));
    return 1;
}

static const ph_rule rules[] = {
    {"conv_mul",
     "c = Conv(x, w:const:floating, b?:const:rank=1)\n"
     "( y = Mul(c, s:const) {!axis} | y = Div(c, s:const) {!axis} )\n"
     "=>\n"
     "y = Conv(x, w2, b2?) like c",
     NULL, fold},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_mul_into_conv",
    .summary = "Conv -> Mul (or Div) by a per-output-channel constant becomes a Conv with scaled W and B",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
