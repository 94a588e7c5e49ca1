/* eliminate_dead_nodes - remove nodes whose results nobody reads, and unused
 * initializers.
 *
 * Seed 003 (an op whose output no other op receives): its branch goes.
 *
 * Requires: nothing.  A node is dead when none of its outputs is read by a
 *   node (nodes of If/Loop/Scan bodies that read it from an outer scope
 *   count: the IR's use lists include them) or is a graph output (of its
 *   own graph: a body's outputs are what its If/Loop/Scan returns).  An
 *   initializer is dead when nobody reads it and it is neither a graph
 *   input (then it is a default the user may override) nor a graph output.
 * Changes:  dead nodes are removed transitively, in the main graph and in
 *   every body of a node that stays, then the initializers left unused in
 *   those graphs.  One rewrite per node or initializer removed.
 * Hand-written: "no output is read" is about every node, not a pattern.
 *   The SDK's linear sweep (ph_graph_remove_dead_gated) does the work; the
 *   gate numbers each removal (--max-rewrites, --bisect).  After a sweep
 *   its gate did not stop, a later call on the same model looks only near
 *   the nodes changed since (ph_ctx_changed_nodes,
 *   ph_graph_remove_dead_near): a node dies only when an output loses its
 *   last reader or graph-output slot, and such a node is listed.
 * Exact:    yes; nothing that is computed and read changes.  (ONNX
 *   operators have no side effects; a dead random op only drew numbers
 *   nobody used.)
 */
#include <stdint.h>
#include <stdio.h>

#include <passhost/passhost.h>

typedef struct sweep {
    ph_ctx *ctx;
    int stopped; /* the gate refused a removal */
} sweep;

static int number(void *user, const ph_node *node, const ph_value *init)
{
    sweep *s = user;
    ph_ctx *ctx = s->ctx;
    char buf[512], label[200];
    if (ph_ctx_wants_names(ctx))
        snprintf(buf, sizeof buf, "%s%s", node ? "" : "initializer ",
                 node ? ph_node_label(node, label, sizeof label) : ph_value_name(init));
    int go = ph_ctx_rewrite_begin(ctx, ph_ctx_wants_names(ctx) ? buf : NULL);
    s->stopped |= !go;
    return go;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    /* memo: 1 when the last call's sweep ran to its end */
    uint64_t *swept = ph_ctx_pass_memo(ctx);
    ph_node **changed;
    size_t n_changed;
    int known = ph_ctx_changed_nodes(ctx, ph_graph_model(g), &changed, &n_changed);
    sweep s = {ctx, 0};
    int r = known == 1 && swept && *swept ? ph_graph_remove_dead_near(g, changed, n_changed, number, &s)
                                          : ph_graph_remove_dead_gated(g, number, &s);
    if (swept)
        *swept = r >= 0 && !s.stopped;
    return r;
}

PH_PASS_DEFINE(
    .name = "eliminate_dead_nodes",
    .summary = "nodes none of whose outputs is used, and unused initializers -> removed (also in bodies)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = NULL,
    .run = run)
