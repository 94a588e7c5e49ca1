/* simplify_layout_chain - a maximal chain of Transpose / Reshape / Flatten /
 * Squeeze / Unsqueeze becomes the shortest equivalent: nothing, one
 * Reshape, one Transpose, Transpose -> Reshape, Reshape -> Transpose, or
 * Reshape -> Transpose -> Reshape.
 *
 * Icraft DeepOptimizeTransDataSeqPass (seed 004; also what
 * RemoveUselessTranspose1Pass, DetrMergeTransposePass and
 * OptimizeCReshapeEfficiencyPass do for particular chains): the chain is
 * simulated on an index tensor (element i of the input holds the number i)
 * and the composite data movement is read off the result.
 *
 *  - Reshape, Flatten, Squeeze, Unsqueeze and a Transpose that only moves
 *    dims of size 1 move no element; the other Transposes permute the index
 *    buffer.  The result P gives, for each output element, the input
 *    element it holds.
 *  - P is factorised into blocks: with the output's flat index j split in
 *    mixed radix, the innermost block is the longest run where P[j] grows by
 *    a constant stride, the next the longest run of P[t * L1] growing by
 *    its own stride, and so on.  These are the coarsest groups of elements
 *    that move together; sorted by stride they must tile the input in mixed
 *    radix, and P is then Reshape(input -> blocks in input order) ->
 *    Transpose(block perm) -> Reshape(output).  A chain whose composite is
 *    not of that form is left alone.
 *  - The replacement: nothing (identity with the same shape); one Reshape
 *    (identity order); one Transpose (each block is the same run of input
 *    and output dims); Transpose -> Reshape (the blocks are runs of input
 *    dims); Reshape -> Transpose (runs of output dims); else R -> T -> R.
 *    Dims of size 1 never count.  Whichever is chosen is simulated too and
 *    compared with P element by element before anything changes.  None of
 *    these forms has a Reshape that keeps its shape or a Transpose that
 *    keeps memory order, and none has two adjacent nodes that
 *    merge_consecutive_reshape or merge_consecutive_transpose would merge,
 *    so those passes and transpose_to_reshape never grow it again.
 *
 * Requires: a chain of at least two default-domain nodes of those ops, each
 *   middle value read only by the next node's data input (in the same
 *   graph) and no graph output: the chain is cut at a value with another
 *   reader or a graph output, so it is a maximal single-use run.  Every
 *   value of the chain has a known static shape with no 0 dim, all of one
 *   element count N, and each Transpose's perm is valid and agrees with
 *   them.  A chain that moves elements needs N <= max_elements (the index
 *   buffers cost 12 bytes per element); bigger chains are left alone.
 *   Opset >= 5 for a replacement with a Reshape.  The replacement must
 *   have fewer nodes than the chain (a chain whose identity replacement
 *   cannot take a graph output's name, x a graph input, gets one Reshape
 *   that keeps it).  The operators' own forms do not matter (0/-1 and
 *   allowzero in Reshape shapes, axes as attributes before opset 13 and as
 *   inputs from 13, Flatten's axis): each node's output shape is read from
 *   its inferred type, which those forms already determined.
 * Changes:  the chain's last value's users read the replacement (a graph
 *   output keeps its name); the chain and its shape/axes operands are
 *   pruned.  New Reshapes have static int64 shape initializers and new
 *   Transposes explicit perms.  Main graph and every If/Loop/Scan body.
 * Hand-written (.run): the matcher matches a fixed number of nodes, not a
 *   maximal run of any length.  Cost: each node is looked at O(1) times
 *   (a chain is followed only from its first node: a node whose data input
 *   does not come from a chain node it alone reads); each chain costs its
 *   length plus O(N) for the simulation.  The simulation depends only on
 *   the chain's signature (input shape, each node's output shape, the perm
 *   of each Transpose that moves elements), so within one call chains of an
 *   equal signature (the same block in every layer) share one; the found
 *   replacement is simulated again to prove it only when it is used
 *   (shorter than the chain).  A chain of two nodes, one of them a
 *   Transpose that moves elements, between values of different ranks has
 *   no shorter form and is not simulated at all.
 * Exact:    yes; only data movement.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_RANK 64

typedef struct shape {
    int r;
    int64_t d[MAX_RANK];
} shape;

/* One step of a replacement: a Reshape to `to`, or a Transpose by perm. */
typedef struct step {
    int transpose;
    shape to;
    int64_t perm[MAX_RANK];
} step;

