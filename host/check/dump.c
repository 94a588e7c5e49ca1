/* host/check/dump.c - `--dump-dir`: the model after each changing pass call and a
 * mermaid picture of the region that changed (dump.h). */
#include "dump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/exit.h"
#include "io/model_io.h"
#include "base/util.h"

enum {
    MAX_FOCUS = 24,   /* changed nodes drawn */
    MAX_REGION = 60,  /* nodes drawn in all */
    MAX_VALUES = 24,  /* graph inputs, initializers and outputs drawn */
    MAX_REMOVED = 24, /* removed nodes listed */
};

/* ------------------------------------------------------------ nodes */

typedef struct node_list {
    ph_node **items;
    size_t count, cap;
} node_list;

/* g's nodes in walk order: a node's subgraph nodes just before it. */
static void collect(ph_graph *g, node_list *l)
{
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        for (size_t s = 0; s < ph_node_subgraph_count(n); s++)
            collect(ph_node_subgraph(n, s), l);
        host_xgrow(&l->items, &l->cap, l->count + 1, sizeof *l->items);
        l->items[l->count++] = n;
    }
}

/* What identifies a node across a pass call: its name, or for a node
 * without one its op and first output. */
static char *node_key(const ph_node *n)
{
    const char *name = ph_node_name(n);
    if (name && *name)
        return host_xstrdup(name);
    const ph_value *o = ph_node_output_count(n) ? ph_node_output(n, 0) : NULL;
    return host_xasprintf("(%s -> %s)", ph_node_op_type(n), o ? ph_value_name(o) : "");
}

static uint64_t fnv(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Op, inputs, outputs and attributes of n, as text. */
static char *node_sig(const ph_node *n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    fprintf(f, "%s:%s(", ph_node_domain(n), ph_node_op_type(n));
    for (size_t i = 0; i < ph_node_input_count(n); i++) {
        const ph_value *v = ph_node_input(n, i);
        fprintf(f, "%s,", v ? ph_value_name(v) : "");
    }
    fputs(")->(", f);
    for (size_t i = 0; i < ph_node_output_count(n); i++) {
        const ph_value *v = ph_node_output(n, i);
        fprintf(f, "%s,", v ? ph_value_name(v) : "");
    }
    fputs(")", f);
    for (size_t i = 0; i < ph_node_attr_count(n); i++) {
        const char *a = ph_node_attr_name(n, i);
        ph_attr_type t = ph_node_attr_type(n, a);
        fprintf(f, " %s:%d=", a, (int)t);
        const int64_t *iv;
        const float *fv;
        ptrdiff_t c;
        switch (t) {
        case PH_ATTR_INT: fprintf(f, "%lld", (long long)ph_node_attr_int(n, a, 0)); break;
        case PH_ATTR_FLOAT: fprintf(f, "%a", (double)ph_node_attr_float(n, a, 0)); break;
        case PH_ATTR_STRING: fprintf(f, "%s", ph_node_attr_string(n, a, "")); break;
        case PH_ATTR_INTS:
            c = ph_node_attr_ints(n, a, &iv);
            for (ptrdiff_t k = 0; k < c; k++)
                fprintf(f, "%lld,", (long long)iv[k]);
            break;
        case PH_ATTR_FLOATS:
            c = ph_node_attr_floats(n, a, &fv);
            for (ptrdiff_t k = 0; k < c; k++)
                fprintf(f, "%a,", (double)fv[k]);
            break;
        case PH_ATTR_TENSOR: {
            const ph_tensor *tt = ph_node_attr_tensor(n, a);
            const void *d = tt ? ph_tensor_data(tt) : NULL;
            size_t nb = tt ? ph_tensor_nbytes(tt) : 0;
            fprintf(f, "%d/%lld/%016llx", tt ? ph_tensor_dtype(tt) : 0,
                    (long long)(tt ? ph_tensor_numel(tt) : 0),
                    (unsigned long long)(d ? fnv(d, nb < 4096 ? nb : 4096) : 0));
            break;
        }
        default: break;
        }
    }
    fclose(f);
    return buf;
}

/* ----------------------------------------------------------- snapshot */

typedef struct snap_entry {
    char *key;
    char *sig;
    char *op;
} snap_entry;

struct host_snapshot {
    snap_entry *e;
    size_t n;
};

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const snap_entry *)a)->key, ((const snap_entry *)b)->key);
}

