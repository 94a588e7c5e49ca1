/* sdk/src/ir/graph.c - graphs, nodes, values and their use lists.
 *
 * Every node input slot has one entry in its value's use array, and the slot
 * remembers where that entry is (use_pos), so adding, moving and dropping a
 * use is O(1) and the two sides cannot drift apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------ uses */

/* Room for need uses of v: 1, 2, 4, ... (most values have one reader). */
static int value_reserve_uses(ph_value *v, size_t need)
{
    if (need <= v->cap_uses)
        return 0;
    size_t cap = v->cap_uses ? v->cap_uses : 1;
    while (cap < need)
        cap *= 2;
    if (cap > UINT32_MAX)
        return PH_ENOMEM;
    ir_use *uses = realloc(v->uses, cap * sizeof *uses);
    if (!uses)
        return PH_ENOMEM;
    v->uses = uses;
    v->cap_uses = (uint32_t)cap;
    return 0;
}

/* v is not dead (every caller checks: a dead value's uses field links the
 * list of values to free). */
static inline void add_use_reserved(ph_value *v, ph_node *n, uint32_t index)
{
    v->uses[v->n_uses] = (ir_use){n, index};
    n->use_pos[index] = (uint32_t)v->n_uses;
    v->n_uses++;
}

int ir_add_use(ph_value *v, ph_node *n, uint32_t index)
{
    if (value_reserve_uses(v, (size_t)v->n_uses + 1))
        return PH_ENOMEM;
    add_use_reserved(v, n, index);
    ir_notify_uses_changed(v);
    return 0;
}

/* Drop the use entry of n's input slot `index` (the slot keeps its pointer). */
void ir_drop_use(ph_node *n, size_t index)
{
    ph_value *v = n->inputs[index];
    if (!v)
        return;
    size_t pos = n->use_pos[index];
    ir_use last = v->uses[--v->n_uses];
    if (pos != v->n_uses) {
        v->uses[pos] = last;
        last.node->use_pos[last.index] = (uint32_t)pos;
    }
    ir_notify_uses_changed(v);
}

int ir_in_scope(const ph_value *v, const ph_graph *g)
{
    for (; g; g = g->parent ? g->parent->graph : NULL)
        if (v->graph == g)
            return 1;
    return 0;
}

/* ---------------------------------------------------------------- values */

/* A value named name: copied, or taken as it is when in_arena (the model's
 * arena holds it). */
static ph_value *value_new(ph_graph *g, char *name, int in_arena)
{
    ph_model *m = g->model;
    ph_value *v = calloc(1, sizeof *v);
    if (!v || !(v->name = in_arena ? name : ir_strdup(name))) {
        free(v);
        return NULL;
    }
    v->graph = g;
    v->rank = -1;
    if (ir_names_add(&m->value_names, v, 1)) { /* taken, or out of memory */
        if (!in_arena)
            free(v->name);
        free(v);
        return NULL;
    }
    return v;
}

ph_value *ir_value_new(ph_graph *g, const char *name) { return value_new(g, (char *)name, 0); }

ph_value *ir_value_new_in_arena(ph_graph *g, char *name) { return value_new(g, name, 1); }

ph_value *ir_graph_value(const ph_graph *g, const char *name)
{
    ph_value *v = ir_names_get(&g->model->value_names, name);
    return v && v->graph == g ? v : NULL;
}

static void value_clear_type(ph_value *v)
{
    for (int i = 0; i < v->rank && v->dim_params; i++)
        free(v->dim_params[i]);
    free(v->dim_params);
    v->dim_params = NULL;
    v->dims = NULL;
    v->rank = -1;
}

/* v's dims: d[0, r), interned (dim_params comes with the first symbolic
 * dim). */
static int value_set_dims(ph_value *v, const int64_t *d, size_t r)
{
    ph_model *m = v->graph ? v->graph->model : NULL;
    if (!(v->dims = ir_dims_intern(m, d, r))) {
        ir_alloc_failed(m);
        return PH_ENOMEM;
    }
    return 0;
}

/* v's dim_params array (all NULL when new), or NULL when out of memory. */
static char **value_dim_params(ph_value *v)
{
    if (!v->dim_params && !(v->dim_params = calloc(v->rank > 0 ? (size_t)v->rank : 1, sizeof *v->dim_params)))
        ir_alloc_failed(v->graph ? v->graph->model : NULL);
    return v->dim_params;
}

/* m: the model v belonged to (v's graph may be gone already) */
static void value_free(ph_model *m, ph_value *v)
{
    if (!v->dead) /* a body's value freed with its node, or an out-of-memory path */
        ir_names_del(&m->value_names, v);
    ir_notify_value_freed(m, v);
    value_clear_type(v);
    ph_tensor_free(v->tensor);
    if (!v->dead) /* a dead value's array went when it was buried */
        free(v->uses);
    if (!ir_arena_owns(m->arena, v->name))
        free(v->name);
    free(v);
}

/* Take v (which has no uses: every caller sees to it) out of the name
 * maps and mark it dead; freed at collection.  Its uses array goes now:
 * the list of values to free takes its place. */
static void value_bury(ph_value *v)
{
    ph_model *m = v->graph->model;
    ir_names_del(&m->value_names, v);
    v->dead = 1;
    free(v->uses);
    v->n_uses = v->cap_uses = 0;
    v->grave_next = m->grave_values;
    m->grave_values = v;
}

void ir_value_bury(ph_value *v) { value_bury(v); }

void ir_value_parse_type(ph_value *v, const Onnx__TypeProto *tp)
{
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return;
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    value_clear_type(v);
    v->dtype = tt->has_elem_type ? tt->elem_type : PH_DT_UNDEFINED;
    if (!tt->shape)
        return;
    size_t r = tt->shape->n_dim;
    int64_t small[16], *dims = r <= 16 ? small : malloc(r * sizeof *dims);
    if (!dims) {
        ir_alloc_failed(v->graph ? v->graph->model : NULL);
        return;
    }
    for (size_t i = 0; i < r; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        dims[i] = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? d->dim_value : -1;
    }
    int rc = value_set_dims(v, dims, r);
    if (dims != small)
        free(dims);
    if (rc)
        return;
    v->rank = (int)r;
    for (size_t i = 0; i < r; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param &&
                 value_dim_params(v) && !(v->dim_params[i] = ir_strdup(d->dim_param)))
            ir_alloc_failed(v->graph ? v->graph->model : NULL);
    }
}

/* A ValueInfoProto describing v's known type (used for new graph inputs). */
Onnx__ValueInfoProto *ir_value_info_new(const ph_value *v)
{
    Onnx__ValueInfoProto *vi = malloc(sizeof *vi);
    Onnx__TypeProto *tp = malloc(sizeof *tp);
    Onnx__TypeProto__Tensor *tt = malloc(sizeof *tt);
    Onnx__TensorShapeProto *sp = v->rank >= 0 ? malloc(sizeof *sp) : NULL;
    if (!vi || !tp || !tt || (v->rank >= 0 && !sp))
        goto fail;
    onnx__value_info_proto__init(vi);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    vi->name = ir_strdup(v->name);
    vi->type = tp;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    if (v->dtype) {
        tt->has_elem_type = 1;
        tt->elem_type = v->dtype;
    }
    if (sp) {
        onnx__tensor_shape_proto__init(sp);
        tt->shape = sp;
        sp->dim = calloc(v->rank ? (size_t)v->rank : 1, sizeof *sp->dim);
        if (!sp->dim)
            goto fail_tree;
        for (int i = 0; i < v->rank; i++) {
            Onnx__TensorShapeProto__Dimension *d = malloc(sizeof *d);
            if (!d)
                goto fail_tree;
            onnx__tensor_shape_proto__dimension__init(d);
            sp->dim[sp->n_dim++] = d;
            if (v->dims[i] >= 0) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                d->dim_value = v->dims[i];
            } else if (ph_value_dim_param(v, i)) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                if (!(d->dim_param = ir_strdup(v->dim_params[i])))
                    goto fail_tree;
            }
        }
    }
    if (!vi->name)
        goto fail_tree;
    return vi;
fail_tree:
    protobuf_c_message_free_unpacked(&vi->base, NULL);
    return NULL;
fail:
    free(vi);
    free(tp);
    free(tt);
    free(sp);
    return NULL;
}

int ir_value_info_refresh(Onnx__ValueInfoProto *vi, const ph_value *v)
{
    Onnx__ValueInfoProto *fresh = ir_value_info_new(v);
    if (!fresh)
        return PH_ENOMEM;
    Onnx__TypeProto *t = vi->type;
    vi->type = fresh->type;
    fresh->type = t;
    protobuf_c_message_free_unpacked(&fresh->base, NULL);
    return 0;
}

/* ---------------------------------------------------------------- graphs */

ph_graph *ir_graph_new(ph_model *m, ph_node *parent, Onnx__GraphProto *gp)
{
    ph_graph *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->model = m;
    g->parent = parent;
    g->proto = gp;
    if (parent && m)
        m->bodies_made = 1;
    return g;
}

static void node_free(ph_model *m, ph_node *n);

