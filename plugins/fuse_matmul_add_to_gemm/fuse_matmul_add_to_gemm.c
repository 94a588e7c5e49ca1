/* fuse_matmul_add_to_gemm - a 2-D MatMul with a constant right operand,
 * followed by the Add of a constant bias, becomes one Gemm.
 *
 * Requires: MatMul(A, B) with A of known rank 2 ([M, K], M may be unknown)
 *   and B a constant of rank 2 ([K, N]) of a float dtype Gemm takes (float,
 *   double, float16; bfloat16 from opset 13), whose output feeds only an Add
 *   (either input order) of a constant C of the same dtype that Gemm's C
 *   takes by unidirectional broadcast to [M, N] without changing the sum's
 *   shape: a scalar, [1], [N], [1, 1], [1, N], [M, 1] or [M, N] (a dim M
 *   other than 1 only when A's first dim is known and equal).  A C that
 *   would widen the output ([2, N] against an unknown or other M, rank 3,
 *   ...) is left alone.  Default opset >= 7 (Gemm's C broadcasts from 7).
 * Changes: Add(MatMul(A, B), C) becomes Gemm(A, B, C) (alpha = beta = 1),
 *   named after the MatMul; C is read as it is, not copied.
 * Exact: fp (the same products and sum; a runtime may fuse the bias add).
 */
#include <passhost/passhost.h>
#include <passhost/constant.h>

static int bias_fits(const ph_match *m, const ph_params *params)
{
    const ph_value *a = ph_match_value(m, "a");
    const ph_tensor *b = ph_match_const(m, "b"), *c = ph_match_const(m, "c");
    int dt = ph_tensor_dtype(b);
    int64_t opset = ph_node_opset(ph_match_root(m));
    if (ph_value_rank(a) != 2 || ph_tensor_rank(b) != 2 || !ph_dtype_is_float(dt) ||
        ph_tensor_dtype(c) != dt || opset < 7 || (dt == PH_DT_BFLOAT16 && opset < 13))
        return 0;
    int64_t M = ph_value_dim(a, 0), N = ph_tensor_dim(b, 1);
    size_t r = ph_tensor_rank(c);
    if (r > 2 || (r >= 1 && ph_tensor_dim(c, r - 1) != 1 && ph_tensor_dim(c, r - 1) != N))
        return 0;
    return r < 2 || ph_tensor_dim(c, 0) == 1 || (M >= 0 && ph_tensor_dim(c, 0) == M);
}

static int fuse(ph_rewriter *rw, const ph_match *m)
{
    ph_value *in[3] = {ph_match_value(m, "a"), ph_match_value(m, "b"), ph_match_value(m, "c")};
    ph_node *gemm = ph_rw_clone(rw, ph_match_node(m, "mm"), "Gemm", 3, in);
    if (!gemm)
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(gemm, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"matmul_add", "mm = MatMul(a:rank=2, b:const:floating)\ny = Add(mm, c:const)", bias_fits, fuse},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_matmul_add_to_gemm",
    .summary = "2-D MatMul with a constant B + Add of a constant bias becomes one Gemm",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
