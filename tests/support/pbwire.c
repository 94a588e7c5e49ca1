/* tests/support/pbwire.c - ONNX models written as protobuf wire bytes, for
 * tests that need what the builder API does not make (see pbwire.h). */
#include "pbwire.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void pb_byte(pb *b, unsigned char c)
{
    ck_assert_uint_lt(b->len, sizeof b->data);
    b->data[b->len++] = c;
}

void pb_varint(pb *b, uint64_t v)
{
    while (v >= 0x80) {
        pb_byte(b, (unsigned char)(v | 0x80));
        v >>= 7;
    }
    pb_byte(b, (unsigned char)v);
}

void pb_int(pb *b, unsigned field, uint64_t v)
{
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, v);
}

void pb_bytes(pb *b, unsigned field, const void *data, size_t len)
{
    pb_varint(b, (uint64_t)field << 3 | 2);
    pb_varint(b, len);
    for (size_t i = 0; i < len; i++)
        pb_byte(b, ((const unsigned char *)data)[i]);
}

void pb_str(pb *b, unsigned field, const char *s) { pb_bytes(b, field, s, strlen(s)); }

void pb_msg(pb *b, unsigned field, const pb *m) { pb_bytes(b, field, m->data, m->len); }

void pb_value_info(pb *b, unsigned field, const char *name, int elem, int rank, const int64_t *dims)
{
    pb shape = {0}, tensor = {0}, type = {0}, vi = {0};
    for (int i = 0; i < rank; i++) {
        pb dim = {0};
        pb_int(&dim, 1, (uint64_t)dims[i]);
        pb_msg(&shape, 1, &dim);
    }
    pb_int(&tensor, 1, (uint64_t)elem);
    pb_msg(&tensor, 2, &shape);
    pb_msg(&type, 1, &tensor);
    pb_str(&vi, 1, name);
    pb_msg(&vi, 2, &type);
    pb_msg(b, field, &vi);
}

/* NodeProto with up to two inputs and one output, attrs as whole field-5
 * records. */
void pb_node(pb *b, const char *op, const char *in0, const char *in1, const char *out, const pb *attrs)
{
    pb n = {0};
    if (in0)
        pb_str(&n, 1, in0);
    if (in1)
        pb_str(&n, 1, in1);
    pb_str(&n, 2, out);
    pb_str(&n, 3, out); /* node name = output name */
    pb_str(&n, 4, op);
    for (size_t i = 0; attrs && i < attrs->len; i++)
        pb_byte(&n, attrs->data[i]);
    pb_msg(b, 1, &n);
}

/* Attribute value_ints = vals (unpacked repeated int64, type INTS). */
void pb_ints_attr(pb *attrs, const char *name, size_t n, const int64_t *vals)
{
    pb a = {0};
    pb_str(&a, 1, name);
    for (size_t i = 0; i < n; i++)
        pb_int(&a, 8, (uint64_t)vals[i]);
    pb_int(&a, 20, 7);
    pb_msg(attrs, 5, &a);
}

void pb_graph_attr(pb *attrs, const char *name, const pb *graph)
{
    pb a = {0};
    pb_str(&a, 1, name);
    pb_msg(&a, 6, graph);
    pb_int(&a, 20, 5);
    pb_msg(attrs, 5, &a);
}

void pb_model(pb *model, const pb *graph)
{
    pb opset = {0};
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 17);
    pb_int(model, 1, 8);
    pb_msg(model, 7, graph);
    pb_msg(model, 8, &opset);
}

/* Write model bytes to a temporary file and load them. */
ph_model *pb_load(const pb *model)
{
    char path[] = "/tmp/ph_pbwire_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(model->data, 1, model->len, f), model->len);
    ck_assert_int_eq(fclose(f), 0);
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(path, &m, &err);
    unlink(path);
    ck_assert_msg(rc == 0, "loading a test model: %s", err.message);
    return m;
}

