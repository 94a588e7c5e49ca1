/* tests/plugins/tp_flip_b.c - sets attribute tp_flip from 1 to 0 on every node;
 * with tp_flip_a the two undo each other forever. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p, (void)ctx;
    int changed = 0;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        if (ph_node_attr_int(n, "tp_flip", 0) != 1)
            continue;
        if (ph_node_set_attr_int(n, "tp_flip", 0) < 0)
            return ph_ctx_error(ctx, PH_ENOMEM, "cannot set tp_flip");
        changed++;
    }
    return changed;
}

PH_PASS_DEFINE(.name = "tp_flip_b", .summary = "toggle tp_flip 1 -> 0",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .run = run)
