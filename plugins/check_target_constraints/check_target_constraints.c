/* check_target_constraints - the model against the adapt stage's target
 * profile: every node the target would refuse, reported; nothing changed.
 *
 * Requires: a target profile (--target, [adapt] target): on by default for
 *   every profile (targets "*"), off without one.
 * Reports:  through ph_ctx_violation, one violation per node and
 *   constraint (ph_target_check, passhost/target.h; docs/targets.md says
 *   what each key measures): unsupported operators and opsets, dtypes,
 *   ranks, implicit broadcasting, consecutive no-instruction operators,
 *   kernel, stride, pad and dilation limits, pool and resize limits, Split
 *   axes, Expand's broadcast dims, TopK's index dtype.  Main graph and
 *   every If/Loop/Scan body (the violation names the body's path).  The
 *   host puts them in its report (a table, --report-json, --report-html)
 *   and, with --strict-target, fails the run when one remains.
 * Changes:  nothing (runs once, after the other adapt passes).
 * Exact:    yes.
 */
#include <passhost/passhost.h>

static int forward(void *user, const ph_violation *v)
{
    return ph_ctx_violation(user, v);
}

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p;
    const ph_target *t = ph_ctx_profile(ctx);
    if (!t)
        return 0;
    int n = ph_target_check(t, ph_graph_model(g), forward, ctx);
    if (n < 0)
        return ph_ctx_error(ctx, n, "checking the model against target %s failed (%s)", ph_target_name(t),
                            ph_strerror(n));
    return 0;
}

PH_PASS_DEFINE(.name = "check_target_constraints",
               .summary = "report every node the target profile does not support; rewrites nothing",
               .stages = PH_STAGE_ADAPT, .on_by_default = 1, .targets = "*", .run_once = 1, .exactness = PH_EXACT, .run = run)
