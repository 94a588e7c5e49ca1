/* sdk/src/eval/eval_ops_table.c - registry of the light kernels (elementwise, shape, data movement). */
#include "eval_ops_util.h"

const phi_kernel_entry phi_kernels_light[] = {
#define UN(OP) {PH_OP_##OP, phi_k_unary, 0},
    UN(Neg) UN(Abs) UN(Sqrt) UN(Exp) UN(Log) UN(Erf) UN(Reciprocal) UN(Floor) UN(Ceil) UN(Round)
    UN(Relu) UN(LeakyRelu) UN(Sigmoid) UN(HardSigmoid) UN(HardSwish) UN(Tanh) UN(Selu) UN(Elu)
    UN(Gelu) UN(Sin) UN(Cos) UN(Tan) UN(Asin) UN(Acos) UN(Atan) UN(Sinh) UN(Cosh) UN(Asinh)
    UN(Acosh) UN(Atanh) UN(Sign) UN(Softplus) UN(Softsign) UN(Celu) UN(ThresholdedRelu) UN(Mish)
    UN(Shrink) UN(Clip)
#undef UN
    {PH_OP_Not, phi_k_predicate, 0},
    {PH_OP_IsNaN, phi_k_predicate, 0},
    {PH_OP_IsInf, phi_k_predicate, 0},
#define BIN(OP) {PH_OP_##OP, phi_k_binary, 0},
    BIN(Add) BIN(Sub) BIN(Mul) BIN(Div) BIN(Mod) BIN(Pow) BIN(Max) BIN(Min) BIN(Sum) BIN(Mean)
    BIN(PRelu) BIN(BitwiseAnd) BIN(BitwiseOr) BIN(BitwiseXor) BIN(Equal) BIN(Less) BIN(Greater)
    BIN(LessOrEqual) BIN(GreaterOrEqual) BIN(And) BIN(Or) BIN(Xor)
#undef BIN
    {PH_OP_BitShift, phi_k_bitshift, 0},
    {PH_OP_Where, phi_k_where, 1},
    /* shapes and constants (native_half: bytes are copied or converted) */
    {PH_OP_Identity, phi_k_identity, PHI_KF_NATIVE_HALF | PHI_KF_CONTAINERS},
    {PH_OP_Dropout, phi_k_dropout, 1},
    {PH_OP_Shape, phi_k_shape, 1},
    {PH_OP_Size, phi_k_size, 1},
    {PH_OP_Reshape, phi_k_reshape, 1},
    {PH_OP_Flatten, phi_k_flatten, 1},
    {PH_OP_Squeeze, phi_k_squeeze, 1},
    {PH_OP_Unsqueeze, phi_k_unsqueeze, 1},
    {PH_OP_Constant, phi_k_constant, 1},
    {PH_OP_ConstantOfShape, phi_k_constant_of_shape, 1},
    {PH_OP_Range, phi_k_range, 0},
    {PH_OP_Cast, phi_k_cast, 1},
    {PH_OP_CastLike, phi_k_cast_like, 1},
    /* data movement */
    {PH_OP_Transpose, phi_k_transpose, 1},
    {PH_OP_DepthToSpace, phi_k_depth_space, 1},
    {PH_OP_SpaceToDepth, phi_k_depth_space, 1},
    {PH_OP_Expand, phi_k_expand, 1},
    {PH_OP_Tile, phi_k_tile, 1},
    {PH_OP_Slice, phi_k_slice, 1},
    {PH_OP_Concat, phi_k_concat, 1},
    {PH_OP_Split, phi_k_split, 1},
    {PH_OP_Gather, phi_k_gather, 1},
    {PH_OP_GatherElements, phi_k_gather_elements, 1},
    {PH_OP_Pad, phi_k_pad, 1},
    {PH_OP_TopK, phi_k_topk, 1},
    {PH_OP_NonZero, phi_k_nonzero, 1},
    /* reductions and normalizers */
#define RED(OP) {PH_OP_##OP, phi_k_reduce, 0},
    RED(ReduceSum) RED(ReduceMean) RED(ReduceMax) RED(ReduceMin) RED(ReduceProd) RED(ReduceL1)
    RED(ReduceL2) RED(ReduceSumSquare) RED(ReduceLogSum) RED(ReduceLogSumExp)
#undef RED
    {PH_OP_ArgMax, phi_k_argmax, 0},
    {PH_OP_ArgMin, phi_k_argmax, 0},
    {PH_OP_Softmax, phi_k_softmax, 0},
    {PH_OP_LogSoftmax, phi_k_softmax, 0},
    {PH_OP_Hardmax, phi_k_softmax, 0},
    {PH_OP_UNKNOWN, NULL, 0},
};