/* The verdicts of one call, by chain signature: the input shape and, per
 * node, its output shape and the perm of a Transpose that moves elements.
 * That is all the simulation and the plan read, so chains of equal
 * signatures (the same block in every layer of a network) are simulated
 * once.  An entry in `arena`: the signature's length, the signature, the
 * node count of the plan (-1: none) and, for a plan shorter than the chain,
 * its steps (transpose flag, rank, dims, perm of a Transpose). */
typedef struct memo_slot {
    uint64_t hash;
    size_t at; /* index in arena + 1; 0: empty */
} memo_slot;

typedef struct state {
    ph_ctx *ctx;
    int64_t max_elements;
    ph_node **chain;
    size_t cap;
    int64_t *arena; /* the entries, then the signature being built */
    size_t len, arena_cap;
    memo_slot *table;
    size_t table_cap, entries;
} state;

static int is_chain_op(const ph_node *n)
{
    switch (ph_node_op(n)) {
    case PH_OP_Transpose:
    case PH_OP_Reshape:
    case PH_OP_Flatten:
    case PH_OP_Squeeze:
    case PH_OP_Unsqueeze:
        return ph_node_domain(n)[0] == '\0' && ph_node_input_count(n) >= 1 && ph_node_input(n, 0) &&
               ph_node_output_count(n) == 1;
    default:
        return 0;
    }
}

/* The chain node after n: the sole reader of n's output, through its data
 * input, in n's graph; NULL when the chain ends at n. */
static ph_node *next_of(const ph_node *n)
{
    ph_value *v = ph_node_output(n, 0);
    ph_node *c = ph_value_sole_consumer(v);
    if (!c || !is_chain_op(c) || ph_node_input(c, 0) != v || ph_node_graph(c) != ph_node_graph(n))
        return NULL;
    return c;
}

static int read_shape(const ph_value *v, shape *s)
{
    s->r = ph_value_rank(v);
    if (s->r < 0 || s->r > MAX_RANK || !ph_value_shape_known(v))
        return -1;
    for (int i = 0; i < s->r; i++)
        if ((s->d[i] = ph_value_dim(v, i)) <= 0)
            return -1;
    return 0;
}

static int64_t numel(const shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->r; i++) {
        if (s->d[i] > INT64_MAX / n)
            return -1;
        n *= s->d[i];
    }
    return n;
}

static int same_shape(const shape *a, const shape *b)
{
    return a->r == b->r && !memcmp(a->d, b->d, (size_t)a->r * sizeof a->d[0]);
}

static int is_identity(const int64_t *p, int r)
{
    for (int i = 0; i < r; i++)
        if (p[i] != i)
            return 0;
    return 1;
}

/* out = in transposed: in has shape s, out dim i is in dim perm[i]; in NULL
 * stands for the identity index buffer (element i holds i), which is then
 * never written.  Dims of size 1 are dropped first; the innermost output dim
 * is one strided copy, the outer ones an odometer over the rest. */
static void transpose_idx(const uint32_t *in, uint32_t *out, const shape *s, const int64_t *perm, int64_t n)
{
    int64_t stride[MAX_RANK], ost[MAX_RANK], odim[MAX_RANK], idx[MAX_RANK] = {0}, acc = 1, off = 0;
    int r = 0;
    for (int i = s->r - 1; i >= 0; i--)
        stride[i] = acc, acc *= s->d[i];
    for (int i = 0; i < s->r; i++)
        if (s->d[perm[i]] != 1)
            ost[r] = stride[perm[i]], odim[r] = s->d[perm[i]], r++;
    int64_t inner = r ? odim[r - 1] : 1, istride = r ? ost[r - 1] : 0;
    for (int64_t j = 0; j < n; j += inner) {
        uint32_t *dst = out + j;
        if (in)
            for (int64_t t = 0; t < inner; t++)
                dst[t] = in[off + t * istride];
        else
            for (int64_t t = 0; t < inner; t++)
                dst[t] = (uint32_t)(off + t * istride);
        for (int i = r - 2; i >= 0; i--) {
            if (++idx[i] < odim[i]) {
                off += ost[i];
                break;
            }
            off -= ost[i] * (idx[i] - 1);
            idx[i] = 0;
        }
    }
}

