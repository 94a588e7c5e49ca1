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
 * Changes: PRelu(x, slope) becomes LeakyRelu(x) {alpha = slope}, named as
 *   the PRelu; the slope initializer goes when nothing else reads it.  Main graph and every
 *   If/Loop/Scan body.
 * Exact: yes; both compute x for x >= 0 and slope * x otherwise, in x's
 *   dtype, with the same slope value (a product of two float16 or bfloat16
 *   values is exact in float, so computing it in float and rounding once
 *   gives the same bits as computing it natively).
 */

#include <math.h>
#include <passhost/passhost.h>

/* The slope as LeakyRelu's alpha, when a float holds it exactly. */
static int to_leaky(ph_rewriter *rw, const ph_match *m)
{
    const ph_tensor *s = ph_match_const(m, "s");
    double v;
    if ((ph_tensor_dtype(s) == PH_DT_BFLOAT16 && ph_rw_opset(rw) < 16) ||
        ph_tensor_read_f64(s, ph_tensor_rank(s), ph_tensor_dims(s), &v) || isnan(v) || (double)(float)v != v)
        return 0; /* a NaN slope: payloads may differ */
    ph_rw_bind_float(rw, "alpha", v);
    return 1;
}

static const ph_rule rules[] = {
    {"prelu_scalar", "y = PRelu(x, s:scalar:float32|double|float16|bfloat16:fits(x))\n=>\ny = LeakyRelu(x) {alpha=$alpha}",
     NULL, to_leaky},
    {0}};

PH_PASS_DEFINE(
    .name = "prelu_to_leakyrelu",
    .summary = "PRelu with one slope value -> LeakyRelu",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
