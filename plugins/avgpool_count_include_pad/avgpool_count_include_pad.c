/* avgpool_count_include_pad - an AveragePool's count_include_pad set to the
 * one the target computes, where that changes no result.
 *
 * Icraft ReplaceAvgpoolParamPass (seed 004): "the Icraft backend only
 * supports count_include_pad = true; false is replaced by true".  With
 * padding that changes the border averages (Icraft accepts the loss); here
 * only the exact case is rewritten: a pool that pads nothing, where both
 * settings divide by the whole window.  A padded pool stays and
 * check_target_constraints reports it.
 *
 * Requires: a default-domain AveragePool whose count_include_pad (default
 *   0) differs from the parameter count_include_pad (the profile's
 *   AveragePool.count_include_pad), with no padding: pads absent or all 0,
 *   auto_pad absent, NOTSET or VALID, and ceil_mode 0 (a ceil window
 *   reaches past the input).
 * Changes:  the attribute, on a copy of the node.  Main graph and every
 *   If/Loop/Scan body.
 * Exact:    yes; without padding every window holds kernel-size elements.
 */
#include <passhost/passhost.h>

/* The node's count_include_pad ($cip) is not the target's. */
static int differs(const ph_match *m, const ph_params *params)
{
    return (ph_match_int(m, "cip", 0) != 0) != ph_params_bool(params, "count_include_pad");
}

static int set_it(ph_rewriter *rw, const ph_match *m)
{
    ph_rw_bind_int(rw, "want", ph_params_bool(ph_rw_params(rw), "count_include_pad"));
    return ph_rw_done(rw);
}

static const ph_rule rules[] = {
    {"count_include_pad",
     "y = AveragePool(x) {count_include_pad(0)=$cip, pads? all=0, auto_pad? in [\"NOTSET\", \"VALID\"], ceil_mode?=0}\n"
     "=>\n"
     "y = AveragePool(x) like y {count_include_pad=$want}",
     differs, set_it},
    {0}};

static const ph_param_def params[] = {
    {"count_include_pad", PH_PARAM_BOOL, "true", "the count_include_pad the target computes"},
    {NULL, 0, NULL, NULL},
};

static const ph_profile_key keys[] = {{"AveragePool.count_include_pad", "count_include_pad"}, {NULL, NULL}};

PH_PASS_DEFINE(
    .name = "avgpool_count_include_pad",
    .summary = "AveragePool's count_include_pad set to the target's where it pads nothing",
    .stages = PH_STAGE_ADAPT,
    .exactness = PH_EXACT,
    .params = params,
    .rules = rules,
    .profile_keys = keys)
