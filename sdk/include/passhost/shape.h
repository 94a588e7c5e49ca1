/* passhost/shape.h - static shape and type inference, and shape queries for passes.
 *
 * Inference computes the element type and shape of every value of a graph
 * and its If/Loop/Scan bodies, in node order, and stores them as the value's
 * known type (ph_value_dtype / ph_value_rank / ph_value_dim /
 * ph_value_dim_param in ir.h).  Symbolic dims keep their names and
 * propagate by name: a `batch` dim stays `batch` through Conv, MatMul,
 * Reshape with 0/-1, Concat, ...  A dim inference cannot determine is -1
 * with no name.
 *
 * Declared types (the model's inputs, outputs and value_info, or a type a
 * pass set with ph_value_set_type) are merged with what inference computes;
 * a contradiction (another dtype or rank, or another static dim) is an
 * error, PH_EVERIFY with "node 'NAME' (Op): ...", as are inputs that cannot
 * broadcast.  Operators inference does not know (other domains, rare ops)
 * leave their outputs as they are: not an error.
 *
 * Values computed from shapes (Shape -> Gather/Slice -> Concat/Unsqueeze/
 * arithmetic -> Reshape/Expand/ConstantOfShape/...) are tracked as "shape
 * constants": small int64 vectors whose entries are known numbers, symbolic
 * dims or unknown.  Integer initializers and Constant nodes feed shape
 * constants into the nodes that read them, but the queries below track only
 * node outputs: read an initializer itself with ph_value_const.
 *
 * Incremental use: after the first ph_graph_infer_shapes, every mutation
 * through ir.h (ph_node_create, ph_node_set_input, ph_node_remove_input,
 * ph_value_replace, the attribute setters, ph_node_set_op_type) queues the
 * node it touched; ph_graph_update_shapes re-infers only those nodes and
 * then their consumers while results keep changing.  A pass that changes
 * something the hooks cannot see (e.g. it sets a graph input's type with
 * ph_value_set_type) calls ph_value_mark_changed.
 *
 * Ownership: strings returned are borrowed from the value (valid until its
 * type changes); arrays returned are borrowed likewise.
 */
#ifndef PASSHOST_SHAPE_H
#define PASSHOST_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/error.h"
#include "passhost/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Infer the type of every value of g and its subgraphs (normally g is the
 * model's main graph).  0, or PH_EVERIFY naming the node on a contradiction,
 * or PH_ENOMEM.  On error, values before the failing node keep their new
 * types. */
PH_API int ph_graph_infer_shapes(ph_graph *g, ph_error *err);

/* Re-infer only what changed since the last inference of g's model: nodes
 * queued by the mutation hooks, then their consumers while their outputs'
 * types keep changing.  Runs a full ph_graph_infer_shapes when the model was
 * never inferred (or the last full run failed).  Same errors. */
PH_API int ph_graph_update_shapes(ph_graph *g, ph_error *err);

/* Queue every node reading v (or node n) for the next ph_graph_update_shapes. */
PH_API void ph_value_mark_changed(ph_value *v);
PH_API void ph_node_mark_changed(ph_node *n);

/* ------------------------------------------------------------- queries */

/* 1 if v's rank and every dim are known numbers. */
PH_API int ph_value_shape_known(const ph_value *v);
/* 1 if a and b provably have the same shape: same known rank, and each dim
 * pair is the same number or the same symbolic name.  0 otherwise (also
 * when either is unknown). */
PH_API int ph_value_same_shape(const ph_value *a, const ph_value *b);
/* 1 if dim i of a and dim j of b are provably equal (same number or same
 * name); negative indices count from the end. */
PH_API int ph_value_dim_equal(const ph_value *a, int i, const ph_value *b, int j);
/* 1 if v has rank `rank` and each dim i is want[i] when want[i] >= 0 (a
 * known number), or provably x's dim k when want[i] is PH_DIM_OF(k) (the
 * same number or name: ph_value_dim_equal).  0 otherwise.  For rewrites
 * that check the shapes of a view (a Reshape's output) against their
 * input's.  Borrows all three.  (Added for channel_shuffle_to_conv and
 * transpose_to_depth_to_space.) */
#define PH_DIM_OF(k) (-1 - (int64_t)(k))
PH_API int ph_value_dims_are(const ph_value *v, int rank, const int64_t *want, const ph_value *x);
/* Number of elements when the shape is known, else -1. */
PH_API int64_t ph_value_numel(const ph_value *v);

/* Shape constants.  Entry kinds: */
typedef enum ph_shape_const_kind {
    PH_SC_UNKNOWN = 0, /* nothing known about the entry */
    PH_SC_KNOWN = 1,   /* a number */
    PH_SC_SYMBOLIC = 2 /* equal to a symbolic dim, named by *param */
} ph_shape_const_kind;

/* Entries of v's shape constant (1 for a scalar), or -1 when v is not
 * tracked (not an integer value computed from shapes or constants, or not
 * inferred yet). */
PH_API ptrdiff_t ph_value_shape_const_len(const ph_value *v);
/* Entry i: returns its kind; *val gets the number (KNOWN), *param the
 * symbolic dim's name (SYMBOLIC; borrowed, valid while the model lives).
 * Either pointer may be NULL. */
PH_API ph_shape_const_kind ph_value_shape_const_at(const ph_value *v, size_t i, int64_t *val,
                                                   const char **param);
/* All entries as numbers: the count, with *vals pointing at them (borrowed,
 * valid until v is re-inferred), or -1 when v is not tracked or some entry
 * is not a known number.  E.g. dynamic_reshape_to_static asks this of a
 * Reshape's shape input. */
PH_API ptrdiff_t ph_value_shape_const(const ph_value *v, const int64_t **vals);

/* ----------------------------------------------------------------- Slice */

/* How many elements a Slice of one axis of length dim >= 0 selects, by the
 * ONNX rules (negative start and end count from the end; then for step > 0
 * both clamp to [0, dim], for step < 0 start clamps to [0, dim-1] and end to
 * [-1, dim-1]).  *first (may be NULL) gets the first index selected.  A step
 * of 0 (invalid in ONNX) gives 0. */
PH_API int64_t ph_slice_length(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first);

#ifdef __cplusplus
}
#endif
#endif
