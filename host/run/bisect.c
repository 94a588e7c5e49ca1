/* host/run/bisect.c - `--bisect`: the first rewrite that breaks the outputs, and
 * a reproducer (bisect.h). */
#include "bisect.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/effective.h"
#include "base/exit.h"
#include "io/model_io.h"
#include "runner.h"
#include "io/shapes.h"
#include "base/util.h"

/* What one run of the pipeline gave. */
typedef struct probe_result {
    uint64_t rewrites; /* numbered in the run */
    int bad;           /* outputs differ beyond the tolerance */
    char why[512];     /* the verifier's message when bad */
} probe_result;

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
    if (!rc)
        rc = host_apply_shapes(*out, job->cfg, 0, err);
    if (rc) {
        ph_model_free(*out);
        *out = NULL;
    }
    return rc;
}

/* Run the stages on m with `limit` rewrites and verify.  first: the full
 * run, which --print-changes and --dump-dir watch. */
static int probe(const host_bisect_job *job, ph_model *m, int64_t limit, int first,
                 host_rewrite_capture *cap, probe_result *res, ph_error *err)
{
    /* probes log to the log file only: the full run has said it all */
    host_log quiet = {.err = NULL, .file = job->log->file, .quiet = 1};
    host_run_opts opts = {.update_shapes = job->cfg->infer_shapes,
                          .log = first ? job->log : &quiet,
                          .changes = first && job->cli->print_changes ? stderr : NULL,
                          .dump_dir = first ? job->cli->dump_dir : NULL,
                          .capture = cap};
    host_stage_stats stats[HOST_STAGE_COUNT];
    memset(res, 0, sizeof *res);
    int rc = host_run_all(m, job->plan, limit, &opts, stats, &res->rewrites, err);
    for (int s = 0; s < HOST_STAGE_COUNT; s++)
        host_stage_stats_free(&stats[s]);
    if (rc)
        return rc;
    ph_error verr = {0};
    rc = host_verify_check(job->verify, m, &verr);
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
static int probe_fresh(const host_bisect_job *job, int64_t limit, host_rewrite_capture *cap,
                       probe_result *res, ph_model **out, ph_error *err)
{
    ph_model *m = NULL;
    int rc = reload(job, &m, err);
    if (!rc)
        rc = probe(job, m, limit, 0, cap, res, err);
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

/* ------------------------------------------------------------ reproducer */

static int make_dir(const char *dir, ph_error *err)
{
    struct stat st;
    if (stat(dir, &st) == 0)
        return S_ISDIR(st.st_mode) ? 0
                                   : ph_error_set(err, HOST_EXIT_OUTPUT, "--bisect-out %s: not a folder", dir);
    if (mkdir(dir, 0777) != 0)
        return ph_error_set(err, HOST_EXIT_OUTPUT, "--bisect-out %s: %s", dir, strerror(errno));
    return 0;
}

/* path made absolute (the file exists) or as given. */
static char *absolute(const char *path)
{
    char *real = realpath(path, NULL);
    return real ? real : host_xstrdup(path);
}

/* DIR/config.ini: the effective configuration, every key (effective.h). */
static int write_config(const host_bisect_job *job, const char *dir, ph_error *err)
{
    host_effective e;
    host_effective_make(&e, job->cfg, job->plan, &job->vcfg, "out.onnx",
                        "; The effective configuration of a passhost run, written by --bisect-out.\n"
                        "; `passhost config.ini --max-rewrites N` applies its first N rewrites "
                        "(README.txt).\n");
    int rc = host_effective_write(&e, dir, "config.ini", err);
    host_effective_free(&e);
    return rc;
}

/* One shell word. */
static void put_word(FILE *f, const char *w)
{
    if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        "_-./=:,+@%") == strlen(w)) {
        fputs(w, f);
        return;
    }
    fputc('\'', f);
    for (const char *c = w; *c; c++)
        *c == '\'' ? fputs("'\\''", f) : fputc(*c, f);
    fputc('\'', f);
}

