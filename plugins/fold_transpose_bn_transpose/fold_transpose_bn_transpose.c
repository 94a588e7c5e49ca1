/* fold_transpose_bn_transpose - Transpose -> BatchNormalization -> inverse
 * Transpose becomes Mul + Add by per-channel constants in the original
 * layout (channels-last norms exported by torch and ORT).
 *
 * Requires: the BN in inference mode with its four parameters constant
 *   vectors of C values; the second perm q the inverse of the first, p
 *   (q[i] = j where p[j] = i; a missing perm reverses the dims and needs the
 *   rank known).  The BN's channel axis 1 is axis p[1] of x; when that dim
 *   of x is known it must be C.
 * Changes: y = x * S + T with S = gamma / sqrt(var + eps) and T = beta -
 *   mean * S (ph_bn_affine, every value finite), both of shape [1, .., C,
 *   .., 1] with C at axis p[1], in x's dtype: y keeps x's shape and dtype.
 * Exact: fp (BN's arithmetic regrouped; S and T rounded once).
 */
#include <passhost/passhost.h>

#define MAX_RANK 16

static int fold(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    int64_t p[MAX_RANK], q[MAX_RANK], dims[MAX_RANK];
    int r = ph_node_transpose_perm(ph_match_node(m, "t"), p, MAX_RANK), dt = ph_value_dtype(x);
    int64_t C = ph_tensor_dim(ph_match_const(m, "s"), 0), ax = r >= 2 ? p[1] : 0;
    if (r < 2 || (ph_value_rank(x) >= 0 && ph_value_rank(x) != r) || C < 1 ||
        ph_node_transpose_perm(ph_match_root(m), q, MAX_RANK) != r ||
        (ph_value_dim(x, (int)ax) >= 0 && ph_value_dim(x, (int)ax) != C))
        return 0;
    for (int i = 0; i < r; i++)
        if (p[q[i]] != i)
            return 0; /* not the inverse */
    double *S = ph_rw_alloc(rw, 2 * (size_t)C * sizeof *S), *T = S ? S + C : NULL;
    if (!S || ph_bn_affine(ph_match_node(m, "b"), C, S, T))
        return ph_rw_status(rw); /* out of memory, or a scale that is not finite */
    for (int i = 0; i < r; i++)
        dims[i] = i == ax ? C : 1;
    ph_rw_bind(rw, "s2", ph_rw_initializer(rw, "bn_folded_scale", ph_tensor_from_f64(dt, (size_t)r, dims, S)));
    ph_rw_bind(rw, "t2", ph_rw_initializer(rw, "bn_folded_bias", ph_tensor_from_f64(dt, (size_t)r, dims, T)));
    return 1;
}

static const ph_rule rules[] = {
    {"transpose_bn_transpose",
     "opset >= 7\nt = Transpose(x:floating)\n"
     "b = BatchNormalization(t, s:const:rank=1, sc:const, mean:const, var:const) {training_mode?=0, spatial?=1}\n"
     "y = Transpose(b)\n=>\nmul = Mul(x, s2)\ny = Add(mul, t2)",
     NULL, fold},
    {0}};

PH_PASS_DEFINE(
    .name = "fold_transpose_bn_transpose",
    .summary = "Transpose -> BatchNormalization -> inverse Transpose becomes Mul + Add by per-channel constants",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
