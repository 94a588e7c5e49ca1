/* host/main.c - the passhost program: the pipeline in one screen.
 *
 *   arguments -> config -> plugins -> plan -> load model -> input shapes
 *             -> [reference outputs] -> optimize stage -> adapt stage
 *             -> [shapes into value_info] -> [compare outputs] -> save -> report
 *
 * --bisect replaces everything after the reference outputs (bisect.h);
 * --inspect only loads models and prints their summary table (inspect.h).
 * The steps print nothing themselves: the report (report_run.h) does, on
 * stdout (stderr when stdout carries the model, -o -), and into the
 * --report-json / --report-html files.
 *
 * Each step returns 0 or an exit code (host/exit.h) with a one-line message;
 * the first failure stops the pipeline, is printed once, and nothing is
 * written.  See docs/config.md.
 */
#include <stdio.h>
#include <unistd.h>

#include "bisect.h"
#include "cleanup.h"
#include "cli.h"
#include "config.h"
#include "dump.h"
#include "exit.h"
#include "inspect.h"
#include "loader.h"
#include "model_io.h"
#include "plan.h"
#include "report.h"
#include "report_run.h"
#include "runner.h"
#include "shapes.h"
#include "supervise.h"
#include "trace.h"
#include "util.h"
#include "verify.h"

typedef struct run {
    host_cli cli;
    host_config *cfg;
    host_registry *reg;
    host_plan plan;
    host_log log;
    ph_model *model;
    host_verify *verify;
    host_stage_stats stats[HOST_STAGE_COUNT];
    host_run_summary sum;
    ph_error err;
    host_trace trace;          /* every pass call, and the progress line */
    host_model_info before;    /* the input as loaded (for the reports) */
    host_model_info after;     /* the result as saved */
    int stages_ran;            /* host_run_all was called: stats are filled */
    int report_paths_ok;       /* --report-json/--report-html can be written */
    int verify_checked, verify_ok, written_checked; /* what --verify did */
    const char *verify_each_note; /* --verify-each checked structure only: why */
    char verify_each_why[300];
} run;

static int load_plugins(run *r)
{
    r->reg = host_registry_new();
    if (!r->reg)
        return ph_error_set(&r->err, HOST_EXIT_PLUGIN, "out of memory");
    int rc = host_load_plugins(r->reg, r->cfg->plugin_dir, &r->err);
    for (size_t i = 0; i < host_registry_skipped_count(r->reg); i++)
        host_log_msg(&r->log, PH_LOG_WARN, NULL, "skipped (not a pass plugin): %s",
                     host_registry_skipped(r->reg, i));
    return rc;
}

/* The reports want the input as loaded; the text one only without -q. */
static int want_tables(const run *r)
{
    return !r->cli.quiet || r->cli.report_json || r->cli.report_html;
}

static int load_model(run *r)
{
    /* --bisect writes no output model (and may have none) */
    int rc = r->cli.bisect ? 0 : host_check_output(r->cfg->input, r->cfg->output, &r->err);
    if (!rc)
        rc = host_model_load(r->cfg->input, r->cli.verify_each, &r->model, &r->sum.load_ms,
                             &r->err);
    if (!rc && !r->cli.bisect) /* also no external-data file of the input under any name */
        rc = host_model_check_output(r->model, r->cfg->output, &r->err);
    if (!rc)
        r->sum.nodes_loaded = ph_model_node_count(r->model);
    if (!rc && want_tables(r))
        host_model_info_take(&r->before, r->model, host_cli_input_name(&r->cli, r->cfg),
                             r->cfg->input);
    return rc;
}

/* The structural verifier before the save: passhost never writes a model
 * it would not load; the message names the pass that last changed it. */
static int check_before_save(run *r)
{
    const char *changed_by = NULL;
    for (int s = 0; s < HOST_STAGE_COUNT && r->stages_ran; s++)
        if (r->stats[s].last_changed)
            changed_by = r->stats[s].last_changed;
    return host_model_check(r->model, changed_by, &r->err);
}

