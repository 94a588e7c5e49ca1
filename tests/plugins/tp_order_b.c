/* tests/plugins/tp_order_b.c - ordering test: no hints of its own */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_order_b", .summary = "ordering test: no hints of its own", .run = run,
               .stages = PH_STAGE_OPTIMIZE)
