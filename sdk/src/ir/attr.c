/* sdk/src/ir/attr.c - node attributes, kept as the node's AttributeProto
 * messages so that every attribute type (and any unknown field) survives a
 * round trip.  STRING attributes are kept NUL-terminated after their length
 * so ph_node_attr_string can hand them out directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef Onnx__AttributeProto attr_t;

static attr_t *find_attr(const ph_node *n, const char *name, size_t *pos)
{
    char first = name[0]; /* most names differ there: strcmp only for those that do not */
    for (size_t i = 0; i < n->n_attrs; i++) {
        const char *have = n->attrs[i]->name;
        if (have && have[0] == first && strcmp(have, name) == 0) {
            if (pos)
                *pos = i;
            return n->attrs[i];
        }
    }
    return NULL;
}

const Onnx__AttributeProto *ir_node_find_attr(const ph_node *n, const char *name)
{
    return find_attr(n, name, NULL);
}

int ir_attr_normalize(attr_t *a)
{
    if (a->has_s) {
        uint8_t *d = realloc(a->s.data, a->s.len + 1);
        if (!d)
            return PH_ENOMEM;
        d[a->s.len] = 0;
        a->s.data = d;
    }
    return 0;
}

PH_API size_t ph_node_attr_count(const ph_node *n) { return n->n_attrs; }

PH_API const char *ph_node_attr_name(const ph_node *n, size_t i)
{
    return i < n->n_attrs && n->attrs[i]->name ? n->attrs[i]->name : NULL;
}

PH_API ph_attr_type ph_node_attr_type(const ph_node *n, const char *name)
{
    const attr_t *a = find_attr(n, name, NULL);
    if (!a)
        return PH_ATTR_NONE;
    switch (a->type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return PH_ATTR_FLOAT;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return PH_ATTR_INT;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return PH_ATTR_STRING;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return PH_ATTR_TENSOR;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return PH_ATTR_GRAPH;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return PH_ATTR_FLOATS;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return PH_ATTR_INTS;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return PH_ATTR_STRINGS;
    default: return PH_ATTR_OTHER;
    }
}

PH_API int64_t ph_node_attr_int(const ph_node *n, const char *name, int64_t dflt)
{
    const attr_t *a = find_attr(n, name, NULL);
    return a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT ? a->i : dflt;
}

PH_API float ph_node_attr_float(const ph_node *n, const char *name, float dflt)
{
    const attr_t *a = find_attr(n, name, NULL);
    return a && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT ? a->f : dflt;
}

PH_API const char *ph_node_attr_string(const ph_node *n, const char *name, const char *dflt)
{
    const attr_t *a = find_attr(n, name, NULL);
    if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)
        return dflt;
    return a->s.data ? (const char *)a->s.data : "";
}

PH_API ptrdiff_t ph_node_attr_ints(const ph_node *n, const char *name, const int64_t **vals)
{
    const attr_t *a = find_attr(n, name, NULL);
    if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
        return -1;
    if (vals)
        *vals = a->ints;
    return (ptrdiff_t)a->n_ints;
}

PH_API ptrdiff_t ph_node_attr_floats(const ph_node *n, const char *name, const float **vals)
{
    const attr_t *a = find_attr(n, name, NULL);
    if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS)
        return -1;
    if (vals)
        *vals = a->floats;
    return (ptrdiff_t)a->n_floats;
}

static void drop_attr_tensor(ph_node *n, const attr_t *a)
{
    for (size_t i = 0; i < ir_node_n_attr_tensors(n); i++)
        if (ir_node_attr_tensors(n)[i].attr == a) {
            ph_tensor_free(ir_node_attr_tensors(n)[i].tensor);
            ir_node_attr_tensors(n)[i] = ir_node_attr_tensors(n)[--n->rare->n_attr_tensors];
            return;
        }
}

