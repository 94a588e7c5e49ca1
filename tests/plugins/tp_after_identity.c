/* tests/plugins/tp_after_identity.c - a third-party pass whose place in the
 * pipeline is a hint on a built-in pass: run after eliminate_identity.
 * Changes nothing.  Used by test_pipeline_order. */
#include <passhost/passhost.h>
static const char *const after[] = {"eliminate_identity", NULL};

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_after_identity", .summary = "ordering test: runs after eliminate_identity",
               .run = run, .stages = PH_STAGE_OPTIMIZE, .run_after = after)
