/* host/report/report.h - what the user sees after a run: the per-pass
 * report and the --list-passes table (the log is log/log.h).
 */
#ifndef PASSHOST_HOST_REPORT_H
#define PASSHOST_HOST_REPORT_H

#include <stdio.h>

#include "config/loader.h"
#include "log/log.h"
#include "passhost/host.h"
#include "passhost/plugin.h"
#include "run/runner.h"
#include "base/util.h"

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
/* The stage in a few lines (the default report): its header as in the
 * table, then the passes that changed the graph, most rewrites first, each
 * with its rewrites and node change ("constant_folding 57 (-57 nodes)"). */
void host_report_stage_brief(FILE *out, const host_stage_stats *st);
/* Load/save times and the one summary line (host_report_times, then
 * host_report_summary_line). */
void host_report_summary(FILE *out, const host_run_summary *sum,
                         const host_stage_stats *stages, size_t stage_count);
void host_report_times(FILE *out, const host_run_summary *sum, const host_stage_stats *stages,
                       size_t stage_count);
void host_report_summary_line(FILE *out, const host_run_summary *sum,
                              const host_stage_stats *stages, size_t stage_count);
/* The --list-passes table, in run order (order.h: the optimize stage's
 * passes, then the adapt stage's), with each pass's parameters.  0, or the
 * error of the stage order (the pipeline file, hints). */
int host_report_passes(FILE *out, const host_registry *reg, ph_error *err);
/* The same as a markdown table (docs/passes.md), in the manner of the Icraft
 * manual's pass table: stage, default, exactness, targets, parameters and
 * ordering relations, then the summary. */
int host_report_passes_markdown(FILE *out, const host_registry *reg, ph_error *err);

#endif
