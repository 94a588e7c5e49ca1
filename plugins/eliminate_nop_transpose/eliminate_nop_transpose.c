/* eliminate_nop_transpose - remove a Transpose whose permutation is the
 * identity.
 *
 * Seed 001: a Transpose with perm = [0, 1, ..., r-1] moves no element.
 *
 * Requires: a default-domain Transpose with
 *   - a perm attribute that is the identity (and, when the input's rank is
 *     known, of that length), or
 *   - no perm attribute (which reverses the dims) and an input of known rank
 *     0 or 1, where reversing changes nothing.
 *   When the output is a graph output it must be redirectable (the bypass
 *   rolls back otherwise, e.g. when the input is a graph input).
 * Changes:  users of the output read the input; the Transpose is removed.
 *   Main graph and every If/Loop/Scan body.
 * Exact:    yes; the output is the input.
 */
#include <passhost/passhost.h>

static int identity_perm(const ph_match *m, const ph_params *params)
{
    int64_t perm[64];
    int r = ph_node_transpose_perm(ph_match_root(m), perm, 64), rank = ph_value_rank(ph_match_value(m, "x"));
    if (r < 0 || (rank >= 0 && r != rank))
        return 0;
    for (int i = 0; i < r; i++)
        if (perm[i] != i)
            return 0;
    return 1;
}

static const ph_rule rules[] = {{"nop_transpose", "y = Transpose(x)", identity_perm, ph_rewrite_bypass}, {0}};

PH_PASS_DEFINE(
    .name = "eliminate_nop_transpose",
    .summary = "Transpose with the identity permutation -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
