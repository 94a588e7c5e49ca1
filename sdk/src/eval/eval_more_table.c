/* sdk/src/eval/eval_more_table.c - registry of the kernels beyond the light
 * and heavy tables: control flow, sequences and optionals, recurrent nets,
 * quantized ops, signal processing, detection, scatter/gather, losses,
 * random ops, and the com.microsoft ops passhost emits. */
#include "eval_more.h"
#include "eval_nn.h"

#define SEQ (PHI_KF_NATIVE_HALF | PHI_KF_CONTAINERS)

const phi_kernel_entry phi_kernels_more[] = {
    /* control flow (eval_ops_control.c) */
    {PH_OP_If, phi_k_if, SEQ},
    {PH_OP_Loop, phi_k_loop, SEQ},
    {PH_OP_Scan, phi_k_scan, SEQ},
    {PH_OP_SequenceMap, phi_k_sequence_map, SEQ},
    /* sequences and optionals (eval_ops_sequence.c) */
    {PH_OP_SequenceEmpty, phi_k_sequence_empty, SEQ},
    {PH_OP_SequenceConstruct, phi_k_sequence_construct, SEQ},
    {PH_OP_SequenceAt, phi_k_sequence_at, SEQ},
    {PH_OP_SequenceInsert, phi_k_sequence_insert, SEQ},
    {PH_OP_SequenceErase, phi_k_sequence_erase, SEQ},
    {PH_OP_SequenceLength, phi_k_sequence_length, SEQ},
    {PH_OP_SplitToSequence, phi_k_split_to_sequence, SEQ},
    {PH_OP_ConcatFromSequence, phi_k_concat_from_sequence, SEQ},
    {PH_OP_Optional, phi_k_optional, SEQ},
    {PH_OP_OptionalHasElement, phi_k_optional_has_element, SEQ},
    {PH_OP_OptionalGetElement, phi_k_optional_get_element, SEQ},
    /* indexing (eval_ops_index.c; elements move by size) */
    {PH_OP_ScatterND, phi_k_scatter_nd, PHI_KF_NATIVE_HALF},
    {PH_OP_GatherND, phi_k_gather_nd, PHI_KF_NATIVE_HALF},
    {PH_OP_ScatterElements, phi_k_scatter_elements, PHI_KF_NATIVE_HALF},
    {PH_OP_Scatter, phi_k_scatter_elements, PHI_KF_NATIVE_HALF},
    {PH_OP_OneHot, phi_k_one_hot, PHI_KF_NATIVE_HALF},
    {PH_OP_Compress, phi_k_compress, PHI_KF_NATIVE_HALF},
    {PH_OP_ReverseSequence, phi_k_reverse_sequence, PHI_KF_NATIVE_HALF},
    {PH_OP_Trilu, phi_k_trilu, PHI_KF_NATIVE_HALF},
    {PH_OP_EyeLike, phi_k_eye_like, PHI_KF_NATIVE_HALF},
    {PH_OP_CumSum, phi_k_cumsum, 0},
    {PH_OP_Unique, phi_k_unique, PHI_KF_NATIVE_HALF},
    /* losses (eval_nn_loss.c) */
    {PH_OP_SoftmaxCrossEntropyLoss, phi_k_softmax_cross_entropy_loss, 0},
    /* recurrent (eval_nn_rnn.c) */
    {PH_OP_RNN, phi_k_rnn, 0},
    {PH_OP_GRU, phi_k_gru, 0},
    {PH_OP_LSTM, phi_k_lstm, 0},
    /* quantized (eval_ops_quant.c; scales of any float dtype) */
    {PH_OP_QuantizeLinear, phi_k_quantize_linear, PHI_KF_NATIVE_HALF},
    {PH_OP_DequantizeLinear, phi_k_dequantize_linear, PHI_KF_NATIVE_HALF},
    {PH_OP_DynamicQuantizeLinear, phi_k_dynamic_quantize_linear, 0},
    {PH_OP_MatMulInteger, phi_k_matmul_integer, 0},
    {PH_OP_ConvInteger, phi_k_conv_integer, 0},
    {PH_OP_QLinearMatMul, phi_k_qlinear_matmul, PHI_KF_NATIVE_HALF},
    {PH_OP_QLinearConv, phi_k_qlinear_conv, PHI_KF_NATIVE_HALF},
    /* detection and sampling (eval_nn_vision.c) */
    {PH_OP_NonMaxSuppression, phi_k_non_max_suppression, 0},
    {PH_OP_RoiAlign, phi_k_roi_align, 0},
    {PH_OP_GridSample, phi_k_grid_sample, 0},
    {PH_OP_MaxUnpool, phi_k_max_unpool, PHI_KF_NATIVE_HALF},
    {PH_OP_Upsample, phi_k_upsample, PHI_KF_NATIVE_HALF},
    /* normalizations beside the heavy table's (eval_nn_norm.c) */
    {PH_OP_LRN, phi_k_lrn, 0},
    {PH_OP_LpNormalization, phi_k_lp_norm, 0},
    {PH_OP_GroupNormalization, phi_k_group_norm, 0},
    /* pooling beside the heavy table's (eval_nn_pool.c) */
    {PH_OP_LpPool, phi_k_lp_pool, 0},
    {PH_OP_GlobalLpPool, phi_k_global_lp_pool, 0},
    {PH_OP_MaxRoiPool, phi_k_max_roi_pool, 0},
    /* bitwise (eval_ops_binary.c) */
    {PH_OP_BitwiseNot, phi_k_bitwise_not, 0},
    /* signal processing (eval_ops_signal.c) */
    {PH_OP_DFT, phi_k_dft, 0},
    {PH_OP_STFT, phi_k_stft, 0},
    {PH_OP_HannWindow, phi_k_hann_window, PHI_KF_NATIVE_HALF},
    {PH_OP_HammingWindow, phi_k_hamming_window, PHI_KF_NATIVE_HALF},
    {PH_OP_BlackmanWindow, phi_k_blackman_window, PHI_KF_NATIVE_HALF},
    {PH_OP_MelWeightMatrix, phi_k_mel_weight_matrix, PHI_KF_NATIVE_HALF},
    /* linear algebra (eval_nn_linalg.c) */
    {PH_OP_Det, phi_k_det, 0},
    /* random (eval_ops_random.c; Dropout's training mode is there too) */
    {PH_OP_RandomUniform, phi_k_random_uniform, PHI_KF_NATIVE_HALF | PHI_KF_RANDOM},
    {PH_OP_RandomUniformLike, phi_k_random_uniform, PHI_KF_NATIVE_HALF | PHI_KF_RANDOM},
    {PH_OP_RandomNormal, phi_k_random_normal, PHI_KF_NATIVE_HALF | PHI_KF_RANDOM},
    {PH_OP_RandomNormalLike, phi_k_random_normal, PHI_KF_NATIVE_HALF | PHI_KF_RANDOM},
    {PH_OP_Bernoulli, phi_k_bernoulli, PHI_KF_NATIVE_HALF | PHI_KF_RANDOM},
    {PH_OP_Multinomial, phi_k_multinomial, PHI_KF_NATIVE_HALF | PHI_KF_RANDOM},
    /* text (eval_ops_tfidf.c) */
    {PH_OP_TfIdfVectorizer, phi_k_tfidf_vectorizer, 0},
    {PH_OP_UNKNOWN, NULL, 0},
};