/* Run steps on the identity index buffer of shape in; the result is in
 * *res (a or b).  The steps hold at most one Transpose. */
static void simulate(const step *st, int k, const shape *in, int64_t n, uint32_t *a, uint32_t *b,
                     uint32_t **res)
{
    shape cur = *in;
    *res = NULL; /* the identity, not written yet */
    for (int i = 0; i < k; i++) {
        if (!st[i].transpose) {
            cur = st[i].to;
            continue;
        }
        transpose_idx(*res, *res == a ? b : a, &cur, st[i].perm, n);
        *res = *res == a ? b : a;
        cur = st[i].to;
    }
    if (!*res) {
        for (int64_t j = 0; j < n; j++)
            a[j] = (uint32_t)j;
        *res = a;
    }
}

/* The coarsest blocks of P (innermost first in output order): lengths L and
 * input strides S.  Their count, or -1 when P is no block permutation. */
static int blocks_of(const uint32_t *P, int64_t n, int64_t *L, int64_t *S)
{
    int m = 0;
    int64_t prod = 1;
    if (P[0] != 0)
        return -1;
    while (prod < n) {
        int64_t s = P[prod], l = 2;
        if (s == 0 || m == MAX_RANK)
            return -1;
        while (l * prod < n && (int64_t)P[l * prod] == l * s)
            l++;
        if (n % (l * prod))
            return -1;
        L[m] = l, S[m] = s, m++;
        prod *= l;
    }
    /* sorted by stride, the blocks must tile the input in mixed radix */
    int64_t expect = 1;
    for (int done = 0; done < m; done++) {
        int k = -1;
        for (int i = 0; i < m; i++)
            if (S[i] == expect)
                k = i;
        if (k < 0)
            return -1;
        expect *= L[k];
    }
    return m;
}

/* Split blocks (lengths len[0..m), outer first) into runs of the dims of s
 * that are not 1: first[b] is the index in nz of block b's first dim, nz
 * the indices of those dims.  0, or -1 when a block boundary falls inside a
 * dim. */
static int align(const shape *s, const int64_t *len, int m, int *first, int *nz, int *n_nz)
{
    int k = 0;
    *n_nz = 0;
    for (int i = 0; i < s->r; i++)
        if (s->d[i] != 1)
            nz[(*n_nz)++] = i;
    for (int b = 0; b < m; b++) {
        int64_t p = 1;
        first[b] = k;
        while (p < len[b] && k < *n_nz)
            p *= s->d[nz[k++]];
        if (p != len[b])
            return -1;
    }
    first[m] = k;
    return k == *n_nz ? 0 : -1;
}