static const snap_entry *snap_find(const host_snapshot *s, const char *key)
{
    if (!s || !s->n)
        return NULL;
    snap_entry probe = {.key = (char *)key};
    return bsearch(&probe, s->e, s->n, sizeof *s->e, cmp_entry);
}

host_snapshot *host_snapshot_take(ph_graph *g)
{
    node_list l = {0};
    collect(g, &l);
    host_snapshot *s = host_xcalloc(1, sizeof *s);
    s->e = host_xcalloc(l.count + 1, sizeof *s->e);
    s->n = l.count;
    for (size_t i = 0; i < l.count; i++) {
        s->e[i].key = node_key(l.items[i]);
        s->e[i].sig = node_sig(l.items[i]);
        s->e[i].op = host_xstrdup(ph_node_op_type(l.items[i]));
    }
    qsort(s->e, s->n, sizeof *s->e, cmp_entry);
    free(l.items);
    return s;
}

void host_snapshot_free(host_snapshot *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->e[i].key);
        free(s->e[i].sig);
        free(s->e[i].op);
    }
    free(s->e);
    free(s);
}

/* ------------------------------------------------------------ mermaid */

/* text with the characters mermaid would read as markup escaped. */
static void put_label(FILE *f, const char *text)
{
    for (const char *c = text; *c; c++) {
        switch (*c) {
        case '"': fputs("#quot;", f); break;
        case '<': fputs("#lt;", f); break;
        case '>': fputs("#gt;", f); break;
        case '#': fputs("#35;", f); break;
        case '\n': case '\r': fputc(' ', f); break;
        default: fputc(*c, f);
        }
    }
}

typedef struct ptr_index {
    const ph_node *n;
    size_t i;
} ptr_index;

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const ptr_index *)a)->n, y = (uintptr_t)((const ptr_index *)b)->n;
    return x < y ? -1 : x > y;
}

/* Index of n in the node list, or (size_t)-1. */
static size_t index_of(const ptr_index *idx, size_t count, const ph_node *n)
{
    ptr_index probe = {n, 0};
    const ptr_index *hit = n ? bsearch(&probe, idx, count, sizeof *idx, cmp_ptr) : NULL;
    return hit ? hit->i : (size_t)-1;
}

