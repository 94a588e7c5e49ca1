/* sdk/src/infer/infer_core.c - the shape inference driver.
 *
 * Full inference walks each graph's nodes in order and asks the operator's
 * family table (infer_*.c) for the output types, which are merged with any
 * declared type and written with the ir.h setters only when they changed.
 *
 * Incremental inference: inference observes the model (phi_observer_add);
 * the IR's change notifications call infer_touch, which
 * queues the node (its main-graph ancestor, for a node inside a body) on the
 * model's dirty list in O(1).  ph_graph_update_shapes drains the list,
 * re-inferring a queued node's queued producers first, and queues the
 * consumers of every output whose type or shape constant changed.
 *
 * Also here: symbols, shape helpers shared by the families, constant-input
 * helpers, and the public queries of shape.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"

/* ================================================================ state */

static const phi_observer_ops infer_observer;

static struct phi_infer_state *state_get(ph_model *m)
{
    if (!m->infer) {
        if (phi_observer_add(m, &infer_observer, NULL))
            return NULL;
        struct phi_infer_state *st = calloc(1, sizeof *st);
        if (!st)
            return NULL;
        st->dirty.prev = st->dirty.next = &st->dirty;
        m->infer = st;
    }
    return m->infer;
}

static void link_unlink(phi_dlink *l)
{
    if (!l->next)
        return;
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = l->next = NULL;
}

#define NODE_OF_LINK(l) ((ph_node *)((char *)(l)-offsetof(ph_node, infer_link)))

void phi_infer_touch(ph_node *n)
{
    if (!n || !n->graph)
        return;
    while (n->graph->parent)
        n = n->graph->parent;
    struct phi_infer_state *st = n->graph->model->infer;
    if (!st || !st->inferred || n->infer_link.next)
        return;
    phi_dlink *l = &n->infer_link;
    l->prev = st->dirty.prev;
    l->next = &st->dirty;
    st->dirty.prev->next = l;
    st->dirty.prev = l;
}

static void infer_node_freed(void *self, ph_node *n) { link_unlink(&n->infer_link); }

static void vinfer_free(struct phi_vinfer *vi)
{
    if (!vi)
        return;
    free(vi->pc_v);
    free(vi->pc_k);
    free(vi);
}

static void infer_value_freed(void *self, ph_value *v)
{
    vinfer_free(v->infer);
    v->infer = NULL;
}

