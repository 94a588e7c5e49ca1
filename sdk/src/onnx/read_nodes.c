/* sdk/src/onnx/read_nodes.c - the main graph's nodes, read in place from the
 * mapped file.
 *
 * A million-node model is mostly NodeProto messages.  Unpacked by protobuf-c,
 * each would be some twenty allocations: the message, its name and op_type,
 * the input and output arrays and every name in them, each attribute and
 * its name and values; the names of inputs and outputs would be copied only
 * to be looked up and freed again.  Here a node is read where it lies:
 *   - its input names are looked up in the name map straight from the file
 *     (ir_names_get_mem), never copied;
 *   - its output names become the names of its values, copied once into
 *     the model's arena (ir/arena.c), as are its name, op_type, domain and
 *     doc_string, which the node holds (no NodeProto is made: the save
 *     builds each node's message from the IR);
 *   - its attributes are unpacked by protobuf-c into the arena, through
 *     protobuf-c's allocator hook, once for each distinct attribute: nodes
 *     whose attribute has the same bytes share one message (a model repeats
 *     its kernel shapes, strides, pads and perms over and over), as nodes
 *     share the copy of an op_type or a domain.  Sharing is safe because
 *     nothing changes an attribute message in place: a node that changes
 *     its attributes first gets a copy of its own (ir_node_fields_own).
 * The node the IR gets is the one protobuf-c's tree would give: the same
 * fields, attribute messages unpacked by protobuf-c itself, the
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

/* Where node_scan found a node's input or output names (their bytes in the
 * mapping, as the field holds them), and what look_ahead made of them. */
typedef struct name_ref {
    const uint8_t *p;
    size_t len;
    size_t text;   /* the name: the bytes up to the first NUL (0: an omitted one) */
    ph_value *v;   /* an input found among the values the last nodes made, or NULL */
    uint32_t hash; /* ir_name_hash of the name, when not found there */
} name_ref;

/* The reader's arrays of name_ref, kept from node to node. */
typedef struct name_refs {
    name_ref *d;
    size_t cap;
} name_refs;

typedef struct node_view {
    size_t n_in, n_out, n_attr;
    onnx_wire_field single[NODE_DOMAIN + 1]; /* name, op_type, doc_string, domain by number */
    unsigned seen;                          /* bit per singular field given */
    name_ref *in, *out;                     /* n_in and n_out of them (the reader's arrays) */
} node_view;

/* The length-delimited field at *p (advanced past it): in one step when its
 * tag and length take a byte each, as nearly every field of a node does.
 * 0, or -1 when it is no length-delimited field or malformed. */
static inline int next_bytes(const uint8_t **pp, const uint8_t *end, onnx_wire_field *f)
{
    const uint8_t *p = *pp;
    if (end - p >= 2 && p[0] < 0x80 && (p[0] & 7) == 2 && p[0] >= 8 && p[1] < 0x80 &&
        (size_t)(end - p - 2) >= p[1]) {
        f->num = p[0] >> 3;
        f->type = 2;
        f->start = p;
        f->payload = p + 2;
        f->len = p[1];
        f->end = *pp = p + 2 + p[1];
        return 0;
    }
    return onnx_wire_next(pp, end, f) || f->type != 2 ? -1 : 0;
}

/* Room for n refs in *r; 0 or PH_ENOMEM. */
static int refs_room(name_refs *r, size_t n)
{
    return n <= r->cap ? 0 : ir_grow((void **)&r->d, &r->cap, n, sizeof *r->d);
}

/* 0 when the reader takes the message: only NodeProto's fields, each
 * length-delimited, the singular ones at most once; else 1, or PH_ENOMEM.
 * The input and output names go to ins and outs. */