/* The replacement for P (in -> out), into st; its node count, or -1. */
static int plan(const uint32_t *P, int64_t n, const shape *in, const shape *out, step *st)
{
    int64_t L[MAX_RANK], S[MAX_RANK], ilen[MAX_RANK], olen[MAX_RANK];
    int ib[MAX_RANK], ob[MAX_RANK], sigma[MAX_RANK], pos[MAX_RANK];
    int m = P ? blocks_of(P, n, L, S) : 0;
    if (m < 0)
        return -1;
    for (int i = 0; i < m; i++)
        ob[i] = m - 1 - i; /* output order, outer first */
    for (int i = 0; i < m; i++) { /* input order: stride descending */
        int k = 0;
        for (int j = 0; j < m; j++)
            k += S[j] > S[i];
        ib[k] = i, pos[i] = k;
    }
    for (int i = 0; i < m; i++)
        sigma[i] = pos[ob[i]], ilen[i] = L[ib[i]], olen[i] = L[ob[i]];
    int64_t sig64[MAX_RANK];
    for (int i = 0; i < m; i++)
        sig64[i] = sigma[i];
    if (is_identity(sig64, m)) {
        if (same_shape(in, out))
            return 0;
        st[0].transpose = 0, st[0].to = *out;
        return 1;
    }
    int ifirst[MAX_RANK + 1], ofirst[MAX_RANK + 1], inz[MAX_RANK], onz[MAX_RANK], n_inz, n_onz;
    int in_ok = !align(in, ilen, m, ifirst, inz, &n_inz);
    int out_ok = !align(out, olen, m, ofirst, onz, &n_onz);
    /* one Transpose: every block the same dims in and out */
    if (in_ok && out_ok && in->r == out->r) {
        int same = 1;
        for (int i = 0; i < m && same; i++) {
            int bi = sigma[i], len = ifirst[bi + 1] - ifirst[bi];
            same = len == ofirst[i + 1] - ofirst[i];
            for (int k = 0; k < len && same; k++)
                same = in->d[inz[ifirst[bi] + k]] == out->d[onz[ofirst[i] + k]];
        }
        if (same) {
            int ones_in[MAX_RANK], n1 = 0, u = 0;
            for (int i = 0; i < in->r; i++)
                if (in->d[i] == 1)
                    ones_in[n1++] = i;
            for (int i = 0; i < m; i++)
                for (int k = 0; k < ofirst[i + 1] - ofirst[i]; k++)
                    st[0].perm[onz[ofirst[i] + k]] = inz[ifirst[sigma[i]] + k];
            for (int i = 0; i < out->r; i++)
                if (out->d[i] == 1)
                    st[0].perm[i] = ones_in[u++];
            st[0].transpose = 1, st[0].to = *out;
            return 1;
        }
    }
    if (in_ok) { /* Transpose the input's dims block by block, then Reshape */
        int k = 0;
        for (int i = 0; i < m; i++)
            for (int j = ifirst[sigma[i]]; j < ifirst[sigma[i] + 1]; j++)
                st[0].perm[k++] = inz[j];
        for (int i = 0; i < in->r; i++)
            if (in->d[i] == 1)
                st[0].perm[k++] = i;
        st[0].transpose = 1, st[0].to.r = in->r;
        for (int i = 0; i < in->r; i++)
            st[0].to.d[i] = in->d[st[0].perm[i]];
        st[1].transpose = 0, st[1].to = *out;
        return 2;
    }
    if (out_ok) { /* Reshape into the output's dims in input block order, then Transpose */
        int k = 0, at[MAX_RANK];
        for (int bi = 0; bi < m; bi++) {
            int i = 0;
            while (sigma[i] != bi)
                i++;
            for (int j = ofirst[i]; j < ofirst[i + 1]; j++)
                at[onz[j]] = k, st[0].to.d[k++] = out->d[onz[j]];
        }
        for (int i = 0; i < out->r; i++)
            if (out->d[i] == 1)
                at[i] = k, st[0].to.d[k++] = 1;
        st[0].transpose = 0, st[0].to.r = out->r;
        for (int i = 0; i < out->r; i++)
            st[1].perm[i] = at[i];
        st[1].transpose = 1, st[1].to = *out;
        return 2;
    }
    st[0].transpose = 0, st[0].to.r = m;
    memcpy(st[0].to.d, ilen, (size_t)m * sizeof ilen[0]);
    st[1].transpose = 1, st[1].to.r = m;
    memcpy(st[1].to.d, olen, (size_t)m * sizeof olen[0]);
    memcpy(st[1].perm, sig64, (size_t)m * sizeof sig64[0]);
    st[2].transpose = 0, st[2].to = *out;
    return 3;
}

/* Build the steps after `before`, reading x; the last value, or NULL. */
static ph_value *emit(ph_graph *g, ph_node *before, ph_value *x, const step *st, int k)
{
    ph_value *cur = x;
    int dt = ph_value_dtype(x);
    for (int i = 0; i < k; i++) {
        ph_node *n;
        if (st[i].transpose) {
            n = ph_node_create(g, before, "Transpose", 1, &cur, 1);
            if (!n || ph_node_set_attr_ints(n, "perm", (size_t)st[i].to.r, st[i].perm) < 0)
                return NULL;
        } else {
            int64_t len = st[i].to.r;
            ph_tensor *t = ph_tensor_new(PH_DT_INT64, 1, &len, st[i].to.d);
            ph_value *in[2] = {cur, t ? ph_graph_add_initializer(g, "layout_shape", t) : NULL};
            if (!in[1] || !(n = ph_node_create(g, before, "Reshape", 2, in, 1)))
                return NULL;
        }
        cur = ph_node_output(n, 0);
        if (ph_value_set_type(cur, dt, st[i].to.r, st[i].to.d) < 0)
            return NULL;
    }
    return cur;
}

