/* host/check/dump.h - `--dump-dir DIR`: the model after each pass call that
 * changed it, and a picture of what changed.
 *
 * For every such call the runner writes
 *   DIR/NNN-STAGE-PASS.onnx  the whole model as it is after the call (a valid
 *                            model: it loads with ph_model_load and passes
 *                            ph_graph_verify when the pass kept the graph
 *                            valid), written with ph_model_save, which leaves
 *                            the model unchanged;
 *   DIR/NNN-STAGE-PASS.mmd   a mermaid flowchart (`flowchart TD`) of the
 *                            region that changed: the nodes the pass named
 *                            (added names from ph_ctx_rewrite_end, else the
 *                            matched names) and the nodes that are new or
 *                            changed since before the call, plus their
 *                            direct producers and consumers; edges carry
 *                            value names; nodes that disappeared are listed
 *                            in a "removed" box.
 * A snapshot of the graph (node names and a signature of each node: op,
 * inputs, outputs, attributes) taken before the call tells what changed.
 */
#ifndef PASSHOST_HOST_DUMP_H
#define PASSHOST_HOST_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

typedef struct host_snapshot host_snapshot;

/* The nodes of g and its subgraphs, by name, with their signatures. */
host_snapshot *host_snapshot_take(ph_graph *g);
void host_snapshot_free(host_snapshot *s);

/* One pass call to dump. */
typedef struct host_dump_call {
    unsigned seq;      /* NNN of the file names, from 1 */
    const char *stage; /* "optimize", "adapt" */
    const char *pass;
    uint64_t first, last; /* global indices of its rewrites (first > last: none) */
    const char *const *names; /* node names the pass gave for its rewrites */
    size_t n_names;
} host_dump_call;

/* The mermaid text of what changed in g since `before` (caller frees). */
char *host_dump_mermaid(ph_graph *g, const host_snapshot *before, const host_dump_call *call);

/* Create dir if it does not exist.  0 or HOST_EXIT_OUTPUT. */
int host_dump_prepare(const char *dir, ph_error *err);

/* Write DIR/NNN-STAGE-PASS.onnx and .mmd.  0 or HOST_EXIT_OUTPUT. */
int host_dump_write(const char *dir, ph_model *m, const host_snapshot *before,
                    const host_dump_call *call, ph_error *err);

#endif
