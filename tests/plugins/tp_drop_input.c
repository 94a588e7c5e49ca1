/* tests/plugins/tp_drop_input.c - omits input 1 of the first node that has
 * one (Conv's weight, Add's second operand, ...): the graph is still SSA and
 * acyclic, but ONNX's operator schema, so the verifier, refuses it, and
 * passhost must then write nothing. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        if (!ph_node_input(n, 1))
            continue;
        if (ph_node_set_input(n, 1, NULL) < 0)
            return ph_ctx_error(ctx, PH_EINVAL, "cannot omit an input");
        return 1;
    }
    return 0;
}

PH_PASS_DEFINE(.name = "tp_drop_input", .summary = "omits a required input",
               .stages = PH_STAGE_OPTIMIZE, .run_once = 1, .run = run)
