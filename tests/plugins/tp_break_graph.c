/* tests/plugins/tp_break_graph.c - clears the op_type of the first node, which
 * the verifier rejects: --verify-each right after the pass, else the check
 * before the save (the run fails naming this pass; nothing is written). */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p;
    ph_node *n = ph_graph_first_node(g);
    if (!n || !*ph_node_op_type(n))
        return 0;
    if (ph_node_set_op_type(n, "") < 0)
        return ph_ctx_error(ctx, PH_EINVAL, "cannot clear op_type");
    return 1;
}

PH_PASS_DEFINE(.name = "tp_break_graph", .summary = "breaks the graph",
               .stages = PH_STAGE_OPTIMIZE, .run = run)
