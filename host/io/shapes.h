/* host/io/shapes.h - user-given input shapes ([model] input_shape and
 * input_shape_range) and the shape inference that follows them.
 *
 *   input_shape       = name:1x3x224x224; other:1x128
 *   input_shape_range = name:1~32x3x224x224
 *
 * input_shape fixes dims ('?' keeps the model's dim).  In a range, a dim
 * written a~b with a != b stays dynamic (the model's symbolic dim is kept);
 * a single number, or a~a, fixes it.  Entries are separated by ';' and an
 * input named twice is an error.
 */
#ifndef PASSHOST_HOST_SHAPES_H
#define PASSHOST_HOST_SHAPES_H

#include "config/config.h"
#include "passhost/host.h"
#include "passhost/passhost.h"

/* Apply the config's input shapes to m's graph inputs, then infer shapes
 * (when cfg->infer_shapes or force).  0, HOST_EXIT_CONFIG for a malformed spec or an
 * unknown input, HOST_EXIT_MODEL when the shapes contradict the model. */
int host_apply_shapes(ph_model *m, const host_config *cfg, int force, ph_error *err);

#endif