/* Room for `more` values at the end of the arena; 0, or -1 out of memory. */
static int arena_room(state *s, size_t more)
{
    if (s->len + more <= s->arena_cap)
        return 0;
    size_t cap = s->arena_cap ? 2 * s->arena_cap : 1024;
    while (cap < s->len + more)
        cap *= 2;
    int64_t *grown = realloc(s->arena, cap * sizeof *grown);
    if (!grown)
        return -1;
    s->arena = grown, s->arena_cap = cap;
    return 0;
}

static void arena_shape(state *s, const shape *sh)
{
    s->arena[s->len++] = sh->r;
    memcpy(s->arena + s->len, sh->d, (size_t)sh->r * sizeof sh->d[0]);
    s->len += (size_t)sh->r;
}

static uint64_t sig_hash(const int64_t *sig, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (uint64_t)sig[i];
        h *= 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    return h;
}

/* The entry whose signature is arena[at .. at + n), or NULL. */
static const int64_t *memo_find(const state *s, size_t at, size_t n, uint64_t h)
{
    if (!s->table_cap)
        return NULL;
    for (size_t k = (size_t)h & (s->table_cap - 1); s->table[k].at; k = (k + 1) & (s->table_cap - 1)) {
        const int64_t *e = s->arena + s->table[k].at - 1;
        if (s->table[k].hash == h && (size_t)e[0] == n && !memcmp(e + 1, s->arena + at, n * sizeof *e))
            return e;
    }
    return NULL;
}

/* Keep the signature being built, arena[mark + 1 .. len), with its plan
 * (nodes, steps st) as an entry that starts at mark.  0, or -1 when out of
 * memory: the verdict is then not kept (the caller drops the signature). */
static int memo_add(state *s, size_t mark, uint64_t h, int nodes, const step *st)
{
    size_t need = 1 + (nodes > 0 ? (size_t)nodes * (2 + 2 * MAX_RANK) : 0);
    if (arena_room(s, need))
        return -1;
    if (2 * (s->entries + 1) > s->table_cap) {
        size_t cap = s->table_cap ? 2 * s->table_cap : 64;
        memo_slot *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < s->table_cap; i++)
            if (s->table[i].at) {
                size_t k = (size_t)s->table[i].hash & (cap - 1);
                while (t[k].at)
                    k = (k + 1) & (cap - 1);
                t[k] = s->table[i];
            }
        free(s->table);
        s->table = t, s->table_cap = cap;
    }
    s->arena[mark] = (int64_t)(s->len - mark - 1);
    s->arena[s->len++] = nodes;
    for (int i = 0; i < nodes; i++) {
        s->arena[s->len++] = st[i].transpose;
        arena_shape(s, &st[i].to);
        if (st[i].transpose) {
            memcpy(s->arena + s->len, st[i].perm, (size_t)st[i].to.r * sizeof st[i].perm[0]);
            s->len += (size_t)st[i].to.r;
        }
    }
    size_t k = (size_t)h & (s->table_cap - 1);
    while (s->table[k].at)
        k = (k + 1) & (s->table_cap - 1);
    s->table[k] = (memo_slot){h, mark + 1};
    s->entries++;
    return 0;
}

/* The plan of entry e (its node count; steps into st). */
static int memo_plan(const int64_t *e, step *st)
{
    const int64_t *p = e + 1 + e[0];
    int nodes = (int)*p++;
    for (int i = 0; i < nodes; i++) {
        st[i].transpose = (int)*p++;
        st[i].to.r = (int)*p++;
        memcpy(st[i].to.d, p, (size_t)st[i].to.r * sizeof *p);
        p += st[i].to.r;
        if (st[i].transpose) {
            memcpy(st[i].perm, p, (size_t)st[i].to.r * sizeof *p);
            p += st[i].to.r;
        }
    }
    return nodes;
}

/* The plan of a chain of k nodes that moves elements: simulated on index
 * buffers, then the replacement found is simulated too and compared
 * (only when it is shorter than the chain: a longer one is not used).  The
 * node count, or -1 (none, or too big); -2 out of memory. */
