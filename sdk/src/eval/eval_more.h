/* sdk/src/eval/eval_more.h - the kernels of eval_more_table.c, by file, and
 * the helpers they share. */
#ifndef PASSHOST_SDK_EVAL_MORE_H
#define PASSHOST_SDK_EVAL_MORE_H

#include "eval_ops_util.h"

/* ------------------------------------------------------------ shared helpers
 * (eval_ops_control.c) */
/* Index idx of axis `axis` of tensor t, that axis removed: a new tensor, or
 * NULL when out of memory. */
ph_tensor *phi_take_axis(const ph_tensor *t, size_t axis, int64_t idx);
/* Stack n tensors of dtype and shape (rank, dims) along a new axis `axis`
 * (in reverse order when reverse) into a new *out.  0, or PH_EINVAL when an
 * item differs, PH_ENOMEM; a->err set. */
int phi_stack(phi_kargs *a, ph_tensor *const *items, size_t n, size_t axis, int reverse, int dtype,
              size_t rank, const int64_t *dims, ph_tensor **out);

/* ------------------------------------------------------------ kernels */
int phi_k_if(phi_kargs *a);               /* eval_ops_control.c */
int phi_k_loop(phi_kargs *a);
int phi_k_scan(phi_kargs *a);
int phi_k_sequence_map(phi_kargs *a);
int phi_k_sequence_empty(phi_kargs *a);   /* eval_ops_sequence.c */
int phi_k_sequence_construct(phi_kargs *a);
int phi_k_sequence_at(phi_kargs *a);
int phi_k_sequence_insert(phi_kargs *a);
int phi_k_sequence_erase(phi_kargs *a);
int phi_k_sequence_length(phi_kargs *a);
int phi_k_split_to_sequence(phi_kargs *a);
int phi_k_concat_from_sequence(phi_kargs *a);
int phi_k_optional(phi_kargs *a);
int phi_k_optional_has_element(phi_kargs *a);
int phi_k_optional_get_element(phi_kargs *a);
int phi_k_scatter_nd(phi_kargs *a);       /* eval_ops_index.c */
int phi_k_gather_nd(phi_kargs *a);
int phi_k_scatter_elements(phi_kargs *a);
int phi_k_one_hot(phi_kargs *a);
int phi_k_compress(phi_kargs *a);
int phi_k_reverse_sequence(phi_kargs *a);
int phi_k_trilu(phi_kargs *a);
int phi_k_eye_like(phi_kargs *a);
int phi_k_cumsum(phi_kargs *a);
int phi_k_unique(phi_kargs *a);
int phi_k_nll_loss(phi_kargs *a);         /* eval_nn_loss.c */
int phi_k_softmax_cross_entropy_loss(phi_kargs *a);
int phi_k_rnn(phi_kargs *a);              /* eval_nn_rnn.c */
int phi_k_gru(phi_kargs *a);
int phi_k_lstm(phi_kargs *a);
int phi_k_quantize_linear(phi_kargs *a);  /* eval_ops_quant.c */
int phi_k_dequantize_linear(phi_kargs *a);
int phi_k_dynamic_quantize_linear(phi_kargs *a);
int phi_k_matmul_integer(phi_kargs *a);
int phi_k_conv_integer(phi_kargs *a);
int phi_k_qlinear_matmul(phi_kargs *a);
int phi_k_qlinear_conv(phi_kargs *a);
int phi_k_non_max_suppression(phi_kargs *a); /* eval_nn_vision.c */
int phi_k_roi_align(phi_kargs *a);
int phi_k_grid_sample(phi_kargs *a);
int phi_k_max_unpool(phi_kargs *a);
int phi_k_upsample(phi_kargs *a);
int phi_k_dft(phi_kargs *a);              /* eval_ops_signal.c */
int phi_k_stft(phi_kargs *a);
int phi_k_hann_window(phi_kargs *a);
int phi_k_hamming_window(phi_kargs *a);
int phi_k_blackman_window(phi_kargs *a);
int phi_k_mel_weight_matrix(phi_kargs *a);
int phi_k_det(phi_kargs *a);              /* eval_nn_linalg.c */
int phi_k_random_uniform(phi_kargs *a);   /* eval_ops_random.c */
int phi_k_random_normal(phi_kargs *a);
int phi_k_bernoulli(phi_kargs *a);
int phi_k_multinomial(phi_kargs *a);
int phi_k_tfidf_vectorizer(phi_kargs *a); /* eval_ops_tfidf.c */
int phi_k_ms_fused_conv(phi_kargs *a);    /* eval_ms_contrib.c (com.microsoft) */
int phi_k_ms_fused_gemm(phi_kargs *a);
int phi_k_ms_fused_matmul(phi_kargs *a);
int phi_k_ms_gelu(phi_kargs *a);
int phi_k_ms_fast_gelu(phi_kargs *a);
int phi_k_ms_skip_layer_norm(phi_kargs *a);

#endif
