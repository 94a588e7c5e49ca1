/* sdk/src/infer/infer_core.c - the shape inference driver.
 *
 * Full inference walks each graph's nodes in order and asks the operator's
 * table (infer_table.c) for the output types, which are merged with any
 * declared type and written with the ir.h setters only when they changed.
 *
 * Incremental inference: inference observes the model (ir_observer_add);
 * the IR's change notifications call infer_touch, which
 * queues the node (its main-graph ancestor, for a node inside a body) on the
 * model's dirty list in O(1).  ph_graph_update_shapes drains the list,
 * re-inferring a queued node's queued producers first, and queues the
 * consumers of every output whose type or shape constant changed.
 *
 * The files of infer/ call downward only: infer_util.c (the helpers) <- the
 * family files (infer_const.c first, the others use its shape-constant
 * arithmetic) <- infer_table.c (op -> family) <- this driver.  The control
 * family infers bodies through infer_ictx.infer_graph, which the driver sets.
 * infer_query.c holds the public queries of shape.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"

/* ================================================================ state */

static const ir_observer_ops infer_observer;

static struct infer_state *state_get(ph_model *m)
{
    if (!m->infer) {
        if (ir_observer_add(m, &infer_observer, NULL))
            return NULL;
        struct infer_state *st = calloc(1, sizeof *st);
        if (!st)
            return NULL;
        st->dirty.prev = st->dirty.next = &st->dirty;
        m->infer = st;
    }
    return m->infer;
}

static void link_unlink(ir_dlink *l)
{
    if (!l->next)
        return;
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = l->next = NULL;
}

#define NODE_OF_LINK(l) ((ph_node *)((char *)(l)-offsetof(ph_node, infer_link)))

void infer_touch(ph_node *n)
{
    if (!n || !n->graph)
        return;
    while (n->graph->parent)
        n = n->graph->parent;
    struct infer_state *st = n->graph->model->infer;
    if (!st || !st->inferred || n->infer_link.next)
        return;
    ir_dlink *l = &n->infer_link;
    l->prev = st->dirty.prev;
    l->next = &st->dirty;
    st->dirty.prev->next = l;
    st->dirty.prev = l;
}

static void infer_node_freed(void *self, ph_node *n) { link_unlink(&n->infer_link); }

static void infer_value_freed(void *self, ph_value *v)
{
    free(v->infer.pc);
    v->infer.pc = NULL;
}

static void infer_graph_freed(void *self, ph_graph *g)
{
    ph_model *m = g->model;
    if (g->parent || !m || m->graph != g || !m->infer)
        return;
    struct infer_state *st = m->infer;
    while (st->dirty.next != &st->dirty)
        link_unlink(st->dirty.next);
    ir_map_free(&st->sym_ids);
    for (size_t i = 0; i < st->n_syms; i++)
        free(st->sym_names[i]);
    free(st->sym_names);
    for (size_t i = 0; i < st->shapes.cap; i++)
        free(st->shapes.slots[i]);
    free(st->shapes.slots);
    free(st);
    m->infer = NULL;
}

/* ----------------------------------------------------- interned types */

