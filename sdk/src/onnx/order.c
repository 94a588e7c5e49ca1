/* sdk/src/onnx/order.c - a loaded node list that is out of order.
 *
 * ONNX requires a graph's nodes in topological order, yet converters do
 * not always keep to it (an fp16 converter that appends its Cast nodes at
 * the end of the list), and ONNX Runtime sorts such a list itself.  The
 * loader (load.c) calls onnx_model_sort_loaded once the graph is
 * built and before it is verified: a list that is acyclic but out of order
 * is sorted (stable: nodes already in order keep their places) and the
 * model remembers how many nodes read a value listed after them
 * (ph_model_load_reordered); a real cycle stays an error that names two
 * nodes on it.
 *
 * Cost: one walk of every graph when the list is in order; the sort
 * (ph_graph_toposort) and the count otherwise. */
#include <stdio.h>
#include <stdlib.h>

#include "order.h"

typedef struct early {
    size_t pos;  /* mark of the node being looked at */
    int late;    /* it reads a value of a node listed after it */
} early;

static void note_late(ph_node *dep, void *ctx)
{
    early *e = ctx;
    e->late |= dep->mark > e->pos;
}

/* Nodes of g (and, recursively, of its bodies) that read a value produced
 * by a node listed after them in the same graph.  Uses the nodes' marks. */
static size_t count_early_readers(const ph_graph *g)
{
    size_t pos = 0, count = 0;
    for (ph_node *n = g->first; n; n = n->next)
        n->mark = ++pos;
    for (ph_node *n = g->first; n; n = n->next) {
        early e = {.pos = n->mark, .late = 0};
        ir_node_deps(n, g, note_late, &e);
        count += (size_t)e.late;
    }
    for (ph_node *n = g->first; n; n = n->next)
        for (size_t s = 0; s < ir_node_n_subgraphs(n); s++)
            count += count_early_readers(ir_node_subgraphs(n)[s].graph);
    return count;
}

/* ------------------------------------------------------------ a cycle */

typedef struct dep_list {
    ph_node **d;
    size_t n, cap;
    int oom;
} dep_list;

static void add_dep(ph_node *dep, void *ctx)
{
    dep_list *l = ctx;
    if (ir_grow((void **)&l->d, &l->cap, l->n + 1, sizeof *l->d)) {
        l->oom = 1;
        return;
    }
    l->d[l->n++] = dep;
}

typedef struct frame {
    ph_node *node;
    dep_list deps;
    size_t next;
} frame;

/* An edge that closes a cycle of g: *from reads a value of *to.  A
 * depth-first walk over what each node reads, with an explicit stack of
 * frames (a chain may be long); mark 0 = new, 1 = on the path, 2 = done.
 * 0, or PH_ENOMEM. */
static int find_cycle(const ph_graph *g, ph_node **from, ph_node **to)
{
    frame *frames = NULL;
    size_t nf = 0, capf = 0;
    int rc = 0;
    *from = *to = NULL;
    for (ph_node *n = g->first; n; n = n->next)
        n->mark = 0;
    for (ph_node *root = g->first; root && !*from && !rc; root = root->next) {
        for (ph_node *push = root->mark ? NULL : root; push || nf;) {
            if (push) {
                if (ir_grow((void **)&frames, &capf, nf + 1, sizeof *frames)) {
                    rc = PH_ENOMEM;
                    break;
                }
                frames[nf] = (frame){push, {0}, 0};
                push->mark = 1;
                ir_node_deps(push, g, add_dep, &frames[nf].deps);
                nf++;
                push = NULL;
            }
            frame *f = &frames[nf - 1];
            if (f->deps.oom) {
                rc = PH_ENOMEM;
                break;
            }
            if (f->next == f->deps.n) {
                f->node->mark = 2;
                free(f->deps.d);
                nf--;
                continue;
            }
            ph_node *d = f->deps.d[f->next++];
            if (d->mark == 1) {
                *from = f->node;
                *to = d;
                break;
            }
            if (d->mark == 0)
                push = d;
        }
        for (size_t i = 0; i < nf; i++)
            free(frames[i].deps.d);
        nf = 0;
    }
    free(frames);
    return rc;
}

/* The value of `to` that `from` (or a body of it) reads. */
static const ph_value *read_value(const ph_node *from, const ph_node *to)
{
    for (size_t i = 0; i < from->n_inputs; i++)
        if (from->inputs[i] && from->inputs[i]->producer == to)
            return from->inputs[i];
    for (size_t s = 0; s < ir_node_n_subgraphs(from); s++)
        for (const ph_node *k = ir_node_subgraphs(from)[s].graph->first; k; k = k->next) {
            const ph_value *v = read_value(k, to);
            if (v)
                return v;
        }
    return NULL;
}

/* The first graph (g or a body under it) whose nodes form a cycle. */
static int cycle_error(const ph_graph *g, ph_error *err)
{
    ph_node *from, *to;
    if (find_cycle(g, &from, &to))
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    if (from) {
        const ph_value *v = read_value(from, to);
        return ph_error_set(err, PH_EPARSE,
                            "graph '%s': the nodes form a cycle: node '%s' (%s) reads '%s' of node "
                            "'%s' (%s), which depends on it", ph_graph_name(g), ph_node_name(from),
                            ph_node_op_type(from), v ? ph_value_name(v) : "?", ph_node_name(to),
                            ph_node_op_type(to));
    }
    for (ph_node *n = g->first; n; n = n->next)
        for (size_t s = 0; s < ir_node_n_subgraphs(n); s++) {
            int rc = cycle_error(ir_node_subgraphs(n)[s].graph, err);
            if (rc)
                return rc;
        }
    return 0;
}

int onnx_model_sort_loaded(ph_model *m, ph_error *err)
{
    m->load_reordered = count_early_readers(m->graph);
    if (!m->load_reordered)
        return 0;
    m->order_dirty = 1;
    int rc = ph_graph_toposort(m->graph);
    if (rc == PH_EVERIFY) {
        rc = cycle_error(m->graph, err);
        return rc ? rc : ph_error_set(err, PH_EPARSE, "graph '%s': the nodes form a cycle",
                                      ph_graph_name(m->graph));
    }
    if (rc)
        return ph_error_set(err, rc, "sorting the node list: %s", ph_strerror(rc));
    m->order_dirty = 1; /* bodies are sorted too; let the first toposort confirm it */
    return 0;
}

PH_API size_t ph_model_load_reordered(const ph_model *m)
{
    return m ? m->load_reordered : 0;
}
