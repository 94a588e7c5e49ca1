/* host/report/report_json.c - `--report-json FILE`: the run's report as one JSON
 * object, described by docs/report.schema.json.  Every figure of the text
 * report is here (per stage and pass: calls, rewrites, time, node change;
 * load, pass and save times; the summary line), and more: every pass call
 * (the timeline), the input and output models (the --inspect summary), the
 * verification errors per output, and the effective configuration. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/version.h"
#include "base/exit.h"
#include "passhost/host.h"
#include "passhost/plugin.h"
#include "report_run.h"
#include "base/util.h"

static void json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*c < 0x20)
                fprintf(f, "\\u%04x", *c);
            else
                fputc(*c, f);
        }
    }
    fputc('"', f);
}

/* A number, or null when it is not finite (JSON has no inf or nan). */
static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

static void json_ms(FILE *f, double v)
{
    fprintf(f, "%.6f", v);
}

static void key(FILE *f, int *first, const char *name)
{
    fprintf(f, "%s\"%s\": ", *first ? "" : ", ", name);
    *first = 0;
}

static void io_list(FILE *f, const host_io_info *list, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", {\"name\": " : "{\"name\": ", f);
        json_string(f, list[i].name);
        fputs(", \"type\": ", f);
        json_string(f, list[i].type);
        fputc('}', f);
    }
    fputc(']', f);
}

static void model(FILE *f, const host_model_info *m)
{
    if (!m) {
        fputs("null", f);
        return;
    }
    int first = 1;
    fputs("{", f);
    key(f, &first, "path");
    json_string(f, m->path);
    key(f, &first, "file_bytes");
    if (m->file_bytes >= 0)
        fprintf(f, "%lld", m->file_bytes);
    else
        fputs("null", f);
    key(f, &first, "ir_version");
    fprintf(f, "%lld", (long long)m->ir_version);
    key(f, &first, "opsets");
    fputc('{', f);
    for (size_t i = 0; i < m->n_opsets; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, m->opset_list[i].domain);
        fprintf(f, ": %lld", (long long)m->opset_list[i].version);
    }
    fputc('}', f);
    key(f, &first, "inputs");
    io_list(f, m->inputs, m->n_inputs);
    key(f, &first, "outputs");
    io_list(f, m->outputs, m->n_outputs);
    key(f, &first, "nodes");
    fprintf(f, "%zu", m->nodes);
    key(f, &first, "initializers");
    fprintf(f, "%zu", m->initializers);
    key(f, &first, "initializer_bytes");
    fprintf(f, "%llu", (unsigned long long)m->initializer_bytes);
    key(f, &first, "op_types");
    fputc('{', f);
    for (size_t i = 0; i < m->n_ops; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, m->ops[i].op);
        fprintf(f, ": %zu", m->ops[i].count);
    }
    fputs("}}", f);
}

static void stage(FILE *f, const host_stage_stats *st)
{
    int first = 1;
    double check_ms = 0;
    for (size_t i = 0; i < st->count; i++)
        check_ms += st->passes[i].check_ms;
    fputs("\n    {", f);
    key(f, &first, "name");
    json_string(f, host_stage_name(st->stage));
    key(f, &first, "target");
    json_string(f, st->target ? st->target : "");
    key(f, &first, "rounds");
    fprintf(f, "%d", st->rounds);
    key(f, &first, "hit_cap");
    fputs(st->hit_cap ? "true" : "false", f);
    key(f, &first, "stalled");
    fputs(st->stalled ? "true" : "false", f);
    key(f, &first, "ms");
    json_ms(f, st->ms);
    key(f, &first, "check_ms");
    json_ms(f, check_ms);
    key(f, &first, "nodes_before");
    fprintf(f, "%zu", st->nodes_before);
    key(f, &first, "nodes_after");
    fprintf(f, "%zu", st->nodes_after);
    key(f, &first, "passes");
    fputc('[', f);
    for (size_t i = 0; i < st->count; i++) {
        const host_pass_stats *p = &st->passes[i];
        fputs(i ? ",\n      {\"name\": " : "\n      {\"name\": ", f);
        json_string(f, p->name);
        fprintf(f, ", \"run_once\": %s, \"calls\": %u, \"rewrites\": %lld, \"ms\": ",
                p->run_once ? "true" : "false", p->calls, p->rewrites);
        json_ms(f, p->ms);
        fprintf(f, ", \"node_change\": %lld, \"check_ms\": ", p->node_change);
        json_ms(f, p->check_ms);
        fprintf(f, ", \"nodes_before_first_call\": %zu, \"nodes_after_last_call\": %zu}",
                p->nodes_before, p->nodes_after);
    }
    fputs("]}", f);
}

