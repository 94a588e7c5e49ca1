/* host/report/report.h - what the user sees: the log (stderr and log_path), the
 * per-pass report and the --list-passes table.
 *
 * Logging: warnings and info go to stderr (info not with -q) and, when
 * log_path is set, to that file too (with debug messages).  A fatal error is
 * printed once, by host_log_fatal, as `passhost: <message>`.  Messages a
 * pass logs at PH_LOG_ERROR go to the log file only: the pass's failure is
 * reported by the runner as that one fatal line.
 */
#ifndef PASSHOST_HOST_REPORT_H
#define PASSHOST_HOST_REPORT_H

#include <stdio.h>

#include "config/loader.h"
#include "passhost/plugin.h"
#include "run/runner.h"
#include "base/util.h"

struct host_trace;

typedef struct host_log {
    FILE *err;  /* borrowed: normally stderr */
    FILE *file; /* owned: the log_path file, or NULL */
    int quiet;  /* no info on err */
    struct host_trace *trace; /* borrowed, may be NULL: its progress line is erased first */
} host_log;

/* Start logging to err (borrowed) and, if log_path is not NULL, to that file
 * (truncated).  HOST_EXIT_CONFIG when the file cannot be opened. */
int host_log_open(host_log *log, FILE *err, const char *log_path, int quiet, ph_error *perr);
void host_log_close(host_log *log);

void host_log_msg(host_log *log, ph_log_level level, const char *pass, const char *fmt, ...)
    HOST_PRINTF(4, 5);
/* The one line of a fatal error: `passhost: <message>` (also in the file). */
void host_log_fatal(host_log *log, const char *message);
/* A ph_log_fn for ph_ctx_new; user is the host_log. */
void host_log_sink(void *user, ph_log_level level, const char *pass, const char *message);

/* Model-level figures of one run, for the summary. */
typedef struct host_run_summary {
    const char *input;
    const char *output;
    double load_ms;
    double save_ms;
    double total_ms;
    size_t nodes_loaded;
    size_t nodes_saved;
} host_run_summary;

/* The per-pass table of one stage: calls, rewrites, the time of the pass's
 * own calls, and the change in node count those calls made; a row for the
 * work after the calls that changed the graph (sort, shape update,
 * --verify-each), and the total, whose time is the stage's. */
void host_report_stage(FILE *out, const host_stage_stats *st);
/* Load/save times and the one summary line (host_report_times, then
 * host_report_summary_line). */
void host_report_summary(FILE *out, const host_run_summary *sum,
                         const host_stage_stats *stages, size_t stage_count);
void host_report_times(FILE *out, const host_run_summary *sum, const host_stage_stats *stages,
                       size_t stage_count);
void host_report_summary_line(FILE *out, const host_run_summary *sum,
                              const host_stage_stats *stages, size_t stage_count);
/* The --list-passes table, in catalogue order, with each pass's parameters. */
void host_report_passes(FILE *out, const host_registry *reg);
/* The same as a markdown table (docs/passes.md), in the manner of the Icraft
 * manual's pass table: stage, default, exactness, targets, parameters and
 * ordering relations, then the summary. */
void host_report_passes_markdown(FILE *out, const host_registry *reg);

#endif
