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
 *   default-domain Transpose; both perms valid permutations of one rank.  A
 *   missing perm means reversed dims and needs the rank: taken from the other
 *   Transpose's perm, else from ph_value_rank of x / T1's output / y; unknown
 *   rank -> skip.
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

/* Length of n's perm attribute, 0 when absent, -1 when malformed. */
static ptrdiff_t perm_len(const ph_node *n, const int64_t **perm)
{
    ptrdiff_t len = ph_node_attr_ints(n, "perm", perm); /* one look-up when it is a list */
    if (len < 0) {
        *perm = NULL;
        return ph_node_attr_type(n, "perm") == PH_ATTR_NONE ? 0 : -1;
    }
    return len >= 1 ? len : -1;
}

/* The permutation of `rank` dims a perm of length len (0: absent) gives,
 * into out; 0, or -1 if not a permutation. */
static int read_perm(ptrdiff_t len, const int64_t *p, int rank, int64_t *out)
{
    unsigned char seen[MAX_RANK] = {0};
    if (len != 0 && len != rank)
        return -1;
    for (int i = 0; i < rank; i++) {
        int64_t v = len == 0 ? rank - 1 - i : p[i];
        if (v < 0 || v >= rank || seen[v]++)
            return -1;
        out[i] = v;
    }
    return 0;
}

/* The common rank of the pair (perms of lengths l1, l2), or -1 when
 * unknown or inconsistent. */
static int pair_rank(const ph_node *t1, ptrdiff_t l1, const ph_node *t2, ptrdiff_t l2)
{
    if (l1 < 0 || l2 < 0 || (l1 && l2 && l1 != l2))
        return -1;
    ptrdiff_t r = l1 ? l1 : l2;
    if (!r)
        r = ph_value_rank(ph_node_input(t1, 0));
    if (r <= 0)
        r = ph_value_rank(ph_node_output(t1, 0));
    if (r <= 0)
        r = ph_value_rank(ph_node_output(t2, 0));
    return r >= 1 && r <= MAX_RANK ? (int)r : -1;
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
    const int64_t *a1, *a2;
    ptrdiff_t l1 = perm_len(t1, &a1), l2 = perm_len(t2, &a2);
    int rank = pair_rank(t1, l1, t2, l2);
    int64_t p1[MAX_RANK], p2[MAX_RANK], c[MAX_RANK];
    if (rank < 0 || read_perm(l1, a1, rank, p1) || read_perm(l2, a2, rank, p2))
        return 0;
    for (int j = 0; j < rank; j++)
        c[j] = p1[p2[j]];
    ph_value *with = x;
    if (!is_identity_perm(c, rank) || !ph_value_can_replace(y, x)) {
        ph_node *t = ph_rw_node(rw, "Transpose", 1, &x, 1);
        if (!t || ph_node_set_attr_ints(t, "perm", (size_t)rank, c) < 0)
            return PH_ENOMEM;
        with = ph_node_output(t, 0);
    }
    return ph_rw_replace(rw, y, with) ? PH_ENOMEM : 1;
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
