/* host/report/report.c - the per-pass report and the --list-passes table. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/order.h"
#include "base/exit.h"
#include "log/trace.h"

/* ----------------------------------------------------------------- report */

static void print_rule(FILE *out, int width)
{
    for (int i = 0; i < width; i++)
        fputc('-', out);
    fputc('\n', out);
}

static int name_width(const host_stage_stats *st)
{
    int w = 4;
    for (size_t i = 0; i < st->count; i++) {
        int n = (int)strlen(st->passes[i].name) + (st->passes[i].run_once ? 7 : 0);
        if (n > w)
            w = n;
    }
    return w;
}

/* "-2", "+1", "0" */
static void signed_text(char *buf, size_t size, long long v)
{
    snprintf(buf, size, v ? "%+lld" : "0", v);
}

void host_report_stage(FILE *out, const host_stage_stats *st)
{
    fprintf(out, "stage %s%s%s: ", host_stage_name(st->stage),
            st->target && *st->target ? ", target " : "", st->target ? st->target : "");
    if (st->count == 0) {
        fprintf(out, "no passes\n");
        return;
    }
    fprintf(out, "%d round%s%s, %.2f ms, nodes %zu -> %zu\n", st->rounds,
            st->rounds == 1 ? "" : "s", st->hit_cap ? " (cap reached, no fixpoint)" : st->stalled ? " (stopped: no net change)" : "",
            st->ms, st->nodes_before, st->nodes_after);
    int w = name_width(st);
    if (w < 24)
        w = 24;
    fprintf(out, "  %-*s %6s %9s %10s %12s\n", w, "pass", "calls", "rewrites", "time ms",
            "node change");
    fputs("  ", out);
    print_rule(out, w + 41);
    long long rewrites = 0, change = 0;
    unsigned calls = 0;
    double checks = 0, pass_ms = 0;
    char delta[32];
    for (size_t i = 0; i < st->count; i++) {
        const host_pass_stats *p = &st->passes[i];
        char name[300];
        snprintf(name, sizeof name, "%s%s", p->name, p->run_once ? " (once)" : "");
        signed_text(delta, sizeof delta, p->node_change);
        fprintf(out, "  %-*s %6u %9lld %10.3f %12s\n", w, name, p->calls, p->rewrites, p->ms,
                delta);
        rewrites += p->rewrites;
        calls += p->calls;
        change += p->node_change;
        checks += p->check_ms;
        pass_ms += p->ms;
    }
    /* what the stage spent outside the passes' run(): the checks after each
     * changing call, and the runner itself */
    double other = st->ms - pass_ms;
    fprintf(out, "  %-*s %6s %9s %10.3f %12s\n", w, "(checks between passes)", "", "",
            other > checks ? other : checks, "");
    signed_text(delta, sizeof delta, change);
    fprintf(out, "  %-*s %6u %9lld %10.3f %12s\n", w, "total", calls, rewrites, st->ms, delta);
}

/* The rewrites of pass i before j's: more first, then plan order. */
static int more_rewrites(const host_stage_stats *st, size_t i, size_t j)
{
    long long a = st->passes[i].rewrites, b = st->passes[j].rewrites;
    return a != b ? a > b : i < j;
}

