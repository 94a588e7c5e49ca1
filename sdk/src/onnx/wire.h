/* sdk/src/onnx/wire.h - the protobuf wire format, field by field: what the
 * loader reads itself (the skeleton of a model, nodes in place) instead of
 * handing it to protobuf-c. */
#ifndef PASSHOST_SDK_ONNX_WIRE_H
#define PASSHOST_SDK_ONNX_WIRE_H

#include <stddef.h>
#include <stdint.h>

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

/* The field at *p (advanced past it); 0, or -1 when it is truncated, its
 * number is 0 or too large, or its wire type is a group (3, 4) or does not
 * exist (6, 7). */
int onnx_wire_next(const uint8_t **p, const uint8_t *end, onnx_wire_field *f);

#endif