const phi_named_kernel phi_kernels_named[] = {
    /* default-domain ops outside ph_op */
    {"", "NegativeLogLikelihoodLoss", {PH_OP_UNKNOWN, phi_k_nll_loss, 0}},
    {"", "MeanVarianceNormalization", {PH_OP_UNKNOWN, phi_k_mean_variance_norm, 0}},
    /* com.microsoft ops the adapt passes emit (eval_ms_contrib.c) */
    {"com.microsoft", "FusedConv", {PH_OP_UNKNOWN, phi_k_ms_fused_conv, 0}},
    {"com.microsoft", "FusedGemm", {PH_OP_UNKNOWN, phi_k_ms_fused_gemm, 0}},
    {"com.microsoft", "FusedMatMul", {PH_OP_UNKNOWN, phi_k_ms_fused_matmul, 0}},
    {"com.microsoft", "Gelu", {PH_OP_UNKNOWN, phi_k_ms_gelu, 0}},
    {"com.microsoft", "FastGelu", {PH_OP_UNKNOWN, phi_k_ms_fast_gelu, 0}},
    {"com.microsoft", "SkipLayerNormalization", {PH_OP_UNKNOWN, phi_k_ms_skip_layer_norm, 0}},
    {NULL, NULL, {PH_OP_UNKNOWN, NULL, 0}},
};