static int named(const host_dump_call *call, const char *key)
{
    for (size_t i = 0; i < call->n_names; i++)
        if (call->names[i] && strcmp(call->names[i], key) == 0)
            return 1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct drawn_values {
    const ph_value *v[MAX_VALUES];
    size_t n;
    size_t skipped;
} drawn_values;

/* The id of value node v ("vK"), drawing it first; -1 when over the cap. */
static long value_node(FILE *f, drawn_values *dv, const ph_value *v, int output)
{
    for (size_t k = 0; k < dv->n; k++)
        if (dv->v[k] == v)
            return (long)k;
    if (dv->n == MAX_VALUES) {
        dv->skipped++;
        return -1;
    }
    dv->v[dv->n] = v;
    fprintf(f, "  v%zu", dv->n);
    /* graph inputs and outputs as stadiums, initializers as cylinders */
    fputs(ph_value_is_initializer(v) && !ph_value_is_graph_input(v) && !output ? "[(\"" : "([\"", f);
    put_label(f, ph_value_name(v));
    if (output)
        fputs(" (output)", f);
    else if (ph_value_is_graph_input(v))
        fputs(" (input)", f);
    fputs(ph_value_is_initializer(v) && !ph_value_is_graph_input(v) && !output ? "\")]" : "\"])", f);
    fputs(":::value\n", f);
    return (long)dv->n++;
}

static void draw_edges(FILE *f, ph_node **nodes, size_t n_nodes, const char *region,
                       const char *focus, const ptr_index *idx, drawn_values *dv)
{
    for (size_t j = 0; j < n_nodes; j++) {
        if (!region[j])
            continue;
        ph_node *n = nodes[j];
        for (size_t i = 0; i < ph_node_input_count(n); i++) {
            const ph_value *v = ph_node_input(n, i);
            if (!v)
                continue;
            size_t p = index_of(idx, n_nodes, ph_value_producer(v));
            if (p != (size_t)-1 && region[p]) {
                fprintf(f, "  n%zu -->|\"", p);
                put_label(f, ph_value_name(v));
                fprintf(f, "\"| n%zu\n", j);
            } else if (focus[j] && p == (size_t)-1) { /* a graph input or initializer */
                long k = value_node(f, dv, v, 0);
                if (k >= 0)
                    fprintf(f, "  v%ld --> n%zu\n", k, j);
            }
        }
        if (!focus[j])
            continue;
        for (size_t o = 0; o < ph_node_output_count(n); o++) {
            const ph_value *v = ph_node_output(n, o);
            if (!v || !ph_value_graph_output_count(v))
                continue;
            long k = value_node(f, dv, v, 1);
            if (k >= 0)
                fprintf(f, "  n%zu --> v%ld\n", j, k);
        }
    }
}

/* The nodes of the current graph that are gone from the snapshot. */
static void draw_removed(FILE *f, const host_snapshot *before, ph_node **nodes, size_t n_nodes)
{
    if (!before || !before->n)
        return;
    char **keys = host_xcalloc(n_nodes + 1, sizeof *keys);
    for (size_t i = 0; i < n_nodes; i++)
        keys[i] = node_key(nodes[i]);
    qsort(keys, n_nodes, sizeof *keys, cmp_str);
    size_t shown = 0, more = 0;
    for (size_t i = 0; i < before->n; i++) {
        const char *key = before->e[i].key;
        if (n_nodes && bsearch(&key, keys, n_nodes, sizeof *keys, cmp_str))
            continue;
        if (shown == MAX_REMOVED) {
            more++;
            continue;
        }
        if (!shown)
            fputs("  subgraph gone [removed by the pass]\n", f);
        fprintf(f, "    r%zu[\"", shown++);
        put_label(f, key);
        fputs("<br/>", f);
        put_label(f, before->e[i].op);
        fputs("\"]:::removed\n", f);
    }
    if (more)
        fprintf(f, "    rmore[\"... %zu more\"]:::removed\n", more);
    if (shown)
        fputs("  end\n", f);
    for (size_t i = 0; i < n_nodes; i++)
        free(keys[i]);
    free(keys);
}

char *host_dump_mermaid(ph_graph *g, const host_snapshot *before, const host_dump_call *call)
{
    node_list l = {0};
    collect(g, &l);
    size_t n = l.count;
    char *focus = host_xcalloc(n + 1, 1), *region = host_xcalloc(n + 1, 1);
    ptr_index *idx = host_xcalloc(n + 1, sizeof *idx);
    for (size_t i = 0; i < n; i++)
        idx[i] = (ptr_index){l.items[i], i};
    qsort(idx, n, sizeof *idx, cmp_ptr);

    /* focus: nodes the pass named, new nodes and changed nodes */
    size_t n_focus = 0, focus_skipped = 0;
    for (size_t i = 0; i < n; i++) {
        char *key = node_key(l.items[i]);
        int hit = named(call, key);
        if (!hit) {
            const snap_entry *e = snap_find(before, key);
            char *sig = e ? node_sig(l.items[i]) : NULL;
            hit = !e || strcmp(e->sig, sig) != 0;
            free(sig);
        }
        free(key);
        if (hit && n_focus == MAX_FOCUS)
            focus_skipped++;
        else if (hit)
            focus[i] = region[i] = 1, n_focus++;
    }
    /* region: the focus and its direct producers and consumers */
    size_t n_region = n_focus, region_skipped = 0;
    for (size_t i = 0; i < n; i++) {
        if (!focus[i])
            continue;
        ph_node *x = l.items[i];
        for (size_t k = 0; k < ph_node_input_count(x); k++) {
            const ph_value *v = ph_node_input(x, k);
            size_t p = v ? index_of(idx, n, ph_value_producer(v)) : (size_t)-1;
            if (p == (size_t)-1 || region[p])
                continue;
            if (n_region == MAX_REGION)
                region_skipped++;
            else
                region[p] = 1, n_region++;
        }
        for (size_t o = 0; o < ph_node_output_count(x); o++) {
            const ph_value *v = ph_node_output(x, o);
            for (size_t u = 0; v && u < ph_value_use_count(v); u++) {
                size_t c = index_of(idx, n, ph_value_use(v, u, NULL));
                if (c == (size_t)-1 || region[c])
                    continue;
                if (n_region == MAX_REGION)
                    region_skipped++;
                else
                    region[c] = 1, n_region++;
            }
        }
    }

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    fputs("flowchart TD\n", f);
    fprintf(f, "  %%%% %03u %s %s", call->seq, call->stage, call->pass);
    if (call->first <= call->last)
        fprintf(f, ": rewrites %llu..%llu", (unsigned long long)call->first,
                (unsigned long long)call->last);
    fprintf(f, "; %zu changed node%s", n_focus + focus_skipped, n_focus + focus_skipped == 1 ? "" : "s");
    if (focus_skipped || region_skipped)
        fprintf(f, " (%zu not drawn)", focus_skipped + region_skipped);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        if (!region[i])
            continue;
        ph_node *x = l.items[i];
        const char *name = ph_node_name(x);
        fprintf(f, "  n%zu[\"", i);
        if (name && *name) {
            put_label(f, name);
            fputs("<br/>", f);
        }
        put_label(f, ph_node_op_type(x));
        if (ph_graph_parent(ph_node_graph(x))) {
            fputs(" in ", f);
            put_label(f, ph_graph_name(ph_node_graph(x)));
        }
        fprintf(f, "\"]%s\n", focus[i] ? ":::changed" : "");
    }
    drawn_values dv = {.n = 0};
    draw_edges(f, l.items, n, region, focus, idx, &dv);
    if (dv.skipped)
        fprintf(f, "  %%%% %zu more graph inputs, initializers and outputs not drawn\n", dv.skipped);
    draw_removed(f, before, l.items, n);
    fputs("  classDef changed fill:#fff3c4,stroke:#c90,stroke-width:2px\n"
          "  classDef removed fill:#eee,stroke:#999,stroke-dasharray:4 3,color:#666\n"
          "  classDef value fill:#e8f1ff,stroke:#69c\n", f);
    fclose(f);
    free(focus);
    free(region);
    free(idx);
    free(l.items);
    return buf;
}

