/* tests/plugins/tp_cycle_y.c - ordering cycle: after tp_cycle_x */
#include <passhost/passhost.h>
static const char *const after[] = {"tp_cycle_x", NULL};

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_cycle_y", .summary = "ordering cycle: after tp_cycle_x", .run = run,
               .stages = PH_STAGE_OPTIMIZE, .run_after = after)
