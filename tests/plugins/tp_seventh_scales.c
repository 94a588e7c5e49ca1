/* tests/plugins/tp_seventh_scales.c - numbers its rewrites and is exact but
 * for one: each Relu becomes Max(x, 0) in place (bit-exact), except that
 * the 7th rewrite of a call also scales the Max's input by 1.001 (a Mul
 * inserted before it).  --bisect must name this pass and rewrite 7. */
#include <stdio.h>

#include <passhost/passhost.h>

static ph_value *scalar(ph_graph *g, const char *name, float v)
{
    ph_tensor *t = ph_tensor_new(PH_DT_FLOAT, 0, NULL, &v);
    return t ? ph_graph_add_initializer(g, name, t) : NULL;
}

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p;
    int count = 0;
    ph_value *zero = NULL;
    for (ph_node *n = ph_graph_first_node(g), *next; n; n = next) {
        next = ph_node_next(n);
        if (ph_node_op(n) != PH_OP_Relu || ph_node_input_count(n) != 1 || !ph_node_input(n, 0))
            continue;
        if (!ph_ctx_rewrite_begin(ctx, ph_node_name(n)))
            break;
        if (!zero && !(zero = scalar(g, "tp7_zero", 0.0f)))
            return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
        if (ph_node_set_op_type(n, "Max") < 0 || ph_node_set_input(n, 1, zero) < 0)
            return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
        if (++count == 7) { /* the wrong one */
            ph_value *x = ph_node_input(n, 0), *s = scalar(g, "tp7_scale", 1.001f);
            ph_node *mul = s ? ph_node_create(g, n, "Mul", 2, (ph_value *const[]){x, s}, 1) : NULL;
            if (!mul || ph_node_set_input(n, 0, ph_node_output(mul, 0)) < 0)
                return ph_ctx_error(ctx, PH_ENOMEM, "out of memory");
            char added[300];
            snprintf(added, sizeof added, "%s, %s", ph_node_name(mul), ph_node_name(n));
            ph_ctx_rewrite_end(ctx, ph_node_name(n), added);
        }
    }
    return count;
}

PH_PASS_DEFINE(.name = "tp_seventh_scales",
               .summary = "Relu -> Max(x, 0), but the 7th also scales by 1.001 (numbered)",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .run = run)
