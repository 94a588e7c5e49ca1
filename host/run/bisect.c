/* host/run/bisect.c - `--bisect`: the first rewrite that breaks the outputs, and
 * a reproducer (bisect.h). */
#include "bisect.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check/repro.h"
#include "base/exit.h"
#include "io/cut.h"
#include "io/model_io.h"
#include "runner.h"
#include "io/shapes.h"
#include "base/util.h"

/* What one run of the pipeline gave. */
typedef struct probe_result {
    uint64_t rewrites; /* numbered in the run */
    int bad;           /* outputs beyond the budget (bits: any bit changed) */
    char why[512];     /* the verifier's message when bad */
} probe_result;

/* What a probe asks of the outputs. */
enum { JUDGE_BUDGET, JUDGE_BITS };

static void say(const host_bisect_job *job, const char *fmt, ...) HOST_PRINTF(2, 3);

static void say(const host_bisect_job *job, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (job->out) {
        fprintf(job->out, "bisect: %s\n", line);
        fflush(job->out);
    }
    if (job->log->file)
        fprintf(job->log->file, "info: bisect: %s\n", line);
}

/* Load the input again, as the main run did (input shapes, inference). */
static int reload(const host_bisect_job *job, ph_model **out, ph_error *err)
{
    double ms;
    int rc = host_model_load(job->cfg->input, 0, out, &ms, err);
    if (!rc && job->cut)
        rc = host_cut_model(*out, job->cut, NULL, NULL, err); /* --inputs/--outputs */
    if (!rc)
        rc = host_apply_shapes(*out, job->cfg, 0, err);
    if (rc) {
        ph_model_free(*out);
        *out = NULL;
    }
    return rc;
}

/* Run the stages on m with `limit` rewrites and verify: against the budget,
 * or (JUDGE_BITS) bit for bit against the verifier's kept outputs.  first:
 * the full run, which --print-changes and --dump-dir watch and which audits
 * the exact passes (audit, may be NULL). */
static int probe(const host_bisect_job *job, ph_model *m, int64_t limit, int first, int judge,
                 host_rewrite_capture *cap, host_exact_audit *audit, probe_result *res, ph_error *err)
{
    /* probes log to the log file only: the full run has said it all */
    host_log quiet = {.err = NULL, .file = job->log->file, .quiet = 1};
    host_run_opts opts = {.update_shapes = job->cfg->infer_shapes,
                          .log = first ? job->log : &quiet,
                          .changes = first && job->print_changes ? stderr : NULL,
                          .dump_dir = first ? job->dump_dir : NULL,
                          .capture = cap, .audit = audit, .progress = job->progress};
    host_stage_stats stats[HOST_STAGE_COUNT];
    memset(res, 0, sizeof *res);
    int rc = host_run_all(m, job->plan, limit, &opts, stats, &res->rewrites, err);
    for (int s = 0; s < HOST_STAGE_COUNT; s++)
        host_stage_stats_free(&stats[s]);
    if (rc)
        return rc;
    ph_error verr = {0};
    rc = judge == JUDGE_BITS ? host_verify_same_bits(job->verify, m, &verr)
                             : host_verify_check(job->verify, m, &verr);
    if (rc == HOST_EXIT_MISMATCH) {
        res->bad = 1;
        snprintf(res->why, sizeof res->why, "%s", verr.message);
        return 0;
    }
    if (rc)
        return ph_error_set(err, rc, "bisect: after %llu rewrites: %.400s",
                            (unsigned long long)res->rewrites, verr.message);
    return 0;
}

/* Reload, probe with limit, and keep the model (*out) when out is not NULL. */
static int probe_fresh(const host_bisect_job *job, int64_t limit, int judge, host_rewrite_capture *cap,
                       probe_result *res, ph_model **out, ph_error *err)
{
    ph_model *m = NULL;
    int rc = reload(job, &m, err);
    if (!rc)
        rc = probe(job, m, limit, 0, judge, cap, NULL, res, err);
    if (!rc && out)
        *out = m;
    else
        ph_model_free(m);
    return rc;
}

static void move_capture(host_rewrite_capture *to, host_rewrite_capture *from)
{
    host_rewrite_capture_clear(to);
    *to = *from;
    from->pass = from->matched = from->removed = from->added = NULL;
    from->found = 0;
}

/* "rewrite 7" or "rewrites 5..9" */
static char *step_text(const host_rewrite_capture *c)
{
    if (c->first == c->last)
        return host_xasprintf("rewrite %llu", (unsigned long long)c->first);
    return host_xasprintf("rewrites %llu..%llu", (unsigned long long)c->first,
                          (unsigned long long)c->last);
}

