/* fuse_bn_matmul - fold an inference BatchNormalization into the MatMul or
 * Gemm with a constant weight before or after it.
 *
 * The BatchNormalization (training_mode absent or 0, spatial absent or 1,
 * default opset >= 7, its extra outputs unused) with constant parameters is
 * the per-channel map BN(v) = v * a[c] + b[c] on axis 1, a = gamma /
 * sqrt(var + eps), b = beta - mean * a (ph_bn_affine; every a, b finite).
 * Its input is 2-D [rows, C] in both forms below, so its channel axis is a
 * matrix axis: BN on inputs of rank 3 or more (channel axis 1 is then not
 * the contraction or column axis) is left alone.
 *
 * Requires: W a constant of rank 2 and a float dtype (bfloat16 from opset
 *   13, where Gemm takes it), read by no other node (a shared weight is not
 *   copied); a Gemm bias C, when present, constant.
 *   - bn_matmul: y = MatMul|Gemm(BN(x), W, C?) with x of known rank 2 and
 *     the BN output used only there; for Gemm transA = 0 (with transA the
 *     BN's channel axis would not be the contraction axis).  C = K, the
 *     contraction dim (W [K, N], or [N, K] with transB).
 *   - matmul_bn: y = BN(MatMul(x, W)) with x of known rank 2, or
 *     BN(Gemm(x, W, C?)); the product used only by the BN; its channel axis
 *     is the output column, C = N.
 * Changes (the MatMul becomes a Gemm, which carries the new bias; a Gemm
 *   keeps its attributes and alpha, and gets beta = 1):
 *   - bn_matmul: W'[k, n] = a[k] W[k, n]; bias[n] = sum_k b[k] W[k, n];
 *     C' = alpha * bias + beta * C (shape [N] or C's [M, N]).
 *   - matmul_bn: W'[k, n] = W[k, n] a[n]; C' = beta * C * a + b.
 *   The new node is named after the MatMul/Gemm.
 * Exact: fp (W', C' computed in double, rounded once).
 */
#include <passhost/passhost.h>
#include <passhost/constant.h>

static int opset_ok(const ph_match *m, const ph_params *params)
{
    int64_t opset = ph_node_opset(ph_match_root(m));
    int dt = ph_tensor_dtype(ph_match_const(m, "w"));
    ph_node *user = ph_value_sole_consumer(ph_match_value(m, "w"));
    return opset >= 7 && ph_tensor_rank(ph_match_const(m, "w")) == 2 && ph_dtype_is_float(dt) && user &&
           (user == ph_match_node(m, "mm") || user == ph_match_root(m)) &&
           (dt != PH_DT_BFLOAT16 || opset >= 13) && (!ph_match_value(m, "c") || ph_match_const(m, "c"));
}

/* A Gemm like `like` (op and attributes, beta 1) reading x, W' and C' (the
 * [crows, N] or [N] doubles in CV; crows 0 for [N]); it replaces y. */
static int emit(ph_rewriter *rw, const ph_match *m, ph_node *like, const double *W, const double *CV,
                int64_t crows, int64_t N)
{
    const ph_tensor *w = ph_match_const(m, "w");
    int dt = ph_tensor_dtype(w);
    int64_t cd[2] = {crows, N};
    ph_value *in[3] = {ph_match_value(m, "x"),
                       ph_rw_initializer(rw, "bn_matmul_w", ph_tensor_from_f64(dt, 2, ph_tensor_dims(w), W)),
                       ph_rw_initializer(rw, "bn_matmul_c", ph_tensor_from_f64(dt, crows ? 2 : 1, crows ? cd : cd + 1, CV))};
    ph_node *n = in[1] && in[2] ? ph_rw_clone(rw, like, "Gemm", 3, in) : NULL;
    if (!n || (ph_node_op(like) == PH_OP_Gemm && ph_node_set_attr_float(n, "beta", 1.0f)))
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(n, 0)) ? PH_ENOMEM : 1;
}

/* Read Gemm bias c as [crows, N] (rank 2) or [N]; *crows 0 for [N]. */
static int read_bias(const ph_tensor *c, int64_t N, int64_t *crows, double *CV)
{
    size_t r = ph_tensor_rank(c);
    int64_t cd[2] = {r == 2 ? ph_tensor_dim(c, 0) : 0, N};
    *crows = cd[0];
    return r <= 2 && !ph_tensor_read_f64(c, r == 2 ? 2 : 1, r == 2 ? cd : cd + 1, CV);
}

static int64_t bias_rows(const ph_tensor *c) { return c && ph_tensor_rank(c) == 2 ? ph_tensor_dim(c, 0) : 1; }

