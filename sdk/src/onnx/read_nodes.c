/* sdk/src/onnx/read_nodes.c - the main graph's nodes, read in place from the
 * mapped file.
 *
 * A million-node model is mostly NodeProto messages.  Unpacked by protobuf-c,
 * each would be some twenty allocations: the message, its name and op_type,
 * the input and output arrays and every name in them, each attribute and
 * its name and values; the names of inputs and outputs would be copied only
 * to be looked up and freed again.  Here a node is read where it lies:
 *   - its input names are looked up in the name map straight from the file
 *     (phi_map_get_mem), never copied;
 *   - its output names become the names of its values, copied once into
 *     the model's arena (ir/arena.c), as are its name, op_type, domain and
 *     doc_string, into a NodeProto that is itself in the arena;
 *   - its attributes are unpacked by protobuf-c into the arena, through
 *     protobuf-c's allocator hook.
 * The node the IR gets is the one protobuf-c's tree would give: the same
 * NodeProto fields, attribute messages unpacked by protobuf-c itself, the
 * same values with the same names (a name with a NUL byte in it is cut
 * there, as a C string of protobuf-c's is), so saving it writes the same
 * bytes.
 *
 * A message the reader does not take is unpacked by protobuf-c, alone, as
 * it was before as part of the whole model: the same result and the same
 * errors.  Those are messages with a field NodeProto does not have (or a
 * field of another wire type, or one that does not parse), a singular field
 * given twice (protobuf-c keeps the last), and messages with an attribute
 * that holds a tensor, a graph, a sparse tensor or a type, or unknown
 * fields (the IR wraps those attributes, and the loader checks them).
 */
#include <stdlib.h>
#include <string.h>

#include "read_nodes.h"
#include "wire.h"

/* NodeProto's fields (onnx.proto) */
enum {
    NODE_INPUT = 1,
    NODE_OUTPUT = 2,
    NODE_NAME = 3,
    NODE_OP_TYPE = 4,
    NODE_ATTRIBUTE = 5,
    NODE_DOC_STRING = 6,
    NODE_DOMAIN = 7
};

typedef struct node_view {
    size_t n_in, n_out, n_attr;
    phi_wire_field single[NODE_DOMAIN + 1]; /* name, op_type, doc_string, domain by number */
    unsigned seen;                          /* bit per singular field given */
} node_view;

/* 0 when the reader takes the message: only NodeProto's fields, each
 * length-delimited, the singular ones at most once; else -1. */
static int node_scan(const uint8_t *p, size_t len, node_view *v)
{
    memset(v, 0, sizeof *v);
    const uint8_t *end = p + len;
    while (p < end) {
        phi_wire_field f;
        if (phi_wire_next(&p, end, &f) || f.type != 2 || f.num > NODE_DOMAIN)
            return -1;
        if (f.num == NODE_INPUT) {
            v->n_in++;
        } else if (f.num == NODE_OUTPUT) {
            v->n_out++;
        } else if (f.num == NODE_ATTRIBUTE) {
            v->n_attr++;
        } else {
            if (v->seen & (1u << f.num))
                return -1;
            v->seen |= 1u << f.num;
            v->single[f.num] = f;
        }
    }
    return 0;
}

/* The C string a protobuf-c string field would hold: up to the first NUL. */
static size_t text_len(const phi_wire_field *f)
{
    const void *nul = memchr(f->payload, 0, f->len);
    return nul ? (size_t)((const uint8_t *)nul - f->payload) : f->len;
}

/* A string field into the arena (NULL when the field is absent). */
static int take_string(phi_arena **arena, const node_view *v, int num, char **out)
{
    *out = NULL;
    if (!(v->seen & (1u << num)))
        return 0;
    const phi_wire_field *f = &v->single[num];
    *out = phi_arena_strndup(arena, (const char *)f->payload, text_len(f));
    return *out ? 0 : PH_ENOMEM;
}

/* An attribute the IR keeps as it is: no tensor, graph, sparse tensor or
 * type inside, no unknown field. */
static int plain_attr(const Onnx__AttributeProto *a)
{
    return !a->t && !a->n_tensors && !a->g && !a->n_graphs && !a->sparse_tensor &&
           !a->n_sparse_tensors && !a->tp && !a->n_type_protos && !a->base.n_unknown_fields;
}

/* The NodeProto of the message, in the arena.  0, 1 when the reader does
 * not take it, or PH_ENOMEM. */
