/* fuse_skip_layernorm - a residual Add followed by layer normalization
 * becomes ONNX Runtime's com.microsoft SkipLayerNormalization (adapt stage,
 * target ort).
 *
 * Requires:
 *   - s = Add(a, r) with a and r float (ORT's CPU kernel: the pass keeps to
 *     float) and provably of one 3-D shape [B, S, H] with H known (the
 *     kernel's input and skip), or s = Add(Add(a, bias), r) where bias is
 *     known to be [H] (the kernel's bias input; the inner Add read only here);
 *   - s normalized over its last axis, either by a LayerNormalization
 *     (axis -1 or 2; its Mean/InvStdDev outputs unused) with constant gamma
 *     [H] and optional constant beta [H], or by the form exporters write below
 *     opset 17: ReduceMean (last axis, keepdims) / Sub / Pow 2 / ReduceMean /
 *     Add eps / Sqrt / Div, then optionally Mul gamma and/or Add beta
 *     (constant [H]; eliminate_nop_arith removes a gamma of ones and a beta
 *     of zeros), with a one-element float eps; a form without beta (or
 *     gamma) is left to the longer one when its result goes on to such an
 *     Add (or Mul);
 *   - the values between s and the result read only inside the pattern.
 *   s itself may have other readers or be a graph output: they then read
 *   SkipLayerNormalization's 4th output, input_skip_bias_sum (ORT >= 1.13).
 * Changes: the subgraph becomes SkipLayerNormalization(a, r, gamma, beta[,
 *   bias]) {epsilon = LayerNormalization's epsilon or eps} (no gamma: a new
 *   [H] of ones; no beta: omitted); the model imports com.microsoft version 1.
 *   Main graph and every If/Loop/Scan body.
 * Exact: fp (ORT sums a + r (+ bias) and normalizes in one kernel; the order
 *   of the additions and of the variance computation may differ).
 */
#include <passhost/passhost.h>

/* 1 if the one-element float constant `name` of the match holds exactly
 * want (want < 0: any value, stored in *out). */
static int scalar_is(const ph_match *m, const char *name, double want, double *out)
{
    const ph_tensor *t = ph_match_const(m, name);
    double v;
    if (!t || ph_tensor_dtype(t) != PH_DT_FLOAT || ph_tensor_rank(t) > 3 ||
        ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), &v))
        return 0;
    if (out)
        *out = v;
    return want < 0 ? v >= 0 : v == want;
}

/* The ReduceMean bound to `name` averages the last of 3 axes, keeping it
 * (axes from the attribute, or the input from opset 18: ph_node_axes). */
static int mean_last(const ph_match *m, const char *name)
{
    ph_node *n = ph_match_node(m, name);
    int64_t ax[4];
    return ph_node_axes(n, 3, ax, 4) == 1 && ax[0] == 2 && ph_node_attr_int(n, "keepdims", 1) == 1;
}

/* A 1-D float value of H elements (a constant's tensor, else the known
 * type), or absent (optional). */
static int vec_h(const ph_match *m, const char *name, int64_t H)
{
    ph_value *v = ph_match_value(m, name);
    const ph_tensor *t = v ? ph_value_const(v) : NULL;
    if (t)
        return ph_tensor_dtype(t) == PH_DT_FLOAT && ph_tensor_rank(t) == 1 && ph_tensor_dim(t, 0) == H;
    return !v || (ph_value_dtype(v) == PH_DT_FLOAT && ph_value_rank(v) == 1 && ph_value_dim(v, 0) == H);
}

static int common_ok(const ph_match *m)
{
    ph_value *a = ph_match_value(m, "a"), *r = ph_match_value(m, "r");
    int64_t H = ph_value_dim(a, 2);
    return ph_value_dtype(a) == PH_DT_FLOAT && ph_value_dtype(r) == PH_DT_FLOAT && ph_value_same_shape(a, r) &&
           H > 0 && vec_h(m, "gamma", H) && vec_h(m, "beta", H) && vec_h(m, "bias", H);
}

static int ln_ok(const ph_match *m, const ph_params *p)
{
    int64_t axis = ph_node_attr_int(ph_match_root(m), "axis", -1);
    return (axis == -1 || axis == 2) && common_ok(m);
}

/* The result's only reader is `op` with a constant [H] float operand: the
 * affine step a longer rule takes in. */
static int affine_follows(const ph_match *m, ph_op op)
{
    ph_value *y = ph_match_value(m, "y");
    ph_node *c = ph_value_sole_consumer(y);
    if (!c || ph_node_op(c) != op || ph_node_input_count(c) != 2)
        return 0;
    const ph_tensor *t = ph_value_const(ph_node_input(c, ph_node_input(c, 0) == y));
    return t && ph_tensor_dtype(t) == PH_DT_FLOAT && ph_tensor_rank(t) == 1 &&
           ph_tensor_dim(t, 0) == ph_value_dim(ph_match_value(m, "a"), 2);
}

static int decomposed_ok(const ph_match *m, const ph_params *p)
{
    int gamma = ph_match_value(m, "gamma") != NULL, beta = ph_match_value(m, "beta") != NULL;
    return common_ok(m) && mean_last(m, "mu") && mean_last(m, "v") && scalar_is(m, "two", 2.0, NULL) &&
           scalar_is(m, "eps", -1.0, NULL) && (beta || !affine_follows(m, PH_OP_Add)) &&
           (gamma || beta || !affine_follows(m, PH_OP_Mul));
}