void ir_graph_free(ph_graph *g)
{
    if (!g)
        return;
    for (ph_node *n = g->first, *next; n; n = next) {
        next = n->next;
        node_free(g->model, n);
    }
    for (size_t i = 0; i < g->n_inputs; i++) {
        if (g->inputs[i]->tensor && !g->inputs[i]->producer) {
            /* input with a default initializer: freed with the initializers */
        } else {
            value_free(g->model, g->inputs[i]);
        }
        protobuf_c_message_free_unpacked(&g->input_vi[i]->base, NULL);
    }
    for (size_t i = 0; i < g->n_inits; i++)
        if (g->inits[i])
            value_free(g->model, g->inits[i]);
    for (size_t i = 0; i < g->n_outputs; i++)
        protobuf_c_message_free_unpacked(&g->outputs[i].vi->base, NULL);
    for (size_t i = 0; i < g->n_value_info; i++)
        protobuf_c_message_free_unpacked(&g->value_info[i]->base, NULL);
    free(g->inputs);
    free(g->input_vi);
    free(g->outputs);
    free(g->inits);
    free(g->value_info);
    free(g->op_first);
    free(g->op_last);
    if (g->op_snap)
        for (int op = 0; op < PH_OP__COUNT; op++)
            free(g->op_snap->nodes[op]);
    free(g->op_snap);
    ir_notify_graph_freed(g);
    free(g);
}

PH_API ph_model *ph_graph_model(const ph_graph *g) { return g->model; }
PH_API ph_node *ph_graph_parent(const ph_graph *g) { return g->parent; }
PH_API const char *ph_graph_name(const ph_graph *g)
{
    return g->proto && g->proto->name ? g->proto->name : "";
}
PH_API ph_node *ph_graph_first_node(const ph_graph *g) { return g->first; }
PH_API ph_node *ph_graph_last_node(const ph_graph *g) { return g->last; }
PH_API ph_node *ph_node_next(const ph_node *n)
{
    ph_node *x = n->next;
    while (x && x->removed)
        x = x->next;
    return x;
}
PH_API ph_node *ph_node_prev(const ph_node *n) { return n->prev; }
PH_API size_t ph_graph_node_count(const ph_graph *g) { return g->n_nodes; }
PH_API size_t ph_graph_input_count(const ph_graph *g) { return g->n_inputs; }
PH_API ph_value *ph_graph_input(const ph_graph *g, size_t i)
{
    return i < g->n_inputs ? g->inputs[i] : NULL;
}
PH_API size_t ph_graph_output_count(const ph_graph *g) { return g->n_outputs; }
PH_API ph_value *ph_graph_output(const ph_graph *g, size_t i)
{
    return i < g->n_outputs ? g->outputs[i].value : NULL;
}

void ir_graph_compact_inits(ph_graph *g)
{
    if (!g->inits_holes)
        return;
    size_t k = 0;
    for (size_t i = 0; i < g->n_inits; i++)
        if (g->inits[i]) {
            g->inits[i]->init_pos = k;
            g->inits[k++] = g->inits[i];
        }
    g->n_inits = k;
    g->inits_holes = 0;
}

PH_API size_t ph_graph_initializer_count(const ph_graph *g)
{
    ir_graph_compact_inits((ph_graph *)g);
    return g->n_inits;
}

PH_API ph_value *ph_graph_initializer(const ph_graph *g, size_t i)
{
    ir_graph_compact_inits((ph_graph *)g);
    return i < g->n_inits ? g->inits[i] : NULL;
}

PH_API ph_value *ph_graph_find_value(const ph_graph *g, const char *name)
{
    ph_value *v = ir_names_get(&g->model->value_names, name);
    return v && ir_in_scope(v, g) ? v : NULL;
}

/* hint, or hint__N, that neither map holds (b may be NULL), into buf;
 * with taken, hint is known to be held by a (not looked up).  Returns 0,
 * or -1 when hint does not fit. */
static int unique_into_taken(ph_model *m, const ir_names *a, const ir_names *b, const char *hint, int taken,
                             char *buf, size_t size)
{
    size_t len = strlen(hint);
    if (len + 24 > size)
        return -1;
    memcpy(buf, hint, len + 1);
    while (taken || ir_names_get(a, buf) || (b && ir_names_get(b, buf))) {
        taken = 0;
        /* hint__N without snprintf: this runs for every node a pass creates */
        char digits[24];
        int k = 0;
        for (uint64_t c = ++m->name_counter; c; c /= 10)
            digits[k++] = (char)('0' + c % 10);
        char *p = buf + len;
        *p++ = '_';
        *p++ = '_';
        while (k)
            *p++ = digits[--k];
        *p = 0;
    }
    return 0;
}

static int unique_into(ph_model *m, const ir_names *a, const ir_names *b, const char *hint, char *buf,
                       size_t size)
{
    return unique_into_taken(m, a, b, hint, 0, buf, size);
}

static void node_names_ensure(ph_model *m);

PH_API const char *ph_graph_unique_name(ph_graph *g, const char *hint)
{
    ph_model *m = g->model;
    if (!hint || !*hint)
        hint = "v";
    size_t len = strlen(hint) + 24;
    char *s = malloc(len);
    if (!s || ir_grow((void **)&m->strings, &m->cap_strings, m->n_strings + 1, sizeof *m->strings)) {
        free(s);
        return NULL;
    }
    node_names_ensure(m);
    unique_into(m, &m->value_names, &m->node_names, hint, s, len);
    m->strings[m->n_strings++] = s;
    return s;
}

