/* sdk/src/infer/infer_table.c - which family file infers an operator. */
#include "infer.h"

infer_fn infer_op_fn(ph_op op)
{
    infer_fn f;
    if ((f = infer_elementwise_fn(op)) || (f = infer_shape_fn(op)) || (f = infer_nn_fn(op)) ||
        (f = infer_reduce_fn(op)) || (f = infer_control_fn(op)) || (f = infer_const_fn(op)))
        return f;
    return NULL;
}
