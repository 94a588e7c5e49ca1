/* sdk/src/onnx/build.h - the IR builder the loader calls (build.c). */
#ifndef PASSHOST_SDK_ONNX_BUILD_H
#define PASSHOST_SDK_ONNX_BUILD_H

#include "internal.h"

/* Build the IR of g's GraphProto (its arrays are taken over), bodies of
 * If/Loop/Scan nodes included.  0 or an error (PH_EPARSE naming what is
 * wrong, PH_ENOMEM). */
int onnx_graph_build(ph_graph *g, ph_error *err);

#endif
