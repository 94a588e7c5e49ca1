/* host/run/runner.c - the fixpoint stage runner (see runner.h). */
#include "runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/dump.h"
#include "base/exit.h"
#include "fingerprint.h"
#include "log/log.h"
#include "log/trace.h"
#include "base/util.h"
#include "check/verify.h"
#include "config/profile.h"
#include "check/target_report.h"

typedef struct stage_run {
    ph_model *model;
    const host_stage_plan *plan;
    ph_ctx *ctx;
    const host_run_opts *opts;
    host_stage_stats *stats;
    size_t nodes; /* current node count, refreshed after each change */
    ph_error *err;
    /* --dump-dir: node names the running pass gave for its rewrites */
    char **names;
    size_t n_names, cap_names;
    unsigned local_seq; /* dump numbering when opts->dump_seq is NULL */
    ph_worklist *rules;  /* the stage's rule passes (stage_worklist) */
    size_t *member;      /* per step: its member in rules, or NOT_A_MEMBER */
    ph_hmap *fp_ids;     /* scratch of the structure fingerprint (fingerprint.h) */
} stage_run;

#define NOT_A_MEMBER ((size_t)-1)

/* The rule passes of a stage share one worklist (ph_worklist): its members
 * are the plan's steps that have rules, in the plan's order, which is the
 * pipeline's.  member[i] gets step i's member index (NOT_A_MEMBER for a
 * hand-written pass).  NULL when the stage has no rule pass. */
static ph_worklist *stage_worklist(const host_stage_plan *sp, size_t *member, ph_error *err)
{
    ph_ruleset **sets = host_xcalloc(sp->count ? sp->count : 1, sizeof *sets);
    size_t n = 0;
    for (size_t i = 0; i < sp->count; i++) {
        member[i] = sp->steps[i].plugin->rules ? n : NOT_A_MEMBER;
        if (sp->steps[i].plugin->rules)
            sets[n++] = sp->steps[i].plugin->rules;
    }
    ph_worklist *wl = n ? ph_worklist_new(sets, n, err) : NULL;
    free(sets);
    return wl;
}

/* ------------------------------------------------------- numbered rewrites */

void host_rewrite_capture_clear(host_rewrite_capture *c)
{
    free(c->pass);
    free(c->matched);
    free(c->removed);
    free(c->added);
    c->pass = c->matched = c->removed = c->added = NULL;
    c->found = 0;
}

static char *dup_or_null(const char *s) { return s ? host_xstrdup(s) : NULL; }

static void forget_names(stage_run *sr)
{
    for (size_t i = 0; i < sr->n_names; i++)
        free(sr->names[i]);
    sr->n_names = 0;
}

/* Add the ", "-separated names in list to the call's names. */
static void add_names(stage_run *sr, const char *list)
{
    while (list && *list) {
        const char *end = strstr(list, ", ");
        size_t len = end ? (size_t)(end - list) : strlen(list);
        if (len) {
            host_xgrow(&sr->names, &sr->cap_names, sr->n_names + 1, sizeof *sr->names);
            sr->names[sr->n_names++] = host_xstrndup(list, len);
        }
        list = end ? end + 2 : NULL;
    }
}

/* --print-changes: "rewrite 12 [fuse_x #3]: A, B -> C". */
static void print_change(FILE *f, const ph_rewrite_info *info, uint64_t index, uint64_t pass_index,
                         int numbered)
{
    fprintf(f, "rewrite %llu [%s #%llu]: ", (unsigned long long)index, info->pass,
            (unsigned long long)pass_index);
    const char *matched = info->matched && *info->matched ? info->matched : NULL;
    if (!numbered)
        fputs("(the pass does not number its rewrites; no node names)\n", f);
    else if (info->removed || info->added)
        fprintf(f, "%s -> %s\n",
                info->removed ? (*info->removed ? info->removed : "nothing") : matched ? matched : "?",
                info->added ? (*info->added ? info->added : "nothing") : "?");
    else
        fprintf(f, "%s\n", matched ? matched : "(no node names given)");
}

