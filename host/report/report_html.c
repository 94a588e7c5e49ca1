/* host/report/report_html.c - `--report-html FILE`: the run's report as one
 * self-contained HTML file.  No network and no external file: the style,
 * the charts (inline SVG) and a few lines of script are all in the file,
 * and a Content-Security-Policy forbids loading anything else.
 *
 * Sections: the outcome, the input/output summary table (as --inspect),
 * a bar chart of op counts before and after, the timeline of pass calls
 * (one row per pass, one bar per call, time from the first call), the
 * per-pass tables, the verification, the effective configuration.  The
 * script only checks that the charts rendered (body[data-rendered]). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/version.h"
#include "passhost/host.h"
#include "passhost/plugin.h"
#include "report_run.h"
#include "base/util.h"

static void esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static const char style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1100px;color:#222;padding:0 1em}"
    "h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 10px;text-align:left;"
    "border-bottom:1px solid #eee;vertical-align:top}th{background:#f4f4f4}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".ok{color:#176117}.fail{color:#a31515}.sect td{font-weight:bold;background:#fafafa}"
    "pre{background:#f7f7f7;padding:.6em;overflow:auto;font-size:12px}"
    "svg text{font:11px system-ui,sans-serif;fill:#222}.legend span{display:inline-block;"
    "width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}";

/* ------------------------------------------------------------- tables */

static void model_table(FILE *f, const host_run_record *rec)
{
    const host_model_info *m[2] = {rec->before, rec->after};
    size_t n = m[1] ? 2 : 1;
    fputs("<table id=\"models\"><tr><th></th>", f);
    for (size_t j = 0; j < n; j++) {
        fputs("<th>", f);
        esc(f, j ? "output: " : "input: ");
        esc(f, m[j]->path);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    char b[64];
    fputs("<tr><td>file size</td>", f);
    for (size_t j = 0; j < n; j++) {
        if (m[j]->file_bytes >= 0)
            host_format_bytes(b, sizeof b, (double)m[j]->file_bytes);
        fprintf(f, "<td class=\"n\">%s</td>", m[j]->file_bytes >= 0 ? b : "?");
    }
    fputs("</tr>\n<tr><td>ir version</td>", f);
    for (size_t j = 0; j < n; j++)
        fprintf(f, "<td class=\"n\">%lld</td>", (long long)m[j]->ir_version);
    fputs("</tr>\n<tr><td>opsets</td>", f);
    for (size_t j = 0; j < n; j++) {
        fputs("<td>", f);
        esc(f, m[j]->opsets);
        fputs("</td>", f);
    }
    for (int io = 0; io < 2; io++) {
        fprintf(f, "</tr>\n<tr><td>%s</td>", io ? "outputs" : "inputs");
        for (size_t j = 0; j < n; j++) {
            const host_io_info *l = io ? m[j]->outputs : m[j]->inputs;
            size_t c = io ? m[j]->n_outputs : m[j]->n_inputs;
            fputs("<td>", f);
            for (size_t k = 0; k < c; k++) {
                fputs(k ? "<br>" : "", f);
                esc(f, l[k].name);
                fputc(' ', f);
                esc(f, l[k].type);
            }
            fputs("</td>", f);
        }
    }
    fputs("</tr>\n<tr><td>nodes</td>", f);
    for (size_t j = 0; j < n; j++)
        fprintf(f, "<td class=\"n\">%zu</td>", m[j]->nodes);
    fputs("</tr>\n<tr><td>initializers</td>", f);
    for (size_t j = 0; j < n; j++) {
        host_format_bytes(b, sizeof b, (double)m[j]->initializer_bytes);
        fprintf(f, "<td class=\"n\">%zu, %s</td>", m[j]->initializers, b);
    }
    fputs("</tr>\n</table>\n", f);
}

static size_t op_count(const host_model_info *m, const char *op)
{
    for (size_t i = 0; m && i < m->n_ops; i++)
        if (strcmp(m->ops[i].op, op) == 0)
            return m->ops[i].count;
    return 0;
}

/* Op counts before (and after): two bars per op type. */
static void op_chart(FILE *f, const host_run_record *rec)
{
    const host_model_info *a = rec->before, *b = rec->after;
    /* the op types: the input's, then those only the output has */
    size_t n = a->n_ops + (b ? b->n_ops : 0);
    const char **ops = host_xcalloc(n + 1, sizeof *ops);
    size_t k = 0, most = 1;
    for (size_t i = 0; i < a->n_ops; i++)
        ops[k++] = a->ops[i].op;
    for (size_t i = 0; b && i < b->n_ops; i++)
        if (!op_count(a, b->ops[i].op))
            ops[k++] = b->ops[i].op;
    for (size_t i = 0; i < k; i++) {
        size_t x = op_count(a, ops[i]), y = op_count(b, ops[i]);
        most = x > most ? x : most;
        most = y > most ? y : most;
    }
    const int label_w = 190, bar_w = 560, row_h = b ? 22 : 14, top = 6;
    int height = top + (int)k * row_h + 8;
    fprintf(f, "<p class=\"legend\"><span style=\"background:#4e79a7\"></span>input%s</p>\n",
            b ? "<span style=\"background:#f28e2b\"></span>output" : "");
    fprintf(f, "<svg id=\"op-chart\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
               "width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"op counts\">\n",
            label_w + bar_w + 60, height);
    for (size_t i = 0; i < k; i++) {
        int y = top + (int)i * row_h;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", label_w - 6, y + (b ? 14 : 10));
        esc(f, ops[i]);
        fputs("</text>\n", f);
        for (int s = 0; s < (b ? 2 : 1); s++) {
            size_t c = op_count(s ? b : a, ops[i]);
            double w = (double)c / (double)most * bar_w;
            int by = y + s * 10;
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"9\" fill=\"%s\">"
                       "<title>%s: %zu</title></rect>",
                    label_w, by, w > 0 && w < 1 ? 1.0 : w, s ? "#f28e2b" : "#4e79a7",
                    s ? "output" : "input", c);
            fprintf(f, "<text x=\"%.1f\" y=\"%d\">%zu</text>\n", label_w + w + 4, by + 8, c);
        }
    }
    fputs("</svg>\n", f);
    free(ops);
}

