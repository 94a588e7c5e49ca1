/* passhost/op_helpers.h - what passes need to know about particular ONNX
 * operators: their constant operands (shapes, axes, pads, Slice
 * parameters), Transpose permutations, which operators are elementwise, a
 * BatchNormalization as a per-channel affine map, rewrites that build
 * Reshape, Squeeze/Unsqueeze, Slice and Split in the form the model's opset
 * wants, and a typed Cast.
 *
 * Audience: pass authors.  Everything here is built on the public API of
 * ir.h, shape.h, constant.h, pattern.h and plugin.h only (sdk/src/ops/, the
 * SDK's highest layer below the test harness), so a pass could have written
 * any of it itself; it is here so that no two passes write it twice.
 * passhost/passhost.h includes this header.
 *
 * Return values follow the SDK's one convention (passhost/error.h): a
 * yes/no question answers 1 or 0; a function that reads or builds answers a
 * count (or 0) or a negative PH_E* code, and "this is not such a node" is
 * PH_ENOTFOUND, never -1 (which is PH_ENOMEM).
 *
 * Ownership: every node, value and tensor argument is borrowed; arrays are
 * the caller's; strings returned are borrowed from the model.
 */
#ifndef PASSHOST_OP_HELPERS_H
#define PASSHOST_OP_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/constant.h"
#include "passhost/error.h"
#include "passhost/ir.h"
#include "passhost/pattern.h"
#include "passhost/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------- constant operands
 * (sdk/src/ops/operands.c; ph_value_const_ints: sdk/src/infer/infer_query.c) */

/* The integer entries of a constant operand such as a shape, axes, pads or a
 * Slice parameter: a 0-D or 1-D int32/int64 initializer (not a graph input),
 * a Constant node's value, or a shape constant.  A symbolic entry gives its
 * dim name in sym[k] (borrowed) and 0 in out[k]; with sym NULL, symbolic
 * entries make the call fail.  Returns the count (at most max), or
 * PH_ENOTFOUND when v is no such constant or an entry is not known (with
 * sym NULL: not a number), PH_ERANGE when there are more than max. */
PH_API ptrdiff_t ph_value_const_ints(const ph_value *v, int64_t *out, const char **sym, size_t max);

/* The tensor a Constant node n holds, as a new tensor in *out (the caller
 * owns it): a copy of its `value` (numeric, with readable data), or one
 * built from value_float (float32 []), value_int (int64 []), value_floats
 * (float32 [k]) or value_ints (int64 [k]).  Returns 0; PH_ENOTFOUND (*out
 * NULL) when n holds none of them (a string value, value_string(s),
 * sparse_value, an attribute of the wrong type, or several value
 * attributes, which is malformed); PH_ENOMEM.  n is borrowed.  (Used by
 * constant_to_initializer; the same forms as the evaluator's Constant.) */
PH_API int ph_constant_node_tensor(const ph_node *n, ph_tensor **out);

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

/* Fill *out for Slice node n whose data input has rank `rank`.  0, or
 * PH_ENOTFOUND when n is no Slice or a parameter is not constant (only ends
 * may be symbolic), PH_EINVAL when an axis repeats or is out of range, a
 * step is 0 or rank is out of [0, PH_SLICE_MAX]. */
PH_API int ph_node_slice_params(const ph_node *n, int rank, ph_slice_params *out);

/* 1 if sliced axis k of s (0 <= k < s->n) provably keeps every element of
 * x's axis s->axis[k], in order; 0 otherwise:
 *  - dim d known: the clamped range starts at 0 and has d elements, with
 *    step 1 (d == 1: any positive step; d == 0: any slice, the output is
 *    empty either way); a negative step never (runtimes clamp its start
 *    differently), a symbolic end never (not provable);
 *  - dim d symbolic or unknown: step 1, start 0 (or <= -2^31+1, which clamps
 *    to 0), and an end >= 2^31-1 (the "to the end" sentinels exporters
 *    write: INT64_MAX, INT32_MAX) or x's own symbolic dim name.  An axis of
 *    2^31 or more elements is taken to be impossible, as shape inference
 *    does.  Borrows both.  (Added for eliminate_nop_slice.) */
PH_API int ph_slice_axis_whole(const ph_value *x, const ph_slice_params *s, int k);

/* ------------------------------------------------------------- Transpose
 * (sdk/src/ops/transpose_perm.c; for transpose_to_reshape,
 * simplify_layout_chain, demerge_transpose and the layout passes.) */

/* The permutation of t, a default-domain Transpose, written into
 * perm[0..max): returns its rank r (0 for a scalar), or PH_ENOTFOUND when t
 * is no such Transpose, its perm is not a permutation of 0..r-1 or the rank
 * is not known, PH_ERANGE when r > max.  A missing perm reverses the dims;
 * the rank then comes from t's input type, else its output type. */