/* One rewrite (numbered: a pass asked for it), or the rewrites
 * info->index..last of a call that did not number them (numbered 0). */
static void record(stage_run *sr, const ph_rewrite_info *info, uint64_t last, int numbered)
{
    const host_run_opts *o = sr->opts;
    for (uint64_t k = info->index; o->changes && k <= last; k++)
        print_change(o->changes, info, k, info->pass_index + (k - info->index), numbered);
    if (o->changes)
        fflush(o->changes);
    host_rewrite_capture *c = o->capture;
    if (c && (c->index == 0 || (c->index >= info->index && c->index <= last))) {
        host_rewrite_capture_clear(c);
        c->found = 1;
        c->numbered = numbered;
        c->stage = sr->stats->stage;
        c->first = info->index;
        c->last = last;
        c->pass_first = info->pass_index;
        c->pass_last = info->pass_index + (last - info->index);
        c->pass = host_xstrdup(info->pass);
        c->matched = host_xstrdup(info->matched ? info->matched : "");
        c->removed = dup_or_null(info->removed);
        c->added = dup_or_null(info->added);
    }
    if ((o->dump_dir || o->regions) && numbered)
        add_names(sr, info->added && *info->added ? info->added : info->matched);
}

static void rewrite_hook(void *user, const ph_rewrite_info *info)
{
    record(user, info, info->index, 1);
}

/* Each complete rewrite, for whoever follows the run's progress. */
static void count_hook(void *user, uint64_t index, uint64_t pass_index)
{
    const host_run_progress *p = user;
    p->rewrite(p->user, index, pass_index);
}

static int observing(const host_run_opts *o)
{
    return o->changes || o->capture || o->dump_dir || o->regions;
}

/* A pass that returned r > 0 but numbered fewer: number the rest now. */
static void number_the_rest(stage_run *sr, const char *pass, int r)
{
    uint64_t asked = ph_ctx_pass_rewrites(sr->ctx);
    if ((uint64_t)r <= asked)
        return;
    uint64_t extra = (uint64_t)r - asked, first = ph_ctx_rewrite_count(sr->ctx) + 1;
    ph_ctx_count_rewrites(sr->ctx, extra);
    const host_run_progress *p = sr->opts->progress;
    if (p)
        p->rewrite(p->user, ph_ctx_rewrite_count(sr->ctx), (uint64_t)r);
    if (!observing(sr->opts))
        return;
    ph_rewrite_info info = {.pass = pass, .index = first, .pass_index = asked + 1, .matched = ""};
    record(sr, &info, first + extra - 1, 0);
}

/* --dump-dir: the model after a pass call and the picture of what changed. */
static int dump_call(stage_run *sr, const char *pass, const host_snapshot *before,
                     uint64_t first)
{
    unsigned *seq = sr->opts->dump_seq ? sr->opts->dump_seq : &sr->local_seq;
    host_dump_call call = {.seq = ++*seq, .stage = host_stage_name(sr->stats->stage), .pass = pass,
                           .first = first, .last = ph_ctx_rewrite_count(sr->ctx),
                           .names = (const char *const *)sr->names, .n_names = sr->n_names};
    return host_dump_write(sr->opts->dump_dir, sr->model, before, &call, sr->err);
}

/* Run step i once and check the graph after it.  Returns its rewrite count
 * (>= 0) or -HOST_EXIT_*. */
