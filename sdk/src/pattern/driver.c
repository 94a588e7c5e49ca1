/* sdk/src/pattern/driver.c - placeholder while the engine is written. */
#include "internal.h"

PH_API ph_ruleset *ph_ruleset_new(const ph_rule *rules, ph_error *err)
{
    ph_error_set(err, PH_EINVAL, "pattern rules are not supported yet");
    return NULL;
}
PH_API void ph_ruleset_free(ph_ruleset *rs) { (void)rs; }
PH_API int ph_ruleset_run(ph_ruleset *rs, ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    return PH_EINVAL;
}
