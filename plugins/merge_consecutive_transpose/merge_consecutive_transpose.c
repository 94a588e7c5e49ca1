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
 *   - otherwise T2 reads x directly with perm c (when the composite is the
 *     identity but y cannot be redirected, e.g. x a graph input and y a graph
 *     output, T2 becomes an identity-perm Transpose that keeps y's name).
 *   T1 is removed when nothing uses it any more.  If T1's output has other
 *   users or is a graph output, T1 stays for them: T2 is still rewritten,
 *   which never adds a node or duplicates work (T2 costs what it cost
 *   before, T1 runs once as before) and frees T1 as soon as its last
 *   Transpose user is folded.  Chains fold in one walk, in node order.
 *   Main graph and every If/Loop/Scan body.
 * Exact:    yes; only data movement.
 */
#include <stdio.h>

#include <passhost/passhost.h>

#define MAX_RANK 64

static int is_transpose(const ph_node *n)
{
    return n && ph_node_op(n) == PH_OP_Transpose && ph_node_domain(n)[0] == '\0' &&
           ph_node_input_count(n) >= 1 && ph_node_input(n, 0) && ph_node_output_count(n) == 1;
}

/* Length of n's perm attribute, 0 when absent, -1 when malformed. */
static ptrdiff_t perm_len(const ph_node *n, const int64_t **perm)
{
    ph_attr_type t = ph_node_attr_type(n, "perm");
    *perm = NULL;
    if (t == PH_ATTR_NONE)
        return 0;
    if (t != PH_ATTR_INTS)
        return -1;
    ptrdiff_t len = ph_node_attr_ints(n, "perm", perm);
    return len >= 1 ? len : -1;
}

/* n's permutation of `rank` dims into out; 0, or -1 if not a permutation. */
static int read_perm(const ph_node *n, int rank, int64_t *out)
{
    const int64_t *p;
    ptrdiff_t len = perm_len(n, &p);
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

/* The common rank of the pair, or -1 when unknown or inconsistent. */
static int pair_rank(const ph_node *t1, const ph_node *t2)
{
    const int64_t *p;
    ptrdiff_t l1 = perm_len(t1, &p), l2 = perm_len(t2, &p);
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

/* Make t2 read x with perm c; on failure put back its old perm `old`. */
static int recompose(ph_node *t2, ph_value *x, int rank, const int64_t *c, const int64_t *old)
{
    int had_perm = ph_node_attr_type(t2, "perm") != PH_ATTR_NONE;
    int rc = ph_node_set_attr_ints(t2, "perm", (size_t)rank, c);
    if (rc < 0)
        return rc;
    rc = ph_node_set_input(t2, 0, x);
    if (rc < 0) {
        if (had_perm)
            ph_node_set_attr_ints(t2, "perm", (size_t)rank, old);
        else
            ph_node_remove_attr(t2, "perm");
    }
    return rc;
}

/* Fold the Transpose t2 with its producer; 1 if rewritten, 0 if not,
 * or a PH_E* code. */
static int merge(ph_node *t2, ph_ctx *ctx)
{
    ph_value *mid = ph_node_input(t2, 0), *y = ph_node_output(t2, 0);
    ph_node *t1 = ph_value_producer(mid);
    if (!is_transpose(t1))
        return 0;
    ph_value *x = ph_node_input(t1, 0);
    int rank = pair_rank(t1, t2);
    int64_t p1[MAX_RANK], p2[MAX_RANK], c[MAX_RANK];
    if (rank < 0 || read_perm(t1, rank, p1) || read_perm(t2, rank, p2))
        return 0;
    for (int j = 0; j < rank; j++)
        c[j] = p1[p2[j]];

    char matched[512];
    snprintf(matched, sizeof matched, "%s, %s", ph_node_name(t1), ph_node_name(t2));
    if (!ph_ctx_rewrite_begin(ctx, matched))
        return 0;
    int rc;
    if (is_identity_perm(c, rank) && ph_value_can_replace(y, x))
        rc = ph_node_bypass(t2, 0, x);
    else
        rc = recompose(t2, x, rank, c, p2);
    if (rc < 0)
        return ph_ctx_error(ctx, rc, "merging Transpose '%s' into '%s': %s", ph_node_name(t1),
                            ph_node_name(t2), ph_strerror(rc));
    ph_value_prune(mid);
    return 1;
}

/* One node of the walk: merge it with the Transpose feeding it. */
static int visit(ph_node *n, void *ctx)
{
    return is_transpose(n) ? merge(n, ctx) : 0;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    return ph_graph_walk(g, visit, ctx);
}

PH_PASS_DEFINE(
    .name = "merge_consecutive_transpose",
    .summary = "Transpose -> Transpose becomes one Transpose (none if the result is identity)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .run = run)
