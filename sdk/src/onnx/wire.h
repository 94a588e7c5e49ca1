/* sdk/src/onnx/wire.h - the protobuf wire format, field by field: what the
 * loader reads itself (the skeleton of a model, nodes in place) instead of
 * handing it to protobuf-c; scans of a ModelProto that unpack nothing
 * (nesting.c); the file a save replaces (commit.c); and the varints the
 * save writes around the node messages it packs one by one (save.c). */
#ifndef PASSHOST_SDK_ONNX_WIRE_H
#define PASSHOST_SDK_ONNX_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

typedef struct onnx_wire_field {
    uint32_t num;
    int type;               /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
    const uint8_t *start;   /* the tag */
    const uint8_t *payload; /* for length-delimited fields */
    size_t len;
    const uint8_t *end;     /* one past the field */
} onnx_wire_field;

/* A varint at *p (advanced past it); 0, or -1 when truncated or longer
 * than 10 bytes. */
int onnx_wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *out);
/* v as a varint into out (room for 10 bytes); returns the bytes written,
 * which onnx_wire_varint_size gives without writing.  Inline: the save
 * writes several for each node. */
static inline size_t onnx_wire_put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        out[n++] = (uint8_t)(v | 0x80);
    out[n++] = (uint8_t)v;
    return n;
}

static inline size_t onnx_wire_varint_size(uint64_t v)
{
    size_t n = 1;
    for (; v >= 0x80; v >>= 7)
        n++;
    return n;
}

/* The field at *p (advanced past it); 0, or -1 when it is truncated, its
 * number is 0 or too large, or its wire type is a group (3, 4) or does not
 * exist (6, 7). */
int onnx_wire_next(const uint8_t **p, const uint8_t *end, onnx_wire_field *f);

/* How deep protobuf messages may nest in a model (protobuf's own default
 * recursion limit; about 33 levels of If/Loop/Scan bodies).  The loader
 * refuses deeper models before unpacking them (nesting.c), so every
 * recursion over bodies, types and messages is bounded by it. */
#define ONNX_MAX_MESSAGE_DEPTH 100
/* 0 when the ModelProto in data[0, size) nests no deeper than that, else
 * PH_EPARSE with a message naming path.  Reads the wire format only. */
int onnx_check_nesting(const uint8_t *data, size_t size, const char *path, ph_error *err);
/* The same for a part of a model read on its own: the message of type desc
 * in data[0, size), which sits at depth `at` (the ModelProto is at 1)
 * under `graphs` GraphProto messages (a main-graph node: at 3 under 1).
 * With path NULL the message does not name the file. */
int onnx_check_nesting_at(const uint8_t *data, size_t size, const ProtobufCMessageDescriptor *desc, int at,
                          int graphs, const char *path, ph_error *err);

/* The external-data locations a ModelProto's bytes name (every tensor of
 * every graph), each once, into *names (caller frees with
 * onnx_free_strings; NULL when there are none).  0 or PH_ENOMEM. */
int onnx_external_locations(const uint8_t *data, size_t size, char ***names, size_t *n);
void onnx_free_strings(char **s, size_t n);
/* The file a save to path replaces: path itself, or the file a symbolic
 * link there names.  0, or -1 (a link to nothing, a path too long). */
int onnx_output_target(const char *path, char *target, size_t size);

#endif
