/* tests/plugins/tp_approx.c - changes results by design */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_approx", .summary = "changes results by design", .run = run,
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_APPROX)
