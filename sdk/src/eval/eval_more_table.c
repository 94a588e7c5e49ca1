/* sdk/src/eval/eval_more_table.c - registry of the kernels beyond the light
 * and heavy tables: control flow, sequences and optionals, recurrent nets,
 * quantized ops, signal processing, detection, scatter/gather, losses,
 * random ops, and the com.microsoft ops passhost emits. */
#include "eval_more.h"
#include "eval_nn.h"

#define SEQ (EVAL_KF_NATIVE_HALF | EVAL_KF_CONTAINERS)

const eval_kernel_entry eval_kernels_more[] = {
    /* control flow (eval_ops_control.c) */
    {PH_OP_If, eval_k_if, SEQ},
    {PH_OP_Loop, eval_k_loop, SEQ},
    {PH_OP_Scan, eval_k_scan, SEQ},
    {PH_OP_SequenceMap, eval_k_sequence_map, SEQ},
    /* sequences and optionals (eval_ops_sequence.c) */
    {PH_OP_SequenceEmpty, eval_k_sequence_empty, SEQ},
    {PH_OP_SequenceConstruct, eval_k_sequence_construct, SEQ},
    {PH_OP_SequenceAt, eval_k_sequence_at, SEQ},
    {PH_OP_SequenceInsert, eval_k_sequence_insert, SEQ},
    {PH_OP_SequenceErase, eval_k_sequence_erase, SEQ},
    {PH_OP_SequenceLength, eval_k_sequence_length, SEQ},
    {PH_OP_SplitToSequence, eval_k_split_to_sequence, SEQ},
    {PH_OP_ConcatFromSequence, eval_k_concat_from_sequence, SEQ},
    {PH_OP_Optional, eval_k_optional, SEQ},
    {PH_OP_OptionalHasElement, eval_k_optional_has_element, SEQ},
    {PH_OP_OptionalGetElement, eval_k_optional_get_element, SEQ},
    /* indexing (eval_ops_index.c; elements move by size) */
    {PH_OP_ScatterND, eval_k_scatter_nd, EVAL_KF_NATIVE_HALF},
    {PH_OP_GatherND, eval_k_gather_nd, EVAL_KF_NATIVE_HALF},
    {PH_OP_ScatterElements, eval_k_scatter_elements, EVAL_KF_NATIVE_HALF},
    {PH_OP_Scatter, eval_k_scatter_elements, EVAL_KF_NATIVE_HALF},
    {PH_OP_OneHot, eval_k_one_hot, EVAL_KF_NATIVE_HALF},
    {PH_OP_Compress, eval_k_compress, EVAL_KF_NATIVE_HALF},
    {PH_OP_ReverseSequence, eval_k_reverse_sequence, EVAL_KF_NATIVE_HALF},
    {PH_OP_Trilu, eval_k_trilu, EVAL_KF_NATIVE_HALF},
    {PH_OP_EyeLike, eval_k_eye_like, EVAL_KF_NATIVE_HALF},
    {PH_OP_CumSum, eval_k_cumsum, 0},
    {PH_OP_Unique, eval_k_unique, EVAL_KF_NATIVE_HALF},
    /* losses (eval_nn_loss.c) */
    {PH_OP_SoftmaxCrossEntropyLoss, eval_k_softmax_cross_entropy_loss, 0},
    /* recurrent (eval_nn_rnn.c) */
    {PH_OP_RNN, eval_k_rnn, 0},
    {PH_OP_GRU, eval_k_gru, 0},
    {PH_OP_LSTM, eval_k_lstm, 0},
    /* quantized (eval_ops_quant.c; scales of any float dtype) */
    {PH_OP_QuantizeLinear, eval_k_quantize_linear, EVAL_KF_NATIVE_HALF},
    {PH_OP_DequantizeLinear, eval_k_dequantize_linear, EVAL_KF_NATIVE_HALF},
    {PH_OP_DynamicQuantizeLinear, eval_k_dynamic_quantize_linear, 0},
    {PH_OP_MatMulInteger, eval_k_matmul_integer, 0},
    {PH_OP_ConvInteger, eval_k_conv_integer, 0},
    {PH_OP_QLinearMatMul, eval_k_qlinear_matmul, EVAL_KF_NATIVE_HALF},
    {PH_OP_QLinearConv, eval_k_qlinear_conv, EVAL_KF_NATIVE_HALF},
    /* detection and sampling (eval_nn_vision.c) */
    {PH_OP_NonMaxSuppression, eval_k_non_max_suppression, 0},
    {PH_OP_RoiAlign, eval_k_roi_align, 0},
    {PH_OP_GridSample, eval_k_grid_sample, 0},
    {PH_OP_MaxUnpool, eval_k_max_unpool, EVAL_KF_NATIVE_HALF},
    {PH_OP_Upsample, eval_k_upsample, EVAL_KF_NATIVE_HALF},
    /* normalizations beside the heavy table's (eval_nn_norm.c) */
    {PH_OP_LRN, eval_k_lrn, 0},
    {PH_OP_LpNormalization, eval_k_lp_norm, 0},
    {PH_OP_GroupNormalization, eval_k_group_norm, 0},
    /* pooling beside the heavy table's (eval_nn_pool.c) */
    {PH_OP_LpPool, eval_k_lp_pool, 0},
    {PH_OP_GlobalLpPool, eval_k_global_lp_pool, 0},
    {PH_OP_MaxRoiPool, eval_k_max_roi_pool, 0},
    /* bitwise (eval_ops_binary.c) */
    {PH_OP_BitwiseNot, eval_k_bitwise_not, 0},
    /* signal processing (eval_ops_signal.c) */
    {PH_OP_DFT, eval_k_dft, 0},
    {PH_OP_STFT, eval_k_stft, 0},
    {PH_OP_HannWindow, eval_k_hann_window, EVAL_KF_NATIVE_HALF},
    {PH_OP_HammingWindow, eval_k_hamming_window, EVAL_KF_NATIVE_HALF},
    {PH_OP_BlackmanWindow, eval_k_blackman_window, EVAL_KF_NATIVE_HALF},
    {PH_OP_MelWeightMatrix, eval_k_mel_weight_matrix, EVAL_KF_NATIVE_HALF},
    /* linear algebra (eval_nn_linalg.c) */
    {PH_OP_Det, eval_k_det, 0},
    /* random (eval_ops_random.c; Dropout's training mode is there too) */
    {PH_OP_RandomUniform, eval_k_random_uniform, EVAL_KF_NATIVE_HALF | EVAL_KF_RANDOM},
    {PH_OP_RandomUniformLike, eval_k_random_uniform, EVAL_KF_NATIVE_HALF | EVAL_KF_RANDOM},
    {PH_OP_RandomNormal, eval_k_random_normal, EVAL_KF_NATIVE_HALF | EVAL_KF_RANDOM},
    {PH_OP_RandomNormalLike, eval_k_random_normal, EVAL_KF_NATIVE_HALF | EVAL_KF_RANDOM},
    {PH_OP_Bernoulli, eval_k_bernoulli, EVAL_KF_NATIVE_HALF | EVAL_KF_RANDOM},
    {PH_OP_Multinomial, eval_k_multinomial, EVAL_KF_NATIVE_HALF | EVAL_KF_RANDOM},
    /* text (eval_ops_tfidf.c) */
    {PH_OP_TfIdfVectorizer, eval_k_tfidf_vectorizer, 0},
    {PH_OP_UNKNOWN, NULL, 0},
};

