/* sdk/src/eval_nn_table.c - registry of the heavy kernels (MatMul, Gemm, Conv, ...). */
#include "eval_kernels.h"

const phi_kernel_entry phi_kernels_heavy[] = {
    {PH_OP_UNKNOWN, NULL, 0},
};