void host_report_stage_brief(FILE *out, const host_stage_stats *st)
{
    fprintf(out, "stage %s%s%s: ", host_stage_name(st->stage),
            st->target && *st->target ? ", target " : "", st->target ? st->target : "");
    if (st->count == 0) {
        fprintf(out, "no passes\n");
        return;
    }
    size_t *order = host_xcalloc(st->count, sizeof *order), changed = 0;
    for (size_t i = 0; i < st->count; i++)
        if (st->passes[i].rewrites > 0) {
            size_t k = changed++;
            for (; k > 0 && more_rewrites(st, i, order[k - 1]); k--)
                order[k] = order[k - 1];
            order[k] = i;
        }
    fprintf(out, "%d round%s%s, %.2f ms, nodes %zu -> %zu, ", st->rounds, st->rounds == 1 ? "" : "s",
            st->hit_cap ? " (cap reached, no fixpoint)" : st->stalled ? " (stopped: no net change)" : "",
            st->ms, st->nodes_before, st->nodes_after);
    if (!changed)
        fprintf(out, "no pass changed the graph (%zu ran)\n", st->count);
    else
        fprintf(out, "%zu of %zu passes changed it (rewrites):\n", changed, st->count);
    int col = 0;
    for (size_t k = 0; k < changed; k++) {
        const host_pass_stats *p = &st->passes[order[k]];
        char item[400], delta[40] = "";
        if (p->node_change)
            snprintf(delta, sizeof delta, " (%+lld node%s)", p->node_change,
                     p->node_change == 1 || p->node_change == -1 ? "" : "s");
        int len = snprintf(item, sizeof item, "%s %lld%s%s", p->name, p->rewrites, delta,
                           k + 1 < changed ? "," : "");
        if (col && col + 1 + len > 96) {
            fputc('\n', out);
            col = 0;
        }
        fprintf(out, "%s%s", col ? " " : "  ", item);
        col += (col ? 1 : 2) + len;
    }
    if (col)
        fputc('\n', out);
    free(order);
}

static void totals(const host_stage_stats *stages, size_t stage_count, long long *rewrites,
                   size_t *passes, double *pass_ms)
{
    *rewrites = 0, *passes = 0, *pass_ms = 0;
    for (size_t s = 0; s < stage_count; s++) {
        *pass_ms += stages[s].ms;
        for (size_t i = 0; i < stages[s].count; i++) {
            *rewrites += stages[s].passes[i].rewrites;
            ++*passes;
        }
    }
}

void host_report_times(FILE *out, const host_run_summary *sum, const host_stage_stats *stages,
                       size_t stage_count)
{
    long long rewrites;
    size_t passes;
    double pass_ms;
    totals(stages, stage_count, &rewrites, &passes, &pass_ms);
    fprintf(out, "load %.2f ms, passes %.2f ms, save %.2f ms\n", sum->load_ms, pass_ms,
            sum->save_ms);
}

void host_report_summary_line(FILE *out, const host_run_summary *sum,
                              const host_stage_stats *stages, size_t stage_count)
{
    long long rewrites;
    size_t passes;
    double pass_ms;
    totals(stages, stage_count, &rewrites, &passes, &pass_ms);
    fprintf(out, "passhost: %s -> %s: %zu pass%s, %lld rewrite%s, nodes %zu -> %zu, %.2f ms\n",
            sum->input, sum->output, passes, passes == 1 ? "" : "es", rewrites,
            rewrites == 1 ? "" : "s", sum->nodes_loaded, sum->nodes_saved, sum->total_ms);
}

void host_report_summary(FILE *out, const host_run_summary *sum,
                         const host_stage_stats *stages, size_t stage_count)
{
    host_report_times(out, sum, stages, stage_count);
    host_report_summary_line(out, sum, stages, stage_count);
}

/* ----------------------------------------------------------- list-passes */

static const char *stages_text(unsigned stages)
{
    if ((stages & PH_STAGE_OPTIMIZE) && (stages & PH_STAGE_ADAPT))
        return "optimize,adapt";
    return stages & PH_STAGE_OPTIMIZE ? "optimize" : "adapt";
}

/* "on", "off", or the stages it is on in by default when not all of its
 * stages (explicit_pads: "optimize"; a profile switches it on in adapt). */
static const char *default_text(const ph_pass_desc *d)
{
    if (!d->on_by_default)
        return "off";
    if (d->default_stages && (d->default_stages & d->stages) != d->stages)
        return stages_text(d->default_stages & d->stages);
    return "on";
}

static const char *exactness_text(ph_exactness e)
{
    return e == PH_EXACT ? "exact" : e == PH_FP ? "fp" : "approx";
}

static const char *param_type_text(ph_param_type t)
{
    switch (t) {
    case PH_PARAM_INT: return "int";
    case PH_PARAM_FLOAT: return "float";
    case PH_PARAM_BOOL: return "bool";
    case PH_PARAM_STRING: return "string";
    }
    return "?";
}

