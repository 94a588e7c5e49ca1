/* tests/plugins/tp_small_size.c - malformed: struct_size too small to hold
 * the fields of ABI 1.0. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

static const ph_pass_desc desc = {
    .abi_major = PH_ABI_MAJOR, .abi_minor = PH_ABI_MINOR, .struct_size = 16,
    .name = "tp_small_size", .summary = "short", .stages = PH_STAGE_OPTIMIZE, .run = run};

PH_PLUGIN_EXPORT const ph_pass_desc *passhost_pass_descriptor(void);
const ph_pass_desc *passhost_pass_descriptor(void)
{
    return &desc;
}
