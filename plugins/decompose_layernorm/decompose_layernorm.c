/* decompose_layernorm - LayerNormalization without its affine part, or in
 * primitive operators (seed 004 SplitLayernormPass: a backend whose
 * LayerNormalization has no scale and bias).
 *
 * Requires: a default-domain LayerNormalization (opset >= 17) whose Mean
 *   and InvStdDev outputs are unused, X of a float dtype and known rank,
 *   Scale and B (when given) of known shapes that broadcast to X[axis:]
 *   (so Mul and Add give X's shape).  Default form: the dims X[axis:] are
 *   known numbers (the shape of the new all-ones Scale), and the node is not
 *   already free of an affine part (Scale all ones and B absent or all
 *   zeros: nothing to split).  primitive = true: X is float or double
 *   (float16 and bfloat16 would lose the float statistics).
 * Changes: default: y = LN(x, s, b) becomes LN(x, ones) * s + b, the LN
 *   keeping axis, epsilon and stash_type.  primitive = true:
 *     mean = ReduceMean(x), d = x - mean, var = ReduceMean(d * d),
 *     y = d / Sqrt(var + epsilon) * s + b
 *   over axes [axis, rank) with keepdims = 1 (axes an attribute before
 *   opset 18, an input from 18).  Either way a Scale of constant ones needs
 *   no Mul and a B of constant zeros no Add.  Main graph and every
 *   If/Loop/Scan body.
 * Exact: fp (the LN output is rounded before the Mul and Add; the
 *   primitive form rounds each step).
 */
#include <passhost/passhost.h>
#include <passhost/constant.h>

#define MAXR 16

static const ph_param_def params[] = {
    {"primitive", PH_PARAM_BOOL, "false",
     "decompose into ReduceMean/Sub/Mul/Add/Sqrt/Div instead of LayerNormalization without Scale and B + Mul + Add"},
    {0}};

/* 1 if p (may be NULL) has a known shape that broadcasts to x[axis:]. */
static int fits(const ph_value *p, const ph_value *x, int axis)
{
    int r = p ? ph_value_rank(p) : 0, rx = ph_value_rank(x);
    if (r < 0 || r > rx - axis)
        return 0;
    for (int k = 1; k <= r; k++)
        if (ph_value_dim(p, r - k) != 1 && !ph_value_dim_equal(p, r - k, x, rx - k))
            return 0;
    return 1;
}

static ph_value *op2(ph_rewriter *rw, const char *op, ph_value *a, ph_value *b)
{
    ph_value *in[2] = {a, b};
    return a && b ? ph_rw_op(rw, op, 2, in) : NULL;
}

static int decompose(ph_rewriter *rw, const ph_match *m)
{
    ph_node *ln = ph_match_root(m);
    ph_value *x = ph_match_value(m, "x"), *s = ph_match_value(m, "s"), *b = ph_match_value(m, "b");
    ph_value *y = ph_match_value(m, "y"), *r;
    int64_t opset = ph_rw_opset(rw);
    int R = ph_value_rank(x), dt = ph_value_dtype(x);
    int64_t axis = ph_node_attr_int(ln, "axis", -1), dims[MAXR];
    axis += axis < 0 ? R : 0;
    if (opset < 17 || R < 1 || R > MAXR || axis < 0 || axis >= R || !fits(s, x, (int)axis) ||
        !fits(b, x, (int)axis))
        return 0;
    const ph_tensor *sc = ph_value_const(s), *bc = b ? ph_value_const(b) : NULL;
    int need_mul = !(sc && ph_tensor_all_equal(sc, 1.0)), need_add = b && !(bc && ph_tensor_all_equal(bc, 0.0));
    int nr = R - (int)axis;
    if (!ph_params_bool(ph_rw_params(rw), "primitive")) {
        int64_t n = 1;
        if (!need_mul && !need_add)
            return 0; /* nothing to split */
        for (int i = 0; i < nr; i++)
            if ((dims[i] = ph_value_dim(x, (int)axis + i)) <= 0)
                return 0; /* the normalized shape is not known */
            else
                n *= dims[i];
        double *ones = ph_rw_alloc(rw, (size_t)n * sizeof *ones);
        if (!ones)
            return PH_ENOMEM;
        for (int64_t i = 0; i < n; i++)
            ones[i] = 1.0;
        ph_value *in[2] = {x, ph_rw_initializer(rw, "ln_ones", ph_tensor_from_f64(dt, (size_t)nr, dims, ones))};
        ph_node *plain = in[1] ? ph_rw_clone(rw, ln, NULL, 2, in) : NULL;
        r = plain ? ph_node_output(plain, 0) : NULL;
        if (r && ph_value_copy_type(r, y))
            return PH_ENOMEM;
    } else {
        if (dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE)
            return 0;
        r = ph_rw_layernorm_normalize(rw, x, R, (int)axis, ph_node_attr_float(ln, "epsilon", 1e-5f));
    }
    if (need_mul)
        r = op2(rw, "Mul", r, s);
    if (need_add)
        r = op2(rw, "Add", r, b);
    if (!r || ph_value_copy_type(r, y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, r) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {{"layernorm", "y = LayerNormalization(x:floating, s, b?)", NULL, decompose}, {0}};

PH_PASS_DEFINE(
    .name = "decompose_layernorm",
    .summary = "LayerNormalization -> LayerNormalization without affine + Mul + Add, or primitive operators",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_FP,
    .params = params,
    .rules = rules)
