/* sdk/src/pattern/changes.c - what changed in a model since a pass's previous
 * call (ph_ctx_changed_nodes).
 *
 * The model's change log (pattern/changelog.c, kept for the rewrite
 * driver) lists each node touched by a mutation.  Each pass gets its own
 * reader of it, kept in the context beside the pass's memo word: the
 * model and the log it read (the log's birth tells a new log at a reused
 * address), how far it read, and the model's count of absorbed
 * allocation failures then (a failed append to the log is one of them). */
#include <stdlib.h>

#include "internal.h"
#include "pass/pass_internal.h"
#include "pattern/pattern.h"

typedef struct log_reader {
    const ph_model *model;
    uint64_t birth;
    size_t pos;
    uint64_t alloc_failures;
} log_reader;

PH_API int ph_ctx_changed_nodes(ph_ctx *ctx, ph_model *m, ph_node ***nodes, size_t *n)
{
    *nodes = NULL;
    *n = 0;
    void **slot = ctx && m ? ctx_pass_changes_slot(ctx) : NULL;
    if (!slot)
        return m ? PH_ENOMEM : PH_EINVAL;
    if (!*slot && !(*slot = calloc(1, sizeof(log_reader)))) {
        ir_alloc_failed(m); /* the caller walks everything; the run still fails */
        return PH_ENOMEM;
    }
    log_reader *r = *slot;
    struct pat_changelog *log = pat_log_get(m); /* observes from now on if new */
    if (!log) {
        r->model = NULL;
        return PH_ENOMEM;
    }
    /* (a reader whose position the log dropped looks at everything) */
    int known = r->model == m && r->birth == log->birth && r->pos >= log->base && r->pos <= log->n &&
                r->alloc_failures == m->alloc_failures;
    size_t from = r->pos, end = log->n;
    /* From here on a node touched again gets an entry at or after end,
     * even one logged (and not yet read by anyone) before. */
    if (end > log->sealed)
        log->sealed = end;
    r->model = m;
    r->birth = log->birth;
    r->pos = end;
    r->alloc_failures = m->alloc_failures;
    if (!known)
        return 0;
    size_t live = 0;
    for (size_t i = from; i < end; i++)
        live += pat_log_at(log, i) != NULL;
    ph_node **out = live ? ph_ctx_alloc(ctx, live * sizeof *out) : NULL;
    if (live && !out) {
        r->model = NULL; /* the next call looks at everything too */
        return PH_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = from; i < end; i++) {
        ph_node *e = pat_log_at(log, i);
        if (e && !e->removed)
            out[k++] = e;
    }
    *nodes = out;
    *n = k;
    return 1;
}

/* ------------------------------------------------------------ node heap */

struct ph_node_heap {
    ph_node **v;
    size_t n, cap;
    int latest_first;
    const ph_node *last; /* the node popped last, NULL before the first */
    ph_node **held;      /* readers held by ph_node_heap_hold_readers */
    size_t n_held, cap_held;
};

PH_API ph_node_heap *ph_node_heap_new(int latest_first)
{
    ph_node_heap *h = calloc(1, sizeof *h);
    if (h)
        h->latest_first = latest_first;
    return h;
}

PH_API void ph_node_heap_free(ph_node_heap *h)
{
    if (!h)
        return;
    free(h->v);
    free(h->held);
    free(h);
}

/* a goes out before b */
static int heap_before(const ph_node_heap *h, const ph_node *a, const ph_node *b)
{
    return h->latest_first ? a->order > b->order : a->order < b->order;
}

PH_API int ph_node_heap_push(ph_node_heap *h, ph_node *n)
{
    if (!n || n->removed || (h->last && (n->graph != h->last->graph || !heap_before(h, h->last, n))))
        return 0; /* gone, of another graph, or where the heap has passed */
    if (ir_grow((void **)&h->v, &h->cap, h->n + 1, sizeof *h->v))
        return PH_ENOMEM;
    size_t i = h->n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!heap_before(h, n, h->v[up]))
            break;
        h->v[i] = h->v[up];
        i = up;
    }
    h->v[i] = n;
    return 0;
}

