/* sdk/src/onnx/nesting.c - the messages of a model, walked in the wire
 * format before (or without) anything being unpacked: how deep they nest,
 * and which external-data files a model file names.
 *
 * protobuf-c unpacks a sub-message by recursion, with no limit, and so do
 * the loader and the passes over If/Loop/Scan bodies: a file of 1.3 MB
 * holding bodies nested 10,000 deep overflows the stack.  The loader calls
 * onnx_check_nesting first; it walks the bytes with an explicit stack of
 * ONNX_MAX_MESSAGE_DEPTH entries (no recursion), led by protobuf-c's own
 * descriptors of onnx.proto (which fields are messages), and refuses a
 * model whose messages nest deeper than that: protobuf's own default
 * recursion limit (100), which leaves room for about 31 levels of nested
 * bodies (graph -> node -> attribute -> graph...).  Every recursion of the
 * SDK over bodies, types or messages is then bounded by that depth.
 *
 * Bytes that are not valid protobuf are not judged here: the walk skips a
 * malformed message (its length is known from its parent) and goes on with
 * its siblings; protobuf-c refuses it afterwards, before it recurses into
 * anything inside it (it reads a message's whole level before its
 * sub-messages).
 *
 * The same walk finds the locations of a file's external data
 * (onnx_external_locations) for the commit of a save, which removes the data
 * files of the model it replaces (commit.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "wire.h"

typedef struct level {
    const uint8_t *end;                   /* the message's last byte + 1 */
    const ProtobufCMessageDescriptor *desc;
    int graph;                            /* an onnx.GraphProto */
} level;

/* Called for each message entered, with its bytes and where it sits (the
 * descriptor of its parent and its field number there).  Nonzero stops the
 * walk with that value. */
typedef int (*wire_visit)(void *user, const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
                          const ProtobufCMessageDescriptor *parent, unsigned field);

/* A varint at *p (< end): 0 and the value, or -1 when malformed. */
static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 0;
    }
    return -1;
}

/* Skip the value of a field of wire type `wire` at *p; for a length-
 * delimited one, its payload is [*payload, *p).  0, or -1 when malformed. */
static int skip_value(const uint8_t **p, const uint8_t *end, unsigned wire, const uint8_t **payload)
{
    uint64_t v;
    size_t left = (size_t)(end - *p);
    switch (wire) {
    case 0:
        return read_varint(p, end, &v);
    case 1:
        if (left < 8)
            return -1;
        *p += 8;
        return 0;
    case 5:
        if (left < 4)
            return -1;
        *p += 4;
        return 0;
    case 2:
        if (read_varint(p, end, &v) || v > (uint64_t)(end - *p))
            return -1;
        *payload = *p;
        *p += v;
        return 0;
    }
    return -1; /* groups (3, 4) and the invalid 6, 7 */
}

/* Which fields of a message type are messages, for field numbers below
 * 32 (all of onnx.proto's but a few): looked up in the descriptor once per
 * walk instead of once per field. */
typedef struct field_cache {
    const ProtobufCMessageDescriptor *desc;
    const ProtobufCMessageDescriptor *sub[32]; /* NULL: not a message */
} field_cache;

enum { CACHED_TYPES = 32 };

static const ProtobufCMessageDescriptor *sub_message(field_cache *cache, int *n_cache,
                                                     const ProtobufCMessageDescriptor *desc, uint64_t number)
{
    if (number < 32) {
        for (int i = 0; i < *n_cache; i++)
            if (cache[i].desc == desc)
                return cache[i].sub[number];
        if (*n_cache < CACHED_TYPES) {
            field_cache *c = &cache[(*n_cache)++];
            c->desc = desc;
            for (unsigned k = 0; k < 32; k++) {
                const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(desc, k);
                c->sub[k] = f && f->type == PROTOBUF_C_TYPE_MESSAGE ? f->descriptor : NULL;
            }
            return c->sub[number];
        }
    }
    if (number > UINT32_MAX)
        return NULL;
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(desc, (unsigned)number);
    return f && f->type == PROTOBUF_C_TYPE_MESSAGE ? f->descriptor : NULL;
}

/* Walk the message of type desc in data[0, size), which sits at depth
 * `at` of its model (the ModelProto is at 1) under `graphs` GraphProto
 * messages.  Returns the visitor's nonzero value, or -1 (with *graphs_deep
 * the most GraphProto levels seen so far) when the messages nest deeper
 * than ONNX_MAX_MESSAGE_DEPTH, else 0. */