PH_API const ph_tensor *ph_node_attr_tensor(const ph_node *n, const char *name)
{
    const attr_t *a = find_attr(n, name, NULL);
    if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR || !a->t)
        return NULL;
    for (size_t i = 0; i < ir_node_n_attr_tensors(n); i++)
        if (ir_node_attr_tensors(n)[i].attr == a)
            return ir_node_attr_tensors(n)[i].tensor;
    /* First access: wrap the attribute's tensor (the node caches the wrapper). */
    ph_node *m = (ph_node *)n;
    ir_node_rare *r = ir_node_rare_get(m);
    size_t cap = r ? r->n_attr_tensors : 0;
    ir_attr_tensor *arr = r ? realloc(r->attr_tensors, (cap + 1) * sizeof *arr) : NULL;
    if (!arr) {
        ir_alloc_failed(n->graph ? n->graph->model : NULL); /* NULL would read as "no tensor" */
        return NULL;
    }
    r->attr_tensors = arr;
    ph_tensor *t = ir_tensor_wrap(a->t, 1);
    if (!t) {
        ir_alloc_failed(n->graph ? n->graph->model : NULL);
        return NULL;
    }
    arr[r->n_attr_tensors++] = (ir_attr_tensor){(attr_t *)a, t};
    return t;
}

PH_API ph_graph *ph_node_attr_graph(const ph_node *n, const char *name)
{
    const attr_t *a = find_attr(n, name, NULL);
    if (!a)
        return NULL;
    for (size_t i = 0; i < ir_node_n_subgraphs(n); i++)
        if (ir_node_subgraphs(n)[i].attr == a)
            return ir_node_subgraphs(n)[i].graph;
    return NULL;
}

PH_API size_t ph_node_subgraph_count(const ph_node *n) { return ir_node_n_subgraphs(n); }
PH_API ph_graph *ph_node_subgraph(const ph_node *n, size_t i)
{
    return i < ir_node_n_subgraphs(n) ? ir_node_subgraphs(n)[i].graph : NULL;
}

/* A fresh attribute `name` replacing any of that name (not GRAPH ones). */
static attr_t *new_attr(ph_node *n, const char *name, Onnx__AttributeProto__AttributeType type)
{
    if (ir_node_fields_own(n))
        return NULL;
    size_t pos;
    attr_t *old = find_attr(n, name, &pos);
    if (old) {
        for (size_t i = 0; i < ir_node_n_subgraphs(n); i++)
            if (ir_node_subgraphs(n)[i].attr == old)
                return NULL; /* graph attributes are not replaced through this API */
    }
    attr_t *a = malloc(sizeof *a);
    if (!a)
        return NULL;
    onnx__attribute_proto__init(a);
    a->name = ir_strdup(name);
    a->has_type = 1;
    a->type = type;
    if (!a->name) {
        free(a);
        return NULL;
    }
    ir_notify_node_changed(n);
    if (old) {
        drop_attr_tensor(n, old);
        protobuf_c_message_free_unpacked(&old->base, NULL);
        n->attrs[pos] = a;
        return a;
    }
    attr_t **arr = realloc(n->attrs, (n->n_attrs + 1) * sizeof *arr);
    if (!arr) {
        protobuf_c_message_free_unpacked(&a->base, NULL);
        return NULL;
    }
    n->attrs = arr;
    arr[n->n_attrs++] = a;
    return a;
}

static int ph_node_set_attr_int_(ph_node *n, const char *name, int64_t v)
{
    attr_t *a = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (!a)
        return PH_ENOMEM;
    a->has_i = 1;
    a->i = v;
    return 0;
}

PH_API int ph_node_set_attr_int(ph_node *n, const char *name, int64_t v)
{
    if (!n || !name)
        return PH_EINVAL;
    return ir_note(n->graph ? n->graph->model : NULL, ph_node_set_attr_int_(n, name, v));
}

static int ph_node_set_attr_float_(ph_node *n, const char *name, float v)
{
    attr_t *a = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    if (!a)
        return PH_ENOMEM;
    a->has_f = 1;
    a->f = v;
    return 0;
}

PH_API int ph_node_set_attr_float(ph_node *n, const char *name, float v)
{
    if (!n || !name)
        return PH_EINVAL;
    return ir_note(n->graph ? n->graph->model : NULL, ph_node_set_attr_float_(n, name, v));
}

