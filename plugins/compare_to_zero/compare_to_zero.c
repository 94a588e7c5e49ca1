/* compare_to_zero - a comparison of two float tensors becomes a Sub and a
 * comparison with 0 (seed 004 SplitCompareSeqPass: a backend that only
 * compares with zero).
 *
 * Requires: a default-domain Less, Greater, LessOrEqual or GreaterOrEqual
 *   of two inputs of a float dtype, opset >= 7 (Sub and the comparisons
 *   broadcast alike), the second input not a constant of zeros (that is the
 *   form this pass makes).
 * Changes: y = Op(a, b) becomes y = Op(a - b, 0), 0 a scalar of a's dtype,
 *   so the output's shape and dtype stay.  Main graph and every
 *   If/Loop/Scan body.
 * Exact: approx.  With IEEE arithmetic and subnormals a - b has the sign of
 *   the comparison for finite a and b (it is 0 only when a == b, and an
 *   overflow keeps its sign), but Inf - Inf is NaN (so Inf <= Inf turns
 *   false), and a runtime that flushes subnormals to zero makes nearly
 *   equal values compare equal.
 */
#include <passhost/passhost.h>
#include <passhost/constant.h>

static int nonzero_rhs(const ph_match *m, const ph_params *params)
{
    const ph_tensor *b = ph_match_const(m, "b");
    return !(b && ph_tensor_all_equal(b, 0.0)) &&
           ph_node_opset(ph_match_root(m)) >= 7;
}

static int split(ph_rewriter *rw, const ph_match *m)
{
    ph_value *y = ph_match_value(m, "y"), *in[2] = {ph_match_value(m, "a"), ph_match_value(m, "b")};
    double zero = 0.0;
    int64_t none[1] = {0};
    ph_value *cmp[2] = {ph_rw_op(rw, "Sub", 2, in),
                        ph_rw_initializer(rw, "zero", ph_tensor_from_f64(ph_value_dtype(in[0]), 0, none, &zero))};
    ph_node *n = cmp[0] && cmp[1] ? ph_rw_clone(rw, ph_match_root(m), NULL, 2, cmp) : NULL;
    if (!n || ph_value_copy_type(ph_node_output(n, 0), y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, ph_node_output(n, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"compare", "y = Less|Greater|LessOrEqual|GreaterOrEqual(a:floating, b:floating)", nonzero_rhs, split},
    {0}};

PH_PASS_DEFINE(
    .name = "compare_to_zero",
    .summary = "Less/Greater/LessOrEqual/GreaterOrEqual of two float tensors -> Sub, then compare with 0",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_APPROX,
    .rules = rules)