/* The stages, with --max-rewrites, --print-changes and --dump-dir. */
static int run_stages(run *r)
{
    if (r->cli.dump_dir) {
        int rc = host_dump_prepare(r->cli.dump_dir, &r->err);
        if (rc)
            return rc;
    }
    host_run_opts opts = {.verify_each = r->cli.verify_each, .log = &r->log,
                          .update_shapes = r->cfg->infer_shapes, .verify = r->verify,
                          .changes = r->cli.print_changes ? stderr : NULL,
                          .dump_dir = r->cli.dump_dir, .trace = &r->trace};
    uint64_t rewrites = 0;
    r->stages_ran = 1;
    int rc = host_run_all(r->model, &r->plan, r->cli.max_rewrites, &opts, r->stats, &rewrites,
                          &r->err);
    host_trace_clear_line(&r->trace);
    if (!rc && r->cli.max_rewrites >= 0)
        host_log_msg(&r->log, PH_LOG_INFO, NULL, "--max-rewrites %lld: %llu rewrite%s applied",
                     r->cli.max_rewrites, (unsigned long long)rewrites, rewrites == 1 ? "" : "s");
    return rc;
}

/* The verification settings: [verify], with --verify=N's runs. */
static host_verify_config verify_config(const run *r)
{
    host_verify_config vc = r->cfg->verify;
    if (r->cli.verify_runs > 0)
        vc.runs = r->cli.verify_runs;
    return vc;
}

/* --bisect: everything after the model is loaded and verified against. */
static int bisect(run *r)
{
    int rc = r->cli.dump_dir ? host_dump_prepare(r->cli.dump_dir, &r->err) : 0;
    if (rc)
        return rc;
    host_bisect_job job = {.cli = &r->cli, .cfg = r->cfg, .plan = &r->plan, .log = &r->log,
                           .verify = r->verify, .vcfg = verify_config(r), .model = r->model,
                           .out = r->cli.quiet ? NULL : stdout};
    return host_bisect(&job, &r->err);
}

/* Reference outputs of the model as loaded, for --verify and --verify-each.
 * --verify-each on a model the evaluator cannot run checks structure only. */
static int prepare_verify(run *r)
{
    if (!r->cli.verify_runs && !r->cli.verify_each && !r->cli.bisect)
        return 0;
    host_verify_config vc = verify_config(r);
    int rc = host_verify_new(r->model, &vc, &r->verify, &r->err);
    if (rc && !r->cli.verify_runs && !r->cli.bisect) {
        host_log_msg(&r->log, PH_LOG_WARN, NULL, "--verify-each checks structure only: %s",
                     r->err.message);
        snprintf(r->verify_each_why, sizeof r->verify_each_why, "%.290s", r->err.message);
        r->verify_each_note = r->verify_each_why;
        host_verify_free(r->verify);
        r->verify = NULL;
        return 0;
    }
    return rc;
}

/* --shapes, or [model] write_shapes: inferred shapes into value_info. */
static int write_shapes(run *r)
{
    if (!r->cfg->write_shapes && !r->cli.shapes_only)
        return 0;
    ph_error e = {0};
    if (ph_graph_write_value_info(ph_model_graph(r->model), &e) < 0)
        return ph_error_set(&r->err, HOST_EXIT_MODEL, "writing shapes: %.400s", e.message);
    return 0;
}

/* --verify: compare the rewritten model's outputs with the reference. */
static int check_outputs(run *r)
{
    if (!r->cli.verify_runs)
        return 0;
    int rc = host_verify_check(r->verify, r->model, &r->err);
    r->verify_checked = rc == 0 || rc == HOST_EXIT_MISMATCH; /* the report prints the figures */
    r->verify_ok = rc == 0;
    return rc;
}

/* --verify: the file as written must load and compute the same outputs too
 * (a check of the save itself); on failure the output is removed. */