static long long call_pass_checked(stage_run *sr, size_t i)
{
    const host_step *step = &sr->plan->steps[i];
    const ph_pass_desc *d = step->plugin->desc;
    host_pass_stats *ps = &sr->stats->passes[i];
    ph_graph *g = ph_model_graph(sr->model);
    if (ps->calls == 0)
        ps->nodes_before = sr->nodes;
    double t0 = host_now_ms();
    host_exact_audit *audit = sr->opts->audit;
    int exact = d->exactness == PH_EXACT, auditing = audit && !audit->broken && !audit->skipped;
    ph_error aerr = {0};
    if (auditing && exact && host_verify_refresh(audit->verify, sr->model, &aerr) != 0) {
        audit->skipped = 1;
        snprintf(audit->skipped_why, sizeof audit->skipped_why, "%.290s", aerr.message);
    }
    uint64_t first = ph_ctx_rewrite_count(sr->ctx) + 1;
    ph_ctx_begin_pass(sr->ctx, d->name, sr->plan->target);
    const host_run_progress *progress = sr->opts->progress;
    if (progress)
        progress->pass_begin(progress->user, sr->stats->stage, d->run_once ? 0 : sr->stats->rounds,
                             d->name, ph_ctx_rewrite_count(sr->ctx));
    uint64_t failures = ph_model_alloc_failures(sr->model) + ph_ctx_alloc_failures(sr->ctx);
    size_t member = sr->member[i];
    int r = member == NOT_A_MEMBER ? host_plugin_run(step->plugin, g, step->params, sr->ctx)
                                   : ph_worklist_run(sr->rules, member, g, step->params, sr->ctx);
    /* an allocation failure the pass (or the SDK under it) absorbed: the
     * graph is valid, but what the pass did would depend on memory */
    if (r >= 0 && ph_model_alloc_failures(sr->model) + ph_ctx_alloc_failures(sr->ctx) != failures)
        r = ph_ctx_error(sr->ctx, PH_ENOMEM, "out of memory");
    if (progress)
        progress->pass_end(progress->user, ph_ctx_rewrite_count(sr->ctx));
    char why[sizeof sr->err->message] = "";
    if (r < 0) /* copied before end_pass can clear the pass's state */
        snprintf(why, sizeof why, "%s", ph_ctx_last_error(sr->ctx));
    ph_ctx_end_pass(sr->ctx);
    if (r > 0)
        number_the_rest(sr, d->name, r);
    ps->ms += host_now_ms() - t0;
    ps->calls++;
    if (r < 0) {
        ph_error_set(sr->err, HOST_EXIT_PASS, "pass %s: failed: %.400s", d->name,
                     why[0] ? why : ph_strerror(r));
        return -HOST_EXIT_PASS;
    }
    if (sr->opts->check_every_call) { /* also after a call that says it changed nothing */
        ph_error verr = {0};
        if ((r > 0 && ph_graph_toposort(g) < 0 && ph_error_set(&verr, PH_EVERIFY, "a cycle")) ||
            ph_graph_verify(g, &verr) < 0) {
            const char *why_broken = verr.message[0] ? verr.message : ph_strerror(verr.code);
            if (progress && progress->blamed)
                progress->blamed(progress->user, d->name, why_broken);
            ph_error_set(sr->err, HOST_EXIT_PASS, "pass %s left a graph that fails the structural check: %.400s",
                         d->name, why_broken);
            return -HOST_EXIT_PASS;
        }
    }
    if (r > 0) {
        ps->rewrites += r;
        sr->stats->last_changed = d->name;
        if (d->exactness == PH_APPROX) /* the budgets of --verify allow its dtype from now on */
            host_verify_lower_precision(sr->opts->verify, d->precision);
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
            int rc = host_verify_check_pass(sr->opts->verify, sr->model, d->name, exact, &verr);
            if (rc && host_verify_exact_broken(sr->opts->verify)) {
                ph_error_set(sr->err, rc, "%.500s", verr.message);
                return -rc;
            }
            if (rc) {
                ph_error_set(sr->err, rc, "pass %s: %s: %.400s", d->name,
                             rc == HOST_EXIT_MISMATCH ? "broke numeric equivalence" : "left a model the evaluator cannot run",
                             verr.message);
                return -rc;
            }
        }
        if (auditing && !audit->skipped && !exact)
            host_verify_changed(audit->verify);
        else if (auditing && !audit->skipped) {
            int rc = host_verify_exact(audit->verify, sr->model, d->name, &aerr);
            if (rc == HOST_EXIT_MISMATCH) {
                audit->broken = 1;
                snprintf(audit->pass, sizeof audit->pass, "%s", d->name);
                audit->stage = sr->stats->stage;
                audit->first = first;
                audit->last = ph_ctx_rewrite_count(sr->ctx);
                snprintf(audit->why, sizeof audit->why, "%s", aerr.message);
            } else if (rc) {
                audit->skipped = 1;
                snprintf(audit->skipped_why, sizeof audit->skipped_why, "%.290s", aerr.message);
            }
        }
        sr->nodes = ph_model_node_count(sr->model);
    }
    ps->nodes_after = sr->nodes;
    return r;
}

