/* passhost/constant.h - reading, making and replacing constant tensors: the
 * arithmetic every fusion needs (Conv+BatchNormalization, Mul/Add folding,
 * per-channel scales) without hand-indexed maths on `const void *` data.
 *
 * Alignment of tensor data.  ph_tensor_data() of an initializer loaded from
 * a file usually points straight into a read-only mapping of the model (or
 * of its external-data file): the raw_data bytes sit at whatever offset the
 * protobuf encoding put them, so the pointer is NOT aligned for the element
 * type (a float tensor may start at an odd address).  Never cast it to
 * `const float *` and dereference it; copy elements out with memcpy, or use
 * the readers below, which accept any alignment and never do an unaligned
 * load.  Tensors made by ph_tensor_new, ph_tensor_clone and
 * ph_tensor_from_f64 are malloc'd and aligned, but a pass rarely knows which
 * kind it holds.  The data is little endian and row major.
 *
 * Broadcasting follows numpy/ONNX multidirectional broadcasting, read in one
 * direction: a tensor of shape S "broadcasts to" a target shape D when
 * rank(S) <= rank(D) and, aligning the shapes on the right, every dim of S is
 * 1 or equal to the dim of D.  (S = [1, 3] does not broadcast to D = [3]: the
 * result would have rank 2.)
 *
 * Numeric dtypes: FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, INT16, INT32,
 * INT64, UINT8, UINT16, UINT32, UINT64 and BOOL.  STRING, the complex types
 * and unknown codes are PH_EUNSUPPORTED.
 *
 * Ownership is stated on each function.  Nothing here keeps global state.
 */
#ifndef PASSHOST_CONSTANT_H
#define PASSHOST_CONSTANT_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/error.h"
#include "passhost/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- reading */

/* 1 if dtype is one of the numeric dtypes above, else 0. */
PH_API int ph_dtype_is_numeric(int dtype);
/* 1 for FLOAT, DOUBLE, FLOAT16 and BFLOAT16, else 0. */
PH_API int ph_dtype_is_float(int dtype);
/* 1 if every value of dtype a is exactly a value of dtype b, so a Cast from
 * a to b loses nothing: a == b; BOOL into any numeric dtype; an integer
 * into a wider integer that holds its range (unsigned into a wider signed);
 * an integer into a float whose significand holds it (8-bit into FLOAT16
 * and BFLOAT16, 16-bit into FLOAT, 32-bit into DOUBLE); FLOAT16 and
 * BFLOAT16 into FLOAT and DOUBLE; FLOAT into DOUBLE.  0 otherwise, and for
 * anything but the numeric dtypes and BOOL (strings, complex, float8).
 * (sdk/src/const/dtype_holds.c; added for merge_consecutive_cast.) */
PH_API int ph_dtype_holds(int a, int b);

/* 1 if a tensor of shape (t_rank, t_dims) broadcasts to (rank, dims) by the
 * rule above, else 0 (also when a dim is negative).  Arrays borrowed. */
PH_API int ph_shape_broadcasts_to(size_t t_rank, const int64_t *t_dims, size_t rank,
                                  const int64_t *dims);

/* Read constant tensor t as doubles, broadcast to the target shape (rank,
 * dims): out[k] gets element k (row major) of the broadcast result.  The
 * caller supplies out with room for numel(dims) doubles (one for rank 0);
 * t and dims are borrowed.  Every numeric dtype converts exactly, except
 * INT64/UINT64 magnitudes above 2^53, which round to the nearest double;
 * BOOL reads as 0 or 1.  Handles data at any alignment (see above).
 * Returns 0, or
 *   PH_EINVAL       t does not broadcast to dims, a dim is negative, or an
 *                   argument is NULL;
 *   PH_EUNSUPPORTED t's dtype is not numeric;
 *   PH_EIO          t's bytes cannot be read (ph_tensor_data is NULL).
 * On error the contents of out are unspecified. */
PH_API int ph_tensor_read_f64(const ph_tensor *t, size_t rank, const int64_t *dims, double *out);

