/* host/runner.c - the fixpoint stage runner (see runner.h). */
#include "runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit.h"
#include "report.h"
#include "util.h"
#include "verify.h"

typedef struct stage_run {
    ph_model *model;
    const host_stage_plan *plan;
    ph_ctx *ctx;
    const host_run_opts *opts;
    host_stage_stats *stats;
    size_t nodes; /* current node count, refreshed after each change */
    ph_error *err;
} stage_run;

/* Run step i once.  Returns its rewrite count (>= 0) or -HOST_EXIT_*. */
static long long call_pass(stage_run *sr, size_t i)
{
    const host_step *step = &sr->plan->steps[i];
    const ph_pass_desc *d = step->plugin->desc;
    host_pass_stats *ps = &sr->stats->passes[i];
    ph_graph *g = ph_model_graph(sr->model);
    if (ps->calls == 0)
        ps->nodes_before = sr->nodes;
    double t0 = host_now_ms();
    ph_ctx_begin_pass(sr->ctx, d->name, sr->plan->target);
    int r = host_plugin_run(step->plugin, g, step->params, sr->ctx);
    char why[sizeof sr->err->message] = "";
    if (r < 0) /* copied before end_pass can clear the pass's state */
        snprintf(why, sizeof why, "%s", ph_ctx_last_error(sr->ctx));
    ph_ctx_end_pass(sr->ctx);
    ps->ms += host_now_ms() - t0;
    ps->calls++;
    if (r < 0) {
        ph_error_set(sr->err, HOST_EXIT_PASS, "pass %s: failed: %.400s", d->name,
                     why[0] ? why : ph_strerror(r));
        return -HOST_EXIT_PASS;
    }
    if (r > 0) {
        ps->rewrites += r;
        ph_error verr = {0};
        if (ph_graph_toposort(g) < 0) {
            ph_error_set(sr->err, HOST_EXIT_PASS, "pass %s: left a cycle in the graph", d->name);
            return -HOST_EXIT_PASS;
        }
        if (sr->opts->verify_each && ph_graph_verify(g, &verr) < 0) {
            ph_error_set(sr->err, HOST_EXIT_PASS, "pass %s: broke the graph: %.400s", d->name,
                         verr.message[0] ? verr.message : ph_strerror(verr.code));
            return -HOST_EXIT_PASS;
        }
        if (sr->opts->update_shapes && ph_graph_update_shapes(g, &verr) < 0) {
            ph_error_set(sr->err, HOST_EXIT_PASS, "pass %s: left shapes that contradict each other: %.400s",
                         d->name, verr.message[0] ? verr.message : ph_strerror(verr.code));
            return -HOST_EXIT_PASS;
        }
        if (sr->opts->verify_each && sr->opts->verify) {
            int rc = host_verify_check(sr->opts->verify, sr->model, &verr);
            if (rc) {
                ph_error_set(sr->err, rc, "pass %s: %s: %.400s", d->name,
                             rc == HOST_EXIT_MISMATCH ? "broke numeric equivalence" : "left a model the evaluator cannot run",
                             verr.message);
                return -rc;
            }
        }
        sr->nodes = ph_model_node_count(sr->model);
    }
    ps->nodes_after = sr->nodes;
    return r;
}

static void warn_cap(stage_run *sr, const char *changed)
{
    host_stage_stats *st = sr->stats;
    st->hit_cap = 1;
    if (!sr->opts->log)
        return;
    char names[600] = "";
    for (size_t i = 0; i < st->count; i++) {
        if (!changed[i])
            continue;
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", st->passes[i].name);
    }
    host_log_msg(sr->opts->log, PH_LOG_WARN, NULL,
                 "stage %s: no fixpoint after %d rounds (max_iterations); still changing in "
                 "the last round: %s", host_stage_name(st->stage), st->rounds, names);
}

/* Rounds of the repeatable passes until one makes no rewrite. */
static int run_fixpoint(stage_run *sr)
{
    size_t n = sr->plan->count;
    char *changed = host_xcalloc(n, 1);
    int repeatable = 0;
    for (size_t i = 0; i < n; i++)
        repeatable |= !sr->plan->steps[i].plugin->desc->run_once;
    long long total = repeatable;
    int rc = 0;
    while (total > 0 && sr->stats->rounds < sr->plan->max_iterations && !rc) {
        sr->stats->rounds++;
        total = 0;
        memset(changed, 0, n);
        for (size_t i = 0; i < n && !rc; i++) {
            if (sr->plan->steps[i].plugin->desc->run_once)
                continue;
            long long r = call_pass(sr, i);
            if (r < 0)
                rc = (int)-r;
            changed[i] = r > 0;
            total += r > 0 ? r : 0;
        }
    }
    if (!rc && total > 0)
        warn_cap(sr, changed);
    free(changed);
    return rc;
}

int host_run_stage(ph_model *m, const host_stage_plan *sp, ph_ctx *ctx,
                   const host_run_opts *opts, host_stage_stats *stats, ph_error *err)
{
    memset(stats, 0, sizeof *stats);
    stats->stage = sp->stage;
    stats->target = sp->target;
    stats->count = sp->count;
    stats->passes = host_xcalloc(sp->count, sizeof *stats->passes);
    for (size_t i = 0; i < sp->count; i++) {
        stats->passes[i].name = sp->steps[i].plugin->desc->name;
        stats->passes[i].run_once = sp->steps[i].plugin->desc->run_once;
    }
    stage_run sr = {.model = m, .plan = sp, .ctx = ctx, .opts = opts, .stats = stats,
                    .nodes = ph_model_node_count(m), .err = err};
    stats->nodes_before = sr.nodes;
    for (size_t i = 0; i < sp->count; i++)
        stats->passes[i].nodes_before = stats->passes[i].nodes_after = sr.nodes;
    double t0 = host_now_ms();
    int rc = run_fixpoint(&sr);
    for (size_t i = 0; i < sp->count && !rc; i++) {
        if (!sp->steps[i].plugin->desc->run_once)
            continue;
        long long r = call_pass(&sr, i);
        if (r < 0)
            rc = (int)-r;
    }
    stats->ms = host_now_ms() - t0;
    stats->nodes_after = sr.nodes;
    return rc;
}

void host_stage_stats_free(host_stage_stats *stats)
{
    if (!stats)
        return;
    free(stats->passes);
    stats->passes = NULL;
    stats->count = 0;
}
