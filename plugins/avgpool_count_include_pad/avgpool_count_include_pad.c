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
#include <string.h>

#include <passhost/passhost.h>

static int pads_nothing(const ph_match *m, const ph_params *params)
{
    const ph_node *n = ph_match_root(m);
    if ((ph_node_attr_int(n, "count_include_pad", 0) != 0) == ph_params_bool(params, "count_include_pad"))
        return 0;
    const char *ap = ph_node_attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
        return 0;
    if (ph_node_attr_int(n, "ceil_mode", 0))
        return 0;
    const int64_t *pads = NULL;
    ptrdiff_t k = ph_node_attr_ints(n, "pads", &pads);
    for (ptrdiff_t i = 0; i < k; i++)
        if (pads[i])
            return 0;
    return 1;
}

static int set_it(ph_rewriter *rw, const ph_match *m)
{
    ph_node *root = ph_match_root(m);
    ph_value *x = ph_match_value(m, "x");
    ph_node *copy = ph_rw_clone(rw, root, NULL, 1, &x);
    if (copy)
        ph_node_set_attr_int(copy, "count_include_pad", ph_params_bool(ph_rw_params(rw), "count_include_pad"));
    return copy ? ph_rw_replace_root(rw, ph_node_output(copy, 0)) : ph_rw_fail(rw, PH_ENOMEM);
}

static const ph_rule rules[] = {{"count_include_pad", "y = AveragePool(x)", pads_nothing, set_it}, {0}};

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
