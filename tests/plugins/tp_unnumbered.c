/* tests/plugins/tp_unnumbered.c - an older-style pass that does not number
 * its rewrites (never calls ph_ctx_rewrite_begin): every Neg becomes
 * Mul(x, -1) in place, exact.  It runs before tp_seventh_scales.  The host
 * numbers its rewrites itself and can only stop it between calls. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p;
    int count = 0;
    ph_value *minus_one = NULL;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        if (ph_node_op(n) != PH_OP_Neg || ph_node_input_count(n) != 1 || !ph_node_input(n, 0))
            continue;
        if (!minus_one) {
            float v = -1.0f;
            ph_tensor *t = ph_tensor_new(PH_DT_FLOAT, 0, NULL, &v);
            if (!t || !(minus_one = ph_graph_add_initializer(g, "tpu_minus_one", t)))
                return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
        }
        if (ph_node_set_op_type(n, "Mul") < 0 || ph_node_set_input(n, 1, minus_one) < 0)
            return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
        count++;
    }
    return count;
}

static const char *const run_before[] = {"tp_seventh_scales", NULL};

PH_PASS_DEFINE(.name = "tp_unnumbered", .summary = "Neg -> Mul(x, -1), without numbering",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .run_before = run_before,
               .run = run)