static void infer_graph_freed(void *self, ph_graph *g)
{
    ph_model *m = g->model;
    if (g->parent || !m || m->graph != g || !m->infer)
        return;
    struct phi_infer_state *st = m->infer;
    while (st->dirty.next != &st->dirty)
        link_unlink(st->dirty.next);
    phi_map_free(&st->sym_ids);
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

static uint64_t shape_hash(const phi_shape *s)
{
    uint64_t h = 1469598103934665603ull;
    h = (h ^ (uint64_t)(uint32_t)s->dtype) * 1099511628211ull;
    h = (h ^ (uint64_t)(uint32_t)s->rank) * 1099511628211ull;
    for (int i = 0; i < s->rank; i++)
        h = (h ^ (uint64_t)s->d[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int shapes_grow(phi_shape_table *set)
{
    size_t cap = set->cap ? set->cap * 2 : 64;
    phi_shape **slots = calloc(cap, sizeof *slots);
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

const phi_shape *phi_shape_intern(struct phi_infer_state *st, const phi_shape *s)
{
    phi_shape_table *set = &st->shapes;
    if (2 * (set->count + 1) > set->cap && shapes_grow(set))
        return NULL;
    size_t k = (size_t)shape_hash(s) & (set->cap - 1);
    for (; set->slots[k]; k = (k + 1) & (set->cap - 1))
        if (phi_shape_eq(set->slots[k], s))
            return set->slots[k];
    phi_shape *copy = calloc(1, sizeof *copy);
    if (!copy)
        return NULL;
    copy->dtype = s->dtype;
    copy->rank = s->rank;
    for (int i = 0; i < s->rank; i++)
        copy->d[i] = s->d[i];
    set->slots[k] = copy;
    set->count++;
    return copy;
}

static void infer_node_changed(void *self, ph_node *n) { phi_infer_touch(n); }

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
            !v[k]->infer || !v[k]->infer_fresh || v[k]->infer->pc_n >= 0)
            return 0;
    const phi_shape *a = old->infer->shape, *b = repl->infer->shape;
    if (a->dtype != b->dtype || a->rank != b->rank || a->rank < 0 || a->dtype == PH_DT_UNDEFINED)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

static void infer_input_replaced(void *self, ph_node *n, const ph_value *old, const ph_value *repl)
{
    if (!infers_alike(old, repl))
        phi_infer_touch(n);
}

/* Stateless (self is NULL): the state lives in the model, and values keep
 * their cached types until they are freed, even after the state is gone. */
static const phi_observer_ops infer_observer = {
    .node_changed = infer_node_changed,
    .input_replaced = infer_input_replaced,
    .node_freed = infer_node_freed,
    .value_freed = infer_value_freed,
    .graph_freed = infer_graph_freed,
};

/* ============================================================== symbols */

phi_dim phi_sym(struct phi_infer_state *st, const char *name)
{
    uintptr_t id = (uintptr_t)phi_map_get(&st->sym_ids, name);
    if (id)
        return -1 - (phi_dim)id;
    char *s = phi_strdup(name);
    if (!s || phi_grow((void **)&st->sym_names, &st->cap_syms, st->n_syms + 1, sizeof *st->sym_names)) {
        free(s);
        return PHI_DIM_UNK;
    }
    st->sym_names[st->n_syms++] = s;
    id = st->n_syms;
    if (phi_map_put(&st->sym_ids, s, (void *)id)) {
        st->n_syms--;
        free(s);
        return PHI_DIM_UNK;
    }
    return -1 - (phi_dim)id;
}

const char *phi_sym_name(const struct phi_infer_state *st, phi_dim d)
{
    size_t id = (size_t)(-1 - d);
    return d <= -2 && id <= st->n_syms ? st->sym_names[id - 1] : NULL;
}

/* ============================================================== shapes */

void phi_shape_unknown(phi_shape *s)
{
    s->dtype = PH_DT_UNDEFINED;
    s->rank = -1;
}

void phi_shape_set(phi_shape *s, int dtype, int rank, const phi_dim *d)
{
    s->dtype = dtype;
    s->rank = rank > PHI_MAXRANK ? -1 : rank;
    for (int i = 0; i < s->rank; i++)
        s->d[i] = d ? d[i] : PHI_DIM_UNK;
}

int phi_shape_eq(const phi_shape *a, const phi_shape *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

const char *phi_shape_str(const struct phi_infer_state *st, const phi_shape *s, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "%s", s->dtype ? ph_dtype_name(s->dtype) : "?");
    if (s->rank < 0) {
        if (k < size)
            snprintf(buf + k, size - k, "[...]");
        return buf;
    }
    for (int i = 0; i < s->rank && k < size; i++) {
        const char *sep = i ? "," : "[";
        if (s->d[i] >= 0)
            k += (size_t)snprintf(buf + k, size - k, "%s%lld", sep, (long long)s->d[i]);
        else if (phi_is_sym(s->d[i]))
            k += (size_t)snprintf(buf + k, size - k, "%s%s", sep, phi_sym_name(st, s->d[i]));
        else
            k += (size_t)snprintf(buf + k, size - k, "%s?", sep);
    }
    if (k < size)
        snprintf(buf + k, size - k, s->rank ? "]" : "[]");
    return buf;
}

int64_t phi_shape_numel(const phi_shape *s)
{
    if (s->rank < 0)
        return -1;
    for (int i = 0; i < s->rank; i++)
        if (s->d[i] < 0)
            return -1;
    return phi_dims_numel(s->d, (size_t)s->rank); /* -1 when it overflows */
}

int phi_inf_axis(int64_t a, int rank)
{
    if (a < 0)
        a += rank;
    return a >= 0 && a < rank ? (int)a : -1;
}

int phi_fail(phi_ictx *c, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ph_error_set(c->err, PH_EVERIFY, "node '%s' (%s): %s", ph_node_name(c->n), ph_node_op_type(c->n), msg);
}

int phi_broadcast(phi_ictx *c, const phi_shape *a, const phi_shape *b, phi_shape *out)
{
    if (a->rank < 0 || b->rank < 0) {
        out->rank = -1;
        return 0;
    }
    int r = a->rank > b->rank ? a->rank : b->rank;
    phi_shape res;
    res.rank = r;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        phi_dim da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
        phi_dim d;
        if (da == db)
            d = da;
        else if (da == 1)
            d = db;
        else if (db == 1)
            d = da;
        else if (da >= 0 && db >= 0) {
            char sa[160], sb[160];
            return phi_fail(c, "inputs of shape %s and %s cannot broadcast (dim %d: %lld vs %lld)",
                            phi_shape_str(c->st, a, sa, sizeof sa), phi_shape_str(c->st, b, sb, sizeof sb), i,
                            (long long)da, (long long)db);
        } else if (da > 1)
            d = da;
        else if (db > 1)
            d = db;
        else
            d = PHI_DIM_UNK;
        res.d[i] = d;
    }
    out->rank = r;
    memcpy(out->d, res.d, (size_t)r * sizeof *res.d);
    return 0;
}

phi_dim phi_dim_merge(phi_dim a, phi_dim b, int *clash)
{
    if (a == b)
        return a;
    if (a >= 0 && b >= 0) {
        if (clash)
            *clash = 1;
        return a;
    }
    if (a >= 0)
        return a;
    if (b >= 0)
        return b;
    if (a == PHI_DIM_UNK)
        return b;
    return a;
}

phi_dim phi_dim_join(phi_dim a, phi_dim b) { return a == b ? a : PHI_DIM_UNK; }

phi_dim phi_dim_mul(phi_dim a, phi_dim b)
{
    int64_t p;
    if (a >= 0 && b >= 0)
        return phi_mul_ovf(a, b, &p) ? PHI_DIM_UNK : p;
    if (a == 0 || b == 0)
        return 0;
    if (a == 1)
        return b;
    if (b == 1)
        return a;
    return PHI_DIM_UNK;
}

phi_dim phi_dim_add(phi_dim a, phi_dim b)
{
    int64_t s;
    if (a >= 0 && b >= 0)
        return __builtin_add_overflow(a, b, &s) ? PHI_DIM_UNK : s;
    if (a == 0)
        return b;
    if (b == 0)
        return a;
    return PHI_DIM_UNK;
}

/* ======================================================= value types */

static struct phi_vinfer *vinfer_get(ph_value *v)
{
    if (!v->infer) {
        v->infer = calloc(1, sizeof *v->infer);
        if (v->infer)
            v->infer->pc_n = -1;
        else
            phi_alloc_failed(v->graph ? v->graph->model : NULL);
    }
    return v->infer;
}

void phi_read_type(struct phi_infer_state *st, ph_value *v, phi_shape *s)
{
    if (v->infer && v->infer_fresh) {
        *s = *v->infer->shape;
        return;
    }
    s->dtype = v->dtype;
    s->rank = v->rank > PHI_MAXRANK ? -1 : v->rank;
    for (int i = 0; i < s->rank; i++) {
        if (v->dims[i] >= 0)
            s->d[i] = v->dims[i];
        else if (v->dim_params && v->dim_params[i] && v->dim_params[i][0]) {
            if ((s->d[i] = phi_sym(st, v->dim_params[i])) == PHI_DIM_UNK)
                phi_alloc_failed(v->graph ? v->graph->model : NULL);
        } else
            s->d[i] = PHI_DIM_UNK;
    }
    struct phi_vinfer *vi = vinfer_get(v);
    const phi_shape *shared = vi ? phi_shape_intern(st, s) : NULL;
    if (vi && !shared)
        phi_alloc_failed(v->graph ? v->graph->model : NULL);
    if (shared) {
        vi->shape = shared;
        vi->decl = s->dtype || s->rank >= 0 ? shared : NULL;
        vi->by_infer = 0;
        v->infer_fresh = 1;
    }
}

void phi_value_pc(const ph_value *v, phi_pc *pc)
{
    pc->n = -1;
    if (!v || !v->infer || v->infer->pc_n < 0)
        return;
    pc->n = v->infer->pc_n;
    memcpy(pc->v, v->infer->pc_v, (size_t)pc->n * sizeof *pc->v);
    memcpy(pc->k, v->infer->pc_k, (size_t)pc->n * sizeof *pc->k);
}

static int pc_same(const struct phi_vinfer *vi, const phi_pc *pc)
{
    int n = pc ? pc->n : -1;
    int have = vi ? vi->pc_n : -1;
    if (n != have)
        return 0;
    if (n <= 0)
        return 1;
    return memcmp(vi->pc_v, pc->v, (size_t)n * sizeof *pc->v) == 0 &&
           memcmp(vi->pc_k, pc->k, (size_t)n * sizeof *pc->k) == 0;
}

static int pc_store(struct phi_vinfer *vi, const phi_pc *pc)
{
    free(vi->pc_v);
    free(vi->pc_k);
    vi->pc_v = NULL;
    vi->pc_k = NULL;
    vi->pc_n = -1;
    if (!pc || pc->n < 0)
        return 0;
    size_t n = (size_t)pc->n;
    vi->pc_v = malloc((n ? n : 1) * sizeof *vi->pc_v);
    vi->pc_k = malloc(n ? n : 1);
    if (!vi->pc_v || !vi->pc_k)
        return PH_ENOMEM;
    memcpy(vi->pc_v, pc->v, n * sizeof *pc->v);
    memcpy(vi->pc_k, pc->k, n);
    vi->pc_n = pc->n;
    return 0;
}

static int store_type(struct phi_infer_state *st, ph_value *v, const phi_shape *s)
{
    int64_t dims[PHI_MAXRANK];
    for (int i = 0; i < s->rank; i++)
        dims[i] = s->d[i] >= 0 ? s->d[i] : -1;
    int rc = ph_value_set_type(v, s->dtype, s->rank, dims);
    for (int i = 0; !rc && i < s->rank; i++)
        if (phi_is_sym(s->d[i]))
            rc = ph_value_set_dim_param(v, i, phi_sym_name(st, s->d[i]));
    return rc;
}

int phi_write_type(struct phi_infer_state *st, ph_value *v, const phi_shape *sin, const phi_pc *pc,
                   const ph_node *n, ph_error *err)
{
    phi_shape cur, s = *sin;
    phi_read_type(st, v, &cur);
    struct phi_vinfer *vi = v->infer;
    /* Merge with the declared type: on the first inference of any value,
     * and always for graph outputs (their declared type is the interface). */
    int first = !(vi && v->infer_fresh && vi->by_infer);
    phi_shape decl = cur;
    int declared = first ? (cur.dtype || cur.rank >= 0) : (v->n_output_refs && vi->decl);
    if (!first && vi->decl)
        decl = *vi->decl;
    if (declared) {
        phi_shape cur_saved = cur;
        cur = decl;
        char a[200], b[200];
        int bad = (s.dtype && cur.dtype && s.dtype != cur.dtype) ||
                  (s.rank >= 0 && cur.rank >= 0 && s.rank != cur.rank);
        for (int i = 0; !bad && s.rank >= 0 && i < s.rank && cur.rank >= 0; i++)
            if (s.d[i] >= 0 && cur.d[i] >= 0 && s.d[i] != cur.d[i])
                bad = 1;
        if (bad)
            return ph_error_set(err, PH_EVERIFY, "node '%s' (%s): output '%s' is declared %s but inferred as %s",
                                ph_node_name(n), ph_node_op_type(n), v->name, phi_shape_str(st, &cur, a, sizeof a),
                                phi_shape_str(st, sin, b, sizeof b));
        if (!s.dtype)
            s.dtype = cur.dtype;
        if (s.rank < 0) {
            s.rank = cur.rank;
            memcpy(s.d, cur.d, sizeof s.d);
        } else if (cur.rank >= 0) {
            for (int i = 0; i < s.rank; i++) {
                if (s.d[i] >= 0)
                    continue;
                if (cur.d[i] >= 0 || s.d[i] == PHI_DIM_UNK || v->n_output_refs)
                    s.d[i] = cur.d[i] == PHI_DIM_UNK ? s.d[i] : cur.d[i];
            }
        }
        cur = cur_saved;
    }
    int same = phi_shape_eq(&s, &cur) && pc_same(vi, pc);
    if (same) {
        if (vi)
            vi->by_infer = 1;
        return 0;
    }
    if (!phi_shape_eq(&s, &cur) && store_type(st, v, &s))
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    vi = vinfer_get(v);
    const phi_shape *shared = vi ? phi_shape_intern(st, &s) : NULL;
    if (!shared || pc_store(vi, pc))
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    vi->shape = shared;
    vi->by_infer = 1;
    v->infer_fresh = 1;
    st->stats.values_changed++;
    phi_notify_type_changed(v); /* also when only the shape constant changed */
    return 1;
}

/* ==================================================== constant inputs */

const ph_tensor *phi_in_tensor(phi_ictx *c, size_t i)
{
    const ph_value *v = i < c->nin ? c->n->inputs[i] : NULL;
    if (!v)
        return NULL;
    const ph_tensor *t = ph_value_const(v);
    if (t)
        return t;
    if (v->producer && v->producer->op == PH_OP_Constant)
        return ph_node_attr_tensor(v->producer, "value");
    return NULL;
}

static int dtype_is_int(int dt)
{
    switch (dt) {
    case PH_DT_INT8: case PH_DT_INT16: case PH_DT_INT32: case PH_DT_INT64:
    case PH_DT_UINT8: case PH_DT_UINT16: case PH_DT_UINT32: case PH_DT_UINT64: case PH_DT_BOOL:
        return 1;
    default:
        return 0;
    }
}

/* Element k of a tensor's data (which may be unaligned: raw bytes mapped
 * from the file), as int64 or double. */
#define LOAD(T, data, k) (memcpy(&tmp_##T, (const char *)(data) + (k) * sizeof(T), sizeof(T)), tmp_##T)

static int64_t tensor_int_at(const void *data, int dt, size_t k)
{
    int8_t tmp_int8_t;
    int16_t tmp_int16_t;
    int32_t tmp_int32_t;
    int64_t tmp_int64_t;
    uint8_t tmp_uint8_t;
    uint16_t tmp_uint16_t;
    uint32_t tmp_uint32_t;
    uint64_t tmp_uint64_t;
    switch (dt) {
    case PH_DT_INT8: return LOAD(int8_t, data, k);
    case PH_DT_INT16: return LOAD(int16_t, data, k);
    case PH_DT_INT32: return LOAD(int32_t, data, k);
    case PH_DT_INT64: return LOAD(int64_t, data, k);
    case PH_DT_UINT8: case PH_DT_BOOL: return LOAD(uint8_t, data, k);
    case PH_DT_UINT16: return LOAD(uint16_t, data, k);
    case PH_DT_UINT32: return LOAD(uint32_t, data, k);
    case PH_DT_UINT64: return (int64_t)LOAD(uint64_t, data, k);
    default: return 0;
    }
}

static double tensor_double_at(const void *data, int dt, size_t k)
{
    float tmp_float;
    double tmp_double;
    uint16_t tmp_uint16_t;
    switch (dt) {
    case PH_DT_FLOAT: return LOAD(float, data, k);
    case PH_DT_DOUBLE: return LOAD(double, data, k);
    case PH_DT_FLOAT16: return phi_half_to_float(LOAD(uint16_t, data, k));
    case PH_DT_BFLOAT16: return phi_bf16_to_float(LOAD(uint16_t, data, k));
    default: return (double)tensor_int_at(data, dt, k);
    }
}
#undef LOAD

int phi_pc_from_tensor(const ph_tensor *t, phi_pc *pc)
{
    pc->n = -1;
    if (!t || !dtype_is_int(ph_tensor_dtype(t)) || ph_tensor_rank(t) > 1)
        return 0;
    int64_t numel = ph_tensor_numel(t);
    const void *data = ph_tensor_data(t);
    if (numel < 0 || numel > PHI_PC_MAX || (!data && numel))
        return 0;
    pc->n = (int)numel;
    for (int64_t k = 0; k < numel; k++) {
        pc->v[k] = tensor_int_at(data, ph_tensor_dtype(t), (size_t)k);
        pc->k[k] = PHI_PC_NUM;
    }
    return 1;
}

const phi_pc *phi_in_pc(phi_ictx *c, size_t i)
{
    const ph_value *v = i < c->nin ? c->n->inputs[i] : NULL;
    if (!v)
        return NULL;
    phi_pc *pc = &c->in_pc_buf[i < 6 ? i : 5];
    phi_value_pc(v, pc);
    if (pc->n >= 0)
        return pc;
    if (phi_pc_from_tensor(phi_in_tensor(c, i), pc))
        return pc;
    return NULL;
}

int phi_in_ints(phi_ictx *c, size_t i, int64_t *out, int max)
{
    const phi_pc *pc = phi_in_pc(c, i);
    if (!pc || pc->n > max)
        return -1;
    for (int k = 0; k < pc->n; k++) {
        if (pc->k[k] != PHI_PC_NUM)
            return -1;
        out[k] = pc->v[k];
    }
    return pc->n;
}

int phi_in_doubles(phi_ictx *c, size_t i, double *out, int max)
{
    const ph_tensor *t = phi_in_tensor(c, i);
    if (t) {
        int64_t numel = ph_tensor_numel(t);
        const void *data = ph_tensor_data(t);
        if (numel < 0 || numel > max || (!data && numel) || !ph_dtype_size(ph_tensor_dtype(t)))
            return -1;
        for (int64_t k = 0; k < numel; k++)
            out[k] = tensor_double_at(data, ph_tensor_dtype(t), (size_t)k);
        return (int)numel;
    }
    const ph_value *v = i < c->nin ? c->n->inputs[i] : NULL;
    if (v && v->producer && v->producer->op == PH_OP_Constant) {
        const ph_node *p = v->producer;
        const float *fs;
        ptrdiff_t nf = ph_node_attr_floats(p, "value_floats", &fs);
        if (nf >= 0 && nf <= max) {
            for (ptrdiff_t k = 0; k < nf; k++)
                out[k] = fs[k];
            return (int)nf;
        }
        if (ph_node_attr_type(p, "value_float") == PH_ATTR_FLOAT && max >= 1) {
            out[0] = ph_node_attr_float(p, "value_float", 0);
            return 1;
        }
    }
    int64_t iv[PHI_PC_MAX];
    int k = phi_in_ints(c, i, iv, max < PHI_PC_MAX ? max : PHI_PC_MAX);
    for (int j = 0; j < k; j++)
        out[j] = (double)iv[j];
    return k;
}

int phi_ints_attr_or_input(phi_ictx *c, const char *attr, size_t in_idx, int64_t from_opset, int64_t *out,
                           int max)
{
    const int64_t *vals;
    ptrdiff_t k = attr ? ph_node_attr_ints(c->n, attr, &vals) : -1;
    if (k >= 0 && (c->opset < from_opset || !phi_has_in(c, in_idx))) {
        if (k > max)
            return -2;
        if (k > 0) /* an empty list may come with no array */
            memcpy(out, vals, (size_t)k * sizeof *out);
        return (int)k;
    }
    if (in_idx == (size_t)-1 || !phi_has_in(c, in_idx))
        return -1;
    int r = phi_in_ints(c, in_idx, out, max);
    return r >= 0 ? r : -2;
}

phi_pc *phi_out_pc(phi_ictx *c, size_t i)
{
    if (i >= c->nout)
        return NULL;
    if (!c->out_pc[i] && !(c->out_pc[i] = malloc(sizeof(phi_pc))))
        phi_alloc_failed(c->n->graph->model);
    if (c->out_pc[i])
        c->out_pc[i]->n = 0;
    return c->out_pc[i];
}

/* =========================================================== dispatch */

static phi_infer_fn op_fn(ph_op op)
{
    phi_infer_fn f;
    if ((f = phi_infer_elementwise_fn(op)) || (f = phi_infer_shape_fn(op)) || (f = phi_infer_nn_fn(op)) ||
        (f = phi_infer_reduce_fn(op)) || (f = phi_infer_control_fn(op)) || (f = phi_infer_const_fn(op)))
        return f;
    return NULL;
}

/* Infer one node.  Returns 1 if an output changed, 0 if not, <0 on error. */
static int infer_node(struct phi_infer_state *st, ph_node *n, int64_t opset, ph_error *err)
{
    phi_infer_fn fn = op_fn(n->op);
    st->stats.nodes_inferred++;
    if (!fn) {
        st->stats.nodes_unknown++;
        return 0;
    }
    phi_shape in_small[6], out_small[4];
    phi_pc *pc_small[4] = {0};
    phi_ictx c;
    c.st = st;
    c.n = n;
    c.opset = opset;
    c.err = err;
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
            phi_read_type(st, n->inputs[i], &c.in[i]);
        else
            phi_shape_unknown(&c.in[i]);
    }
    for (size_t i = 0; i < c.nout; i++)
        phi_shape_unknown(&c.out[i]);
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
        int r = phi_write_type(st, v, &c.out[i], c.out_pc[i], n, err);
        if (r < 0) {
            rc = r;
            goto done;
        }
        rc |= r;
    }
done:
    if (c.out_pc)
        for (size_t i = 0; i < c.nout; i++)
            free(c.out_pc[i]);
    if (c.in != in_small)
        free(c.in);
    if (c.out != out_small)
        free(c.out);
    if (c.out_pc != pc_small)
        free(c.out_pc);
    return rc;
}

int phi_infer_graph(struct phi_infer_state *st, ph_graph *g, ph_error *err)
{
    int64_t opset = ph_model_opset(g->model, "");
    for (ph_node *n = g->first; n; n = n->next) {
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
    struct phi_infer_state *st = state_get(g->model);
    if (!st)
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    memset(&st->stats, 0, sizeof st->stats);
    if (!g->parent) {
        double pos = 0;
        for (ph_node *n = g->first; n; n = n->next)
            n->infer_pos = ++pos;
    }
    int rc = phi_infer_graph(st, g, err);
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
    if (phi_grow((void **)&h->a, &h->cap, h->n + 1, sizeof *h->a))
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
    if (phi_grow((void **)stack, cap, 1, sizeof **stack))
        return PH_ENOMEM;
    (*stack)[ns++] = n;
    while (ns) {
        ph_node *top = (*stack)[ns - 1];
        const ph_node *miss;
        double p = pos_above_producers(top, &miss);
        if (miss) {
            if (phi_grow((void **)stack, cap, ns + 1, sizeof **stack))
                return PH_ENOMEM;
            (*stack)[ns++] = (ph_node *)miss;
            continue;
        }
        top->infer_pos = p;
        ns--;
    }
    return 0;
}

static void link_tail(struct phi_infer_state *st, ph_node *n)
{
    phi_dlink *l = &n->infer_link;
    l->prev = st->dirty.prev;
    l->next = &st->dirty;
    st->dirty.prev->next = l;
    st->dirty.prev = l;
}

static int update_shapes(ph_graph *g, ph_error *err)
{
    ph_model *m = g->model;
    struct phi_infer_state *st = m->infer;
    if (!st || !st->inferred)
        return infer_shapes(m->graph, err);
    memset(&st->stats, 0, sizeof st->stats);
    int64_t opset = ph_model_opset(m, "");
    heap h = {0};
    ph_node **stack = NULL;
    size_t cap = 0;
    int rc = 0;
    /* queued nodes stay on the dirty list (it marks them) until popped */
    for (phi_dlink *l = st->dirty.next; l != &st->dirty && !rc; l = l->next) {
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
            phi_infer_touch(n); /* retry next time */
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
            if (decl < 0 && param && !(params[i] = phi_strdup(param))) {
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
        phi_infer_touch(v->uses[u].node);
}

PH_API void ph_node_mark_changed(ph_node *n) { phi_infer_touch(n); }

PH_API int ph_value_shape_known(const ph_value *v)
{
    if (!v || v->rank < 0)
        return 0;
    for (int i = 0; i < v->rank; i++)
        if (v->dims[i] < 0)
            return 0;
    return 1;
}

static int dim_eq(const ph_value *a, int i, const ph_value *b, int j)
{
    if (a->dims[i] >= 0 || b->dims[j] >= 0)
        return a->dims[i] == b->dims[j];
    const char *pa = ph_value_dim_param(a, i), *pb = ph_value_dim_param(b, j);
    return pa && pb && *pa && strcmp(pa, pb) == 0;
}

PH_API int ph_value_same_shape(const ph_value *a, const ph_value *b)
{
    if (!a || !b || a->rank < 0 || a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (!dim_eq(a, i, b, i))
            return 0;
    return 1;
}

PH_API int ph_value_dim_equal(const ph_value *a, int i, const ph_value *b, int j)
{
    if (!a || !b || a->rank < 0 || b->rank < 0)
        return 0;
    if (i < 0)
        i += a->rank;
    if (j < 0)
        j += b->rank;
    if (i < 0 || i >= a->rank || j < 0 || j >= b->rank)
        return 0;
    return dim_eq(a, i, b, j);
}

PH_API int64_t ph_value_numel(const ph_value *v)
{
    if (!ph_value_shape_known(v))
        return -1;
    return phi_dims_numel(v->dims, (size_t)v->rank); /* -1 when it overflows */
}

/* The tracked shape constant of v: inferred, or from a constant tensor. */
static const struct phi_vinfer *tracked(const ph_value *v)
{
    return v && v->infer && v->infer->pc_n >= 0 ? v->infer : NULL;
}

PH_API ptrdiff_t ph_value_shape_const_len(const ph_value *v)
{
    const struct phi_vinfer *vi = tracked(v);
    return vi ? vi->pc_n : -1;
}

PH_API ph_shape_const_kind ph_value_shape_const_at(const ph_value *v, size_t i, int64_t *val, const char **param)
{
    const struct phi_vinfer *vi = tracked(v);
    if (!vi || i >= (size_t)vi->pc_n)
        return PH_SC_UNKNOWN;
    if (vi->pc_k[i] == PHI_PC_NUM) {
        if (val)
            *val = vi->pc_v[i];
        return PH_SC_KNOWN;
    }
    if (vi->pc_k[i] == PHI_PC_SYM && v->graph->model->infer) {
        if (param)
            *param = phi_sym_name(v->graph->model->infer, vi->pc_v[i]);
        return PH_SC_SYMBOLIC;
    }
    return PH_SC_UNKNOWN;
}

PH_API ptrdiff_t ph_value_shape_const(const ph_value *v, const int64_t **vals)
{
    const struct phi_vinfer *vi = tracked(v);
    if (!vi)
        return -1;
    for (int i = 0; i < vi->pc_n; i++)
        if (vi->pc_k[i] != PHI_PC_NUM)
            return -1;
    if (vals)
        *vals = vi->pc_v;
    return vi->pc_n;
}

PH_API void ph_model_infer_stats(const ph_model *m, ph_infer_stats *out)
{
    if (m->infer)
        *out = m->infer->stats;
    else
        memset(out, 0, sizeof *out);
}

static int write_vi(ph_graph *g, phi_map *have, ph_value *v)
{
    if (!v || v->dead || (!v->dtype && v->rank < 0) || v->n_output_refs || v->is_input)
        return 0;
    Onnx__ValueInfoProto *vi = phi_map_get(have, v->name);
    if (vi)
        return phi_value_info_refresh(vi, v) ? PH_ENOMEM : 1;
    if (phi_grow((void **)&g->value_info, &g->cap_value_info, g->n_value_info + 1, sizeof *g->value_info))
        return PH_ENOMEM;
    vi = phi_value_info_new(v);
    if (!vi)
        return PH_ENOMEM;
    g->value_info[g->n_value_info++] = vi;
    return phi_map_put(have, vi->name, vi) ? PH_ENOMEM : 1;
}

PH_API int ph_graph_write_value_info(ph_graph *g, ph_error *err)
{
    phi_map have = {0};
    int count = 0, rc = 0;
    for (size_t i = 0; i < g->n_value_info && !rc; i++)
        if (g->value_info[i]->name)
            rc = phi_map_put(&have, g->value_info[i]->name, g->value_info[i]);
    for (ph_node *n = g->first; n && rc >= 0; n = n->next) {
        if (n->removed)
            continue;
        for (size_t i = 0; i < n->n_outputs && rc >= 0; i++) {
            rc = write_vi(g, &have, n->outputs[i]);
            count += rc > 0;
        }
        for (size_t s = 0; s < n->n_subgraphs && rc >= 0; s++) {
            rc = ph_graph_write_value_info(n->subgraphs[s].graph, err);
            count += rc > 0 ? rc : 0;
        }
    }
    phi_map_free(&have);
    if (rc < 0)
        return rc == PH_ENOMEM ? ph_error_set(err, PH_ENOMEM, "out of memory") : rc;
    return count;
}
