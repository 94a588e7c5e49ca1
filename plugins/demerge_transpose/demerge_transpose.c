/* demerge_transpose - a Transpose that moves more than two dims becomes a
 * chain of Transposes that each swap two dims, for backends that only swap
 * two dims at a time.  An adapt pass that runs once, after the fixpoint, so
 * it never meets merge_consecutive_transpose, which composes the chain back.
 *
 * Requires: a valid perm (a missing one reverses the dims; the rank must
 *   then be known) that moves at least three dims (perm[i] != i).
 * Changes: y's users read the last Transpose of the chain, the fewest
 *   two-dim swaps: rank - (number of cycles of the perm).  Intermediate
 *   values get their types from x's when known.
 * Exact: yes; only data movement.
 */
#include <passhost/passhost.h>

#define MAX_RANK 64

static int moves_three(const ph_match *m, const ph_params *params)
{
    int64_t perm[MAX_RANK];
    int r = ph_node_transpose_perm(ph_match_root(m), perm, MAX_RANK), moved = 0;
    for (int i = 0; i < r; i++)
        moved += perm[i] != i;
    return moved > 2;
}

/* p = s1 o s2 o ... o sk: take the first a with q[a] != a (q = p at first),
 * emit the swap s = (a q[a]), go on with s o q, which fixes a; each swap
 * splits a cycle, and in emission order the swaps are the chain's data order. */
static int demerge(ph_rewriter *rw, const ph_match *m)
{
    ph_value *cur = ph_match_value(m, "x");
    int64_t q[MAX_RANK], s[MAX_RANK];
    int r = ph_node_transpose_perm(ph_match_root(m), q, MAX_RANK);
    for (int a = 0; a < r; a++) {
        while (q[a] != a) {
            int64_t b = q[a];
            for (int i = 0; i < r; i++) {
                s[i] = i == a ? b : i == b ? a : i;
                q[i] = q[i] == a ? b : q[i] == b ? a : q[i]; /* q <- s o q */
            }
            ph_node *t = ph_rw_node(rw, "Transpose", 1, &cur, 1);
            if (!t || ph_node_set_attr_ints(t, "perm", (size_t)r, s) < 0 ||
                ph_value_set_type_transposed(ph_node_output(t, 0), cur, r, s) < 0)
                return PH_ENOMEM;
            cur = ph_node_output(t, 0);
        }
    }
    return r < 0 ? 0 : ph_rw_replace(rw, ph_match_value(m, "y"), cur) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {{"multi_dim_transpose", "y = Transpose(x)", moves_three, demerge}, {0}};

PH_PASS_DEFINE(
    .name = "demerge_transpose",
    .summary = "Transpose moving more than two dims -> chain of two-dim swaps (fewest swaps)",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .run_once = 1,
    .exactness = PH_EXACT,
    .rules = rules)