PH_API int ph_node_transpose_perm(const ph_node *t, int64_t *perm, size_t max);
/* 1 if transposing a tensor of dims[0..rank) by perm (a permutation of
 * 0..rank-1) moves no element: the dims that are not 1 keep their relative
 * order, only dims of size 1 move.  A dim < 0 (unknown or symbolic) counts
 * as not 1.  0 otherwise (also for an entry of perm out of range). */
PH_API int ph_perm_keeps_order(int rank, const int64_t *dims, const int64_t *perm);
/* The rank r >= 2 (at most 64) if t is a default-domain Transpose whose perm
 * is [0, 1, ..., r-3, r-1, r-2]: it swaps the last two dims and keeps the
 * others (a missing perm: only at rank 2, as ph_node_transpose_perm reads
 * it); else 0.  For passes that fold such a Transpose into a MatMul
 * (fuse_gemm_activation). */
PH_API int ph_node_transpose_swap_rank(const ph_node *t);
/* Give v the type of Transpose(x) by perm[0..rank): x's dtype, and dim i
 * x's dim perm[i] (a number, or a symbolic name).  When x's rank is not
 * `rank` (or unknown), v is left as it is.  0, PH_EINVAL (no v, x or perm)
 * or PH_ENOMEM.  For passes that build Transposes (demerge_transpose,
 * push_transpose_through_elementwise, set_output_layout). */
PH_API int ph_value_set_type_transposed(ph_value *v, const ph_value *x, int rank, const int64_t *perm);

/* ------------------------------------------------------------ axes operands
 * (sdk/src/ops/axes.c; used by squeeze_to_reshape, stack_unstack_to_reshape,
 * reducemean_to_pool, gathers_to_split and slices_to_split.) */

/* 1 if the axes of op (Squeeze, Unsqueeze, ReduceSum: from opset 13; the
 * other Reduce*: from 18) or its split sizes (Split: from 13) are an input at
 * this default-domain opset, 0 if an attribute; PH_EINVAL for any other op. */
PH_API int ph_op_axes_is_input(ph_op op, int64_t opset);

/* k (>= 1) as a product of factors each at most limit (>= 1), the largest
 * such divisor first, into f (at most max of them; none for k = 1): for a
 * window or a scale split into steps the target accepts (split_large_pool,
 * split_large_resize).  Their count, or -1 when a prime factor of k is
 * above limit or more than max are needed. */
PH_API int ph_factor_within(int64_t k, int64_t limit, int64_t *f, int max);

/* The axes of node n (Squeeze, Unsqueeze, Reduce*): its constant input 1
 * when it has one (read as ph_value_const_ints does), else its "axes"
 * attribute, each normalized to [0, rank) (rank: of the output for
 * Unsqueeze, of the data input otherwise).  Returns the count, 0 when n gives
 * no axes (absent attribute or input, or an empty input: the op's default),
 * or PH_ENOTFOUND when input 1 is not constant, PH_EINVAL when an axis is
 * out of range or repeats or rank < 0, PH_ERANGE when there are more than
 * max. */
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

/* ------------------------------------------------------ batch normalization */

/* An inference BatchNormalization node `bn` as the per-channel affine map
 * y = x * scale[c] + shift[c], with scale = gamma / sqrt(var + epsilon) and
 * shift = beta - mean * scale, computed in double from its four constant
 * parameter inputs (each of shape [C]) and its epsilon attribute (default
 * 1e-5).  scale and shift: caller supplied, C entries each.  Only the
 * parameters are read: the caller checks training_mode, spatial, the input's
 * rank and that the extra outputs are unused.  Returns 0, or PH_EINVAL (bn
 * NULL or no BatchNormalization with 5 inputs, C < 1, a parameter not
 * constant or not of shape [C], a scale or shift that is not finite),
 * PH_ENOMEM, or the errors of ph_tensor_read_f64.  bn is borrowed.
 * (sdk/src/ops/batchnorm.c; added for fuse_bn_matmul and
 * fold_transpose_bn_transpose.) */
PH_API int ph_bn_affine(const ph_node *bn, int64_t C, double *scale, double *shift);

/* ------------------------------------------------ sibling readers -> Split
 * (sdk/src/ops/split_siblings.c; used by slices_to_split and
 * gathers_to_split.)  A pattern grows upward from one root; this groups the
 * sibling readers of one value instead. */

/* A reader of x described as a piece of x: elements [start, start + len) of
 * axis `axis`, every other axis whole; squeeze: the reader's output lacks
 * that axis (len is then 1). */
typedef struct ph_split_piece {
    int axis;
    int64_t start, len;
    int squeeze;
} ph_split_piece;