static int ph_node_set_attr_string_(ph_node *n, const char *name, const char *v)
{
    size_t len = strlen(v);
    uint8_t *d = malloc(len + 1);
    if (!d)
        return PH_ENOMEM;
    memcpy(d, v, len + 1);
    attr_t *a = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    if (!a) {
        free(d);
        return PH_ENOMEM;
    }
    a->has_s = 1;
    a->s.data = d;
    a->s.len = len;
    return 0;
}

PH_API int ph_node_set_attr_string(ph_node *n, const char *name, const char *v)
{
    if (!n || !name || !v)
        return PH_EINVAL;
    return ir_note(n->graph ? n->graph->model : NULL, ph_node_set_attr_string_(n, name, v));
}

static int ph_node_set_attr_ints_(ph_node *n, const char *name, size_t count, const int64_t *v)
{
    int64_t *d = malloc((count ? count : 1) * sizeof *d);
    if (!d)
        return PH_ENOMEM;
    if (count)
        memcpy(d, v, count * sizeof *d);
    attr_t *a = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    if (!a) {
        free(d);
        return PH_ENOMEM;
    }
    a->ints = d;
    a->n_ints = count;
    return 0;
}

PH_API int ph_node_set_attr_ints(ph_node *n, const char *name, size_t count, const int64_t *v)
{
    if (!n || !name || (count && !v))
        return PH_EINVAL;
    return ir_note(n->graph ? n->graph->model : NULL, ph_node_set_attr_ints_(n, name, count, v));
}

static int ph_node_set_attr_floats_(ph_node *n, const char *name, size_t count, const float *v)
{
    float *d = malloc((count ? count : 1) * sizeof *d);
    if (!d)
        return PH_ENOMEM;
    if (count)
        memcpy(d, v, count * sizeof *d);
    attr_t *a = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    if (!a) {
        free(d);
        return PH_ENOMEM;
    }
    a->floats = d;
    a->n_floats = count;
    return 0;
}

PH_API int ph_node_set_attr_floats(ph_node *n, const char *name, size_t count, const float *v)
{
    if (!n || !name || (count && !v))
        return PH_EINVAL;
    return ir_note(n->graph ? n->graph->model : NULL, ph_node_set_attr_floats_(n, name, count, v));
}

PH_API int ph_node_set_attr_tensor(ph_node *n, const char *name, ph_tensor *t)
{
    /* The attribute holds a self-contained proto: move the bytes into raw_data. */
    const void *data = ph_tensor_data(t);
    if (!data) {
        ph_tensor_free(t);
        return PH_EINVAL;
    }
    Onnx__TensorProto *p = ir_tensor_proto(t);
    if (!p) {
        ph_tensor_free(t);
        return PH_ENOMEM;
    }
    if (t->storage != IR_DATA_PROTO_RAW && t->storage != IR_DATA_TYPED) {
        uint8_t *copy = malloc(t->nbytes ? t->nbytes : 1);
        if (!copy) {
            ph_tensor_free(t);
            return PH_ENOMEM;
        }
        memcpy(copy, data, t->nbytes);
        p->has_raw_data = 1;
        p->raw_data.data = copy;
        p->raw_data.len = t->nbytes;
        free(t->owned_data);
        t->owned_data = NULL;
        t->data = copy;
        t->storage = IR_DATA_PROTO_RAW;
    }
    attr_t *a = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    if (!a) {
        ph_tensor_free(t);
        return PH_ENOMEM;
    }
    a->t = p;
    t->borrowed = 1;
    /* keep the wrapper as this attribute's cached tensor */
    ir_node_rare *r = ir_node_rare_get(n);
    ir_attr_tensor *arr = r ? realloc(r->attr_tensors, (r->n_attr_tensors + 1) * sizeof *arr) : NULL;
    if (!arr) {
        free(t->owned_data);
        free(t);
        return 0;
    }
    r->attr_tensors = arr;
    arr[r->n_attr_tensors++] = (ir_attr_tensor){a, t};
    return 0;
}

