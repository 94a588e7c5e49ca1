/* host/report/report_html.c - `--report-html FILE`: the run's report as one
 * self-contained HTML file.  No network and no external file: the style,
 * the charts (inline SVG) and a few lines of script are all in the file,
 * and a Content-Security-Policy forbids loading anything else.
 *
 * Sections, for a laptop's screen: the outcome, the input/output summary
 * table (as --inspect; a failed run's output column says it wrote
 * nothing), what changed (a diagram of the region each of the first
 * changing pass calls changed, dump.h), a bar chart of the op counts that
 * changed, the verification, the timeline of pass calls (one row per pass,
 * one bar per call), the per-pass tables and the effective configuration
 * (both collapsed).  Charts scale down to the page's width.  The script
 * only checks that the charts rendered (body[data-rendered]) and that the
 * page fits the window's width (body[data-fits]). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/version.h"
#include "check/dump.h"
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
    "body{font:14px/1.4 system-ui,sans-serif;margin:1em auto;max-width:1100px;color:#222;padding:0 1em}"
    "h1{font-size:1.4em;margin:.3em 0}h2{font-size:1.15em;margin-top:1.4em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 10px;text-align:left;"
    "border-bottom:1px solid #eee;vertical-align:top}th{background:#f4f4f4}"
    "#models td,#models th{overflow-wrap:anywhere;max-width:420px}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}td.nooutput{vertical-align:middle}"
    ".ok{color:#176117}.fail{color:#a31515}.sect td{font-weight:bold;background:#fafafa}"
    "pre{background:#f7f7f7;padding:.6em;overflow:auto;font-size:12px;white-space:pre-wrap}"
    "code{overflow-wrap:anywhere}"
    "svg.chart{max-width:100%;height:auto}svg text{font:11px system-ui,sans-serif;fill:#222}"
    "svg text.small{font-size:10px;fill:#555}.legend span{display:inline-block;"
    "width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}"
    "details{margin:.4em 0}summary{cursor:pointer}details.region .figure{overflow-x:auto}"
    "p.small,p.removed{font-size:12px;color:#555;margin:.2em 0 .8em}";

/* ------------------------------------------------------------- tables */

/* The output column of a run that wrote nothing: one cell spanning the rows. */
static void no_output_cell(FILE *f, const host_run_record *rec, int rows)
{
    fprintf(f, "<td rowspan=\"%d\" class=\"fail nooutput\">not written: ", rows);
    if (rec->exit_code) {
        fprintf(f, "the run failed (exit %d)", rec->exit_code);
    } else {
        fputs("no output model", f);
    }
    fputs("</td>", f);
}

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
    if (n == 1) { /* a failed run: the output column says why it is empty */
        fputs("<th>output: ", f);
        esc(f, rec->output ? rec->output : "");
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
    if (n == 1)
        no_output_cell(f, rec, 7); /* file size .. initializers */
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
    size_t same = 0;
    for (size_t i = 0; i < a->n_ops; i++) {
        if (b && op_count(b, a->ops[i].op) == a->ops[i].count) {
            same++;
            continue; /* only what changed is drawn */
        }
        ops[k++] = a->ops[i].op;
    }
    for (size_t i = 0; b && i < b->n_ops; i++)
        if (!op_count(a, b->ops[i].op))
            ops[k++] = b->ops[i].op;
    if (k == 0) { /* nothing changed: every op type */
        for (size_t i = 0; i < a->n_ops; i++)
            ops[k++] = a->ops[i].op;
        same = 0;
    }
    for (size_t i = 0; i < k; i++) {
        size_t x = op_count(a, ops[i]), y = op_count(b, ops[i]);
        most = x > most ? x : most;
        most = y > most ? y : most;
    }
    const int label_w = 190, bar_w = 560, row_h = b ? 22 : 14, top = 6;
    int height = top + (int)k * row_h + 8;
    fprintf(f, "<p class=\"legend\"><span style=\"background:#4e79a7\"></span>input%s</p>\n",
            b ? "<span style=\"background:#f28e2b\"></span>output" : "");
    if (same)
        fprintf(f, "<p class=\"small\">The op types whose count changed; %zu other%s kept %s count.</p>\n",
                same, same == 1 ? "" : "s", same == 1 ? "its" : "their");
    fprintf(f, "<svg id=\"op-chart\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
               "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"op counts\">\n",
            label_w + bar_w + 60, height, label_w + bar_w + 60, height);
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
               "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
               "aria-label=\"pass calls over time\">\n",
            label_w + plot_w + 50, height, label_w + plot_w + 50, height);
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

