/* fold_transpose_bn_transpose - Transpose -> BatchNormalization -> inverse
 * Transpose becomes Mul + Add by per-channel constants in the original
 * layout (seed 000 KnowledgeBNFolding; channels-last norms exported by
 * torch and ORT).
 *
 * Requires: t = Transpose(x, p) with x of a known float dtype, feeding only
 *   an inference BatchNormalization (training_mode absent or 0, spatial
 *   absent or 1, default opset >= 7, extra outputs unused) whose four
 *   parameters are constant vectors of C values, feeding only a Transpose
 *   with the inverse permutation q (q[i] = j where p[j] = i).  A missing
 *   perm reverses the dims and needs x's rank known.  The BN's channel axis
 *   1 is axis p[1] of x; when that dim of x is known it must be C.
 * Changes: y = x * S + T with S = gamma / sqrt(var + eps) and T = beta -
 *   mean * S (ph_bn_affine, every value finite), both of shape [1, .., C,
 *   .., 1] with C at axis p[1] (rank of x), in x's dtype: so y keeps x's
 *   shape and dtype.  The Transposes and the BN go when nothing else reads
 *   them.
 * Exact: fp (BN's arithmetic regrouped; S and T rounded once).
 */
#include <passhost/passhost.h>
#include <passhost/constant.h>

#define MAX_RANK 16

/* The perm of Transpose t of a rank-r input into p; 0 if not a valid one. */
static int read_perm(const ph_node *t, int r, int64_t *p)
{
    const int64_t *v;
    ptrdiff_t n = ph_node_attr_ints(t, "perm", &v);
    if (n < 0) {
        for (int i = 0; i < r; i++)
            p[i] = r - 1 - i;
        return r >= 1;
    }
    if (n != r)
        return 0;
    int seen[MAX_RANK] = {0};
    for (int i = 0; i < r; i++) {
        if (v[i] < 0 || v[i] >= r || seen[v[i]]++)
            return 0;
        p[i] = v[i];
    }
    return 1;
}

static int fold(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    ph_node *t1 = ph_match_node(m, "t"), *t2 = ph_match_root(m), *bn = ph_match_node(m, "b");
    const int64_t *pv;
    ptrdiff_t np = ph_node_attr_ints(t1, "perm", &pv);
    int r = np >= 0 ? (int)np : ph_value_rank(x), dt = ph_value_dtype(x);
    int64_t p[MAX_RANK], q[MAX_RANK], dims[MAX_RANK];
    const ph_tensor *s = ph_match_const(m, "s");
    if (r < 2 || r > MAX_RANK || (ph_value_rank(x) >= 0 && ph_value_rank(x) != r) || !ph_dtype_is_float(dt) ||
        ph_rw_opset(rw) < 7 || !read_perm(t1, r, p) || !read_perm(t2, r, q) ||
        ph_tensor_rank(s) != 1)
        return 0;
    for (int i = 0; i < r; i++)
        if (p[q[i]] != i)
            return 0; /* not the inverse */
    int64_t C = ph_tensor_dim(s, 0), ax = p[1];
    if (C < 1 || (ph_value_rank(x) == r && ph_value_dim(x, (int)ax) >= 0 && ph_value_dim(x, (int)ax) != C))
        return 0;
    double *S = ph_rw_alloc(rw, 2 * (size_t)C * sizeof *S), *T = S ? S + C : NULL;
    if (!S)
        return PH_ENOMEM;
    if (ph_bn_affine(bn, C, S, T))
        return 0;
    for (int i = 0; i < r; i++)
        dims[i] = i == ax ? C : 1;
    ph_value *mul_in[2] = {x, ph_rw_initializer(rw, "bn_folded_scale", ph_tensor_from_f64(dt, (size_t)r, dims, S))};
    ph_value *mul = mul_in[1] ? ph_rw_op(rw, "Mul", 2, mul_in) : NULL;
    ph_value *add_in[2] = {mul, ph_rw_initializer(rw, "bn_folded_bias", ph_tensor_from_f64(dt, (size_t)r, dims, T))};
    ph_value *add = mul && add_in[1] ? ph_rw_op(rw, "Add", 2, add_in) : NULL;
    if (!add)
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), add) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"transpose_bn_transpose",
     "t = Transpose(x)\n"
     "b = BatchNormalization(t, s:const, sc:const, mean:const, var:const) {training_mode?=0, spatial?=1}\n"
     "y = Transpose(b)",
     NULL, fold},
    {0}};

PH_PASS_DEFINE(
    .name = "fold_transpose_bn_transpose",
    .summary = "Transpose -> BatchNormalization -> inverse Transpose becomes Mul + Add by per-channel constants",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
