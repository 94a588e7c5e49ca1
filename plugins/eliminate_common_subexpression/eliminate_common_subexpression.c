/* eliminate_common_subexpression - merge nodes that compute the same thing.
 *
 * Seed 003 (公共子图优化): nodes of the same type, parameters and inputs
 * are one computation; keep the first and let the others' readers read it.
 *
 * Requires: two nodes of one graph with the same op type and domain (the
 *   default domain only: another domain's op may be non-deterministic or
 *   have effects we cannot know), the same inputs (the same values, in
 *   order, omitted ones included), as many outputs, and equal attributes
 *   (ph_node_attrs_equal: exact, floats by their bits, tensors by bytes, so
 *   Constant nodes holding equal tensors merge).  Never merged: nodes with
 *   a subgraph (If/Loop/Scan), the random ops (RandomNormal, RandomUniform,
 *   RandomNormalLike, RandomUniformLike, Multinomial, Bernoulli), Dropout
 *   before opset 7 (is_test may be off) or with a training_mode input that
 *   is not a constant false, nodes with an attribute that cannot be
 *   compared, and nodes of different graphs.
 * Changes:  every output of the later node is replaced by the same output
 *   of the earlier one, then the later node is removed.  A graph output
 *   keeps its name: the kept node's output takes it over; when both are
 *   graph outputs (or the kept one lacks an output the other's readers
 *   need) the pair is left alone.  Main graph and every If/Loop/Scan body.
 * Hand-written: a pattern matches a fixed shape of nodes; this compares
 *   every node with all earlier ones.  Linear: one hash table of
 *   (graph, op, domain, inputs, outputs, attributes) filled in topological
 *   order (bodies just before their node, after every outer value they
 *   read), so once a node is merged its readers compare equal in turn and
 *   a whole chain collapses in one run.  A node that is the only reader of
 *   one of its inputs has no equal node before it and stays out of the
 *   table until a merge gives that input more readers (in a model without
 *   bodies): the table holds a fraction of a large graph.
 *   A later call on the same model, after a call that refused no pair and
 *   was not stopped by --max-rewrites, looks only near what changed since
 *   (ph_ctx_changed_nodes): then no two live nodes were equal, so two are
 *   equal now only if one of them was created or had an input or an
 *   attribute changed, and is listed.  The listed nodes, the nodes equal
 *   to them (they read the same inputs: found among the readers of the
 *   input with the fewest; for a node without inputs, every node of its
 *   op) and the readers of each merged node are visited in graph order,
 *   each merged into the earliest live node equal to it: the merges, and
 *   their order, of a walk of the whole graph.  Otherwise (and when the
 *   changes are a quarter of the graph or more, or bodies have nodes) the
 *   whole graph is walked.
 * Exact:    yes; deterministic operators on the same inputs give the same
 *   outputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <passhost/passhost.h>

typedef struct cse {
    ph_ctx *ctx;
    ph_hmap *seen; /* node -> the first node equal to it */
    int stopped;
    int refused; /* two equal nodes were left apart (can_merge) */
    /* the walk leaves out of the table the nodes that are alone to read one
     * of their inputs (see alone_on_an_input) */
    int skip_alone;
    /* the incremental call */
    ph_node_heap *heap;
} cse;

static uint64_t mix_str(uint64_t h, const char *s)
{
    return ph_hash_mix(h, ph_hash_bytes(0, s, strlen(s)));
}

/* 1 if n may be merged with an equal node. */
static int mergeable(const ph_node *n)
{
    /* a known op is of the default domain; only the others' domain is read */
    const char *d = ph_node_op(n) == PH_OP_UNKNOWN ? ph_node_domain(n) : "";
    if ((d[0] && strcmp(d, "ai.onnx") != 0) || ph_node_subgraph_count(n) || !ph_node_output_count(n))
        return 0;
    switch (ph_node_op(n)) {
    case PH_OP_RandomNormal:
    case PH_OP_RandomUniform:
    case PH_OP_RandomNormalLike:
    case PH_OP_RandomUniformLike:
    case PH_OP_Multinomial:
    case PH_OP_Bernoulli: return 0;
    case PH_OP_Dropout: {
        if (ph_node_opset(n) < 7)
            return 0;
        const ph_value *mode = ph_node_input(n, 2);
        const ph_tensor *t = mode ? ph_value_const(mode) : NULL;
        double on = 1;
        return !mode || (t && ph_tensor_numel(t) == 1 &&
                         ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), &on) == 0 && on == 0);
    }
    default: return 1;
    }
}

