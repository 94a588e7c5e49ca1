/* host/run/fingerprint.h - hashes of everything a pass can change in a
 * model, so the runner can tell a round that changed the graph from one
 * whose passes reported rewrites but left it as it was, or as it was but
 * for the names rewrites make afresh (runner.c).
 *
 * The exact fingerprint covers, for the main graph and every body: each
 * node in order (op type, domain, name, input and output names,
 * attributes, and the tensors of tensor attributes by identity), the
 * output values' known types, the graph's inputs, outputs and initializers
 * (names and tensors by identity), and the model's initializer version.
 * Equal exact fingerprints mean the model would be saved the same (up to a
 * 64-bit collision); a pass that changes anything saved changes it.
 *
 * The structure fingerprint is the same walk with names aside: a value is
 * known by where it is defined (its place among the graph's inputs,
 * initializers and node outputs, in order), not by its name, and node
 * names are left out; the names of the main graph's inputs and outputs
 * (the model's interface, which passes keep) still count.  Tensors
 * (initializers', tensor attributes') count by content up to 256 bytes,
 * by identity above.
 * Two models with equal structure fingerprints differ at most in the names
 * of nodes and of values inside: a rule whose result makes nodes (and
 * their outputs) under fresh names changes the exact fingerprint only.
 *
 * Cost: one walk of the model, for both; the structure numbers values in a
 * map the caller keeps (cleared and refilled here, one entry per value). */
#ifndef PASSHOST_HOST_FINGERPRINT_H
#define PASSHOST_HOST_FINGERPRINT_H

#include <stdint.h>

#include "passhost/passhost.h"

typedef struct host_fingerprint {
    uint64_t exact;     /* everything saved, names included */
    uint64_t structure; /* the same with names aside */
} host_fingerprint;

/* Both fingerprints of m (borrowed) into *out.  ids: a map the caller owns
 * (ph_hmap_new(NULL, NULL)), used as scratch.  0, or PH_ENOMEM when ids is
 * NULL or runs out of memory (*out is then not to be used). */
int host_model_fingerprint(ph_model *m, ph_hmap *ids, host_fingerprint *out);

#endif
