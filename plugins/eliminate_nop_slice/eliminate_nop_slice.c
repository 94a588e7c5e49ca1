/* eliminate_nop_slice - remove a Slice that returns its whole input.
 *
 * Icraft RemoveUselessSlicePass (seed 004) and seed 003: a Slice whose every
 * sliced axis selects indices 0, 1, ..., d-1 in order returns its input
 * unchanged.
 *
 * Requires: a default-domain Slice whose starts, ends and (when given) axes
 *   and steps are constants: initializers, Constant nodes, or shape
 *   constants the inference knows as numbers (opset < 10: the attributes).
 *   The data input's rank must be known (to resolve negative axes); axes
 *   must be distinct and in range, steps non-zero.  Each sliced axis must
 *   provably select the whole axis, in order (ph_slice_axis_whole):
 *   - dim d known: the clamped range (ONNX Slice rules) starts at 0 and has
 *     d elements, with step 1 (d == 1: any positive step; d == 0: any
 *     slice, the output is empty either way).  Negative steps are never
 *     taken, even on one element: runtimes clamp their starts differently;
 *   - dim d symbolic or unknown: step 1, start 0 (or a start <= -2^31+1,
 *     which clamps to 0), and end >= 2^31-1 (the "to the end" sentinels
 *     exporters write: INT64_MAX by PyTorch, INT32_MAX by TensorFlow
 *     converters) or an end that is the axis's own symbolic dim (a shape
 *     constant such as Shape(x)[k]).  An axis of 2^31 or more elements is
 *     taken to be impossible, as the shape inference also does.
 *   The output must be redirectable (ph_value_can_replace) when it is a
 *   graph output.
 * Changes:  users of the output read the data input; the Slice is removed,
 *   and its starts/ends/axes/steps operands are pruned when nothing else
 *   uses them.  Main graph and every If/Loop/Scan body.
 * Exact:    yes; the output is the input.
 */
#include <passhost/passhost.h>

static int keeps_everything(const ph_match *m, const ph_params *params)
{
    const ph_value *x = ph_match_value(m, "x");
    int r = ph_value_rank(x);
    ph_slice_params s;
    if (r < 0 || r > PH_SLICE_MAX || ph_node_slice_params(ph_match_root(m), r, &s) < 0)
        return 0;
    for (int k = 0; k < s.n; k++)
        if (!ph_slice_axis_whole(x, &s, k))
            return 0;
    return 1;
}

/* starts, ends, axes and steps go with the Slice when nothing else reads them */
static const ph_rule rules[] = {
    {"nop_slice", "y = Slice(x, operands*)", keeps_everything, ph_rewrite_bypass}, {0}};

PH_PASS_DEFINE(
    .name = "eliminate_nop_slice",
    .summary = "Slice whose output equals its input (whole range, step 1) -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