static void calls(FILE *f, const host_trace *t)
{
    fputc('[', f);
    for (size_t i = 0; t && i < t->count; i++) {
        const host_call_record *c = &t->calls[i];
        fputs(i ? ",\n    {\"stage\": " : "\n    {\"stage\": ", f);
        json_string(f, host_stage_name(c->stage));
        fprintf(f, ", \"round\": %d, \"pass\": ", c->round);
        json_string(f, c->pass);
        fputs(", \"start_ms\": ", f);
        json_ms(f, c->start_ms);
        fputs(", \"ms\": ", f);
        json_ms(f, c->ms);
        fputs(", \"check_ms\": ", f);
        json_ms(f, c->check_ms);
        fprintf(f, ", \"rewrites\": %lld, \"nodes_before\": %zu, \"nodes_after\": %zu}",
                c->rewrites, c->nodes_before, c->nodes_after);
    }
    fputc(']', f);
}

/* The rest of an output's object: errors against the reference (null
 * without one), then mismatches and ok. */
static void judged(FILE *f, int has_ref, double original, const char *key, double value, double budget,
                   size_t mismatches, int ok)
{
    fputs(", \"original_error\": ", f);
    json_number(f, has_ref ? original : NAN);
    fprintf(f, ", \"%s\": ", key);
    json_number(f, has_ref ? value : NAN);
    fputs(", \"budget\": ", f);
    json_number(f, has_ref ? budget : NAN);
    fprintf(f, ", \"mismatches\": %zu, \"ok\": %s}", mismatches, ok ? "true" : "false");
}

static void verify(FILE *f, const host_run_record *rec)
{
    size_t n = 0, n_exp = 0, n_notes = 0;
    const host_verify_expected *exp = rec->verify ? host_verify_expected_results(rec->verify, &n_exp) : NULL;
    if (!rec->verify || (!rec->verify_checked && !n_exp)) {
        fputs("null", f);
        return;
    }
    const host_verify_result *res = host_verify_results(rec->verify, &n);
    const char *why = NULL;
    int has_ref = host_verify_reference(rec->verify, &why);
    int first = 1;
    fputc('{', f);
    key(f, &first, "runs");
    fprintf(f, "%zu", host_verify_set_count(rec->verify));
    key(f, &first, "mode");
    fputs(host_verify_uses_budget(rec->verify) ? "\"budget\"" : "\"tolerance\"", f);
    key(f, &first, "budget_factor");
    json_number(f, rec->vcfg.budget_factor);
    key(f, &first, "budget_ulps");
    json_number(f, rec->vcfg.budget_ulps);
    key(f, &first, "atol");
    json_number(f, host_verify_atol(&rec->vcfg));
    key(f, &first, "rtol");
    json_number(f, host_verify_rtol(&rec->vcfg));
    key(f, &first, "seed");
    fprintf(f, "%d", rec->vcfg.seed);
    key(f, &first, "reference");
    fprintf(f, "{\"float64\": %s, \"note\": ", has_ref ? "true" : "false");
    json_string(f, why);
    fputc('}', f);
    key(f, &first, "data");
    fputc('[', f);
    for (size_t i = 0; i < rec->vcfg.data.count; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, rec->vcfg.data.items[i].text);
    }
    fputc(']', f);
    key(f, &first, "inputs");
    const char *const *notes = host_verify_input_notes(rec->verify, &n_notes);
    fputc('[', f);
    for (size_t i = 0; i < n_notes; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, notes[i]);
    }
    fputc(']', f);
    key(f, &first, "ok");
    fputs(rec->verify_ok ? "true" : "false", f);
    key(f, &first, "written_file_checked");
    fputs(rec->written_checked ? "true" : "false", f);
    key(f, &first, "outputs");
    fputc('[', f);
    for (size_t i = 0; rec->verify_checked && i < n; i++) {
        fputs(i ? ", {\"name\": " : "{\"name\": ", f);
        json_string(f, res[i].name);
        fprintf(f, ", \"kind\": \"%s\"", res[i].is_float ? "float" : "integer");
        fputs(", \"max_abs\": ", f);
        json_number(f, res[i].max_abs);
        fputs(", \"max_rel\": ", f);
        json_number(f, res[i].max_rel);
        judged(f, has_ref, res[i].original_error, "optimized_error", res[i].optimized_error, res[i].budget,
               res[i].mismatches, res[i].ok);
    }
    fputs("], \"expected\": [", f);
    for (size_t i = 0; i < n_exp; i++) {
        fputs(i ? ", {\"data\": " : "{\"data\": ", f);
        json_string(f, exp[i].set);
        fputs(", \"file\": ", f);
        json_string(f, exp[i].file);
        fputs(", \"output\": ", f);
        json_string(f, exp[i].name);
        fprintf(f, ", \"kind\": \"%s\"", exp[i].is_float ? "float" : "integer");
        fputs(", \"max_abs\": ", f);
        json_number(f, exp[i].max_abs);
        judged(f, has_ref, exp[i].original_error, "file_error", exp[i].expected_error, exp[i].budget,
               exp[i].mismatches, exp[i].ok);
    }
    fputs("]}", f);
}