/* ------------------------------------------------------------ regions */

enum { BOX_W = 168, BOX_H = 40, VALUE_H = 26, GAP_X = 16, GAP_Y = 40, PAD = 10 };

/* Text cut to max characters with an ellipsis (the whole in a title). */
static void esc_cut(FILE *f, const char *s, size_t max)
{
    size_t len = strlen(s);
    if (len <= max) {
        esc(f, s);
        return;
    }
    char *head = host_xstrndup(s, max - 1);
    esc(f, head);
    fputs("&hellip;", f);
    free(head);
}

/* A layered drawing of the region: boxes in rows by their longest path
 * from a source, ordered in a row by the mean position of their producers,
 * a row of more than ROW_MAX boxes wrapped; edges as curves with arrows,
 * the value they carry as a tooltip.  Initializers are left out (they
 * would fill the rows; a node's tooltip names what it reads). */
enum { ROW_MAX = 6 };

static void region_svg(FILE *f, const host_region *r, size_t id)
{
    size_t n = r->n_boxes;
    char *skip = host_xcalloc(n + 1, 1);
    for (size_t i = 0; i < n; i++)
        skip[i] = r->boxes[i].kind == HOST_BOX_INITIALIZER;
    int *layer = host_xcalloc(n + 1, sizeof *layer);
    for (size_t it = 0; it < n; it++) { /* longest path; the region is acyclic */
        int moved = 0;
        for (size_t e = 0; e < r->n_edges; e++) {
            const host_region_edge *x = &r->edges[e];
            if (!skip[x->from] && !skip[x->to] && layer[x->to] < layer[x->from] + 1)
                layer[x->to] = layer[x->from] + 1, moved = 1;
        }
        if (!moved)
            break;
    }
    int layers = 0;
    for (size_t i = 0; i < n; i++)
        if (!skip[i])
            layers = layer[i] + 1 > layers ? layer[i] + 1 : layers;
    /* order in a layer: the mean column of producers; then rows of ROW_MAX */
    double *key = host_xcalloc(n + 1, sizeof *key), *cx = host_xcalloc(n + 1, sizeof *cx);
    double *cy = host_xcalloc(n + 1, sizeof *cy);
    size_t *order = host_xcalloc(n + 1, sizeof *order);
    int rows = 0, width_boxes = 1;
    for (int L = 0; L < layers; L++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (skip[i] || layer[i] != L)
                continue;
            double sum = 0;
            int cnt = 0;
            for (size_t e = 0; e < r->n_edges; e++)
                if (r->edges[e].to == i && !skip[r->edges[e].from])
                    sum += cx[r->edges[e].from], cnt++;
            key[i] = cnt ? sum / cnt : (double)i * 1e-3;
            size_t at = k++; /* insertion sort by key, stable */
            while (at > 0 && key[order[at - 1]] > key[i])
                order[at] = order[at - 1], at--;
            order[at] = i;
        }
        for (size_t j = 0; j < k; j += ROW_MAX) {
            size_t in_row = k - j < ROW_MAX ? k - j : ROW_MAX;
            width_boxes = (int)in_row > width_boxes ? (int)in_row : width_boxes;
            for (size_t c = 0; c < in_row; c++) {
                size_t b = order[j + c];
                cx[b] = (double)c - (double)(in_row - 1) / 2.0; /* centred, scaled below */
                cy[b] = PAD + rows * (BOX_H + GAP_Y);
            }
            rows++;
        }
    }
    int W = PAD * 2 + width_boxes * (BOX_W + GAP_X) - GAP_X, H = PAD * 2 + rows * (BOX_H + GAP_Y) - GAP_Y;
    for (size_t i = 0; i < n; i++)
        cx[i] = W / 2.0 + cx[i] * (BOX_W + GAP_X);
    fprintf(f, "<svg id=\"region-%zu\" class=\"chart region\" xmlns=\"http://www.w3.org/2000/svg\" "
               "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
               "aria-label=\"the region the pass changed\">\n"
               "<defs><marker id=\"arrow-%zu\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" "
               "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" "
               "fill=\"#777\"/></marker></defs>\n", id, W, H, W, H, id);
    for (size_t e = 0; e < r->n_edges; e++) {
        const host_region_edge *x = &r->edges[e];
        if (skip[x->from] || skip[x->to])
            continue;
        double x1 = cx[x->from], y1 = cy[x->from] + BOX_H, x2 = cx[x->to], y2 = cy[x->to];
        double my = (y1 + y2) / 2;
        fprintf(f, "<path d=\"M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"#777\" "
                   "marker-end=\"url(#arrow-%zu)\">", x1, y1, x1, my, x2, my, x2, y2 - 1, id);
        if (x->label) {
            fputs("<title>", f);
            esc(f, x->label);
            fputs("</title>", f);
        }
        fputs("</path>\n", f);
    }
    for (size_t i = 0; i < n; i++) {
        const host_region_box *b = &r->boxes[i];
        if (skip[i])
            continue;
        double y = cy[i], x = cx[i] - BOX_W / 2.0;
        if (b->kind != HOST_BOX_NODE) {
            fprintf(f, "<g class=\"value\"><title>graph %s ", b->kind == HOST_BOX_INPUT ? "input" : "output");
            esc(f, b->name);
            fprintf(f, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"%d\" "
                       "fill=\"#e8f1ff\" stroke=\"#69c\"/><text x=\"%.1f\" y=\"%.1f\" "
                       "text-anchor=\"middle\">", x, y + (BOX_H - VALUE_H) / 2.0, BOX_W, VALUE_H,
                    VALUE_H / 2, cx[i], y + BOX_H / 2.0 + 4);
            esc_cut(f, b->name, 24);
            fputs("</text></g>\n", f);
            continue;
        }
        fprintf(f, "<g class=\"node%s\"><title>", b->changed ? " changed" : "");
        esc(f, b->op);
        if (b->name[0]) {
            fputs(" ", f);
            esc(f, b->name);
        }
        if (b->graph) {
            fputs(" in ", f);
            esc(f, b->graph);
        }
        for (size_t e = 0; e < r->n_edges; e++) /* the constants it reads */
            if (r->edges[e].to == i && skip[r->edges[e].from]) {
                fputs("\nreads ", f);
                esc(f, r->boxes[r->edges[e].from].name);
            }
        fprintf(f, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"4\" "
                   "fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"bold\">",
                x, y, BOX_W, BOX_H, b->changed ? "#fff3c4" : "#fff", b->changed ? "#c90" : "#999",
                b->changed ? "2" : "1", cx[i], y + (b->name[0] ? 16 : 24));
        esc_cut(f, b->op, 22);
        fputs("</text>", f);
        if (b->name[0]) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"small\">", cx[i], y + 32);
            /* the end of a long scoped name says most: "...self_attention/Mul_2" */
            size_t len = strlen(b->name);
            if (len > 28) {
                fputs("&hellip;", f);
                esc(f, b->name + len - 27);
            } else {
                esc(f, b->name);
            }
            fputs("</text>", f);
        }
        fputs("</g>\n", f);
    }
    fputs("</svg>\n", f);
    free(skip);
    free(layer);
    free(key);
    free(cx);
    free(cy);
    free(order);
}

