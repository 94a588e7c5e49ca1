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
 * --list-targets (profile.h),
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

#include "io/cleanup.h"
#include "cli.h"
#include "config/profile.h"
#include "base/exit.h"
#include "report/inspect.h"
#include "job.h"
#include "report/report.h"
#include "supervise/supervise.h"
#include "log/trace.h"

/* The model is freed before exit only where a leak checker looks: for the
 * process the OS takes everything back at once, and a million-node model
 * costs a second to free piece by piece (clang's -disable-free, likewise). */
#if defined(__SANITIZE_ADDRESS__)
#define HOST_FREE_MODEL_AT_EXIT 1
#else
#define HOST_FREE_MODEL_AT_EXIT 0
#endif

/* Print the error (if any), free everything; returns the exit code. */
static int finish(host_job *j, int rc)
{
    if (rc)
        host_log_fatal(&j->log, j->err.message);
    host_job_free(j, HOST_FREE_MODEL_AT_EXIT);
    host_supervise_finished(rc); /* a worker tells its supervisor it got here */
    return rc;
}

/* --list-passes [--markdown]: the table of every pass found. */
static int list_passes(host_job *j)
{
    int rc = host_job_plugins(j);
    if (!rc && j->cli.list_passes == 2)
        host_report_passes_markdown(stdout, j->reg);
    else if (!rc)
        host_report_passes(stdout, j->reg);
    return rc;
}

int main(int argc, char **argv)
{
    host_job j;
    host_job_init(&j, stderr);
    int rc = host_cli_parse(&j.cli, argc, argv, &j.err);
    if (!rc && (j.cli.help || j.cli.version)) {
        j.cli.help ? host_cli_usage(stdout) : host_cli_version(stdout);
        return finish(&j, 0);
    }
    if (!rc && j.cli.list_targets)
        return finish(&j, host_profile_list(stdout, &j.err));
    if (!rc && j.cli.inspect)
        return finish(&j, host_inspect_main(&j.cli, stdout, &j.err));
    j.out = host_cli_report_stream(&j.cli);
    j.tty = host_trace_terminal(j.cli.quiet);
    if (!rc) rc = host_job_configure(&j);
    if (!rc && !j.cli.list_passes) { /* the rest runs in a worker process (supervise.h) */
        int code = host_supervise(&j.cli, j.cfg, &j.log);
        if (code >= 0) /* the supervisor: the run is over, its messages printed */
            return finish(&j, 0), code;
    }
    if (!rc) host_cleanup_install(); /* temporary files go with SIGINT/SIGTERM; SIGBUS of a shrunk input */
    if (!rc && j.cli.list_passes)
        return finish(&j, list_passes(&j));
    if (!rc) rc = host_job_run(&j);
    rc = host_job_report(&j, rc);
    if (!rc) rc = host_cli_stream_output(&j.cli, &j.err);
    return finish(&j, rc);
}
