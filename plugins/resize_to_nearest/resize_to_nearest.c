/* resize_to_nearest - linear/cubic/area Resize -> nearest (approximate).
 *
 * msit KnowledgeResizeModeToNearest (seed 000): some deployments lose
 * accuracy with a backend's bilinear (or cubic, area) resize; nearest
 * sampling is the configured replacement.  This changes the results by
 * design: off by default, and refused with every approximate pass.
 *
 * Requires: a default-domain Resize (opset >= 10) with mode "linear",
 *   "cubic" or "area".
 * Changes: mode becomes "nearest" with nearest_mode "round_prefer_floor"
 *   (from opset 11, where the attribute exists; opset 10 rounds its own
 *   way); coordinate_transformation_mode, the scales/sizes, roi and
 *   extrapolation_value are kept; cubic_coeff_a, exclude_outside and
 *   antialias (meaningless for nearest) are dropped; the name stays.  The
 *   output's shape and dtype do not change.  Main graph and every If/Loop/Scan body.
 * Exact: approx (every output element is an input element instead of an
 *   interpolation of several).
 */

#include <string.h>

#include <passhost/passhost.h>

static int to_nearest(ph_rewriter *rw, const ph_match *m)
{
    ph_value *const *rest, *in[4] = {ph_match_value(m, "x")};
    size_t k = ph_match_values(m, "rest", &rest);
    if (k > 3)
        return 0;
    memcpy(in + 1, rest, k * sizeof *in);
    ph_node *c = ph_rw_clone(rw, ph_match_root(m), NULL, k + 1, in);
    ph_node_set_attr_string(c, "mode", "nearest");
    if (ph_rw_opset(rw) >= 11)
        ph_node_set_attr_string(c, "nearest_mode", "round_prefer_floor");
    ph_node_remove_attr(c, "cubic_coeff_a");
    ph_node_remove_attr(c, "exclude_outside");
    ph_node_remove_attr(c, "antialias");
    return ph_rw_replace_root(rw, ph_node_output(c, 0));
}

static const ph_rule rules[] = {
    {"resize_to_nearest", "opset >= 10\ny = Resize(x, rest*) {mode in [\"linear\", \"cubic\", \"area\"]}", NULL,
     to_nearest},
    {0}};

PH_PASS_DEFINE(
    .name = "resize_to_nearest",
    .summary = "linear/cubic/area Resize -> nearest (round_prefer_floor, coordinate transform kept)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_APPROX,
    .rules = rules)
