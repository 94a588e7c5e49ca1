/* host/report/inspect.c - model summaries and the side-by-side table (inspect.h). */
#include "inspect.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/exit.h"
#include "base/streams.h"
#include "io/model_io.h"
#include "base/util.h"

/* ------------------------------------------------------------ the summary */

void host_format_bytes(char *buf, size_t size, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4)
        bytes /= 1024, u++;
    if (u == 0)
        snprintf(buf, size, "%.0f B", bytes);
    else
        snprintf(buf, size, bytes < 10 ? "%.2f %s" : bytes < 100 ? "%.1f %s" : "%.0f %s", bytes,
                 units[u]);
}

static char *type_text(const ph_value *v)
{
    int rank = ph_value_rank(v);
    const char *dtype = ph_value_dtype(v) ? ph_dtype_name(ph_value_dtype(v)) : "?";
    if (rank < 0)
        return host_xasprintf("%s[?]", dtype);
    char *dims = host_xstrdup("");
    for (int d = 0; d < rank; d++) {
        const char *param = ph_value_dim_param(v, d);
        char *grown = ph_value_dim(v, d) >= 0
                          ? host_xasprintf("%s%s%lld", dims, d ? "," : "", (long long)ph_value_dim(v, d))
                          : host_xasprintf("%s%s%s", dims, d ? "," : "", param && *param ? param : "?");
        free(dims);
        dims = grown;
    }
    char *t = host_xasprintf("%s[%s]", dtype, dims);
    free(dims);
    return t;
}

typedef struct counter {
    size_t known[PH_OP__COUNT];
    host_op_count *other; /* op types outside the table, and other domains */
    size_t n_other, cap_other;
    size_t initializers;
    uint64_t init_bytes;
} counter;

static void count_initializers(counter *c, const ph_graph *g)
{
    size_t n = ph_graph_initializer_count(g);
    c->initializers += n;
    for (size_t i = 0; i < n; i++) {
        const ph_tensor *t = ph_value_const(ph_graph_initializer(g, i));
        if (t)
            c->init_bytes += ph_tensor_nbytes(t);
    }
}

static int count_node(ph_node *n, void *user)
{
    counter *c = user;
    ph_op op = ph_node_op(n);
    for (size_t i = 0; i < ph_node_subgraph_count(n); i++)
        count_initializers(c, ph_node_subgraph(n, i));
    if (op != PH_OP_UNKNOWN && op < PH_OP__COUNT) {
        c->known[op]++;
        return 0;
    }
    const char *domain = ph_node_domain(n);
    char *name = *domain ? host_xasprintf("%s.%s", domain, ph_node_op_type(n))
                         : host_xstrdup(ph_node_op_type(n));
    for (size_t i = 0; i < c->n_other; i++) {
        if (strcmp(c->other[i].op, name) == 0) {
            c->other[i].count++;
            free(name);
            return 0;
        }
    }
    host_xgrow(&c->other, &c->cap_other, c->n_other + 1, sizeof *c->other);
    c->other[c->n_other++] = (host_op_count){name, 1};
    return 0;
}

/* The op histogram from the model's count of each op's live nodes, with
 * no walk of the nodes (on a million nodes that walk misses the cache at
 * each one): when the counts of the op table's ops add up to every node of
 * g and of the model and g holds no body, each node is one of them, since
 * the counts take no node twice.  Else 0, and the caller walks. */
static int count_ops_indexed(counter *c, const ph_model *m, const ph_graph *g)
{
    if (ph_graph_has_bodies(g))
        return 0;
    size_t known[PH_OP__COUNT] = {0}, sum = 0;
    for (size_t op = 1; op < PH_OP__COUNT; op++)
        sum += known[op] = ph_model_op_count(m, (ph_op)op);
    if (sum != ph_graph_node_count(g) || sum != ph_model_node_count(m))
        return 0;
    memcpy(c->known, known, sizeof known);
    return 1;
}

