/* tests/plugins/tp_profile_keys.c - adapt only, off by default; reads two
 * profile keys (Conv.max_kernel_area into its parameter max_area, and
 * broadcast) so a profile that constrains either switches it on. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

static const ph_param_def params[] = {
    {"max_area", PH_PARAM_INT, "0", "largest kernel area (0: no limit)"},
    {"label", PH_PARAM_STRING, "", "free text"},
    {NULL, 0, NULL, NULL},
};

static const ph_profile_key keys[] = {
    {"Conv.max_kernel_area", "max_area"},
    {"broadcast", NULL},
    {NULL, NULL},
};

PH_PASS_DEFINE(.name = "tp_profile_keys", .summary = "reads Conv.max_kernel_area and broadcast", .run = run,
               .stages = PH_STAGE_ADAPT, .params = params, .profile_keys = keys)