static int wire_walk_at(const uint8_t *data, size_t size, const ProtobufCMessageDescriptor *desc, int at,
                        int graphs, wire_visit visit, void *user, int *graphs_deep)
{
    level stack[ONNX_MAX_MESSAGE_DEPTH];
    field_cache cache[CACHED_TYPES];
    int n_cache = 0;
    int depth = at; /* of the message on top of the stack; stack[depth - at] */
    const uint8_t *p = data;
    if (at < 1 || at > ONNX_MAX_MESSAGE_DEPTH)
        return -1;
    stack[0] = (level){data + size, desc, desc == &onnx__graph_proto__descriptor};
    graphs += stack[0].graph;
    *graphs_deep = graphs;
    while (depth >= at) {
        level *top = &stack[depth - at];
        if (p >= top->end) { /* the message is over: back to its parent */
            p = top->end;
            graphs -= top->graph;
            depth--;
            continue;
        }
        uint64_t tag;
        const uint8_t *payload = NULL;
        if (read_varint(&p, top->end, &tag) || skip_value(&p, top->end, (unsigned)(tag & 7), &payload)) {
            p = top->end; /* malformed: protobuf-c refuses it; the siblings are still walked */
            continue;
        }
        if ((tag & 7) != 2)
            continue;
        const ProtobufCMessageDescriptor *sub = sub_message(cache, &n_cache, top->desc, tag >> 3);
        if (!sub)
            continue;
        if (depth == ONNX_MAX_MESSAGE_DEPTH)
            return -1;
        if (visit) {
            int rc = visit(user, sub, payload, (size_t)(p - payload), top->desc, (unsigned)(tag >> 3));
            if (rc)
                return rc;
        }
        int graph = sub == &onnx__graph_proto__descriptor;
        stack[depth++ - at + 1] = (level){p, sub, graph};
        p = payload;
        graphs += graph;
        if (graphs > *graphs_deep)
            *graphs_deep = graphs;
    }
    return 0;
}

/* The walk of a whole ModelProto. */
static int wire_walk(const uint8_t *data, size_t size, wire_visit visit, void *user, int *graphs_deep)
{
    return wire_walk_at(data, size, &onnx__model_proto__descriptor, 1, 0, visit, user, graphs_deep);
}

int onnx_check_nesting_at(const uint8_t *data, size_t size, const ProtobufCMessageDescriptor *desc, int at,
                          int graphs, const char *path, ph_error *err)
{
    int deep = 0;
    if (wire_walk_at(data, size, desc, at, graphs, NULL, NULL, &deep) == 0)
        return 0;
    return ph_error_set(err, PH_EPARSE, "%s%srefused: its protobuf messages nest more than %d deep (%d "
                        "levels of If/Loop/Scan bodies and more); passhost reads at most %d levels, "
                        "protobuf's own default limit (about %d levels of bodies)", path ? path : "",
                        path ? ": " : "", ONNX_MAX_MESSAGE_DEPTH, deep - 1, ONNX_MAX_MESSAGE_DEPTH,
                        ONNX_MAX_MESSAGE_DEPTH / 3 - 2);
}

int onnx_check_nesting(const uint8_t *data, size_t size, const char *path, ph_error *err)
{
    return onnx_check_nesting_at(data, size, &onnx__model_proto__descriptor, 1, 0, path, err);
}

/* ------------------------------------------------ external-data locations */

typedef struct locations {
    char **names;
    size_t n, cap;
    int oom;
} locations;

/* The string field `field` of a StringStringEntryProto (1 key, 2 value),
 * or NULL (n set to its length). */
static const uint8_t *entry_string(const uint8_t *p, const uint8_t *end, unsigned field, size_t *n)
{
    while (p < end) {
        uint64_t tag;
        const uint8_t *payload = NULL;
        if (read_varint(&p, end, &tag) || skip_value(&p, end, (unsigned)(tag & 7), &payload))
            return NULL;
        if ((tag & 7) == 2 && tag >> 3 == field) {
            *n = (size_t)(p - payload);
            return payload;
        }
    }
    return NULL;
}

static int add_location(void *user, const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
                        const ProtobufCMessageDescriptor *parent, unsigned field)
{
    locations *l = user;
    if (desc != &onnx__string_string_entry_proto__descriptor || parent != &onnx__tensor_proto__descriptor ||
        field != 13) /* TensorProto.external_data */
        return 0;
    size_t kn = 0, vn = 0;
    const uint8_t *key = entry_string(data, data + size, 1, &kn), *val = entry_string(data, data + size, 2, &vn);
    if (!key || kn != 8 || memcmp(key, "location", 8) != 0 || !val || !vn || memchr(val, 0, vn))
        return 0;
    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->names[i]) == vn && memcmp(l->names[i], val, vn) == 0)
            return 0;
    char *s = malloc(vn + 1);
    if (!s || ir_grow((void **)&l->names, &l->cap, l->n + 1, sizeof *l->names)) {
        free(s);
        l->oom = 1;
        return 1;
    }
    memcpy(s, val, vn);
    s[vn] = 0;
    l->names[l->n++] = s;
    return 0;
}

int onnx_external_locations(const uint8_t *data, size_t size, char ***names, size_t *n)
{
    locations l = {0};
    int graphs;
    wire_walk(data, size, add_location, &l, &graphs); /* too deep: what was found so far */
    if (l.oom) {
        onnx_free_strings(l.names, l.n);
        *names = NULL;
        *n = 0;
        return PH_ENOMEM;
    }
    *names = l.names;
    *n = l.n;
    return 0;
}

void onnx_free_strings(char **s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i]);
    free(s);
}