/* One row per pass of each stage, one bar per call: the pass's run() in
 * its colour (darker when it rewrote), the checks after it in grey. */
static void timeline(FILE *f, const host_run_record *rec)
{
    const host_trace *t = rec->trace;
    const host_stage_stats *st = rec->stats;
    double end = 0;
    for (size_t i = 0; i < t->count; i++) {
        double e = t->calls[i].start_ms + t->calls[i].ms + t->calls[i].check_ms;
        end = e > end ? e : end;
    }
    double begin = t->count ? t->calls[0].start_ms : 0, span = end - begin > 0 ? end - begin : 1;
    size_t rows = 0, row0[HOST_STAGE_COUNT];
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        row0[s] = rows;
        rows += st[s].count;
    }
    const int label_w = 300, plot_w = 560, row_h = 14, top = 8, axis_h = 26;
    int height = top + (int)rows * row_h + axis_h;
    fprintf(f, "<p class=\"legend\"><span style=\"background:#e15759\"></span>call that rewrote"
               "<span style=\"background:#bab0ac\"></span>call without rewrites"
               "<span style=\"background:#59a14f\"></span>checks after a change (sort, shapes, "
               "--verify-each)</p>\n");
    fprintf(f, "<svg id=\"timeline-chart\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
               "width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"pass calls over time\">\n",
            label_w + plot_w + 50, height);
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        for (size_t i = 0; i < st[s].count; i++) {
            int y = top + (int)(row0[s] + i) * row_h;
            if ((row0[s] + i) % 2 == 0)
                fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f6f6f6\"/>",
                        label_w, y, plot_w, row_h);
            fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s: ", label_w - 6, y + 11,
                    host_stage_name(s));
            esc(f, st[s].passes[i].name);
            fputs("</text>\n", f);
        }
    }
    for (size_t i = 0; i < t->count; i++) {
        const host_call_record *c = &t->calls[i];
        if (c->stage < 0 || c->stage >= HOST_STAGE_COUNT)
            continue;
        int y = top + (int)(row0[c->stage] + c->step) * row_h + 2;
        double x = label_w + (c->start_ms - begin) / span * plot_w;
        double w = c->ms / span * plot_w, wc = c->check_ms / span * plot_w;
        fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"10\" fill=\"%s\"><title>",
                x, y, w < 1 ? 1 : w, c->rewrites > 0 ? "#e15759" : "#bab0ac");
        esc(f, c->pass);
        fprintf(f, ", %s %s%d: %.3f ms, %lld rewrites, nodes %zu -> %zu</title></rect>",
                host_stage_name(c->stage), c->round ? "round " : "run-once", c->round ? c->round : 0,
                c->ms, c->rewrites, c->nodes_before, c->nodes_after);
        if (c->rewrites > 0 && wc >= 0.5)
            fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"10\" fill=\"#59a14f\">"
                       "<title>checks: %.3f ms</title></rect>", x + (w < 1 ? 1 : w), y, wc, c->check_ms);
        fputc('\n', f);
    }
    int axis_y = top + (int)rows * row_h + 4;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n", label_w, axis_y,
            label_w + plot_w, axis_y);
    for (int k = 0; k <= 5; k++) {
        double x = label_w + plot_w * k / 5.0;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#888\"/>"
                   "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.*f ms</text>\n",
                x, axis_y, x, axis_y + 4, x, axis_y + 16, span >= 50 ? 0 : span >= 5 ? 1 : 3,
                span * k / 5.0);
    }
    fputs("</svg>\n", f);
}

