/* tests/plugins/tp_cycle_x.c - ordering cycle: after tp_cycle_y */
#include <passhost/passhost.h>
static const char *const after[] = {"tp_cycle_y", NULL};

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_cycle_x", .summary = "ordering cycle: after tp_cycle_y", .run = run,
               .stages = PH_STAGE_OPTIMIZE, .run_after = after)
