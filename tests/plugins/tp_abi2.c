/* tests/plugins/tp_abi2.c - a descriptor claiming plugin ABI 2.0. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

static const ph_pass_desc desc = {
    .abi_major = 2, .abi_minor = 0, .struct_size = sizeof(ph_pass_desc),
    .name = "tp_abi2", .summary = "from the future", .stages = PH_STAGE_OPTIMIZE, .run = run};

PH_PLUGIN_EXPORT const ph_pass_desc *passhost_pass_descriptor(void);
const ph_pass_desc *passhost_pass_descriptor(void)
{
    return &desc;
}