PH_API ph_value *ph_graph_add_input(ph_graph *g, const char *name, int dtype, int rank,
                                    const int64_t *dims)
{
    if (ir_grow((void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1, sizeof *g->inputs))
        return NULL;
    size_t cap = g->cap_inputs;
    void *p = realloc(g->input_vi, cap * sizeof *g->input_vi);
    if (!p)
        return NULL;
    g->input_vi = p;
    ph_value *v = ir_value_new(g, name);
    if (!v)
        return NULL;
    v->is_input = 1;
    if (ph_value_set_type(v, dtype, rank, dims) != 0) {
        value_bury(v);
        return NULL;
    }
    Onnx__ValueInfoProto *vi = ir_value_info_new(v);
    if (!vi) {
        value_bury(v);
        return NULL;
    }
    g->inputs[g->n_inputs] = v;
    g->input_vi[g->n_inputs++] = vi;
    return v;
}

PH_API int ph_graph_add_output(ph_graph *g, ph_value *v)
{
    if (!v || !ir_in_scope(v, g))
        return PH_EINVAL;
    if (ir_grow((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1, sizeof *g->outputs))
        return PH_ENOMEM;
    Onnx__ValueInfoProto *vi = ir_value_info_new(v);
    if (!vi)
        return PH_ENOMEM;
    g->outputs[g->n_outputs++] = (ir_output){v, vi};
    v->n_output_refs++;
    if (v->tensor)
        g->model->init_version++;
    ir_notify_uses_changed(v);
    return 0;
}

static ph_value *add_initializer(ph_graph *g, const char *name, int taken, ph_tensor *t);

PH_API ph_value *ph_graph_add_initializer(ph_graph *g, const char *name, ph_tensor *t)
{
    return add_initializer(g, name, 0, t);
}

PH_API ph_value *ph_graph_add_initializer_for(ph_graph *g, const ph_value *v, ph_tensor *t)
{
    /* a live value of g's model holds its name in the map: one lookup fewer */
    int taken = v && !v->dead && v->graph && v->graph->model == g->model && v->name && *v->name;
    return add_initializer(g, v ? v->name : NULL, taken, t);
}

/* ph_graph_add_initializer; with taken, name is known to be a value's. */
static ph_value *add_initializer(ph_graph *g, const char *name, int taken, ph_tensor *t)
{
    if (t && ph_tensor_kind(t) != PH_KIND_TENSOR) { /* a sequence or optional is no initializer */
        ph_tensor_free(t);
        return NULL;
    }
    /* ir_version 1 to 3: every initializer is a graph input, which a body
     * cannot take (If branches have none): the main graph holds it, in
     * scope of every body; the save lists it as an input */
    int64_t ir = g->model->proto->ir_version;
    if (g->parent && ir >= 1 && ir <= 3)
        g = g->model->graph;
    char stack[256], *uname = stack;
    size_t need = (name && *name ? strlen(name) : 1) + 24;
    if (need > sizeof stack && !(uname = malloc(need))) {
        ph_tensor_free(t);
        return NULL;
    }
    /* a value name: unique among values (node names are another namespace) */
    unique_into_taken(g->model, &g->model->value_names, NULL, name && *name ? name : "v", taken && name && *name,
                      uname, need);
    ph_value *v = ir_value_new(g, uname);
    if (uname != stack)
        free(uname);
    if (!v || ir_grow((void **)&g->inits, &g->cap_inits, g->n_inits + 1, sizeof *g->inits)) {
        if (v)
            value_bury(v);
        ph_tensor_free(t);
        return NULL;
    }
    v->tensor = t;
    v->init_pos = g->n_inits;
    g->inits[g->n_inits++] = v;
    g->model->init_version++;
    size_t r = ph_tensor_rank(t);
    ph_value_set_type(v, ph_tensor_dtype(t), (int)r, ph_tensor_dims(t));
    return v;
}

/* ----------------------------------------------------------------- nodes */

static void count_nodes(ph_graph *g, ptrdiff_t delta);

static void node_unlink(ph_node *n)
{
    ph_graph *g = n->graph;
    if (n->prev)
        n->prev->next = n->next;
    else
        g->first = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        g->last = n->prev;
    /* n->next is kept: walking on from a removed node reaches what followed it */
    n->prev = NULL;
    g->n_nodes--;
    count_nodes(g, -1);
}

/* Give g's nodes the order keys 0, 1, 2, ... */
static void renumber(ph_graph *g)
{
    double k = 0;
    for (ph_node *n = g->first; n; n = n->next)
        n->order = k++;
}

/* nodes counted by ph_model_node_count: the main graph and the bodies of
 * its live nodes */
static int graph_counted(const ph_graph *g)
{
    for (; g; g = g->parent ? g->parent->graph : NULL) {
        if (!g->parent)
            return g->model && g->model->graph == g;
        if (g->parent->removed)
            return 0;
    }
    return 0;
}

static void count_nodes(ph_graph *g, ptrdiff_t delta)
{
    if (g->model && graph_counted(g))
        g->model->n_nodes_total = (size_t)((ptrdiff_t)g->model->n_nodes_total + delta);
}

static void node_link_before(ph_graph *g, ph_node *n, ph_node *before)
{
    n->graph = g;
    count_nodes(g, 1);
    if (!before) {
        n->prev = g->last;
        n->next = NULL;
        n->order = g->last ? g->last->order + 1 : 0;
        if (g->last)
            g->last->next = n;
        else
            g->first = n;
        g->last = n;
    } else {
        double lo = before->prev ? before->prev->order : before->order - 2;
        n->order = lo + (before->order - lo) / 2;
        n->next = before;
        n->prev = before->prev;
        if (before->prev)
            before->prev->next = n;
        else
            g->first = n;
        before->prev = n;
        if (!(n->order > lo && n->order < before->order))
            renumber(g); /* the keys ran out of precision */
    }
    g->n_nodes++;
}

size_t ir_graph_count_nodes(const ph_graph *g)
{
    size_t c = g->n_nodes;
    for (const ph_node *n = g->first; n; n = n->next)
        for (size_t s = 0; s < ir_node_n_subgraphs(n); s++)
            c += ir_graph_count_nodes(ir_node_subgraphs(n)[s].graph);
    return c;
}

void ir_order_check(const ph_value *v, const ph_node *n)
{
    if (!v || !v->producer || !n->graph || !n->graph->model)
        return;
    /* n, or the node holding its body, in v's graph */
    const ph_node *at = n;
    while (at && at->graph != v->graph)
        at = at->graph->parent;
    if (!at || v->producer->order >= at->order || v->producer->removed)
        n->graph->model->order_dirty = 1;
}

/* ------------------------------------------------------- op-type index */

static void opidx_add(ph_graph *g, ph_node *n)
{
    if (n->op_linked)
        return;
    if (!g->op_first) {
        g->op_first = calloc(PH_OP__COUNT, sizeof *g->op_first);
        g->op_last = calloc(PH_OP__COUNT, sizeof *g->op_last);
        if (!g->op_first || !g->op_last) {
            free(g->op_first);
            free(g->op_last);
            g->op_first = g->op_last = NULL;
            ir_alloc_failed(g->model);
            return; /* the index is only an accelerator: ir_op_first says so */
        }
        for (ph_node *k = g->first; k; k = k->next) /* nodes linked meanwhile */
            if (k != n && !k->removed)
                opidx_add(g, k);
    }
    n->op_prev = g->op_last[n->op];
    n->op_next = NULL;
    if (n->op_prev)
        n->op_prev->op_next = n;
    else
        g->op_first[n->op] = n;
    g->op_last[n->op] = n;
    n->op_linked = 1;
    if (g->model && g->model->op_seq < UINT32_MAX)
        g->model->op_seq++;
    n->op_seq = g->model ? g->model->op_seq : 0;
    if (g->op_snap)
        g->op_snap->fresh[n->op] = 0;
    if (g->model)
        g->model->op_count[n->op]++;
}

static void opidx_del(ph_graph *g, ph_node *n)
{
    if (!n->op_linked || !g->op_first)
        return;
    if (n->op_prev)
        n->op_prev->op_next = n->op_next;
    else
        g->op_first[n->op] = n->op_next;
    if (n->op_next)
        n->op_next->op_prev = n->op_prev;
    else
        g->op_last[n->op] = n->op_prev;
    n->op_prev = NULL; /* op_next kept: a walk goes on from a removed node */
    n->op_linked = 0;
    if (g->op_snap)
        g->op_snap->fresh[n->op] = 0;
    if (g->model)
        g->model->op_count[n->op]--;
}

ph_node *const *ir_op_nodes(ph_graph *g, ph_op op, size_t *n)
{
    *n = 0;
    if (!g->op_first)
        return NULL;
    if (!g->op_snap && !(g->op_snap = calloc(1, sizeof *g->op_snap))) {
        ir_alloc_failed(g->model);
        return NULL;
    }
    struct ir_op_snap *s = g->op_snap;
    if (!s->fresh[op]) {
        size_t k = 0;
        for (ph_node *x = g->op_first[op]; x; x = x->op_next) {
            if (ir_grow((void **)&s->nodes[op], &s->cap[op], k + 1, sizeof *s->nodes[op])) {
                ir_alloc_failed(g->model);
                return NULL;
            }
            s->nodes[op][k++] = x;
        }
        s->n[op] = k;
        s->fresh[op] = 1;
    }
    *n = s->n[op];
    return s->nodes[op];
}

ph_node *ir_op_first(const ph_graph *g, ph_op op)
{
    if (!g->op_first) /* no index (out of memory): callers fall back to the node list */
        return NULL;
    return g->op_first[op];
}

/* node_names holds every node of a name (ONNX allows duplicates), by its
 * pointer: a node leaves it before its name changes and when removed or
 * freed (n->in_names).  One probe each. */
static void node_names_add(ph_model *m, ph_node *n)
{
    const char *name = n->name;
    if (!name || !*name || !m->node_names_ready)
        return;
    if (ir_names_add(&m->node_names, n, 0)) {
        ir_alloc_failed(m); /* only unique-name generation would be less sure */
        return;
    }
    n->in_names = 1;
}

static void node_names_del(ph_model *m, ph_node *n)
{
    if (n->in_names) {
        ir_names_del(&m->node_names, n);
        n->in_names = 0;
    }
}

static void node_names_add_graph(ph_model *m, const ph_graph *g)
{
    for (ph_node *n = g->first; n; n = n->next) {
        node_names_add(m, n);
        for (size_t k = 0; k < ir_node_n_subgraphs(n); k++)
            node_names_add_graph(m, ir_node_subgraphs(n)[k].graph);
    }
}

/* The node-name map is built on the first request for a unique name, so
 * loading and passes that create no node never pay for it. */
static void node_names_ensure(ph_model *m)
{
    if (m->node_names_ready || !m->graph)
        return;
    m->node_names_ready = 1;
    if (ir_names_reserve(&m->node_names, m->n_nodes_total))
        ir_alloc_failed(m);
    node_names_add_graph(m, m->graph);
}

size_t ir_node_name_count(ph_model *m, const char *name)
{
    if (!name || !*name)
        return 0;
    node_names_ensure(m);
    return ir_names_count(&m->node_names, name);
}

/* Drop every use made by nodes of g and its subgraphs (before freeing them). */
static void graph_drop_all_uses(ph_graph *g)
{
    for (ph_node *n = g->first; n; n = n->next) {
        for (size_t i = 0; i < n->n_inputs; i++) {
            ir_drop_use(n, i);
            n->inputs[i] = NULL;
        }
        for (size_t s = 0; s < ir_node_n_subgraphs(n); s++)
            graph_drop_all_uses(ir_node_subgraphs(n)[s].graph);
    }
}

/* The inputs (and use_pos) still in the node's own block. */
static int node_inputs_inline(const ph_node *n)
{
    return (const void *)n->inputs == (const void *)(n + 1);
}

/* m: the model n belonged to.  A removed node is freed at collection, when
 * the body it was in may be gone with its If/Loop/Scan: never read n->graph. */
static void node_free(ph_model *m, ph_node *n)
{
    node_names_del(m, n); /* a body's node freed with its If/Loop/Scan */
    ir_notify_node_freed(m, n);
    for (size_t s = 0; s < ir_node_n_subgraphs(n); s++)
        ir_graph_free(ir_node_subgraphs(n)[s].graph);
    for (size_t i = 0; i < ir_node_n_attr_tensors(n); i++)
        ph_tensor_free(ir_node_attr_tensors(n)[i].tensor);
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] && !n->outputs[i]->dead)
            value_free(m, n->outputs[i]);
    if (!node_inputs_inline(n)) { /* outputs always are */
        free(n->inputs);
        free(n->use_pos);
    }
    ir_node_fields_free(n);
    free(n);
}