static int by_count(const void *a, const void *b)
{
    const host_op_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->op, y->op);
}

static const char *const op_names[] = {
    "",
#define PH_X_OP(name) #name,
    PH_OP_TABLE(PH_X_OP)
#undef PH_X_OP
};

/* The default domain's opset and that of each domain of the histogram;
 * as data and as "ai.onnx 13, com.microsoft 1". */
static void take_opsets(host_model_info *info, const ph_model *m)
{
    info->opset_list = host_xcalloc(info->n_ops + 1, sizeof *info->opset_list);
    info->opset_list[info->n_opsets++] = (host_opset){host_xstrdup("ai.onnx"), ph_model_opset(m, "")};
    for (size_t i = 0; i < info->n_ops; i++) {
        const char *dot = strrchr(info->ops[i].op, '.');
        if (!dot)
            continue;
        char *domain = host_xstrndup(info->ops[i].op, (size_t)(dot - info->ops[i].op));
        int seen = 0;
        for (size_t k = 0; k < info->n_opsets && !seen; k++)
            seen = strcmp(info->opset_list[k].domain, domain) == 0;
        if (seen || ph_model_opset(m, domain) < 0) {
            free(domain);
            continue;
        }
        info->opset_list[info->n_opsets++] = (host_opset){domain, ph_model_opset(m, domain)};
    }
    char *text = host_xstrdup("");
    for (size_t k = 0; k < info->n_opsets; k++) {
        char *grown = host_xasprintf("%s%s%s %lld", text, k ? ", " : "", info->opset_list[k].domain,
                                     (long long)info->opset_list[k].version);
        free(text);
        text = grown;
    }
    info->opsets = text;
}

void host_model_info_set_file(host_model_info *info, const char *file)
{
    struct stat st;
    info->file_bytes = file && stat(file, &st) == 0 ? (long long)st.st_size : -1;
}

void host_model_info_take(host_model_info *info, ph_model *m, const char *path, const char *file)
{
    memset(info, 0, sizeof *info);
    info->path = host_xstrdup(path ? path : "");
    host_model_info_set_file(info, file);
    info->ir_version = ph_model_ir_version(m);
    ph_graph *g = ph_model_graph(m);
    size_t n_in = ph_graph_input_count(g), n_out = ph_graph_output_count(g);
    info->inputs = host_xcalloc(n_in + 1, sizeof *info->inputs);
    for (size_t i = 0; i < n_in; i++) {
        const ph_value *v = ph_graph_input(g, i);
        if (ph_value_is_initializer(v))
            continue;
        info->inputs[info->n_inputs++] = (host_io_info){host_xstrdup(ph_value_name(v)), type_text(v)};
    }
    info->outputs = host_xcalloc(n_out + 1, sizeof *info->outputs);
    for (size_t i = 0; i < n_out; i++) {
        const ph_value *v = ph_graph_output(g, i);
        info->outputs[info->n_outputs++] = (host_io_info){host_xstrdup(ph_value_name(v)), type_text(v)};
    }
    counter *c = host_xcalloc(1, sizeof *c);
    count_initializers(c, g);
    if (!count_ops_indexed(c, m, g))
        ph_graph_walk(g, count_node, c);
    size_t kinds = c->n_other;
    for (size_t op = 1; op < PH_OP__COUNT; op++)
        kinds += c->known[op] > 0;
    info->ops = host_xcalloc(kinds + 1, sizeof *info->ops);
    for (size_t op = 1; op < PH_OP__COUNT; op++)
        if (c->known[op])
            info->ops[info->n_ops++] = (host_op_count){host_xstrdup(op_names[op]), c->known[op]};
    for (size_t i = 0; i < c->n_other; i++)
        info->ops[info->n_ops++] = c->other[i];
    qsort(info->ops, info->n_ops, sizeof *info->ops, by_count);
    for (size_t i = 0; i < info->n_ops; i++)
        info->nodes += info->ops[i].count;
    info->initializers = c->initializers;
    info->initializer_bytes = c->init_bytes;
    take_opsets(info, m);
    free(c->other);
    free(c);
}

