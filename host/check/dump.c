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

/* ------------------------------------------------------------- region */

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

static size_t add_box(host_region *r, size_t *cap, host_region_box b)
{
    host_xgrow(&r->boxes, cap, r->n_boxes + 1, sizeof *r->boxes);
    r->boxes[r->n_boxes] = b;
    return r->n_boxes++;
}

static void add_edge(host_region *r, size_t *cap, size_t from, size_t to, const char *label)
{
    host_xgrow(&r->edges, cap, r->n_edges + 1, sizeof *r->edges);
    r->edges[r->n_edges++] = (host_region_edge){from, to, label ? host_xstrdup(label) : NULL};
}

/* The box of graph input, initializer or output v (drawing it first); -1
 * when over the cap. */
static long value_box(host_region *r, size_t *cap, const ph_value **drawn, size_t *n_drawn,
                      size_t *first_box, const ph_value *v, int output)
{
    for (size_t k = 0; k < *n_drawn; k++)
        if (drawn[k] == v)
            return (long)first_box[k];
    if (*n_drawn == MAX_VALUES) {
        r->values_skipped++;
        return -1;
    }
    int kind = output ? HOST_BOX_OUTPUT
               : ph_value_is_initializer(v) && !ph_value_is_graph_input(v) ? HOST_BOX_INITIALIZER
                                                                           : HOST_BOX_INPUT;
    size_t b = add_box(r, cap, (host_region_box){.name = host_xstrdup(ph_value_name(v)), .kind = kind});
    drawn[*n_drawn] = v;
    first_box[(*n_drawn)++] = b;
    return (long)b;
}

/* The nodes of the current graph that are gone from the snapshot. */
static void take_removed(host_region *r, const host_snapshot *before, ph_node **nodes, size_t n_nodes)
{
    if (!before || !before->n)
        return;
    char **keys = host_xcalloc(n_nodes + 1, sizeof *keys);
    for (size_t i = 0; i < n_nodes; i++)
        keys[i] = node_key(nodes[i]);
    qsort(keys, n_nodes, sizeof *keys, cmp_str);
    r->removed = host_xcalloc(MAX_REMOVED + 1, sizeof *r->removed);
    for (size_t i = 0; i < before->n; i++) {
        const char *key = before->e[i].key;
        if (n_nodes && bsearch(&key, keys, n_nodes, sizeof *keys, cmp_str))
            continue;
        if (r->n_removed == MAX_REMOVED) {
            r->more_removed++;
            continue;
        }
        r->removed[r->n_removed++] = (host_region_box){.name = host_xstrdup(key),
                                                       .op = host_xstrdup(before->e[i].op),
                                                       .kind = HOST_BOX_NODE};
    }
    for (size_t i = 0; i < n_nodes; i++)
        free(keys[i]);
    free(keys);
}

host_region *host_region_take(ph_graph *g, const host_snapshot *before, const host_dump_call *call)
{
    node_list l = {0};
    collect(g, &l);
    size_t n = l.count;
    char *focus = host_xcalloc(n + 1, 1), *region = host_xcalloc(n + 1, 1);
    ptr_index *idx = host_xcalloc(n + 1, sizeof *idx);
    for (size_t i = 0; i < n; i++)
        idx[i] = (ptr_index){l.items[i], i};
    qsort(idx, n, sizeof *idx, cmp_ptr);
    host_region *r = host_xcalloc(1, sizeof *r);

    /* focus: nodes the pass named, new nodes and changed nodes */
    size_t n_focus = 0;
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
            r->not_drawn++;
        else if (hit)
            focus[i] = region[i] = 1, n_focus++;
    }
    r->n_changed = n_focus + r->not_drawn;
    /* region: the focus and its direct producers and consumers */
    size_t n_region = n_focus;
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
                r->not_drawn++;
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
                    r->not_drawn++;
                else
                    region[c] = 1, n_region++;
            }
        }
    }
    /* boxes for the region's nodes, in graph order, then edges and values */
    size_t cap_boxes = 0, cap_edges = 0;
    size_t *box_of = host_xcalloc(n + 1, sizeof *box_of);
    for (size_t i = 0; i < n; i++) {
        if (!region[i])
            continue;
        ph_node *x = l.items[i];
        const char *name = ph_node_name(x);
        ph_graph *xg = ph_node_graph(x);
        box_of[i] = add_box(r, &cap_boxes,
                            (host_region_box){.name = host_xstrdup(name ? name : ""),
                                              .op = host_xstrdup(ph_node_op_type(x)),
                                              .graph = ph_graph_parent(xg) ? host_xstrdup(ph_graph_name(xg)) : NULL,
                                              .kind = HOST_BOX_NODE, .changed = focus[i]});
    }
    const ph_value *drawn[MAX_VALUES];
    size_t first_box[MAX_VALUES], n_drawn = 0;
    for (size_t j = 0; j < n; j++) {
        if (!region[j])
            continue;
        ph_node *x = l.items[j];
        for (size_t i = 0; i < ph_node_input_count(x); i++) {
            const ph_value *v = ph_node_input(x, i);
            if (!v)
                continue;
            size_t p = index_of(idx, n, ph_value_producer(v));
            if (p != (size_t)-1 && region[p]) {
                add_edge(r, &cap_edges, box_of[p], box_of[j], ph_value_name(v));
            } else if (focus[j] && p == (size_t)-1) { /* a graph input or initializer */
                long k = value_box(r, &cap_boxes, drawn, &n_drawn, first_box, v, 0);
                if (k >= 0)
                    add_edge(r, &cap_edges, (size_t)k, box_of[j], NULL);
            }
        }
        if (!focus[j])
            continue;
        for (size_t o = 0; o < ph_node_output_count(x); o++) {
            const ph_value *v = ph_node_output(x, o);
            if (!v || !ph_value_graph_output_count(v))
                continue;
            long k = value_box(r, &cap_boxes, drawn, &n_drawn, first_box, v, 1);
            if (k >= 0)
                add_edge(r, &cap_edges, box_of[j], (size_t)k, NULL);
        }
    }
    take_removed(r, before, l.items, n);
    free(box_of);
    free(focus);
    free(region);
    free(idx);
    free(l.items);
    return r;
}

