/* eliminate_duplicate_initializer - merge initializers holding the same data.
 *
 * Requires: two initializers of one graph with the same dtype, shape and
 *   bytes (ph_tensor_equal), neither of which is a graph input (an input's
 *   initializer is only a default the user may override) nor a graph
 *   output (its name is part of the interface), and whose data can be read
 *   (not string tensors, not unreadable external data).
 * Changes:  every user of the later one (in file order) reads the first one
 *   instead, and the later one is removed.  Cost is linear in the bytes, and
 *   bytes are read only where a duplicate is possible: candidates are first
 *   grouped by dtype and dims (a hash of them, sorted: a radix sort reads
 *   in order, where a map of every initializer misses the cache at each);
 *   only those whose dtype and dims occur twice or
 *   more are looked at, first by a hash of their first 64 bytes (sorted
 *   likewise); only
 *   those whose prefix hash occurs twice or more get all their bytes hashed
 *   (ph_hash_bytes) into a map (passhost/hashmap.h), and bytes are compared
 *   in full only when hashes match.  So the weights of a large
 *   model are paged in only where two of them begin alike (in practice:
 *   only the real duplicates).  Runs per graph: the main graph, then each
 *   If/Loop/Scan body on its own initializers (a body's copy of an outer
 *   initializer stays); the nodes are walked for bodies only when a graph
 *   has some (ph_graph_has_bodies).
 *   A call when no initializer changed since the pass's last call in the
 *   run returns at once (ph_model_initializers_version, ph_ctx_pass_memo).
 * Leaves:   initializers that differ in anything (e.g. the same bytes under
 *   another dtype or shape), graph inputs and outputs.
 * Exact:    yes; users read identical data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <passhost/passhost.h>

/* Hash of dtype and dims only. */
static uint64_t shape_hash(const ph_tensor *t)
{
    uint64_t h = ph_hash_mix(0xcbf29ce484222325ull, (uint64_t)ph_tensor_dtype(t));
    h = ph_hash_mix(h, (uint64_t)ph_tensor_rank(t));
    for (size_t i = 0; i < ph_tensor_rank(t); i++)
        h = ph_hash_mix(h, (uint64_t)ph_tensor_dim(t, i));
    return h;
}

#define PREFIX_BYTES 64 /* the bytes of the first, cheap look */

/* A candidate: an initializer this pass may merge (keep or drop), with
 * what the phases read of its tensor, read once (a model's initializers
 * lie all over the heap: each read of a value, a tensor or its dims is a
 * cache miss on a large model). */
typedef struct cand {
    ph_value *v;
    const void *data;
    size_t nbytes;
    uint64_t shape; /* shape_hash */
} cand;

/* Hash of dtype, dims and the first PREFIX_BYTES bytes (all when fewer). */
static uint64_t prefix_hash(const cand *c)
{
    return ph_hash_bytes(ph_hash_mix(c->shape, c->nbytes), c->data, c->nbytes < PREFIX_BYTES ? c->nbytes : PREFIX_BYTES);
}

/* Phase 2's map: initializers with equal tensors are one key. */
static int same_data(const void *a, const void *b, void *user)
{
    return ph_tensor_equal(ph_value_const(a), ph_value_const(b));
}

/* The tensor of an initializer this pass may merge, or NULL. */
static const ph_tensor *candidate(const ph_value *v)
{
    const ph_tensor *t = ph_value_const(v);
    if (!t || ph_value_graph_output_count(v) || ph_tensor_dtype(t) == PH_DT_STRING || !ph_tensor_data(t))
        return NULL;
    return t;
}

/* A key and the index of the candidate it belongs to. */
typedef struct keyed {
    uint64_t key;
    size_t i;
} keyed;

/* Sort k[0..n) by key, stably (a radix sort by bytes, least significant
 * first, skipping a byte all keys share): linear, and it reads and writes
 * the arrays in order, where a map of n keys would miss the cache at each
 * one.  tmp is scratch of n entries; the result is in k. */
static void sort_keys(keyed *k, keyed *tmp, size_t n)
{
    keyed *from = k, *to = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        size_t at[257] = {0};
        for (size_t i = 0; i < n; i++)
            at[((from[i].key >> shift) & 255) + 1]++;
        if (at[((from[0].key >> shift) & 255) + 1] == n)
            continue;
        for (size_t b = 1; b < 257; b++)
            at[b] += at[b - 1];
        for (size_t i = 0; i < n; i++)
            to[at[(from[i].key >> shift) & 255]++] = from[i];
        keyed *x = from;
        from = to;
        to = x;
    }
    if (from != k)
        memcpy(k, from, n * sizeof *k);
}

/* Of the candidates c[0..n), keep those whose key another one shares
 * (equal tensors have equal keys, so one alone has no twin), in order,
 * compacting c.  k and tmp (n entries each) and once (n bytes) are
 * scratch.  Returns how many are kept.  Each key is computed once. */