static uint64_t node_hash(const ph_node *n)
{
    uint64_t h = ph_hash_mix(ph_hash_ptr(ph_node_graph(n)), ph_node_output_count(n));
    if (ph_node_op(n) != PH_OP_UNKNOWN) /* the op names op type and domain: no strings to read */
        h = ph_hash_mix(h, (uint64_t)ph_node_op(n));
    else
        h = mix_str(mix_str(h, ph_node_op_type(n)), ph_node_domain(n));
    for (size_t i = 0; i < ph_node_input_count(n); i++)
        h = ph_hash_mix(h, (uint64_t)(uintptr_t)ph_node_input(n, i));
    return ph_hash_mix(h, ph_node_attrs_hash(n));
}

static int same(const void *pa, const void *pb, void *user)
{
    const ph_node *a = pa, *b = pb;
    if (ph_node_graph(a) != ph_node_graph(b) || ph_node_input_count(a) != ph_node_input_count(b) ||
        ph_node_output_count(a) != ph_node_output_count(b) || ph_node_op(a) != ph_node_op(b) ||
        (ph_node_op(a) == PH_OP_UNKNOWN &&
         (strcmp(ph_node_op_type(a), ph_node_op_type(b)) || strcmp(ph_node_domain(a), ph_node_domain(b)))))
        return 0;
    for (size_t i = 0; i < ph_node_input_count(a); i++)
        if (ph_node_input(a, i) != ph_node_input(b, i))
            return 0;
    return ph_node_attrs_equal(a, b);
}

/* Every needed output of dup can be replaced by kept's. */
static int can_merge(const ph_node *kept, const ph_node *dup)
{
    for (size_t i = 0; i < ph_node_output_count(dup); i++) {
        const ph_value *d = ph_node_output(dup, i), *k = ph_node_output(kept, i);
        if (!d || (!ph_value_use_count(d) && !ph_value_graph_output_count(d)))
            continue;
        if (!k || !ph_value_can_replace(d, k))
            return 0;
    }
    return 1;
}

/* n is the only reader of one of its inputs: no node visited before it is
 * equal to it (an equal node reads the same inputs), so the walk neither
 * looks it up nor enters it in the table.  A later node equal to it can
 * only come from a merge that gives that input more readers; merge() then
 * enters n (enter_lone_reader).  Most nodes of a large graph are such, and
 * the table holds the others only. */
static int alone_on_an_input(const ph_node *n)
{
    for (size_t i = 0; i < ph_node_input_count(n); i++) {
        const ph_value *v = ph_node_input(n, i);
        if (v && ph_value_use_count(v) == 1)
            return 1;
    }
    return 0;
}

/* Before dup's readers move to kept's output k: if k's only reader r was
 * visited (it is before dup, the node being visited) and left out of the
 * table, enter it, since k is about to gain readers that may equal it.
 * 0, or PH_ENOMEM. */
static int enter_lone_reader(cse *c, const ph_value *k, const ph_node *dup)
{
    if (!c->skip_alone || !k || ph_value_use_count(k) != 1)
        return 0;
    ph_node *r = ph_value_use(k, 0, NULL);
    if (!r || ph_node_is_removed(r) || !ph_node_before(r, dup) || !mergeable(r))
        return 0;
    int created;
    void **slot = ph_hmap_slot(c->seen, node_hash(r), r, &created);
    if (!slot)
        return PH_ENOMEM;
    if (created)
        *slot = r;
    return 0;
}

