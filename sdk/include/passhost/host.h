/* passhost/host.h - the calls for programs that run passes (hosts), not for
 * passes: loading and saving models, making the context and the parameters
 * a pass runs with, counting and limiting rewrites, running a pattern
 * pass's rules.  passhost's own program (host/) and anything that embeds
 * the SDK to run passes include it; a pass never needs it, and
 * passhost/passhost.h does not include it.
 */
#ifndef PASSHOST_HOST_H
#define PASSHOST_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/error.h"
#include "passhost/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if data (the first n bytes of a file of file_size bytes) starts like an
 * ONNX ModelProto: every field a ModelProto field with its wire type
 * (ir_version, producer, graph, opset_import, ...), every length inside
 * the file, a field cut by the end of the n bytes counted as whole; 0
 * otherwise (text, another protobuf, a damaged file).  For telling a model
 * from a text file by its content, as the passhost command line does.  data
 * is borrowed.  (sdk/src/onnx/load.c, with the loader's wire reader.) */
PH_API int ph_model_sniff(const void *data, size_t n, uint64_t file_size);

#ifdef __cplusplus
}
#endif
#endif
