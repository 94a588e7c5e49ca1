/* sdk/src/eval/eval_ops_util.h - helpers shared by the light kernels (eval_ops_*.c).
 *
 * Error messages: kernels report plain messages ("dtype string is not
 * supported"); the core prefixes the node name and op type.  Every helper
 * that can fail fills a->err and returns a negative PH_E* code.
 *
 * Shapes are limited to EVAL_MAX_RANK dims (PH_EUNSUPPORTED beyond).
 */
#ifndef PASSHOST_SDK_EVAL_OPS_UTIL_H
#define PASSHOST_SDK_EVAL_OPS_UTIL_H

#include "eval_kernels.h"

#define EVAL_MAX_RANK 16

/* ------------------------------------------------------------ errors */
int eval_kfail(eval_kargs *a, int code, const char *fmt, ...) PH_PRINTF(3, 4);
/* PH_EUNSUPPORTED "<what> dtype <name> is not supported"; float32 is named as
 * a->half when the core converted input 0 from that half type. */
int eval_kbad_dtype(eval_kargs *a, const char *what, int dtype);

/* ------------------------------------------------------------ inputs/outputs */
/* Input i, or NULL when omitted or past the end. */
static inline const ph_tensor *eval_in(const eval_kargs *a, size_t i)
{
    return i < a->n_in ? a->in[i] : NULL;
}
/* Input i, required: PH_EINVAL when missing.  *data receives its bytes. */
int eval_need(eval_kargs *a, size_t i, const ph_tensor **t, const void **data);
/* eval_need for a float32 or float64 input (halves arrive as float32 unless
 * the kernel is EVAL_KF_NATIVE_HALF): PH_EUNSUPPORTED naming `what` for
 * another dtype. */
int eval_need_float(eval_kargs *a, size_t i, const char *what, const ph_tensor **t, const void **data);
/* Allocate output i (skipped, returning 0 with *data NULL, when the output is
 * not wanted).  Stores the tensor in a->out[i]. */
int eval_out(eval_kargs *a, size_t i, int dtype, size_t rank, const int64_t *dims, void **data);
static inline int eval_wanted(const eval_kargs *a, size_t i)
{
    return i < a->n_out && (!a->out_wanted || a->out_wanted[i]);
}

/* Run kernel fn for a's node on other inputs (borrowed), its output 0 (a
 * new tensor) into *out: for kernels built on another one (MatMulInteger
 * on MatMul, FusedConv on Conv).  fn's errors go to a->err. */
int eval_k_call(eval_kargs *a, eval_kernel_fn fn, const ph_tensor *const *in, size_t n_in, ph_tensor **out);

/* ------------------------------------------------------------ dtypes */
static inline int eval_dt_float(int dt) { return dt == PH_DT_FLOAT || dt == PH_DT_DOUBLE; }
static inline int eval_dt_sint(int dt)
{
    return dt == PH_DT_INT8 || dt == PH_DT_INT16 || dt == PH_DT_INT32 || dt == PH_DT_INT64;
}
static inline int eval_dt_uint(int dt)
{
    return dt == PH_DT_UINT8 || dt == PH_DT_UINT16 || dt == PH_DT_UINT32 || dt == PH_DT_UINT64;
}
static inline int eval_dt_int(int dt) { return eval_dt_sint(dt) || eval_dt_uint(dt); }
/* float, double, ints or bool: the dtypes the light kernels compute on. */
static inline int eval_dt_numeric(int dt) { return eval_dt_float(dt) || eval_dt_int(dt); }

/* Element i of a buffer of dtype dt as double / int64 (floats truncated
 * toward zero and saturated; NaN -> 0).  Any numeric dtype, bool, halves. */
double eval_load_f64(const void *p, int dt, size_t i);
int64_t eval_load_i64(const void *p, int dt, size_t i);
/* Store v as element i of dtype dt (to integers: truncated and saturated). */
void eval_store_f64(void *p, int dt, size_t i, double v);
void eval_store_i64(void *p, int dt, size_t i, int64_t v);
/* Saturating double -> int64 (NaN -> 0). */
int64_t eval_f64_to_i64(double v);
/* A coordinate or size computed in double (a sampling position, a scaled
 * box corner) as an integer: NaN gives 0 and anything beyond +-2^40 is
 * clamped there, so later +-1 and products with small factors stay defined
 * (out-of-range positions are then handled like any other). */
static inline int64_t eval_coord(double v)
{
    const double lim = 1099511627776.0; /* 2^40 */
    return v != v ? 0 : v > lim ? (int64_t)lim : v < -lim ? -(int64_t)lim : (int64_t)v;
}
/* Convert n elements between any two numeric/bool/half dtypes. */
void eval_convert(void *dst, int ddt, const void *src, int sdt, size_t n);