void ir_node_fields_free(ph_node *n)
{
    ir_node_rare *r = n->rare;
    if (n->fields_owned) {
        free(n->name);
        for (size_t i = 0; i < n->n_attrs; i++)
            protobuf_c_message_free_unpacked(&n->attrs[i]->base, NULL);
        free(n->attrs);
        if (r) {
            free(r->domain);
            free(r->doc_string);
            free(r->op_type);
        }
    }
    if (r) {
        if (r->unknown)
            protobuf_c_message_free_unpacked(&r->unknown->base, NULL);
        free(r->subgraphs); /* what they hold is the caller's (node_free) */
        free(r->attr_tensors);
        free(r);
    }
    n->name = NULL;
    n->attrs = NULL;
    n->n_attrs = 0;
    n->rare = NULL;
}

ir_node_rare *ir_node_rare_get(ph_node *n)
{
    if (!n->rare)
        n->rare = calloc(1, sizeof *n->rare);
    return n->rare;
}

ir_node_rare *ir_node_rare_make(ph_node *n)
{
    return ir_node_fields_own(n) ? NULL : ir_node_rare_get(n);
}

/* sorted from 1 on (ir_op_lookup's binary search) */
const char *const ir_op_names[PH_OP__COUNT] = {
    "",
#define PH_X_NAME(name) #name,
    PH_OP_TABLE(PH_X_NAME)
#undef PH_X_NAME
};

/* Set n's op from domain and op_type (a copy owned as n's fields are when
 * the op is not a known one).  0 or PH_ENOMEM (n unchanged). */
static int node_set_op(ph_node *n, const char *domain, const char *op_type)
{
    ph_op op = ir_op_lookup(domain, op_type ? op_type : "");
    if (op == PH_OP_UNKNOWN && !(op_type && n->rare && n->rare->op_type == op_type)) {
        char *copy = NULL;
        if (op_type && n->fields_owned && !(copy = ir_strdup(op_type)))
            return PH_ENOMEM;
        ir_node_rare *r = op_type ? ir_node_rare_get(n) : n->rare;
        if (op_type && !r) {
            free(copy);
            return PH_ENOMEM;
        }
        if (r) {
            if (n->fields_owned)
                free(r->op_type);
            r->op_type = n->fields_owned ? copy : (char *)op_type;
        }
    } else if (op != PH_OP_UNKNOWN && n->rare && n->rare->op_type) {
        if (n->fields_owned)
            free(n->rare->op_type);
        n->rare->op_type = NULL;
    }
    n->op = op;
    return 0;
}

/* Move np's fields (but inputs and outputs) into n.  np is a carrier when
 * in_arena (its fields in the model's arena, where the rare block goes
 * too; np itself the caller's); else np and its fields were malloc'd by
 * protobuf-c: the node owns the fields and keeps np, with its input and
 * output names, until ir_node_settle.  0 or PH_ENOMEM (n unchanged). */
static int node_take_fields(ph_node *n, Onnx__NodeProto *np, int in_arena, int op)
{
    if (op < 0)
        op = (int)ir_op_lookup(np->domain, np->op_type ? np->op_type : "");
    char *op_type = op == PH_OP_UNKNOWN ? np->op_type : NULL;
    if (!in_arena || np->domain || np->doc_string || op_type) {
        if (!(n->rare = malloc(sizeof *n->rare)))
            return PH_ENOMEM;
        *n->rare = (ir_node_rare){np->domain, np->doc_string, op_type, in_arena ? NULL : np, NULL, NULL, 0, 0};
    }
    if (!in_arena && !op_type)
        free(np->op_type); /* the op table's name stands for it */
    n->op = (ph_op)op;
    n->name = np->name;
    n->attrs = np->attribute;
    n->n_attrs = (uint32_t)np->n_attribute;
    n->fields_owned = !in_arena;
    np->name = np->op_type = np->domain = np->doc_string = NULL;
    np->attribute = NULL;
    np->n_attribute = 0;
    return 0;
}

void ir_node_settle(ph_node *n)
{
    Onnx__NodeProto *np = ir_node_unknown(n);
    if (!np || (!np->n_input && !np->n_output && np->base.n_unknown_fields))
        return;
    if (!np->base.n_unknown_fields) {
        protobuf_c_message_free_unpacked(&np->base, NULL);
        n->rare->unknown = NULL;
        ir_node_rare *r = n->rare;
        if (!r->domain && !r->doc_string && !r->op_type && !r->n_subgraphs && !r->n_attr_tensors &&
            !r->subgraphs && !r->attr_tensors) {
            free(r);
            n->rare = NULL;
        }
        return;
    }
    for (size_t i = 0; i < np->n_input; i++)
        free(np->input[i]);
    for (size_t i = 0; i < np->n_output; i++)
        free(np->output[i]);
    free(np->input);
    free(np->output);
    np->input = np->output = NULL;
    np->n_input = np->n_output = 0;
}

/* Allocate a node with room for n_in inputs and n_out outputs (its fields
 * empty).  The arrays come in the node's own block (inputs, outputs,
 * use_pos, after the struct): one allocation a node.  Only the inputs can
 * grow; they then move to blocks of their own (node_reserve_inputs). */
static ph_node *node_alloc(size_t n_in, size_t n_out)
{
    size_t cap_in = n_in ? n_in : 1, cap_out = n_out ? n_out : 1;
    ph_node *n = calloc(1, sizeof *n + cap_in * sizeof *n->inputs + cap_out * sizeof *n->outputs +
                               cap_in * sizeof *n->use_pos);
    if (!n)
        return NULL;
    n->inputs = (ph_value **)(n + 1);
    n->outputs = n->inputs + cap_in;
    n->use_pos = (uint32_t *)(n->outputs + cap_out);
    return n;
}

ph_op ir_op_lookup(const char *domain, const char *op_type)
{
    if (domain && *domain && strcmp(domain, "ai.onnx") != 0)
        return PH_OP_UNKNOWN;
    const char *const *names = ir_op_names;
    /* binary search: the table is sorted by name */
    size_t lo = 1, hi = PH_OP__COUNT;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(op_type, names[mid]);
        if (c == 0)
            return (ph_op)mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return PH_OP_UNKNOWN;
}

ph_node *ir_node_load(ph_graph *g, Onnx__NodeProto *np, int in_arena, size_t n_in, size_t n_out, int op)
{
    ph_node *n = node_alloc(n_in, n_out);
    if (!n || node_take_fields(n, np, in_arena, op)) {
        if (!in_arena)
            protobuf_c_message_free_unpacked(&np->base, NULL);
        free(n);
        return NULL;
    }
    node_link_before(g, n, NULL);
    n->file_pos = g->n_nodes <= UINT32_MAX ? (uint32_t)g->n_nodes : 0; /* appended: 1 + its index in the file's list */
    opidx_add(g, n);
    node_names_add(g->model, n);
    n->n_outputs = n_out; /* NULL until made: freed with the node on failure */
    return n;
}

