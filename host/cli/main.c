/* host/cli/main.c - the passhost program.
 *
 *   arguments -> config -> [supervisor: fork a worker] -> the pipeline
 *             -> report -> [-o -: the model to stdout]
 *
 * The pipeline itself is host_job_run (job.h):
 *
 *   plugins -> plan -> load model -> input shapes -> [reference outputs]
 *   -> optimize stage -> adapt stage -> [shapes into value_info]
 *   -> [compare outputs] -> check -> save -> [check the written file]
 *
 * the same function the embedding library runs (passhost/pipeline.h), so
 * the program and the library cannot drift apart.  What only a program
 * does is here: --help, --version, --inspect (inspect.h), --list-passes,
 * --list-targets and --check-target (profile.h), --print-pipeline
 * (pipeline_text.h), --trace-rule, --check-rules (check_rules.h),
 * the fork supervisor (supervise.h), the signal handlers (cleanup.h), `-o -`
 * and printing the one error line.
 *
 * The steps print nothing themselves: the report (report_run.h) does, on
 * stdout (stderr when stdout carries the model, -o -), and into the
 * --report-json / --report-html files.  Each step returns 0 or an exit code
 * (host/base/exit.h) with a one-line message; the first failure stops the
 * pipeline, is printed once, and nothing is written.  See docs/config.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/streams.h"
#include "io/cleanup.h"
#include "cli.h"
#include "check/target_report.h"
#include "config/plan.h"
#include "config/profile.h"
#include "config/pipeline_text.h"
#include "io/shapes.h"
#include "base/exit.h"
#include "base/util.h"
#include "report/inspect.h"
#include "check/check_rules.h"
#include "job.h"
#include "report/report.h"
#include "supervise/supervise.h"
#include "log/trace.h"

/* The model is freed before exit only where a leak checker looks: for the
 * process the OS takes everything back at once, and a million-node model
 * costs a second to free piece by piece (clang's -disable-free, likewise). */
#if defined(__has_feature) /* clang before 17 defines no __SANITIZE_ADDRESS__ */
#if __has_feature(address_sanitizer)
#define HOST_FREE_MODEL_AT_EXIT 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(HOST_FREE_MODEL_AT_EXIT)
#define HOST_FREE_MODEL_AT_EXIT 1
#endif
#ifndef HOST_FREE_MODEL_AT_EXIT
#define HOST_FREE_MODEL_AT_EXIT 0
#endif

/* Print the error (if any), free everything; returns the exit code. */
static int finish(host_job *j, int rc)
{
    if (rc)
        host_log_fatal(&j->log, j->err.message);
    if (host_supervise_in_worker()) /* a worker: -i -/-o - files are its supervisor's */
        host_cli_keep_files(&j->cli);
    host_job_free(j, HOST_FREE_MODEL_AT_EXIT);
    host_supervise_finished(rc); /* a worker tells its supervisor it got here */
    return rc;
}

/* --inspect: the positional models, then -i. */
static int inspect(const host_cli *cli, ph_error *err)
{
    size_t n = cli->positional_count;
    const char **paths = host_xcalloc(n + 1, sizeof *paths);
    for (size_t i = 0; i < n; i++)
        paths[i] = cli->positional[i];
    if (cli->input)
        paths[n++] = cli->input;
    int rc = host_inspect_main(paths, n, host_stdout(), err);
    free(paths);
    return rc;
}

/* --list-passes [--markdown]: the table of every pass found. */
static int list_passes(host_job *j)
{
    int rc = host_job_plugins(j);
    if (!rc && j->cli.list_passes == 2)
        rc = host_report_passes_markdown(host_stdout(), j->reg, &j->err);
    else if (!rc)
        rc = host_report_passes(host_stdout(), j->reg, &j->err);
    return rc;
}

/* --check-target PROFILE MODEL: the model against the profile, as
 * check_target_constraints does after the adapt stage, without a stage:
 * the table on stdout; with --strict-target a violation is exit 10. */
