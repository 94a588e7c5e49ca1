/* tests/plugins/tp_wrong_math.c - claims to be exact but turns one Relu into a
 * Sigmoid per call: the graph stays valid, its outputs change.  --verify
 * must catch it and --verify-each must name it. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        if (ph_node_op(n) == PH_OP_Relu)
            return ph_node_set_op_type(n, "Sigmoid") < 0 ? ph_ctx_error(ctx, PH_ENOMEM, "oom") : 1;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_wrong_math", .summary = "Relu -> Sigmoid (wrong on purpose)",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .run = run)
