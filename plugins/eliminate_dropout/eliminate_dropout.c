/* eliminate_dropout - remove Dropout nodes that run in inference mode.
 *
 * Seed 003: Dropout does nothing at inference time (the scaling happens
 * while training), so its output is its input.
 *
 * Requires: a default-domain Dropout whose mask output is unused and not a
 *   graph output (the pattern names only the first output, so the engine
 *   refuses the match otherwise), in inference mode by its opset:
 *   - opset <= 6: the attribute is_test is present and non-zero (is_test = 0
 *     is training mode: a random drop);
 *   - opset 7..11: always (the operator has no training switch);
 *   - opset >= 12: the training_mode input is omitted, or a constant scalar
 *     equal to false.  A true or non-constant training_mode is kept.  The
 *     ratio (attribute or input) does not matter in inference mode.
 *   When the output is a graph output it must be redirectable (the bypass
 *   rolls back otherwise, e.g. when the input is a graph input).
 * Changes:  users of the output read the input; the Dropout is removed, and
 *   its ratio / training_mode operands are pruned when nothing else reads
 *   them.  Main graph and every If/Loop/Scan body.
 * Exact:    yes; the output is the input.
 */
#include <passhost/passhost.h>

static int inference_mode(const ph_match *m, const ph_params *params)
{
    const ph_node *n = ph_match_root(m);
    int64_t opset = ph_node_opset(n);
    if (opset <= 6)
        return ph_node_attr_int(n, "is_test", 0) != 0;
    const ph_value *mode = ph_match_value(m, "mode");
    if (opset < 12 || !mode)
        return 1;
    const ph_tensor *t = ph_value_const(mode);
    int64_t v;
    return t && ph_tensor_numel(t) == 1 &&
           ph_tensor_read_i64(t, ph_tensor_rank(t), ph_tensor_dims(t), &v) == 0 && v == 0;
}

static const ph_rule rules[] = {
    {"dropout", "y = Dropout(x, ratio?, mode?)", inference_mode, ph_rewrite_bypass}, {0}};

PH_PASS_DEFINE(
    .name = "eliminate_dropout",
    .summary = "inference Dropout (no training mode, mask unused) -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