/* s has readers outside the match, or is a graph output. */
static int sum_used(const ph_match *m, ph_value *s)
{
    if (ph_value_graph_output_count(s))
        return 1;
    for (size_t i = 0; i < ph_value_use_count(s); i++) {
        ph_node *u = ph_value_use(s, i, NULL);
        size_t k = 0;
        while (k < ph_match_node_count(m) && ph_match_node_at(m, k) != u)
            k++;
        if (k == ph_match_node_count(m))
            return 1;
    }
    return 0;
}

static int fuse(ph_rewriter *rw, const ph_match *m)
{
    ph_node *root = ph_match_root(m);
    double eps = 0;
    if (ph_node_op(root) == PH_OP_LayerNormalization)
        eps = ph_node_attr_float(root, "epsilon", 1e-5f);
    else
        scalar_is(m, "eps", -1.0, &eps);
    ph_value *s = ph_match_value(m, "s"), *y = ph_match_value(m, "y"), *bias = ph_match_value(m, "bias");
    ph_value *in[5] = {ph_match_value(m, "a"), ph_match_value(m, "r"), ph_match_value(m, "gamma"),
                       ph_match_value(m, "beta"), bias};
    if (!in[2]) { /* normalized without a scale: gamma of ones */
        int64_t H = ph_value_dim(in[0], 2);
        double *ones = ph_rw_alloc(rw, (size_t)H * sizeof *ones);
        if (!ones)
            return PH_ENOMEM;
        for (int64_t i = 0; i < H; i++)
            ones[i] = 1.0;
        if (!(in[2] = ph_rw_initializer(rw, "skip_ln_gamma", ph_tensor_from_f64(PH_DT_FLOAT, 1, &H, ones))))
            return PH_ENOMEM;
    }
    int keep_sum = sum_used(m, s);
    ph_node *n = ph_rw_node(rw, "SkipLayerNormalization@com.microsoft", bias ? 5 : 4, in, keep_sum ? 4 : 1);
    if (!n || ph_node_set_attr_float(n, "epsilon", (float)eps) < 0 ||
        ph_value_copy_type(ph_node_output(n, 0), y) < 0 || ph_rw_replace(rw, y, ph_node_output(n, 0)) < 0 ||
        (keep_sum && (ph_value_copy_type(ph_node_output(n, 3), s) < 0 ||
                      ph_rw_replace(rw, s, ph_node_output(n, 3)) < 0)))
        return PH_ENOMEM;
    return ph_model_require_opset(ph_graph_model(ph_rw_graph(rw)), "com.microsoft", 1) < 0 ? PH_ENOMEM : 1;
}

#define SUM_BIAS "t = Add(a:rank=3, bias:rank=1)\ns:shared = Add(t, r:rank=3)\n"
#define SUM "s:shared = Add(a:rank=3, r:rank=3)\n"
#define LN "y = LayerNormalization(s, gamma:const:rank=1, beta?:const:rank=1)"
/* (s - mean) / sqrt(var + eps), then the affine tails */
#define NORM                                                                                      \
    "mu = ReduceMean(s, ax1?)\nd = Sub(s, mu)\np = Pow(d, two:scalar)\nv = ReduceMean(p, ax2?)\n" \
    "e = Add(v, eps:scalar)\nsd = Sqrt(e)\n"
#define GAMMA_BETA "n = Div(d, sd)\ng = Mul(n, gamma:const:rank=1)\ny = Add(g, beta:const:rank=1)"
#define GAMMA "n = Div(d, sd)\ny = Mul(n, gamma:const:rank=1)"
#define BETA "n = Div(d, sd)\ny = Add(n, beta:const:rank=1)"
#define PLAIN "y = Div(d, sd)"

static const ph_rule rules[] = {
    {"add_bias_layernorm", SUM_BIAS LN, ln_ok, fuse},
    {"add_layernorm", SUM LN, ln_ok, fuse},
    {"add_bias_decomposed", SUM_BIAS NORM GAMMA_BETA, decomposed_ok, fuse},
    {"add_decomposed", SUM NORM GAMMA_BETA, decomposed_ok, fuse},
    {"add_bias_decomposed_gamma", SUM_BIAS NORM GAMMA, decomposed_ok, fuse},
    {"add_decomposed_gamma", SUM NORM GAMMA, decomposed_ok, fuse},
    {"add_bias_decomposed_beta", SUM_BIAS NORM BETA, decomposed_ok, fuse},
    {"add_decomposed_beta", SUM NORM BETA, decomposed_ok, fuse},
    {"add_bias_decomposed_plain", SUM_BIAS NORM PLAIN, decomposed_ok, fuse},
    {"add_decomposed_plain", SUM NORM PLAIN, decomposed_ok, fuse},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_skip_layernorm",
    .summary = "residual Add (+ bias) + LayerNormalization (or its decomposed form) -> com.microsoft "
               "SkipLayerNormalization",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 1,
    .exactness = PH_FP,
    .targets = "ort",
    .rules = rules)
