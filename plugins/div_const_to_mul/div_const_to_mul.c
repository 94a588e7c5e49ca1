/* div_const_to_mul - division by a float constant becomes multiplication by
 * its reciprocal.
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
 *   and axis of opsets < 7, which Mul shares) and its name are kept.
 * Exact: fp; x * (1/c) differs from x / c by at most about one ulp, and is
 *   bit-exact when 1/c is exactly representable (c a power of two).
 */

#include <math.h>
#include <passhost/passhost.h>

static int to_mul(ph_rewriter *rw, const ph_match *m)
{
    const ph_tensor *c = ph_match_const(m, "c");
    int dt = ph_tensor_dtype(c), xt = ph_value_dtype(ph_match_value(m, "x"));
    double min_normal = dt == PH_DT_DOUBLE ? 0x1p-1022 : dt == PH_DT_FLOAT16 ? 0x1p-14 : 0x1p-126;
    size_t rank = ph_tensor_rank(c), n = (size_t)ph_tensor_numel(c);
    double *r = ph_rw_alloc(rw, 2 * (n ? n : 1) * sizeof *r), *back = r + n;
    if (!r || n == 0 || (xt != PH_DT_UNDEFINED && xt != dt) || ph_tensor_read_f64(c, rank, ph_tensor_dims(c), r))
        return ph_rw_status(rw);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(r[i]) || r[i] == 0)
            return 0;
        r[i] = 1.0 / r[i];
    }
    ph_tensor *t = ph_tensor_from_f64(dt, rank, ph_tensor_dims(c), r);
    int ok = t && !ph_tensor_read_f64(t, rank, ph_tensor_dims(c), back);
    for (size_t i = 0; ok && i < n; i++) /* finite and normal: a subnormal loses precision */
        ok = isfinite(back[i]) && fabs(back[i]) >= min_normal;
    if (!ok) {
        ph_tensor_free(t);
        return t ? 0 : PH_ENOMEM;
    }
    ph_rw_bind(rw, "r", ph_rw_initializer(rw, "reciprocal", t));
    return 1;
}

static const ph_rule rules[] = {{"div_const", "y = Div(x, c:const:floating)\n=>\ny = Mul(x, r) {...y}", NULL, to_mul}, {0}};

PH_PASS_DEFINE(
    .name = "div_const_to_mul",
    .summary = "Div by a float constant -> Mul by its reciprocal",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