static void print_params(FILE *out, const ph_pass_desc *d)
{
    for (const ph_param_def *p = d->params; p && p->name; p++)
        fprintf(out, "    %s (%s, default %s)%s%s\n", p->name, param_type_text(p->type),
                p->default_value && *p->default_value ? p->default_value : "\"\"",
                p->help ? ": " : "", p->help ? p->help : "");
}

int host_report_passes(FILE *out, const host_registry *reg, ph_error *err)
{
    size_t *order, n;
    int rc = host_catalogue_order(reg, &order, &n, err);
    if (rc)
        return rc;
    int wn = 4, wt = 7;
    for (size_t i = 0; i < n; i++) {
        const ph_pass_desc *d = host_registry_at(reg, order[i])->desc;
        int ln = (int)strlen(d->name), lt = d->targets ? (int)strlen(d->targets) : 0;
        wn = ln > wn ? ln : wn;
        wt = lt > wt ? lt : wt;
    }
    fprintf(out, "%-*s  %-14s  %-7s  %-6s  %-4s  %-*s  %s\n", wn, "PASS", "STAGE", "DEFAULT",
            "EXACT", "ONCE", wt, "TARGETS", "SUMMARY");
    for (size_t i = 0; i < n; i++) {
        const ph_pass_desc *d = host_registry_at(reg, order[i])->desc;
        fprintf(out, "%-*s  %-14s  %-7s  %-6s  %-4s  %-*s  %s\n", wn, d->name,
                stages_text(d->stages), default_text(d),
                exactness_text(d->exactness), d->run_once ? "yes" : "no", wt,
                d->targets && *d->targets ? d->targets : "all", d->summary ? d->summary : "");
        print_params(out, d);
    }
    fprintf(out, "%zu pass%s\n", n, n == 1 ? "" : "es");
    free(order);
    return 0;
}

/* Text with '|' escaped for a markdown cell. */
static void md_cell(FILE *out, const char *text)
{
    for (const char *c = text ? text : ""; *c; c++) {
        if (*c == '|')
            fputc('\\', out);
        fputc(*c == '\n' ? ' ' : *c, out);
    }
}

static void md_names(FILE *out, const char *what, const char *const *names, int *first)
{
    for (size_t i = 0; names && names[i]; i++) {
        if (i == 0)
            fprintf(out, "%s%s `%s`", *first ? "" : "; ", what, names[i]);
        else
            fprintf(out, ", `%s`", names[i]);
        *first = 0;
    }
}

int host_report_passes_markdown(FILE *out, const host_registry *reg, ph_error *err)
{
    size_t *order, n;
    int rc = host_catalogue_order(reg, &order, &n, err);
    if (rc)
        return rc;
    fputs("| pass | stage | default | exactness | targets | parameters (default) | relations | what it does |\n"
          "|---|---|---|---|---|---|---|---|\n",
          out);
    for (size_t i = 0; i < n; i++) {
        const ph_pass_desc *d = host_registry_at(reg, order[i])->desc;
        fprintf(out, "| `%s` | %s | %s | %s | %s | ", d->name, stages_text(d->stages),
                default_text(d), exactness_text(d->exactness),
                d->targets && *d->targets ? d->targets : "all");
        for (const ph_param_def *p = d->params; p && p->name; p++) {
            fprintf(out, "%s`%s` (", p == d->params ? "" : "<br>", p->name);
            md_cell(out, p->default_value && *p->default_value ? p->default_value : "\"\"");
            fputc(')', out);
        }
        fputs(" | ", out);
        int first = 1;
        md_names(out, "after", d->run_after, &first);
        md_names(out, "before", d->run_before, &first);
        if (d->run_once)
            fprintf(out, "%sonce, after the fixpoint", first ? "" : "; ");
        fputs(" | ", out);
        md_cell(out, d->summary);
        fputs(" |\n", out);
    }
    free(order);
    return 0;
}