static int check_written(run *r)
{
    if (!r->cli.verify_runs)
        return 0;
    ph_model *written = NULL;
    ph_error e = {0};
    int rc = ph_model_load(r->cfg->output, &written, &e);
    if (rc)
        rc = ph_error_set(&r->err, HOST_EXIT_OUTPUT, "%s: the written file does not load back: %.400s",
                          r->cfg->output, e.message);
    if (!rc) {
        host_apply_shapes(written, r->cfg, 0, &e); /* the same input shapes as the run */
        rc = host_verify_check(r->verify, written, &e);
        if (rc)
            rc = ph_error_set(&r->err, rc, "%s: the written file computes other outputs: %.400s",
                              r->cfg->output, e.message);
    }
    ph_model_free(written);
    if (rc)
        unlink(r->cfg->output);
    r->written_checked = rc == 0;
    return rc;
}

/* What the run learned, for the reports (borrowed from r). */
static host_run_record record(run *r, int rc)
{
    host_run_record rec = {.argc = r->cli.argc, .argv = r->cli.argv, .cfg = r->cfg,
                           .plan = r->model ? &r->plan : NULL, /* built before the load */
                           .input = r->cfg ? host_cli_input_name(&r->cli, r->cfg) : NULL,
                           .output = r->cfg ? host_cli_output_name(&r->cli, r->cfg) : NULL,
                           .stats = r->stages_ran ? r->stats : NULL, .sum = &r->sum,
                           .before = r->before.path ? &r->before : NULL,
                           .after = r->after.path ? &r->after : NULL, .trace = &r->trace,
                           .verify = r->verify, .vcfg = r->cfg ? verify_config(r) : (host_verify_config){0},
                           .verify_checked = r->verify_checked, .verify_ok = r->verify_ok,
                           .written_checked = r->written_checked, .verify_each = r->cli.verify_each,
                           .verify_each_note = r->verify_each_note,
                           .shapes_only = r->cli.shapes_only, .exit_code = rc,
                           .error = rc ? r->err.message : NULL};
    return rec;
}

/* The report: text on stdout (stderr with -o -; the verdicts also with -q)
 * and in the log file, --report-json and --report-html; on a failed run
 * what it got to.  Returns rc, or the error of a report file. */
static int report(run *r, double t0, int rc)
{
    if (!r->cfg)
        return rc;
    r->sum.input = host_cli_input_name(&r->cli, r->cfg);
    r->sum.output = host_cli_output_name(&r->cli, r->cfg);
    r->sum.total_ms = host_now_ms() - t0;
    if (r->model)
        r->sum.nodes_saved = ph_model_node_count(r->model);
    if (!rc && r->model && want_tables(r))
        host_model_info_take(&r->after, r->model, r->sum.output, r->cfg->output);
    host_run_record rec = record(r, rc);
    host_trace_clear_line(&r->trace);
    host_report_run_text(host_cli_report_stream(&r->cli), &rec, r->cli.quiet);
    if (r->log.file)
        host_report_run_text(r->log.file, &rec, 0);
    ph_error e = {0};
    int frc = 0;
    if (r->cli.report_json && r->report_paths_ok)
        frc = host_report_json_write(&rec, r->cli.report_json, &e);
    if (!frc && r->cli.report_html && r->report_paths_ok)
        frc = host_report_html_write(&rec, r->cli.report_html, &e);
    if (frc && !rc) {
        r->err = e;
        return frc;
    }
    if (frc) /* the run's own error is the one to print; say this one too */
        host_log_msg(&r->log, PH_LOG_WARN, NULL, "%s", e.message);
    return rc;
}

/* --report-json / --report-html: fail before the run, not after it. */
static int check_report_paths(run *r)
{
    int rc = host_report_check_path("--report-json", r->cli.report_json, r->cfg, &r->err);
    if (!rc)
        rc = host_report_check_path("--report-html", r->cli.report_html, r->cfg, &r->err);
    r->report_paths_ok = !rc;
    return rc;
}

