/* sdk/src/schema/table.h - the layout of the generated operator schema
 * table (build/gen/op_schema_table.c, written at build time by
 * gen_schemas.cc from libonnx) that schema.c serves as passhost/schema.h.
 * Everything here is constant data of the library. */
#ifndef PASSHOST_SDK_SCHEMA_TABLE_H
#define PASSHOST_SDK_SCHEMA_TABLE_H

#include <stddef.h>

typedef struct schema_attr {
    const char *name;
    int type;     /* onnx.proto's AttributeProto.AttributeType */
    int required;
} schema_attr;

typedef struct schema_param {
    const char *name;
    int option;   /* ph_param_option */
    const char *type_str; /* "T" (a type variable) or "tensor(int64)" */
    unsigned long long dtypes; /* bit d: tensor dtype d (ph_dtype) allowed */
} schema_param;

/* One version of one operator.  Rows are sorted by (domain, name,
 * since); attrs[attr_first, +n_attrs) by name. */
typedef struct schema_row {
    const char *domain, *name;
    int since, deprecated;
    int min_in, max_in, min_out, max_out; /* max -1: no bound */
    size_t attr_first, n_attrs, in_first, n_in, out_first, n_out;
} schema_row;

typedef struct schema_domain {
    const char *name;
    int min, max; /* the opset versions ONNX defines */
} schema_domain;

extern const char schema_onnx_version[];
extern const schema_attr schema_attrs[];
extern const schema_param schema_params[];
extern const schema_row schema_rows[];
extern const size_t schema_row_count;
extern const schema_domain schema_domains[]; /* sorted by name */
extern const size_t schema_domain_count;

#endif
