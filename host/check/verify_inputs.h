/* host/check/verify_inputs.h - the input sets numeric verification runs on.
 *
 * Random inputs (the default): `runs` seeded sets.  Each graph input without
 * an initializer gets the dtype and dims it has after user shapes and
 * inference; a dim that is still unknown or symbolic is
 * HOST_VERIFY_SYMBOLIC_DIM.  Values: floats uniform in [-1, 1), integers in
 * [0, 10), bools fair coins, unless the input's consumers ask for others
 * (input_rules below) or `[verify] range` / --verify-range gives NAME=LO:HI
 * (values in [LO, HI); for integers LO, LO+1, ..., HI-1).
 *
 * Rules derived from the consumers, following Identity and Cast (and, for
 * ranges, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand and the
 * value inputs of Where):
 *   - indices of Gather, GatherElements, ScatterElements (Scatter), OneHot:
 *     [0, dim) of the axis they index; GatherND, ScatterND: [0, dim) of the
 *     data dim each position of the last index dim addresses (a dim that is
 *     not static: 0 only, valid for any size);
 *   - integer divisors of Div and Mod: [1, 10);
 *   - floats whose consumer is Log, Sqrt, or Pow as the base with an
 *     exponent that is not a constant of whole numbers: [0.1, 1); Acosh:
 *     [1, 2);
 *   - Resize scales, Upsample scales: [1, 2); Resize sizes: [1, 10);
 *   - Reshape shape: [-1, 1, ..., 1]; Expand shape: all 1; Tile repeats,
 *     Slice steps, Range delta: [1, 3); ConstantOfShape shape: [1, 4);
 *     axes of Unsqueeze, Reduce*, Slice, Pad: 0, 1, ..., n-1; Squeeze axes:
 *     the data's static dims of size 1; Pad pads: [0, 3); TopK k: [1, dim];
 *     Split sizes: the axis's static dim split in equal parts; CumSum axis 0.
 * Real data (`[verify] data`, --verify-data): one set per folder, either an
 * ONNX test_data_set folder (input_K.pb matched to a graph input by the
 * tensor's name, else to the K-th input without an initializer; output_K.pb
 * the same way to graph outputs) or a folder of NAME.npy files named after
 * graph inputs (and outputs: expected values).  In a file name '/', '\' and
 * ':' of the value's name are '_'.
 *
 * Ownership: a host_input_sets owns every tensor and string in it
 * (host_input_sets_free).
 */
#ifndef PASSHOST_HOST_VERIFY_INPUTS_H
#define PASSHOST_HOST_VERIFY_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "passhost/passhost.h"

/* The size of every symbolic or unknown input dim in random inputs. */
#define HOST_VERIFY_SYMBOLIC_DIM 1
/* No input of more bytes is made: verification says it cannot run. */
#define HOST_VERIFY_MAX_INPUT_BYTES (1ull << 32)

typedef struct host_input_set {
    char *label;          /* "run 2", or the data folder */
    ph_tensor **inputs;   /* one per graph input; NULL: the input's initializer */
    ph_tensor **expected; /* one per graph output, NULL where the folder has none */
    char **expected_file; /* the file each expected output came from */
    size_t n_expected;    /* non-NULL entries of expected */
} host_input_set;

typedef struct host_input_sets {
    host_input_set *sets;
    size_t count;
    size_t n_inputs, n_outputs;
    int from_data;        /* real data folders, not random values */
    /* one line per graph input whose values are not the defaults, e.g.
     * "input_ids: integers in [0, 1000) (indices of Gather 'emb')" */
    char **notes;
    size_t n_notes;
    /* the graph inputs whose symbolic or unknown dims took
     * HOST_VERIFY_SYMBOLIC_DIM, e.g. "x [batch,3,h,w] -> 1x3x1x1" ("" when none) */
    char *defaulted;
    char *first_defaulted; /* the first such input's name (NULL when none) */
} host_input_sets;

/* Make the input sets for m: from vc->data when it has folders, else
 * vc->runs random sets from vc->seed.  sym_dim: the size of symbolic dims
 * (HOST_VERIFY_SYMBOLIC_DIM; the hint retries with others); max_bytes: the
 * most bytes of one random input (HOST_VERIFY_MAX_INPUT_BYTES).  0, or
 * HOST_EXIT_CONFIG (a bad range or data folder: the message names it),
 * HOST_EXIT_NOVERIFY (an input without a known dtype or rank, or too large:
 * the message gives its size). */
int host_input_sets_make(ph_model *m, const host_verify_config *vc, int64_t sym_dim, uint64_t max_bytes,
                         host_input_sets *out, ph_error *err);
void host_input_sets_free(host_input_sets *s);

#endif
