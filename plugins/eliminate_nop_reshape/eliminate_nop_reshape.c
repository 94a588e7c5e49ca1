/* eliminate_nop_reshape - remove Reshape/Flatten/Squeeze/Unsqueeze that keep
 * the shape of their input.
 *
 * Icraft RemoveUselessReshapePass (seed 004): a reshaping operator whose
 * output has exactly its input's shape moves no element (all four operators
 * keep the row-major order of the data), so it is the identity.
 *
 * Requires: a default-domain Reshape, Flatten, Squeeze or Unsqueeze with its
 *   data input and one output, where the output's shape provably equals the
 *   input's (ph_value_same_shape on the inferred types: same rank, each dim
 *   the same number or the same symbolic name; an unknown dim never
 *   matches), and the output redirectable (ph_value_can_replace) when it is
 *   a graph output.  The shapes come from the host's shape inference (and
 *   the model's declared value_info, which inference checks against); a
 *   node whose shapes are unknown is left alone.
 * Changes:  users of the output read the input; the node is removed, and
 *   its shape / axes operand is pruned when nothing else uses it.  Main
 *   graph and every If/Loop/Scan body.
 * Exact:    yes; no data is moved or computed.
 */
#include <passhost/passhost.h>

static int is_reshaping(const ph_node *n)
{
    switch (ph_node_op(n)) {
    case PH_OP_Reshape:
    case PH_OP_Flatten:
    case PH_OP_Squeeze:
    case PH_OP_Unsqueeze:
        break;
    default:
        return 0;
    }
    return ph_node_domain(n)[0] == '\0' && ph_node_input_count(n) >= 1 && ph_node_input(n, 0) &&
           ph_node_output_count(n) == 1;
}

/* One node of the walk: bypass it if it keeps its input's shape. */
static int visit(ph_node *n, void *user)
{
    ph_ctx *ctx = user;
    if (!is_reshaping(n))
        return 0;
    ph_value *x = ph_node_input(n, 0), *y = ph_node_output(n, 0);
    if (!ph_value_same_shape(x, y) || !ph_value_can_replace(y, x))
        return 0;
    ph_value *operand = ph_node_input_count(n) > 1 ? ph_node_input(n, 1) : NULL;
    if (!ph_ctx_rewrite_begin(ctx, ph_node_name(n)))
        return 0;
    int rc = ph_node_bypass(n, 0, x);
    if (rc < 0)
        return ph_ctx_error(ctx, rc, "cannot bypass %s '%s': %s", ph_node_op_type(n), ph_node_name(n),
                            ph_strerror(rc));
    if (operand)
        ph_value_prune(operand);
    return 1;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    return ph_graph_walk(g, visit, ctx);
}

PH_PASS_DEFINE(
    .name = "eliminate_nop_reshape",
    .summary = "Reshape/Flatten/Squeeze/Unsqueeze whose output shape equals its input shape -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .run = run)
