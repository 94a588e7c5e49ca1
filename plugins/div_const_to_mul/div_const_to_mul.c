/* div_const_to_mul - division by a float constant becomes multiplication by
 * its reciprocal (seed 004 ConvertDivideScalar2MultiplyPass).
 *
 * Requires: a default-domain Div(x, c) whose divisor c is a constant of a
 *   float dtype (float, double, float16, bfloat16) and x, when its dtype is
 *   known, of the same dtype; every element of c and of its reciprocal,
 *   rounded to c's dtype, is finite, and the reciprocal is a normal number
 *   (1/0, 1/inf, and a reciprocal that overflows the dtype or is
 *   subnormal, which would lose precision x / c keeps, are refused).
 *   Integer division is never touched (it truncates).
 * Changes: Div(x, c) becomes Mul(x, r) with r = 1/c computed in double and
 *   rounded once to c's dtype, r of c's shape, so the broadcast and the
 *   output shape are the same; the Div's attributes (the legacy broadcast
 *   and axis of opsets < 7, which Mul shares) are kept.  c stays while
 *   something else reads it.  Main graph and every If/Loop/Scan body.
 * Exact: fp; x * (1/c) differs from x / c by at most about one ulp, and is
 *   bit-exact when 1/c is exactly representable (c a power of two).
 */
#include <math.h>
#include <passhost/passhost.h>
#include <passhost/constant.h>

/* The smallest normal value of a float dtype: a subnormal reciprocal would
 * lose the precision x / c keeps when x is large. */
static double min_normal(int dt)
{
    return dt == PH_DT_DOUBLE ? 0x1p-1022 : dt == PH_DT_FLOAT16 ? 0x1p-14 : 0x1p-126;
}

static int to_mul(ph_rewriter *rw, const ph_match *m)
{
    const ph_tensor *c = ph_match_const(m, "c");
    ph_value *x = ph_match_value(m, "x");
    int dt = ph_tensor_dtype(c);
    size_t rank = ph_tensor_rank(c), n = (size_t)ph_tensor_numel(c);
    if (n == 0 || (ph_value_dtype(x) != PH_DT_UNDEFINED && ph_value_dtype(x) != dt))
        return 0;
    double *r = ph_rw_alloc(rw, 2 * n * sizeof *r), *back = r + n;
    if (!r)
        return PH_ENOMEM;
    if (ph_tensor_read_f64(c, rank, ph_tensor_dims(c), r))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(r[i]) || r[i] == 0)
            return 0;
        r[i] = 1.0 / r[i];
    }
    ph_tensor *t = ph_tensor_from_f64(dt, rank, ph_tensor_dims(c), r);
    if (!t)
        return PH_ENOMEM;
    if (ph_tensor_read_f64(t, rank, ph_tensor_dims(c), back)) {
        ph_tensor_free(t);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(back[i]) || fabs(back[i]) < min_normal(dt)) {
            ph_tensor_free(t); /* the reciprocal does not fit the dtype */
            return 0;
        }
    ph_value *in[2] = {x, ph_rw_initializer(rw, "reciprocal", t)};
    ph_node *mul = in[1] ? ph_rw_node(rw, "Mul", 2, in, 1) : NULL;
    if (!mul || ph_node_copy_attrs(mul, ph_match_root(m)) < 0)
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(mul, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {{"div_const", "y = Div(x, c:const:floating)", NULL, to_mul}, {0}};

PH_PASS_DEFINE(
    .name = "div_const_to_mul",
    .summary = "Div by a float constant -> Mul by its reciprocal",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
