/* eliminate_nop_split - remove a Split with one output that equals its input.
 *
 * Icraft RemoveUselessSplitPass (seed 004): a Split into a single part
 * copies its whole input.
 *
 * Requires: a default-domain Split with exactly one output (a Split with
 *   more outputs, even unused ones, is never bypassed: its first output is
 *   only a part), and
 *   - no split sizes (the opset 2..12 attribute, or the optional input of
 *     opset 1 and >= 13) and no num_outputs other than 1 (opset 18): one
 *     equal part is the whole input; or
 *   - constant split sizes with a single entry equal to the input's known
 *     dim on `axis` (negative axes count from the end; the rank must be
 *     known).  Another size is an invalid model and is left alone.
 *   When the output is a graph output it must be redirectable (the bypass
 *   rolls back otherwise, e.g. when the input is a graph input).
 * Changes:  users of the output read the input; the Split is removed and its
 *   split operand pruned when nothing else reads it.  Main graph and every
 *   If/Loop/Scan body.
 * Exact:    yes; the output is the input.
 */
#include <passhost/passhost.h>

static int one_whole_part(const ph_match *m, const ph_params *params)
{
    const ph_node *n = ph_match_root(m);
    const ph_value *x = ph_match_value(m, "x"), *split = ph_match_value(m, "split");
    if (ph_node_output_count(n) != 1 || ph_node_attr_int(n, "num_outputs", 1) != 1)
        return 0;
    const int64_t *attr;
    int64_t size;
    ptrdiff_t k = ph_node_attr_ints(n, "split", &attr);
    if (k < 0 && !split)
        return 1; /* one equal part */
    if (k >= 0 && split)
        return 0;
    if (k == 1)
        size = attr[0];
    else if (k >= 0 || ph_value_const_ints(split, &size, NULL, 1) != 1)
        return 0;
    int rank = ph_value_rank(x);
    int64_t axis = ph_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += rank;
    return rank > 0 && axis >= 0 && axis < rank && ph_value_dim(x, (int)axis) == size && size >= 0;
}

static const ph_rule rules[] = {{"nop_split", "y = Split(x, split?)", one_whole_part, ph_rewrite_bypass}, {0}};

PH_PASS_DEFINE(
    .name = "eliminate_nop_split",
    .summary = "Split with one output equal to its input -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