/* Print the error (if any), free everything; returns the exit code. */
/* The model is freed before exit only where a leak checker looks: for the
 * process the OS takes everything back at once, and a million-node model
 * costs a second to free piece by piece (clang's -disable-free, likewise). */
#if defined(__SANITIZE_ADDRESS__)
#define HOST_FREE_MODEL_AT_EXIT 1
#else
#define HOST_FREE_MODEL_AT_EXIT 0
#endif

static int finish(run *r, int rc)
{
    if (rc)
        host_log_fatal(&r->log, r->err.message);
    for (int s = 0; s < HOST_STAGE_COUNT; s++)
        host_stage_stats_free(&r->stats[s]);
    host_verify_free(r->verify);
    host_model_info_free(&r->before);
    host_model_info_free(&r->after);
    host_trace_free(&r->trace);
    if (HOST_FREE_MODEL_AT_EXIT)
        ph_model_free(r->model);
    host_plan_free(&r->plan);
    host_registry_free(r->reg);
    host_log_close(&r->log);
    host_config_free(r->cfg);
    host_cli_free(&r->cli);
    host_supervise_finished(rc); /* a worker tells its supervisor it got here */
    return rc;
}

int main(int argc, char **argv)
{
    run r = {.log = {.err = stderr}};
    double t0 = host_now_ms();
    int rc = host_cli_parse(&r.cli, argc, argv, &r.err);
    if (!rc && (r.cli.help || r.cli.version)) {
        r.cli.help ? host_cli_usage(stdout) : host_cli_version(stdout);
        return finish(&r, 0);
    }
    if (!rc && r.cli.inspect)
        return finish(&r, host_inspect_main(&r.cli, stdout, &r.err));
    host_trace_init(&r.trace, host_trace_terminal(r.cli.quiet));
    r.log.trace = &r.trace;
    if (!rc) rc = host_cli_config(&r.cli, &r.cfg, &r.err);
    if (!rc) rc = host_log_open(&r.log, stderr, r.cfg->log_path, r.cli.quiet, &r.err);
    if (!rc) r.log.trace = &r.trace;
    if (!rc) rc = check_report_paths(&r);
    if (!rc && !r.cli.list_passes) { /* the rest runs in a worker process (supervise.h) */
        int code = host_supervise(&r.cli, r.cfg, &r.log);
        if (code >= 0) /* the supervisor: the run is over, its messages printed */
            return finish(&r, 0), code;
    }
    if (!rc) host_cleanup_install(); /* temporary files go with SIGINT/SIGTERM; SIGBUS of a shrunk input */
    if (!rc) host_model_io_configure(r.cfg);
    int passes = !rc && !r.cli.shapes_only; /* --shapes runs no passes */
    if (passes) rc = load_plugins(&r);
    if (!rc && r.cli.list_passes) {
        if (r.cli.list_passes == 2)
            host_report_passes_markdown(stdout, r.reg);
        else
            host_report_passes(stdout, r.reg);
        return finish(&r, 0);
    }
    if (passes && !rc) rc = host_plan_build(&r.plan, r.cfg, r.reg, &r.err);
    if (passes && !rc) host_supervise_plan(&r.plan); /* --skip-failing-passes */
    if (!rc) rc = load_model(&r);
    if (!rc) rc = host_apply_shapes(r.model, r.cfg, r.cli.shapes_only, &r.err);
    if (!rc) rc = prepare_verify(&r);
    if (passes && !rc && r.cli.bisect)
        return finish(&r, bisect(&r));
    if (passes && !rc) rc = run_stages(&r);
    if (!rc) rc = write_shapes(&r);
    if (!rc) rc = check_outputs(&r);
    if (!rc) rc = check_before_save(&r);
    if (!rc) rc = host_supervise_save(r.model, r.cfg->output, &r.sum.save_ms, &r.err);
    if (!rc) rc = check_written(&r);
    rc = report(&r, t0, rc);
    if (!rc) rc = host_cli_stream_output(&r.cli, &r.err);
    return finish(&r, rc);
}
