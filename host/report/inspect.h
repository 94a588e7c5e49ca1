/* host/report/inspect.h - the summary of a model and the side-by-side table of
 * `passhost --inspect A.onnx [B.onnx ...]`, also printed after a run to
 * compare the input with the output (not with -q).
 *
 * A host_model_info is plain data taken from a loaded model: inputs and
 * outputs with their types, the ir version and opsets, the node count and
 * the op-type histogram (subgraph nodes included, as in the node count),
 * initializer count and bytes, and the file's size.  The table has one
 * column per model; on a terminal its width is the terminal's (TIOCGWINSZ,
 * else COLUMNS) and it uses box-drawing rules and bold headers, elsewhere
 * it is plain ASCII, as wide as COLUMNS says or as its cells need.  Cells
 * too long for their column are cut with a marker; models that do not fit
 * side by side are printed in several blocks.
 *
 * Ownership: a host_model_info owns every string in it (host_model_info_free).
 */
#ifndef PASSHOST_HOST_INSPECT_H
#define PASSHOST_HOST_INSPECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "passhost/host.h"
#include "passhost/passhost.h"


typedef struct host_op_count {
    char *op;      /* "Conv", or "domain.Op" outside the default domain */
    size_t count;
} host_op_count;

typedef struct host_io_info {
    char *name;
    char *type;    /* "float[1,3,224,224]", "int64[batch,16]", "float[?]" */
} host_io_info;

typedef struct host_opset {
    char *domain;  /* "ai.onnx" for the default domain */
    int64_t version;
} host_opset;

typedef struct host_model_info {
    char *path;               /* the name to show */
    long long file_bytes;     /* the file's size, -1 when unknown */
    int64_t ir_version;
    char *opsets;             /* "ai.onnx 13, com.microsoft 1" */
    host_opset *opset_list;   /* the same as data */
    size_t n_opsets;
    host_io_info *inputs;     /* graph inputs that are no initializer */
    size_t n_inputs;
    host_io_info *outputs;
    size_t n_outputs;
    size_t nodes;             /* main graph and subgraphs */
    host_op_count *ops;       /* most frequent first, then by name */
    size_t n_ops;
    size_t initializers;      /* main graph and subgraphs */
    uint64_t initializer_bytes;
} host_model_info;

/* Fill *info from m (borrowed; not changed).  path: the name to show;
 * file: the file to measure (NULL: size unknown). */
void host_model_info_take(host_model_info *info, ph_model *m, const char *path, const char *file);
/* Measure the file again (after a save). */
void host_model_info_set_file(host_model_info *info, const char *file);
void host_model_info_free(host_model_info *info);

/* The table of n models side by side.  compare: the models are one run's
 * input and output: numbers in later columns show their change from the
 * first.  The width comes from out's terminal, else COLUMNS, else none. */
void host_inspect_table(FILE *out, const host_model_info *infos, size_t n, int compare);

/* "812 B", "1.2 KiB", "3.40 MiB" into buf. */
void host_format_bytes(char *buf, size_t size, double bytes);

/* passhost --inspect: load each of the n models at paths (borrowed) and
 * print the table on out.  0, HOST_EXIT_USAGE (no model given) or HOST_EXIT_MODEL
 * (a model does not load; the message names it). */
int host_inspect_main(const char *const *paths, size_t n, FILE *out, ph_error *err);

#endif
