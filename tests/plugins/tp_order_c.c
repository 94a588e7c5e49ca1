/* tests/plugins/tp_order_c.c - ordering test: must run before tp_order_b */
#include <passhost/passhost.h>
static const char *const before[] = {"tp_order_b", NULL};

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_order_c", .summary = "ordering test: must run before tp_order_b", .run = run,
               .stages = PH_STAGE_OPTIMIZE, .run_before = before)
