/* tests/plugins/tp_empty_name.c - malformed: the name is "". */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

PH_PASS_DEFINE(.name = "", .summary = "empty name", .stages = PH_STAGE_OPTIMIZE, .run = run)
