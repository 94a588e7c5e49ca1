/* tests/plugins/tp_bad_profile_key.c - declares a profile key the format
 * does not have (Conv.max_kernal_area): a load error. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

static const ph_profile_key keys[] = {{"Conv.max_kernal_area", NULL}, {NULL, NULL}};

PH_PASS_DEFINE(.name = "tp_bad_profile_key", .summary = "declares a misspelt profile key", .run = run,
               .stages = PH_STAGE_ADAPT, .profile_keys = keys)
