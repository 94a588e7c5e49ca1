/* tests/plugins/tp_claims_nothing.c - reports one rewrite on every call and
 * changes nothing: the runner must notice and name it. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 1;
}

PH_PASS_DEFINE(.name = "tp_claims_nothing", .summary = "reports a rewrite it does not make",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .run = run)
