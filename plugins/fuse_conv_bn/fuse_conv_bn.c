/* fuse_conv_bn - fold an inference BatchNormalization into the Conv before it.
 *
 * Requires: Conv with constant weights W [M, C/group, k...] (any float dtype)
 *   and optional constant bias b [M], feeding only a BatchNormalization in
 *   inference mode whose scale, bias, mean and var are constant vectors of M
 *   values and whose extra outputs (training only) are unused (the engine
 *   requires that of every output the pattern does not name); every s and t
 *   below finite.
 * Changes: y = BN(Conv(x, W, b)) becomes Conv(x, W', b') with
 *   s = scale / sqrt(var + epsilon), t = bias - mean * s (ph_bn_affine),
 *   W'[m] = W[m] * s[m], b' = b * s + t; the Conv keeps its name and
 *   attributes; W and b stay while something else reads them.
 * Exact: fp (the folded weights are rounded once, from double).
 */

#include <passhost/passhost.h>

static int fold(ph_rewriter *rw, const ph_match *m)
{
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b");
    int64_t M = ph_tensor_dim(w, 0), n = ph_tensor_numel(w), one[1] = {M};
    if (M < 1 || n % M)
        return 0;
    double *S = ph_rw_alloc(rw, (size_t)M * 3 * sizeof *S), *B = S + M, *bias = B + M;
    int rc = S ? ph_bn_affine(ph_match_root(m), M, S, B) : PH_ENOMEM; /* y = S * conv + B per channel */
    if (rc || (b && ph_tensor_read_f64(b, 1, one, bias)))
        return rc == PH_ENOMEM ? rc : 0; /* not [M], or not finite */
    for (int64_t c = 0; b && c < M; c++)
        B[c] += bias[c] * S[c];
    ph_tensor *w2;
    rc = ph_tensor_scaled(w, n / M, M, S, 0, &w2); /* the weights: read once, written once */
    if (rc)
        return rc == PH_ENOMEM ? PH_ENOMEM : 0;
    ph_rw_bind(rw, "w2", ph_rw_initializer(rw, "conv_bn_w", w2));
    ph_rw_bind(rw, "b2", ph_rw_initializer(rw, "conv_bn_b", ph_tensor_from_f64(ph_tensor_dtype(w), 1, one, B)));
    return 1;
}

static const ph_rule rules[] = {
    {"conv_bn",
     "c = Conv(x, w:const:floating, b?:const:rank=1)\n"
     "y = BatchNormalization(c, s:const:rank=1, t:const:rank=1, mean:const:rank=1, var:const:rank=1)"
     " {training_mode(0)=0}\n"
     "=>\n"
     "y = Conv(x, w2, b2) like c",
     NULL, fold},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_conv_bn",
    .summary = "Conv -> BatchNormalization (constant parameters) becomes one Conv with folded W and B",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
