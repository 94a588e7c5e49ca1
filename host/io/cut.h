/* host/io/cut.h - --inputs / --outputs: the loaded model cut to the part
 * between those values (ph_graph_extract), before anything else runs, so
 * the passes, --verify and --bisect all see the cut model.
 *
 * --outputs alone keeps the model's own inputs that the outputs need;
 * --inputs alone keeps the model's outputs.  Each option may be repeated
 * and holds ','-separated names. */
#ifndef PASSHOST_HOST_CUT_H
#define PASSHOST_HOST_CUT_H

#include <stddef.h>

#include "passhost/passhost.h"

/* The values of --inputs and --outputs as given (each a ','-list). */
typedef struct host_cut {
    const char **inputs;  /* --inputs values (array owned by the command line) */
    size_t input_count;
    const char **outputs; /* --outputs values (likewise) */
    size_t output_count;
} host_cut;

/* Cut m (borrowed) as cut says; nothing when neither option is given.
 * 0, or HOST_EXIT_CONFIG naming the value and the option.  *nodes_before
 * and *nodes_after (may be NULL) get the node counts around the cut. */
int host_cut_model(ph_model *m, const host_cut *cut, size_t *nodes_before, size_t *nodes_after,
                   ph_error *err);

#endif
