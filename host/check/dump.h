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

/* What changed in g since `before`, as boxes and edges to draw (the
 * mermaid file here, a diagram of --report-html): the changed nodes (at
 * most 24), their direct producers and consumers (at most 60 nodes in all),
 * the graph inputs, initializers and outputs the changed nodes touch (at
 * most 24), and the nodes gone since the snapshot (at most 24 listed). */
enum { HOST_BOX_NODE = 0, HOST_BOX_INPUT, HOST_BOX_INITIALIZER, HOST_BOX_OUTPUT };
typedef struct host_region_box {
    char *name;   /* owned: the node's name ("" for none) or the value's */
    char *op;     /* owned: the node's op; NULL for a value */
    char *graph;  /* owned: the body a node is in, NULL in the main graph */
    int kind;     /* HOST_BOX_* */
    int changed;  /* a node the pass made, changed or named */
} host_region_box;
typedef struct host_region_edge {
    size_t from, to; /* box indices */
    char *label;     /* owned: the value between two nodes, NULL from/to a value box */
} host_region_edge;
typedef struct host_region {
    host_region_box *boxes;   /* owned; nodes in graph order, then values */
    size_t n_boxes;
    host_region_edge *edges;  /* owned */
    size_t n_edges;
    host_region_box *removed; /* owned: nodes gone (name is the node's key) */
    size_t n_removed, more_removed;
    size_t n_changed;         /* changed nodes, drawn or not */
    size_t not_drawn;         /* changed and neighbouring nodes over the caps */
    size_t values_skipped;
} host_region;

/* The region of what changed in g since `before` (caller frees with
 * host_region_free). */
host_region *host_region_take(ph_graph *g, const host_snapshot *before, const host_dump_call *call);
void host_region_free(host_region *r);

/* The mermaid text of the region (caller frees). */
char *host_dump_mermaid(ph_graph *g, const host_snapshot *before, const host_dump_call *call);

/* Create dir if it does not exist.  0 or HOST_EXIT_OUTPUT. */
int host_dump_prepare(const char *dir, ph_error *err);

/* Write DIR/NNN-STAGE-PASS.onnx and .mmd.  0 or HOST_EXIT_OUTPUT. */
int host_dump_write(const char *dir, ph_model *m, const host_snapshot *before,
                    const host_dump_call *call, ph_error *err);

#endif
