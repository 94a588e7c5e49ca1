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
 *   (64-bit, four words at a time) into an open-addressing table, and bytes
 *   are compared in full only when hashes match.  So the weights of a large
 *   model are paged in only where two of them begin alike (in practice:
 *   only the real duplicates).  Runs per graph: the main graph, then each
 *   If/Loop/Scan body on its own initializers (a body's copy of an outer
 *   initializer stays).
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

typedef struct slot {
    uint64_t hash;
    ph_value *v;    /* NULL = empty */
    size_t count;   /* phase 1: candidates with this dtype-and-dims hash */
} slot;

static uint64_t mix(uint64_t h, uint64_t w)
{
    h ^= w;
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* Hash of dtype and dims only. */
static uint64_t shape_hash(const ph_tensor *t)
{
    uint64_t h = mix(0xcbf29ce484222325ull, (uint64_t)ph_tensor_dtype(t));
    h = mix(h, (uint64_t)ph_tensor_rank(t));
    for (size_t i = 0; i < ph_tensor_rank(t); i++)
        h = mix(h, (uint64_t)ph_tensor_dim(t, i));
    return h;
}

#define PREFIX_BYTES 64 /* the bytes of the first, cheap look */

/* Hash of the bytes [0, n) of t, seeded with h; 8 bytes at a time, in four
 * independent lanes (so the multiplies overlap) folded at the end. */
static uint64_t data_hash(uint64_t h, const ph_tensor *t, size_t n)
{
    const unsigned char *p = ph_tensor_data(t);
    uint64_t lane[4] = {h, h ^ 0x243F6A8885A308D3ull, h ^ 0x13198A2E03707344ull, h ^ 0xA4093822299F31D0ull};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * k, 8);
            lane[k] = mix(lane[k], w);
        }
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        lane[0] = mix(lane[0], w);
    }
    uint64_t tail = 0;
    for (size_t k = 0; i < n; i++, k++)
        tail |= (uint64_t)p[i] << (8 * k);
    h = mix(mix(mix(mix(lane[0], lane[1]), lane[2]), lane[3]), tail);
    return mix(h, n);
}

/* Hash of dtype, dims and the first PREFIX_BYTES bytes (all when fewer). */
static uint64_t prefix_hash(const ph_tensor *t)
{
    size_t n = ph_tensor_nbytes(t);
    return data_hash(mix(shape_hash(t), n), t, n < PREFIX_BYTES ? n : PREFIX_BYTES);
}

/* The slot of `hash` in a table of cap (a power of two) entries, for a
 * phase-1 count: an existing slot with that hash or the empty one. */
static slot *count_slot(slot *table, size_t cap, uint64_t hash)
{
    size_t k = (size_t)hash & (cap - 1);
    while (table[k].count && table[k].hash != hash)
        k = (k + 1) & (cap - 1);
    return &table[k];
}

/* An initializer this pass may merge (keep or drop). */
static const ph_tensor *candidate(const ph_value *v)
{
    const ph_tensor *t = ph_value_const(v);
    if (!t || ph_value_graph_output_count(v) || ph_tensor_dtype(t) == PH_DT_STRING || !ph_tensor_data(t))
        return NULL;
    return t;
}

/* Of the initializers inits[idx[0..n)], keep those whose key another one
 * shares (equal tensors have equal keys, so one alone has no twin), in
 * order; keys (n entries) is scratch, table (cap entries) is left zeroed.
 * Returns how many are kept.  Each key is computed once. */
static size_t keep_shared_keys(slot *table, size_t cap, ph_value **inits, size_t *idx, size_t n, uint64_t *keys,
                               uint64_t (*key)(const ph_tensor *))
{
    for (size_t m = 0; m < n; m++) {
        keys[m] = key(candidate(inits[idx[m]]));
        slot *s = count_slot(table, cap, keys[m]);
        s->hash = keys[m];
        s->count++;
    }
    size_t kept = 0;
    for (size_t m = 0; m < n; m++)
        if (count_slot(table, cap, keys[m])->count >= 2)
            idx[kept++] = idx[m];
    memset(table, 0, cap * sizeof *table);
    return kept;
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
    uint64_t *keys = malloc(n * sizeof *keys);
    size_t cap = 4;
    while (cap < 2 * n)
        cap *= 2;
    slot *table = calloc(cap, sizeof *table);
    if (!inits || !maybe || !keys || !table) {
        free(inits);
        free(maybe);
        free(keys);
        free(table);
        return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        if (candidate(inits[i] = ph_graph_initializer(g, i)))
            maybe[n_maybe++] = i;
    /* phase 1: those whose dtype and dims occur twice or more, then of
     * those, whose first bytes occur twice or more */
    n_maybe = keep_shared_keys(table, cap, inits, maybe, n_maybe, keys, shape_hash);
    n_maybe = keep_shared_keys(table, cap, inits, maybe, n_maybe, keys, prefix_hash);
    free(keys);

    /* phase 2: hash the bytes of those, merge on equal data */
    int merged = 0;
    for (size_t m = 0; m < n_maybe; m++) {
        ph_value *v = inits[maybe[m]];
        const ph_tensor *t = candidate(v);
        uint64_t h = data_hash(shape_hash(t), t, ph_tensor_nbytes(t));
        size_t k = (size_t)h & (cap - 1);
        ph_value *keep = NULL;
        for (; table[k].v; k = (k + 1) & (cap - 1))
            if (table[k].hash == h && ph_tensor_equal(ph_value_const(table[k].v), t)) {
                keep = table[k].v;
                break;
            }
        if (!keep) {
            table[k] = (slot){h, v, 0};
            continue;
        }
        char matched[512];
        snprintf(matched, sizeof matched, "%s, %s", ph_value_name(v), ph_value_name(keep));
        if (!ph_ctx_rewrite_begin(ctx, matched))
            break;
        /* v is no graph output and keep is in v's graph: only memory can fail */
        int rc = ph_value_replace(v, keep);
        if (rc < 0) {
            free(inits);
            free(table);
            free(maybe);
            return ph_ctx_error(ctx, rc, "cannot merge initializer '%s' into '%s': %s", ph_value_name(v),
                                ph_value_name(keep), ph_strerror(rc));
        }
        ph_value_prune(v);
        merged++;
    }
    free(inits);
    free(table);
    free(maybe);
    return merged;
}

/* g and, recursively, the bodies held by its nodes. */
static int dedup_all(ph_graph *g, ph_ctx *ctx)
{
    int total = dedup_graph(g, ctx);
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