static void stage_tables(FILE *f, const host_run_record *rec)
{
    for (int s = 0; s < HOST_STAGE_COUNT; s++) {
        const host_stage_stats *st = &rec->stats[s];
        fprintf(f, "<h3>stage %s%s", host_stage_name(s), st->target && *st->target ? ", target " : "");
        esc(f, st->target ? st->target : "");
        if (!st->count) {
            fputs(": no passes</h3>\n", f);
            continue;
        }
        fprintf(f, ": %d round%s%s, %.2f ms, nodes %zu &rarr; %zu</h3>\n", st->rounds,
                st->rounds == 1 ? "" : "s", st->hit_cap ? " (cap reached, no fixpoint)" : "", st->ms,
                st->nodes_before, st->nodes_after);
        fputs("<table class=\"passes\"><tr><th>pass</th><th>calls</th><th>rewrites</th>"
              "<th>time ms</th><th>node change</th><th>checks ms</th></tr>\n", f);
        double checks = 0, pass_ms = 0;
        for (size_t i = 0; i < st->count; i++) {
            const host_pass_stats *p = &st->passes[i];
            fputs("<tr><td>", f);
            esc(f, p->name);
            fprintf(f, "%s</td><td class=\"n\">%u</td><td class=\"n\">%lld</td><td class=\"n\">%.3f</td>"
                       "<td class=\"n\">%s%lld</td><td class=\"n\">%.3f</td></tr>\n",
                    p->run_once ? " (once)" : "", p->calls, p->rewrites, p->ms,
                    p->node_change > 0 ? "+" : "", p->node_change, p->check_ms);
            checks += p->check_ms;
            pass_ms += p->ms;
        }
        fprintf(f, "<tr class=\"sect\"><td>total</td><td></td><td></td><td class=\"n\">%.3f</td><td></td>"
                   "<td class=\"n\">%.3f</td></tr>\n</table>\n", st->ms, checks);
        (void)pass_ms;
    }
    fputs("<p>node change: nodes added minus removed by the pass's own calls. checks: the "
          "topological sort, shape update and (--verify-each) verification after each call that "
          "changed the graph.</p>\n", f);
}

