/* batchnorm_to_mul_add - an inference BatchNormalization becomes Mul + Add
 * (seed 003: BN is a Scale; the per-channel form costs less).
 *
 * Requires: a default-domain BatchNormalization(x, scale, bias, mean, var)
 *   in inference mode (training_mode absent or 0; spatial absent or 1;
 *   below opset 7, is_test = 1) whose four parameters are constant vectors
 *   of C values, with x of a float dtype, known rank R >= 2 and dim 1
 *   known to be C; its extra outputs (training only) are unused.  A scale
 *   or shift that is not finite (var + epsilon <= 0, ...) is refused.
 * Changes: y = BN(x) becomes y = x * k + d with k = scale / sqrt(var +
 *   epsilon) and d = bias - mean * k (ph_bn_affine), computed in double and
 *   rounded once to x's dtype, as constants of shape [C, 1, ..., 1] (rank
 *   R - 1: they broadcast along axis 1 and never widen the output); the Add
 *   keeps the BN's name.  The parameters go when nothing else reads them.
 *   Main graph and every If/Loop/Scan body.
 * Exact: fp (k and d are rounded once; the runtime's BN rounds its own).
 */
#include <passhost/passhost.h>

#define MAX_RANK 16

static int to_mul_add(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    int R = ph_value_rank(x), dt = ph_value_dtype(x);
    int64_t C = ph_tensor_numel(ph_match_const(m, "s")), dims[MAX_RANK] = {C};
    if (R < 2 || R > MAX_RANK || C < 1 || ph_value_dim(x, 1) != C || (ph_node_opset(ph_match_root(m)) < 7 && !ph_match_int(m, "test", 0)))
        return 0;
    double *k = ph_rw_alloc(rw, 2 * (size_t)C * sizeof *k);
    int rc = k ? ph_bn_affine(ph_match_root(m), C, k, k + C) : PH_ENOMEM;
    if (rc)
        return rc == PH_ENOMEM ? rc : 0; /* parameters not of shape [C], or not finite */
    for (int i = 1; i < R - 1; i++)
        dims[i] = 1;
    ph_rw_bind(rw, "k", ph_rw_initializer(rw, "bn_mul", ph_tensor_from_f64(dt, (size_t)R - 1, dims, k)));
    ph_rw_bind(rw, "d", ph_rw_initializer(rw, "bn_add", ph_tensor_from_f64(dt, (size_t)R - 1, dims, k + C)));
    return 1;
}

static const ph_rule rules[] = {
    {"bn",
     "y = BatchNormalization(x:floating, s:const:rank=1, b:const:rank=1, mean:const:rank=1, var:const:rank=1)"
     " {training_mode(0)=0, spatial(1)=1, is_test(0)=$test}\n"
     "=>\n"
     "t = Mul(x, k); y = Add(t, d)",
     NULL, to_mul_add},
    {0}};

PH_PASS_DEFINE(
    .name = "batchnorm_to_mul_add",
    .summary = "inference BatchNormalization -> Mul + Add by per-channel constants",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_FP,
    .rules = rules)
