/* merge_consecutive_transpose - fold Transpose -> Transpose into one.
 *
 * Seed 001 rule 1 (and Icraft MergeMultipleTransposePass), generalised: two
 * adjacent Transposes are one Transpose whose permutation is the composition,
 * and nothing at all when the composition is the identity.
 *
 *   y = T2(T1(x)):  T1 out dim i = x dim p1[i],  y dim j = T1 out dim p2[j],
 *   so y = Transpose(x, perm = c) with c[j] = p1[p2[j]].
 *
 * Requires: T2 a default-domain Transpose whose input is produced by T1, a
 *   default-domain Transpose; both perms valid permutations of one rank
 *   (ph_node_transpose_perm).  A missing perm means reversed dims and needs
 *   the rank: that of the Transpose's input or output (ph_value_rank), else
 *   the other Transpose's; unknown rank -> skip.
 * Changes:
 *   - composite identity, and y redirectable (ph_value_can_replace(y, x)):
 *     users of y read x, T2 is removed;
 *   - otherwise T2 is replaced by one Transpose of x with perm c (when the
 *     composite is the identity but y cannot be redirected, e.g. x a graph
 *     input and y a graph output, an identity-perm Transpose that keeps y's
 *     name).
 *   T1 is removed when nothing uses it any more.  If T1's output has other
 *   users or is a graph output, T1 stays for them: T2 is still rewritten,
 *   which never adds a node or duplicates work (T2 costs what it cost
 *   before, T1 runs once as before) and frees T1 as soon as its last
 *   Transpose user is folded.  A chain folds in one run: the Transpose a
 *   merge creates is matched by the next Transpose of the chain.
 *   Main graph and every If/Loop/Scan body.
 * Exact:    yes; only data movement.
 */

#include <passhost/passhost.h>

#define MAX_RANK 64

/* t's permutation into out (ph_node_transpose_perm: a missing perm is the
 * reversed dims of the rank t's values know), or, for a missing perm whose
 * rank they do not know, the reversed dims of `rank`, the other
 * Transpose's (0: none).  The rank, or < 1. */
static int perm_of(const ph_node *t, int rank, int64_t *out)
{
    int r = ph_node_transpose_perm(t, out, MAX_RANK);
    if (r >= 1 || rank < 1 || ph_node_attr_type(t, "perm") != PH_ATTR_NONE)
        return r;
    for (int i = 0; i < rank; i++)
        out[i] = rank - 1 - i;
    return rank;
}

static int is_identity_perm(const int64_t *c, int rank)
{
    for (int i = 0; i < rank; i++)
        if (c[i] != i)
            return 0;
    return 1;
}

/* Replace y = T2(T1(x)) by x, or by one Transpose of x with the composite. */
static int merge(ph_rewriter *rw, const ph_match *m)
{
    ph_node *t1 = ph_match_node(m, "t"), *t2 = ph_match_root(m);
    ph_value *x = ph_match_value(m, "x"), *y = ph_match_value(m, "y");
    int64_t p1[MAX_RANK], p2[MAX_RANK], c[MAX_RANK];
    int r1 = ph_node_transpose_perm(t1, p1, MAX_RANK), r2 = perm_of(t2, r1, p2);
    if (r1 < 1)
        r1 = perm_of(t1, r2, p1);
    if (r1 < 1 || r1 != r2)
        return 0; /* a rank unknown, or two that disagree; an invalid perm */
    for (int j = 0; j < r1; j++)
        c[j] = p1[p2[j]];
    ph_value *with = x;
    if (!is_identity_perm(c, r1) || !ph_value_can_replace(y, x))
        with = ph_rw_transpose(rw, x, (size_t)r1, c);
    return with && !ph_rw_replace(rw, y, with) ? 1 : PH_ENOMEM;
}

/* t is shared: when T1 has other readers it stays for them, and T2 still
 * reads x directly (never more work than before). */
static const ph_rule rules[] = {
    {"transpose_pair", "t:shared = Transpose(x); y = Transpose(t)", NULL, merge}, {0}};

PH_PASS_DEFINE(
    .name = "merge_consecutive_transpose",
    .summary = "Transpose -> Transpose becomes one Transpose (none if the result is identity)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