const eval_named_kernel eval_kernels_named[] = {
    /* default-domain ops outside ph_op */
    {"", "NegativeLogLikelihoodLoss", {PH_OP_UNKNOWN, eval_k_nll_loss, 0}},
    {"", "MeanVarianceNormalization", {PH_OP_UNKNOWN, eval_k_mean_variance_norm, 0}},
    /* com.microsoft ops the adapt passes emit (eval_ms_contrib.c) */
    {"com.microsoft", "FusedConv", {PH_OP_UNKNOWN, eval_k_ms_fused_conv, 0}},
    {"com.microsoft", "FusedGemm", {PH_OP_UNKNOWN, eval_k_ms_fused_gemm, 0}},
    {"com.microsoft", "FusedMatMul", {PH_OP_UNKNOWN, eval_k_ms_fused_matmul, 0}},
    {"com.microsoft", "Gelu", {PH_OP_UNKNOWN, eval_k_ms_gelu, 0}},
    {"com.microsoft", "FastGelu", {PH_OP_UNKNOWN, eval_k_ms_fast_gelu, 0}},
    {"com.microsoft", "SkipLayerNormalization", {PH_OP_UNKNOWN, eval_k_ms_skip_layer_norm, 0}},
    {NULL, NULL, {PH_OP_UNKNOWN, NULL, 0}},
};
