/* fuse_layernorm - the decomposed layer normalization becomes one
 * LayerNormalization.
 *
 * Requires: default opset >= 17 (the opset is never changed) and the chain
 *   below, optionally followed by Mul gamma and/or Add beta (the longest
 *   form that fits wins); interior values are read only inside it.
 *   - x: known rank r, dtype float32, float16 or bfloat16 (not double:
 *     LayerNormalization computes in float32).
 *   - both ReduceMeans reduce the same trailing axes r-k .. r-1 (k >= 1),
 *     keepdims 1, axes in their opset's form (attribute before 18, constant
 *     input from 18; none: all); the dims x[r-k:] are known.
 *   - the exponent is 2, eps finite (one element each, not widening x);
 *     gamma and beta of x's dtype vary only along the normalized axes and
 *     do not widen x: else the Mul or Add stays after.
 * Changes: y = LayerNormalization(x, Scale, B) {axis = -k, epsilon = eps},
 *   named as the root, Scale = gamma (ones when absent), B = beta (omitted
 *   when absent), in the shape x[r-k:] (reused when they have it).
 * Exact: fp (the float32 computation of LayerNormalization; for float16 and
 *   bfloat16 it is more precise than the chain it replaces).
 */
#include <passhost/passhost.h>

#define MAX_RANK 16

/* k if ReduceMean rm reduces the last k of r axes, in its opset's form. */
static int trailing(const ph_node *rm, int r)
{
    int64_t ax[MAX_RANK];
    int attr = ph_node_attr_type(rm, "axes") != PH_ATTR_NONE;
    ptrdiff_t n = ph_node_axes(rm, r, ax, MAX_RANK);
    if ((ph_node_opset(rm) >= 18 ? attr : ph_node_input(rm, 1) != NULL) || n < 0)
        return 0;
    for (ptrdiff_t i = 0; i < n; i++)
        if (ax[i] < r - n)
            return 0;
    return n ? (int)n : ph_node_attr_int(rm, "noop_with_empty_axes", 0) ? 0 : r;
}

/* gamma or beta (absent: fine) varies only along the last k of r axes. */
static int along(const ph_tensor *t, int r, int k)
{
    for (int i = 0, tr = t ? (int)ph_tensor_rank(t) : 0; i < tr; i++)
        if (ph_tensor_dim(t, (size_t)i) != 1 && r - tr + i < r - k)
            return 0;
    return 1;
}

/* The normalized axes' count, in the match's state. */
static int check(const ph_match *m, const ph_params *p)
{
    const ph_value *x = ph_match_value(m, "x");
    int r = ph_value_rank(x), *k = ph_match_state(m, sizeof *k);
    if (!k)
        return PH_ENOMEM;
    if (r < 1 || r > MAX_RANK || (*k = trailing(ph_match_node(m, "mu"), r)) < 1 ||
        trailing(ph_match_node(m, "v"), r) != *k)
        return 0;
    for (int i = r - *k; i < r; i++)
        if (ph_value_dim(x, i) < 1)
            return 0;
    return along(ph_match_const(m, "gamma"), r, *k) && along(ph_match_const(m, "beta"), r, *k);
}

static int fuse(ph_rewriter *rw, const ph_match *m)
{
    const ph_value *x = ph_match_value(m, "x");
    int r = ph_value_rank(x), k = *(const int *)ph_match_state(m, sizeof k), dt = ph_value_dtype(x);
    int64_t dims[MAX_RANK];
    for (int i = 0; i < k; i++)
        dims[i] = ph_value_dim(x, r - k + i);
    ph_rw_bind(rw, "scale", ph_rw_constant(rw, "gamma", ph_match_value(m, "gamma"), dt, (size_t)k, dims, 1.0));
    if (ph_match_value(m, "beta"))
        ph_rw_bind(rw, "bias", ph_rw_constant(rw, "beta", ph_match_value(m, "beta"), dt, (size_t)k, dims, 0.0));
    ph_rw_bind_int(rw, "axis", -k);
    return 1;
}

static const ph_rule rules[] = {
    {"layernorm",
     "opset >= 17\n"
     "mu = ReduceMean(x:float32|float16|bfloat16:dtype=$t, a1?) {keepdims(1)=1}\n"
     "d = Sub(x, mu)\n"
     "( q = Pow(d, two:scalar=2:fits(x)) | q = Mul(d, d) )\n"
     "v = ReduceMean(q, a2?) {keepdims(1)=1}\n"
     "ve = Add(v, eps:scalar=$eps:fits(x)); sd = Sqrt(ve)\n"
     "( y = Div(d, sd)\n"
     "| n = Div(d, sd); y = Mul(n, gamma:const:dtype=$t:fits(x))\n"
     "| n = Div(d, sd); y = Add(n, beta:const:dtype=$t:fits(x))\n"
     "| n = Div(d, sd); g = Mul(n, gamma:const:dtype=$t:fits(x)); y = Add(g, beta:const:dtype=$t:fits(x)) )\n"
     "=>\n"
     "y = LayerNormalization(x, scale, bias?) {axis=$axis, epsilon=$eps}",
     check, fuse},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_layernorm",
    .summary = "ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div (/Mul/Add) becomes LayerNormalization (opset >= 17)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