static int node_scan(const uint8_t *p, size_t len, node_view *v, name_refs *ins, name_refs *outs)
{
    v->n_in = v->n_out = v->n_attr = 0;
    v->seen = 0;
    const uint8_t *end = p + len;
    while (p < end) {
        onnx_wire_field f;
        if (next_bytes(&p, end, &f) || f.num > NODE_DOMAIN)
            return 1;
        if (f.num == NODE_INPUT) {
            if (refs_room(ins, v->n_in + 1))
                return PH_ENOMEM;
            ins->d[v->n_in++] = (name_ref){.p = f.payload, .len = f.len};
        } else if (f.num == NODE_OUTPUT) {
            if (refs_room(outs, v->n_out + 1))
                return PH_ENOMEM;
            outs->d[v->n_out++] = (name_ref){.p = f.payload, .len = f.len};
        } else if (f.num == NODE_ATTRIBUTE) {
            v->n_attr++;
        } else {
            if (v->seen & (1u << f.num))
                return 1;
            v->seen |= 1u << f.num;
            v->single[f.num] = f;
        }
    }
    v->in = ins->d;
    v->out = outs->d;
    return 0;
}

/* 1 if a message of the tree holds an unknown field numbered 0, which no
 * valid protobuf encoding has: protobuf-c accepts its tag when the varint
 * is padded (0x81 0x00) but not when written plainly, so such a model would
 * save to bytes that no longer load.  Walks every sub-message once (the
 * nesting is as deep as protobuf-c's own unpack went). */
int onnx_has_field_zero(const ProtobufCMessage *m)
{
    for (unsigned i = 0; i < m->n_unknown_fields; i++)
        if (m->unknown_fields[i].tag == 0)
            return 1;
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + fd->quantifier_offset);
            ProtobufCMessage *const *arr = *(ProtobufCMessage *const *const *)(base + fd->offset);
            for (size_t k = 0; k < n; k++)
                if (arr[k] && onnx_has_field_zero(arr[k]))
                    return 1;
            continue;
        }
        if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && *(const uint32_t *)(base + fd->quantifier_offset) != fd->id)
            continue; /* another member of the oneof is set */
        const ProtobufCMessage *sub = *(ProtobufCMessage *const *)(base + fd->offset);
        if (sub && onnx_has_field_zero(sub))
            return 1;
    }
    return 0;
}

/* ------------------------------------------------------ shared pieces */

/* Byte strings of the file already read, and what was made of them: an
 * attribute message (NULL when the reader does not take it) or a string.
 * The keys are copies (the reader's own arena): the file's pages behind
 * the reader may be dropped (onnx_nodes_build). */
typedef struct seen_entry {
    const uint8_t *key; /* a copy of the bytes; NULL: empty slot */
    size_t len;
    uint64_t hash;
    void *val;
    int op;             /* an op_type's ph_op in the default domain, -1 until known */
} seen_entry;

typedef struct seen_table {
    seen_entry *slots;
    size_t cap, count;
} seen_table;

/* The entry of key (val NULL and a copy of key in *keys when new), or NULL
 * on OOM. */
static seen_entry *seen_get(seen_table *t, ir_arena **keys, const uint8_t *key, size_t len, int *is_new)
{
    if (2 * (t->count + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        seen_entry *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return NULL;
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slots[i].key)
                continue;
            size_t k = t->slots[i].hash & (cap - 1);
            while (slots[k].key)
                k = (k + 1) & (cap - 1);
            slots[k] = t->slots[i];
        }
        free(t->slots);
        t->slots = slots;
        t->cap = cap;
    }
    uint64_t h = ir_name_hash(key, len);
    size_t k = h & (t->cap - 1);
    for (; t->slots[k].key; k = (k + 1) & (t->cap - 1)) {
        seen_entry *e = &t->slots[k];
        if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0) {
            *is_new = 0;
            return e;
        }
    }
    uint8_t *copy = ir_arena_alloc(keys, len);
    if (!copy)
        return NULL;
    if (len)
        memcpy(copy, key, len);
    t->slots[k] = (seen_entry){copy, len, h, NULL, -1};
    t->count++;
    *is_new = 1;
    return &t->slots[k];
}

/* The values the last nodes made, newest last: where an exported graph's
 * node finds most of its inputs (a producer is usually near its reader). */
#define RECENT 16

typedef struct recent_value {
    const char *name; /* the value's, in the arena */
    size_t len;
    ph_value *v;
} recent_value;

