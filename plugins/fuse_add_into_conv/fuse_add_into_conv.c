/* fuse_add_into_conv - fold a per-output-channel constant added to a Conv's
 * output into the Conv's bias.
 *
 * Requires: Conv with constant weights W [M, C/group, k...] of a float dtype
 *   (rank >= 3) and an optional constant bias b [M], feeding only an Add (in
 *   either input order) or a Sub (Conv output first) whose other operand is a
 *   constant `a` of W's dtype that, broadcast against the Conv output
 *   [N, M, ...] (of W's rank), varies along axis 1 only: [M,1,1], [1,M,1,1],
 *   a scalar, [1], ...  `a` has at most W's rank and dims of 1 except at
 *   axis 1, so the sum has the Conv output's shape and dtype; a constant that
 *   widens the shape or varies along another axis is left alone, and so is
 *   an Add with the legacy (opset < 7) axis attribute, which aligns `a`
 *   differently.
 * Changes: y = Conv(x, W, b) + a becomes Conv(x, W, b + a) (b - a for Sub);
 *   the Conv keeps its attributes and name, W is shared, b stays while
 *   something else reads it.
 * Exact: fp ((conv + b) + a is computed as conv + (b + a), rounded once).
 */

#include <passhost/passhost.h>

static int fold(ph_rewriter *rw, const ph_match *m)
{
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b"), *a = ph_match_const(m, "a");
    int sub = ph_node_op(ph_match_root(m)) == PH_OP_Sub, dt = ph_tensor_dtype(w), r = (int)ph_tensor_rank(w);
    int64_t M = ph_tensor_dim(w, 0), one[1] = {M};
    double *B = ph_rw_alloc(rw, (size_t)(M ? M : 1) * 2 * sizeof *B), *A = B + M;
    if (!B || r < 3 || ph_tensor_dtype(a) != dt || (b && ph_tensor_dtype(b) != dt) ||
        ph_const_channel_values(a, r, 1, M, A) || (b && ph_tensor_read_f64(b, 1, one, B)))
        return ph_rw_status(rw); /* not per channel, another dtype, or a bias that is not [M] */
    for (int64_t i = 0; i < M; i++)
        B[i] = (b ? B[i] : 0.0) + (sub ? -A[i] : A[i]);
    ph_rw_bind(rw, "b2", ph_rw_initializer(rw, "conv_add_b", ph_tensor_from_f64(dt, 1, one, B)));
    return 1;
}

static const ph_rule rules[] = {
    {"conv_add",
     "c = Conv(x, w:const:floating, b?:const:rank=1)\n"
     "( y = Add(c, a:const) {!axis} | y = Sub(c, a:const) {!axis} )\n"
     "=>\n"
     "y = Conv(x, w, b2) like c",
     NULL, fold},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_add_into_conv",
    .summary = "Conv -> Add of a per-output-channel constant becomes the Conv's bias",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