static int read_in_place(ph_model *m, const uint8_t *data, size_t len, Onnx__NodeProto **out)
{
    node_view v;
    if (node_scan(data, len, &v))
        return 1;
    Onnx__NodeProto *np = phi_arena_alloc(&m->arena, sizeof *np);
    if (!np)
        return PH_ENOMEM;
    onnx__node_proto__init(np);
    int rc = take_string(&m->arena, &v, NODE_NAME, &np->name);
    if (!rc)
        rc = take_string(&m->arena, &v, NODE_OP_TYPE, &np->op_type);
    if (!rc)
        rc = take_string(&m->arena, &v, NODE_DOC_STRING, &np->doc_string);
    if (!rc)
        rc = take_string(&m->arena, &v, NODE_DOMAIN, &np->domain);
    if (!rc && v.n_attr && !(np->attribute = phi_arena_alloc(&m->arena, v.n_attr * sizeof *np->attribute)))
        rc = PH_ENOMEM;
    ProtobufCAllocator alloc = phi_arena_allocator(&m->arena);
    const uint8_t *p = data, *end = data + len;
    while (!rc && p < end) {
        phi_wire_field f;
        phi_wire_next(&p, end, &f); /* node_scan read them all */
        if (f.num != NODE_ATTRIBUTE)
            continue;
        Onnx__AttributeProto *a = onnx__attribute_proto__unpack(&alloc, f.len, f.payload);
        if (!a || !plain_attr(a))
            return 1; /* protobuf-c, on the whole message, decides (or fails) */
        if (a->has_s) { /* kept NUL-terminated, as phi_attr_normalize does */
            uint8_t *s = phi_arena_alloc(&m->arena, a->s.len + 1);
            if (!s)
                return PH_ENOMEM;
            if (a->s.len)
                memcpy(s, a->s.data, a->s.len);
            s[a->s.len] = 0;
            a->s.data = s;
        }
        np->attribute[np->n_attribute++] = a;
    }
    if (!rc)
        *out = np;
    return rc;
}

int phi_nodes_read(ph_model *m, phi_node_src *src, size_t n, ph_error *err)
{
    for (size_t i = 0; i < n; i++) {
        phi_node_src *s = &src[i];
        int rc = read_in_place(m, s->data, s->len, &s->np);
        if (rc == 0) {
            s->in_place = 1;
            continue;
        }
        if (rc != 1)
            return ph_error_set(err, PH_ENOMEM, "out of memory");
        s->np = onnx__node_proto__unpack(NULL, s->len, s->data);
        if (!s->np)
            return ph_error_set(err, PH_EPARSE, "not a valid ONNX model: protobuf parse failed");
    }
    return 0;
}

void phi_nodes_release(const ph_model *m, phi_node_src *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (src[i].np && !phi_arena_owns(m->arena, src[i].np))
            protobuf_c_message_free_unpacked(&src[i].np->base, NULL);
        src[i].np = NULL;
    }
}

/* ------------------------------------------------------------ building */

/* A node read in place (its message np), with its outputs. */
static ph_node *build_in_place(ph_graph *g, const phi_node_src *s, Onnx__NodeProto *np, ph_error *err)
{
    node_view v;
    node_scan(s->data, s->len, &v); /* taken by phi_nodes_read: it scans */
    ph_node *n = phi_node_load(g, np, v.n_in, v.n_out);
    if (!n) {
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    const uint8_t *p = s->data, *end = s->data + s->len;
    for (size_t i = 0; p < end;) {
        phi_wire_field f;
        phi_wire_next(&p, end, &f);
        if (f.num != NODE_OUTPUT)
            continue;
        size_t len = text_len(&f);
        if (len) { /* else an omitted optional output */
            char *name = phi_arena_strndup(&g->model->arena, (const char *)f.payload, len);
            if (!name) {
                ph_error_set(err, PH_ENOMEM, "out of memory");
                return NULL;
            }
            if (phi_node_load_output(n, i, name, 1, err))
                return NULL;
        }
        i++;
    }
    return n;
}

/* The inputs of a node read in place, looked up by the names in the file. */
static int resolve_in_place(ph_node *n, const phi_node_src *s, ph_error *err)
{
    const uint8_t *p = s->data, *end = s->data + s->len;
    for (size_t i = 0; p < end;) {
        phi_wire_field f;
        phi_wire_next(&p, end, &f);
        if (f.num != NODE_INPUT)
            continue;
        const char *name = (const char *)f.payload;
        size_t len = text_len(&f);
        n->inputs[i] = NULL;
        n->n_inputs = i + 1;
        if (len) { /* else an omitted optional input */
            ph_value *v = phi_map_get_mem(&n->graph->model->value_names, name, len);
            if (!v || !phi_in_scope(v, n->graph))
                return ph_error_set(err, PH_EPARSE, "node '%s' (%s): input '%.*s' is not defined",
                                    ph_node_name(n), ph_node_op_type(n), (int)(len > 300 ? 300 : len),
                                    name);
            n->inputs[i] = v;
            if (phi_add_use(v, n, (uint32_t)i))
                return ph_error_set(err, PH_ENOMEM, "out of memory");
        }
        i++;
    }
    return 0;
}

int phi_nodes_build(ph_graph *g, phi_node_src *src, size_t n, ph_error *err)
{
    ph_model *m = g->model;
    ph_node *first = NULL;
    int rc = 0;
    size_t i = 0;
    for (; i < n && !rc; i++) { /* every node and its outputs: a node may read a later one */
        Onnx__NodeProto *np = src[i].np;
        src[i].np = NULL; /* taken over by the node, or freed, either way */
        ph_node *node = src[i].in_place ? build_in_place(g, &src[i], np, err)
                                        : phi_node_from_proto(g, np, err);
        if (!node)
            rc = err && err->code ? err->code : PH_ENOMEM;
        else if (!first)
            first = node;
    }
    phi_nodes_release(m, src + i, n - i);
    ph_node *node = first;
    for (i = 0; node && !rc; i++, node = node->next)
        rc = src[i].in_place ? resolve_in_place(node, &src[i], err) : phi_node_resolve_inputs(node, err);
    for (node = first; node && !rc; node = node->next)
        if (!phi_arena_owns(m->arena, node->proto)) /* one read in place has no body */
            rc = phi_node_build_subgraphs(node, err);
    return rc;
}