typedef struct reader {
    ph_model *m;
    seen_table attrs;   /* attribute bytes -> message in the arena */
    seen_table strings; /* op_type / domain bytes -> string in the arena */
    ir_arena *keys;     /* the two tables' keys */
    const ir_mapping *behind; /* the file, when its pages behind the reader may go */
    const uint8_t *dropped;   /* where the pages not dropped yet start */
    name_refs ins, outs; /* the names of the node being read (node_scan) */
    node_view view;      /* of the node being read, when in place */
    recent_value recent[RECENT];
    size_t n_recent;     /* values ever put in recent (the newest at (n_recent - 1) % RECENT) */
    size_t unpacked;     /* nodes protobuf-c unpacked */
} reader;

/* The C string a protobuf-c string field would hold: up to the first NUL. */
static size_t text_len(const onnx_wire_field *f)
{
    const void *nul = memchr(f->payload, 0, f->len);
    return nul ? (size_t)((const uint8_t *)nul - f->payload) : f->len;
}

/* An attribute the IR keeps as it is: no tensor, graph, sparse tensor or
 * type inside, no unknown field. */
static int plain_attr(const Onnx__AttributeProto *a)
{
    return !a->t && !a->n_tensors && !a->g && !a->n_graphs && !a->sparse_tensor &&
           !a->n_sparse_tensors && !a->tp && !a->n_type_protos && !a->base.n_unknown_fields;
}

/* A string field into the arena (NULL when the field is absent); with
 * shared, one copy for every node that has the same string (*entry, when
 * not NULL, gets its entry). */
static int take_string(reader *r, const node_view *v, int num, int shared, char **out,
                       seen_entry **entry)
{
    *out = NULL;
    if (!(v->seen & (1u << num)))
        return 0;
    const onnx_wire_field *f = &v->single[num];
    size_t len = text_len(f);
    int is_new = 1;
    seen_entry *e = shared ? seen_get(&r->strings, &r->keys, f->payload, len, &is_new) : NULL;
    if (shared && !e)
        return PH_ENOMEM;
    if (is_new)
        *out = ir_arena_strndup(&r->m->arena, (const char *)f->payload, len);
    else
        *out = e->val;
    if (e)
        e->val = *out;
    if (entry)
        *entry = e;
    return *out ? 0 : PH_ENOMEM;
}

/* The node's ph_op, looked up once for each op_type of the default domain. */
static int node_op(const Onnx__NodeProto *np, seen_entry *op_type)
{
    if (!op_type || (np->domain && *np->domain && strcmp(np->domain, "ai.onnx") != 0))
        return -1; /* ir_node_load looks it up */
    if (op_type->op < 0)
        op_type->op = (int)ir_op_lookup(NULL, np->op_type);
    return op_type->op;
}

/* The attribute message of the bytes [p, p + len), in the arena, shared
 * by every node that has the same bytes.  0; 1 when the reader does not
 * take it; 2 when its messages nest too deep (*deep set); PH_ENOMEM. */
static int take_attr(reader *r, const uint8_t *p, size_t len, Onnx__AttributeProto **out, ph_error *deep)
{
    int is_new;
    seen_entry *e = seen_get(&r->attrs, &r->keys, p, len, &is_new);
    if (!e)
        return PH_ENOMEM;
    if (!is_new) {
        *out = e->val;
        return e->val ? 0 : 1;
    }
    /* before protobuf-c recurses into it: an attribute of a main-graph node
     * sits at depth 4 (model, graph, node) */
    if (onnx_check_nesting_at(p, len, &onnx__attribute_proto__descriptor, 4, 1, NULL, deep))
        return 2;
    ProtobufCAllocator alloc = ir_arena_allocator(&r->m->arena);
    Onnx__AttributeProto *a = onnx__attribute_proto__unpack(&alloc, len, p);
    if (!a || !plain_attr(a))
        return 1; /* protobuf-c, on the whole message, decides (or fails) */
    if (a->has_s) { /* kept NUL-terminated, as ir_attr_normalize does */
        uint8_t *s = ir_arena_alloc(&r->m->arena, a->s.len + 1);
        if (!s)
            return PH_ENOMEM;
        if (a->s.len)
            memcpy(s, a->s.data, a->s.len);
        s[a->s.len] = 0;
        a->s.data = s;
    }
    e->val = *out = a;
    return 0;
}

