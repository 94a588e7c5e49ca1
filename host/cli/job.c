/* host/cli/job.c - one run of the pipeline, for the program and the library
 * (see job.h).  host_job_run reads like the pipeline:
 *
 *   plugins -> plan -> load model -> input shapes -> [reference outputs]
 *   -> optimize stage -> adapt stage -> [shapes into value_info]
 *   -> [compare outputs] -> check -> save -> [check the written file]
 */
#include "job.h"

#include <string.h>
#include <unistd.h>

#include "run/bisect.h"
#include "check/operators.h"
#include "check/dump.h"
#include "check/rule_trace.h"
#include "base/exit.h"
#include "io/cut.h"
#include "io/model_io.h"
#include "report/report_run.h"
#include "io/shapes.h"
#include "supervise/supervise.h"
#include "base/util.h"

void host_job_init(host_job *j, FILE *log_stream)
{
    memset(j, 0, sizeof *j);
    j->log.err = log_stream;
    j->t0 = host_now_ms();
}

/* --report-json / --report-html: fail before the run, not after it. */
static int check_report_paths(host_job *j)
{
    int rc = host_report_check_path("--report-json", j->cli.report_json, j->cfg, &j->err);
    if (!rc)
        rc = host_report_check_path("--report-html", j->cli.report_html, j->cfg, &j->err);
    j->report_paths_ok = !rc;
    return rc;
}

int host_job_configure(host_job *j)
{
    host_trace_init(&j->trace, j->tty);
    host_trace_set_current(&j->trace);
    j->log.trace = &j->trace;
    FILE *log_stream = j->log.err;
    int rc = host_cli_config(&j->cli, &j->cfg, &j->err);
    if (!rc)
        rc = host_log_open(&j->log, log_stream, j->cfg->log_path, j->cli.quiet, &j->err);
    j->log.trace = &j->trace;
    if (!rc)
        rc = check_report_paths(j);
    return rc;
}

int host_job_plugins(host_job *j)
{
    j->reg = host_registry_new();
    if (!j->reg)
        return ph_error_set(&j->err, HOST_EXIT_PLUGIN, "out of memory");
    int rc = host_load_plugins(j->reg, j->cfg->plugin_dir, &j->err);
    for (size_t i = 0; i < host_registry_skipped_count(j->reg); i++)
        host_log_msg(&j->log, PH_LOG_WARN, NULL, "skipped (not a pass plugin): %s",
                     host_registry_skipped(j->reg, i));
    return rc;
}

/* The reports want the input as loaded; the text one only without -q. */
static int want_tables(const host_job *j)
{
    return !j->cli.quiet || j->cli.report_json || j->cli.report_html;
}

static void warn_line(void *log, const char *message)
{
    host_log_msg(log, PH_LOG_WARN, NULL, "%s", message);
}

static int load_model(host_job *j)
{
    const char *in = j->cfg->input, *out = j->cfg->output;
    /* --bisect writes no output model (and may have none); bytes are no file */
    int rc = !out || j->cli.bisect || j->input_data ? 0 : host_check_output(in, out, &j->err);
    host_trace_phase(&j->trace, "loading the model");
    if (!rc && j->input_data)
        rc = host_model_load_memory(j->input_data, j->input_size, in, j->cli.verify_each,
                                    &j->model, &j->sum.load_ms, &j->err);
    else if (!rc)
        rc = host_model_load(in, j->cli.verify_each, &j->model, &j->sum.load_ms, &j->err);
    const char *what = rc == HOST_EXIT_MODEL && !j->input_data ? host_file_not_a_model(in) : NULL;
    if (what) /* say what the file is instead of how its bytes fail to parse */
        ph_error_set(&j->err, HOST_EXIT_MODEL, "%s: %s", j->cli.stdin_model ? "<stdin>" : in, what);
    if (rc && j->cli.stdin_model) /* the model came from stdin: no temporary file's name */
        host_replace_text(j->err.message, sizeof j->err.message, j->cli.stdin_model, "<stdin>");
    if (!rc && out && !j->cli.bisect) /* also no external-data file of the input under any name */
        rc = host_model_check_output(j->model, out, &j->err);
    if (!rc)
        host_warn_unknown_operators(j->model, warn_line, &j->log);
    if (!rc)
        j->sum.nodes_loaded = ph_model_node_count(j->model);
    size_t early = rc ? 0 : ph_model_load_reordered(j->model);
    if (early) /* sorted by the loader, as ONNX Runtime sorts it */
        host_log_msg(&j->log, PH_LOG_INFO, NULL,
                     "%s lists its nodes out of order (%zu read a value listed after them): "
                     "sorted", host_cli_input_name(&j->cli, j->cfg), early);
    if (!rc && want_tables(j))
        host_model_info_take(&j->before, j->model, host_cli_input_name(&j->cli, j->cfg),
                             j->input_data ? NULL : in);
    size_t whole = 0, part = 0;
    if (!rc)
        rc = host_cut_model(j->model, &j->cli.cut, &whole, &part, &j->err);
    if (!rc && (j->cli.cut.input_count || j->cli.cut.output_count))
        host_log_msg(&j->log, PH_LOG_INFO, NULL,
                     "--inputs/--outputs: the model cut to %zu of its %zu nodes", part, whole);
    return rc;
}

