/* tests/plugins/tp_exact_div.c - claims to be exact but is not always: each
 * Div by a one-element float constant c becomes Mul by 1/c, one numbered
 * rewrite per Div.  Bit-identical when c is a power of two (1/c is exact),
 * a rounding away otherwise: within any error budget, but a broken promise
 * that --verify-each and --bisect must name. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p;
    int count = 0;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        if (ph_node_op(n) != PH_OP_Div || ph_node_input_count(n) != 2)
            continue;
        const ph_tensor *c = ph_value_const(ph_node_input(n, 1));
        double d;
        if (!c || ph_tensor_dtype(c) != PH_DT_FLOAT || ph_tensor_numel(c) != 1 ||
            ph_tensor_read_f64(c, ph_tensor_rank(c), ph_tensor_dims(c), &d) != 0 || d == 0)
            continue;
        if (!ph_ctx_rewrite_begin(ctx, ph_node_name(n)))
            break;
        float r = (float)(1.0 / d);
        ph_tensor *t = ph_tensor_new(PH_DT_FLOAT, 0, NULL, &r);
        ph_value *rv = t ? ph_graph_add_initializer(g, "tp_recip", t) : NULL;
        if (!rv || ph_node_set_op_type(n, "Mul") < 0 || ph_node_set_input(n, 1, rv) < 0)
            return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
        count++;
    }
    return count;
}

PH_PASS_DEFINE(.name = "tp_exact_div", .summary = "Div by constant -> Mul by its reciprocal, declared exact",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .run = run)