/* The names of the node just scanned (*v), before its node is made: an
 * input among the values the last nodes made is taken from there (names
 * are unique in the map, and every value of recent is in it under its
 * name, so it is the one the map would give); for any other input, and for
 * each output (which the build adds to the map), the map's slot is brought
 * into the cache now.  On a large graph the map's slots are cache misses;
 * the node's making (its strings, attributes, allocation) comes between
 * and hides them. */
static void look_ahead(reader *r, node_view *v)
{
    const ir_names *map = &r->m->value_names;
    size_t newest = r->n_recent;
    for (size_t i = 0; i < v->n_in; i++) {
        name_ref *in = &v->in[i];
        const void *nul = memchr(in->p, 0, in->len);
        in->text = nul ? (size_t)((const uint8_t *)nul - in->p) : in->len;
        in->v = NULL;
        if (!in->text)
            continue;
        for (size_t k = 0; k < RECENT && k < newest && !in->v; k++) {
            const recent_value *e = &r->recent[(newest - 1 - k) % RECENT];
            if (e->len == in->text && memcmp(e->name, in->p, in->text) == 0)
                in->v = e->v;
        }
        if (!in->v) {
            in->hash = ir_name_hash(in->p, in->text);
            ir_names_prefetch(map, in->hash);
        }
    }
    for (size_t i = 0; i < v->n_out; i++) {
        name_ref *out = &v->out[i];
        const void *nul = memchr(out->p, 0, out->len);
        out->text = nul ? (size_t)((const uint8_t *)nul - out->p) : out->len;
        if (out->text)
            ir_names_prefetch(map, ir_name_hash(out->p, out->text));
    }
}

/* The fields of the message into the carrier np, in the arena.  0, 1 when
 * the reader does not take it, or an error (with err set). */
static int read_in_place(reader *r, onnx_node_src *src, Onnx__NodeProto *np, ph_error *err)
{
    const uint8_t *data = src->data;
    size_t len = src->len;
    node_view v;
    int scan = node_scan(data, len, &v, &r->ins, &r->outs);
    if (scan)
        return scan == 1 ? 1 : ph_error_set(err, PH_ENOMEM, "out of memory");
    if (v.n_in > UINT32_MAX || v.n_out > UINT32_MAX || v.n_attr > UINT32_MAX)
        return 1;
    look_ahead(r, &v);
    ph_model *m = r->m;
    seen_entry *op_type = NULL;
    int rc = take_string(r, &v, NODE_NAME, 0, &np->name, NULL);
    if (!rc)
        rc = take_string(r, &v, NODE_OP_TYPE, 1, &np->op_type, &op_type);
    if (!rc)
        rc = take_string(r, &v, NODE_DOC_STRING, 0, &np->doc_string, NULL);
    if (!rc)
        rc = take_string(r, &v, NODE_DOMAIN, 1, &np->domain, NULL);
    if (!rc && v.n_attr && !(np->attribute = ir_arena_alloc(&m->arena, v.n_attr * sizeof *np->attribute)))
        rc = PH_ENOMEM;
    const uint8_t *p = data, *end = data + len;
    while (!rc && p < end) {
        onnx_wire_field f;
        next_bytes(&p, end, &f); /* node_scan read them all */
        if (f.num == NODE_ATTRIBUTE && !(rc = take_attr(r, f.payload, f.len, &np->attribute[np->n_attribute], err)))
            np->n_attribute++;
    }
    if (rc == PH_ENOMEM)
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    if (rc == 2)
        return PH_EPARSE; /* too deep: err set */
    if (!rc) {
        src->n_in = (uint32_t)v.n_in;
        src->n_out = (uint32_t)v.n_out;
        src->op = node_op(np, op_type);
        r->view = v;
    }
    return rc;
}

/* Read the message of s into a node appended to m's main graph (no inputs
 * or outputs yet): in place when the reader takes it (r->view then holds
 * its fields), else unpacked by protobuf-c.  0 or an error. */
