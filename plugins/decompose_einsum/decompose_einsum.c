/* decompose_einsum - Einsum becomes Transpose / Reshape / MatMul / Mul
 * (seed 004 SplitEinsumPass).
 *
 * Requires: a default-domain Einsum of one or two operands of a float dtype
 *   whose ranks are known, with an explicit or implicit equation of letters
 *   only (no '...'), no letter repeated within one operand (diagonal,
 *   trace), no repeated output letter, and no letter summed away that only
 *   one operand has (sum-only forms).  A letter both operands have must
 *   have provably equal dims (no size-1 broadcasting).  When a Reshape is
 *   needed (a group below is not exactly one letter), the dims of the
 *   row, contracted and column letters must be known numbers > 0; batch
 *   dims may be symbolic (the Reshapes copy them with 0).
 * Changes: one operand: a permutation -> one Transpose.  Two operands, the
 *   letters grouped into batch (both operands and the output), row (first
 *   operand and output), column (second operand and output) and contracted
 *   (both operands, not the output):
 *     - only batch letters (elementwise, "bi,bi->bi"): Transpose each
 *       operand to the output order (when needed), Mul;
 *     - otherwise: Transpose A to [batch, row, contracted] and B to
 *       [batch, contracted, column], Reshape each to [batch, R, K] and
 *       [batch, K, C] when a group is not one letter (an empty group is a
 *       dim of 1), MatMul, Reshape back to [batch, row..., column...] and
 *       Transpose to the output order (each step only when needed).
 *   Main graph and every If/Loop/Scan body.
 * Exact: fp (MatMul may sum the products in another order than Einsum).
 */
#include <string.h>

#include <passhost/passhost.h>
#include <passhost/constant.h>

#define MAXR 16

typedef struct eqn {
    int n;                  /* operands */
    int len[2], nout;       /* letters per operand, in the output */
    char t[2][MAXR], out[MAXR];
} eqn;

static int is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* Parse an equation of one or two operands; 0, or -1 for a form refused. */
static int parse(const char *s, eqn *e)
{
    int k = 0, arrow = 0, *len = &e->len[0];
    char *cur = e->t[0];
    memset(e, 0, sizeof *e);
    for (; *s; s++) {
        if (*s == ' ')
            continue;
        if (*s == ',') {
            if (arrow || ++k > 1)
                return -1;
            cur = e->t[k], len = &e->len[k];
        } else if (s[0] == '-' && s[1] == '>') {
            if (arrow)
                return -1;
            arrow = 1, s++, cur = e->out, len = &e->nout;
        } else if (!is_letter(*s) || *len >= MAXR) {
            return -1; /* '...' among others */
        } else {
            cur[(*len)++] = *s;
        }
    }
    e->n = k + 1;
    int cnt[128] = {0}, out_cnt[128] = {0};
    for (int i = 0; i < e->n; i++) {
        int own[128] = {0};
        for (int j = 0; j < e->len[i]; j++)
            if (own[(int)e->t[i][j]]++)
                return -1; /* diagonal or trace */
        for (int j = 0; j < e->len[i]; j++)
            cnt[(int)e->t[i][j]]++;
    }
    if (!arrow) /* implicit output: the letters seen once, in ASCII order */
        for (int c = 0; c < 128; c++)
            if (cnt[c] == 1)
                e->out[e->nout++] = (char)c;
    for (int j = 0; j < e->nout; j++)
        if (!cnt[(int)e->out[j]] || out_cnt[(int)e->out[j]]++)
            return -1;
    for (int c = 0; c < 128; c++)
        if (cnt[c] == 1 && !out_cnt[c])
            return -1; /* summed over one operand only */
    return 0;
}

static int pos(const char *t, int n, char c)
{
    for (int i = 0; i < n; i++)
        if (t[i] == c)
            return i;
    return -1;
}

/* x transposed by perm[0..r), or x itself for the identity. */
static ph_value *transpose(ph_rewriter *rw, ph_value *x, int r, const int64_t *perm)
{
    int id = 1;
    for (int i = 0; i < r; i++)
        id &= perm[i] == i;
    if (id || !x)
        return x;
    ph_node *t = ph_rw_node(rw, "Transpose", 1, &x, 1);
    if (!t || ph_node_set_attr_ints(t, "perm", (size_t)r, perm) < 0)
        return NULL;
    return ph_node_output(t, 0);
}

/* Reshape x to [0 x nb (batch dims copied), d0..., d1...]: the products of
 * two letter groups when flat, or each letter's dim. */
static ph_value *reshape(ph_rewriter *rw, ph_value *x, int nb, int flat, const int64_t *d0, int n0,
                         const int64_t *d1, int n1)
{
    int64_t s[MAXR * 2], r = 0, p0 = 1, p1 = 1;
    for (int i = 0; i < nb; i++)
        s[r++] = 0;
    for (int i = 0; i < n0; i++)
        p0 *= d0[i];
    for (int i = 0; i < n1; i++)
        p1 *= d1[i];
    if (flat) {
        s[r++] = p0, s[r++] = p1;
    } else {
        memcpy(s + r, d0, (size_t)n0 * sizeof *s), r += n0;
        memcpy(s + r, d1, (size_t)n1 * sizeof *s), r += n1;
    }
    return x ? ph_rw_reshape(rw, x, (size_t)r, s) : NULL;
}

