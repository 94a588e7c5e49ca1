/* tests/plugins/tp_one_step.c - removes at most one Identity node per call,
 * so a chain of k Identities needs k rounds (plus one to see no change). */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p, (void)ctx;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        if (ph_node_op(n) != PH_OP_Identity || ph_node_input(n, 0) == NULL)
            continue;
        if (ph_node_bypass(n, 0, ph_node_input(n, 0)) == 0)
            return 1;
    }
    return 0;
}

PH_PASS_DEFINE(.name = "tp_one_step", .summary = "remove one Identity per call",
               .stages = PH_STAGE_OPTIMIZE | PH_STAGE_ADAPT, .exactness = PH_EXACT, .run = run)
