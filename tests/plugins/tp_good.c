/* tests/plugins/tp_good.c - a well-formed test pass with one parameter of
 * each type; changes nothing.  Used by test_loader, test_config, test_cli. */
#include <passhost/passhost.h>

static const ph_param_def params[] = {
    {"limit", PH_PARAM_INT, "3", "an int"},
    {"scale", PH_PARAM_FLOAT, "0.5", "a float"},
    {"strict", PH_PARAM_BOOL, "false", "a bool"},
    {"label", PH_PARAM_STRING, "x", "a string"},
    {NULL, 0, NULL, NULL}};

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g;
    ph_log(ctx, PH_LOG_DEBUG, "limit=%lld", (long long)ph_params_int(p, "limit"));
    return 0;
}

PH_PASS_DEFINE(.name = "tp_good", .summary = "test pass that changes nothing",
               .stages = PH_STAGE_OPTIMIZE | PH_STAGE_ADAPT, .exactness = PH_EXACT,
               .params = params, .run = run)