/* --------------------------------------------------------------- files */

int host_dump_prepare(const char *dir, ph_error *err)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return ph_error_set(err, HOST_EXIT_OUTPUT, "--dump-dir %s: not a folder", dir);
        return 0;
    }
    if (mkdir(dir, 0777) != 0)
        return ph_error_set(err, HOST_EXIT_OUTPUT, "--dump-dir %s: %s", dir, strerror(errno));
    return 0;
}

int host_dump_write(const char *dir, ph_model *m, const host_snapshot *before,
                    const host_dump_call *call, ph_error *err)
{
    char *base = host_xasprintf("%s/%03u-%s-%s", dir, call->seq, call->stage, call->pass);
    char *onnx = host_xasprintf("%s.onnx", base), *mmd = host_xasprintf("%s.mmd", base);
    ph_error e = {0};
    double ms;
    int rc = host_model_check(m, call->pass, err); /* a dump loads like any model */
    if (!rc && host_model_save(m, onnx, &ms, &e) != 0)
        rc = ph_error_set(err, HOST_EXIT_OUTPUT, "--dump-dir: %.400s", e.message);
    if (!rc) {
        char *text = host_dump_mermaid(ph_model_graph(m), before, call);
        FILE *f = fopen(mmd, "w");
        int bad = !f;
        if (f) {
            bad |= fputs(text, f) < 0;
            bad |= fclose(f) != 0;
        }
        if (bad)
            rc = ph_error_set(err, HOST_EXIT_OUTPUT, "--dump-dir: %s: %s", mmd, strerror(errno));
        free(text);
    }
    free(base);
    free(onnx);
    free(mmd);
    return rc;
}