static int plan_moving(state *s, size_t k, const shape *in, const shape *out, int64_t n, step *st)
{
    ph_node **c = s->chain;
    int64_t perm[MAX_RANK];
    shape cur;
    if (n > s->max_elements || n > (int64_t)UINT32_MAX)
        return -1;
    uint32_t *buf = malloc((size_t)n * 3 * sizeof *buf), *P, *Q = NULL;
    if (!buf)
        return -2;
    uint32_t *a = buf, *b = buf + n, *spare = buf + 2 * n;
    P = NULL; /* the identity; the chain moves elements, so P is written below */
    cur = *in;
    for (size_t i = 0; i < k; i++) {
        if (ph_node_transpose_perm(c[i], perm, MAX_RANK) == cur.r && !ph_perm_keeps_order(cur.r, cur.d, perm)) {
            uint32_t *dst = P == a ? b : a;
            transpose_idx(P, dst, &cur, perm, n);
            P = dst;
        }
        read_shape(ph_node_output(c[i], 0), &cur);
    }
    int nodes = plan(P, n, in, out, st);
    if (nodes >= 0 && (size_t)nodes < k) { /* prove the plan: simulate it and compare */
        uint32_t *x1 = P == a ? b : a;
        simulate(st, nodes, in, n, x1, spare, &Q);
        if (memcmp(Q, P, (size_t)n * sizeof *P))
            nodes = -1;
    }
    free(buf);
    return nodes;
}

/* Check the chain's shapes and Transposes (see Requires) from input shape
 * in of n elements: 1 if they qualify, with the output shape in *out and
 * the number of Transposes that move elements in *moves; else 0.  While
 * *sig, appends each node's part of the signature to the arena (*sig = 0
 * when out of memory). */
static int check_chain(state *s, size_t k, const shape *in, int64_t n, int *sig, shape *out, int *moves)
{
    int64_t perm[MAX_RANK];
    shape cur = *in, nxt;
    *moves = 0;
    for (size_t i = 0; i < k; i++) {
        int move = 0;
        if (read_shape(ph_node_output(s->chain[i], 0), &nxt) || numel(&nxt) != n)
            return 0;
        if (ph_node_op(s->chain[i]) == PH_OP_Transpose) {
            if (ph_node_transpose_perm(s->chain[i], perm, MAX_RANK) != cur.r || nxt.r != cur.r)
                return 0;
            for (int j = 0; j < cur.r; j++)
                if (nxt.d[j] != cur.d[perm[j]])
                    return 0;
            move = !ph_perm_keeps_order(cur.r, cur.d, perm);
            *moves += move;
        }
        if (*sig && arena_room(s, 2 + 2 * (size_t)MAX_RANK))
            *sig = 0;
        if (*sig) {
            s->arena[s->len++] = move;
            if (move)
                for (int j = 0; j < cur.r; j++)
                    s->arena[s->len++] = perm[j];
            arena_shape(s, &nxt);
        }
        cur = nxt;
    }
    *out = cur;
    return 1;
}

/* Simplify the chain of k nodes s->chain[0..k); 1 if rewritten, 0 if not,
 * or a negative code. */