static size_t keep_shared_keys(cand *c, size_t n, keyed *k, keyed *tmp, unsigned char *shared,
                               int prefix)
{
    if (n < 2)
        return 0;
    for (size_t i = 0; i < n; i++) {
        k[i] = (keyed){prefix ? prefix_hash(&c[i]) : c[i].shape, i};
        shared[i] = 0;
    }
    sort_keys(k, tmp, n);
    for (size_t i = 1; i < n; i++)
        if (k[i].key == k[i - 1].key)
            shared[k[i].i] = shared[k[i - 1].i] = 1;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (shared[i])
            c[kept++] = c[i];
    return kept;
}

/* Merge duplicates among g's own initializers: the number merged, or a
 * PH_E* code. */
static int dedup_graph(ph_graph *g, ph_ctx *ctx)
{
    size_t n = ph_graph_initializer_count(g);
    if (n < 2)
        return 0;
    /* Copy what is needed first: removing initializers compacts the
     * graph's list. */
    cand *c = malloc(n * sizeof *c);
    keyed *k = malloc(n * sizeof *k), *tmp = malloc(n * sizeof *tmp);
    unsigned char *shared = malloc(n);
    ph_hmap *first = ph_hmap_new(same_data, NULL);
    if (!c || !k || !tmp || !shared || !first) {
        free(c);
        free(k);
        free(tmp);
        free(shared);
        ph_hmap_free(first);
        return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
    }
    size_t n_maybe = 0; /* candidates worth hashing */
    for (size_t i = 0; i < n; i++) {
        ph_value *v = ph_graph_initializer(g, i);
        const ph_tensor *t = candidate(v);
        if (t)
            c[n_maybe++] = (cand){v, ph_tensor_data(t), ph_tensor_nbytes(t), shape_hash(t)};
    }
    /* phase 1: those whose dtype and dims occur twice or more, then of
     * those, whose first bytes occur twice or more */
    n_maybe = keep_shared_keys(c, n_maybe, k, tmp, shared, 0);
    n_maybe = keep_shared_keys(c, n_maybe, k, tmp, shared, 1);
    free(k);
    free(tmp);
    free(shared);

    /* phase 2: hash the bytes of those, merge on equal data */
    int merged = 0;
    for (size_t m = 0; m < n_maybe; m++) {
        ph_value *v = c[m].v;
        int created;
        void **slot = ph_hmap_slot(first, ph_hash_bytes(c[m].shape, c[m].data, c[m].nbytes), v, &created);
        if (!slot) {
            merged = ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
            break;
        }
        if (created) {
            *slot = v;
            continue;
        }
        ph_value *keep = *slot;
        char matched[512];
        snprintf(matched, sizeof matched, "%s, %s", ph_value_name(v), ph_value_name(keep));
        if (!ph_ctx_rewrite_begin(ctx, matched))
            break;
        /* v is no graph output and keep is in v's graph: only memory can fail */
        int rc = ph_value_replace(v, keep);
        if (rc < 0) {
            merged = ph_ctx_error(ctx, rc, "cannot merge initializer '%s' into '%s': %s", ph_value_name(v),
                                  ph_value_name(keep), ph_strerror(rc));
            break;
        }
        ph_value_prune(v);
        merged++;
    }
    free(c);
    ph_hmap_free(first);
    return merged;
}

/* g and, recursively, the bodies held by its nodes, in graph order (a
 * graph without bodies is not walked: that walk would cost more than the
 * rest of a call that finds nothing). */
static int dedup_all(ph_graph *g, ph_ctx *ctx)
{
    int total = dedup_graph(g, ctx);
    if (total < 0 || !ph_graph_has_bodies(g))
        return total;
    for (ph_node *n = ph_graph_first_node(g); n && total >= 0; n = ph_node_next(n))
        for (size_t s = 0; s < ph_node_subgraph_count(n) && total >= 0; s++) {
            int rc = dedup_all(ph_node_subgraph(n, s), ctx);
            total = rc < 0 ? rc : total + rc;
        }
    return total;
}

/* A call with no initializer added, removed or changed since the last one
 * has nothing new to merge. */
static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    (void)params;
    uint64_t *seen = ph_ctx_pass_memo(ctx);
    const ph_model *m = ph_graph_model(g);
    if (seen && *seen == ph_model_initializers_version(m))
        return 0;
    int r = dedup_all(g, ctx);
    if (seen && r >= 0)
        *seen = ph_model_initializers_version(m);
    return r;
}

static const char *const run_after[] = {"constant_to_initializer", "constant_folding", NULL};

PH_PASS_DEFINE(
    .name = "eliminate_duplicate_initializer",
    .summary = "initializers with the same dtype, shape and bytes -> one",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .run_after = run_after,
    .params = NULL,
    .run = run)
