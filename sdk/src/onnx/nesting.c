/* sdk/src/onnx/nesting.c - how deep a model's messages nest, read from the
 * wire format before anything is unpacked.
 *
 * protobuf-c unpacks a sub-message by recursion, with no limit, and so do
 * the loader and the passes over If/Loop/Scan bodies: a file of 1.3 MB
 * holding bodies nested 10,000 deep overflows the stack.  The loader calls
 * phi_check_nesting first; it walks the bytes with an explicit stack of
 * PHI_MAX_MESSAGE_DEPTH entries (no recursion), led by protobuf-c's own
 * descriptors of onnx.proto (which fields are messages), and refuses a
 * model whose messages nest deeper than that: protobuf's own default
 * recursion limit (100), which leaves room for about 32 levels of nested
 * bodies (graph -> node -> attribute -> graph...).  Every recursion of the
 * SDK over bodies, types or messages is then bounded by that depth.
 *
 * Bytes that are not valid protobuf are not judged here: the scan skips a
 * malformed message (its length is known from its parent) and goes on with
 * its siblings; protobuf-c refuses it afterwards, before it recurses into
 * anything inside it (it reads a message's whole level before its
 * sub-messages). */
#include <stdint.h>
#include <string.h>

#include "internal.h"

typedef struct level {
    const uint8_t *end;                   /* the message's last byte + 1 */
    const ProtobufCMessageDescriptor *desc;
    int graph;                            /* an onnx.GraphProto */
} level;

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

int phi_check_nesting(const uint8_t *data, size_t size, const char *path, ph_error *err)
{
    level stack[PHI_MAX_MESSAGE_DEPTH];
    int depth = 1, graphs = 0, deepest_graphs = 0;
    const uint8_t *p = data;
    stack[0] = (level){data + size, &onnx__model_proto__descriptor, 0};
    while (depth > 0) {
        level *top = &stack[depth - 1];
        if (p >= top->end) { /* the message is over: back to its parent */
            p = top->end;
            graphs -= top->graph;
            depth--;
            continue;
        }
        uint64_t tag;
        const uint8_t *payload = NULL;
        if (read_varint(&p, top->end, &tag) || skip_value(&p, top->end, (unsigned)(tag & 7), &payload)) {
            p = top->end; /* malformed: protobuf-c refuses it; the siblings are still scanned */
            continue;
        }
        if ((tag & 7) != 2 || (tag >> 3) > UINT32_MAX)
            continue;
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(top->desc, (unsigned)(tag >> 3));
        if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if (depth == PHI_MAX_MESSAGE_DEPTH)
            return ph_error_set(err, PH_EPARSE, "%s: refused: its protobuf messages nest more than %d deep (%d "
                                "levels of If/Loop/Scan bodies and more); passhost reads at most %d levels, "
                                "protobuf's own default limit (about %d levels of bodies)", path,
                                PHI_MAX_MESSAGE_DEPTH, deepest_graphs - 1, PHI_MAX_MESSAGE_DEPTH,
                                PHI_MAX_MESSAGE_DEPTH / 3 - 2);
        const ProtobufCMessageDescriptor *sub = f->descriptor;
        int graph = sub == &onnx__graph_proto__descriptor;
        stack[depth++] = (level){p, sub, graph};
        p = payload;
        graphs += graph;
        if (graphs > deepest_graphs)
            deepest_graphs = graphs;
    }
    return 0;
}