/* The target check's violations, one row each. */
static void target_section(FILE *f, const host_run_record *rec)
{
    const host_violations *vs = rec->violations;
    if (!vs)
        return;
    fputs("<section id=\"target\"><h2>Target ", f);
    esc(f, vs->target ? vs->target : "");
    fprintf(f, ": %zu violation%s</h2>\n", vs->count, vs->count == 1 ? "" : "s");
    if (vs->count) {
        fputs("<table><tr><th>node</th><th>op</th><th>constraint</th><th>value</th><th>limit</th>"
              "<th>fixed by</th></tr>\n",
              f);
        for (size_t i = 0; i < vs->count; i++) {
            const host_violation *v = &vs->items[i];
            fputs("<tr><td>", f);
            if (*v->graph) {
                esc(f, v->graph);
                fputs("/", f);
            }
            esc(f, *v->node ? v->node : "(unnamed)");
            fputs("</td><td>", f);
            esc(f, v->op);
            fputs("</td><td>", f);
            esc(f, v->key);
            fputs("</td><td>", f);
            esc(f, v->value);
            fputs("</td><td>", f);
            esc(f, v->limit);
            fputs("</td><td>", f);
            esc(f, *v->fix ? v->fix : "-");
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    fputs("</section>\n", f);
}

static void verify_section(FILE *f, const host_run_record *rec)
{
    if (!(rec->verify_checked && rec->verify) && !rec->verify_each)
        return;
    fputs("<section id=\"verify\"><h2>Verification</h2>\n<pre>", f);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (m) {
        host_report_verify_outputs(m, rec);
        host_report_verdicts(m, rec);
        fclose(m);
        esc(f, buf);
        free(buf);
    }
    fputs("</pre></section>\n", f);
}

void host_report_html(FILE *f, const host_run_record *rec)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
          "<meta name=\"viewport\" content=\"width=device-width\">\n<title>passhost: ", f);
    esc(f, rec->input);
    fputs(" &rarr; ", f);
    esc(f, rec->output ? rec->output : "");
    fprintf(f, "</title>\n<style>%s</style></head>\n<body>\n<h1>passhost report</h1>\n", style);
    fprintf(f, "<p>passhost %s, plugin ABI %d.%d: <code>", HOST_VERSION, PH_ABI_MAJOR, PH_ABI_MINOR);
    for (int i = 0; i < rec->argc; i++) {
        fputs(i ? " " : "", f);
        esc(f, rec->argv[i]);
    }
    fputs("</code></p>\n", f);
    const host_stage_stats *st = rec->stats && !rec->shapes_only ? rec->stats : NULL;
    if (rec->exit_code) {
        fprintf(f, "<p id=\"status\" class=\"fail\">failed, exit %d: ", rec->exit_code);
        esc(f, rec->error ? rec->error : "");
        fputs("</p>\n", f);
    } else if (rec->sum) {
        char *line = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&line, &len);
        if (m) {
            host_report_times(m, rec->sum, st, st ? HOST_STAGE_COUNT : 0);
            host_report_summary_line(m, rec->sum, st, st ? HOST_STAGE_COUNT : 0);
            fclose(m);
            fputs("<pre id=\"status\" class=\"ok\">", f);
            esc(f, line);
            fputs("</pre>\n", f);
            free(line);
        }
    }
    if (rec->before) {
        fputs("<section id=\"summary\"><h2>Models</h2>\n", f);
        model_table(f, rec);
        fputs("</section>\n<section id=\"ops\"><h2>Op types</h2>\n", f);
        op_chart(f, rec);
        fputs("</section>\n", f);
    }
    if (st && rec->trace) {
        fputs("<section id=\"timeline\"><h2>Pass calls over time</h2>\n", f);
        timeline(f, rec);
        fputs("</section>\n<section id=\"stages\"><h2>Passes</h2>\n", f);
        stage_tables(f, rec);
        fputs("</section>\n", f);
    }
    target_section(f, rec);
    verify_section(f, rec);
    char *ini = host_record_config_ini(rec);
    if (ini) {
        fputs("<section id=\"config\"><h2>Effective configuration</h2>\n<pre>", f);
        esc(f, ini);
        fputs("</pre></section>\n", f);
        free(ini);
    }
    /* the only script: check that every chart has a size, for tests and viewers */
    fputs("<script>\n(function () {\n"
          "  var bad = [];\n"
          "  document.querySelectorAll('svg.chart').forEach(function (s) {\n"
          "    var b = s.getBBox();\n"
          "    if (!(b.width > 0 && b.height > 0)) bad.push(s.id);\n"
          "  });\n"
          "  document.body.setAttribute('data-rendered', bad.length ? 'failed: ' + bad.join(' ') : 'ok');\n"
          "})();\n</script>\n</body></html>\n", f);
}