/* ------------------------------------------------------------ small int lists */
/* Read an int32/int64 tensor of at most cap elements (axes, pads, shapes). */
int eval_small_ints(eval_kargs *a, const ph_tensor *t, const char *what, int64_t *buf, size_t cap,
                   size_t *n);
/* Element i of an index tensor (int32/int64 data id of dtype idt) as an
 * index into a dim of size d: negative ones count from the end; PH_EINVAL
 * outside [-d, d). */
int eval_index_at(eval_kargs *a, const void *id, int idt, size_t i, int64_t d, int64_t *out);
/* Normalize axis into [0, rank). */
int eval_axis(eval_kargs *a, int64_t axis, size_t rank, size_t *out);
/* Row-major element strides of dims. */
void eval_strides(size_t rank, const int64_t *dims, int64_t *st);
int64_t eval_numel(size_t rank, const int64_t *dims);

/* ------------------------------------------------------------ broadcasting */
typedef struct eval_bcast {
    size_t out_rank;
    int64_t out_dims[EVAL_MAX_RANK];
    int64_t numel;
    /* collapsed iteration space: rank >= 1, inner dim last */
    size_t rank, n_in;
    int64_t dims[EVAL_MAX_RANK];
    int64_t st[3][EVAL_MAX_RANK]; /* element strides per input, 0 when broadcast */
} eval_bcast;

/* Multidirectional (numpy) broadcast of n (<= 3) tensors. */
int eval_bcast_init(eval_kargs *a, eval_bcast *b, size_t n, const ph_tensor *const *ts);

typedef struct eval_bc_it {
    int64_t idx[EVAL_MAX_RANK];
    int64_t off[3]; /* element offset of each input at the start of the row */
    int64_t out;    /* element offset of the output */
} eval_bc_it;

/* Rows of length b->dims[b->rank-1]; input k steps by b->st[k][b->rank-1]
 * (0 or 1) along a row.  Usage: eval_bc_begin; do {...} while (eval_bc_next). */
void eval_bc_begin(const eval_bcast *b, eval_bc_it *it);
int eval_bc_next(const eval_bcast *b, eval_bc_it *it);

/* ------------------------------------------------------------ data movement */
/* Write the elements of src (element size es) visited in row-major order of
 * dims with element strides st (may be 0 or negative) contiguously to dst.
 * rank <= 2 * EVAL_MAX_RANK. */
void eval_copy_strided(void *dst, const void *src, size_t es, size_t rank, const int64_t *dims,
                      const int64_t *st);

/* ------------------------------------------------------------ kernels
 * (registered in eval_ops_table.c; one group per eval_ops_*.c file) */
int eval_k_unary(eval_kargs *a);     /* eval_ops_unary.c */
int eval_k_predicate(eval_kargs *a);
int eval_k_binary(eval_kargs *a);    /* eval_ops_binary.c */
int eval_k_bitshift(eval_kargs *a);
int eval_k_bitwise_not(eval_kargs *a);
int eval_k_where(eval_kargs *a);
int eval_k_identity(eval_kargs *a);  /* eval_ops_shape.c */
int eval_k_dropout(eval_kargs *a);
int eval_k_dropout_training(eval_kargs *a); /* eval_ops_random.c */
int eval_k_shape(eval_kargs *a);
int eval_k_size(eval_kargs *a);
int eval_k_reshape(eval_kargs *a);
int eval_k_flatten(eval_kargs *a);
int eval_k_squeeze(eval_kargs *a);
int eval_k_unsqueeze(eval_kargs *a);
int eval_k_constant(eval_kargs *a);
int eval_k_constant_of_shape(eval_kargs *a);
int eval_k_range(eval_kargs *a);
int eval_k_cast(eval_kargs *a);
int eval_k_cast_like(eval_kargs *a);
int eval_k_transpose(eval_kargs *a);  /* eval_ops_move.c */
int eval_k_depth_space(eval_kargs *a);
int eval_k_expand(eval_kargs *a);
int eval_k_tile(eval_kargs *a);
int eval_k_slice(eval_kargs *a);
int eval_k_concat(eval_kargs *a);
int eval_k_split(eval_kargs *a);
int eval_k_gather(eval_kargs *a);
int eval_k_gather_elements(eval_kargs *a);
int eval_k_reduce(eval_kargs *a);     /* eval_ops_reduce.c */
int eval_k_argmax(eval_kargs *a);
int eval_k_softmax(eval_kargs *a);
int eval_k_pad(eval_kargs *a);        /* eval_ops_misc.c */
int eval_k_topk(eval_kargs *a);
int eval_k_nonzero(eval_kargs *a);

#endif
