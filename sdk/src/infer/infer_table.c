/* sdk/src/infer/infer_table.c - which family file infers an operator. */
#include "infer.h"

phi_infer_fn phi_infer_op_fn(ph_op op)
{
    phi_infer_fn f;
    if ((f = phi_infer_elementwise_fn(op)) || (f = phi_infer_shape_fn(op)) || (f = phi_infer_nn_fn(op)) ||
        (f = phi_infer_reduce_fn(op)) || (f = phi_infer_control_fn(op)) || (f = phi_infer_const_fn(op)))
        return f;
    return NULL;
}
