/* example_double_neg - an out-of-tree passhost pass: Neg(Neg(x)) -> x.
 *
 * Built against the installed SDK only (see Makefile and README.md).
 *
 * Requires: a default-domain Neg whose input is produced by another
 *   default-domain Neg, and the outer Neg's output redirectable to x
 *   (ph_value_can_replace: a graph output keeps its name only when x can
 *   take it over).
 * Changes:  users of the outer Neg read x; the outer Neg is removed, and the
 *   inner one too when nothing else reads it.  Main graph only.
 * Exact:    yes: negating twice flips the sign bit twice (and two's
 *   complement wraps back for integers).
 */
#include <passhost/passhost.h>

static int is_neg(const ph_node *n)
{
    return n && ph_node_op(n) == PH_OP_Neg && ph_node_domain(n)[0] == '\0' &&
           ph_node_input_count(n) == 1 && ph_node_input(n, 0) != NULL;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    (void)params;
    int rewrites = 0;
    ph_node *next;
    for (ph_node *outer = ph_graph_first_node(g); outer; outer = next) {
        next = ph_node_next(outer);
        if (ph_node_is_removed(outer) || !is_neg(outer))
            continue;
        ph_value *mid = ph_node_input(outer, 0);
        ph_node *inner = ph_value_producer(mid);
        if (!is_neg(inner))
            continue;
        ph_value *x = ph_node_input(inner, 0);
        if (!ph_value_can_replace(ph_node_output(outer, 0), x))
            continue;
        int rc = ph_node_bypass(outer, 0, x);
        if (rc < 0)
            return ph_ctx_error(ctx, rc, "cannot bypass Neg '%s'", ph_node_name(outer));
        ph_value_prune(mid);
        rewrites++;
    }
    return rewrites;
}

PH_PASS_DEFINE(
    .name = "example_double_neg",
    .summary = "example out-of-tree pass: Neg(Neg(x)) -> x",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_EXACT,
    .run = run)
