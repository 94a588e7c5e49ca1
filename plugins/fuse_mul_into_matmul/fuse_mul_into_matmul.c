/* fuse_mul_into_matmul - fold a constant scale before or after a MatMul or
 * Gemm into its constant weight.
 *
 * Requires: a MatMul(x, W) with a constant W of rank >= 2 ([..., K, N]), or
 *   a Gemm(x, W, C?) with a constant W of rank 2 ([K, N], or [N, K] with
 *   transB), of a float dtype, read by no other node (a shared weight is
 *   not copied to fold one scale); the scale `s` is a constant of W's dtype,
 *   every value finite (and non-zero for Div).  Two forms:
 *   - after: y = MatMul|Gemm(...) * s (Mul in either order) or / s (Div
 *     with the product first), the product used only there; s varies only
 *     along the output's last axis (per output column n): a scalar, [N],
 *     [1, N], [1]...  s's rank is at most the product's known rank (at most
 *     1 when that rank is unknown), so y keeps the product's shape.  A Gemm
 *     bias C, when present, must be constant.
 *   - before: y = MatMul|Gemm(x * s or x / s, W, C?), the scaled value used
 *     only there; s varies only along x's contraction axis (the last one;
 *     axis 0 for Gemm with transA), per row k of W.  Unless s is a rank-0
 *     scalar, x's rank must be known and at least s's, and where s has K > 1
 *     values x's contraction dim must be known to be K, so x * s has x's
 *     shape (an x of dim 1 there would be widened by s, and W could not
 *     take x alone).
 *   A constant that varies along another axis (per row of the output, or
 *   along a batch axis) or that would widen the shape is left alone.
 * Changes: after: W'[..., k, n] = W[..., k, n] * s[n] (/ s[n] for Div;
 *   transB: W'[n, k]), and a Gemm bias C' = C * s (broadcast to [N] or
 *   [M, N]); alpha and beta are kept.  before: W'[..., k, n] = W * s[k]
 *   (/ s[k]); C is kept.  The node keeps its op, attributes and name.
 * Cost: the weight's data is read only for a match that passes every check
 *   above, and then once (ph_tensor_scaled: read once, written once).
 * Exact: fp (W' and C' computed in double and rounded once: for FLOAT the
 *   double product of two floats is exact and a double quotient rounds
 *   innocuously, so W' is the correctly rounded product or quotient).
 */
#include <math.h>
#include <passhost/passhost.h>
#include <passhost/constant.h>

/* s's values along the scaled axis, checked: n entries into S.  rank: the
 * rank s is broadcast against; axis: the axis it may vary along. */
static int scale_values(const ph_tensor *s, int rank, int axis, int64_t n, int div, double *S)
{
    if (ph_const_channel_values(s, rank, axis, n, S))
        return 0;
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(S[i]) || (div && S[i] == 0))
            return 0;
    return 1;
}

/* rc of ph_tensor_scaled as the rewrite's answer: out of memory fails the
 * pass, weights that cannot be read leave the graph alone. */
static int scaled_rc(int rc) { return rc == PH_ENOMEM ? PH_ENOMEM : 0; }

/* y = MatMul|Gemm(x, W, C?) * s */
static int after(ph_rewriter *rw, const ph_match *m)
{
    ph_node *mm = ph_match_node(m, "mm");
    const ph_tensor *w = ph_match_const(m, "w"), *s = ph_match_const(m, "s"), *c = ph_match_const(m, "c");
    int gemm = ph_node_op(mm) == PH_OP_Gemm, div = ph_node_op(ph_match_root(m)) == PH_OP_Div;
    int tb = gemm && ph_node_attr_int(mm, "transB", 0), dt = ph_tensor_dtype(w);
    int wr = (int)ph_tensor_rank(w), orank = gemm ? 2 : ph_value_rank(ph_match_value(m, "mm"));
    int sr = (int)ph_tensor_rank(s), cr = c ? (int)ph_tensor_rank(c) : 0;
    if ((gemm ? wr != 2 : wr < 2) || ph_value_sole_consumer(ph_match_value(m, "w")) != mm ||
        ph_tensor_dtype(s) != dt || (c && ph_tensor_dtype(c) != dt) ||
        (ph_match_value(m, "c") && !c) || cr > 2 || sr > (orank < 0 ? 1 : orank))
        return 0;
    int64_t N = tb ? ph_tensor_dim(w, 0) : ph_tensor_dim(w, (size_t)wr - 1);
    int64_t cdims[2] = {cr == 2 ? ph_tensor_dim(c, 0) : N, N}, nc = c ? cdims[0] * (cr == 2 ? N : 1) : 0;
    double *S = ph_rw_alloc(rw, (size_t)(N + nc) * sizeof *S), *CV = S + N;
    if (!S)
        return PH_ENOMEM;
    if (!scale_values(s, sr > 0 ? sr : 1, -1, N, div, S) ||
        (c && ph_tensor_read_f64(c, cr == 2 ? 2 : 1, cr == 2 ? cdims : cdims + 1, CV)))
        return 0;
    for (int64_t i = 0; i < nc; i++)
        CV[i] = div ? CV[i] / S[i % N] : CV[i] * S[i % N];
    /* W [.., K, N]: S along the columns; transB W [N, K]: S[n] along the rows */
    ph_tensor *w2;
    int rc = tb ? ph_tensor_scaled(w, ph_tensor_dim(w, 1), N, S, div, &w2) : ph_tensor_scaled(w, 1, N, S, div, &w2);
    if (rc)
        return scaled_rc(rc);
    ph_value *in[3] = {ph_match_value(m, "x"), ph_rw_initializer(rw, "matmul_scaled_w", w2), NULL};
    if (c)
        in[2] = ph_rw_initializer(rw, "matmul_scaled_c",
                                  ph_tensor_from_f64(dt, cr == 2 ? 2 : 1, cr == 2 ? cdims : cdims + 1, CV));
    ph_node *n = in[1] && (in[2] || !c) ? ph_rw_clone(rw, mm, NULL, c ? 3 : 2, in) : NULL;
    if (!n)
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(n, 0)) ? PH_ENOMEM : 1;
}