/* ph_tensor_read_f64 for integers: out gets int64 values.  Integer and BOOL
 * tensors read exactly; a UINT64 above INT64_MAX is PH_ERANGE.  Floating
 * tensors must hold integral values within the int64 range: a fraction, an
 * infinity, a NaN or a value out of range is PH_ERANGE.  Same other errors
 * and ownership as ph_tensor_read_f64. */
PH_API int ph_tensor_read_i64(const ph_tensor *t, size_t rank, const int64_t *dims, int64_t *out);

/* 1 if t is a numeric tensor with at least one element and every element,
 * read as a double as ph_tensor_read_f64 does, equals v (so -0.0 equals
 * 0.0 and a NaN equals nothing); 0 otherwise (also for NULL, an empty or a
 * non-numeric tensor, unreadable data).  Stops at the first element that
 * differs and allocates nothing: "is this constant all zeros / all ones?"
 * at the cost of the elements it reads.  t is borrowed.  (Added for
 * eliminate_nop_arith.) */
PH_API int ph_tensor_all_equal(const ph_tensor *t, double v);

/* ----------------------------------------------------------------- making */

/* Round a double to the bits of an IEEE binary16 (FLOAT16) or a bfloat16,
 * once, round to nearest, ties to even, straight from the double (never via
 * float, which would round twice).  Overflow gives infinity as IEEE does,
 * tiny values give subnormals or a signed zero, NaN stays NaN (quiet, sign
 * kept).  And back (exact). */
PH_API uint16_t ph_f64_to_f16_bits(double d);
PH_API uint16_t ph_f64_to_bf16_bits(double d);
PH_API double ph_f16_bits_to_f64(uint16_t h);
PH_API double ph_bf16_bits_to_f64(uint16_t h);

/* A new tensor of dtype and shape (rank, dims) holding vals (numel(dims)
 * doubles, row major; borrowed).  The caller owns the result
 * (ph_tensor_free, or give it to a graph).
 *  - FLOAT, FLOAT16, BFLOAT16: each value is rounded once to the nearest
 *    representable value, ties to even; overflow is +-infinity, NaN stays
 *    NaN.  DOUBLE is copied.
 *  - Integer dtypes and BOOL: every value must be integral and in the
 *    dtype's range (BOOL: 0 or 1).
 * NULL for another dtype, a value an integer dtype cannot hold exactly, a
 * negative dim, or out of memory. */
PH_API ph_tensor *ph_tensor_from_f64(int dtype, size_t rank, const int64_t *dims, const double *vals);

/* A per-channel scale of a float tensor, as Conv/MatMul weight folding
 * needs it: *out gets a new tensor of t's dtype and shape whose element k
 * (flat, row major) is t[k] * factor[(k / inner) % count] (divide != 0:
 * divided by it), computed in double and rounded once to the dtype as
 * ph_tensor_from_f64 rounds.  E.g. a Conv weight's output channels:
 * inner = numel / M, count = M; its input channels: inner = the kernel's
 * size, count = C/group; a [K, N] MatMul weight's columns: inner = 1,
 * count = N.  FLOAT and DOUBLE are scaled in one pass into the new
 * tensor, with no buffer of doubles (what a large weight costs is reading
 * it once and writing it once); FLOAT16 and BFLOAT16 go through doubles.
 * Returns 0; PH_EINVAL for another dtype, inner or count < 1, or data that
 * cannot be read; PH_ENOMEM.  t and factor (count values) are borrowed;
 * the caller owns *out (ph_tensor_free, or give it to a graph). */
PH_API int ph_tensor_scaled(const ph_tensor *t, int64_t inner, int64_t count, const double *factor, int divide,
                            ph_tensor **out);

/* -------------------------------------------------------------- replacing */