/* The one line naming the rewrite (no trailing newline; caller frees). */
static char *describe(const host_rewrite_capture *c, uint64_t total)
{
    char *step = step_text(c);
    char *text;
    if (!c->numbered) {
        char which[64];
        if (c->pass_first == c->pass_last)
            snprintf(which, sizeof which, "#%llu", (unsigned long long)c->pass_first);
        else
            snprintf(which, sizeof which, "#%llu..#%llu", (unsigned long long)c->pass_first,
                     (unsigned long long)c->pass_last);
        text = host_xasprintf(
            "%s of %llu: pass %s (stage %s), %s of its call; the pass does not number its "
            "rewrites (no ph_ctx_rewrite_begin), so its whole call is one step and the matched "
            "nodes are unknown",
            step, (unsigned long long)total, c->pass, host_stage_name(c->stage), which);
    }
    else if (c->removed || c->added)
        text = host_xasprintf("%s of %llu: pass %s (stage %s), #%llu of its call, matched %s; "
                              "%s -> %s",
                              step, (unsigned long long)total, c->pass, host_stage_name(c->stage),
                              (unsigned long long)c->pass_first,
                              *c->matched ? c->matched : "(no names given)",
                              c->removed ? (*c->removed ? c->removed : "nothing") : "?",
                              c->added ? (*c->added ? c->added : "nothing") : "?");
    else
        text = host_xasprintf("%s of %llu: pass %s (stage %s), #%llu of its call, matched %s",
                              step, (unsigned long long)total, c->pass, host_stage_name(c->stage),
                              (unsigned long long)c->pass_first,
                              *c->matched ? c->matched : "(no names given)");
    free(step);
    return text;
}

/* "seed 0, 3 runs of random inputs; errors within budget ..." */
static void verify_rule(const host_bisect_job *job, char *buf, size_t size)
{
    const host_verify_config *vc = &job->vcfg;
    size_t n = host_verify_set_count(job->verify);
    int k = host_verify_from_data(job->verify)
                ? snprintf(buf, size, "%zu data folder%s", n, n == 1 ? "" : "s")
                : snprintf(buf, size, "seed %d, %d run%s of random inputs", vc->seed, vc->runs,
                           vc->runs == 1 ? "" : "s");
    if (k < 0 || (size_t)k >= size)
        return;
    if (host_verify_uses_budget(job->verify))
        snprintf(buf + k, size - (size_t)k, ", errors within budget (%g x the original's error against "
                 "the float64 reference + %g ulp)", vc->budget_factor, vc->budget_ulps);
    else
        snprintf(buf + k, size - (size_t)k, ", atol %g, rtol %g", host_verify_atol(vc), host_verify_rtol(vc));
}

/* 1 when the pass named `name` of the plan is declared PH_EXACT. */
static int pass_is_exact(const host_plan *plan, const char *name)
{
    for (int s = 0; s < HOST_STAGE_COUNT; s++)
        for (size_t i = 0; i < plan->stage[s].count; i++)
            if (strcmp(plan->stage[s].steps[i].plugin->desc->name, name) == 0)
                return plan->stage[s].steps[i].plugin->desc->exactness == PH_EXACT;
    return 0;
}

/* ------------------------------------------------------------ reproducer */

static int write_readme(const host_bisect_job *job, host_repro *r, const host_rewrite_capture *c,
                        uint64_t total, const char *why, int bits, ph_error *err)
{
    FILE *f = host_repro_readme(r, err);
    if (!f)
        return HOST_EXIT_OUTPUT;
    char *what = describe(c, total);
    unsigned long long k = (unsigned long long)c->first;
    if (bits)
        fprintf(f, "passhost --bisect: the first rewrite of a pass declared exact that changed the "
                   "outputs' bits\n\n  %s\n  then: %s\n\n", what, why);
    else
        fprintf(f, "passhost --bisect: the first rewrite after which the outputs differ\n\n"
                   "  %s\n  then: %s\n\n", what, why);
    fprintf(f, "Files\n"
               "  before.onnx  the model after the first %llu rewrites (--max-rewrites %llu): %s\n"
               "  after.onnx   the model after the first %llu rewrites (--max-rewrites %llu): %s\n"
               "  config.ini   the effective configuration of the run, every key\n",
            k - 1, k - 1, bits ? "the outputs' bits as before the exact pass's call" : "verifies", k, k,
            bits ? "other bits" : "does not verify");
    if (!c->numbered)
        fprintf(f, "  (pass %s does not number its rewrites, so after.onnx holds its whole call: "
                   "%llu rewrites)\n", c->pass, (unsigned long long)c->last);
    char judge[200];
    verify_rule(job, judge, sizeof judge);
    fprintf(f, "\nVerification ([verify] in config.ini)\n  %s\n", judge);
    fputs("\nReproduce\n", f);
    char args[64], note[64];
    snprintf(args, sizeof args, "--max-rewrites %llu --verify", k - 1);
    host_repro_command(r, NULL, args, "verifies (writes out.onnx = before.onnx)");
    snprintf(args, sizeof args, "--max-rewrites %llu %s", k, bits ? "--verify-each" : "--verify");
    snprintf(note, sizeof note, "exit %d: %s", HOST_EXIT_MISMATCH,
             bits ? "the exact pass changed bits" : "outputs differ");
    host_repro_command(r, NULL, args, note);
    host_repro_command(r, NULL, "--bisect", "finds the same rewrite");
    fputs("\nThe plugin search also reads PASSHOST_PLUGIN_PATH and the folders next to the "
          "passhost binary:\nrun from the same installation and environment.\n", f);
    host_repro_argv(r, job->argc, job->argv);
    free(what);
    return 0;
}

