/* host/report/report_run.c - the text report of a run, the verdict lines, and the
 * helpers the JSON and HTML writers share (report_run.h). */
#include "report_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/effective.h"
#include "base/exit.h"
#include "io/model_io.h"
#include "base/streams.h"
#include "base/util.h"

size_t host_record_changing_calls(const host_run_record *rec)
{
    size_t n = 0;
    for (size_t i = 0; rec->trace && i < rec->trace->count; i++)
        n += rec->trace->calls[i].rewrites > 0;
    return n;
}

char *host_record_config_ini(const host_run_record *rec)
{
    if (!rec->cfg || !rec->plan)
        return NULL;
    host_effective e;
    host_effective_make(&e, rec->cfg, rec->plan, &rec->vcfg, rec->output,
                        "; The effective configuration of this passhost run: every key.\n");
    char *text = host_xstrdup(e.config);
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        if (!e.custom_name[s])
            continue;
        char *more = host_xasprintf("%s\n; ---- %s (custom_config of [%s])\n%s", text,
                                    e.custom_name[s], host_stage_name(s), e.custom_text[s]);
        free(text);
        text = more;
    }
    host_effective_free(&e);
    return text;
}

/* ------------------------------------------------------------- verdicts */

void host_report_verify_outputs(FILE *out, const host_run_record *rec)
{
    if (rec->verify)
        host_verify_print(out, rec->verify, rec->verify_checked);
}

/* "3 runs" or "2 data sets" */
static void sets_text(char *buf, size_t size, const host_run_record *rec)
{
    size_t n = rec->verify ? host_verify_set_count(rec->verify) : (size_t)rec->vcfg.runs;
    if (rec->verify && host_verify_from_data(rec->verify))
        snprintf(buf, size, "%zu data set%s", n, n == 1 ? "" : "s");
    else
        snprintf(buf, size, "%zu run%s", n, n == 1 ? "" : "s");
}

/* How the outputs were judged: "error budget (float64 reference)",
 * "atol 1e-05, rtol 0.0001", or the fallback with its reason. */
static void rule_text(char *buf, size_t size, const host_run_record *rec)
{
    const char *why = NULL;
    if (rec->verify && host_verify_uses_budget(rec->verify))
        snprintf(buf, size, "error budget (float64 reference)");
    else if (rec->verify && !host_verify_fixed(&rec->vcfg) && !host_verify_reference(rec->verify, &why))
        snprintf(buf, size, "no float64 reference (%.200s): atol %g, rtol %g", why,
                 host_verify_atol(&rec->vcfg), host_verify_rtol(&rec->vcfg));
    else
        snprintf(buf, size, "atol %g, rtol %g", host_verify_atol(&rec->vcfg), host_verify_rtol(&rec->vcfg));
}

void host_report_verdicts(FILE *out, const host_run_record *rec)
{
    if (rec->verify_checked && rec->verify) {
        size_t n;
        const host_verify_result *res = host_verify_results(rec->verify, &n);
        double max_abs = 0, max_rel = 0;
        const char *bad = NULL;
        for (size_t i = 0; i < n; i++) {
            max_abs = res[i].max_abs > max_abs ? res[i].max_abs : max_abs;
            max_rel = res[i].max_rel > max_rel ? res[i].max_rel : max_rel;
            if (!res[i].ok && !bad)
                bad = res[i].name;
        }
        char sets[64], rule[400];
        sets_text(sets, sizeof sets, rec);
        rule_text(rule, sizeof rule, rec);
        fprintf(out, "verify: %s, %zu output%s, max abs %.3g, max rel %.3g; %s: ", sets, n, n == 1 ? "" : "s",
                max_abs, max_rel, rule);
        if (bad || !rec->verify_ok)
            fprintf(out, "MISMATCH%s%s%s\n", bad ? " in output '" : "", bad ? bad : "", bad ? "'" : "");
        else
            fprintf(out, "OK%s\n", rec->written_checked ? " (and the written file)" : "");
    }
    if (rec->verify_each && rec->exit_code == 0) {
        size_t changed = host_record_changing_calls(rec);
        size_t calls = rec->trace ? rec->trace->count : 0;
        fprintf(out, "verify-each: the loaded model, and the graph after each of the %zu pass call%s "
                     "that changed it (of %zu): ", changed, changed == 1 ? "" : "s", calls);
        if (rec->verify_each_note)
            fprintf(out, "structure OK; outputs not compared (%s)\n", rec->verify_each_note);
        else {
            char sets[64], rule[400];
            sets_text(sets, sizeof sets, rec);
            rule_text(rule, sizeof rule, rec);
            fprintf(out, "structure and outputs (%s, %s; exact passes bit for bit) OK\n", sets, rule);
        }
    }
}

/* ----------------------------------------------------------------- text */

/* "size 14.0 MiB -> 13.9 MiB, initializers 32 -> 41 (13.9 MiB -> 13.9 MiB)" */
static void size_line(FILE *out, const host_model_info *a, const host_model_info *b)
{
    char fa[32] = "?", fb[32] = "?", ia[32], ib[32];
    if (a->file_bytes >= 0)
        host_format_bytes(fa, sizeof fa, (double)a->file_bytes);
    if (b->file_bytes >= 0)
        host_format_bytes(fb, sizeof fb, (double)b->file_bytes);
    host_format_bytes(ia, sizeof ia, (double)a->initializer_bytes);
    host_format_bytes(ib, sizeof ib, (double)b->initializer_bytes);
    fprintf(out, "size %s -> %s, initializers %zu -> %zu (%s -> %s)\n", fa, fb, a->initializers,
            b->initializers, ia, ib);
}