static int merge(cse *c, ph_node *kept, ph_node *dup)
{
    char buf[512], a[200], b[200];
    if (ph_ctx_wants_names(c->ctx))
        snprintf(buf, sizeof buf, "%s, %s", ph_node_label(kept, a, sizeof a), ph_node_label(dup, b, sizeof b));
    if (!ph_ctx_rewrite_begin(c->ctx, ph_ctx_wants_names(c->ctx) ? buf : NULL)) {
        c->stopped = 1;
        return 0;
    }
    for (size_t i = 0; i < ph_node_output_count(dup); i++) {
        ph_value *d = ph_node_output(dup, i);
        if (!d || (!ph_value_use_count(d) && !ph_value_graph_output_count(d)))
            continue;
        if (enter_lone_reader(c, ph_node_output(kept, i), dup) < 0)
            return ph_ctx_error(c->ctx, PH_ENOMEM, "out of memory");
        int rc = ph_value_replace(d, ph_node_output(kept, i));
        if (rc < 0)
            return ph_ctx_error(c->ctx, rc, "cannot merge '%s' into '%s': %s", ph_node_name(dup),
                                ph_node_name(kept), ph_strerror(rc));
    }
    int rc = ph_node_remove(dup);
    if (rc < 0)
        return ph_ctx_error(c->ctx, rc, "cannot remove '%s': %s", ph_node_name(dup), ph_strerror(rc));
    return 1;
}

static int visit(ph_node *n, void *user)
{
    cse *c = user;
    if (c->stopped || !mergeable(n) || (c->skip_alone && alone_on_an_input(n)))
        return 0;
    int created;
    void **first = ph_hmap_slot(c->seen, node_hash(n), n, &created);
    if (!first)
        return ph_ctx_error(c->ctx, PH_ENOMEM, "out of memory");
    if (created) {
        *first = n;
        return 0;
    }
    if (can_merge(*first, n))
        return merge(c, *first, n);
    c->refused = 1;
    return 0; /* both are graph outputs: n stays, later twins merge into the first */
}

/* ---------------------------------------------- near what changed only */

/* The input of n with the fewest readers (every node equal to n reads
 * it), NULL when n reads nothing. */
static const ph_value *narrowest_input(const ph_node *n)
{
    const ph_value *best = NULL;
    for (size_t i = 0; i < ph_node_input_count(n); i++) {
        const ph_value *v = ph_node_input(n, i);
        if (v && (!best || ph_value_use_count(v) < ph_value_use_count(best)))
            best = v;
    }
    return best;
}

/* Visit n as the walk would: merge it into the earliest live node equal to
 * it, or else make it the first of its kind and queue the later nodes
 * equal to it.  1 merged, 0 not, or a PH_E* code. */
static int visit_near(cse *c, ph_node *n)
{
    if (!mergeable(n))
        return 0;
    const ph_value *in = narrowest_input(n);
    ph_node *first = NULL;
    if (!in) { /* no input: every node of n's op is queued; the table finds them */
        int created;
        void **slot = ph_hmap_slot(c->seen, node_hash(n), n, &created);
        if (!slot)
            return PH_ENOMEM;
        if (created)
            *slot = n;
        else
            first = *slot;
    } else {
        for (size_t u = 0; u < ph_value_use_count(in); u++) {
            ph_node *o = ph_value_use(in, u, NULL);
            if (o == n || ph_node_is_removed(o) || !same(o, n, NULL))
                continue;
            if (ph_node_before(o, n)) {
                if (!first || ph_node_before(o, first))
                    first = o;
            } else if (ph_node_heap_push(c->heap, o) < 0) {
                return PH_ENOMEM;
            }
        }
    }
    if (!first)
        return 0;
    if (!can_merge(first, n)) {
        c->refused = 1;
        return 0;
    }
    /* n's readers read first's outputs after the merge: visited in turn */
    if (ph_node_heap_hold_readers(c->heap, n))
        return PH_ENOMEM;
    int rc = merge(c, first, n);
    if (rc > 0 && ph_node_heap_push_held(c->heap))
        return PH_ENOMEM;
    return rc;
}

