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
 *   counted by dtype and dims; only those whose dtype and dims occur twice or
 *   more are looked at, first by a hash of their first 64 bytes; only
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

/* Hash of dtype, dims and the first PREFIX_BYTES bytes (all when fewer). */
static uint64_t prefix_hash(const ph_tensor *t)
{
    size_t n = ph_tensor_nbytes(t);
    return ph_hash_bytes(ph_hash_mix(shape_hash(t), n), ph_tensor_data(t), n < PREFIX_BYTES ? n : PREFIX_BYTES);
}

/* Keys of the phase-1 counts are their hashes; of phase 2, initializers
 * with equal tensors. */
static int same_hash(const void *a, const void *b, void *user) { return 1; }
static int same_data(const void *a, const void *b, void *user)
{
    return ph_tensor_equal(ph_value_const(a), ph_value_const(b));
}

/* An initializer this pass may merge (keep or drop). */
static const ph_tensor *candidate(const ph_value *v)
{
    const ph_tensor *t = ph_value_const(v);
    if (!t || ph_value_graph_output_count(v) || ph_tensor_dtype(t) == PH_DT_STRING || !ph_tensor_data(t))
        return NULL;
    return t;
}

/* Of the candidates inits[idx[0..n)], whose tensors are ts[0..n), keep
 * those whose key another one shares (equal tensors have equal keys, so
 * one alone has no twin), in order, compacting idx and ts alike; keys (n
 * entries) is scratch, counts (a map of same_hash) is left empty.  Returns
 * how many are kept, or PH_ENOMEM.  Each key is computed once. */
static ptrdiff_t keep_shared_keys(ph_hmap *counts, ph_value **inits, size_t *idx, const ph_tensor **ts, size_t n,
                                  uint64_t *keys, uint64_t (*key)(const ph_tensor *))
{
    for (size_t m = 0; m < n; m++) {
        int created;
        void **count = ph_hmap_slot(counts, keys[m] = key(ts[m]), inits[idx[m]], &created);
        if (!count)
            return PH_ENOMEM;
        *count = (void *)((uintptr_t)*count + 1); /* a count kept in the pointer */
    }
    size_t kept = 0;
    for (size_t m = 0; m < n; m++)
        if ((uintptr_t)ph_hmap_get(counts, keys[m], inits[idx[m]]) >= 2) {
            idx[kept] = idx[m];
            ts[kept++] = ts[m];
        }
    ph_hmap_clear(counts);
    return (ptrdiff_t)kept;
}

/* Merge duplicates among g's own initializers: the number merged, or a
 * PH_E* code. */
static int dedup_graph(ph_graph *g, ph_ctx *ctx)
{
    size_t n = ph_graph_initializer_count(g);
    if (n < 2)
        return 0;
    /* Copy the list first: removing initializers compacts the graph's. */
    ph_value **inits = malloc(n * sizeof *inits);
    size_t *maybe = malloc(n * sizeof *maybe), n_maybe = 0; /* indices worth hashing */
    const ph_tensor **ts = malloc(n * sizeof *ts); /* their tensors: each value is read once */
    uint64_t *keys = malloc(n * sizeof *keys);
    ph_hmap *counts = ph_hmap_new(same_hash, NULL), *first = ph_hmap_new(same_data, NULL);
    ptrdiff_t kept = PH_ENOMEM;
    if (inits && maybe && ts && keys && counts && first) {
        for (size_t i = 0; i < n; i++)
            if ((ts[n_maybe] = candidate(inits[i] = ph_graph_initializer(g, i))))
                maybe[n_maybe++] = i;
        /* phase 1: those whose dtype and dims occur twice or more, then of
         * those, whose first bytes occur twice or more */
        kept = keep_shared_keys(counts, inits, maybe, ts, n_maybe, keys, shape_hash);
        /* (prefixes are nearly all distinct: the map is sized once, not
         * grown step by step) */
        if (kept >= 0 && ph_hmap_reserve(counts, (size_t)kept) < 0)
            kept = PH_ENOMEM;
        if (kept >= 0)
            kept = keep_shared_keys(counts, inits, maybe, ts, (size_t)kept, keys, prefix_hash);
    }
    free(keys);
    ph_hmap_free(counts);
    if (kept < 0) {
        free(inits);
        free(maybe);
        free(ts);
        ph_hmap_free(first);
        return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
    }
    n_maybe = (size_t)kept;

    /* phase 2: hash the bytes of those, merge on equal data */
    int merged = 0;
    for (size_t m = 0; m < n_maybe; m++) {
        ph_value *v = inits[maybe[m]];
        const ph_tensor *t = ts[m];
        int created;
        void **slot = ph_hmap_slot(first, ph_hash_bytes(shape_hash(t), ph_tensor_data(t), ph_tensor_nbytes(t)), v,
                                   &created);
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
    free(inits);
    ph_hmap_free(first);
    free(maybe);
    free(ts);
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