/* Replace the data of initializer v by t in one call.  v must be an
 * initializer of its graph and not also a graph input (an input with an
 * initializer is only a default the user can override).  Takes ownership of
 * t, even on failure; t must be a tensor the caller owns (ph_tensor_new,
 * ph_tensor_clone, ph_tensor_from_f64), never one a graph or an attribute
 * owns.  t's dtype and shape may differ from the old tensor's: v's known
 * type (ph_value_set_type) is then set to t's.  The old tensor is freed, so
 * a pointer from an earlier ph_value_const(v) is invalid afterwards.  Every
 * node that reads v (nodes of subgraphs included) is reported as changed, so
 * ph_graph_update_shapes re-infers it and the rewrite driver revisits it.
 * Returns 0, or PH_EINVAL (t or v NULL, v not an initializer, t a sequence
 * or optional), PH_EBUSY (v is also a graph input), PH_ENOMEM. */
PH_API int ph_value_set_const(ph_value *v, ph_tensor *t);

/* ------------------------------------------------------------ per channel */

/* 1 if t, broadcast against a tensor of rank out_rank, varies only along
 * `axis` (negative counts from the end): t's rank is at most out_rank and,
 * aligned on the right, its dims are 1 except possibly the dim at axis,
 * which is 1 or `channels` (channels < 0: any size).  A scalar, or a shape of
 * all ones, counts as per-channel.  0 otherwise, and 0 for invalid arguments
 * (t NULL, out_rank < 0, axis out of range).  t is borrowed; only its shape
 * is read. */
PH_API int ph_const_is_per_channel(const ph_tensor *t, int out_rank, int axis, int64_t channels);

/* The per-channel vector of t: out[c] (channels >= 0 entries, caller
 * supplied) gets t's value for channel c; a t with one element fills every
 * entry with it.  0, PH_EINVAL when t is not per-channel for (out_rank, axis,
 * channels) or channels < 0, or the errors of ph_tensor_read_f64.  t is
 * borrowed. */
PH_API int ph_const_channel_values(const ph_tensor *t, int out_rank, int axis, int64_t channels,
                                   double *out);

/* ------------------------------------------------------- layout operands */

/* A new tensor (caller owns it) holding constant t as an operand of rank
 * `rank` transposed by perm (a permutation of 0..rank-1): t is first
 * aligned on the right by the broadcasting rule (leading dims of 1 added up
 * to `rank`), then dim i of the result is dim perm[i] of that, elements
 * moved accordingly.  This is what a broadcast operand becomes when a
 * Transpose moves across the elementwise operator that reads it: for
 * y = op(Transpose(x, P), c), op(x, ph_tensor_transpose(c, r, inverse(P)))
 * transposed by P is y.  Any fixed-size dtype (bytes are moved, not
 * converted).  NULL when t's rank exceeds `rank`, perm is not a
 * permutation, rank > 64, t is a STRING tensor or its data cannot be read,
 * or out of memory.  t and perm are borrowed.
 * (sdk/src/const/tensor_transpose.c; added for
 * push_transpose_through_elementwise and transpose_large_input_conv.) */
PH_API ph_tensor *ph_tensor_transpose(const ph_tensor *t, size_t rank, const int64_t *perm);

/* A block of the columns of t (rank >= 1, fixed-size dtype): its last axis,
 * of size K, read as [outer, parts, inner] (K = outer * parts * inner), keeps
 * parts start .. start + len - 1, in order: the result has t's dtype and
 * shape but the last dim, outer * len * inner.  This is the slice of a fused
 * weight [H, K] that one of the parts it is cut into keeps, when the
 * product's last axis is reshaped to [..., parts, inner] (inner = 1: plain
 * columns start .. start + len - 1).  NULL when K is not a multiple of
 * parts * inner, the block is not within 0..parts, the data cannot be read,
 * or out of memory.  t is borrowed; the caller owns the result.
 * (sdk/src/const/tensor_columns.c; added for split_qkv_matmul.) */
PH_API ph_tensor *ph_tensor_slice_columns(const ph_tensor *t, int64_t parts, int64_t inner, int64_t start,
                                          int64_t len);

#ifdef __cplusplus
}
#endif
#endif
