/* tests/plugins/tp_once.c - a run-once pass that counts its calls in the
 * attribute tp_once_calls of the first node (one rewrite per call). */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p;
    ph_node *n = ph_graph_first_node(g);
    if (!n)
        return 0;
    int64_t calls = ph_node_attr_int(n, "tp_once_calls", 0);
    if (ph_node_set_attr_int(n, "tp_once_calls", calls + 1) < 0)
        return ph_ctx_error(ctx, PH_ENOMEM, "cannot set tp_once_calls");
    return 1;
}

PH_PASS_DEFINE(.name = "tp_once", .summary = "run once, count calls", .run_once = 1,
               .stages = PH_STAGE_OPTIMIZE | PH_STAGE_ADAPT, .exactness = PH_EXACT, .run = run)