/* y = MatMul|Gemm(BN(x), W, C?) */
static int bn_before(ph_rewriter *rw, const ph_match *m)
{
    ph_node *mm = ph_match_root(m);
    const ph_tensor *w = ph_match_const(m, "w"), *c = ph_match_const(m, "c");
    int gemm = ph_node_op(mm) == PH_OP_Gemm, tb = gemm && ph_node_attr_int(mm, "transB", 0);
    if (ph_value_rank(ph_match_value(m, "x")) != 2 || (gemm && ph_node_attr_int(mm, "transA", 0)))
        return 0;
    int64_t K = ph_tensor_dim(w, tb), N = ph_tensor_dim(w, !tb), nc = N * bias_rows(c), crows = 0;
    double *A = ph_rw_alloc(rw, (size_t)(2 * K + 2 * K * N + nc) * sizeof *A), *B = A + K, *W = B + K,
           *BIAS = W + K * N, *CV = BIAS + N;
    if (!A)
        return PH_ENOMEM;
    if (ph_bn_affine(ph_match_node(m, "b"), K, A, B) || ph_tensor_read_f64(w, 2, ph_tensor_dims(w), W) ||
        (c && !read_bias(c, N, &crows, CV)))
        return 0;
    double alpha = gemm ? ph_node_attr_float(mm, "alpha", 1.0f) : 1.0;
    double beta = gemm ? ph_node_attr_float(mm, "beta", 1.0f) : 1.0;
    for (int64_t n = 0; n < N; n++)
        BIAS[n] = 0;
    for (int64_t i = 0; i < K * N; i++) {
        int64_t k = tb ? i % K : i / N, n = tb ? i / K : i % N;
        BIAS[n] += B[k] * W[i];
        W[i] *= A[k];
    }
    for (int64_t i = 0; i < nc; i++)
        CV[i] = alpha * BIAS[i % N] + (c ? beta * CV[i] : 0);
    return emit(rw, m, mm, W, CV, crows, N);
}

/* y = BN(MatMul|Gemm(x, W, C?)) */
static int bn_after(ph_rewriter *rw, const ph_match *m)
{
    ph_node *mm = ph_match_node(m, "mm");
    const ph_tensor *w = ph_match_const(m, "w"), *c = ph_match_const(m, "c");
    int gemm = ph_node_op(mm) == PH_OP_Gemm, tb = gemm && ph_node_attr_int(mm, "transB", 0);
    if (!gemm && ph_value_rank(ph_match_value(m, "x")) != 2)
        return 0;
    int64_t K = ph_tensor_dim(w, tb), N = ph_tensor_dim(w, !tb), nc = N * bias_rows(c), crows = 0;
    double *A = ph_rw_alloc(rw, (size_t)(2 * N + K * N + nc) * sizeof *A), *B = A + N, *W = B + N, *CV = W + K * N;
    if (!A)
        return PH_ENOMEM;
    if (ph_bn_affine(ph_match_root(m), N, A, B) || ph_tensor_read_f64(w, 2, ph_tensor_dims(w), W) ||
        (c && !read_bias(c, N, &crows, CV)))
        return 0;
    double beta = gemm ? ph_node_attr_float(mm, "beta", 1.0f) : 1.0;
    for (int64_t i = 0; i < K * N; i++)
        W[i] *= A[tb ? i / K : i % N];
    for (int64_t i = 0; i < nc; i++)
        CV[i] = (c ? beta * CV[i] * A[i % N] : 0) + B[i % N];
    return emit(rw, m, mm, W, CV, crows, N);
}

#define BN(in) "BatchNormalization(" in ", s:const, t:const, mean:const, var:const) {training_mode?=0, spatial?=1}"

static const ph_rule rules[] = {
    {"bn_matmul", "b = " BN("x") "\ny = MatMul|Gemm(b, w:const, c?)", opset_ok, bn_before},
    {"matmul_bn", "mm = MatMul|Gemm(x, w:const, c?)\ny = " BN("mm"), opset_ok, bn_after},
    {0}};

/* Examples for the rule checker: BatchNormalization before a MatMul. */
static const ph_rule_example examples[] = {
    {"bn_matmul", "x: <T=float|double>[<2|3>,<C=4|6>]\ns: const <T>[<C>]\nt: const <T>[<C>]\nmu: const <T>[<C>]\n"
                  "var: <T>[<C>] = [0.5]\nb = BatchNormalization(x, s, t, mu, var)\nw: const <T>[<C>,<3|5>]\n"
                  "y = MatMul(b, w)\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_bn_matmul",
    .summary = "BatchNormalization before or after a 2-D MatMul/Gemm with a constant weight folded into W and a bias",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules,
    .rule_examples = examples)
