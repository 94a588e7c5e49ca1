/* inline_constant_if - an If whose condition is a constant -> the branch it
 * takes, inlined.
 *
 * Exporters keep the control flow of scripted models (torch.jit.script's
 * `if x.dim() == 1`, `if sr == 16000`, checks that raise): once constant
 * folding has made the condition a constant, the If only costs a subgraph
 * call and hides its branch from every other pass.  onnxoptimizer and
 * onnx-simplifier inline such Ifs too.
 *
 * Requires: a default-domain If whose condition is a constant with one
 *   element of dtype bool: an initializer that is no graph input, or a
 *   Constant node's `value`; the branch it takes (then_branch for true,
 *   else_branch for false) has no inputs and as many outputs as the If.
 * Changes: the taken branch's nodes, initializers and value_info move into
 *   the If's graph just before it (ph_node_inline_subgraph): value names are
 *   unique in the model and stay as they were, a node name that another
 *   node of the model has too is made unique, and values the branch read
 *   from outer scopes are read directly.  Each output of the If is replaced
 *   by the branch's output (graph outputs keep their names; an Identity
 *   stands in where the branch returns a graph input or an outer value as a
 *   graph output).  The If and its other branch are removed; the condition
 *   goes when nothing else reads it.  Bodies are walked first, so an If
 *   nested in a taken branch is inlined before it, and Ifs inside Loop and
 *   Scan bodies are inlined into those bodies.
 * Exact: yes; the nodes of the taken branch compute what the If returned.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <passhost/passhost.h>

/* The condition's value: 1 true, 0 false, -1 not a one-element bool constant. */
static int constant_condition(const ph_value *cond)
{
    const ph_tensor *t = ph_value_const(cond);
    const ph_node *p = t ? NULL : ph_value_producer(cond);
    if (p && ph_node_op(p) == PH_OP_Constant && !ph_node_domain(p)[0])
        t = ph_node_attr_tensor(p, "value");
    if (!t || ph_tensor_dtype(t) != PH_DT_BOOL || ph_tensor_numel(t) != 1)
        return -1;
    const uint8_t *b = ph_tensor_data(t);
    return b ? b[0] != 0 : -1;
}

/* The index (ph_node_subgraph) of the If's branch `name`, or -1. */
static ptrdiff_t branch_index(const ph_node *n, const char *name)
{
    const ph_graph *b = ph_node_attr_graph(n, name);
    for (size_t i = 0; b && i < ph_node_subgraph_count(n); i++)
        if (ph_node_subgraph(n, i) == b)
            return (ptrdiff_t)i;
    return -1;
}

static int inline_if(ph_node *n, void *user)
{
    ph_ctx *ctx = user;
    if (ph_node_domain(n)[0] || ph_node_input_count(n) < 1 || !ph_node_input(n, 0))
        return 0;
    ph_value *cond = ph_node_input(n, 0);
    int taken = constant_condition(cond);
    ptrdiff_t i = taken < 0 ? -1 : branch_index(n, taken ? "then_branch" : "else_branch");
    if (i < 0)
        return 0;
    const ph_graph *b = ph_node_subgraph(n, (size_t)i);
    if (ph_graph_input_count(b) || ph_graph_output_count(b) != ph_node_output_count(n))
        return 0;
    char matched[300] = "";
    if (ctx && ph_ctx_wants_names(ctx))
        ph_node_label(n, matched, sizeof matched);
    if (ctx && !ph_ctx_rewrite_begin(ctx, matched[0] ? matched : NULL))
        return 0;
    int rc = ph_node_inline_subgraph(n, (size_t)i);
    if (rc < 0)
        return rc;
    ph_value_prune(cond);
    if (ctx)
        ph_ctx_rewrite_end(ctx, matched[0] ? matched : NULL, NULL);
    return 1;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    (void)params;
    static const ph_op ifs[] = {PH_OP_If};
    return ph_graph_walk_ops(g, ifs, 1, inline_if, ctx);
}

PH_PASS_DEFINE(
    .name = "inline_constant_if",
    .summary = "If whose condition is a constant -> the taken branch inlined",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .run = run)
