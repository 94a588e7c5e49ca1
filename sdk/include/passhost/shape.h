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

/* Fix the shape of graph input `input_name` (user-given shapes, like
 * onnx-simplifier's --overwrite-input-shape): dims[i] >= 0 sets dim i,
 * dims[i] < 0 keeps the model's dim i (static or symbolic).  PH_ENOTFOUND
 * if g has no such input; PH_EINVAL if rank differs from a rank the model
 * declares or a dim contradicts a static dim it declares.  The input's
 * consumers are queued for ph_graph_update_shapes. */
PH_API int ph_graph_set_input_shape(ph_graph *g, const char *input_name, int rank, const int64_t *dims,
                                    ph_error *err);

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

/* ---------------------------------------------------- constant operands */

/* The integer entries of a constant operand such as a shape, axes, pads or a
 * Slice parameter: a 0-D or 1-D int32/int64 initializer (not a graph input),
 * a Constant node's value, or a shape constant.  A symbolic entry gives its
 * dim name in sym[k] (borrowed) and 0 in out[k]; with sym NULL, symbolic
 * entries make the call fail.  Returns the count (at most max), or -1 when v
 * is no such constant, an entry is unknown, or there are more than max. */
PH_API ptrdiff_t ph_value_const_ints(const ph_value *v, int64_t *out, const char **sym, size_t max);

/* How many elements a Slice of one axis of length dim >= 0 selects, by the
 * ONNX rules (negative start and end count from the end; then for step > 0
 * both clamp to [0, dim], for step < 0 start clamps to [0, dim-1] and end to
 * [-1, dim-1]).  *first (may be NULL) gets the first index selected.  A step
 * of 0 (invalid in ONNX) gives 0. */
PH_API int64_t ph_slice_length(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first);

/* 1 if a Conv (or ConvTranspose, pooling) node pads nothing: auto_pad
 * VALID; NOTSET with `pads` absent or all zero; SAME_UPPER/SAME_LOWER when
 * w (the weight, may be NULL: then SAME counts as padding) has every
 * spatial dim 1, which needs no pad whatever the stride.  0 otherwise.
 * Borrows both. */
PH_API int ph_conv_adds_no_padding(const ph_node *conv, const ph_tensor *w);

#define PH_SLICE_MAX 64

/* A Slice node's parameters, read from its attributes (opset < 10) or its
 * constant inputs, with axes normalized to [0, rank) and steps defaulted. */
typedef struct ph_slice_params {
    int n; /* sliced axes */
    int64_t axis[PH_SLICE_MAX], start[PH_SLICE_MAX], end[PH_SLICE_MAX], step[PH_SLICE_MAX];
    const char *end_sym[PH_SLICE_MAX]; /* the end is this symbolic dim (a shape constant), or NULL */
} ph_slice_params;

/* Fill *out for Slice node n whose data input has rank `rank`.  0, or -1
 * when n is no Slice, a parameter is not constant (only ends may be
 * symbolic), an axis repeats or is out of range, or a step is 0. */
PH_API int ph_node_slice_params(const ph_node *n, int rank, ph_slice_params *out);

/* ------------------------------------------------------------ results */

/* Write the known type of every node output of g and its subgraphs into
 * the graph's value_info (refreshing entries that exist), so a saved model
 * carries the inferred shapes.  Returns how many entries were written. */
PH_API int ph_graph_write_value_info(ph_graph *g, ph_error *err);

/* Counters of the last ph_graph_infer_shapes / ph_graph_update_shapes on a
 * model (for tests and benchmarks). */
typedef struct ph_infer_stats {
    size_t nodes_inferred; /* nodes whose inference ran (bodies included) */
    size_t values_changed; /* values whose type or shape constant changed */
    size_t nodes_unknown;  /* nodes whose op inference does not know */
} ph_infer_stats;
PH_API void ph_model_infer_stats(const ph_model *m, ph_infer_stats *out);


/* The permutation of t, a default-domain Transpose, written into
 * perm[0..max): returns its rank r (0 for a scalar), or -1 when t is no such
 * Transpose, its perm is not a permutation of 0..r-1, or r > max.  A
 * missing perm reverses the dims; the rank then comes from t's input type,
 * else its output type (unknown: -1).  (sdk/src/ops/transpose_perm.c; for
 * transpose_to_reshape, simplify_layout_chain and demerge_transpose.) */
