/* sdk/src/onnx/wire.c - the protobuf wire format, field by field (wire.h). */
#include "wire.h"

int onnx_wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return -1;
        uint8_t c = *(*p)++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

int onnx_wire_next(const uint8_t **p, const uint8_t *end, onnx_wire_field *f)
{
    uint64_t tag, v;
    f->start = *p;
    if (onnx_wire_varint(p, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
        return -1;
    f->num = (uint32_t)(tag >> 3);
    f->type = (int)(tag & 7);
    f->payload = NULL;
    f->len = 0;
    switch (f->type) {
    case 0:
        if (onnx_wire_varint(p, end, &v))
            return -1;
        break;
    case 1:
        if ((size_t)(end - *p) < 8)
            return -1;
        *p += 8;
        break;
    case 5:
        if ((size_t)(end - *p) < 4)
            return -1;
        *p += 4;
        break;
    case 2:
        if (onnx_wire_varint(p, end, &v) || v > (uint64_t)(end - *p))
            return -1;
        f->payload = *p;
        f->len = (size_t)v;
        *p += v;
        break;
    default: /* groups (3, 4) are not used by ONNX; 6 and 7 do not exist */
        return -1;
    }
    f->end = *p;
    return 0;
}
