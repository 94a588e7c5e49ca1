/* fuse_skip_layernorm - a residual Add followed by layer normalization
 * becomes ONNX Runtime's com.microsoft SkipLayerNormalization (adapt stage,
 * target ort).
 *
 * Requires:
 *   - s = Add(a, r), or s = Add(Add(a, bias), r) with the inner Add read only
 *     here; a and r float32 (ORT's CPU kernel) and provably of one 3-D shape
 *     [B, S, H] with H known; bias, gamma and beta 1-D float32 of H elements;
 *   - s normalized over its last axis, either by a LayerNormalization (axis
 *     -1 or 2, its Mean/InvStdDev outputs unused) with constant gamma and
 *     optional constant beta, or by the form exporters write below opset 17:
 *     ReduceMean (last axis, keepdims) / Sub / Pow 2 / ReduceMean / Add eps
 *     (>= 0) / Sqrt / Div, then optionally Mul gamma and/or Add beta
 *     (constants; the longest form wins); eps and the 2 one-element float32.
 *   s itself may have other readers or be a graph output: they then read
 *   SkipLayerNormalization's 4th output, input_skip_bias_sum (ORT >= 1.13).
 * Changes: the subgraph becomes SkipLayerNormalization(a, r, gamma, beta[,
 *   bias]) {epsilon = LayerNormalization's epsilon or eps} (no gamma: [H] of
 *   ones; no beta: omitted), named as the root; the model imports
 *   com.microsoft version 1.
 * Exact: fp (ORT sums a + r (+ bias) and normalizes in one kernel; the order
 *   of the additions and of the variance computation may differ).
 */
#include <passhost/passhost.h>

/* The ReduceMean bound to `name` averages the last of 3 axes. */
static int mean_last(const ph_match *m, const char *name)
{
    int64_t ax[4];
    return ph_node_axes(ph_match_node(m, name), 3, ax, 4) == 1 && ax[0] == 2;
}

static int check(const ph_match *m, const ph_params *p)
{
    ph_value *a = ph_match_value(m, "a");
    int64_t H = ph_value_dim(a, 2);
    static const char *const vec[] = {"gamma", "beta", "bias"};
    for (int i = 0; i < 3; i++)
        if (ph_match_value(m, vec[i]) && ph_value_dim(ph_match_value(m, vec[i]), 0) != H)
            return 0;
    return H > 0 && ph_value_same_shape(a, ph_match_value(m, "r")) &&
           (!ph_match_node(m, "mu") || (mean_last(m, "mu") && mean_last(m, "v") && ph_match_float(m, "eps", -1) >= 0));
}

static int fuse(ph_rewriter *rw, const ph_match *m)
{
    int64_t H = ph_value_dim(ph_match_value(m, "a"), 2);
    ph_value *s = ph_match_value(m, "s"), *bias = ph_match_value(m, "bias"), *gamma = ph_match_value(m, "gamma");
    ph_value *in[5] = {ph_match_value(m, "a"), ph_match_value(m, "r"),
                       gamma ? gamma : ph_rw_constant(rw, "skip_ln_gamma", NULL, PH_DT_FLOAT, 1, &H, 1.0),
                       ph_match_value(m, "beta"), bias};
    int keep_sum = ph_match_escapes(m, "s");
    ph_node *n = ph_rw_node(rw, "SkipLayerNormalization@com.microsoft", bias ? 5 : 4, in, keep_sum ? 4 : 1);
    ph_node_set_attr_float(n, "epsilon", (float)ph_match_float(m, "eps", 1e-5));
    if (keep_sum && !ph_value_copy_type(ph_node_output(n, 3), s))
        ph_rw_replace(rw, s, ph_node_output(n, 3));
    return ph_rw_replace_root(rw, ph_node_output(n, 0));
}

static const ph_rule rules[] = {
    {"skip_layernorm",
     "( s:shared = Add(a:float32:rank=3, r:float32:rank=3)\n"
     "| t = Add(a:float32:rank=3, bias:float32:rank=1); s:shared = Add(t, r:float32:rank=3) )\n"
     "( y = LayerNormalization(s, gamma:const:float32:rank=1, beta?:const:float32:rank=1) "
     "{axis(-1) in [-1, 2], epsilon(1e-5)=$eps}\n"
     "| mu = ReduceMean(s, ax1?) {keepdims(1)=1}; d = Sub(s, mu); p = Pow(d, two:scalar=2:float32:fits(a))\n"
     "  v = ReduceMean(p, ax2?) {keepdims(1)=1}; e = Add(v, eps:scalar=$eps:float32:fits(a)); sd = Sqrt(e)\n"
     "  ( y = Div(d, sd)\n"
     "  | n = Div(d, sd); y = Mul(n, gamma:const:float32:rank=1)\n"
     "  | n = Div(d, sd); y = Add(n, beta:const:float32:rank=1)\n"
     "  | n = Div(d, sd); g = Mul(n, gamma:const:float32:rank=1); y = Add(g, beta:const:float32:rank=1) ) )",
     check, fuse},
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
