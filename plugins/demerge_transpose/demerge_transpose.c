/* demerge_transpose - a Transpose that moves more than two dims becomes a
 * chain of Transposes that each swap two dims.
 *
 * Icraft DemergeTransposePass (seed 004), for backends that only swap two
 * dims at a time.  An adapt pass that runs once, after the fixpoint, so it
 * never meets merge_consecutive_transpose, which composes the chain back.
 *
 * A chain T1 -> T2 -> ... -> Tk computes the composite c[j] =
 * p1[p2[...pk[j]]].  Writing the perm p as r, the pass repeatedly takes the
 * first a with r[a] != a, emits the swap s = (a r[a]) and continues with
 * s o r, which fixes a: p = s1 o s2 o ... o sk, so the swaps in emission
 * order are the chain in data order.  Each swap splits a cycle of r, so k =
 * rank - (number of cycles of p), the fewest two-dim swaps possible.
 *
 * Requires: a default-domain Transpose with a valid perm (a missing perm
 *   reverses the dims; the rank must then be known) that moves at least
 *   three dims (perm[i] != i for three or more i).
 * Changes:  y's users read the last Transpose of the chain; the original
 *   Transpose is removed.  Intermediate values get their types from x's
 *   when known.  Main graph and every If/Loop/Scan body.
 * Exact:    yes; only data movement.
 */
#include <stdint.h>

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

/* Give v x's type with dims permuted by swap s (dims[i] = x dim s[i]). */
static int set_type(ph_value *v, const ph_value *x, const int64_t *s, int r)
{
    int64_t dims[MAX_RANK];
    if (ph_value_rank(x) != r)
        return 0;
    for (int i = 0; i < r; i++)
        dims[i] = ph_value_dim(x, (int)s[i]);
    int rc = ph_value_set_type(v, ph_value_dtype(x), r, dims);
    for (int i = 0; !rc && i < r; i++)
        if (ph_value_dim_param(x, (int)s[i]))
            rc = ph_value_set_dim_param(v, i, ph_value_dim_param(x, (int)s[i]));
    return rc;
}

static int demerge(ph_rewriter *rw, const ph_match *m)
{
    ph_value *cur = ph_match_value(m, "x");
    int64_t r_[MAX_RANK], s[MAX_RANK];
    int r = ph_node_transpose_perm(ph_match_root(m), r_, MAX_RANK);
    if (r < 0)
        return 0;
    for (int a = 0; a < r; a++) {
        while (r_[a] != a) {
            int64_t b = r_[a];
            for (int i = 0; i < r; i++)
                s[i] = i == a ? b : i == b ? a : i;
            for (int i = 0; i < r; i++) /* r <- s o r */
                r_[i] = r_[i] == a ? b : r_[i] == b ? a : r_[i];
            ph_value *prev = cur;
            ph_node *t = ph_rw_node(rw, "Transpose", 1, &prev, 1);
            if (!t || ph_node_set_attr_ints(t, "perm", (size_t)r, s) < 0)
                return PH_ENOMEM;
            cur = ph_node_output(t, 0);
            if (set_type(cur, prev, s, r) < 0)
                return PH_ENOMEM;
        }
    }
    return ph_rw_replace(rw, ph_match_value(m, "y"), cur) ? PH_ENOMEM : 1;
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
