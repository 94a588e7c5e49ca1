/* eliminate_nop_reshape - remove Reshape/Flatten/Squeeze/Unsqueeze that keep
 * the shape of their input.
 *
 * Icraft RemoveUselessReshapePass (seed 004): a reshaping operator whose
 * output has exactly its input's shape moves no element (all four operators
 * keep the row-major order of the data), so it is the identity.
 *
 * Requires: a default-domain Reshape, Flatten, Squeeze or Unsqueeze with its
 *   data input and one output, where the output's shape provably equals the
 *   input's (ph_value_same_shape on the inferred types: same rank, each dim
 *   the same number or the same symbolic name; an unknown dim never
 *   matches), and the output redirectable (ph_value_can_replace) when it is
 *   a graph output.  The shapes come from the host's shape inference (and
 *   the model's declared value_info, which inference checks against); a
 *   node whose shapes are unknown is left alone.
 * Changes:  users of the output read the input; the node is removed, and
 *   its shape / axes operand is pruned when nothing else uses it.  Main
 *   graph and every If/Loop/Scan body.
 * Exact:    yes; no data is moved or computed.
 */
#include <passhost/passhost.h>

static int keeps_shape(const ph_match *m, const ph_params *params)
{
    return ph_value_same_shape(ph_match_value(m, "x"), ph_match_value(m, "y"));
}

/* the shape or axes operand goes with the node when nothing else reads it */
static const ph_rule rules[] = {
    {"nop_reshape", "y = Reshape|Flatten|Squeeze|Unsqueeze(x, operand?)", keeps_shape, ph_rewrite_bypass},
    {0}};

PH_PASS_DEFINE(
    .name = "eliminate_nop_reshape",
    .summary = "Reshape/Flatten/Squeeze/Unsqueeze whose output shape equals its input shape -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
