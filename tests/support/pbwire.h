/* tests/support/pbwire.h - ONNX models written as protobuf wire bytes.
 *
 * For tests that need a model the SDK builder does not make directly, or
 * that must control the exact bytes (If bodies read from a file, inputs with
 * default initializers).  Field numbers are those of onnx.proto.  A pb is a
 * fixed 4 KiB buffer on the stack; the helpers fail the test when it is
 * full.  pb_load writes the bytes to a temporary file, loads it with
 * ph_model_load (which must succeed) and returns the model, which the caller
 * frees. */
#ifndef PASSHOST_TESTS_PBWIRE_H
#define PASSHOST_TESTS_PBWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

typedef struct pb {
    unsigned char data[4096];
    size_t len;
} pb;

void pb_byte(pb *b, unsigned char c);
void pb_varint(pb *b, uint64_t v);
/* A varint field. */
void pb_int(pb *b, unsigned field, uint64_t v);
/* A length-delimited field. */
void pb_bytes(pb *b, unsigned field, const void *data, size_t len);
void pb_str(pb *b, unsigned field, const char *s);
/* Message m as field `field` of b. */
void pb_msg(pb *b, unsigned field, const pb *m);
/* A ValueInfoProto (tensor type elem with dims; rank may be 0) as field `field`. */
void pb_value_info(pb *b, unsigned field, const char *name, int elem, int rank, const int64_t *dims);
/* A NodeProto (field 1 of a graph) with up to two inputs and one output,
 * named after its output; attrs holds whole field-5 records (or NULL). */
void pb_node(pb *b, const char *op, const char *in0, const char *in1, const char *out, const pb *attrs);
/* An INTS attribute record. */
void pb_ints_attr(pb *attrs, const char *name, size_t n, const int64_t *vals);
/* A GRAPH attribute record holding the graph message `graph`. */
void pb_graph_attr(pb *attrs, const char *name, const pb *graph);
/* A ModelProto around the graph message `graph`: IR version 8, the
 * default domain at opset 17. */
void pb_model(pb *model, const pb *graph);
ph_model *pb_load(const pb *model);

#endif
