/* sdk/src/eval/eval_nn_table.c - registry of the heavy kernels (MatMul, Gemm, Conv, ...).
 * The kernels live in sdk/src/eval_nn_*.c and are declared in eval_nn.h. */
#include "eval_nn.h"

const eval_kernel_entry eval_kernels_heavy[] = {
    {PH_OP_MatMul, eval_k_matmul, 0},
    {PH_OP_Gemm, eval_k_gemm, 0},
    {PH_OP_Conv, eval_k_conv, 0},
    {PH_OP_ConvTranspose, eval_k_conv_transpose, 0},
    {PH_OP_AveragePool, eval_k_average_pool, 0},
    {PH_OP_MaxPool, eval_k_max_pool, 0},
    {PH_OP_GlobalAveragePool, eval_k_global_average_pool, 0},
    {PH_OP_GlobalMaxPool, eval_k_global_max_pool, 0},
    {PH_OP_BatchNormalization, eval_k_batch_norm, 0},
    {PH_OP_InstanceNormalization, eval_k_instance_norm, 0},
    {PH_OP_LayerNormalization, eval_k_layer_norm, 0},
    {PH_OP_Resize, eval_k_resize, 0},
    {PH_OP_Einsum, eval_k_einsum, 0},
    {PH_OP_UNKNOWN, NULL, 0},
};