static void verify_each(FILE *f, const host_run_record *rec)
{
    if (!rec->verify_each) {
        fputs("null", f);
        return;
    }
    double ms = 0;
    for (size_t i = 0; rec->trace && i < rec->trace->count; i++)
        ms += rec->trace->calls[i].check_ms;
    fprintf(f, "{\"calls_checked\": %zu, \"structure\": true, \"outputs_compared\": %s, \"note\": ",
            host_record_changing_calls(rec), rec->verify_each_note ? "false" : "true");
    json_string(f, rec->verify_each_note);
    fputs(", \"check_ms\": ", f);
    json_ms(f, ms);
    fputc('}', f);
}

/* The target check: null when none ran, else the profile's name and every
 * violation with the passes that could fix it. */
static void target(FILE *f, const host_run_record *rec)
{
    const host_violations *vs = rec->violations;
    if (!vs) {
        fputs("null", f);
        return;
    }
    fputs("{\"name\": ", f);
    json_string(f, vs->target);
    fputs(", \"violations\": [", f);
    for (size_t i = 0; i < vs->count; i++) {
        const host_violation *v = &vs->items[i];
        fputs(i ? ",\n    {\"graph\": " : "\n    {\"graph\": ", f);
        json_string(f, v->graph);
        fputs(", \"node\": ", f);
        json_string(f, v->node);
        fputs(", \"op\": ", f);
        json_string(f, v->op);
        fputs(", \"constraint\": ", f);
        json_string(f, v->key);
        fputs(", \"value\": ", f);
        json_string(f, v->value);
        fputs(", \"limit\": ", f);
        json_string(f, v->limit);
        fputs(", \"fixed_by\": [", f);
        for (const char *p = v->fix; *p;) {
            size_t len = strcspn(p, ",");
            char *name = host_xstrndup(p, len);
            fputs(p == v->fix ? "" : ", ", f);
            json_string(f, name);
            free(name);
            p += len;
            while (*p == ',' || *p == ' ')
                p++;
        }
        fputs("]}", f);
    }
    fputs("]}", f);
}

void host_report_json(FILE *f, const host_run_record *rec)
{
    int first = 1;
    fputs("{", f);
    key(f, &first, "format");
    fputs("\"passhost-report\", \"format_version\": 1", f);
    key(f, &first, "passhost");
    fprintf(f, "{\"version\": \"%s\", \"plugin_abi\": \"%d.%d\"}", HOST_VERSION, PH_ABI_MAJOR,
            PH_ABI_MINOR);
    key(f, &first, "command");
    fputc('[', f);
    for (int i = 0; i < rec->argc; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, rec->argv[i]);
    }
    fputc(']', f);
    fputs(",\n  ", f);
    first = 1;
    key(f, &first, "status");
    fprintf(f, "{\"exit_code\": %d, \"ok\": %s, \"error\": ", rec->exit_code,
            rec->exit_code ? "false" : "true");
    json_string(f, rec->exit_code ? rec->error : NULL);
    fputs("}", f);
    fputs(",\n  \"input\": ", f);
    json_string(f, rec->input);
    fputs(", \"output\": ", f);
    json_string(f, rec->output);
    const host_stage_stats *st = rec->stats && !rec->shapes_only ? rec->stats : NULL;
    long long rewrites = 0;
    size_t passes = 0;
    double pass_ms = 0;
    for (int s = 0; st && s < HOST_STAGE_COUNT; s++) {
        pass_ms += st[s].ms;
        for (size_t i = 0; i < st[s].count; i++, passes++)
            rewrites += st[s].passes[i].rewrites;
    }
    const host_run_summary *sum = rec->sum;
    fputs(",\n  \"times_ms\": {\"load\": ", f);
    json_ms(f, sum ? sum->load_ms : 0);
    fputs(", \"passes\": ", f);
    json_ms(f, pass_ms);
    fputs(", \"save\": ", f);
    json_ms(f, sum ? sum->save_ms : 0);
    fputs(", \"total\": ", f);
    json_ms(f, sum ? sum->total_ms : 0);
    fprintf(f, "},\n  \"summary\": {\"passes\": %zu, \"rewrites\": %lld, \"nodes_loaded\": %zu, "
               "\"nodes_saved\": %zu}", passes, rewrites, sum ? sum->nodes_loaded : 0,
            sum ? sum->nodes_saved : 0);
    fputs(",\n  \"models\": {\"input\": ", f);
    model(f, rec->before);
    fputs(",\n             \"output\": ", f);
    model(f, rec->after);
    fputs("},\n  \"stages\": [", f);
    for (int s = 0; st && s < HOST_STAGE_COUNT; s++) {
        if (s)
            fputc(',', f);
        stage(f, &st[s]);
    }
    fputs("],\n  \"calls\": ", f);
    calls(f, st ? rec->trace : NULL);
    fputs(",\n  \"target\": ", f);
    target(f, rec);
    fputs(",\n  \"verify\": ", f);
    verify(f, rec);
    fputs(",\n  \"verify_each\": ", f);
    verify_each(f, rec);
    fputs(",\n  \"config\": ", f);
    char *ini = host_record_config_ini(rec);
    if (ini) {
        fputs("{\"ini\": ", f);
        json_string(f, ini);
        fputs("}", f);
    } else {
        fputs("null", f);
    }
    free(ini);
    fputs("\n}\n", f);
}