/* -v: every pass of each stage, the input/output table, times. */
static void full_text(FILE *out, const host_run_record *rec)
{
    int tables = 0;
    for (int s = 0; rec->stats && !rec->shapes_only && s < HOST_STAGE_COUNT; s++) {
        host_report_stage(out, &rec->stats[s]);
        tables += rec->stats[s].count > 0;
    }
    if (tables)
        fputs("  (node change: nodes added minus removed by the pass's own calls; checks between\n"
              "   passes: topological sort, shape update and --verify-each after each call that\n"
              "   changed the graph)\n", out);
    if (rec->violations) {
        fputc('\n', out);
        host_violations_print(out, rec->violations);
    }
    if (rec->before && rec->after) {
        host_model_info both[2] = {*rec->before, *rec->after};
        fputc('\n', out);
        host_inspect_table(out, both, 2, 1);
        fputc('\n', out);
    }
    const host_stage_stats *st = rec->stats && !rec->shapes_only ? rec->stats : NULL;
    size_t n = st ? HOST_STAGE_COUNT : 0;
    host_report_times(out, rec->sum, st, n);
    host_report_verify_outputs(out, rec);
}

/* The default: each stage in a few lines, the sizes. */
static void brief_text(FILE *out, const host_run_record *rec)
{
    for (int s = 0; rec->stats && !rec->shapes_only && s < HOST_STAGE_COUNT; s++)
        host_report_stage_brief(out, &rec->stats[s]);
    if (rec->violations) {
        fputc('\n', out);
        host_violations_print(out, rec->violations);
    }
    if (rec->before && rec->after)
        size_line(out, rec->before, rec->after);
    if (rec->verify) /* how the inputs were made, the data folders' checks */
        host_verify_print_notes(out, rec->verify, rec->verify_checked);
}

void host_report_run_text(FILE *out, const host_run_record *rec, int level)
{
    if (rec->exit_code != 0) { /* the figures that explain a failure */
        if (rec->violations && rec->violations->count)
            host_violations_print(out, rec->violations);
        host_report_verify_outputs(out, rec);
        host_report_verdicts(out, rec);
        return;
    }
    if (level <= HOST_REPORT_QUIET)
        return;
    if (level == HOST_REPORT_VERDICTS) {
        host_report_verdicts(out, rec);
        return;
    }
    if (level >= HOST_REPORT_FULL)
        full_text(out, rec);
    else
        brief_text(out, rec);
    host_report_verdicts(out, rec);
    const host_stage_stats *st = rec->stats && !rec->shapes_only ? rec->stats : NULL;
    host_report_summary_line(out, rec->sum, st, st ? HOST_STAGE_COUNT : 0);
}

/* ---------------------------------------------------------------- files */

int host_report_write_file(const char *path, void (*fn)(FILE *, const host_run_record *),
                           const host_run_record *rec, const char *what, ph_error *err)
{
    if (strcmp(path, "-") == 0) {
        fn(host_stdout(), rec);
        return fflush(host_stdout()) == 0 ? 0
                                   : ph_error_set(err, HOST_EXIT_OUTPUT, "%s -: writing stdout: %s",
                                                  what, strerror(errno));
    }
    char *dir = host_dirname(path);
    char *tmp = host_xasprintf("%s/.passhost-report.XXXXXX", dir);
    free(dir);
    int fd = mkostemp(tmp, O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s %s: %s", what, path, strerror(errno));
        if (fd >= 0)
            close(fd), unlink(tmp);
        free(tmp);
        return rc;
    }
    fchmod(fd, 0644);
    fn(f, rec);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (!bad && rename(tmp, path) != 0)
        bad = 1;
    int rc = bad ? ph_error_set(err, HOST_EXIT_OUTPUT, "%s %s: %s", what, path, strerror(errno)) : 0;
    if (bad)
        unlink(tmp);
    free(tmp);
    return rc;
}

int host_report_json_write(const host_run_record *rec, const char *path, ph_error *err)
{
    return host_report_write_file(path, host_report_json, rec, "--report-json", err);
}

int host_report_html_write(const host_run_record *rec, const char *path, ph_error *err)
{
    return host_report_write_file(path, host_report_html, rec, "--report-html", err);
}

int host_report_check_path(const char *option, const char *path, const host_config *cfg,
                           ph_error *err)
{
    if (!path || strcmp(path, "-") == 0)
        return 0;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return ph_error_set(err, HOST_EXIT_OUTPUT, "%s %s: is a folder", option, path);
    const char *models[2] = {cfg->input, cfg->output};
    for (int i = 0; i < 2; i++) {
        ph_error e = {0};
        if (models[i] && host_check_output(models[i], path, &e))
            return ph_error_set(err, HOST_EXIT_OUTPUT, "%s %s: that is the %s model", option, path,
                                i ? "output" : "input");
    }
    char *dir = host_dirname(path);
    int rc = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s %s: folder %s does not exist", option, path, dir);
    else if (access(dir, W_OK) != 0)
        rc = ph_error_set(err, HOST_EXIT_OUTPUT, "%s %s: folder %s is not writable: %s", option,
                          path, dir, strerror(errno));
    free(dir);
    return rc;
}
