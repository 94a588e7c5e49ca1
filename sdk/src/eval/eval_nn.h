/* sdk/src/eval/eval_nn.h - internal declarations of the heavy evaluator kernels
 * (sdk/src/eval_nn_*.c): the blocked GEMM they share, small helpers, and
 * the kernel entry points registered in eval_nn_table.c.
 *
 * Matrices are described by a base pointer and two element strides, so a
 * transposed or otherwise strided operand needs no copy: element (i, j) of
 * A is A[i * rs + j * cs].  The output C is always row major with row
 * stride ldc.
 */
#ifndef PASSHOST_SDK_EVAL_NN_H
#define PASSHOST_SDK_EVAL_NN_H

#include <stddef.h>
#include <stdint.h>

#include "eval_kernels.h"

/* Spatial ranks above this are refused by Conv, pooling and Resize. */
#define EVAL_NN_MAX_RANK 8

/* C = alpha * A(MxK) * B(KxN) + beta * C.  beta == 0: C is only written
 * (whatever it held, NaN included, is ignored).  Cache-blocked and packed;
 * uses an AVX/FMA micro-kernel when the CPU has one.  0 or PH_ENOMEM. */
int eval_sgemm(size_t M, size_t N, size_t K, float alpha,
              const float *A, ptrdiff_t rsa, ptrdiff_t csa,
              const float *B, ptrdiff_t rsb, ptrdiff_t csb,
              float beta, float *C, ptrdiff_t ldc);

/* The same for float64 (a simpler, blocked loop nest; no allocation). */
void eval_dgemm(size_t M, size_t N, size_t K, double alpha,
               const double *A, ptrdiff_t rsa, ptrdiff_t csa,
               const double *B, ptrdiff_t rsb, ptrdiff_t csb,
               double beta, double *C, ptrdiff_t ldc);

/* y[0..n) += w * x[0..n) (x and y do not overlap). */
void eval_saxpy(size_t n, float w, const float *x, float *y);

/* Product of dims[0..n), or -1 if it overflows int64. */
int64_t eval_nn_prod(const int64_t *dims, size_t n);

/* Largest spatial dim, kernel, stride, dilation or pad the Conv and pool
 * kernels take: with every operand below 2^30 no output-size formula
 * ((k - 1) * d + 1, (out - 1) * s + dk, ...) can overflow int64. */
#define EVAL_NN_DIM_MAX ((int64_t)1 << 30)

/* Kernels (eval_kernels.h contract). */
int eval_k_matmul(eval_kargs *a);
int eval_k_gemm(eval_kargs *a);
int eval_k_conv(eval_kargs *a);
int eval_k_conv_transpose(eval_kargs *a);
int eval_k_average_pool(eval_kargs *a);
int eval_k_max_pool(eval_kargs *a);
int eval_k_global_average_pool(eval_kargs *a);
int eval_k_global_max_pool(eval_kargs *a);
int eval_k_batch_norm(eval_kargs *a);
int eval_k_instance_norm(eval_kargs *a);
int eval_k_layer_norm(eval_kargs *a);
int eval_k_lrn(eval_kargs *a);
int eval_k_mean_variance_norm(eval_kargs *a);
int eval_k_lp_norm(eval_kargs *a);
int eval_k_group_norm(eval_kargs *a);
int eval_k_lp_pool(eval_kargs *a);
int eval_k_global_lp_pool(eval_kargs *a);
int eval_k_max_roi_pool(eval_kargs *a);
int eval_k_resize(eval_kargs *a);
int eval_k_einsum(eval_kargs *a);

#endif
