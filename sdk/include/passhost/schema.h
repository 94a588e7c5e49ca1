/* passhost/schema.h - the ONNX operator schemas: every operator of every
 * domain ONNX defines (ai.onnx, ai.onnx.ml, ai.onnx.training,
 * ai.onnx.preview.training), each version of it, with its input and output
 * counts, formal parameters and attributes (name, type, required).
 *
 * The table is made when passhost is built, from the schemas compiled into
 * libonnx (Debian's libonnx-dev), the same source ONNX's own checker uses;
 * ph_schema_onnx_version() names that release.  The loader and the verifier
 * use it (an attribute of the wrong type, a required input missing); passes
 * and tools can ask it which operators exist, at which opset a version
 * begins (opset conversion), or what an attribute's type must be.
 *
 * Domains: "" and "ai.onnx" both name the default domain; the schemas
 * report "".  Opsets are the version numbers of a model's opset_import.
 *
 * Ownership: every pointer returned is constant data of the library, valid
 * as long as it is loaded; nothing is freed.  Thread-safe (no state). */
#ifndef PASSHOST_SCHEMA_H
#define PASSHOST_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/error.h"

/* One version of one operator (opaque; constant data of the library). */
typedef struct ph_schema ph_schema;

/* How many actual inputs (outputs) a formal parameter takes. */
typedef enum ph_param_option {
    PH_PARAM_SINGLE = 0,   /* exactly one, never omitted */
    PH_PARAM_OPTIONAL = 1, /* one, or omitted ("" or past the end) */
    PH_PARAM_VARIADIC = 2  /* any number, the last parameter */
} ph_param_option;

/* The ONNX release of the table ("1.12.0"). */
PH_API const char *ph_schema_onnx_version(void);

/* ----------------------------------------------------------- lookups */

/* The version of op_type in domain that is in force at opset `opset`: the
 * one with the greatest since_version <= opset.  NULL when the domain has
 * no such operator at that opset (not yet, or not at all). */
PH_API const ph_schema *ph_schema_find(const char *domain, const char *op_type, int64_t opset);

/* The oldest version of op_type in domain, then each newer one with
 * ph_schema_next (NULL after the newest): the operator's history.  NULL
 * when the domain has no operator of that name. */
PH_API const ph_schema *ph_schema_first(const char *domain, const char *op_type);
PH_API const ph_schema *ph_schema_next(const ph_schema *s);

/* Every schema, sorted by domain, name and since_version:
 * ph_schema_at(i) for i < ph_schema_count(). */
PH_API size_t ph_schema_count(void);
PH_API const ph_schema *ph_schema_at(size_t i);

/* 1 when ONNX defines domain, with the range of its opset versions in
 * *min_opset and *max_opset (either may be NULL); 0 otherwise. */
PH_API int ph_schema_domain_known(const char *domain, int64_t *min_opset, int64_t *max_opset);

/* ------------------------------------------------------ one version */

PH_API const char *ph_schema_domain(const ph_schema *s);  /* "" for ai.onnx */
PH_API const char *ph_schema_name(const ph_schema *s);
PH_API int64_t ph_schema_since_version(const ph_schema *s);
PH_API int ph_schema_deprecated(const ph_schema *s);

/* How many inputs (outputs) a node may have: *max is -1 when unbounded. */
PH_API void ph_schema_input_range(const ph_schema *s, int *min, int *max);
PH_API void ph_schema_output_range(const ph_schema *s, int *min, int *max);

/* The formal input (output) parameters, in order. */
PH_API size_t ph_schema_input_count(const ph_schema *s);
PH_API const char *ph_schema_input_name(const ph_schema *s, size_t i);
PH_API ph_param_option ph_schema_input_option(const ph_schema *s, size_t i);
PH_API size_t ph_schema_output_count(const ph_schema *s);
PH_API const char *ph_schema_output_name(const ph_schema *s, size_t i);
PH_API ph_param_option ph_schema_output_option(const ph_schema *s, size_t i);

/* The type of formal input (output) parameter i: its type string, a type
 * variable of the schema ("T": every parameter with the same string has
 * the same dtype in one node) or a fixed type ("tensor(int64)"); and the
 * tensor dtypes it allows, bit d set for ph_dtype d (sequences, optionals
 * and maps are no tensor dtype: not in the mask).  NULL / 0 past the end.
 * E.g. Reshape-14: input 0 "T" (every dtype), input 1 "tensor(int64)"
 * (1 << 7 only); Shape's output "T1" = int64 only. */
PH_API const char *ph_schema_input_type(const ph_schema *s, size_t i);
PH_API const char *ph_schema_output_type(const ph_schema *s, size_t i);
PH_API uint64_t ph_schema_input_dtypes(const ph_schema *s, size_t i);
PH_API uint64_t ph_schema_output_dtypes(const ph_schema *s, size_t i);
/* The formal parameter that a node's actual input (output) k fills: k, or
 * the last one when it is variadic and k is past it; -1 when none. */
PH_API long ph_schema_input_formal(const ph_schema *s, size_t k);
PH_API long ph_schema_output_formal(const ph_schema *s, size_t k);

/* The attributes, sorted by name.  Types are onnx.proto's
 * AttributeProto.AttributeType numbers (1 FLOAT, 2 INT, 3 STRING, 4 TENSOR,
 * 5 GRAPH, 6 FLOATS, 7 INTS, 8 STRINGS (as ph_attr_type), 9 TENSORS, 10
 * GRAPHS, 11 SPARSE_TENSOR, 12 SPARSE_TENSORS, 13 TYPE_PROTO, 14
 * TYPE_PROTOS). */
PH_API size_t ph_schema_attr_count(const ph_schema *s);
PH_API const char *ph_schema_attr_name(const ph_schema *s, size_t i);
PH_API int ph_schema_attr_type(const ph_schema *s, size_t i);
PH_API int ph_schema_attr_required(const ph_schema *s, size_t i);
/* The index of the attribute called name, or -1. */
PH_API long ph_schema_attr_find(const ph_schema *s, const char *name);

/* "INTS" for 7 (an AttributeProto.AttributeType), "UNDEFINED" for 0,
 * "UNKNOWN" for a number onnx.proto does not define.  Static text. */
PH_API const char *ph_attr_type_name(int type);

#endif