void host_model_info_free(host_model_info *info)
{
    if (!info)
        return;
    for (size_t i = 0; i < info->n_inputs; i++)
        free(info->inputs[i].name), free(info->inputs[i].type);
    for (size_t i = 0; i < info->n_outputs; i++)
        free(info->outputs[i].name), free(info->outputs[i].type);
    for (size_t i = 0; i < info->n_ops; i++)
        free(info->ops[i].op);
    free(info->inputs);
    free(info->outputs);
    free(info->ops);
    for (size_t i = 0; i < info->n_opsets; i++)
        free(info->opset_list[i].domain);
    free(info->opset_list);
    free(info->opsets);
    free(info->path);
    memset(info, 0, sizeof *info);
}

/* ---------------------------------------------------------------- the table */

typedef struct row {
    char *label;
    char **cells;  /* n, owned; NULL entries print empty */
    int section;   /* a heading row: label only */
} row;

typedef struct table {
    row *rows;
    size_t count, cap;
    size_t n;      /* model columns */
} table;

static row *add_row(table *t, const char *label)
{
    host_xgrow(&t->rows, &t->cap, t->count + 1, sizeof *t->rows);
    row *r = &t->rows[t->count++];
    r->label = host_xstrdup(label);
    r->cells = host_xcalloc(t->n + 1, sizeof *r->cells);
    r->section = 0;
    return r;
}

/* A count, and its change from the first model when comparing. */
static char *count_cell(size_t value, size_t first, int later, int compare)
{
    if (compare && later && value != first)
        return host_xasprintf("%zu (%+lld)", value, (long long)value - (long long)first);
    return host_xasprintf("%zu", value);
}

static size_t op_count_of(const host_model_info *m, const char *op)
{
    for (size_t i = 0; i < m->n_ops; i++)
        if (strcmp(m->ops[i].op, op) == 0)
            return m->ops[i].count;
    return 0;
}

static void build_table(table *t, const host_model_info *infos, size_t n, int compare)
{
    t->n = n;
    row *r = add_row(t, "file size");
    for (size_t i = 0; i < n; i++) {
        char b[32] = "?";
        if (infos[i].file_bytes >= 0)
            host_format_bytes(b, sizeof b, (double)infos[i].file_bytes);
        r->cells[i] = host_xstrdup(b);
    }
    r = add_row(t, "ir version");
    for (size_t i = 0; i < n; i++)
        r->cells[i] = host_xasprintf("%lld", (long long)infos[i].ir_version);
    r = add_row(t, "opsets");
    for (size_t i = 0; i < n; i++)
        r->cells[i] = host_xstrdup(infos[i].opsets);
    for (int io = 0; io < 2; io++) {
        size_t most = 0;
        for (size_t i = 0; i < n; i++) {
            size_t c = io ? infos[i].n_outputs : infos[i].n_inputs;
            most = c > most ? c : most;
        }
        for (size_t k = 0; k < most || k == 0; k++) {
            r = add_row(t, k ? "" : io ? "outputs" : "inputs");
            for (size_t i = 0; i < n; i++) {
                const host_io_info *list = io ? infos[i].outputs : infos[i].inputs;
                size_t c = io ? infos[i].n_outputs : infos[i].n_inputs;
                r->cells[i] = k < c ? host_xasprintf("%s %s", list[k].name, list[k].type)
                                    : host_xstrdup(k == 0 ? "none" : "");
            }
        }
    }
    r = add_row(t, "nodes");
    for (size_t i = 0; i < n; i++)
        r->cells[i] = count_cell(infos[i].nodes, infos[0].nodes, i > 0, compare);
    r = add_row(t, "initializers");
    for (size_t i = 0; i < n; i++) {
        char b[32];
        host_format_bytes(b, sizeof b, (double)infos[i].initializer_bytes);
        char *count = count_cell(infos[i].initializers, infos[0].initializers, i > 0, compare);
        r->cells[i] = host_xasprintf("%s, %s", count, b);
        free(count);
    }
    r = add_row(t, "op types");
    r->section = 1;
    /* every op type of any model: the first model's order, then the others' new ones */
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < infos[i].n_ops; k++) {
            const char *op = infos[i].ops[k].op;
            int seen = 0;
            for (size_t j = 0; j < i && !seen; j++)
                seen = op_count_of(&infos[j], op) > 0;
            if (seen)
                continue;
            char *label = host_xasprintf("  %s", op);
            r = add_row(t, label);
            free(label);
            size_t first = op_count_of(&infos[0], op);
            for (size_t j = 0; j < n; j++) {
                size_t c = op_count_of(&infos[j], op);
                r->cells[j] = c == 0 && !(compare && j > 0 && first) ? host_xstrdup("-")
                                                                      : count_cell(c, first, j > 0, compare);
            }
        }
    }
}