static int write_readme(const host_bisect_job *job, const char *dir, const host_rewrite_capture *c,
                        uint64_t total, const char *why, ph_error *err)
{
    char *path = host_xasprintf("%s/README.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        int rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    char *what = describe(c, total), *adir = absolute(dir);
    unsigned long long k = (unsigned long long)c->first;
    fprintf(f, "passhost --bisect: the first rewrite after which the outputs differ\n\n"
               "  %s\n  then: %s\n\n", what, why);
    fprintf(f, "Files\n"
               "  before.onnx  the model after the first %llu rewrites (--max-rewrites %llu): "
               "verifies\n"
               "  after.onnx   the model after the first %llu rewrites (--max-rewrites %llu): "
               "does not verify\n"
               "  config.ini   the effective configuration of the run, every key\n",
            k - 1, k - 1, k, k);
    if (!c->numbered)
        fprintf(f, "  (pass %s does not number its rewrites, so after.onnx holds its whole call: "
                   "%llu rewrites)\n", c->pass, (unsigned long long)c->last);
    fprintf(f, "\nVerification ([verify] in config.ini)\n"
               "  seed %d, %d run%s of random inputs, atol %g, rtol %g\n",
            job->vcfg.seed, job->vcfg.runs, job->vcfg.runs == 1 ? "" : "s", job->vcfg.atol,
            job->vcfg.rtol);
    fputs("\nReproduce\n  passhost ", f);
    char *cfg_path = host_xasprintf("%s/config.ini", adir);
    put_word(f, cfg_path);
    fprintf(f, " --max-rewrites %llu --verify   # verifies (writes out.onnx = before.onnx)\n"
               "  passhost ", k - 1);
    put_word(f, cfg_path);
    fprintf(f, " --max-rewrites %llu --verify   # exit %d: outputs differ\n  passhost ", k,
            HOST_EXIT_MISMATCH);
    put_word(f, cfg_path);
    fputs(" --bisect                    # finds the same rewrite\n", f);
    fputs("\nThe plugin search also reads PASSHOST_PLUGIN_PATH and the folders next to the "
          "passhost binary:\nrun from the same installation and environment.\n", f);
    fputs("\nThe original command line\n ", f);
    for (int i = 0; i < job->cli->argc; i++) {
        fputc(' ', f);
        put_word(f, job->cli->argv[i]);
    }
    fputc('\n', f);
    free(cfg_path);
    free(what);
    free(adir);
    int rc = 0;
    if (fclose(f) != 0)
        rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s: %s", path, strerror(errno));
    free(path);
    return rc;
}

/* Run with limit and save the model to DIR/name, as a normal run would. */
static int save_probe(const host_bisect_job *job, int64_t limit, const char *dir, const char *name,
                      ph_error *err)
{
    ph_model *m = NULL;
    probe_result res;
    int rc = probe_fresh(job, limit, NULL, &res, &m, err);
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
                            uint64_t total, const char *why, ph_error *err)
{
    const char *dir = job->cli->bisect_out;
    int rc = make_dir(dir, err);
    int64_t k = (int64_t)c->first;
    if (!rc)
        rc = save_probe(job, k - 1, dir, "before.onnx", err);
    if (!rc)
        rc = save_probe(job, k, dir, "after.onnx", err);
    if (!rc)
        rc = write_config(job, dir, err);
    if (!rc)
        rc = write_readme(job, dir, c, total, why, err);
    if (!rc)
        say(job, "reproducer in %s: before.onnx (%lld rewrites), after.onnx (%lld), config.ini, "
                 "README.txt", dir, (long long)(k - 1), (long long)k);
    return rc;
}

/* ----------------------------------------------------------------- search */

int host_bisect(const host_bisect_job *job, ph_error *err)
{
    host_rewrite_capture cap = {.index = 0}, hi_cap = {.index = 0};
    probe_result res;
    int rc = probe(job, job->model, -1, 1, &cap, &res, err);
    if (rc) {
        host_rewrite_capture_clear(&cap);
        return rc;
    }
    uint64_t total = res.rewrites;
    if (!res.bad) {
        say(job, "the result of all %llu rewrites verifies (seed %d, %d runs, atol %g, rtol %g): "
                 "nothing to bisect", (unsigned long long)total, job->vcfg.seed, job->vcfg.runs,
            job->vcfg.atol, job->vcfg.rtol);
        host_rewrite_capture_clear(&cap);
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
    say(job, "all %llu rewrites: outputs differ (%s); searching", (unsigned long long)total,
        res.why);
    /* invariant: the first lo rewrites verify (0 does: nothing changed),
       the first hi do not */
    uint64_t lo = 0, hi = total;
    while (!rc && hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        cap.index = mid;
        rc = probe_fresh(job, (int64_t)mid, &cap, &res, NULL, err);
        if (rc)
            break;
        say(job, "first %llu rewrite%s: %s", (unsigned long long)mid, mid == 1 ? "" : "s",
            res.bad ? "outputs differ" : "ok");
        if (res.bad && cap.found) {
            hi = mid;
            move_capture(&hi_cap, &cap);
            snprintf(hi_why, sizeof hi_why, "%s", res.why);
        } else if (res.bad) { /* cannot happen: a probe numbers at least mid rewrites */
            hi = mid;
        } else {
            lo = mid;
        }
    }
    host_rewrite_capture_clear(&cap);
    if (!rc && (!hi_cap.found || hi_cap.first > hi || hi_cap.last < hi)) {
        /* the capture of hi went missing: run it once more to learn it */
        cap.index = hi;
        rc = probe_fresh(job, (int64_t)hi, &cap, &res, NULL, err);
        if (!rc)
            move_capture(&hi_cap, &cap);
    }
    if (!rc && job->cli->bisect_out)
        rc = write_reproducer(job, &hi_cap, total, hi_why, err);
    if (!rc) {
        char *what = describe(&hi_cap, total);
        rc = ph_error_set(err, HOST_EXIT_MISMATCH, "bisect: first bad %.300s; then %.150s", what,
                          hi_why);
        free(what);
    }
    host_rewrite_capture_clear(&cap);
    host_rewrite_capture_clear(&hi_cap);
    return rc;
}