/* The verification settings: [verify], with --verify=N's runs. */
static host_verify_config verify_config(const host_job *j)
{
    host_verify_config vc = j->cfg->verify;
    if (j->cli.verify_runs > 0)
        vc.runs = j->cli.verify_runs;
    return vc;
}

/* Reference outputs of the model as loaded, for --verify and --verify-each.
 * --verify-each on a model the evaluator cannot run checks structure only. */
static int prepare_verify(host_job *j)
{
    if (!j->cli.verify_runs && !j->cli.verify_each && !j->cli.bisect)
        return 0;
    host_verify_config vc = verify_config(j);
    host_trace_phase(&j->trace, "verify: evaluating the original");
    int rc = host_verify_new(j->model, &vc, &j->verify, &j->err);
    if (rc == HOST_EXIT_NOVERIFY && !j->cli.verify_runs && !j->cli.bisect) {
        host_log_msg(&j->log, PH_LOG_WARN, NULL, "--verify-each checks structure only: %s",
                     j->err.message);
        snprintf(j->verify_each_why, sizeof j->verify_each_why, "%.290s", j->err.message);
        j->verify_each_note = j->verify_each_why;
        host_verify_free(j->verify);
        j->verify = NULL;
        return 0;
    }
    return rc;
}

/* --bisect: everything after the model is loaded and verified against. */
static int bisect(host_job *j)
{
    j->bisected = 1;
    int rc = j->cli.dump_dir ? host_dump_prepare(j->cli.dump_dir, &j->err) : 0;
    if (rc)
        return rc;
    host_bisect_job job = {.out_dir = j->cli.bisect_out, .print_changes = j->cli.print_changes,
                           .dump_dir = j->cli.dump_dir, .argc = j->cli.argc, .argv = j->cli.argv,
                           .progress = host_supervise_progress(), .cut = &j->cli.cut,
                           .cfg = j->cfg, .plan = &j->plan, .log = &j->log,
                           .verify = j->verify, .vcfg = verify_config(j), .model = j->model,
                           .out = j->cli.quiet ? NULL : j->out};
    return host_bisect(&job, &j->err);
}

/* After the adapt stage with a target profile and its check: the passes
 * that could fix each violation; with --strict-target a violation fails
 * the run (nothing written), without it a warning says how many remain. */
static int target_verdict(host_job *j)
{
    const host_stage_plan *sp = &j->plan.stage[HOST_STAGE_ADAPT];
    host_violations *vs = &j->violations;
    vs->checked = 0;
    for (size_t i = 0; sp->profile && i < sp->count; i++)
        vs->checked |= strcmp(sp->steps[i].plugin->desc->name, HOST_TARGET_CHECK_PASS) == 0;
    if (!vs->checked || !vs->count)
        return 0;
    host_violations_fixers(vs, j->reg);
    const host_violation *v = &vs->items[0];
    if (j->cli.strict_target)
        return ph_error_set(&j->err, HOST_EXIT_TARGET,
                            "%zu target violation%s remain%s after the adapt stage (target %s), the first: "
                            "%s%s%s (%s) %s is %s, the target allows %s",
                            vs->count, vs->count == 1 ? "" : "s", vs->count == 1 ? "s" : "", vs->target, v->graph,
                            *v->graph ? "/" : "", *v->node ? v->node : "(unnamed)", v->op, v->key, v->value,
                            v->limit);
    host_log_msg(&j->log, PH_LOG_WARN, NULL,
                 "%zu target violation%s remain%s after the adapt stage (target %s; the report lists them; "
                 "--strict-target fails the run)",
                 vs->count, vs->count == 1 ? "" : "s", vs->count == 1 ? "s" : "", vs->target);
    return 0;
}

