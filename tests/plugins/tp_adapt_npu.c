/* tests/plugins/tp_adapt_npu.c - adapt only, on by default for target npu */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_adapt_npu", .summary = "adapt only, on by default for target npu", .run = run,
               .stages = PH_STAGE_ADAPT, .on_by_default = 1, .targets = "npu;dsp")
