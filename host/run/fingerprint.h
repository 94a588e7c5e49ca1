/* host/run/fingerprint.h - a hash of everything a pass can change in a model,
 * so the runner can tell a round that changed the graph from one whose
 * passes reported rewrites but left it as it was (runner.c).
 *
 * Covers, for the main graph and every body: each node in order (op type,
 * domain, name, input and output names, attributes, and the tensors of
 * tensor attributes by identity), the output values' known types, the
 * graph's inputs, outputs and initializers (names and tensors by
 * identity), and the model's initializer version.  Equal fingerprints mean
 * the model would be saved the same (up to a 64-bit collision); a pass that
 * changes anything saved changes the fingerprint.  Cost: one walk of the
 * model, no allocation. */
#ifndef PASSHOST_HOST_FINGERPRINT_H
#define PASSHOST_HOST_FINGERPRINT_H

#include <stdint.h>

#include "passhost/passhost.h"

/* The fingerprint of m (borrowed). */
uint64_t host_model_fingerprint(ph_model *m);

#endif