static int read_node(reader *r, onnx_node_src *s, ph_error *err)
{
    ph_model *m = r->m;
    Onnx__NodeProto carrier = ONNX__NODE_PROTO__INIT;
    int got = read_in_place(r, s, &carrier, err);
    if (got == 0) {
        s->in_place = 1;
        s->node = ir_node_load(m->graph, &carrier, 1, s->n_in, s->n_out, s->op);
    } else if (got != 1) {
        return got;
    } else {
        /* before protobuf-c recurses into it: a main-graph node sits at
         * depth 3 (model, graph) */
        int rc = onnx_check_nesting_at(s->data, s->len, &onnx__node_proto__descriptor, 3, 1, NULL, err);
        if (rc)
            return rc;
        Onnx__NodeProto *np = onnx__node_proto__unpack(NULL, s->len, s->data);
        if (!np)
            return ph_error_set(err, PH_EPARSE, "not a valid ONNX model: protobuf parse failed");
        if (onnx_has_field_zero(&np->base)) {
            protobuf_c_message_free_unpacked(&np->base, NULL);
            return ph_error_set(err, PH_EPARSE, "not a valid ONNX model: a field numbered 0 (not valid protobuf)");
        }
        s->node = ir_node_load(m->graph, np, 0, np->n_input, np->n_output, -1); /* np taken over */
        r->unpacked++;
    }
    return s->node ? 0 : ph_error_set(err, PH_ENOMEM, "out of memory");
}

static void reader_free(reader *r)
{
    free(r->attrs.slots);
    free(r->strings.slots);
    ir_arena_free(r->keys);
    free(r->ins.d);
    free(r->outs.d);
}

/* ------------------------------------------------------------ building */

/* The outputs of a node read in place. */
static int outputs_in_place(ph_graph *g, ph_node *n, const onnx_node_src *s, ph_error *err)
{
    const uint8_t *p = s->data, *end = s->data + s->len;
    for (size_t i = 0; p < end;) {
        onnx_wire_field f;
        next_bytes(&p, end, &f); /* node_scan read them all */
        if (f.num != NODE_OUTPUT)
            continue;
        size_t len = text_len(&f);
        if (len) { /* else an omitted optional output */
            char *name = ir_arena_strndup(&g->model->arena, (const char *)f.payload, len);
            if (!name)
                return ph_error_set(err, PH_ENOMEM, "out of memory");
            int rc = ir_node_load_output(n, i, name, 1, err);
            if (rc)
                return rc;
        }
        i++;
    }
    return 0;
}

static int undefined_input(const ph_node *n, const char *name, size_t len, ph_error *err)
{
    return ph_error_set(err, PH_EPARSE, "node '%s' (%s): input '%.*s' is not defined", ph_node_name(n),
                        ph_node_op_type(n), (int)(len > 300 ? 300 : len), name);
}

/* The inputs of a node read in place, looked up by the names in the file. */
static int resolve_in_place(ph_node *n, const onnx_node_src *s, ph_error *err)
{
    const uint8_t *p = s->data, *end = s->data + s->len;
    for (size_t i = 0; p < end;) {
        onnx_wire_field f;
        next_bytes(&p, end, &f); /* node_scan read them all */
        if (f.num != NODE_INPUT)
            continue;
        const char *name = (const char *)f.payload;
        size_t len = text_len(&f);
        n->inputs[i] = NULL;
        n->n_inputs = i + 1;
        if (len) { /* else an omitted optional input */
            ph_value *v = ir_names_get_mem(&n->graph->model->value_names, name, len);
            if (!v || !ir_in_scope(v, n->graph))
                return undefined_input(n, name, len, err);
            n->inputs[i] = v;
            if (ir_add_use(v, n, (uint32_t)i))
                return ph_error_set(err, PH_ENOMEM, "out of memory");
        }
        i++;
    }
    return 0;
}

/* The value input in names when one is defined, else NULL: the one
 * look_ahead found among the values the last nodes made, else the model's
 * name map's. */
static ph_value *find_value(reader *r, const ph_graph *g, const name_ref *in)
{
    if (in->v)
        return in->v;
    ph_value *v = ir_names_get_hashed(&r->m->value_names, (const char *)in->p, in->text, in->hash);
    return v && ir_in_scope(v, g) ? v : NULL;
}

/* Build the node of s, read in place (r->view), when every input it names is
 * defined already: its inputs, then its outputs.  1 when an input is not
 * defined yet (the node is left without inputs and outputs), 0, or an error. */