PH_API int ph_node_transpose_perm(const ph_node *t, int64_t *perm, size_t max);
/* 1 if transposing a tensor of dims[0..rank) by perm (a permutation of
 * 0..rank-1) moves no element: the dims that are not 1 keep their relative
 * order, only dims of size 1 move.  A dim < 0 (unknown or symbolic) counts
 * as not 1.  0 otherwise (also for an entry of perm out of range).  Same
 * file and users. */
PH_API int ph_perm_keeps_order(int rank, const int64_t *dims, const int64_t *perm);
/* The rank r >= 2 (at most 64) if t is a default-domain Transpose whose perm
 * is [0, 1, ..., r-3, r-1, r-2]: it swaps the last two dims and keeps the
 * others (a missing perm: only at rank 2, as ph_node_transpose_perm reads
 * it); else -1.  For passes that fold such a Transpose into a MatMul
 * (sdk/src/ir/emit.c; used by fuse_gemm_activation). */
PH_API int ph_node_transpose_swap_rank(const ph_node *t);

/* ------------------------------------------------------------ axes operands
 * (sdk/src/ops/axes.c; used by squeeze_to_reshape, stack_unstack_to_reshape,
 * reducemean_to_pool, gathers_to_split and slices_to_split.) */

/* 1 if the axes of op (Squeeze, Unsqueeze, ReduceSum: from opset 13; the
 * other Reduce*: from 18) or its split sizes (Split: from 13) are an input at
 * this default-domain opset, 0 if an attribute; -1 for any other op. */
PH_API int ph_op_axes_is_input(ph_op op, int64_t opset);

/* The axes of node n (Squeeze, Unsqueeze, Reduce*): its constant input 1
 * when it has one (read as ph_value_const_ints does), else its "axes"
 * attribute, each normalized to [0, rank) (rank: of the output for
 * Unsqueeze, of the data input otherwise).  Returns the count, 0 when n gives
 * no axes (absent attribute or input, or an empty input: the op's default),
 * or -1 when input 1 is not constant, an axis is out of range or repeats,
 * there are more than max, or rank < 0. */
PH_API ptrdiff_t ph_node_axes(const ph_node *n, int rank, int64_t *out, size_t max);

/* ------------------------------------------------------ elementwise ops
 * (sdk/src/ops/elementwise.c; added for push_transpose_through_elementwise
 * and transpose_large_input_conv.) */

/* 1 if n is a default-domain node with one output whose every element is
 * computed from the elements at the same index of its inputs after
 * broadcasting, and none of whose attributes names an axis, so that
 * transposing every input of the output's rank (and transposing the
 * constants as ph_tensor_transpose does) transposes the output the same
 * way: the unary maths and activations (Relu, Sigmoid, Tanh, Neg, Abs, Exp,
 * Log, Sqrt, Erf, Cast, LeakyRelu, Elu, Selu, Clip, ...), the binary and
 * variadic ops with broadcasting (Add, Sub, Mul, Div, Pow, Mod, Max, Min,
 * Sum, Mean, the comparisons, the logical and bitwise ops, BitShift) and
 * Where and PRelu.  0 otherwise (Concat, Softmax, CastLike, Dropout, any
 * op with an axis, other domains). */
PH_API int ph_node_is_elementwise(const ph_node *n);
/* The op types ph_node_is_elementwise accepts, as a pattern alternation
 * for a rule's root: "y = " PH_ELEMENTWISE_OPS "(xs*)". */
#define PH_ELEMENTWISE_OPS                                                                          \
    "Abs|Acos|Acosh|Asin|Asinh|Atan|Atanh|BitwiseNot|Cast|Ceil|Celu|Clip|Cos|Cosh|Elu|Erf|Exp"      \
    "|Floor|Gelu|HardSigmoid|HardSwish|Identity|IsInf|IsNaN|LeakyRelu|Log|Mish|Neg|Not|Reciprocal" \
    "|Relu|Round|Selu|Shrink|Sigmoid|Sign|Sin|Sinh|Softplus|Softsign|Sqrt|Tan|Tanh|ThresholdedRelu" \
    "|Add|And|BitShift|BitwiseAnd|BitwiseOr|BitwiseXor|Div|Equal|Greater|GreaterOrEqual|Less"       \
    "|LessOrEqual|Max|Mean|Min|Mod|Mul|Or|PRelu|Pow|Sub|Sum|Where|Xor"

#ifdef __cplusplus
}
#endif
#endif