/* Run with limit and save the model to DIR/name, as a normal run would. */
static int save_probe(const host_bisect_job *job, int64_t limit, const char *dir, const char *name,
                      ph_error *err)
{
    ph_model *m = NULL;
    probe_result res;
    int rc = probe_fresh(job, limit, JUDGE_BUDGET, NULL, &res, &m, err);
    ph_error e = {0};
    if (!rc && job->cfg->write_shapes && ph_graph_write_value_info(ph_model_graph(m), &e) < 0)
        rc = ph_error_set(err, HOST_EXIT_MODEL, "writing shapes: %.400s", e.message);
    char *path = host_xasprintf("%s/%s", dir, name);
    double ms;
    if (!rc)
        rc = host_model_check(m, NULL, err); /* never write what would not load */
    if (!rc)
        rc = host_model_save(m, path, &ms, err);
    free(path);
    ph_model_free(m);
    return rc;
}

static int write_reproducer(const host_bisect_job *job, const host_rewrite_capture *c,
                            uint64_t total, const char *why, int bits, ph_error *err)
{
    host_repro r;
    int rc = host_repro_open(&r, job->out_dir, "--bisect-out", err);
    int64_t k = (int64_t)c->first;
    if (!rc)
        rc = save_probe(job, k - 1, r.dir, "before.onnx", err);
    if (!rc)
        rc = save_probe(job, k, r.dir, "after.onnx", err);
    if (!rc)
        rc = host_repro_config(&r, job->cfg, job->plan, &job->vcfg, err);
    if (!rc)
        rc = write_readme(job, &r, c, total, why, bits, err);
    rc = host_repro_close(&r, rc, err);
    if (!rc)
        say(job, "reproducer in %s: before.onnx (%lld rewrites), after.onnx (%lld), config.ini, "
                 "README.txt", job->out_dir, (long long)(k - 1), (long long)k);
    return rc;
}

/* ----------------------------------------------------------------- search */

/* Binary search in (lo, hi]: the first k whose probe is bad, given that lo's
 * is not and hi's is.  *hi_cap / hi_why: what the bad end recorded. */
static int search(const host_bisect_job *job, int judge, uint64_t lo, uint64_t hi,
                  host_rewrite_capture *hi_cap, char *hi_why, size_t why_size, uint64_t *answer,
                  ph_error *err)
{
    host_rewrite_capture cap = {.index = 0};
    probe_result res;
    int rc = 0;
    while (!rc && hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        cap.index = mid;
        rc = probe_fresh(job, (int64_t)mid, judge, &cap, &res, NULL, err);
        if (rc)
            break;
        say(job, "first %llu rewrite%s: %s", (unsigned long long)mid, mid == 1 ? "" : "s",
            res.bad ? (judge == JUDGE_BITS ? "outputs differ in bits" : "outputs differ")
                    : (judge == JUDGE_BITS ? "bits as before" : "ok"));
        if (res.bad && cap.found) {
            hi = mid;
            move_capture(hi_cap, &cap);
            snprintf(hi_why, why_size, "%s", res.why);
        } else if (res.bad) { /* cannot happen: a probe numbers at least mid rewrites */
            hi = mid;
        } else {
            lo = mid;
        }
    }
    host_rewrite_capture_clear(&cap);
    if (!rc && (!hi_cap->found || hi_cap->first > hi || hi_cap->last < hi)) {
        /* the capture of hi went missing: run it once more to learn it */
        cap.index = hi;
        rc = probe_fresh(job, (int64_t)hi, judge, &cap, &res, NULL, err);
        if (!rc)
            move_capture(hi_cap, &cap);
        if (!rc && judge == JUDGE_BITS && res.bad)
            snprintf(hi_why, why_size, "%s", res.why);
    }
    host_rewrite_capture_clear(&cap);
    *answer = hi;
    return rc;
}

