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

static int same_const(const ph_match *m, const char *a, const char *b)
{
    const ph_value *va = ph_match_value(m, a), *vb = ph_match_value(m, b);
    if (!va || !vb)
        return !va && !vb;
    const ph_tensor *ta = ph_value_const(va), *tb = ph_value_const(vb);
    return ta && tb && ph_tensor_equal(ta, tb);
}

static int same_params(const ph_match *m, const ph_params *params)
{
    const ph_node *q = ph_match_node(m, "q"), *d = ph_match_root(m);
    int dt = ph_value_dtype(ph_match_value(m, "x"));
    return dt != PH_DT_UNDEFINED && ph_value_dtype(ph_match_value(m, "y")) == dt &&
           ph_node_attr_int(d, "output_dtype", dt) == dt &&
           same_const(m, "s", "s2") && same_const(m, "z", "z2") &&
           ph_node_attr_int(q, "axis", 1) == ph_node_attr_int(d, "axis", 1) &&
           ph_node_attr_int(q, "block_size", 0) == ph_node_attr_int(d, "block_size", 0);
}

static int bypass_pair(ph_rewriter *rw, const ph_match *m)
{
    int rc = ph_rw_replace(rw, ph_match_value(m, "y"), ph_match_value(m, "x"));
    return rc < 0 ? rc : 1;
}

static const ph_rule rules[] = {
    {"qdq_pair",
     "q = QuantizeLinear(x, s:const, z?)\n"
     "y = DequantizeLinear(q, s2:const, z2?)",
     same_params, bypass_pair},
    {0}};

PH_PASS_DEFINE(
    .name = "eliminate_qdq_pairs",
    .summary = "QuantizeLinear -> DequantizeLinear with the same constant parameters -> bypass (approximate)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_APPROX,
    .rules = rules)
