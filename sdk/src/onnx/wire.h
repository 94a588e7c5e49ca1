/* sdk/src/onnx/wire.h - what the loader and the save share besides the IR
 * builder: scans of a ModelProto's wire format that unpack nothing
 * (nesting.c) and the file a save replaces (commit.c). */
#ifndef PASSHOST_SDK_ONNX_WIRE_H
#define PASSHOST_SDK_ONNX_WIRE_H

#include "internal.h"

/* How deep protobuf messages may nest in a model (protobuf's own default
 * recursion limit; about 33 levels of If/Loop/Scan bodies).  The loader
 * refuses deeper models before unpacking them (nesting.c), so every
 * recursion over bodies, types and messages is bounded by it. */
#define ONNX_MAX_MESSAGE_DEPTH 100
/* 0 when the ModelProto in data[0, size) nests no deeper than that, else
 * PH_EPARSE with a message naming path.  Reads the wire format only. */
int onnx_check_nesting(const uint8_t *data, size_t size, const char *path, ph_error *err);

/* The external-data locations a ModelProto's bytes name (every tensor of
 * every graph), each once, into *names (caller frees with
 * onnx_free_strings; NULL when there are none).  0 or PH_ENOMEM. */
int onnx_external_locations(const uint8_t *data, size_t size, char ***names, size_t *n);
void onnx_free_strings(char **s, size_t n);
/* The file a save to path replaces: path itself, or the file a symbolic
 * link there names.  0, or -1 (a link to nothing, a path too long). */
int onnx_output_target(const char *path, char *target, size_t size);

#endif
