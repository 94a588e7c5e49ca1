/* tests/plugins/tp_bad_default.c - malformed: an int parameter whose
 * default does not parse. */
#include <passhost/passhost.h>

static const ph_param_def params[] = {{"count", PH_PARAM_INT, "many", "bad default"},
                                      {NULL, 0, NULL, NULL}};

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)g, (void)p, (void)ctx;
    return 0;
}

PH_PASS_DEFINE(.name = "tp_bad_default", .summary = "bad default",
               .stages = PH_STAGE_OPTIMIZE, .params = params, .run = run)
