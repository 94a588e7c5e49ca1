/* tests/plugins/tp_dup_a.c - one of two plugins both named "tp_dup". */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_dup", .summary = "duplicate a", .stages = PH_STAGE_OPTIMIZE,
               .run = run)
