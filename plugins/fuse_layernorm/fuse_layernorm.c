/* fuse_layernorm - the decomposed layer normalization becomes one
 * LayerNormalization.
 *
 * Requires: default opset >= 17 (LayerNormalization does not exist before;
 *   the opset is never changed), and the chain
 *     mu = ReduceMean(x); d = Sub(x, mu); q = Pow(d, 2) or Mul(d, d);
 *     v = ReduceMean(q); n = Div(d, Sqrt(Add(v, eps)))
 *   optionally followed by Mul(n, gamma) and/or Add(., beta), every interior
 *   value used only inside the chain (d by the Pow/Mul and the Div).
 *   - x: known rank r and dtype float, float16 or bfloat16.  Not double:
 *     LayerNormalization computes in float32 (stash_type 1, the only float
 *     type its opset-17 schema allows for it), which would lose precision.
 *   - both ReduceMeans reduce the same trailing axes r-k .. r-1 (k >= 1,
 *     negative axes allowed), with keepdims 1: axes an attribute before
 *     opset 18, a constant input from 18; axes absent means all axes (k =
 *     r), except with noop_with_empty_axes set.  The normalized dims x[r-k:]
 *     must be known numbers (Scale is made in that shape).
 *   - the exponent and eps are one-element constants of rank <= r; the
 *     exponent is 2, eps finite.
 *   - gamma and beta are constants of x's dtype that vary only along the
 *     normalized axes and do not widen x: rank <= r, dims 1 or equal to
 *     x's; a Mul or Add whose constant does not fit stays after the fused
 *     LayerNormalization.  (A rule without the Mul/Add declines when the
 *     Mul/Add after it would fit, so the longest form wins whatever order
 *     the nodes are visited in.)
 * Changes: y = LayerNormalization(x, Scale, B) {axis = -k, epsilon = eps}
 *   with Scale = gamma (ones when absent) and B = beta (omitted when
 *   absent), as tensors of the normalized shape x[r-k:] (gamma or beta
 *   are reused as they are when they already have that shape).
 * Exact: fp (the float32 computation of LayerNormalization; for float16 and
 *   bfloat16 it is more precise than the chain it replaces).
 */
#include <math.h>
#include <passhost/passhost.h>
#include <passhost/constant.h>

#define MAX_RANK 16

typedef struct ln {
    const ph_value *x;
    int r, k, dt;
    double eps;
} ln;

/* k if ReduceMean node rm (axes input `axes`, or NULL) reduces x's last k
 * axes of r with keepdims 1, else 0. */
static int trailing_axes(const ph_node *rm, const ph_value *axes, int r, int64_t opset)
{
    int64_t ax[MAX_RANK];
    ptrdiff_t n;
    if (ph_node_attr_int(rm, "keepdims", 1) != 1)
        return 0;
    if (opset >= 18) {
        if (ph_node_attr_type(rm, "axes") != PH_ATTR_NONE)
            return 0;
        if (!axes)
            return ph_node_attr_int(rm, "noop_with_empty_axes", 0) ? 0 : r;
        n = ph_value_const_ints(axes, ax, NULL, MAX_RANK);
    } else {
        const int64_t *v;
        if (axes)
            return 0;
        if ((n = ph_node_attr_ints(rm, "axes", &v)) < 0)
            return r;
        for (ptrdiff_t i = 0; i < n && i < MAX_RANK; i++)
            ax[i] = v[i];
    }
    if (n < 1 || n > r)
        return 0;
    int seen[MAX_RANK] = {0};
    for (ptrdiff_t i = 0; i < n; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];
        if (a < r - n || a >= r || seen[a]++)
            return 0;
    }
    return (int)n;
}

/* A one-element constant of rank <= r; its value in *out. */
static int scalar_value(const ph_tensor *t, int r, double *out)
{
    return t && ph_tensor_numel(t) == 1 && (int)ph_tensor_rank(t) <= r &&
           !ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), out) && isfinite(*out);
}

static int core(const ph_match *m, ln *L)
{
    const ph_node *root = ph_match_root(m);
    int64_t opset = ph_node_opset(root);
    double two = 2;
    L->x = ph_match_value(m, "x");
    L->r = ph_value_rank(L->x);
    L->dt = ph_value_dtype(L->x);
    if (opset < 17 || L->r < 1 || L->r > MAX_RANK ||
        (L->dt != PH_DT_FLOAT && L->dt != PH_DT_FLOAT16 && L->dt != PH_DT_BFLOAT16))
        return 0;
    L->k = trailing_axes(ph_match_node(m, "mu"), ph_match_value(m, "a1"), L->r, opset);
    if (L->k < 1 || trailing_axes(ph_match_node(m, "v"), ph_match_value(m, "a2"), L->r, opset) != L->k)
        return 0;
    for (int i = L->r - L->k; i < L->r; i++)
        if (ph_value_dim(L->x, i) < 1)
            return 0;
    if (ph_match_value(m, "two") && (!scalar_value(ph_match_const(m, "two"), L->r, &two) || two != 2))
        return 0;
    return scalar_value(ph_match_const(m, "eps"), L->r, &L->eps);
}

