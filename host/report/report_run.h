/* host/report/report_run.h - the report of one run, in three forms: text (stdout,
 * docs/config.md "Output"), JSON (--report-json, docs/report.schema.json)
 * and HTML (--report-html, one self-contained file).
 *
 * The pipeline fills a host_run_record with what it learned, borrowing
 * everything; the report functions only read it and print to the stream or
 * file they are given, so the pipeline itself never prints a report.  A
 * record may be partial: a run that failed has exit_code and error set, and
 * what it did not reach is NULL or zero (the files report that too).
 */
#ifndef PASSHOST_HOST_REPORT_RUN_H
#define PASSHOST_HOST_REPORT_RUN_H

#include <stdio.h>

#include "config/config.h"
#include "inspect.h"
#include "config/plan.h"
#include "report.h"
#include "run/runner.h"
#include "log/trace.h"
#include "check/target_report.h"
#include "check/verify.h"

typedef struct host_run_record {
    int argc;                       /* the command line */
    char **argv;
    const host_config *cfg;         /* NULL when the configuration failed */
    const host_plan *plan;          /* NULL when not built */
    const char *input, *output;     /* names to show ("-" for a stream) */
    const host_stage_stats *stats;  /* HOST_STAGE_COUNT entries, or NULL: no stage ran */
    const host_run_summary *sum;
    const host_model_info *before;  /* the input as loaded, or NULL */
    const host_model_info *after;   /* the result as saved, or NULL */
    const host_trace *trace;        /* the pass calls, or NULL */
    /* verification */
    const host_verify *verify;      /* reference outputs, or NULL */
    host_verify_config vcfg;        /* what it was made with */
    int verify_checked;             /* --verify compared the result (verify's results are it) */
    int verify_ok;                  /* ... and it matched */
    int written_checked;            /* the written file loaded back and matched too */
    int verify_each;                /* --verify-each was on */
    const char *verify_each_note;   /* why only the structure was checked, or NULL */
    int shapes_only;                /* --shapes: no passes */
    const host_violations *violations; /* the target check's, or NULL: no check ran */
    const host_region_list *regions; /* what the first changing calls changed, or NULL */
    /* outcome */
    int exit_code;
    const char *error;              /* the one error line (without "passhost: "), or NULL */
} host_run_record;

/* --report-html draws the regions the first this many changing pass calls
 * changed, while the graph has at most this many nodes. */
#define HOST_REPORT_DIAGRAMS 24
#define HOST_REPORT_DIAGRAM_MAX_NODES 100000

/* How much the text report says (-q, the default, -v). */
enum {
    HOST_REPORT_QUIET = 0,    /* -q: nothing on success (errors are the log's) */
    HOST_REPORT_VERDICTS = 1, /* the verify verdicts only (the embedding library) */
    HOST_REPORT_BRIEF = 2,    /* each stage in a few lines (the passes that changed
                                 the graph), sizes, verdicts, the summary line */
    HOST_REPORT_FULL = 3      /* -v: each stage's table of every pass, the
                                 input/output table, times, every output's errors */
};

/* The text report at a level above; the summary line last.  On a failed
 * run, at any level, only the verify figures and verdict, if any. */
void host_report_run_text(FILE *out, const host_run_record *rec, int level);

/* With --verify: one line per output, its largest errors
 * (`  output NAME  max abs E  max rel E[  MISMATCH]`). */
void host_report_verify_outputs(FILE *out, const host_run_record *rec);
/* The verdict lines alone (`verify: 3 runs, 1 output, max abs 1.8e-06: OK`,
 * `verify-each: ...`); nothing when neither was asked for. */
void host_report_verdicts(FILE *out, const host_run_record *rec);

/* Write the report as JSON or HTML to path ("-": stdout), through a
 * temporary file renamed over path.  0 or HOST_EXIT_OUTPUT. */
int host_report_json_write(const host_run_record *rec, const char *path, ph_error *err);
int host_report_html_write(const host_run_record *rec, const char *path, ph_error *err);
void host_report_json(FILE *out, const host_run_record *rec);
void host_report_html(FILE *out, const host_run_record *rec);

/* Check before a run that path can be written: its folder exists and is
 * writable, and it is not the input or output model.  0 or
 * HOST_EXIT_OUTPUT naming the option. */
int host_report_check_path(const char *option, const char *path, const host_config *cfg,
                           ph_error *err);

/* Helpers shared by the report writers. */
/* Every pass call's changes: how many calls changed the graph. */
size_t host_record_changing_calls(const host_run_record *rec);
/* The effective configuration as INI text (caller frees), or NULL without
 * a config and plan. */
char *host_record_config_ini(const host_run_record *rec);
/* Write text to path ("-": stdout) through a temporary file. */
int host_report_write_file(const char *path, void (*fn)(FILE *, const host_run_record *),
                           const host_run_record *rec, const char *what, ph_error *err);

#endif
