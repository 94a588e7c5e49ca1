/* eliminate_qdq_pairs - remove a QuantizeLinear -> DequantizeLinear pair.
 *
 * Seed 003: a Quant and a Dequant on the same variable with the same
 * parameters cancel, up to the quantization error they would have added.
 *
 * Requires: a default-domain QuantizeLinear whose output is read only by a
 *   DequantizeLinear (and is no graph output), where
 *   - both scales are constants, equal (same dtype, shape and bytes);
 *   - the zero points are both omitted, or both constants and equal;
 *   - the axis (default 1) and block_size (default 0) attributes agree;
 *   - the Dequantize output's known dtype (and its output_dtype attribute,
 *     when present) equals the Quantize input's known dtype (an int32 input
 *     dequantized to float is kept).
 *   When the output is a graph output it must be redirectable (the rewrite
 *   rolls back otherwise, e.g. when the Quantize input is a graph input).
 * Changes:  users of the Dequantize output read the Quantize input; both
 *   nodes are removed, and their scale / zero-point initializers pruned when
 *   nothing else reads them.  Main graph and every If/Loop/Scan body.
 * Approx:   the rounding and saturation of the quantization disappear (the
 *   result differs by up to half a scale step, more where values saturated).
 *   Off by default.
 */
#include <passhost/passhost.h>

/* x's dtype comes out ($dt, which output_dtype equals when present); the
 * scales are equal, the zero points both omitted or equal. */
static int same_params(const ph_match *m, const ph_params *params)
{
    const ph_tensor *z = ph_match_const(m, "z"), *z2 = ph_match_const(m, "z2");
    return ph_value_dtype(ph_match_value(m, "y")) == ph_match_int(m, "dt", 0) &&
           ph_tensor_equal(ph_match_const(m, "s"), ph_match_const(m, "s2")) &&
           (z && z2 ? ph_tensor_equal(z, z2) : !z && !z2);
}

static const ph_rule rules[] = {
    {"qdq_pair",
     "q = QuantizeLinear(x:dtype=$dt, s:const, z?:const) {axis(1)=$axis, block_size(0)=$block}\n"
     "y = DequantizeLinear(q, s2:const, z2?:const) {axis(1)=$axis, block_size(0)=$block, output_dtype?=$dt}\n"
     "=>\n"
     "y = x",
     same_params, NULL},
    {0}};

/* Examples for the rule checker: a Q/DQ pair of one scale and zero point. */
static const ph_rule_example examples[] = {
    {"qdq_pair", "x: float[<2|1>,<3|4>]\ns: float[] = [<0.1|0.02>]\nz: <uint8[] = [128]|int8[] = [0]>\n"
                 "q = QuantizeLinear(x, s, z)\ny = DequantizeLinear(q, s, z)\no = <Abs|Relu>(y)\nreturn o", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "eliminate_qdq_pairs",
    .summary = "QuantizeLinear -> DequantizeLinear with the same constant parameters -> bypass (approximate)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_APPROX,
    .rules = rules,
    .rule_examples = examples)