static int check_target(host_job *j)
{
    const char *path = j->cli.input;
    if (!path)
        return ph_error_set(&j->err, HOST_EXIT_USAGE, "--check-target %s: give the model to check after it",
                            j->cli.check_target);
    host_profile *prof = NULL;
    int rc = host_profile_load(j->cli.check_target, &prof, &j->err);
    ph_model *m = NULL;
    ph_error e = {0};
    if (!rc && ph_model_load(path, &m, &e) != 0)
        rc = ph_error_set(&j->err, HOST_EXIT_MODEL, "%s: %s", path, e.message);
    host_config *cfg = rc ? NULL : host_config_new();
    if (!rc)
        rc = host_apply_shapes(m, cfg, 0, &j->err);
    host_violations vs = {.target = prof ? ph_target_name(prof->target) : "", .checked = 1};
    if (!rc && ph_target_check(prof->target, m, host_violations_hook, &vs) < 0)
        rc = ph_error_set(&j->err, HOST_EXIT_MODEL, "%s: the check failed (out of memory)", path);
    if (!rc) {
        host_registry *reg = host_registry_new();
        if (host_load_plugins(reg, j->cli.plugin_dir, &e) != 0)
            host_log_msg(&j->log, PH_LOG_WARN, NULL, "passes not loaded, so no fixes named: %s", e.message);
        host_violations_fixers(&vs, reg);
        host_registry_free(reg);
        host_violations_print(stdout, &vs);
        if (vs.count && j->cli.strict_target)
            rc = ph_error_set(&j->err, HOST_EXIT_TARGET, "%s: %zu target violation%s (target %s)", path, vs.count,
                              vs.count == 1 ? "" : "s", vs.target);
        else if (vs.count)
            host_log_msg(&j->log, PH_LOG_WARN, NULL,
                         "%zu target violation%s (target %s); --strict-target makes this exit %d", vs.count,
                         vs.count == 1 ? "" : "s", vs.target, HOST_EXIT_TARGET);
    }
    host_violations_clear(&vs);
    host_config_free(cfg);
    ph_model_free(m);
    host_profile_free(prof);
    return rc;
}

/* --print-pipeline: the plan as a --passes= value, quoted for a shell. */
static int print_pipeline(host_job *j)
{
    int rc = host_job_plugins(j);
    if (!rc)
        rc = host_plan_build(&j->plan, j->cfg, j->reg, &j->err);
    if (rc)
        return rc;
    char *text = host_pipeline_text(&j->plan);
    FILE *out = host_stdout();
    fputs("--passes='", out);
    for (const char *c = text; *c; c++) {
        if (*c == '\'')
            fputs("'\\''", out); /* ' ends the quote, \' is one, ' opens again */
        else
            fputc(*c, out);
    }
    fputs("'\n", out);
    free(text);
    return 0;
}

int main(int argc, char **argv)
{
    host_streams_init(); /* control characters escaped; the model's stdout kept from plugins */
    if (argc > 1 && strcmp(argv[1], "--check-rules") == 0) {
        host_streams_protect_stdout(); /* what a plugin prints goes to stderr, as in a run */
        return host_check_rules_main(argc, argv, host_stdout());
    }
    host_job j;
    host_job_init(&j, stderr);
    int rc = host_cli_parse(&j.cli, argc, argv, &j.err);
    if (!rc && (j.cli.help || j.cli.version)) {
        j.cli.help ? host_cli_usage(host_stdout()) : host_cli_version(host_stdout());
        return finish(&j, 0);
    }
    if (!rc && j.cli.list_targets)
        return finish(&j, host_profile_list(stdout, &j.err));
    if (!rc && j.cli.check_target)
        return finish(&j, check_target(&j));
    if (!rc && j.cli.inspect)
        return finish(&j, inspect(&j.cli, &j.err));
    j.out = host_cli_report_stream(&j.cli);
    j.tty = host_trace_terminal(j.cli.quiet);
    if (!rc) rc = host_job_configure(&j);
    if (!rc) { /* the rest runs in a worker process (supervise.h), --list-passes, --print-pipeline and --trace-rule too */
        int code = host_supervise(&j.cli.supervise, j.cfg, &j.log);
        if (code == 0) /* the supervisor: the worker succeeded and its output is committed */
            return finish(&j, host_cli_stream_output(&j.cli, &j.err)); /* -o -, a device */
        if (code > 0) /* the supervisor: the run failed, its messages printed */
            return finish(&j, 0), code;
    }
    if (!rc) host_streams_protect_stdout(); /* (a worker did): before any plugin is loaded */
    if (!rc) host_cleanup_install(host_supervise_finished); /* temporary files go with SIGINT/SIGTERM; SIGBUS of a shrunk input */
    if (!rc && j.cli.list_passes)
        return finish(&j, list_passes(&j));
    if (!rc && j.cli.print_pipeline)
        return finish(&j, print_pipeline(&j));
    if (!rc && j.cli.trace_rule) /* reads the model only: nothing to commit */
        return finish(&j, host_job_trace_rule(&j));
    if (!rc) rc = host_job_run(&j);
    if (host_supervise_blame_mode()) /* the supervisor's silent re-run: no report, no output */
        return finish(&j, rc);
    rc = host_job_report(&j, rc);
    if (!rc && host_supervise_in_worker()) /* a worker: its supervisor commits, then streams */
        return finish(&j, 0);
    if (!rc) rc = host_cli_stream_output(&j.cli, &j.err);
    return finish(&j, rc);
}
