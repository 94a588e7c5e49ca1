/* eliminate_duplicate_initializer - merge initializers holding the same data.
 *
 * Requires: two initializers of one graph with the same dtype, shape and
 *   bytes (ph_tensor_equal), neither of which is a graph input (an input's
 *   initializer is only a default the user may override) nor a graph
 *   output (its name is part of the interface), and whose data can be read
 *   (not string tensors, not unreadable external data).
 * Changes:  every user of the later one (in file order) reads the first one
 *   instead, and the later one is removed.  Cost is linear in the bytes: each
 *   candidate's dtype, dims and bytes are hashed once (FNV-1a, 64 bits) into
 *   an open-addressing table, and bytes are compared in full only when the
 *   hashes match.  Runs per graph: the main graph, then each If/Loop/Scan
 *   body on its own initializers.
 * Leaves:   initializers that differ in anything (e.g. the same bytes under
 *   another dtype or shape), graph inputs and outputs.
 * Exact:    yes; users read identical data.
 */
#include <stdlib.h>
#include <string.h>

#include <passhost/passhost.h>

typedef struct slot {
    uint64_t hash;
    ph_value *v; /* NULL = empty */
} slot;

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t tensor_hash(const ph_tensor *t)
{
    uint64_t h = 0xcbf29ce484222325ull;
    int64_t head[2] = {ph_tensor_dtype(t), (int64_t)ph_tensor_rank(t)};
    h = fnv1a(h, head, sizeof head);
    if (ph_tensor_rank(t))
        h = fnv1a(h, ph_tensor_dims(t), ph_tensor_rank(t) * sizeof(int64_t));
    return fnv1a(h, ph_tensor_data(t), ph_tensor_nbytes(t));
}

/* An initializer this pass may merge (keep or drop). */
static const ph_tensor *candidate(const ph_value *v)
{
    const ph_tensor *t = ph_value_const(v);
    if (!t || ph_value_graph_output_count(v) || ph_tensor_dtype(t) == PH_DT_STRING || !ph_tensor_data(t))
        return NULL;
    return t;
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
    size_t cap = 4;
    while (cap < 2 * n)
        cap *= 2;
    slot *table = calloc(cap, sizeof *table);
    if (!inits || !table) {
        free(inits);
        free(table);
        return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        inits[i] = ph_graph_initializer(g, i);

    int merged = 0;
    for (size_t i = 0; i < n; i++) {
        ph_value *v = inits[i];
        const ph_tensor *t = candidate(v);
        if (!t)
            continue;
        uint64_t h = tensor_hash(t);
        size_t k = (size_t)h & (cap - 1);
        ph_value *keep = NULL;
        for (; table[k].v; k = (k + 1) & (cap - 1))
            if (table[k].hash == h && ph_tensor_equal(ph_value_const(table[k].v), t)) {
                keep = table[k].v;
                break;
            }
        if (!keep) {
            table[k] = (slot){h, v};
            continue;
        }
        /* v is no graph output and keep is in v's graph: only memory can fail */
        int rc = ph_value_replace(v, keep);
        if (rc < 0) {
            free(inits);
            free(table);
            return ph_ctx_error(ctx, rc, "cannot merge initializer '%s' into '%s': %s", ph_value_name(v),
                                ph_value_name(keep), ph_strerror(rc));
        }
        ph_value_prune(v);
        merged++;
    }
    free(inits);
    free(table);
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

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    (void)params;
    return dedup_all(g, ctx);
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