/* Fill *piece and return 1 if node n (of the op walked, reading x as its
 * input 0; x's rank, `rank`, is known) is a piece of x; else return 0. */
typedef int (*ph_split_piece_fn)(const ph_node *n, const ph_value *x, int rank, ph_split_piece *piece);

/* In g and every If/Loop/Scan body: for each value x read as input 0 by
 * default-domain nodes of op `op` (with one output) of one graph, the
 * readers fn describes as pieces of x along one axis, when there are at
 * least two, x's dim on that axis is a known number, and ordered by start
 * they cover the axis exactly (contiguous, disjoint, from 0 to the dim, each
 * len >= 1), are replaced by one Split of x on that axis (sizes an input
 * from opset 13, an attribute before) and a Squeeze after each squeezed
 * piece (axes likewise); graph outputs keep their names, and the readers and
 * the operands only they used are pruned.  Readers fn refuses, or of
 * another axis, are left as they are.  Each rewrite is asked for with
 * ph_ctx_rewrite_begin (the walk stops when refused).  Cost: the nodes of
 * op and the uses of their input 0, each once.  Returns the number of
 * rewrites, or a negative PH_E* code. */
PH_API int ph_graph_siblings_to_split(ph_graph *g, ph_op op, ph_split_piece_fn fn, ph_ctx *ctx);

/* ------------------------------------------------ layout ops, constant operands
 * (sdk/src/ops/rw_shape_ops.c; added for conv_after_gap_to_gemm,
 * conv_to_matmul, conv1d_to_conv2d and conv3d_to_conv2d.)  Each builds one
 * new default-domain node through the rewriter, its constant operands as new
 * int64 initializers, in the form the model's default-domain opset wants;
 * the output value is returned (its type is not set).  NULL on failure (the
 * rewrite then fails).  Arrays borrowed. */

/* Reshape(x, shape[0..rank)) (entries as Reshape reads them: 0 copies the
 * input's dim, -1 is inferred).  Opset >= 5. */
PH_API ph_value *ph_rw_reshape(ph_rewriter *rw, ph_value *x, size_t rank, const int64_t *shape);
/* op "Squeeze" or "Unsqueeze" of x on axes[0..n), n >= 1: an input from
 * opset 13, the "axes" attribute before. */
PH_API ph_value *ph_rw_axes_op(ph_rewriter *rw, const char *op, ph_value *x, size_t n, const int64_t *axes);
/* Slice of x on n axes: inputs from opset 10 (steps may be NULL: omitted);
 * attributes before, where steps must be NULL or all 1. */
PH_API ph_value *ph_rw_slice(ph_rewriter *rw, ph_value *x, size_t n, const int64_t *starts, const int64_t *ends,
                             const int64_t *axes, const int64_t *steps);
/* Transpose(x) {perm = perm[0..rank)}.  NULL x fails the rewrite (so a chain of calls needs no check between them).  (Added
 * for split_qkv_matmul and transpose_large_input_conv.) */
PH_API ph_value *ph_rw_transpose(ph_rewriter *rw, ph_value *x, size_t rank, const int64_t *perm);

/* ------------------------------------------------------------------- Cast
 * (sdk/src/ops/cast.c; for convert_float16, type_cast_narrow and
 * topk_int32_fix.)  A default-domain Cast of x to dtype `to` (a PH_DT_*),
 * its output typed like x (rank, dims and dim names) with dtype `to`. */

/* Made in graph g (x in scope there) before node `before` (NULL: at the
 * end of g).  Returns the Cast's output, owned by g; NULL when x or g is
 * NULL or memory runs out, and then nothing is left in g. */
PH_API ph_value *ph_cast_create(ph_graph *g, ph_node *before, ph_value *x, int to);
/* Made through the rewriter (placed as ph_rw_node places nodes).  Returns
 * the Cast's output; NULL on failure (the rewrite then fails). */
PH_API ph_value *ph_rw_cast(ph_rewriter *rw, ph_value *x, int to);

/* ------------------------------------------------ layer normalization
 * (sdk/src/ops/rw_layernorm.c; for decompose_layernorm and convert_opset.) */

/* LayerNormalization's normalization without its affine part, in primitive
 * operators of the model's default-domain opset:
 *     mean = ReduceMean(x), d = x - mean, var = ReduceMean(d * d),
 *     returned: d / Sqrt(var + epsilon)
 * over the axes [axis, rank) with keepdims = 1 (axes an attribute before
 * opset 18, an input from 18).  x (borrowed) is float or double of known
 * rank `rank`, 0 <= axis < rank <= 64; the caller multiplies by Scale and
 * adds B.  NULL on failure (the rewrite then fails). */
PH_API ph_value *ph_rw_layernorm_normalize(ph_rewriter *rw, ph_value *x, int rank, int axis, double epsilon);

#ifdef __cplusplus
}
#endif
#endif