/* The stages, with --max-rewrites, --print-changes and --dump-dir. */
static int run_stages(host_job *j)
{
    int blame = host_supervise_blame_mode(); /* the supervisor's silent re-run */
    if (j->cli.dump_dir && !blame) {
        int rc = host_dump_prepare(j->cli.dump_dir, &j->err);
        if (rc)
            return rc;
    }
    host_run_opts opts = {.verify_each = j->cli.verify_each, .log = &j->log,
                          .update_shapes = j->cfg->infer_shapes, .verify = j->verify,
                          .changes = j->cli.print_changes && !blame ? stderr : NULL,
                          .dump_dir = blame ? NULL : j->cli.dump_dir, .trace = &j->trace,
                          .violations = &j->violations,
                          .regions = j->cli.report_html && !blame ? &j->regions : NULL,
                          .check_every_call = blame, .progress = host_supervise_progress()};
    j->regions.max = HOST_REPORT_DIAGRAMS;
    j->regions.max_nodes = HOST_REPORT_DIAGRAM_MAX_NODES;
    uint64_t rewrites = 0;
    j->stages_ran = 1;
    int rc = host_run_all(j->model, &j->plan, j->cli.max_rewrites, &opts, j->stats, &rewrites,
                          &j->err);
    host_trace_clear_line(&j->trace);
    if (!rc)
        rc = target_verdict(j);
    if (!rc && j->cli.max_rewrites >= 0)
        host_log_msg(&j->log, PH_LOG_INFO, NULL, "--max-rewrites %lld: %llu rewrite%s applied",
                     j->cli.max_rewrites, (unsigned long long)rewrites, rewrites == 1 ? "" : "s");
    return rc;
}

/* --shapes, or [model] write_shapes: inferred shapes into value_info. */
static int write_shapes(host_job *j)
{
    if (!j->cfg->write_shapes && !j->cli.shapes_only)
        return 0;
    ph_error e = {0};
    if (ph_graph_write_value_info(ph_model_graph(j->model), &e) < 0)
        return ph_error_set(&j->err, HOST_EXIT_MODEL, "writing shapes: %.400s", e.message);
    return 0;
}

/* --verify: compare the rewritten model's outputs with the reference. */
static int check_outputs(host_job *j)
{
    if (!j->cli.verify_runs)
        return 0;
    host_trace_phase(&j->trace, "verify: evaluating the result");
    int rc = host_verify_check(j->verify, j->model, &j->err);
    j->verify_checked = rc == 0 || rc == HOST_EXIT_MISMATCH; /* the report prints the figures */
    j->verify_ok = rc == 0;
    return rc;
}

/* The check before the save failed.  The pass that last changed the graph
 * is not always the one that broke it (a pass can break it and report no
 * change), so the passes run again on the model loaded afresh, with the
 * structural check after every call (as --verify-each, but also after
 * calls that changed nothing), and the first pass after which it fails is
 * named.  Without such a pass the first message stands.  Quiet: no log,
 * no dump, nothing written. */
static int find_culprit(host_job *j, int rc)
{
    if (!j->stages_ran)
        return rc;
    ph_model *m = NULL;
    ph_error e = {0};
    double ms;
    const char *in = j->cfg->input;
    int lrc = j->input_data ? host_model_load_memory(j->input_data, j->input_size, in, 0, &m, &ms, &e)
                            : host_model_load(in, 0, &m, &ms, &e);
    if (!lrc)
        lrc = host_apply_shapes(m, j->cfg, 0, &e);
    host_run_opts opts = {.update_shapes = j->cfg->infer_shapes, .check_every_call = 1};
    host_stage_stats stats[HOST_STAGE_COUNT];
    memset(stats, 0, sizeof stats);
    if (!lrc && host_run_all(m, &j->plan, j->cli.max_rewrites, &opts, stats, NULL, &e) == HOST_EXIT_PASS &&
        strstr(e.message, "left a graph that fails the structural check"))
        rc = ph_error_set(&j->err, HOST_EXIT_PASS, "%.480s; nothing written", e.message);
    for (int s = 0; s < HOST_STAGE_COUNT; s++)
        host_stage_stats_free(&stats[s]);
    ph_model_free(m);
    return rc;
}