static int copy_attr(ph_node *dst, const attr_t *src)
{
    if (ir_node_fields_own(dst))
        return PH_ENOMEM;
    attr_t *a = ir_message_copy(&src->base);
    if (!a || ir_attr_normalize(a)) {
        if (a)
            protobuf_c_message_free_unpacked(&a->base, NULL);
        return PH_ENOMEM;
    }
    size_t pos;
    ir_notify_node_changed(dst);
    attr_t *old = find_attr(dst, src->name, &pos);
    if (old) {
        drop_attr_tensor(dst, old);
        protobuf_c_message_free_unpacked(&old->base, NULL);
        dst->attrs[pos] = a;
        return 0;
    }
    attr_t **arr = realloc(dst->attrs, (dst->n_attrs + 1) * sizeof *arr);
    if (!arr) {
        protobuf_c_message_free_unpacked(&a->base, NULL);
        return PH_ENOMEM;
    }
    dst->attrs = arr;
    arr[dst->n_attrs++] = a;
    return 0;
}

static int ph_node_copy_attrs_(ph_node *dst, const ph_node *src)
{
    for (size_t i = 0; i < src->n_attrs; i++) {
        const attr_t *a = src->attrs[i];
        if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH ||
            a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS || !a->name)
            continue;
        int rc = copy_attr(dst, a);
        if (rc)
            return rc;
    }
    return 0;
}

PH_API int ph_node_copy_attrs(ph_node *dst, const ph_node *src)
{
    if (!dst || !src)
        return PH_EINVAL;
    return ir_note(dst->graph ? dst->graph->model : NULL, ph_node_copy_attrs_(dst, src));
}

PH_API int ph_node_remove_attr(ph_node *n, const char *name)
{
    if (ir_node_fields_own(n))
        return PH_ENOMEM;
    size_t pos;
    attr_t *a = find_attr(n, name, &pos);
    if (!a)
        return 0;
    for (size_t i = 0; i < ir_node_n_subgraphs(n); i++)
        if (ir_node_subgraphs(n)[i].attr == a)
            return PH_EBUSY;
    drop_attr_tensor(n, a);
    protobuf_c_message_free_unpacked(&a->base, NULL);
    ir_notify_node_changed(n);
    memmove(n->attrs + pos, n->attrs + pos + 1, (n->n_attrs - pos - 1) * sizeof *n->attrs);
    n->n_attrs--;
    return 1;
}

PH_API ph_graph *ph_node_add_subgraph(ph_node *n, const char *name)
{
    if (n->graph && n->graph->model)
        n->graph->model->order_dirty = 1; /* its body may read values defined later */
    if (!name || !*name || find_attr(n, name, NULL) || ir_node_fields_own(n))
        return NULL;
    ir_node_rare *r = ir_node_rare_get(n);
    ir_subgraph *subs = r ? realloc(r->subgraphs, (r->n_subgraphs + 1) * sizeof *subs) : NULL;
    if (!subs)
        return NULL;
    r->subgraphs = subs;
    Onnx__GraphProto *gp = malloc(sizeof *gp);
    if (!gp)
        return NULL;
    onnx__graph_proto__init(gp);
    char gname[256];
    snprintf(gname, sizeof gname, "%s_%s", ph_node_name(n), name);
    const char *uname = ph_graph_unique_name(n->graph, gname);
    gp->name = uname ? ir_strdup(uname) : NULL;
    attr_t *a = gp->name ? new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH) : NULL;
    if (!a) {
        protobuf_c_message_free_unpacked(&gp->base, NULL);
        return NULL;
    }
    a->g = gp; /* the attribute owns the proto shell, the node the IR graph */
    ph_graph *sub = ir_graph_new(n->graph->model, n, gp);
    if (!sub) {
        ph_node_remove_attr(n, name);
        return NULL;
    }
    r->subgraphs[r->n_subgraphs++] = (ir_subgraph){a, 0, sub};
    ir_notify_node_changed(n);
    return sub;
}
