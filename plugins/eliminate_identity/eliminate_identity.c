/* eliminate_identity - remove Identity nodes.
 *
 * Requires: an Identity of the default domain with its input present.
 * Changes:  every user of the Identity's output reads the Identity's input
 *           instead, and the Identity is removed.  Runs in the main graph and,
 *           recursively, in every If/Loop/Scan body.
 *           When the output is a graph output, the input takes over its name
 *           (a node output, or an initializer of the main graph).
 * Leaves:   an Identity whose output is a graph output that cannot be
 *           redirected (ph_value_can_replace: the input is a graph input,
 *           itself a graph output, an initializer of a body, or from an
 *           enclosing graph), since the output name is part of the model's
 *           interface.
 * Exact:    yes; Identity copies its input.
 */
#include <passhost/passhost.h>

static int is_identity(const ph_node *n)
{
    return ph_node_op(n) == PH_OP_Identity && ph_node_domain(n)[0] == '\0' &&
           ph_node_input_count(n) >= 1 && ph_node_input(n, 0) && ph_node_output_count(n) == 1;
}

/* Bypass one Identity: 1 if removed, 0 if left, or a PH_E* code. */
static int bypass_identity(ph_node *n, ph_ctx *ctx)
{
    ph_value *in = ph_node_input(n, 0), *out = ph_node_output(n, 0);
    if (!ph_value_can_replace(out, in))
        return 0;
    if (!ph_ctx_rewrite_begin(ctx, ph_node_name(n)))
        return 0;
    int rc = ph_node_bypass(n, 0, in);
    if (rc < 0)
        return ph_ctx_error(ctx, rc, "cannot bypass Identity '%s': %s", ph_node_name(n),
                            ph_strerror(rc));
    return 1;
}

/* One node of the walk: bypass it if it is an Identity. */
static int visit(ph_node *n, void *ctx)
{
    return is_identity(n) ? bypass_identity(n, ctx) : 0;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    return ph_graph_walk(g, visit, ctx);
}

PH_PASS_DEFINE(
    .name = "eliminate_identity",
    .summary = "Identity -> bypass (also inside If/Loop/Scan bodies)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .run = run)