static void free_table(table *t)
{
    for (size_t i = 0; i < t->count; i++) {
        for (size_t j = 0; j < t->n; j++)
            free(t->rows[i].cells[j]);
        free(t->rows[i].cells);
        free(t->rows[i].label);
    }
    free(t->rows);
}

/* Display width of UTF-8 text (one column a character). */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (; s && *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* Byte length of the first `cols` characters of s. */
static size_t prefix_bytes(const char *s, size_t cols)
{
    size_t i = 0;
    for (size_t c = 0; s[i] && c <= cols; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && c++ == cols)
            break;
    return i;
}

/* s padded or cut to exactly w columns; from_left: cut the start instead. */
static void put_cell(FILE *out, const char *s, size_t w, int tty, int from_left)
{
    s = s ? s : "";
    size_t width = text_width(s);
    const char *mark = tty ? "\xe2\x80\xa6" : "~"; /* U+2026 on a terminal */
    if (width <= w) {
        fputs(s, out);
        for (size_t i = width; i < w; i++)
            fputc(' ', out);
        return;
    }
    if (w == 0)
        return;
    if (from_left) {
        fputs(mark, out);
        fputs(s + prefix_bytes(s, width - (w - 1)), out);
    } else {
        fwrite(s, 1, prefix_bytes(s, w - 1), out);
        fputs(mark, out);
    }
}

static size_t table_width(FILE *out, int tty)
{
    if (tty) {
        struct winsize ws;
        if (ioctl(host_stream_fd(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
            return ws.ws_col;
    }
    const char *cols = getenv("COLUMNS");
    long n = cols ? strtol(cols, NULL, 10) : 0;
    return n > 0 ? (size_t)n : tty ? 80 : 0;
}

#define GAP 2
#define MIN_COL 12
#define MIN_LABEL 16

static void print_rule(FILE *out, size_t w, int tty)
{
    for (size_t i = 0; i < w; i++)
        fputs(tty ? "\xe2\x94\x80" : "-", out); /* U+2500 */
    fputc('\n', out);
}

/* Columns first..last-1 as one block. */
static void print_block(FILE *out, const table *t, const host_model_info *infos, size_t first,
                        size_t last, size_t label_w, const size_t *col_w, int tty)
{
    const char *bold = tty ? "\033[1m" : "", *plain = tty ? "\033[0m" : "";
    size_t total = label_w;
    fprintf(out, "%s", bold);
    put_cell(out, "", label_w, tty, 0);
    for (size_t j = first; j < last; j++) {
        fprintf(out, "%*s", GAP, "");
        if (j + 1 == last && text_width(infos[j].path) <= col_w[j])
            fputs(infos[j].path, out); /* no trailing blanks */
        else
            put_cell(out, infos[j].path, col_w[j], tty, 1);
        total += GAP + col_w[j];
    }
    fprintf(out, "%s\n", plain);
    print_rule(out, total, tty);
    for (size_t i = 0; i < t->count; i++) {
        const row *r = &t->rows[i];
        if (r->section) {
            fprintf(out, "%s%s%s\n", bold, r->label, plain);
            continue;
        }
        put_cell(out, r->label, label_w, tty, 0);
        for (size_t j = first; j < last; j++) {
            fprintf(out, "%*s", GAP, "");
            /* no trailing blanks */
            if (j + 1 == last && text_width(r->cells[j]) <= col_w[j])
                fputs(r->cells[j] ? r->cells[j] : "", out);
            else
                put_cell(out, r->cells[j], col_w[j], tty, 0);
        }
        fputc('\n', out);
    }
}

void host_inspect_table(FILE *out, const host_model_info *infos, size_t n, int compare)
{
    if (n == 0)
        return;
    int tty = isatty(host_stream_fd(out));
    size_t avail = table_width(out, tty);
    table t = {0};
    build_table(&t, infos, n, compare);
    size_t label_w = 0;
    for (size_t i = 0; i < t.count; i++) {
        size_t w = text_width(t.rows[i].label);
        if (!t.rows[i].section && w > label_w)
            label_w = w;
    }
    /* labels (op types such as com.microsoft.SkipLayerNormalization) are
     * cut only when a narrow terminal leaves no room for one model column */
    if (avail && label_w + GAP + MIN_COL > avail)
        label_w = avail > GAP + MIN_COL + MIN_LABEL ? avail - GAP - MIN_COL : MIN_LABEL;
    size_t *col_w = host_xcalloc(n, sizeof *col_w);
    for (size_t j = 0; j < n; j++) {
        col_w[j] = text_width(infos[j].path);
        for (size_t i = 0; i < t.count; i++) {
            size_t w = text_width(t.rows[i].cells[j]);
            col_w[j] = w > col_w[j] ? w : col_w[j];
        }
    }
    for (size_t first = 0; first < n;) {
        /* as many columns as fit at their least width, at least one */
        size_t last = first + 1, need = label_w + GAP + (col_w[first] < MIN_COL ? col_w[first] : MIN_COL);
        while (avail && last < n) {
            size_t least = col_w[last] < MIN_COL ? col_w[last] : MIN_COL;
            if (need + GAP + least > avail)
                break;
            need += GAP + least;
            last++;
        }
        if (!avail)
            last = n;
        /* then narrow the widest until the block fits */
        for (;;) {
            size_t total = label_w, widest = first;
            for (size_t j = first; j < last; j++) {
                total += GAP + col_w[j];
                if (col_w[j] > col_w[widest])
                    widest = j;
            }
            if (!avail || total <= avail || col_w[widest] <= MIN_COL)
                break;
            col_w[widest]--;
        }
        if (first > 0)
            fputc('\n', out);
        print_block(out, &t, infos, first, last, label_w, col_w, tty);
        first = last;
    }
    free(col_w);
    free_table(&t);
}

/* -------------------------------------------------------------- --inspect */

int host_inspect_main(const char *const *paths, size_t n, FILE *out, ph_error *err)
{
    if (n == 0)
        return ph_error_set(err, HOST_EXIT_USAGE, "--inspect: give one or more models "
                                                  "(passhost --inspect A.onnx [B.onnx ...])");
    host_model_info *infos = host_xcalloc(n, sizeof *infos);
    int rc = 0;
    size_t done = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *path = paths[i];
        ph_model *m = NULL;
        double ms;
        rc = host_model_load(path, 0, &m, &ms, err);
        if (rc)
            break;
        host_model_info_take(&infos[done++], m, path, path);
        ph_model_free(m);
    }
    if (!rc)
        host_inspect_table(out, infos, done, 0);
    for (size_t i = 0; i < done; i++)
        host_model_info_free(&infos[i]);
    free(infos);
    return rc;
}
