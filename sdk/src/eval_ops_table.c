/* sdk/src/eval_ops_table.c - registry of the light kernels (elementwise, shape, data movement). */
#include "eval_kernels.h"

const phi_kernel_entry phi_kernels_light[] = {
    {PH_OP_UNKNOWN, NULL, 0},
};
