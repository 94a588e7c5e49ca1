/* host/cli/job.h - one run of passhost's pipeline, shared by the passhost
 * program (main.c) and the embedding library (pipeline.c,
 * passhost/pipeline.h), so the two run the same steps in the same order and
 * cannot drift apart:
 *
 *   host_job_configure  options -> config (INI file or text, --set, -i/-o,
 *                       --passes, --skip, --input-shape, custom_config) -> log
 *   host_job_run        plugins -> plan -> load model -> input shapes
 *                       -> [reference outputs] -> optimize stage -> adapt stage
 *                       -> [shapes into value_info] -> [compare outputs]
 *                       -> check -> save -> [check the written file]
 *   host_job_report     the report: text, --report-json, --report-html
 *
 * --bisect replaces everything after the reference outputs (bisect.h).
 * What only a program does stays in main.c: --help, --inspect,
 * --list-passes, the fork supervisor (supervise.h), the signal handlers
 * (cleanup.h), `-o -`, and printing the error line.
 *
 * The steps print nothing themselves: warnings and info go to the log
 * (host_job.log, whose stream the caller chooses), the report to
 * host_job.out.  Each step returns 0 or an exit code (exit.h) with a
 * one-line message in host_job.err; after a failure call no further step
 * but host_job_report (which reports what the run got to) and
 * host_job_free.
 *
 * Ownership: the job owns everything it fills; the caller owns the job
 * (usually on the stack) and the streams and input bytes it hands in.
 */
#ifndef PASSHOST_HOST_JOB_H
#define PASSHOST_HOST_JOB_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "config/config.h"
#include "report/inspect.h"
#include "config/loader.h"
#include "config/plan.h"
#include "report/report.h"
#include "run/runner.h"
#include "log/trace.h"
#include "check/target_report.h"
#include "check/verify.h"

typedef struct host_job {
    /* --- set by the caller (host_job_init, then the fields below) --- */
    host_cli cli;              /* the options (host_cli_parse) */
    FILE *out;                 /* the text report and --bisect's lines (NULL: none) */
    FILE *tty;                 /* the progress line's terminal (NULL: none) */
    const void *input_data;    /* borrowed: the model as bytes instead of the */
    size_t input_size;         /*   file cfg->input, which then only names it */
    /* --- filled by the steps --- */
    double t0;                 /* host_now_ms() at host_job_init */
    host_config *cfg;
    host_registry *reg;
    host_plan plan;
    host_log log;
    ph_model *model;
    host_verify *verify;
    host_stage_stats stats[HOST_STAGE_COUNT];
    host_run_summary sum;
    ph_error err;              /* the message of the failed step */
    const char *staged;        /* the output as saved, in its staging folder (supervise.h) */
    host_trace trace;          /* every pass call, and the progress line */
    host_region_list regions;  /* --report-html: the regions the first changing calls changed */
    host_model_info before;    /* the input as loaded (for the reports) */
    host_model_info after;     /* the result as saved */
    int stages_ran;            /* host_run_all was called: stats are filled */
    int report_paths_ok;       /* --report-json/--report-html can be written */
    int bisected;              /* --bisect ran instead of the rest: no report */
    int verify_checked, verify_ok, written_checked; /* what --verify did */
    const char *verify_each_note; /* --verify-each checked structure only: why */
    host_violations violations;   /* what check_target_constraints reported */
    char verify_each_why[300];
} host_job;

/* Zero the job; warnings, info and fatal lines go to log_stream (borrowed;
 * stderr for the program). */
void host_job_init(host_job *j, FILE *log_stream);

/* The config from j->cli (host_cli_config), the log (quiet with -q, plus
 * log_path), and the check that the report files can be written. */
int host_job_configure(host_job *j);

/* Load the plugins (plugin_dir, PASSHOST_PLUGIN_PATH, the default folders)
 * into j->reg; host_job_run calls it when j->reg is still NULL. */
int host_job_plugins(host_job *j);

/* The pipeline from the plugins to the saved (and with --verify, checked)
 * output; with --bisect the bisection instead, setting j->bisected. */
int host_job_run(host_job *j);

/* --trace-rule: the plugins, the plan (for the pass's parameters), the
 * model as the run would start from it, then the trace on j->out; nothing
 * is written.  0 or an exit code. */
int host_job_trace_rule(host_job *j);

/* The report of the run (also of a failed one: what it got to), unless
 * --bisect ran: text to j->out (quiet with -q) and to the log file,
 * --report-json and --report-html.  Returns rc, or when rc is 0 the error
 * of a report file. */
int host_job_report(host_job *j, int rc);

/* Free what the job holds (not the streams).  free_model 0 leaves the
 * model to the end of the process (a program's exit takes it back at
 * once; a million-node model costs a second to free piece by piece). */
void host_job_free(host_job *j, int free_model);

#endif
