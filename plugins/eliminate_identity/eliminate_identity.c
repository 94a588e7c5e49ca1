/* eliminate_identity - remove Identity nodes.
 *
 * Requires: an Identity of the default domain.
 * Changes:  every user of the Identity's output reads its input instead and
 *           the Identity is removed, in the main graph and every If/Loop/Scan
 *           body.  A graph output keeps its name: the input takes it over
 *           (a node output, or an initializer of the main graph).
 * Leaves:   an Identity whose output is a graph output that cannot be
 *           redirected (the input is a graph input, itself a graph output,
 *           an initializer of a body, or from an enclosing graph): the output
 *           name is part of the model's interface, and the rewrite rolls back.
 * Exact:    yes; Identity copies its input.
 */
#include <passhost/passhost.h>

static const ph_rule rules[] = {{"identity", "y = Identity(x)", NULL, ph_rewrite_bypass}, {0}};

PH_PASS_DEFINE(
    .name = "eliminate_identity",
    .summary = "Identity -> bypass (also inside If/Loop/Scan bodies)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
