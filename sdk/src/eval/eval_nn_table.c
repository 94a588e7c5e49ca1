/* sdk/src/eval/eval_nn_table.c - registry of the heavy kernels (MatMul, Gemm, Conv, ...).
 * The kernels live in sdk/src/eval_nn_*.c and are declared in eval_nn.h. */
#include "eval_nn.h"

const phi_kernel_entry phi_kernels_heavy[] = {
    {PH_OP_MatMul, phi_k_matmul, 0},
    {PH_OP_Gemm, phi_k_gemm, 0},
    {PH_OP_Conv, phi_k_conv, 0},
    {PH_OP_ConvTranspose, phi_k_conv_transpose, 0},
    {PH_OP_AveragePool, phi_k_average_pool, 0},
    {PH_OP_MaxPool, phi_k_max_pool, 0},
    {PH_OP_GlobalAveragePool, phi_k_global_average_pool, 0},
    {PH_OP_GlobalMaxPool, phi_k_global_max_pool, 0},
    {PH_OP_BatchNormalization, phi_k_batch_norm, 0},
    {PH_OP_InstanceNormalization, phi_k_instance_norm, 0},
    {PH_OP_LayerNormalization, phi_k_layer_norm, 0},
    {PH_OP_Resize, phi_k_resize, 0},
    {PH_OP_Einsum, phi_k_einsum, 0},
    {PH_OP_UNKNOWN, NULL, 0},
};
