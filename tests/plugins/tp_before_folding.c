/* tests/plugins/tp_before_folding.c - a third-party pass whose place in the
 * pipeline is a hint on a built-in pass: run before constant_folding.
 * Changes nothing.  Used by test_pipeline_order. */
#include <passhost/passhost.h>
static const char *const before[] = {"constant_folding", NULL};

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_before_folding", .summary = "ordering test: runs before constant_folding",
               .run = run, .stages = PH_STAGE_OPTIMIZE, .run_before = before)