int ir_node_load_output(ph_node *n, size_t i, char *name, int in_arena, ph_error *err)
{
    ph_graph *g = n->graph;
    ph_value *v = value_new(g, name, in_arena);
    if (!v) {
        if (ir_names_get(&g->model->value_names, name))
            return ph_error_set(err, PH_EPARSE, "node '%s' (%s): output '%s' is already defined (not SSA)",
                                ph_node_name(n), ph_node_op_type(n), name);
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    v->producer = n;
    v->out_index = (uint32_t)i;
    n->outputs[i] = v;
    return 0;
}

/* Used by the loader: a node for proto (taken over), outputs created, inputs
 * not yet resolved.  Appended to g. */
ph_node *ir_node_from_proto(ph_graph *g, Onnx__NodeProto *np, ph_error *err);
ph_node *ir_node_from_proto(ph_graph *g, Onnx__NodeProto *np, ph_error *err)
{
    ph_node *n = ir_node_load(g, np, 0, np->n_input, np->n_output, -1);
    if (!n) {
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    return ir_node_load_proto_outputs(n, err) ? NULL : n;
}

int ir_node_load_proto_outputs(ph_node *n, ph_error *err)
{
    const Onnx__NodeProto *np = ir_node_unknown(n);
    for (size_t i = 0; np && i < np->n_output; i++) {
        if (!np->output[i][0])
            continue; /* omitted optional output */
        int rc = ir_node_load_output(n, i, np->output[i], 0, err);
        if (rc)
            return rc;
    }
    return 0;
}

PH_API ph_node *ph_node_create(ph_graph *g, ph_node *before, const char *op_type, size_t n_in,
                               ph_value *const *inputs, size_t n_out)
{
    for (size_t i = 0; i < n_in; i++)
        if (inputs[i] && (inputs[i]->dead || !ir_in_scope(inputs[i], g)))
            return NULL;
    /* node names and value names are separate namespaces in ONNX: each is
     * made unique in its own map (one probe each in the usual case) */
    char name[160];
    node_names_ensure(g->model);
    int named = unique_into(g->model, &g->model->node_names, NULL, op_type, name, sizeof name) == 0;
    ph_node *n = named ? node_alloc(n_in, n_out) : NULL;
    if (!n)
        return NULL;
    n->fields_owned = 1;
    n->name = ir_strdup(name);
    if (!n->name || node_set_op(n, NULL, op_type)) {
        ir_node_fields_free(n);
        free(n);
        return NULL;
    }
    n->graph = g;
    for (size_t i = 0; i < n_out; i++) {
        char hint[192], vn[224];
        snprintf(hint, sizeof hint, "%s_out%zu", n->name, i);
        int ok = unique_into(g->model, &g->model->value_names, NULL, hint, vn, sizeof vn) == 0;
        ph_value *v = ok ? ir_value_new(g, vn) : NULL;
        if (!v) {
            for (size_t k = 0; k < i; k++)
                value_bury(n->outputs[k]);
            node_free(g->model, n);
            return NULL;
        }
        v->producer = n;
        v->out_index = (uint32_t)i;
        n->outputs[i] = v;
    }
    n->n_outputs = n_out;
    for (size_t i = 0; i < n_in; i++) {
        n->inputs[i] = inputs[i];
        if (inputs[i] && ir_add_use(inputs[i], n, (uint32_t)i)) {
            n->inputs[i] = NULL;
            n->n_inputs = i;
            for (size_t k = 0; k < i; k++)
                ir_drop_use(n, k);
            for (size_t k = 0; k < n_out; k++)
                value_bury(n->outputs[k]);
            n->n_outputs = 0;
            node_free(g->model, n);
            return NULL;
        }
    }
    n->n_inputs = n_in;
    node_link_before(g, n, before);
    opidx_add(g, n);
    for (size_t i = 0; i < n_in; i++)
        ir_order_check(inputs[i], n);
    node_names_add(g->model, n);
    ir_notify_node_changed(n);
    return n;
}

PH_API int ph_node_remove(ph_node *n)
{
    if (n->removed)
        return 0;
    if (!ir_node_outputs_dead(n))
        return PH_EBUSY;
    ph_model *m = n->graph->model;
    /* the outputs' slots in the name map and the op index's next node lie
     * anywhere on a large graph: ask for them before dropping the uses */
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i])
            ir_names_prefetch(&m->value_names, n->outputs[i]->name_hash);
    if (n->op_linked && n->op_next)
        __builtin_prefetch(&n->op_next->op_prev, 1);
    for (size_t i = 0; i < n->n_inputs; i++) {
        ir_drop_use(n, i);
        n->inputs[i] = NULL;
    }
    for (size_t s = 0; s < ir_node_n_subgraphs(n); s++)
        graph_drop_all_uses(ir_node_subgraphs(n)[s].graph);
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i])
            value_bury(n->outputs[i]);
    node_names_del(m, n);
    opidx_del(n->graph, n);
    for (size_t s = 0; s < ir_node_n_subgraphs(n); s++) /* its bodies are no longer counted */
        count_nodes(n->graph, -(ptrdiff_t)ir_graph_count_nodes(ir_node_subgraphs(n)[s].graph));
    node_unlink(n);
    n->removed = 1;
    n->grave_next = m->grave_nodes;
    m->grave_nodes = n;
    m->n_grave_nodes++;
    ir_notify_node_removed(m, n);
    return 0;
}

void ir_node_move(ph_node *n, ph_graph *g, ph_node *before)
{
    ph_graph *from = n->graph;
    opidx_del(from, n);
    node_unlink(n);
    node_link_before(g, n, before);
    opidx_add(g, n);
    for (size_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i])
            n->outputs[i]->graph = g;
    n->infer_pos = 0; /* a position in g is found at the next shape update */
    ir_notify_node_changed(n);
}

PH_API int ph_node_bypass(ph_node *n, size_t out_index, ph_value *with)
{
    if (out_index >= n->n_outputs || !n->outputs[out_index] || !with)
        return PH_EINVAL;
    int rc = ph_value_replace(n->outputs[out_index], with);
    if (rc)
        return rc;
    if (ir_node_outputs_dead(n))
        ph_node_remove(n);
    return 0;
}

PH_API int ph_node_is_removed(const ph_node *n) { return n->removed; }
PH_API ph_graph *ph_node_graph(const ph_node *n) { return n->graph; }
PH_API ph_op ph_node_op(const ph_node *n) { return n->op; }
PH_API const char *ph_node_op_type(const ph_node *n)
{
    const char *t = ir_node_op_type(n);
    return t ? t : "";
}
PH_API const char *ph_node_domain(const ph_node *n)
{
    return ir_node_domain(n) ? ir_node_domain(n) : "";
}
PH_API const char *ph_node_name(const ph_node *n)
{
    return n->name ? n->name : "";
}

PH_API const char *ph_node_label(const ph_node *n, char *buf, size_t size)
{
    if (!size)
        return buf;
    const char *name = ph_node_name(n);
    if (name[0]) {
        snprintf(buf, size, "%s", name);
        return buf;
    }
    const ph_graph *g = n->graph;
    const char *where = g && g->parent ? ph_graph_name(g) : "";
    if (n->file_pos)
        snprintf(buf, size, "%s%s%s#%zu", where, where[0] ? "/" : "", ph_node_op_type(n), (size_t)n->file_pos - 1);
    else
        snprintf(buf, size, "%s%s%s#new", where, where[0] ? "/" : "", ph_node_op_type(n));
    return buf;
}

static int set_string(char **field, const char *s)
{
    char *d = ir_strdup(s);
    if (!d)
        return PH_ENOMEM;
    free(*field);
    *field = d;
    return 0;
}

static int ph_node_set_op_type_(ph_node *n, const char *op_type)
{
    int rc = ir_node_fields_own(n);
    if (!rc && !n->removed) {
        opidx_del(n->graph, n);
        rc = node_set_op(n, ir_node_domain(n), op_type);
        opidx_add(n->graph, n);
    } else if (!rc) {
        rc = node_set_op(n, ir_node_domain(n), op_type);
    }
    ir_notify_node_changed(n);
    return rc;
}

PH_API int ph_node_set_op_type(ph_node *n, const char *op_type)
{
    if (!n || !op_type)
        return PH_EINVAL;
    return ir_note(n->graph ? n->graph->model : NULL, ph_node_set_op_type_(n, op_type));
}

static int ph_node_set_domain_(ph_node *n, const char *domain)
{
    int rc = ir_node_fields_own(n);
    if (!rc && (!domain || !*domain)) {
        if (n->rare) {
            free(n->rare->domain);
            n->rare->domain = NULL;
        }
    } else if (!rc) {
        rc = ir_node_rare_make(n) ? set_string(&n->rare->domain, domain) : PH_ENOMEM;
    }
    if (!rc && !n->removed) {
        opidx_del(n->graph, n);
        rc = node_set_op(n, ir_node_domain(n), ir_node_op_type(n));
        opidx_add(n->graph, n);
    } else if (!rc) {
        rc = node_set_op(n, ir_node_domain(n), ir_node_op_type(n));
    }
    ir_notify_node_changed(n);
    return rc;
}

PH_API int ph_node_set_domain(ph_node *n, const char *domain)
{
    if (!n)
        return PH_EINVAL;
    return ir_note(n->graph ? n->graph->model : NULL, ph_node_set_domain_(n, domain));
}

static int ph_node_set_name_(ph_node *n, const char *name)
{
    ph_model *m = n->graph->model;
    if (ir_node_fields_own(n))
        return PH_ENOMEM;
    char *d = ir_strdup(name);
    if (!d)
        return PH_ENOMEM;
    node_names_del(m, n);
    free(n->name);
    n->name = d;
    node_names_add(m, n);
    return 0;
}

PH_API int64_t ph_node_opset(const ph_node *n)
{
    return n && n->graph ? ph_model_opset(n->graph->model, ph_node_domain(n)) : -1;
}

PH_API int ph_node_set_name(ph_node *n, const char *name)
{
    if (!n || !name)
        return PH_EINVAL;
    return ir_note(n->graph ? n->graph->model : NULL, ph_node_set_name_(n, name));
}

PH_API size_t ph_node_input_count(const ph_node *n) { return n->n_inputs; }
PH_API ph_value *ph_node_input(const ph_node *n, size_t i)
{
    return n && i < n->n_inputs ? n->inputs[i] : NULL;
}
PH_API size_t ph_node_output_count(const ph_node *n) { return n->n_outputs; }
PH_API ph_value *ph_node_output(const ph_node *n, size_t i)
{
    return n && i < n->n_outputs ? n->outputs[i] : NULL;
}

/* Room for n's inputs: in the node's block, what it was made with (the
 * outputs follow); out of it, the least power of two >= n_inputs or more
 * (a block only grows). */
static size_t node_inputs_cap(const ph_node *n)
{
    if (node_inputs_inline(n))
        return (size_t)(n->outputs - n->inputs);
    size_t cap = 1;
    while (cap < n->n_inputs)
        cap *= 2;
    return cap;
}