static int simplify(state *s, size_t k)
{
    ph_node **c = s->chain, *last = c[k - 1];
    ph_graph *g = ph_node_graph(last);
    ph_value *x = ph_node_input(c[0], 0), *y = ph_node_output(last, 0);
    shape in, out;
    int moves;
    if (read_shape(x, &in))
        return 0;
    int64_t n = numel(&in);
    if (n < 1)
        return 0;
    /* the signature is built after the memo's entries: its length slot at
     * mark, then the input shape and each node's part */
    size_t mark = s->len;
    int sig = !arena_room(s, 2 + (size_t)in.r);
    if (sig) {
        s->len++;
        arena_shape(s, &in);
    }
    int ok = check_chain(s, k, &in, n, &sig, &out, &moves);
    size_t sig_len = sig ? s->len - mark - 1 : 0;
    step st[3];
    int nodes = -1;
    if (ok && !moves) {
        nodes = plan(NULL, n, &in, &out, st);
    } else if (ok && moves == 1 && k == 2 && in.r != out.r) {
        /* One Transpose moves elements, so the composite is no identity:
         * the only form shorter than two nodes would be one Transpose, and
         * that keeps the rank.  (A Reshape next to a Transpose: the
         * attention heads of every transformer layer.) */
        nodes = -1;
    } else if (ok) {
        uint64_t h = sig ? sig_hash(s->arena + mark + 1, sig_len) : 0;
        const int64_t *e = sig ? memo_find(s, mark + 1, sig_len, h) : NULL;
        if (e) {
            nodes = memo_plan(e, st);
        } else {
            nodes = plan_moving(s, k, &in, &out, n, st);
            if (nodes == -2) {
                s->len = mark;
                return ph_ctx_error(s->ctx, PH_ENOMEM, "out of memory simulating a chain of %zu nodes", k);
            }
            if (nodes >= 0 && (size_t)nodes >= k)
                nodes = -1; /* no shorter form: what is kept is the verdict */
            if (sig && !memo_add(s, mark, h, nodes, st))
                mark = s->len; /* kept */
        }
    }
    s->len = mark; /* drop the signature unless it was kept */
    if (nodes < 0 || (size_t)nodes >= k)
        return 0;
    if (!nodes && !ph_value_can_replace(y, x)) { /* keep y's name: one identity Reshape */
        st[0].transpose = 0, st[0].to = out;
        nodes = 1;
    }
    for (int i = 0; i < nodes; i++)
        if (!st[i].transpose && ph_model_opset(ph_graph_model(g), "") < 5)
            return 0; /* Reshape-1 took its shape as an attribute */
    char names[512] = "";
    if (ph_ctx_wants_names(s->ctx))
        snprintf(names, sizeof names, "%s .. %s (%zu nodes)", ph_node_name(c[0]), ph_node_name(last), k);
    if (!ph_ctx_rewrite_begin(s->ctx, names[0] ? names : NULL))
        return 0;
    ph_value *with = nodes ? emit(g, last, x, st, nodes) : x;
    if (!with)
        return ph_ctx_error(s->ctx, PH_ENOMEM, "cannot build the replacement of '%s'", ph_node_name(last));
    int rc = ph_value_replace(y, with);
    if (rc < 0)
        return ph_ctx_error(s->ctx, rc, "cannot replace '%s': %s", ph_value_name(y), ph_strerror(rc));
    ph_value_prune(y);
    return 1;
}

static int visit(ph_node *n, void *user)
{
    state *s = user;
    if (!is_chain_op(n))
        return 0;
    ph_node *p = ph_value_producer(ph_node_input(n, 0));
    if (p && is_chain_op(p) && next_of(p) == n)
        return 0; /* not the first node of its chain */
    size_t k = 0;
    for (ph_node *c = n; c; c = next_of(c)) {
        if (k == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 16;
            ph_node **grown = realloc(s->chain, cap * sizeof *grown);
            if (!grown)
                return ph_ctx_error(s->ctx, PH_ENOMEM, "out of memory");
            s->chain = grown, s->cap = cap;
        }
        s->chain[k++] = c;
    }
    return k >= 2 ? simplify(s, k) : 0;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    static const ph_op ops[] = {PH_OP_Transpose, PH_OP_Reshape, PH_OP_Flatten, PH_OP_Squeeze,
                                PH_OP_Unsqueeze};
    state s = {.ctx = ctx, .max_elements = ph_params_int(params, "max_elements")};
    int rc = ph_graph_walk_ops(g, ops, sizeof ops / sizeof ops[0], visit, &s);
    free(s.chain);
    free(s.arena);
    free(s.table);
    return rc;
}

static const ph_param_def params[] = {
    {"max_elements", PH_PARAM_INT, "1048576",
     "largest element count of a chain that moves elements (its simulation costs 12 bytes each)"},
    {NULL, 0, NULL, NULL}};

PH_PASS_DEFINE(
    .name = "simplify_layout_chain",
    .summary = "maximal Transpose/Reshape/Flatten/Squeeze/Unsqueeze chain -> nothing, one Reshape, "
               "one Transpose, or the shortest Reshape/Transpose form (index-tensor simulation)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .params = params,
    .run = run)