/* y = MatMul|Gemm(x * s, W, C?) */
static int before(ph_rewriter *rw, const ph_match *m)
{
    ph_node *mm = ph_match_root(m);
    const ph_tensor *w = ph_match_const(m, "w"), *s = ph_match_const(m, "s");
    const ph_value *x = ph_match_value(m, "x");
    int gemm = ph_node_op(mm) == PH_OP_Gemm, div = ph_node_op(ph_match_node(m, "xs")) == PH_OP_Div;
    int ta = gemm && ph_node_attr_int(mm, "transA", 0), tb = gemm && ph_node_attr_int(mm, "transB", 0);
    int wr = (int)ph_tensor_rank(w), xr = ph_value_rank(x), sr = (int)ph_tensor_rank(s);
    if ((gemm ? wr != 2 : wr < 2) || ph_value_sole_consumer(ph_match_value(m, "w")) != mm ||
        ph_tensor_dtype(s) != ph_tensor_dtype(w) || (sr > 0 && (xr < sr || xr < 1)) ||
        (gemm && xr >= 0 && xr != 2))
        return 0;
    int64_t K = tb ? ph_tensor_dim(w, 1) : ph_tensor_dim(w, (size_t)wr - 2);
    int64_t cols = ph_tensor_dim(w, (size_t)wr - 1);
    int axis = ta ? 0 : xr - 1; /* x's contraction axis (when xr is known) */
    if (sr > 0 && ph_tensor_numel(s) > 1 && ph_value_dim(x, axis) != K)
        return 0; /* s would widen x, or x's contraction dim is unknown */
    double *S = ph_rw_alloc(rw, (size_t)K * sizeof *S);
    if (!S)
        return PH_ENOMEM;
    if (!scale_values(s, sr > 0 ? xr : 1, sr > 0 ? axis : 0, K, div, S))
        return 0;
    /* W [.., K, cols]: S[k] along the rows of each matrix; transB W [N, K]:
     * S along the columns */
    ph_tensor *w2;
    int rc = tb ? ph_tensor_scaled(w, 1, cols, S, div, &w2) : ph_tensor_scaled(w, cols, K, S, div, &w2);
    if (rc)
        return scaled_rc(rc);
    ph_value *in[3] = {ph_match_value(m, "x"), ph_rw_initializer(rw, "matmul_scaled_w", w2), ph_match_value(m, "c")};
    ph_node *n = in[1] ? ph_rw_clone(rw, mm, NULL, ph_node_input_count(mm), in) : NULL;
    if (!n)
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(n, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"matmul_mul", "mm = MatMul|Gemm(x, w:const:floating, c?)\ny = Mul(mm, s:const)", NULL, after},
    {"matmul_div", "mm = MatMul|Gemm(x, w:const:floating, c?)\ny = Div(mm, s:const)", NULL, after},
    {"mul_matmul", "xs = Mul(x, s:const)\ny = MatMul|Gemm(xs, w:const:floating, c?)", NULL, before},
    {"div_matmul", "xs = Div(x, s:const)\ny = MatMul|Gemm(xs, w:const:floating, c?)", NULL, before},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_mul_into_matmul",
    .summary = "Mul/Div by a constant before or after a MatMul/Gemm with a constant weight becomes a scaled weight",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