/* The structural verifier (names included: SSA) before the save and before
 * any evaluation: passhost never writes a model it would not load; the
 * message names the pass found by find_culprit, else the one that last
 * changed the graph. */
static int check_before_save(host_job *j)
{
    const char *changed_by = NULL;
    for (int s = 0; s < HOST_STAGE_COUNT && j->stages_ran; s++)
        if (j->stats[s].last_changed)
            changed_by = j->stats[s].last_changed;
    int rc = host_model_check(j->model, changed_by, &j->err);
    return rc ? find_culprit(j, rc) : 0;
}

/* --verify: the file as written must load and compute the same outputs too
 * (a check of the save itself, on the staged file: on failure nothing is
 * committed). */
static int check_written(host_job *j)
{
    if (!j->cli.verify_runs)
        return 0;
    ph_model *written = NULL;
    ph_error e = {0};
    host_trace_phase(&j->trace, "verify: checking the written file");
    int rc = ph_model_load(j->staged, &written, &e);
    if (rc)
        rc = ph_error_set(&j->err, HOST_EXIT_OUTPUT,
                          "%s: the written file does not load back: %.400s", j->cfg->output,
                          e.message);
    if (!rc) {
        host_apply_shapes(written, j->cfg, 0, &e); /* the same input shapes as the run */
        rc = host_verify_check(j->verify, written, &e);
        if (rc)
            rc = ph_error_set(&j->err, rc, "%s: the written file computes other outputs: %.400s",
                              j->cfg->output, e.message);
    }
    ph_model_free(written);
    j->written_checked = rc == 0;
    return rc;
}

int host_job_run(host_job *j)
{
    host_model_io_configure(j->cfg);
    int passes = !j->cli.shapes_only; /* --shapes runs no passes */
    int rc = 0;
    if (passes && !j->reg) rc = host_job_plugins(j);
    if (passes && !rc) rc = host_plan_build(&j->plan, j->cfg, j->reg, &j->err);
    if (passes && !rc) host_supervise_plan(&j->plan); /* --skip-failing-passes */
    if (!rc) rc = load_model(j);
    if (!rc) host_trace_phase(&j->trace, "inferring shapes");
    if (!rc) rc = host_apply_shapes(j->model, j->cfg, j->cli.shapes_only, &j->err);
    if (!rc) rc = prepare_verify(j);
    if (passes && !rc && j->cli.bisect)
        return bisect(j);
    if (passes && !rc) rc = run_stages(j);
    if (host_supervise_blame_mode())
        return rc; /* the supervisor's re-run: the stages are all it is for */
    if (!rc) rc = write_shapes(j);
    if (!rc) rc = check_before_save(j);
    if (!rc) rc = check_outputs(j);
    if (!rc) host_trace_phase(&j->trace, "saving the output");
    if (!rc) rc = host_supervise_stage(j->model, j->cfg->output, &j->staged, &j->sum.save_ms, &j->err);
    if (!rc) rc = check_written(j);
    if (!rc) rc = host_supervise_commit(j->cfg->output, &j->err); /* a worker's: by its supervisor */
    if (rc)
        host_supervise_discard();
    if (!host_supervise_in_worker())
        j->staged = NULL; /* committed (or discarded) already */
    return rc;
}

int host_job_trace_rule(host_job *j)
{
    host_model_io_configure(j->cfg);
    int rc = j->reg ? 0 : host_job_plugins(j);
    if (!rc) rc = host_plan_build(&j->plan, j->cfg, j->reg, &j->err);
    if (!rc) rc = load_model(j);
    if (!rc) rc = host_apply_shapes(j->model, j->cfg, 0, &j->err);
    host_trace_clear_line(&j->trace);
    if (rc)
        return rc;
    /* the parameters the run would give the pass: its step's, if it runs */
    const ph_params *params = NULL;
    size_t len = strcspn(j->cli.trace_rule, ":");
    for (int s = 0; s < HOST_STAGE_COUNT && !params; s++)
        for (size_t i = 0; i < j->plan.stage[s].count && !params; i++) {
            const host_step *st = &j->plan.stage[s].steps[i];
            const char *name = st->plugin->desc->name;
            if (strlen(name) == len && strncmp(name, j->cli.trace_rule, len) == 0)
                params = st->params;
        }
    return host_trace_rule(j->out ? j->out : stdout, j->reg, j->cli.trace_rule, params, j->model,
                           j->cli.stdin_model ? "<stdin>" : j->cfg->input, &j->err);
}

