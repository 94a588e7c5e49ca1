/* sdk/src/eval/eval_more.h - the kernels of eval_more_table.c, by file, and
 * the helpers they share. */
#ifndef PASSHOST_SDK_EVAL_MORE_H
#define PASSHOST_SDK_EVAL_MORE_H

#include "eval_ops_util.h"

/* ------------------------------------------------------------ shared helpers
 * (eval_ops_control.c) */
/* Index idx of axis `axis` of tensor t, that axis removed: a new tensor, or
 * NULL when out of memory. */
ph_tensor *eval_take_axis(const ph_tensor *t, size_t axis, int64_t idx);
/* Stack n tensors of dtype and shape (rank, dims) along a new axis `axis`
 * (in reverse order when reverse) into a new *out.  0, or PH_EINVAL when an
 * item differs, PH_ENOMEM; a->err set. */
int eval_stack(eval_kargs *a, ph_tensor *const *items, size_t n, size_t axis, int reverse, int dtype,
              size_t rank, const int64_t *dims, ph_tensor **out);

/* ------------------------------------------------------------ kernels */
int eval_k_if(eval_kargs *a);               /* eval_ops_control.c */
int eval_k_loop(eval_kargs *a);
int eval_k_scan(eval_kargs *a);
int eval_k_sequence_map(eval_kargs *a);
int eval_k_sequence_empty(eval_kargs *a);   /* eval_ops_sequence.c */
int eval_k_sequence_construct(eval_kargs *a);
int eval_k_sequence_at(eval_kargs *a);
int eval_k_sequence_insert(eval_kargs *a);
int eval_k_sequence_erase(eval_kargs *a);
int eval_k_sequence_length(eval_kargs *a);
int eval_k_split_to_sequence(eval_kargs *a);
int eval_k_concat_from_sequence(eval_kargs *a);
int eval_k_optional(eval_kargs *a);
int eval_k_optional_has_element(eval_kargs *a);
int eval_k_optional_get_element(eval_kargs *a);
int eval_k_scatter_nd(eval_kargs *a);       /* eval_ops_index.c */
int eval_k_gather_nd(eval_kargs *a);
int eval_k_scatter_elements(eval_kargs *a);
int eval_k_one_hot(eval_kargs *a);
int eval_k_compress(eval_kargs *a);
int eval_k_reverse_sequence(eval_kargs *a);
int eval_k_trilu(eval_kargs *a);
int eval_k_eye_like(eval_kargs *a);
int eval_k_cumsum(eval_kargs *a);
int eval_k_unique(eval_kargs *a);
int eval_k_nll_loss(eval_kargs *a);         /* eval_nn_loss.c */
int eval_k_softmax_cross_entropy_loss(eval_kargs *a);
int eval_k_rnn(eval_kargs *a);              /* eval_nn_rnn.c */
int eval_k_gru(eval_kargs *a);
int eval_k_lstm(eval_kargs *a);
int eval_k_quantize_linear(eval_kargs *a);  /* eval_ops_quant.c */
int eval_k_dequantize_linear(eval_kargs *a);
int eval_k_dynamic_quantize_linear(eval_kargs *a);
int eval_k_matmul_integer(eval_kargs *a);
int eval_k_conv_integer(eval_kargs *a);
int eval_k_qlinear_matmul(eval_kargs *a);
int eval_k_qlinear_conv(eval_kargs *a);
int eval_k_non_max_suppression(eval_kargs *a); /* eval_nn_vision.c */
int eval_k_roi_align(eval_kargs *a);
int eval_k_grid_sample(eval_kargs *a);
int eval_k_max_unpool(eval_kargs *a);
int eval_k_upsample(eval_kargs *a);
int eval_k_dft(eval_kargs *a);              /* eval_ops_signal.c */
int eval_k_stft(eval_kargs *a);
int eval_k_hann_window(eval_kargs *a);
int eval_k_hamming_window(eval_kargs *a);
int eval_k_blackman_window(eval_kargs *a);
int eval_k_mel_weight_matrix(eval_kargs *a);
int eval_k_det(eval_kargs *a);              /* eval_nn_linalg.c */
int eval_k_random_uniform(eval_kargs *a);   /* eval_ops_random.c */
int eval_k_random_normal(eval_kargs *a);
int eval_k_bernoulli(eval_kargs *a);
int eval_k_multinomial(eval_kargs *a);
int eval_k_tfidf_vectorizer(eval_kargs *a); /* eval_ops_tfidf.c */
int eval_k_ms_fused_conv(eval_kargs *a);    /* eval_ms_contrib.c (com.microsoft) */
int eval_k_ms_fused_gemm(eval_kargs *a);
int eval_k_ms_fused_matmul(eval_kargs *a);
int eval_k_ms_gelu(eval_kargs *a);
int eval_k_ms_fast_gelu(eval_kargs *a);
int eval_k_ms_skip_layer_norm(eval_kargs *a);

#endif