static void regions_section(FILE *f, const host_run_record *rec)
{
    const host_region_list *l = rec->regions;
    if (!l || (!l->count && !l->left_out))
        return;
    fputs("<section id=\"regions\"><h2>What changed</h2>\n<p>The region each pass call changed, in "
          "the order of the run: changed and new nodes highlighted, with their direct producers and "
          "consumers; the removed nodes are listed under each picture. Hover a box or an edge for its "
          "names.</p>\n", f);
    for (size_t i = 0; i < l->count; i++) {
        const host_region_shot *s = &l->items[i];
        const host_region *r = s->region;
        fprintf(f, "<details class=\"region\"%s><summary>%s: <b>", i < 3 ? " open" : "",
                host_stage_name(s->stage));
        esc(f, s->pass);
        fprintf(f, "</b>, rewrite%s %llu", s->first < s->last ? "s" : "", (unsigned long long)s->first);
        if (s->first < s->last)
            fprintf(f, "&ndash;%llu", (unsigned long long)s->last);
        fprintf(f, ": %zu node%s changed or new, %zu%s removed</summary>\n", r->n_changed,
                r->n_changed == 1 ? "" : "s", r->n_removed + r->more_removed,
                r->more_removed ? "" : "");
        fputs("<div class=\"figure\">", f);
        region_svg(f, r, i);
        fputs("</div>\n", f);
        if (r->n_removed) {
            size_t shown = r->n_removed < 8 ? r->n_removed : 8;
            fprintf(f, "<p class=\"removed\">removed (%zu): ", r->n_removed + r->more_removed);
            for (size_t k = 0; k < shown; k++) {
                fputs(k ? ", " : "", f);
                esc(f, r->removed[k].name);
                fputs(" (", f);
                esc(f, r->removed[k].op);
                fputs(")", f);
            }
            if (r->n_removed + r->more_removed > shown)
                fprintf(f, " and %zu more", r->n_removed + r->more_removed - shown);
            fputs("</p>\n", f);
        }
        if (r->not_drawn || r->values_skipped)
            fprintf(f, "<p class=\"small\">%zu node%s and %zu value%s beyond what a picture holds are "
                       "not drawn.</p>\n", r->not_drawn, r->not_drawn == 1 ? "" : "s", r->values_skipped,
                    r->values_skipped == 1 ? "" : "s");
        fputs("</details>\n", f);
    }
    if (l->left_out)
        fprintf(f, "<p class=\"small\">%zu later pass call%s that changed the graph %s not drawn "
                   "(the report draws the first %d, on graphs of at most %d nodes; --dump-dir writes "
                   "every one).</p>\n", l->left_out, l->left_out == 1 ? "" : "s",
                l->left_out == 1 ? "is" : "are", HOST_REPORT_DIAGRAMS, HOST_REPORT_DIAGRAM_MAX_NODES);
    fputs("</section>\n", f);
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
                st->rounds == 1 ? "" : "s", st->hit_cap ? " (cap reached, no fixpoint)" : st->stalled ? " (stopped: no net change)" : "", st->ms,
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
        fputs("</section>\n", f);
    }
    if (st)
        regions_section(f, rec);
    if (rec->before) {
        fputs("<section id=\"ops\"><h2>Op types</h2>\n", f);
        op_chart(f, rec);
        fputs("</section>\n", f);
    }
    target_section(f, rec);
    verify_section(f, rec);
    if (st && rec->trace) {
        fputs("<section id=\"timeline\"><h2>Pass calls over time</h2>\n", f);
        timeline(f, rec);
        fputs("</section>\n<section id=\"stages\"><h2>Passes</h2>\n<details><summary>every pass of "
              "each stage: calls, rewrites, time, node change</summary>\n", f);
        stage_tables(f, rec);
        fputs("</details></section>\n", f);
    }
    char *ini = host_record_config_ini(rec);
    if (ini) {
        fputs("<section id=\"config\"><h2>Configuration</h2>\n<details><summary>the effective "
              "configuration of the run (an INI file that repeats it)</summary>\n<pre>", f);
        esc(f, ini);
        fputs("</pre></details></section>\n", f);
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
          "  var wide = document.documentElement.scrollWidth > window.innerWidth + 1;\n"
          "  document.body.setAttribute('data-fits', wide ? 'no: ' + document.documentElement.scrollWidth + 'px' : 'yes');\n"
          "})();\n</script>\n</body></html>\n", f);
}