static uint64_t shape_hash(const infer_shape *s)
{
    uint64_t h = 1469598103934665603ull;
    h = (h ^ (uint64_t)(uint32_t)s->dtype) * 1099511628211ull;
    h = (h ^ (uint64_t)(uint32_t)s->rank) * 1099511628211ull;
    for (int i = 0; i < s->rank; i++)
        h = (h ^ (uint64_t)s->d[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int shapes_grow(infer_shape_table *set)
{
    size_t cap = set->cap ? set->cap * 2 : 64;
    infer_shape **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return PH_ENOMEM;
    for (size_t i = 0; i < set->cap; i++) {
        if (!set->slots[i])
            continue;
        size_t k = (size_t)shape_hash(set->slots[i]) & (cap - 1);
        while (slots[k])
            k = (k + 1) & (cap - 1);
        slots[k] = set->slots[i];
    }
    free(set->slots);
    set->slots = slots;
    set->cap = cap;
    return 0;
}

static const infer_shape *shape_recent(infer_shape_table *set, const infer_shape *e)
{
    if (set->recent[0] != e) {
        set->recent[1] = set->recent[0];
        set->recent[0] = e;
    }
    return e;
}

const infer_shape *infer_shape_intern(struct infer_state *st, const infer_shape *s)
{
    infer_shape_table *set = &st->shapes;
    if (set->recent[0] && infer_shape_eq(set->recent[0], s))
        return set->recent[0];
    if (set->recent[1] && infer_shape_eq(set->recent[1], s))
        return shape_recent(set, set->recent[1]);
    if (2 * (set->count + 1) > set->cap && shapes_grow(set))
        return NULL;
    size_t k = (size_t)shape_hash(s) & (set->cap - 1);
    for (; set->slots[k]; k = (k + 1) & (set->cap - 1))
        if (infer_shape_eq(set->slots[k], s))
            return shape_recent(set, set->slots[k]);
    infer_shape_entry *entry = calloc(1, sizeof *entry); /* freed as its first member */
    if (!entry)
        return NULL;
    infer_shape *copy = &entry->shape;
    copy->dtype = s->dtype;
    copy->rank = s->rank;
    for (int i = 0; i < s->rank; i++)
        copy->d[i] = s->d[i];
    set->slots[k] = copy;
    set->count++;
    return shape_recent(set, copy);
}

static void infer_node_changed(void *self, ph_node *n) { infer_touch(n); }

/* 1 when inference of a reader sees nothing different in repl than in old:
 * both computed by a node other than Constant (no initializer, no value a
 * reader could read as a constant), both with their inferred type current
 * and equal (dtype, rank, every dim, symbolic ones by id), and neither with
 * a partial constant.  Then re-inferring the reader would give the same
 * outputs, and it is not queued: removing an Identity or a no-op Pool on a
 * large graph would otherwise re-infer every reader. */
static int infers_alike(const ph_value *old, const ph_value *repl)
{
    const ph_value *v[2] = {old, repl};
    for (int k = 0; k < 2; k++)
        if (!v[k]->producer || v[k]->producer->op == PH_OP_Constant || v[k]->tensor || v[k]->is_input ||
            !v[k]->infer_fresh || v[k]->infer.pc)
            return 0;
    const infer_shape *a = old->infer.shape, *b = repl->infer.shape;
    if (a->dtype != b->dtype || a->rank != b->rank || a->rank < 0 || a->dtype == PH_DT_UNDEFINED)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

/* 1 when n reads only its inputs' types (MatMul, Gemm: never a constant's
 * values) and repl is an initializer of old's type, every dim static: a
 * folded weight in place of the node that computed it.  Re-inferring n
 * would give the same outputs; constant folding would otherwise re-infer
 * the reader of every value it folds. */
static int typed_alike(const ph_node *n, const ph_value *old, const ph_value *repl)
{
    if ((n->op != PH_OP_MatMul && n->op != PH_OP_Gemm) || !repl->tensor || repl->producer || repl->is_input ||
        !old->infer_fresh || old->infer.pc)
        return 0;
    const infer_shape *a = old->infer.shape;
    if (repl->dtype == PH_DT_UNDEFINED || a->dtype != repl->dtype || a->rank != repl->rank || a->rank < 0)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (repl->dims[i] < 0 || a->d[i] != repl->dims[i])
            return 0;
    return 1;
}

static void infer_input_replaced(void *self, ph_node *n, const ph_value *old, const ph_value *repl)
{
    if (!infers_alike(old, repl) && !typed_alike(n, old, repl))
        infer_touch(n);
}

/* Stateless (self is NULL): the state lives in the model, and values keep
 * their cached types until they are freed, even after the state is gone. */
static const ir_observer_ops infer_observer = {
    .node_changed = infer_node_changed,
    .input_replaced = infer_input_replaced,
    .node_freed = infer_node_freed,
    .value_freed = infer_value_freed,
    .graph_freed = infer_graph_freed,
};
/* Infer one node.  Returns 1 if an output changed, 0 if not, <0 on error. */
static int infer_node(struct infer_state *st, ph_node *n, int64_t opset, ph_error *err)
{
    infer_fn fn = infer_op_fn(n->op);
    st->stats.nodes_inferred++;
    if (!fn) {
        st->stats.nodes_unknown++;
        return 0;
    }
    infer_shape in_small[6], out_small[4];
    infer_pc *pc_small[4] = {0};
    infer_ictx c;
    c.st = st;
    c.n = n;
    c.opset = opset;
    c.err = err;
    c.infer_graph = infer_graph;
    c.nin = n->n_inputs;
    c.nout = n->n_outputs;
    c.in = c.nin <= 6 ? in_small : malloc(c.nin * sizeof *c.in);
    c.out = c.nout <= 4 ? out_small : malloc(c.nout * sizeof *c.out);
    c.out_pc = c.nout <= 4 ? pc_small : calloc(c.nout, sizeof *c.out_pc);
    int rc = 0;
    if (!c.in || !c.out || !c.out_pc) {
        rc = ph_error_set(err, PH_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < c.nin; i++) {
        if (n->inputs[i])
            infer_read_type(st, n->inputs[i], &c.in[i]);
        else
            infer_shape_unknown(&c.in[i]);
    }
    for (size_t i = 0; i < c.nout; i++)
        infer_shape_unknown(&c.out[i]);
    rc = fn(&c);
    if (rc < 0)
        goto done;
    rc = 0;
    for (size_t i = 0; i < c.nout; i++) {
        ph_value *v = n->outputs[i];
        if (!v)
            continue;
        if (c.out_pc[i] && c.out_pc[i]->n < 0) {
            free(c.out_pc[i]);
            c.out_pc[i] = NULL;
        }
        int r = infer_write_type(st, v, &c.out[i], c.out_pc[i], n, err);
        if (r < 0) {
            rc = r;
            goto done;
        }
        rc |= r;
    }
done:
    if (c.out_pc)
        for (size_t i = 0; i < c.nout; i++)
            if (c.out_pc[i]) /* most outputs carry no partial constant */
                free(c.out_pc[i]);
    if (c.in != in_small)
        free(c.in);
    if (c.out != out_small)
        free(c.out);
    if (c.out_pc != pc_small)
        free(c.out_pc);
    return rc;
}

int infer_graph(struct infer_state *st, ph_graph *g, ph_error *err)
{
    int64_t opset = ph_model_opset(g->model, "");
    double pos = 0;
    for (ph_node *n = g->first; n; n = n->next) {
        if (!g->parent) /* the main graph's positions for later updates (read by updates only) */
            n->infer_pos = ++pos;
        if (n->removed)
            continue;
        int rc = infer_node(st, n, opset, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* rc, or PH_ENOMEM when an allocation failed (and was absorbed) since
 * the count was 'before': a result that depends on memory is no result. */
static int absorbed_failures(const ph_model *m, uint64_t before, int rc, ph_error *err)
{
    if (rc >= 0 && m->alloc_failures != before)
        return ph_error_set(err, PH_ENOMEM, "shape inference: out of memory");
    return rc;
}

static int infer_shapes(ph_graph *g, ph_error *err);
static int update_shapes(ph_graph *g, ph_error *err);

PH_API int ph_graph_infer_shapes(ph_graph *g, ph_error *err)
{
    uint64_t before = g->model->alloc_failures;
    return absorbed_failures(g->model, before, infer_shapes(g, err), err);
}

PH_API int ph_graph_update_shapes(ph_graph *g, ph_error *err)
{
    uint64_t before = g->model->alloc_failures;
    return absorbed_failures(g->model, before, update_shapes(g, err), err);
}

static int infer_shapes(ph_graph *g, ph_error *err)
{
    struct infer_state *st = state_get(g->model);
    if (!st)
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    memset(&st->stats, 0, sizeof st->stats);
    int rc = infer_graph(st, g, err); /* numbers the main graph's nodes as it goes */
    if (!g->parent) {
        while (st->dirty.next != &st->dirty)
            link_unlink(st->dirty.next);
        st->inferred = rc == 0;
    }
    return rc;
}

/* Incremental order: main-graph nodes carry a position (their index at the
 * last full inference; a node made since gets just above its producers),
 * and the update pops queued nodes lowest position first from a binary
 * heap, so a node is re-inferred after every changed producer and normally
 * once.  A position found stale (a producer not below it) is recomputed
 * and the node re-queued. */
typedef struct heap {
    ph_node **a;
    size_t n, cap;
} heap;

static int heap_push(heap *h, ph_node *x)
{
    if (ir_grow((void **)&h->a, &h->cap, h->n + 1, sizeof *h->a))
        return PH_ENOMEM;
    size_t i = h->n++;
    while (i && h->a[(i - 1) / 2]->infer_pos > x->infer_pos) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = x;
    return 0;
}

static ph_node *heap_pop(heap *h)
{
    ph_node *top = h->a[0], *x = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->a[c + 1]->infer_pos < h->a[c]->infer_pos)
            c++;
        if (h->a[c]->infer_pos >= x->infer_pos)
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n)
        h->a[i] = x;
    return top;
}

/* Position just above n's producers; 0 if some producer has none yet. */
static double pos_above_producers(const ph_node *n, const ph_node **missing)
{
    double p = 0;
    *missing = NULL;
    for (size_t i = 0; i < n->n_inputs; i++) {
        const ph_value *v = n->inputs[i];
        const ph_node *q = v ? v->producer : NULL;
        if (!q || q->graph != n->graph)
            continue;
        if (q->infer_pos <= 0) {
            *missing = q;
            return 0;
        }
        if (q->infer_pos > p)
            p = q->infer_pos;
    }
    return p + 1e-6;
}

/* Give n (and producers made since the last full inference) a position. */
static int ensure_pos(ph_node *n, ph_node ***stack, size_t *cap)
{
    if (n->infer_pos > 0)
        return 0;
    size_t ns = 0;
    if (ir_grow((void **)stack, cap, 1, sizeof **stack))
        return PH_ENOMEM;
    (*stack)[ns++] = n;
    while (ns) {
        ph_node *top = (*stack)[ns - 1];
        const ph_node *miss;
        double p = pos_above_producers(top, &miss);
        if (miss) {
            if (ir_grow((void **)stack, cap, ns + 1, sizeof **stack))
                return PH_ENOMEM;
            (*stack)[ns++] = (ph_node *)miss;
            continue;
        }
        top->infer_pos = p;
        ns--;
    }
    return 0;
}

static void link_tail(struct infer_state *st, ph_node *n)
{
    ir_dlink *l = &n->infer_link;
    l->prev = st->dirty.prev;
    l->next = &st->dirty;
    st->dirty.prev->next = l;
    st->dirty.prev = l;
}

static int update_shapes(ph_graph *g, ph_error *err)
{
    ph_model *m = g->model;
    struct infer_state *st = m->infer;
    if (!st || !st->inferred)
        return infer_shapes(m->graph, err);
    memset(&st->stats, 0, sizeof st->stats);
    int64_t opset = ph_model_opset(m, "");
    heap h = {0};
    ph_node **stack = NULL;
    size_t cap = 0;
    int rc = 0;
    /* queued nodes stay on the dirty list (it marks them) until popped */
    for (ir_dlink *l = st->dirty.next; l != &st->dirty && !rc; l = l->next) {
        ph_node *n = NODE_OF_LINK(l);
        rc = ensure_pos(n, &stack, &cap);
        if (!rc)
            rc = heap_push(&h, n);
    }
    while (!rc && h.n) {
        ph_node *n = heap_pop(&h);
        if (!n->infer_link.next)
            continue;
        if (n->removed) {
            link_unlink(&n->infer_link);
            continue;
        }
        const ph_node *miss;
        double p = pos_above_producers(n, &miss);
        if (!miss && p > n->infer_pos) { /* stale position: retry later in order */
            n->infer_pos = p;
            rc = heap_push(&h, n);
            continue;
        }
        link_unlink(&n->infer_link);
        int r = infer_node(st, n, opset, err);
        if (r < 0) {
            rc = r;
            infer_touch(n); /* retry next time */
            break;
        }
        if (!r)
            continue;
        for (size_t i = 0; i < n->n_outputs && !rc; i++) {
            ph_value *v = n->outputs[i];
            for (size_t u = 0; v && u < v->n_uses && !rc; u++) {
                ph_node *c = v->uses[u].node;
                while (c->graph->parent)
                    c = c->graph->parent;
                if (c->infer_link.next || c->removed)
                    continue;
                link_tail(st, c);
                rc = ensure_pos(c, &stack, &cap);
                if (!rc)
                    rc = heap_push(&h, c);
            }
        }
    }
    if (rc == PH_ENOMEM)
        ph_error_set(err, PH_ENOMEM, "out of memory");
    free(h.a);
    free(stack);
    if (rc)
        st->inferred = 0;
    return rc;
}
/* ========================================================= public API */

PH_API int ph_graph_set_input_shape(ph_graph *g, const char *input_name, int rank, const int64_t *dims,
                                    ph_error *err)
{
    ph_value *v = NULL;
    for (size_t i = 0; i < g->n_inputs && !v; i++)
        if (strcmp(g->inputs[i]->name, input_name) == 0)
            v = g->inputs[i];
    if (!v)
        return ph_error_set(err, PH_ENOTFOUND, "graph '%s' has no input '%s'", ph_graph_name(g), input_name);
    if (rank < 0 || rank > 64)
        return ph_error_set(err, PH_EINVAL, "input '%s': bad rank %d", input_name, rank);
    if (v->rank >= 0 && v->rank != rank)
        return ph_error_set(err, PH_EINVAL, "input '%s' has rank %d in the model, the given shape has %d",
                            input_name, v->rank, rank);
    int64_t nd[64] = {0};
    char *params[64];
    for (int i = 0; i < rank; i++) {
        int64_t decl = v->rank >= 0 ? v->dims[i] : -1;
        if (dims[i] >= 0 && decl >= 0 && decl != dims[i])
            return ph_error_set(err, PH_EINVAL, "input '%s': dim %d is %lld in the model, the given shape has %lld",
                                input_name, i, (long long)decl, (long long)dims[i]);
    }
    for (int i = 0; i < rank; i++) {
        int64_t decl = v->rank >= 0 ? v->dims[i] : -1;
        params[i] = NULL;
        if (dims[i] >= 0) {
            nd[i] = dims[i];
        } else {
            nd[i] = decl;
            const char *param = v->rank >= 0 ? ph_value_dim_param(v, i) : NULL;
            if (decl < 0 && param && !(params[i] = ir_strdup(param))) {
                for (int k = 0; k < i; k++)
                    free(params[k]);
                return ph_error_set(err, PH_ENOMEM, "out of memory");
            }
        }
    }
    int rc = ph_value_set_type(v, v->dtype, rank, nd);
    for (int i = 0; i < rank; i++) {
        if (!rc && params[i])
            rc = ph_value_set_dim_param(v, i, params[i]);
        free(params[i]);
    }
    if (rc)
        return ph_error_set(err, rc, "out of memory");
    ph_value_mark_changed(v);
    return 0;
}

PH_API void ph_value_mark_changed(ph_value *v)
{
    for (size_t u = 0; u < v->n_uses; u++)
        infer_touch(v->uses[u].node);
}

PH_API void ph_node_mark_changed(ph_node *n) { infer_touch(n); }