/* What the run learned, for the reports (borrowed from j). */
static host_run_record record(host_job *j, int rc)
{
    host_run_record rec = {.argc = j->cli.argc, .argv = j->cli.argv, .cfg = j->cfg,
                           .plan = j->model ? &j->plan : NULL, /* built before the load */
                           .input = j->cfg ? host_cli_input_name(&j->cli, j->cfg) : NULL,
                           .output = j->cfg ? host_cli_output_name(&j->cli, j->cfg) : NULL,
                           .stats = j->stages_ran ? j->stats : NULL, .sum = &j->sum,
                           .before = j->before.path ? &j->before : NULL,
                           .after = j->after.path ? &j->after : NULL, .trace = &j->trace,
                           .verify = j->verify,
                           .vcfg = j->cfg ? verify_config(j) : (host_verify_config){0},
                           .verify_checked = j->verify_checked, .verify_ok = j->verify_ok,
                           .written_checked = j->written_checked, .verify_each = j->cli.verify_each,
                           .verify_each_note = j->verify_each_note,
                           .shapes_only = j->cli.shapes_only, .exit_code = rc,
                           .violations = j->violations.checked ? &j->violations : NULL,
                           .regions = j->stages_ran ? &j->regions : NULL,
                           .error = rc ? j->err.message : NULL};
    return rec;
}

int host_job_report(host_job *j, int rc)
{
    if (!j->cfg || j->bisected)
        return rc;
    j->sum.input = host_cli_input_name(&j->cli, j->cfg);
    j->sum.output = host_cli_output_name(&j->cli, j->cfg);
    j->sum.total_ms = host_now_ms() - j->t0;
    if (j->model)
        j->sum.nodes_saved = ph_model_node_count(j->model);
    if (!rc && j->model && want_tables(j)) /* the file's size: as staged (a worker's is committed later) */
        host_model_info_take(&j->after, j->model, j->sum.output, j->staged ? j->staged : j->cfg->output);
    host_run_record rec = record(j, rc);
    host_trace_clear_line(&j->trace);
    if (j->out)
        host_report_run_text(j->out, &rec, j->cli.quiet           ? HOST_REPORT_QUIET
                                           : j->cli.verbose       ? HOST_REPORT_FULL
                                           : j->cli.verdicts_only ? HOST_REPORT_VERDICTS
                                                                  : HOST_REPORT_BRIEF);
    if (j->log.file)
        host_report_run_text(j->log.file, &rec, HOST_REPORT_FULL);
    ph_error e = {0};
    int frc = 0;
    if (j->cli.report_json && j->report_paths_ok)
        frc = host_report_json_write(&rec, j->cli.report_json, &e);
    if (!frc && j->cli.report_html && j->report_paths_ok)
        frc = host_report_html_write(&rec, j->cli.report_html, &e);
    if (frc && !rc) {
        j->err = e;
        return frc;
    }
    if (frc) /* the run's own error is the one to print; say this one too */
        host_log_msg(&j->log, PH_LOG_WARN, NULL, "%s", e.message);
    return rc;
}

void host_job_free(host_job *j, int free_model)
{
    for (int s = 0; s < HOST_STAGE_COUNT; s++)
        host_stage_stats_free(&j->stats[s]);
    host_verify_free(j->verify);
    host_model_info_free(&j->before);
    host_model_info_free(&j->after);
    host_trace_set_current(NULL);
    host_trace_free(&j->trace);
    host_violations_clear(&j->violations);
    host_region_list_free(&j->regions);
    if (free_model)
        ph_model_free(j->model);
    j->model = NULL;
    host_plan_free(&j->plan);
    host_registry_free(j->reg);
    host_log_close(&j->log);
    host_config_free(j->cfg);
    host_cli_free(&j->cli);
    j->verify = NULL;
    j->reg = NULL;
    j->cfg = NULL;
}
