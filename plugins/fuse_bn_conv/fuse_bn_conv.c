/* fuse_bn_conv - fold an inference BatchNormalization into the Conv after it.
 *
 * Requires: BatchNormalization in inference mode (training_mode absent or
 *   0, is_test absent or 1, spatial absent or 1) whose scale, bias, mean and
 *   var are constant vectors of C values, whose output Y feeds only a Conv
 *   (as its data input) with constant weights W [M, C/group, k...] of a
 *   float dtype and an optional constant bias b [M], with C = group * W.dim(1);
 *   the BN's other outputs (statistics) must be unused, which the matcher
 *   requires of every output of an interior node.
 *   Every s and t below must be finite (ph_bn_affine).
 *   The Conv must not pad: pads absent or all 0, and auto_pad NOTSET or
 *   VALID.  With padding, the original Conv adds zeros around BN(x), but the
 *   folded one adds zeros around x, and b' counts every tap as if it read
 *   t: so with padding (explicit pads or SAME_*) the fold is only done when
 *   the parameter allow_border_change is true, and the result is then
 *   APPROXIMATE: the outputs whose window touches the padding change.
 * Changes: with s = scale / sqrt(var + epsilon) and t = bias - mean * s per
 *   input channel c, Conv(BN(x)) becomes Conv(x, W', b') where, for output
 *   channel m of group g = m / (M / group) and Cg = C / group,
 *     W'[m, c', k] = W[m, c', k] * s[g * Cg + c'],
 *     b'[m] = b[m] + sum over c', k of W[m, c', k] * t[g * Cg + c'].
 *   Strides and dilations do not matter: every tap reads an input element.
 *   The Conv keeps its attributes and name; W, b and the BN parameters stay
 *   while something else reads them.
 * Exact: fp without padding (W', b' computed in double, rounded once);
 *   approx with padding and allow_border_change.
 */
#include <passhost/passhost.h>

/* No padding unless allowed. */
static int check(const ph_match *m, const ph_params *params)
{
    return ph_conv_adds_no_padding(ph_match_root(m), ph_match_const(m, "w")) ||
           ph_params_bool(params, "allow_border_change");
}

static int fold(ph_rewriter *rw, const ph_match *m)
{
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b");
    ph_node *conv = ph_match_root(m), *bn = ph_match_node(m, "y");
    int64_t M = ph_tensor_dim(w, 0), Cg = ph_tensor_dim(w, 1), n = ph_tensor_numel(w);
    int64_t group = ph_node_attr_int(conv, "group", 1), C = ph_tensor_numel(ph_match_const(m, "s"));
    if (ph_tensor_rank(w) < 3 || M < 1 || Cg < 1 || group < 1 || M % group || C != group * Cg)
        return 0;
    int64_t K = n / (M * Cg), mv[1] = {M};
    double *W = ph_rw_alloc(rw, (size_t)(n + M + 2 * C) * sizeof *W), *B = W + n, *S = B + M, *T = S + C;
    if (!W)
        return PH_ENOMEM;
    int rc = ph_bn_affine(bn, C, S, T); /* BN(x) = S * x + T per channel; finite */
    if (rc || ph_tensor_read_f64(w, ph_tensor_rank(w), ph_tensor_dims(w), W) || (b && ph_tensor_read_f64(b, 1, mv, B)))
        return rc == PH_ENOMEM ? rc : 0;
    for (int64_t o = 0; o < M; o++) {
        double acc = b ? B[o] : 0.0;
        int64_t base = (o / (M / group)) * Cg; /* first input channel of o's group */
        for (int64_t ci = 0; ci < Cg; ci++)
            for (int64_t k = (o * Cg + ci) * K; k < (o * Cg + ci + 1) * K; k++) {
                acc += W[k] * T[base + ci];
                W[k] *= S[base + ci];
            }
        B[o] = acc;
    }
    int dt = ph_tensor_dtype(w);
    ph_tensor *nw = ph_tensor_from_f64(dt, ph_tensor_rank(w), ph_tensor_dims(w), W);
    ph_value *in[3] = {ph_match_value(m, "x"), ph_rw_initializer(rw, "bn_conv_w", nw),
                       ph_rw_initializer(rw, "bn_conv_b", ph_tensor_from_f64(dt, 1, mv, B))};
    ph_node *nc = in[1] && in[2] ? ph_rw_clone(rw, conv, NULL, 3, in) : NULL;
    if (!nc)
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "c"), ph_node_output(nc, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"bn_conv",
     "y = BatchNormalization(x, s:const:rank=1, t:const:rank=1, mean:const:rank=1, var:const:rank=1)"
     " {training_mode?=0, is_test?=1, spatial?=1}\n"
     "c = Conv(y, w:const:floating, b?:const:rank=1)",
     check, fold},
    {0}};

static const ph_param_def params[] = {
    {"allow_border_change", PH_PARAM_BOOL, "false",
     "also fold into a Conv that pads (explicit pads or SAME_*): APPROXIMATE, the border outputs change"},
    {NULL, 0, NULL, NULL}};

PH_PASS_DEFINE(
    .name = "fuse_bn_conv",
    .summary = "BatchNormalization -> Conv without padding becomes one Conv with folded W and B",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .params = params,
    .rules = rules)
