/* eliminate_single_input_concat - remove a Concat of exactly one input.
 *
 * Seed 003; Icraft RemoveUselessConcatPass (seed 004): concatenating a
 * single tensor along any axis gives that tensor.
 *
 * Requires: a default-domain Concat with exactly one input (the pattern
 *   accounts for one, so a node with more does not match).  When the output
 *   is a graph output it must be redirectable (the bypass rolls back
 *   otherwise, e.g. when the input is a graph input).
 * Changes:  users of the output read the input; the Concat is removed.
 *   Main graph and every If/Loop/Scan body.
 * Exact:    yes; the output is the input.
 */
#include <passhost/passhost.h>

static const ph_rule rules[] = {{"single_input_concat", "y = Concat(x)", NULL, ph_rewrite_bypass}, {0}};

PH_PASS_DEFINE(
    .name = "eliminate_single_input_concat",
    .summary = "Concat of one input -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