/* 1 if constant v can be LayerNormalization's Scale or B. */
static int fits(const ln *L, const ph_value *v)
{
    const ph_tensor *t = v ? ph_value_const(v) : NULL;
    int tr = t ? (int)ph_tensor_rank(t) : 0;
    if (!t || ph_tensor_dtype(t) != L->dt || tr > L->r)
        return 0;
    for (int i = 0; i < tr; i++) {
        int a = L->r - tr + i;
        int64_t d = ph_tensor_dim(t, (size_t)i);
        if (d != 1 && (a < L->r - L->k || d != ph_value_dim(L->x, a)))
            return 0;
    }
    return 1;
}

/* 1 if v's only reader is an Add (or a Mul when mul_ok) of a constant
 * that fits: a longer rule takes it. */
static int tail_fuses(const ln *L, const ph_value *v, int mul_ok)
{
    ph_node *u = ph_value_sole_consumer(v);
    if (!u || ph_node_graph(u) != ph_value_graph(v) || ph_node_input_count(u) != 2 ||
        (ph_node_op(u) != PH_OP_Add && (!mul_ok || ph_node_op(u) != PH_OP_Mul)))
        return 0;
    return fits(L, ph_node_input(u, ph_node_input(u, 0) == v));
}

static int check_plain(const ph_match *m, const ph_params *p)
{
    ln L;
    return core(m, &L) && !tail_fuses(&L, ph_match_value(m, "y"), 1);
}

static int check_scale(const ph_match *m, const ph_params *p)
{
    ln L;
    return core(m, &L) && fits(&L, ph_match_value(m, "gamma")) && !tail_fuses(&L, ph_match_value(m, "y"), 0);
}

static int check_shift(const ph_match *m, const ph_params *p)
{
    ln L;
    return core(m, &L) && fits(&L, ph_match_value(m, "beta")) &&
           (!ph_match_value(m, "gamma") || fits(&L, ph_match_value(m, "gamma")));
}

/* Constant `name` of the match (or `fill` everywhere when absent) as a
 * tensor of the normalized shape. */
static ph_value *param(ph_rewriter *rw, const ph_match *m, const ln *L, const char *name, double fill)
{
    const ph_tensor *t = ph_match_const(m, name);
    int tr = t ? (int)ph_tensor_rank(t) : 0, rank = tr > L->k ? tr : L->k, same = t && tr == L->k;
    int64_t dims[MAX_RANK], n = 1;
    for (int i = 0; i < rank; i++) {
        dims[i] = i < rank - L->k ? 1 : ph_value_dim(L->x, L->r - rank + i);
        n *= dims[i];
        same = same && dims[i] == ph_tensor_dim(t, (size_t)i);
    }
    if (same)
        return ph_match_value(m, name);
    double *vals = ph_rw_alloc(rw, (size_t)n * sizeof *vals);
    if (!vals || (t && ph_tensor_read_f64(t, (size_t)rank, dims, vals)))
        return NULL;
    for (int64_t i = 0; !t && i < n; i++)
        vals[i] = fill;
    return ph_rw_initializer(rw, name, ph_tensor_from_f64(L->dt, (size_t)L->k, dims + rank - L->k, vals));
}

static int fuse(ph_rewriter *rw, const ph_match *m)
{
    ln L;
    if (!core(m, &L))
        return 0;
    int shift = ph_match_value(m, "beta") != NULL;
    ph_value *in[3] = {ph_match_value(m, "x"), param(rw, m, &L, "gamma", 1.0), shift ? param(rw, m, &L, "beta", 0.0) : NULL};
    ph_node *n = in[1] && (in[2] || !shift) ? ph_rw_node(rw, "LayerNormalization", shift ? 3 : 2, in, 1) : NULL;
    if (!n || ph_node_set_attr_int(n, "axis", -L.k) || ph_node_set_attr_float(n, "epsilon", (float)L.eps))
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(n, 0)) ? PH_ENOMEM : 1;
}

#define CORE(square, out)                                                                      \
    "mu = ReduceMean(x, a1?)\nd = Sub(x, mu)\n" square "\nv = ReduceMean(q, a2?)\n"           \
    "ve = Add(v, eps:const)\nsd = Sqrt(ve)\n" out " = Div(d, sd)\n"
#define POW "q = Pow(d, two:const)"
#define SQR "q = Mul(d, d)"
#define SCALE_SHIFT "g = Mul(n, gamma:const)\ny = Add(g, beta:const)"

static const ph_rule rules[] = {
    {"layernorm_pow_scale_shift", CORE(POW, "n") SCALE_SHIFT, check_shift, fuse},
    {"layernorm_mul_scale_shift", CORE(SQR, "n") SCALE_SHIFT, check_shift, fuse},
    {"layernorm_pow_scale", CORE(POW, "n") "y = Mul(n, gamma:const)", check_scale, fuse},
    {"layernorm_mul_scale", CORE(SQR, "n") "y = Mul(n, gamma:const)", check_scale, fuse},
    {"layernorm_pow_shift", CORE(POW, "n") "y = Add(n, beta:const)", check_shift, fuse},
    {"layernorm_mul_shift", CORE(SQR, "n") "y = Add(n, beta:const)", check_shift, fuse},
    {"layernorm_pow", CORE(POW, "y"), check_plain, fuse},
    {"layernorm_mul", CORE(SQR, "y"), check_plain, fuse},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_layernorm",
    .summary = "ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div (/Mul/Add) becomes LayerNormalization (opset >= 17)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
