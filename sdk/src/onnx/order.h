/* sdk/src/onnx/order.h - the loader's check of the node order (order.c). */
#ifndef PASSHOST_SDK_ONNX_ORDER_H
#define PASSHOST_SDK_ONNX_ORDER_H

#include "internal.h"

/* The loaded node lists, sorted when the file lists a node before a value
 * it reads (sets m->load_reordered); a cycle is PH_EPARSE naming two of its
 * nodes.  0 or a PH_E* code. */
int onnx_model_sort_loaded(ph_model *m, ph_error *err);

#endif