static int decompose(ph_rewriter *rw, const ph_match *m)
{
    ph_value *const *xs, *y = ph_match_value(m, "y");
    size_t n_in = ph_match_values(m, "xs", &xs);
    const char *eq = ph_node_attr_string(ph_match_root(m), "equation", NULL);
    eqn e;
    if (!eq || parse(eq, &e) || (size_t)e.n != n_in || !ph_dtype_is_float(ph_value_dtype(xs[0])))
        return 0;
    for (int i = 0; i < e.n; i++)
        if (ph_value_rank(xs[i]) != e.len[i] || ph_value_dtype(xs[i]) != ph_value_dtype(xs[0]))
            return 0;
    ph_value *r = NULL;
    int64_t perm[MAXR];
    if (e.n == 1) { /* every letter kept: a permutation */
        for (int j = 0; j < e.nout; j++)
            perm[j] = pos(e.t[0], e.len[0], e.out[j]);
        ph_node *t = ph_rw_node(rw, "Transpose", 1, xs, 1);
        if (!t || ph_node_set_attr_ints(t, "perm", (size_t)e.nout, perm) < 0)
            return PH_ENOMEM;
        r = ph_node_output(t, 0);
    } else {
        /* Groups in output order (batch, rows, columns), contracted in A's order. */
        char bl[MAXR], ml[MAXR], nl[MAXR], kl[MAXR];
        int nb = 0, nm = 0, nn = 0, nk = 0;
        int64_t md[MAXR], nd[MAXR], kd[MAXR];
        for (int j = 0; j < e.nout; j++) {
            char c = e.out[j];
            int ia = pos(e.t[0], e.len[0], c), ib = pos(e.t[1], e.len[1], c);
            if (ia >= 0 && ib >= 0)
                bl[nb++] = c;
            else if (ia >= 0)
                md[nm] = ph_value_dim(xs[0], ia), ml[nm++] = c;
            else
                nd[nn] = ph_value_dim(xs[1], ib), nl[nn++] = c;
        }
        for (int i = 0; i < e.len[0]; i++) {
            char c = e.t[0][i];
            int ib = pos(e.t[1], e.len[1], c);
            if (ib >= 0 && !ph_value_dim_equal(xs[0], i, xs[1], ib))
                return 0; /* would broadcast, or not provably equal */
            if (ib >= 0 && pos(e.out, e.nout, c) < 0)
                kd[nk] = ph_value_dim(xs[0], i), kl[nk++] = c;
        }
        int flat_a = nm != 1 || nk != 1, flat_b = nk != 1 || nn != 1, flat_o = nm != 1 || nn != 1;
        int elementwise = !nm && !nn && !nk;
        if (!elementwise && (flat_a || flat_b || flat_o)) {
            for (int i = 0; i < nm; i++)
                if (md[i] <= 0)
                    return 0;
            for (int i = 0; i < nn; i++)
                if (nd[i] <= 0)
                    return 0;
            for (int i = 0; i < nk; i++)
                if (kd[i] <= 0)
                    return 0;
        }
        /* A as [batch, rows, contracted]; B as [batch, contracted, columns]. */
        int64_t pa[MAXR], pb[MAXR];
        int ka = 0, kb = 0;
        for (int i = 0; i < nb; i++)
            pa[ka++] = pos(e.t[0], e.len[0], bl[i]), pb[kb++] = pos(e.t[1], e.len[1], bl[i]);
        for (int i = 0; i < nm; i++)
            pa[ka++] = pos(e.t[0], e.len[0], ml[i]);
        for (int i = 0; i < nk; i++)
            pa[ka++] = pos(e.t[0], e.len[0], kl[i]), pb[kb++] = pos(e.t[1], e.len[1], kl[i]);
        for (int i = 0; i < nn; i++)
            pb[kb++] = pos(e.t[1], e.len[1], nl[i]);
        ph_value *a = transpose(rw, xs[0], ka, pa), *b = transpose(rw, xs[1], kb, pb);
        if (elementwise) {
            ph_value *in[2] = {a, b};
            r = a && b ? ph_rw_op(rw, "Mul", 2, in) : NULL;
        } else {
            if (flat_a)
                a = reshape(rw, a, nb, 1, md, nm, kd, nk);
            if (flat_b)
                b = reshape(rw, b, nb, 1, kd, nk, nd, nn);
            ph_value *in[2] = {a, b};
            r = a && b ? ph_rw_op(rw, "MatMul", 2, in) : NULL;
            if (flat_o)
                r = reshape(rw, r, nb, 0, md, nm, nd, nn);
        }
        /* r is [batch, rows, columns]: back to the output order. */
        char have[MAXR * 3];
        int nh = 0;
        memcpy(have + nh, bl, (size_t)nb), nh += nb;
        memcpy(have + nh, ml, (size_t)nm), nh += nm;
        memcpy(have + nh, nl, (size_t)nn), nh += nn;
        for (int j = 0; j < e.nout; j++)
            perm[j] = pos(have, nh, e.out[j]);
        r = transpose(rw, r, e.nout, perm);
    }
    if (!r || ph_value_copy_type(r, y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, r) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {{"einsum", "y = Einsum(xs*)", NULL, decompose}, {0}};

PH_PASS_DEFINE(
    .name = "decompose_einsum",
    .summary = "Einsum -> Transpose/Reshape/MatMul/Mul (no trace, diagonal or sum-only forms)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