static int build_in_order(reader *r, const onnx_node_src *s, ph_error *err)
{
    ph_node *n = s->node;
    ph_graph *g = n->graph;
    const node_view *v = &r->view;
    for (size_t i = 0; i < v->n_in; i++) {
        n->inputs[i] = v->in[i].text ? find_value(r, g, &v->in[i]) : NULL;
        if (v->in[i].text && !n->inputs[i])
            return 1; /* read after the rest: as the file is out of order, or the name undefined */
    }
    for (size_t i = 0; i < v->n_in; i++) {
        n->n_inputs = (uint32_t)i + 1;
        if (n->inputs[i] && ir_add_use(n->inputs[i], n, (uint32_t)i))
            return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < v->n_out; i++) {
        size_t len = v->out[i].text;
        if (!len)
            continue; /* an omitted optional output */
        char *name = ir_arena_strndup(&g->model->arena, (const char *)v->out[i].p, len);
        if (!name)
            return ph_error_set(err, PH_ENOMEM, "out of memory");
        int rc = ir_node_load_output(n, i, name, 1, err);
        if (rc)
            return rc;
        r->recent[r->n_recent++ % RECENT] = (recent_value){name, len, n->outputs[i]};
    }
    return 0;
}

/* The same for a node protobuf-c unpacked. */
static int build_unpacked_in_order(ph_node *n, ph_error *err)
{
    const Onnx__NodeProto *np = ir_node_unknown(n);
    for (size_t i = 0; np && i < np->n_input; i++)
        if (np->input[i][0] && !ph_graph_find_value(n->graph, np->input[i]))
            return 1;
    int rc = ir_node_load_proto_outputs(n, err);
    return rc ? rc : onnx_node_resolve_inputs(n, err);
}

/* The file's pages behind the reader go in steps of this many bytes: a
 * million-node graph's 95 MB of nodes would otherwise stay in the process
 * beside the IR built from them until the load's end. */
#define DROP_STEP ((size_t)1 << 20)

int onnx_nodes_build(ph_graph *g, onnx_node_src *src, size_t n, const ir_mapping *behind, onnx_build_facts *facts,
                     ph_error *err)
{
    reader r = {.m = g->model, .behind = n ? behind : NULL, .dropped = n ? src[0].data : NULL};
    int rc = 0;
    size_t i = 0;
    ir_file_check *fc = ir_file_check_new(g->model);
    const ph_node *failed = NULL;
    if (!fc)
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    /* each node as it is read, while every input it names is defined; one
     * read in place is checked for what the file decides while it is in
     * the cache */
    for (; i < n && !rc; i++) {
        rc = read_node(&r, &src[i], err);
        if (!rc)
            rc = src[i].in_place ? build_in_order(&r, &src[i], err) : build_unpacked_in_order(src[i].node, err);
        if (rc == 1)
            break;
        if (!rc && !failed && src[i].in_place && !ir_file_check_node(fc, src[i].node))
            failed = src[i].node;
        /* src[0, i] are built: nothing reads their bytes again (the rest
         * below starts at src[i + 1]; the tables keep copies of their keys) */
        const uint8_t *end = src[i].data + src[i].len;
        if (!rc && r.behind && end > r.dropped && (size_t)(end - r.dropped) >= DROP_STEP)
            r.dropped = ir_mapping_release_range(r.behind, r.dropped, end);
    }
    ir_file_check_free(fc);
    *facts = (onnx_build_facts){.in_order = !rc, .failed = failed};
    if (rc == 1) {
        /* The rest as a whole (src[i] is read): every node's outputs, since a
         * node may read a later one, then every input. */
        size_t first = i;
        rc = 0;
        for (i = first + 1; i < n && !rc; i++)
            rc = read_node(&r, &src[i], err);
        for (i = first; i < n && !rc; i++)
            rc = src[i].in_place ? outputs_in_place(g, src[i].node, &src[i], err)
                                 : ir_node_load_proto_outputs(src[i].node, err);
        for (i = first; i < n && !rc; i++)
            rc = src[i].in_place ? resolve_in_place(src[i].node, &src[i], err)
                                 : onnx_node_resolve_inputs(src[i].node, err);
    }
    reader_free(&r);
    facts->in_place = !r.unpacked;
    for (i = 0; i < n && !rc && r.unpacked; i++)
        if (!src[i].in_place) /* one read in place has no body */
            rc = onnx_node_build_subgraphs(src[i].node, err);
    return rc;
}