/* Queue every node of g of n's op (a node without inputs can equal any of
 * them). */
static int queue_op(ph_node *n, void *user)
{
    return ph_node_heap_push(user, n) < 0 ? PH_ENOMEM : 0;
}

/* The call near changed[0..n): 0 and *done = 0 when the whole graph must
 * be walked instead; else the rewrites or a PH_E* code. */
static int run_near(cse *c, ph_graph *g, ph_node **changed, size_t n, int *done)
{
    *done = 0;
    ph_model *m = ph_graph_model(g);
    size_t nodes = ph_graph_node_count(g), budget = nodes / 4, cost = n;
    if (ph_model_node_count(m) != nodes || n >= budget)
        return 0;
    unsigned char op_queued[PH_OP__COUNT] = {0};
    for (size_t i = 0; i < n && cost < budget; i++) {
        if (ph_node_graph(changed[i]) != g)
            return 0;
        const ph_value *in = narrowest_input(changed[i]);
        ph_op op = ph_node_op(changed[i]);
        if (in) {
            cost += ph_value_use_count(in);
        } else if (op == PH_OP_UNKNOWN) {
            return 0; /* nodes of other domains have no index to go through */
        } else if (!op_queued[op]) {
            op_queued[op] = 1;
            cost += ph_model_op_count(m, op);
        }
    }
    if (cost >= budget)
        return 0;
    if (!(c->heap = ph_node_heap_new(0)))
        return PH_ENOMEM;
    int rc = 0, total = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = ph_node_heap_push(c->heap, changed[i]);
    for (int op = 0; op < PH_OP__COUNT && !rc; op++)
        if (op_queued[op]) {
            ph_op one = (ph_op)op;
            rc = ph_graph_walk_ops(g, &one, 1, queue_op, c->heap);
        }
    for (ph_node *x; rc >= 0 && !c->stopped && (x = ph_node_heap_pop(c->heap));) {
        rc = visit_near(c, x);
        if (rc == PH_ENOMEM)
            rc = ph_ctx_error(c->ctx, PH_ENOMEM, "out of memory");
        if (rc > 0)
            total += rc;
    }
    ph_node_heap_free(c->heap);
    c->heap = NULL;
    *done = 1;
    return rc < 0 ? rc : total;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    /* memo: 1 when the last call left no two live nodes equal */
    uint64_t *clean = ph_ctx_pass_memo(ctx);
    ph_node **changed;
    size_t n_changed;
    int known = ph_ctx_changed_nodes(ctx, ph_graph_model(g), &changed, &n_changed);
    cse c = {.ctx = ctx, .seen = ph_hmap_new(same, NULL)};
    if (!c.seen) {
        ph_hmap_free(c.seen);
        return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
    }
    int r = 0, done = 0;
    if (known == 1 && clean && *clean)
        r = run_near(&c, g, changed, n_changed, &done);
    if (!done && r == 0) {
        /* in bodies, a node may read an outer value that its graph's uses
         * do not show: there every node goes in the table */
        c.skip_alone = !ph_graph_has_bodies(g);
        if (!c.skip_alone && ph_hmap_reserve(c.seen, ph_model_node_count(ph_graph_model(g)))) {
            ph_hmap_free(c.seen);
            return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
        }
        r = ph_graph_walk(g, visit, &c);
    }
    ph_hmap_free(c.seen);
    if (clean)
        *clean = r >= 0 && !c.stopped && !c.refused;
    return r;
}

/* After the passes that only remove nodes: it compares every node, so it
 * should see the graph they leave (and what they expose, as Identity
 * chains that hid two equal readers). */
static const char *const run_after[] = {"constant_folding", "eliminate_identity", "eliminate_dropout",
                                        "eliminate_nop_pool", "eliminate_nop_transpose",
                                        "merge_consecutive_transpose", NULL};

PH_PASS_DEFINE(
    .name = "eliminate_common_subexpression",
    .summary = "nodes with the same op, domain, attributes and inputs -> one node (also in bodies)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = NULL,
    .run_after = run_after,
    .run = run)