static int node_reserve_inputs(ph_node *n, size_t need)
{
    if (need <= node_inputs_cap(n))
        return 0;
    size_t cap = 1;
    while (cap < need)
        cap *= 2;
    if (node_inputs_inline(n)) { /* out of the node's block */
        ph_value **in = malloc(cap * sizeof *in);
        uint32_t *pos = malloc(cap * sizeof *pos);
        if (!in || !pos) {
            free(in);
            free(pos);
            return PH_ENOMEM;
        }
        memcpy(in, n->inputs, n->n_inputs * sizeof *in);
        memcpy(pos, n->use_pos, n->n_inputs * sizeof *pos);
        n->inputs = in;
        n->use_pos = pos;
        return 0;
    }
    ph_value **in = realloc(n->inputs, cap * sizeof *in);
    if (!in)
        return PH_ENOMEM;
    n->inputs = in;
    uint32_t *p = realloc(n->use_pos, cap * sizeof *p);
    if (!p)
        return PH_ENOMEM;
    n->use_pos = p;
    return 0;
}

static int ph_node_set_input_(ph_node *n, size_t i, ph_value *v)
{
    if (i > n->n_inputs || n->removed)
        return PH_EINVAL;
    if (v && (v->dead || !ir_in_scope(v, n->graph)))
        return PH_EINVAL;
    if (i == n->n_inputs) {
        if (node_reserve_inputs(n, i + 1))
            return PH_ENOMEM;
        n->inputs[i] = NULL;
        n->n_inputs++;
    }
    if (n->inputs[i] == v)
        return 0;
    ir_notify_node_changed(n);
    ph_value *old = n->inputs[i];
    ir_drop_use(n, i);
    n->inputs[i] = v;
    if (v && ir_add_use(v, n, (uint32_t)i)) {
        n->inputs[i] = old;
        if (old)
            ir_add_use(old, n, (uint32_t)i); /* cannot fail: we just freed a slot */
        return PH_ENOMEM;
    }
    ir_order_check(v, n);
    return 0;
}

PH_API int ph_node_set_input(ph_node *n, size_t i, ph_value *v)
{
    if (!n)
        return PH_EINVAL;
    return ir_note(n->graph ? n->graph->model : NULL, ph_node_set_input_(n, i, v));
}

PH_API int ph_node_remove_input(ph_node *n, size_t i)
{
    if (i >= n->n_inputs)
        return PH_EINVAL;
    ir_notify_node_changed(n);
    ir_drop_use(n, i);
    for (size_t k = i + 1; k < n->n_inputs; k++) {
        ph_value *v = n->inputs[k];
        n->inputs[k - 1] = v;
        n->use_pos[k - 1] = n->use_pos[k];
        if (v)
            v->uses[n->use_pos[k - 1]].index = (uint32_t)(k - 1);
    }
    n->n_inputs--;
    return 0;
}

/* ---------------------------------------------------------------- values */

PH_API const char *ph_value_name(const ph_value *v) { return v->name; }
PH_API ph_graph *ph_value_graph(const ph_value *v) { return v->graph; }
PH_API ph_node *ph_value_producer(const ph_value *v) { return v->producer; }
PH_API size_t ph_value_producer_index(const ph_value *v) { return v->producer ? v->out_index : 0; }
PH_API size_t ph_value_use_count(const ph_value *v) { return v->n_uses; }
PH_API ph_node *ph_value_use(const ph_value *v, size_t i, size_t *input_index)
{
    if (i >= v->n_uses)
        return NULL;
    if (input_index)
        *input_index = v->uses[i].index;
    return v->uses[i].node;
}
PH_API int ph_value_is_graph_input(const ph_value *v) { return v->is_input; }
PH_API size_t ph_value_graph_output_count(const ph_value *v) { return v->n_output_refs; }
PH_API int ph_value_is_initializer(const ph_value *v) { return v->tensor != NULL && !v->producer; }

PH_API const ph_tensor *ph_value_const(const ph_value *v)
{
    return v && v->tensor && !v->is_input && !v->dead ? v->tensor : NULL;
}

PH_API const ph_tensor *ph_value_const_tensor(const ph_value *v)
{
    const ph_tensor *t = ph_value_const(v);
    if (t || !v || !v->producer || v->producer->op != PH_OP_Constant)
        return t;
    return ph_node_attr_tensor(v->producer, "value");
}

PH_API ph_node *ph_value_sole_consumer(const ph_value *v)
{
    return v->n_uses == 1 && v->n_output_refs == 0 ? v->uses[0].node : NULL;
}

PH_API ph_node *ph_value_only_reader(const ph_value *v)
{
    if (!v || !v->n_uses || v->n_output_refs)
        return NULL;
    for (size_t i = 1; i < v->n_uses; i++)
        if (v->uses[i].node != v->uses[0].node)
            return NULL;
    return v->uses[0].node;
}

PH_API int ph_value_can_replace(const ph_value *old, const ph_value *repl)
{
    if (!old || !repl || old == repl || old->dead || repl->dead)
        return 0;
    /* Every reader of old lies in old's graph or a body inside it (its
     * scope), so a repl in scope there is in scope for all of them: the
     * readers are looked at only when repl is not (a value of a body). */
    if (!ir_in_scope(repl, old->graph))
        for (size_t i = 0; i < old->n_uses; i++)
            if (!ir_in_scope(repl, old->uses[i].node->graph))
                return 0;
    if (old->n_output_refs) {
        if (old->is_input || !old->producer) /* renaming it would change the interface */
            return 0;
        /* repl takes old's name: a node output, or an initializer of the main
         * graph (a body output that is an initializer is not accepted by every
         * runtime), that is no graph input and no other output */
        if (repl->graph != old->graph || repl->is_input || repl->n_output_refs ||
            (!repl->producer && (!repl->tensor || old->graph->parent)))
            return 0;
    }
    return 1;
}

/* Swap the names of a and b (both in the same graph). */
static int swap_names(ph_value *a, ph_value *b)
{
    ph_model *m = a->graph->model;
    ir_names_del(&m->value_names, a);
    ir_names_del(&m->value_names, b);
    char *t = a->name;
    a->name = b->name;
    b->name = t;
    if (ir_names_add(&m->value_names, a, 1) || ir_names_add(&m->value_names, b, 1))
        return PH_ENOMEM;
    return 0;
}

PH_API int ph_value_replace(ph_value *old, ph_value *repl)
{
    if (!ph_value_can_replace(old, repl))
        return old == repl ? 0 : PH_EBUSY;
    if (value_reserve_uses(repl, (size_t)repl->n_uses + old->n_uses))
        return PH_ENOMEM;
    /* repl is told it gained uses once, when the first reader moved (the
     * observers saw it so before, once per reader, to the same effect) */
    for (int told = 0; old->n_uses; told = 1) {
        ir_use u = old->uses[old->n_uses - 1];
        old->n_uses--;
        u.node->inputs[u.index] = repl;
        add_use_reserved(repl, u.node, u.index); /* capacity reserved above */
        if (!told)
            ir_notify_uses_changed(repl);
        ir_order_check(repl, u.node);
        ir_notify_input_replaced(u.node, old, repl);
    }
    ir_notify_uses_changed(old);
    if (old->n_output_refs) {
        /* The output slot keeps its name: repl takes old's name. */
        int rc = swap_names(old, repl);
        if (rc)
            return rc;
        ph_graph *g = old->graph;
        for (size_t i = 0; i < g->n_outputs; i++)
            if (g->outputs[i].value == old)
                g->outputs[i].value = repl;
        repl->n_output_refs = old->n_output_refs;
        old->n_output_refs = 0;
        if (repl->tensor || old->tensor)
            g->model->init_version++;
        ir_notify_uses_changed(old);
        ir_notify_uses_changed(repl);
        /* the slot's declared type is the one the name had */
        if (repl->rank < 0 && old->rank >= 0) {
            ph_value_set_type(repl, old->dtype, old->rank, old->dims);
            for (int i = 0; i < old->rank; i++)
                if (ph_value_dim_param(old, i))
                    ph_value_set_dim_param(repl, i, old->dim_params[i]);
        } else if (!repl->dtype) {
            repl->dtype = old->dtype;
        }
    }
    return 0;
}

PH_API int ph_value_dtype(const ph_value *v) { return v->dtype; }
PH_API int ph_value_rank(const ph_value *v) { return v->rank; }
PH_API int64_t ph_value_dim(const ph_value *v, int i)
{
    if (i < 0)
        i += v->rank;
    return i >= 0 && i < v->rank ? v->dims[i] : -1;
}
PH_API const char *ph_value_dim_param(const ph_value *v, int i)
{
    if (i < 0)
        i += v->rank;
    return i >= 0 && i < v->rank && v->dim_params ? v->dim_params[i] : NULL;
}

/* The interned form of dims[0, rank) with every unknown dim -1 (dims NULL:
 * all unknown): dims themselves when they are in that form already (the
 * common case: no copy), else a normalized copy.  NULL when out of memory. */
