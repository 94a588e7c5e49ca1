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
 *   antialias (meaningless for nearest) are dropped.  The output's shape
 *   and dtype do not change.  Main graph and every If/Loop/Scan body.
 * Exact: approx (every output element is an input element instead of an
 *   interpolation of several).
 */
#include <string.h>

#include <passhost/passhost.h>

static int interpolates(const ph_match *m, const ph_params *params)
{
    ph_node *n = ph_match_root(m);
    const char *mode = ph_node_attr_string(n, "mode", "nearest");
    return ph_node_opset(n) >= 10 &&
           (!strcmp(mode, "linear") || !strcmp(mode, "cubic") || !strcmp(mode, "area"));
}

static int to_nearest(ph_rewriter *rw, const ph_match *m)
{
    ph_node *n = ph_match_root(m);
    size_t k = ph_node_input_count(n);
    ph_value **in = ph_rw_alloc(rw, (k + 1) * sizeof *in);
    if (!in)
        return PH_ENOMEM;
    for (size_t i = 0; i < k; i++)
        in[i] = ph_node_input(n, i);
    ph_node *c = ph_rw_clone(rw, n, NULL, k, in);
    if (!c || ph_node_set_attr_string(c, "mode", "nearest") ||
        (ph_rw_opset(rw) >= 11 &&
         ph_node_set_attr_string(c, "nearest_mode", "round_prefer_floor")))
        return PH_ENOMEM;
    ph_node_remove_attr(c, "cubic_coeff_a");
    ph_node_remove_attr(c, "exclude_outside");
    ph_node_remove_attr(c, "antialias");
    ph_value *y = ph_match_value(m, "y");
    if (ph_value_copy_type(ph_node_output(c, 0), y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, ph_node_output(c, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"resize_to_nearest", "y = Resize(x, rest*)", interpolates, to_nearest},
    {0}};

PH_PASS_DEFINE(
    .name = "resize_to_nearest",
    .summary = "linear/cubic/area Resize -> nearest (round_prefer_floor, coordinate transform kept)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_APPROX,
    .rules = rules)
