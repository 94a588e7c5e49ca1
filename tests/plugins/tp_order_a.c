/* tests/plugins/tp_order_a.c - ordering test: must run after tp_order_b */
#include <passhost/passhost.h>
static const char *const after[] = {"tp_order_b", "not_loaded_pass", NULL};

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_order_a", .summary = "ordering test: must run after tp_order_b", .run = run,
               .stages = PH_STAGE_OPTIMIZE, .run_after = after)