void host_region_list_free(host_region_list *l)
{
    for (size_t i = 0; l && i < l->count; i++)
        host_region_free(l->items[i].region);
    if (l) {
        free(l->items);
        l->items = NULL;
        l->count = l->cap = 0;
    }
}

/* --report-html: the region the call changed. */
static void shoot_region(stage_run *sr, const char *pass, const host_snapshot *before, uint64_t first)
{
    host_region_list *l = sr->opts->regions;
    host_dump_call call = {.seq = ++l->seq, .stage = host_stage_name(sr->stats->stage), .pass = pass,
                           .first = first, .last = ph_ctx_rewrite_count(sr->ctx),
                           .names = (const char *const *)sr->names, .n_names = sr->n_names};
    host_xgrow(&l->items, &l->cap, l->count + 1, sizeof *l->items);
    l->items[l->count++] = (host_region_shot){.stage = sr->stats->stage, .pass = pass, .seq = call.seq,
                                              .first = call.first, .last = call.last,
                                              .region = host_region_take(ph_model_graph(sr->model),
                                                                         before, &call)};
}

/* Run step i once.  Returns its rewrite count (>= 0) or -HOST_EXIT_*. */
static long long call_pass(stage_run *sr, size_t i)
{
    if (!ph_ctx_rewrite_allowed(sr->ctx))
        return 0; /* the run's rewrite budget is used up: no pass is called any more */
    host_region_list *regions = sr->opts->regions;
    int shoot = regions && regions->count < regions->max && sr->nodes <= regions->max_nodes;
    host_snapshot *before = sr->opts->dump_dir || shoot ? host_snapshot_take(ph_model_graph(sr->model)) : NULL;
    forget_names(sr);
    uint64_t first = ph_ctx_rewrite_count(sr->ctx) + 1;
    host_pass_stats *ps = &sr->stats->passes[i];
    size_t nodes0 = sr->nodes;
    double t0 = host_now_ms(), ms0 = ps->ms;
    host_trace *trace = sr->opts->trace;
    if (trace)
        host_trace_call_begin(trace, sr->stats->stage, ps->run_once ? 0 : sr->stats->rounds, i,
                              sr->plan->count, ps->name, nodes0, ms0);
    long long r = call_pass_checked(sr, i);
    ps->node_change += (long long)sr->nodes - (long long)nodes0;
    ps->check_ms += (host_now_ms() - t0) - (ps->ms - ms0);
    if (trace)
        host_trace_call_end(trace, r, sr->nodes, ps->ms);
    if (r > 0 && shoot)
        shoot_region(sr, sr->plan->steps[i].plugin->desc->name, before, first);
    else if (r > 0 && regions)
        regions->left_out++;
    if (r > 0 && before && sr->opts->dump_dir) {
        int drc = dump_call(sr, sr->plan->steps[i].plugin->desc->name, before, first);
        r = drc ? -drc : r; /* HOST_EXIT_OUTPUT, or HOST_EXIT_PASS when the graph fails verification */
    }
    host_snapshot_free(before);
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

/* The model's fingerprints into *fp: 0, or HOST_EXIT_PASS (out of memory,
 * with the run's error set). */
static int fingerprint(stage_run *sr, host_fingerprint *fp)
{
    if (!sr->fp_ids)
        sr->fp_ids = ph_hmap_new(NULL, NULL);
    if (host_model_fingerprint(sr->model, sr->fp_ids, fp) == 0)
        return 0;
    return ph_error_set(sr->err, HOST_EXIT_PASS, "stage %s: out of memory (the fixpoint's fingerprint)",
                        host_stage_name(sr->stats->stage));
}

/* Append "name" or "name (N rewrites)" to list, ", "-separated. */
static void list_pass(char *list, size_t size, const char *name, long long rewrites)
{
    size_t len = strlen(list);
    if (rewrites < 0)
        snprintf(list + len, size - len, "%s%s", len ? ", " : "", name);
    else
        snprintf(list + len, size - len, "%s%s (%lld rewrite%s)", len ? ", " : "", name, rewrites,
                 rewrites == 1 ? "" : "s");
}

/* A round ended with the model it began with (renamed: with the same
 * structure, its names aside, for two rounds running), though its passes
 * reported rewrites: one more round with fingerprints after each call that
 * reports rewrites names each pass whose call changed nothing, and each
 * whose call changed only names; if every such call did change the model,
 * the passes undo each other.  Either way the stage stops: the model is at
 * a fixpoint, more rounds would only repeat this (under new names). */
static int diagnose_stall(stage_run *sr, const char *changed, int renamed)
{
    host_stage_stats *st = sr->stats;
    size_t n = sr->plan->count;
    char *idle = host_xcalloc(n, 1), *names_only = host_xcalloc(n, 1);
    long long *claimed = host_xcalloc(n, sizeof *claimed);
    int rc = 0, round = st->rounds;
    st->rounds++;
    host_fingerprint fp, after;
    rc = fingerprint(sr, &fp);
    for (size_t i = 0; i < n && !rc; i++) {
        if (sr->plan->steps[i].plugin->desc->run_once)
            continue;
        long long r = call_pass(sr, i);
        if (r < 0) {
            rc = (int)-r;
            break;
        }
        if (r == 0)
            continue;
        if ((rc = fingerprint(sr, &after)) != 0)
            break;
        idle[i] = after.exact == fp.exact;
        names_only[i] = !idle[i] && after.structure == fp.structure;
        claimed[i] += r;
        fp = after;
    }
    char liars[600] = "", renamers[600] = "", movers[600] = "";
    for (size_t i = 0; i < n; i++) {
        if (idle[i])
            list_pass(liars, sizeof liars, st->passes[i].name, claimed[i]);
        else if (names_only[i])
            list_pass(renamers, sizeof renamers, st->passes[i].name, claimed[i]);
        else if (changed[i])
            list_pass(movers, sizeof movers, st->passes[i].name, -1);
    }
    st->stalled = 1;
    const char *as_it_was = renamed ? "left the graph as it was but for names" : "left the graph as it was";
    if (!rc && sr->opts->log && (liars[0] || renamers[0]))
        host_log_msg(sr->opts->log, PH_LOG_WARN, NULL,
                     "stage %s: round %d %s, yet passes reported rewrites; %s%s%s%s%s; stopped after round %d",
                     host_stage_name(st->stage), round, as_it_was,
                     liars[0] ? "these report rewrites but change nothing: " : "", liars,
                     liars[0] && renamers[0] ? "; " : "",
                     renamers[0] ? "these change only the names of nodes and values: " : "", renamers,
                     st->rounds);
    else if (!rc && sr->opts->log)
        host_log_msg(sr->opts->log, PH_LOG_WARN, NULL,
                     "stage %s: round %d %s: these passes undo each other's rewrites: %s; stopped "
                     "after round %d", host_stage_name(st->stage), round, as_it_was, movers, st->rounds);
    free(idle);
    free(names_only);
    free(claimed);
    return rc;
}

/* Rounds of the repeatable passes until one makes no rewrite.  After each
 * round that reported rewrites (while the cap allows another) and left the
 * node count and the initializers' version as the round before left them
 * (else it surely changed the model: no walk), the model's fingerprints
 * are compared with the ones taken then: the exact one equal means the
 * passes' rewrites added up to nothing; the structure equal two rounds
 * running means they added up to new names only (rules whose results undo
 * each other make their nodes under fresh names each time): either way
 * diagnose_stall.  One round of the same structure alone is not enough: a
 * pass may name in one round what another made in the round before. */
static int run_fixpoint(stage_run *sr)
{
    size_t n = sr->plan->count;
    char *changed = host_xcalloc(n, 1);
    int repeatable = 0;
    for (size_t i = 0; i < n; i++)
        repeatable |= !sr->plan->steps[i].plugin->desc->run_once;
    long long total = repeatable;
    int rc = 0, have_fp = 0, renamed = 0;
    host_fingerprint fp = {0};
    uint64_t init_version = 0;
    size_t nodes = (size_t)-1;
    while (total > 0 && sr->stats->rounds < sr->plan->max_iterations && !rc &&
           ph_ctx_rewrite_allowed(sr->ctx)) {
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
        if (rc || total == 0 || sr->stats->rounds >= sr->plan->max_iterations ||
            !ph_ctx_rewrite_allowed(sr->ctx))
            continue;
        size_t n_now = ph_model_node_count(sr->model);
        uint64_t v_now = ph_model_initializers_version(sr->model);
        if (n_now != nodes || v_now != init_version) {
            have_fp = renamed = 0; /* the model changed: no fingerprint needed */
        } else {
            host_fingerprint now;
            if ((rc = fingerprint(sr, &now)) != 0)
                continue;
            renamed = have_fp && now.exact != fp.exact && now.structure == fp.structure ? renamed + 1 : 0;
            if ((have_fp && now.exact == fp.exact) || renamed == 2) {
                rc = diagnose_stall(sr, changed, renamed > 0);
                total = 0;
            }
            fp = now;
            have_fp = 1;
        }
        nodes = n_now;
        init_version = v_now;
    }
    if (!rc && total > 0 && ph_ctx_rewrite_allowed(sr->ctx)) /* not stopped by the budget */
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
    ph_error werr = {0};
    sr.member = host_xcalloc(sp->count ? sp->count : 1, sizeof *sr.member);
    sr.rules = stage_worklist(sp, sr.member, &werr);
    if (!sr.rules && werr.code) {
        free(sr.member);
        return ph_error_set(err, HOST_EXIT_PASS, "stage %s: %s", host_stage_name(sp->stage), werr.message);
    }
    if (observing(opts))
        ph_ctx_set_rewrite_hook(ctx, rewrite_hook, &sr);
    if (opts->progress) {
        ph_ctx_set_count_hook(ctx, count_hook, (void *)opts->progress);
        opts->progress->stage(opts->progress->user, sp->stage);
    }
    ph_ctx_set_profile(ctx, sp->profile ? sp->profile->target : NULL);
    if (sp->profile && opts->violations) {
        host_violations_clear(opts->violations);
        opts->violations->target = sp->target;
        ph_ctx_set_violation_hook(ctx, host_violations_hook, opts->violations);
    }
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
    if (observing(opts))
        ph_ctx_set_rewrite_hook(ctx, NULL, NULL);
    ph_ctx_set_count_hook(ctx, NULL, NULL);
    ph_ctx_set_profile(ctx, NULL);
    ph_ctx_set_violation_hook(ctx, NULL, NULL);
    forget_names(&sr);
    free(sr.names);
    ph_worklist_free(sr.rules);
    ph_hmap_free(sr.fp_ids);
    free(sr.member);
    return rc;
}

int host_run_all(ph_model *m, const host_plan *plan, int64_t limit, const host_run_opts *opts,
                 host_stage_stats *stats, uint64_t *rewrites, ph_error *err)
{
    memset(stats, 0, HOST_STAGE_COUNT * sizeof *stats);
    if (rewrites)
        *rewrites = 0;
    ph_ctx *ctx = opts->log ? ph_ctx_new(host_log_sink, opts->log) : ph_ctx_new(NULL, NULL);
    if (!ctx)
        return ph_error_set(err, HOST_EXIT_PASS, "out of memory");
    ph_ctx_set_rewrite_limit(ctx, limit);
    host_run_opts o = *opts;
    unsigned seq = 0;
    if (!o.dump_seq)
        o.dump_seq = &seq;
    int rc = 0;
    for (int s = 0; s < HOST_STAGE_COUNT && !rc; s++)
        rc = host_run_stage(m, &plan->stage[s], ctx, &o, &stats[s], err);
    if (rewrites)
        *rewrites = ph_ctx_rewrite_count(ctx);
    ph_ctx_free(ctx);
    if (opts->progress)
        opts->progress->after_stages(opts->progress->user);
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