static const int64_t *type_dims_interned(ph_model *m, int rank, const int64_t *dims)
{
    size_t r = (size_t)rank, i = 0;
    while (dims && i < r && dims[i] >= -1)
        i++;
    if (i == r)
        return ir_dims_intern(m, dims, r);
    int64_t small[16], *d = r <= 16 ? small : malloc(r * sizeof *d);
    if (!d)
        return NULL;
    for (i = 0; i < r; i++)
        d[i] = dims && dims[i] >= 0 ? dims[i] : -1;
    const int64_t *e = ir_dims_intern(m, d, r);
    if (d != small)
        free(d);
    return e;
}

static int value_set_type_interned(ph_value *v, int dtype, int rank, const int64_t *nd);

/* Observers are told of a type that differs from v's (dtype, rank, dims or
 * a symbolic dim's name); v is marked as set either way. */
static int ph_value_set_type_(ph_value *v, int dtype, int rank, const int64_t *dims)
{
    ph_model *m = v->graph ? v->graph->model : NULL;
    const int64_t *nd = NULL;
    if (rank >= 0 && !(nd = type_dims_interned(m, rank, dims))) {
        value_clear_type(v);
        v->type_dirty = 1;
        v->infer_fresh = 0;
        ir_notify_type_changed(v);
        v->dtype = dtype;
        ir_alloc_failed(m);
        return PH_ENOMEM;
    }
    return value_set_type_interned(v, dtype, rank, nd);
}

/* v's type: dtype, and nd (interned, rank of them) or unknown (rank < 0). */
static int value_set_type_interned(ph_value *v, int dtype, int rank, const int64_t *nd)
{
    int same = v->dtype == dtype && v->rank == (rank >= 0 ? rank : -1) && v->dims == nd && !v->dim_params;
    if (v->dim_params)
        value_clear_type(v);
    v->type_dirty = 1;
    v->infer_fresh = 0;
    if (!same)
        ir_notify_type_changed(v);
    v->dtype = dtype;
    v->dims = nd;
    v->rank = rank >= 0 ? rank : -1;
    return 0;
}

void ir_value_set_type_interned(ph_value *v, int dtype, int rank, const int64_t *dims)
{
    value_set_type_interned(v, dtype, rank, dims);
}

PH_API int ph_value_set_type(ph_value *v, int dtype, int rank, const int64_t *dims)
{
    if (!v)
        return PH_EINVAL;
    return ir_note(v->graph ? v->graph->model : NULL, ph_value_set_type_(v, dtype, rank, dims));
}

PH_API int ph_value_set_dtype(ph_value *v, int dtype)
{
    if (!v)
        return PH_EINVAL;
    v->dtype = dtype;
    v->type_dirty = 1;
    v->infer_fresh = 0;
    ir_notify_type_changed(v);
    return 0;
}

static int ph_value_set_dim_param_(ph_value *v, int i, const char *param)
{
    if (i < 0 || i >= v->rank)
        return PH_EINVAL;
    char *d = param ? ir_strdup(param) : NULL;
    if ((param && !d) || (param && !value_dim_params(v))) {
        free(d);
        ir_alloc_failed(v->graph ? v->graph->model : NULL); /* callers may go on without it */
        return PH_ENOMEM;
    }
    if (d && v->dims[i] != -1) { /* a symbolic dim's size is unknown: new dims */
        size_t r = (size_t)v->rank;
        int64_t small[16], *nd = r <= 16 ? small : malloc(r * sizeof *nd);
        int rc = nd ? 0 : PH_ENOMEM;
        if (nd) {
            memcpy(nd, v->dims, r * sizeof *nd);
            nd[i] = -1;
            rc = value_set_dims(v, nd, r);
            if (nd != small)
                free(nd);
        }
        if (rc) { /* the old dims stay */
            free(d);
            ir_alloc_failed(v->graph ? v->graph->model : NULL);
            return PH_ENOMEM;
        }
    }
    if (v->dim_params) { /* none to clear when no dim is symbolic */
        free(v->dim_params[i]);
        v->dim_params[i] = d;
    }
    v->type_dirty = 1;
    v->infer_fresh = 0;
    ir_notify_type_changed(v);
    return 0;
}

PH_API int ph_value_set_dim_param(ph_value *v, int i, const char *param)
{
    if (!v)
        return PH_EINVAL;
    return ir_note(v->graph ? v->graph->model : NULL, ph_value_set_dim_param_(v, i, param));
}

/* ----------------------------------------------------------- dead code */

static int remove_initializer(ph_value *v)
{
    ph_graph *g = v->graph;
    if (v->is_input || v->n_uses || v->n_output_refs || !v->tensor || v->producer)
        return 0;
    g->model->init_version++;
    g->inits[v->init_pos] = NULL;
    g->inits_holes = 1;
    value_bury(v);
    return 1;
}

PH_API int ph_value_prune(ph_value *start)
{
    ph_value *own[16], **work = own; /* most prunes stay within a few values */
    size_t n = 0, cap = sizeof own / sizeof *own;
    int removed = 0;
    ph_model *m = start->graph ? start->graph->model : NULL;
    work[n++] = start;
    while (n) {
        ph_value *v = work[--n];
        if (v->dead || v->n_uses || v->n_output_refs)
            continue;
        if (!v->producer) {
            removed += remove_initializer(v);
            continue;
        }
        ph_node *p = v->producer;
        if (p->removed || !ir_node_outputs_dead(p))
            continue;
        if (n + p->n_inputs > cap) {
            ph_value **heap = work == own ? NULL : work;
            if (ir_grow((void **)&heap, &cap, n + p->n_inputs, sizeof *work)) {
                if (work != own)
                    free(work);
                ir_alloc_failed(m); /* callers may go on with dead nodes left */
                return PH_ENOMEM;
            }
            if (work == own)
                memcpy(heap, own, n * sizeof *work);
            work = heap;
        }
        for (size_t i = 0; i < p->n_inputs; i++)
            if (p->inputs[i]) {
                ph_value *in = p->inputs[i];
                work[n++] = in;
                if (in->n_uses == 1 && !in->n_output_refs && m) /* dies with p, most likely */
                    ir_names_prefetch(&m->value_names, in->name_hash);
            }
        ph_node_remove(p);
        removed++;
    }
    if (work != own)
        free(work);
    return removed;
}

/* One reverse sweep: a node's inputs come from nodes before it and a body
 * reads only values defined before its node, so when a node dies every node
 * it can make dead is still ahead; a live node's bodies are swept when the
 * sweep reaches it.  gate (may be NULL) is asked before each removal and
 * stops the sweep by returning 0. */
static int remove_dead(ph_graph *g, ph_dead_gate gate, void *user, int *stopped)
{
    int removed = 0;
    for (ph_node *n = g->last, *prev; n && !*stopped; n = prev) {
        prev = n->prev;
        if (!ir_node_outputs_dead(n)) {
            for (size_t s = 0; s < ir_node_n_subgraphs(n) && !*stopped; s++)
                removed += remove_dead(ir_node_subgraphs(n)[s].graph, gate, user, stopped);
            continue;
        }
        if (gate && !gate(user, n, NULL)) {
            *stopped = 1;
            break;
        }
        ph_node_remove(n);
        removed++;
    }
    for (size_t i = 0; i < g->n_inits && !*stopped; i++) {
        ph_value *v = g->inits[i];
        if (!v || v->is_input || v->n_uses || v->n_output_refs || !v->tensor || v->producer)
            continue;
        if (gate && !gate(user, NULL, v)) {
            *stopped = 1;
            break;
        }
        removed += remove_initializer(v);
    }
    return removed;
}

PH_API int ph_graph_remove_dead_gated(ph_graph *g, ph_dead_gate gate, void *user)
{
    int stopped = 0;
    return remove_dead(g, gate, user, &stopped);
}

PH_API int ph_graph_remove_dead(ph_graph *g) { return ph_graph_remove_dead_gated(g, NULL, NULL); }

/* ----------------------------------------------------------- collection */

void ir_model_collect(ph_model *m)
{
    while (m->grave_nodes) {
        ph_node *n = m->grave_nodes;
        m->grave_nodes = n->grave_next;
        node_free(m, n); /* its outputs are dead: freed through the value list */
    }
    m->n_grave_nodes = 0;
    while (m->grave_values) {
        ph_value *v = m->grave_values;
        m->grave_values = v->grave_next;
        value_free(m, v);
    }
}

void ir_model_collect_some(ph_model *m)
{
    if (m && m->n_grave_nodes > 2 * m->n_nodes_total + 4096)
        ir_model_collect(m);
}

PH_API void ph_model_collect(ph_model *m) { ir_model_collect(m); }

PH_API uint64_t ph_model_initializers_version(const ph_model *m) { return m->init_version; }

PH_API uint64_t ph_model_alloc_failures(const ph_model *m) { return m ? m->alloc_failures : 0; }

void ir_alloc_failed(ph_model *m)
{
    if (m)
        m->alloc_failures++;
}

/* ----------------------------------------------------------------- walk */

