/* prelu_to_leakyrelu - a PRelu whose slope is one value becomes a LeakyRelu
 * (seed 003: pReLU -> Leaky ReLU).
 *
 * Requires: a default-domain PRelu(x, slope) whose slope is a constant of one
 *   element that cannot widen the output: of rank 0, or of a rank at most
 *   x's known rank (its dims are all 1, so it broadcasts to x).  The dtype
 *   (slope's, which PRelu shares with x) is a float dtype LeakyRelu takes
 *   (float, double, float16; bfloat16 from opset 16), and LeakyRelu's alpha,
 *   a float attribute, holds the slope exactly: always for float, float16
 *   and bfloat16, for double only when the slope equals its float rounding;
 *   a NaN slope is left alone.
 *   Integer PRelu (opset >= 9) has no LeakyRelu and is left alone.
 * Changes: PRelu(x, slope) becomes LeakyRelu(x) {alpha = slope}; the slope
 *   initializer goes when nothing else reads it.  Main graph and every
 *   If/Loop/Scan body.
 * Exact: yes; both compute x for x >= 0 and slope * x otherwise, in x's
 *   dtype, with the same slope value (a product of two float16 or bfloat16
 *   values is exact in float, so computing it in float and rounding once
 *   gives the same bits as computing it natively).
 */
#include <math.h>
#include <passhost/passhost.h>
#include <passhost/constant.h>

/* The slope as LeakyRelu's alpha, or 0 when it cannot be one exactly. */
static int alpha_of(const ph_match *m, float *alpha)
{
    const ph_tensor *s = ph_match_const(m, "s");
    const ph_value *x = ph_match_value(m, "x");
    int dt = ph_tensor_dtype(s), srank = (int)ph_tensor_rank(s);
    int64_t opset = ph_node_opset(ph_match_root(m));
    double v;
    if (srank > 0 && ph_value_rank(x) < srank)
        return 0; /* unknown rank, or a slope that would widen the output */
    if (!(dt == PH_DT_FLOAT || dt == PH_DT_DOUBLE || dt == PH_DT_FLOAT16 ||
          (dt == PH_DT_BFLOAT16 && opset >= 16)))
        return 0;
    if (ph_tensor_read_f64(s, (size_t)srank, ph_tensor_dims(s), &v))
        return 0;
    *alpha = (float)v;
    return !isnan(v) && (double)*alpha == v; /* a NaN slope: payloads may differ */
}

static int to_leaky(ph_rewriter *rw, const ph_match *m)
{
    float alpha;
    if (!alpha_of(m, &alpha))
        return 0;
    ph_value *x = ph_match_value(m, "x");
    ph_node *leaky = ph_rw_node(rw, "LeakyRelu", 1, &x, 1);
    if (!leaky || ph_node_set_attr_float(leaky, "alpha", alpha) < 0)
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(leaky, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {{"prelu_scalar", "y = PRelu(x, s:scalar)", NULL, to_leaky}, {0}};

PH_PASS_DEFINE(
    .name = "prelu_to_leakyrelu",
    .summary = "PRelu with one slope value -> LeakyRelu",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