static ph_node *heap_take(ph_node_heap *h)
{
    ph_node *top = h->v[0], *x = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && heap_before(h, h->v[c + 1], h->v[c]))
            c++;
        if (!heap_before(h, h->v[c], x))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = x;
    return top;
}

PH_API int ph_node_heap_hold_readers(ph_node_heap *h, const ph_node *n)
{
    h->n_held = 0;
    for (size_t j = 0; j < n->n_outputs; j++) {
        const ph_value *o = n->outputs[j];
        for (size_t u = 0; o && u < o->n_uses; u++) {
            if (ir_grow((void **)&h->held, &h->cap_held, h->n_held + 1, sizeof *h->held))
                return PH_ENOMEM;
            h->held[h->n_held++] = o->uses[u].node;
        }
    }
    return 0;
}

PH_API int ph_node_heap_push_held(ph_node_heap *h)
{
    int rc = 0;
    for (size_t i = 0; i < h->n_held && !rc; i++)
        rc = ph_node_heap_push(h, h->held[i]);
    h->n_held = 0;
    return rc;
}

PH_API ph_node *ph_node_heap_peek(ph_node_heap *h)
{
    while (h->n && (h->v[0] == h->last || h->v[0]->removed))
        heap_take(h); /* pushed twice, or removed since: never popped */
    return h->n ? h->v[0] : NULL;
}

PH_API ph_node *ph_node_heap_pop(ph_node_heap *h)
{
    while (h->n) {
        ph_node *n = heap_take(h);
        if (n == h->last || n->removed)
            continue; /* pushed twice, or removed since */
        h->last = n;
        return n;
    }
    return NULL;
}

/* ------------------------------------------------ dead code, near changes */

PH_API int ph_graph_remove_dead_near(ph_graph *g, ph_node *const *nodes, size_t n_nodes, ph_dead_gate gate,
                                     void *user)
{
    /* bodies (also empty ones, whose initializers only the full sweep
     * looks at), or a quarter of the graph or more: the walk along the list
     * costs less than the heap over scattered nodes */
    if (!g || g->model->graph != g || g->model->bodies_made || ph_model_node_count(g->model) != g->n_nodes ||
        n_nodes >= g->n_nodes / 4)
        return ph_graph_remove_dead_gated(g, gate, user);
    ph_node_heap *h = ph_node_heap_new(1);
    if (!h)
        return PH_ENOMEM;
    int rc = 0, removed = 0, stopped = 0;
    for (size_t i = 0; i < n_nodes && !rc; i++)
        if (nodes[i]->graph == g)
            rc = ph_node_heap_push(h, nodes[i]);
    for (ph_node *n; !rc && (n = ph_node_heap_pop(h));) {
        if (!ir_node_outputs_dead(n))
            continue;
        if (gate && !gate(user, n, NULL)) {
            stopped = 1;
            break;
        }
        for (size_t i = 0; i < n->n_inputs && !rc; i++)
            if (n->inputs[i] && n->inputs[i]->producer)
                rc = ph_node_heap_push(h, n->inputs[i]->producer);
        if (!rc) {
            ph_node_remove(n);
            removed++;
        }
    }
    ph_node_heap_free(h);
    if (rc)
        return rc;
    for (size_t i = 0; i < g->n_inits && !stopped; i++) {
        ph_value *v = g->inits[i];
        if (!v || v->is_input || v->n_uses || v->n_output_refs || !v->tensor || v->producer)
            continue;
        if (gate && !gate(user, NULL, v)) {
            stopped = 1;
            break;
        }
        int r = ph_value_prune(v);
        if (r < 0)
            return r;
        removed += r;
    }
    return removed;
}

PH_API int ph_node_before(const ph_node *a, const ph_node *b)
{
    return a && b && a->graph == b->graph && a->order < b->order;
}

PH_API size_t ph_model_op_count(const ph_model *m, ph_op op)
{
    return m && op > PH_OP_UNKNOWN && op < PH_OP__COUNT ? m->op_count[op] : 0;
}
