/* tests/plugins/tp_make_cycle.c - makes the first node read the output of a
 * new Identity that reads the first node: a cycle the runner must catch. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p;
    ph_node *n = ph_graph_first_node(g);
    if (!n || ph_node_output_count(n) == 0 || ph_node_input_count(n) == 0)
        return 0;
    ph_value *out = ph_node_output(n, 0);
    ph_node *id = ph_node_create(g, NULL, "Identity", 1, &out, 1);
    if (!id)
        return ph_ctx_error(ctx, PH_ENOMEM, "cannot create Identity");
    if (ph_node_set_input(n, 0, ph_node_output(id, 0)) < 0)
        return ph_ctx_error(ctx, PH_EINVAL, "cannot rewire");
    return 1;
}

PH_PASS_DEFINE(.name = "tp_make_cycle", .summary = "creates a cycle",
               .stages = PH_STAGE_OPTIMIZE, .run = run)