/* The run verifies within the budget, but the audit caught a pass declared
 * exact changing bits in its call (rewrites first..last): find the rewrite
 * within the call against the outputs before it. */
static int search_exact(const host_bisect_job *job, const host_exact_audit *audit, uint64_t total,
                        ph_error *err)
{
    say(job, "all %llu rewrites verify within the budget, but pass %s is declared exact and changed "
             "the outputs' bits in its call of rewrites %llu..%llu (%s); searching",
        (unsigned long long)total, audit->pass, (unsigned long long)audit->first,
        (unsigned long long)audit->last, audit->why);
    ph_model *m = NULL;
    probe_result res;
    int rc = probe_fresh(job, (int64_t)audit->first - 1, JUDGE_BUDGET, NULL, &res, &m, err);
    if (!rc) {
        ph_error serr = {0};
        rc = host_verify_snapshot(job->verify, m, &serr);
        if (rc)
            ph_error_set(err, rc, "bisect: before rewrite %llu: %.400s", (unsigned long long)audit->first,
                         serr.message);
    }
    ph_model_free(m);
    host_rewrite_capture hi_cap = {.index = 0};
    char hi_why[512];
    snprintf(hi_why, sizeof hi_why, "%s", audit->why);
    uint64_t k = 0;
    if (!rc)
        rc = search(job, JUDGE_BITS, audit->first - 1, audit->last, &hi_cap, hi_why, sizeof hi_why, &k, err);
    if (!rc && job->out_dir)
        rc = write_reproducer(job, &hi_cap, total, hi_why, 1, err);
    if (!rc) {
        char *what = describe(&hi_cap, total);
        rc = ph_error_set(err, HOST_EXIT_MISMATCH,
                          "bisect: first rewrite that broke an exact promise: %.300s; then %.150s", what,
                          hi_why);
        free(what);
    }
    host_rewrite_capture_clear(&hi_cap);
    return rc;
}

int host_bisect(const host_bisect_job *job, ph_error *err)
{
    host_rewrite_capture cap = {.index = 0}, hi_cap = {.index = 0};
    host_exact_audit audit = {.verify = job->verify};
    probe_result res;
    int rc = probe(job, job->model, -1, 1, JUDGE_BUDGET, &cap, &audit, &res, err);
    if (rc) {
        host_rewrite_capture_clear(&cap);
        return rc;
    }
    uint64_t total = res.rewrites;
    if (!res.bad) {
        host_rewrite_capture_clear(&cap);
        if (audit.broken)
            return search_exact(job, &audit, total, err);
        char judge[200];
        verify_rule(job, judge, sizeof judge);
        say(job, "the result of all %llu rewrites verifies (%s), and every pass declared exact kept the "
                 "outputs' bits%s%s%s: nothing to bisect", (unsigned long long)total, judge,
            audit.skipped ? " (as far as the evaluator could follow: " : "",
            audit.skipped ? audit.skipped_why : "", audit.skipped ? ")" : "");
        return 0;
    }
    if (total == 0 || !cap.found) {
        host_rewrite_capture_clear(&cap);
        return ph_error_set(err, HOST_EXIT_MISMATCH,
                            "bisect: the outputs differ although no rewrite was made: %.400s",
                            res.why);
    }
    char hi_why[sizeof res.why];
    snprintf(hi_why, sizeof hi_why, "%s", res.why);
    move_capture(&hi_cap, &cap);
    host_rewrite_capture_clear(&cap);
    say(job, "all %llu rewrites: outputs differ (%s); searching", (unsigned long long)total,
        res.why);
    /* invariant: the first lo rewrites verify (0 does: nothing changed),
       the first hi do not */
    uint64_t k = 0;
    rc = search(job, JUDGE_BUDGET, 0, total, &hi_cap, hi_why, sizeof hi_why, &k, err);
    if (!rc && job->out_dir)
        rc = write_reproducer(job, &hi_cap, total, hi_why, 0, err);
    if (!rc) {
        char *what = describe(&hi_cap, total);
        int exact = hi_cap.pass && pass_is_exact(job->plan, hi_cap.pass);
        rc = ph_error_set(err, HOST_EXIT_MISMATCH, "bisect: first bad %.300s%s; then %.150s", what,
                          exact ? " (the pass is declared exact)" : "", hi_why);
        free(what);
    }
    host_rewrite_capture_clear(&hi_cap);
    return rc;
}
