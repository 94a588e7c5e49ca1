/* sdk/src/ops/elementwise.c - which operators are elementwise with no axis
 * (see ph_node_is_elementwise in op_helpers.h). */
#include "passhost/passhost.h"

PH_API int ph_node_is_elementwise(const ph_node *n)
{
    if (!n || ph_node_output_count(n) != 1)
        return 0;
    switch (ph_node_op(n)) {
    /* unary */
    case PH_OP_Abs: case PH_OP_Acos: case PH_OP_Acosh: case PH_OP_Asin: case PH_OP_Asinh:
    case PH_OP_Atan: case PH_OP_Atanh: case PH_OP_BitwiseNot: case PH_OP_Cast: case PH_OP_Ceil:
    case PH_OP_Celu: case PH_OP_Clip: case PH_OP_Cos: case PH_OP_Cosh: case PH_OP_Elu:
    case PH_OP_Erf: case PH_OP_Exp: case PH_OP_Floor: case PH_OP_Gelu: case PH_OP_HardSigmoid:
    case PH_OP_HardSwish: case PH_OP_Identity: case PH_OP_IsInf: case PH_OP_IsNaN:
    case PH_OP_LeakyRelu: case PH_OP_Log: case PH_OP_Mish: case PH_OP_Neg: case PH_OP_Not:
    case PH_OP_Reciprocal: case PH_OP_Relu: case PH_OP_Round: case PH_OP_Selu: case PH_OP_Shrink:
    case PH_OP_Sigmoid: case PH_OP_Sign: case PH_OP_Sin: case PH_OP_Sinh: case PH_OP_Softplus:
    case PH_OP_Softsign: case PH_OP_Sqrt: case PH_OP_Tan: case PH_OP_Tanh:
    case PH_OP_ThresholdedRelu:
    /* binary and variadic, with broadcasting */
    case PH_OP_Add: case PH_OP_And: case PH_OP_BitShift: case PH_OP_BitwiseAnd:
    case PH_OP_BitwiseOr: case PH_OP_BitwiseXor: case PH_OP_Div: case PH_OP_Equal:
    case PH_OP_Greater: case PH_OP_GreaterOrEqual: case PH_OP_Less: case PH_OP_LessOrEqual:
    case PH_OP_Max: case PH_OP_Mean: case PH_OP_Min: case PH_OP_Mod: case PH_OP_Mul:
    case PH_OP_Or: case PH_OP_PRelu: case PH_OP_Pow: case PH_OP_Sub: case PH_OP_Sum:
    case PH_OP_Where: case PH_OP_Xor:
        return 1;
    default:
        return 0;
    }
}