PH_API int ph_graph_walk_ops(ph_graph *g, const ph_op *ops, size_t n_ops, ph_node_fn fn, void *user)
{
    int total = 0, rc;
    if (!g->op_first) { /* no index (it could not be allocated): the node list */
        for (ph_node *n = g->first; n; n = ph_node_next(n)) {
            for (size_t s = 0; s < ir_node_n_subgraphs(n) && !n->removed; s++)
                if ((rc = ph_graph_walk_ops(ir_node_subgraphs(n)[s].graph, ops, n_ops, fn, user)) < 0)
                    return rc;
                else
                    total += rc;
            for (size_t k = 0; k < n_ops && !n->removed; k++)
                if (n->op == ops[k]) {
                    if ((rc = fn(n, user)) < 0)
                        return rc;
                    total += rc;
                    break;
                }
        }
        return total;
    }
    /* bodies first, as ph_graph_walk visits them before their node */
    size_t n_holders;
    const ph_op *holders = ir_body_ops(&n_holders);
    for (size_t h = 0; h < n_holders; h++)
        for (ph_node *n = g->op_first[holders[h]]; n; n = n->op_next)
            for (size_t s = 0; s < ir_node_n_subgraphs(n) && !n->removed; s++)
                if ((rc = ph_graph_walk_ops(ir_node_subgraphs(n)[s].graph, ops, n_ops, fn, user)) < 0)
                    return rc;
                else
                    total += rc;
    for (size_t k = 0; k < n_ops; k++) {
        if ((size_t)ops[k] >= PH_OP__COUNT || (k && ops[k] == ops[k - 1]))
            continue;
        for (ph_node *n = g->op_first[ops[k]], *next; n; n = next) {
            if (!n->removed) {
                if ((rc = fn(n, user)) < 0)
                    return rc;
                total += rc;
            }
            next = n->op_next; /* kept when fn removed n */
        }
    }
    return total;
}

PH_API int ph_graph_has_bodies(const ph_graph *g)
{
    if (g->model && !g->model->bodies_made) /* no subgraph was ever made */
        return 0;
    if (!g->op_first) { /* no index (it could not be allocated): the node list */
        for (const ph_node *n = g->first; n; n = n->next)
            if (!n->removed && ir_node_n_subgraphs(n))
                return 1;
        return 0;
    }
    size_t n_holders;
    const ph_op *holders = ir_body_ops(&n_holders);
    for (size_t h = 0; h < n_holders; h++)
        for (const ph_node *n = g->op_first[holders[h]]; n; n = n->op_next)
            if (!n->removed && ir_node_n_subgraphs(n))
                return 1;
    return 0;
}

PH_API int ph_graph_walk(ph_graph *g, ph_node_fn fn, void *user)
{
    int total = 0;
    for (ph_node *n = g->first; n; n = ph_node_next(n)) {
        for (size_t s = 0; s < ir_node_n_subgraphs(n) && !n->removed; s++) {
            int rc = ph_graph_walk(ir_node_subgraphs(n)[s].graph, fn, user);
            if (rc < 0)
                return rc;
            total += rc;
        }
        if (n->removed)
            continue;
        int rc = fn(n, user);
        if (rc < 0)
            return rc;
        total += rc;
    }
    return total;
}

/* ------------------------------------------------------------- toposort */

void ir_node_deps(const ph_node *n, const ph_graph *g, void (*fn)(ph_node *, void *), void *ctx)
{
    for (size_t i = 0; i < n->n_inputs; i++) {
        const ph_value *v = n->inputs[i];
        if (v && v->producer && v->graph == g)
            fn(v->producer, ctx);
    }
    for (size_t s = 0; s < ir_node_n_subgraphs(n); s++)
        for (const ph_node *k = ir_node_subgraphs(n)[s].graph->first; k; k = k->next)
            ir_node_deps(k, g, fn, ctx);
}

typedef struct topo_state {
    ph_node **stack;
    size_t n, cap;
    int oom;
    int unsorted;
    size_t pos;
} topo_state;

static void check_order(ph_node *dep, void *ctx)
{
    topo_state *st = ctx;
    if (dep->mark >= st->pos) /* not seen yet: after the current node */
        st->unsorted = 1;
}

static void push_dep(ph_node *dep, void *ctx)
{
    topo_state *st = ctx;
    if (dep->mark == 1) /* on the path being expanded: a back edge */
        st->unsorted = 2;
    if (dep->mark == 0) {
        if (ir_grow((void **)&st->stack, &st->cap, st->n + 1, sizeof *st->stack)) {
            st->oom = 1;
            return;
        }
        st->stack[st->n++] = dep;
    }
}

static int toposort_graph(ph_graph *g);

/* ---------------------------------------------- the driver's 32-bit counts */

static void graph_clear_marks(ph_graph *g, int which);

/* Clear the visit (which 0) or walk (1) mark of n and its bodies' nodes. */
static void node_clear_marks(ph_node *n, int which)
{
    if (which)
        n->walk_mark = 0;
    else
        n->visit_mark = 0;
    for (size_t s = 0; s < ir_node_n_subgraphs(n); s++)
        graph_clear_marks(ir_node_subgraphs(n)[s].graph, which);
}

static void graph_clear_marks(ph_graph *g, int which)
{
    for (ph_node *n = g->first; n; n = n->next)
        node_clear_marks(n, which);
}

static uint32_t epoch_next(ph_model *m, uint32_t *epoch, uint32_t span, int which)
{
    if (*epoch >= UINT32_MAX - span) { /* (a walk reads epoch + 1) */
        if (m->graph)
            graph_clear_marks(m->graph, which);
        for (ph_node *n = m->grave_nodes; n; n = n->grave_next)
            node_clear_marks(n, which);
        *epoch = 0;
    }
    return *epoch += span;
}

uint32_t ir_visit_epoch(ph_model *m) { return epoch_next(m, &m->visit_epoch, 1, 0); }
uint32_t ir_walk_epoch(ph_model *m, uint32_t span) { return epoch_next(m, &m->walk_epoch, span, 1); }

/* Number the op-type indexes' nodes of g and its bodies' from *next on. */
static void graph_renumber_ops(ph_graph *g, uint32_t *next)
{
    if (g->op_first)
        for (int op = 0; op < PH_OP__COUNT; op++)
            for (ph_node *n = g->op_first[op]; n; n = n->op_next)
                n->op_seq = ++*next;
    for (ph_node *n = g->first; n; n = n->next)
        for (size_t s = 0; s < ir_node_n_subgraphs(n); s++)
            graph_renumber_ops(ir_node_subgraphs(n)[s].graph, next);
}

uint32_t ir_op_seq_start(ph_model *m)
{
    if (m->op_seq > UINT32_MAX / 2 && m->graph) {
        uint32_t next = 0;
        graph_renumber_ops(m->graph, &next);
        m->op_seq = next;
    }
    return m->op_seq;
}

PH_API int ph_graph_toposort(ph_graph *g)
{
    ir_model_collect_some(g->model);
    /* Every mutation that could put a reader before what it reads marks the
     * model (ir_order_check); with no mark the order still holds. */
    if (g->model && !g->model->order_dirty)
        return 0;
    int rc = toposort_graph(g);
    if (!rc && g->model && g == g->model->graph)
        g->model->order_dirty = 0;
    return rc;
}

static int toposort_graph(ph_graph *g)
{
    topo_state st = {0};
    /* Fast path: already in order?  mark = position + 1. */
    size_t pos = 0;
    for (ph_node *n = g->first; n; n = n->next)
        n->mark = UINT32_MAX;
    for (ph_node *n = g->first; n && !st.unsorted; n = n->next) {
        st.pos = pos + 1;
        n->mark = ++pos;
        ir_node_deps(n, g, check_order, &st);
    }
    int rc = 0;
    if (st.unsorted) {
        /* Stable DFS: emit each node after its unemitted dependencies.
         * mark: 0 = new, 1 = on stack (expanding), 2 = emitted. */
        ph_node **order = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *order);
        size_t n_order = 0;
        if (!order)
            return PH_ENOMEM;
        for (ph_node *n = g->first; n; n = n->next)
            n->mark = 0;
        for (ph_node *root = g->first; root && !rc; root = root->next) {
            if (root->mark)
                continue;
            st.n = 0;
            push_dep(root, &st);
            while (st.n && !st.oom) {
                ph_node *top = st.stack[st.n - 1];
                if (top->mark == 2) {
                    st.n--;
                    continue;
                }
                if (top->mark == 1) {
                    top->mark = 2;
                    order[n_order++] = top;
                    st.n--;
                    continue;
                }
                top->mark = 1;
                ir_node_deps(top, g, push_dep, &st);
                if (st.unsorted == 2) {
                    rc = PH_EVERIFY; /* a cycle */
                    break;
                }
            }
            if (st.oom)
                rc = PH_ENOMEM;
        }
        if (!rc) {
            count_nodes(g, -(ptrdiff_t)g->n_nodes); /* relinked below */
            g->first = g->last = NULL;
            g->n_nodes = 0;
            for (size_t i = 0; i < n_order; i++)
                node_link_before(g, order[i], NULL);
        }
        free(order);
    }
    free(st.stack);
    for (ph_node *n = g->first; n && !rc; n = n->next)
        for (size_t s = 0; s < ir_node_n_subgraphs(n) && !rc; s++)
            rc = toposort_graph(ir_node_subgraphs(n)[s].graph);
    return rc;
}
