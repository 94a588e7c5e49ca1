/* tests/plugins/tp_fail.c - always fails with PH_EPASS. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p;
    return ph_ctx_error(ctx, PH_EPASS, "deliberate failure");
}

PH_PASS_DEFINE(.name = "tp_fail", .summary = "always fails",
               .stages = PH_STAGE_OPTIMIZE | PH_STAGE_ADAPT, .run = run)