void host_region_free(host_region *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_boxes; i++) {
        free(r->boxes[i].name);
        free(r->boxes[i].op);
        free(r->boxes[i].graph);
    }
    for (size_t i = 0; i < r->n_edges; i++)
        free(r->edges[i].label);
    for (size_t i = 0; i < r->n_removed; i++) {
        free(r->removed[i].name);
        free(r->removed[i].op);
    }
    free(r->boxes);
    free(r->edges);
    free(r->removed);
    free(r);
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

char *host_dump_mermaid(ph_graph *g, const host_snapshot *before, const host_dump_call *call)
{
    host_region *r = host_region_take(g, before, call);
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
    fprintf(f, "; %zu changed node%s", r->n_changed, r->n_changed == 1 ? "" : "s");
    if (r->not_drawn)
        fprintf(f, " (%zu not drawn)", r->not_drawn);
    fputc('\n', f);
    for (size_t i = 0; i < r->n_boxes; i++) {
        const host_region_box *b = &r->boxes[i];
        if (b->kind != HOST_BOX_NODE) {
            int cyl = b->kind == HOST_BOX_INITIALIZER;
            fprintf(f, "  b%zu%s", i, cyl ? "[(\"" : "([\"");
            put_label(f, b->name);
            fputs(b->kind == HOST_BOX_OUTPUT ? " (output)" : b->kind == HOST_BOX_INPUT ? " (input)" : "", f);
            fprintf(f, "%s:::value\n", cyl ? "\")]" : "\"])");
            continue;
        }
        fprintf(f, "  b%zu[\"", i);
        if (b->name[0]) {
            put_label(f, b->name);
            fputs("<br/>", f);
        }
        put_label(f, b->op);
        if (b->graph) {
            fputs(" in ", f);
            put_label(f, b->graph);
        }
        fprintf(f, "\"]%s\n", b->changed ? ":::changed" : "");
    }
    for (size_t i = 0; i < r->n_edges; i++) {
        const host_region_edge *e = &r->edges[i];
        fprintf(f, "  b%zu -->", e->from);
        if (e->label) {
            fputs("|\"", f);
            put_label(f, e->label);
            fputs("\"|", f);
        }
        fprintf(f, " b%zu\n", e->to);
    }
    if (r->values_skipped)
        fprintf(f, "  %%%% %zu more graph inputs, initializers and outputs not drawn\n", r->values_skipped);
    if (r->n_removed) {
        fputs("  subgraph gone [removed by the pass]\n", f);
        for (size_t i = 0; i < r->n_removed; i++) {
            fprintf(f, "    r%zu[\"", i);
            put_label(f, r->removed[i].name);
            fputs("<br/>", f);
            put_label(f, r->removed[i].op);
            fputs("\"]:::removed\n", f);
        }
        if (r->more_removed)
            fprintf(f, "    rmore[\"... %zu more\"]:::removed\n", r->more_removed);
        fputs("  end\n", f);
    }
    fputs("  classDef changed fill:#fff3c4,stroke:#c90,stroke-width:2px\n"
          "  classDef removed fill:#eee,stroke:#999,stroke-dasharray:4 3,color:#666\n"
          "  classDef value fill:#e8f1ff,stroke:#69c\n", f);
    fclose(f);
    host_region_free(r);
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
