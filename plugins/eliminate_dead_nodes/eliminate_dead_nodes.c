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
 *   gate numbers each removal (--max-rewrites, --bisect).
 * Exact:    yes; nothing that is computed and read changes.  (ONNX
 *   operators have no side effects; a dead random op only drew numbers
 *   nobody used.)
 */
#include <stdio.h>

#include <passhost/passhost.h>

static int number(void *user, const ph_node *node, const ph_value *init)
{
    ph_ctx *ctx = user;
    char buf[512], label[200];
    if (ph_ctx_wants_names(ctx))
        snprintf(buf, sizeof buf, "%s%s", node ? "" : "initializer ",
                 node ? ph_node_label(node, label, sizeof label) : ph_value_name(init));
    return ph_ctx_rewrite_begin(ctx, ph_ctx_wants_names(ctx) ? buf : NULL);
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    return ph_graph_remove_dead_gated(g, number, ctx);
}

PH_PASS_DEFINE(
    .name = "eliminate_dead_nodes",
    .summary = "nodes none of whose outputs is used, and unused initializers -> removed (also in bodies)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = NULL,
    .run = run)
