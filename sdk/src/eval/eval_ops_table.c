/* sdk/src/eval/eval_ops_table.c - registry of the light kernels (elementwise, shape, data movement). */
#include "eval_ops_util.h"

const eval_kernel_entry eval_kernels_light[] = {
#define UN(OP) {PH_OP_##OP, eval_k_unary, 0},
    UN(Neg) UN(Abs) UN(Sqrt) UN(Exp) UN(Log) UN(Erf) UN(Reciprocal) UN(Floor) UN(Ceil) UN(Round)
    UN(Relu) UN(LeakyRelu) UN(Sigmoid) UN(HardSigmoid) UN(HardSwish) UN(Tanh) UN(Selu) UN(Elu)
    UN(Gelu) UN(Sin) UN(Cos) UN(Tan) UN(Asin) UN(Acos) UN(Atan) UN(Sinh) UN(Cosh) UN(Asinh)
    UN(Acosh) UN(Atanh) UN(Sign) UN(Softplus) UN(Softsign) UN(Celu) UN(ThresholdedRelu) UN(Mish)
    UN(Shrink) UN(Clip)
#undef UN
    {PH_OP_Not, eval_k_predicate, 0},
    {PH_OP_IsNaN, eval_k_predicate, 0},
    {PH_OP_IsInf, eval_k_predicate, 0},
#define BIN(OP) {PH_OP_##OP, eval_k_binary, 0},
    BIN(Add) BIN(Sub) BIN(Mul) BIN(Div) BIN(Mod) BIN(Pow) BIN(Max) BIN(Min) BIN(Sum) BIN(Mean)
    BIN(PRelu) BIN(BitwiseAnd) BIN(BitwiseOr) BIN(BitwiseXor) BIN(Equal) BIN(Less) BIN(Greater)
    BIN(LessOrEqual) BIN(GreaterOrEqual) BIN(And) BIN(Or) BIN(Xor)
#undef BIN
    {PH_OP_BitShift, eval_k_bitshift, 0},
    {PH_OP_Where, eval_k_where, 1},
    /* shapes and constants (native_half: bytes are copied or converted) */
    {PH_OP_Identity, eval_k_identity, EVAL_KF_NATIVE_HALF | EVAL_KF_CONTAINERS},
    {PH_OP_Dropout, eval_k_dropout, 1},
    {PH_OP_Shape, eval_k_shape, 1},
    {PH_OP_Size, eval_k_size, 1},
    {PH_OP_Reshape, eval_k_reshape, 1},
    {PH_OP_Flatten, eval_k_flatten, 1},
    {PH_OP_Squeeze, eval_k_squeeze, 1},
    {PH_OP_Unsqueeze, eval_k_unsqueeze, 1},
    {PH_OP_Constant, eval_k_constant, 1},
    {PH_OP_ConstantOfShape, eval_k_constant_of_shape, 1},
    {PH_OP_Range, eval_k_range, 0},
    {PH_OP_Cast, eval_k_cast, 1},
    {PH_OP_CastLike, eval_k_cast_like, 1},
    /* data movement */
    {PH_OP_Transpose, eval_k_transpose, 1},
    {PH_OP_DepthToSpace, eval_k_depth_space, 1},
    {PH_OP_SpaceToDepth, eval_k_depth_space, 1},
    {PH_OP_Expand, eval_k_expand, 1},
    {PH_OP_Tile, eval_k_tile, 1},
    {PH_OP_Slice, eval_k_slice, 1},
    {PH_OP_Concat, eval_k_concat, 1},
    {PH_OP_Split, eval_k_split, 1},
    {PH_OP_Gather, eval_k_gather, 1},
    {PH_OP_GatherElements, eval_k_gather_elements, 1},
    {PH_OP_Pad, eval_k_pad, 1},
    {PH_OP_TopK, eval_k_topk, 1},
    {PH_OP_NonZero, eval_k_nonzero, 1},
    /* reductions and normalizers */
#define RED(OP) {PH_OP_##OP, eval_k_reduce, 0},
    RED(ReduceSum) RED(ReduceMean) RED(ReduceMax) RED(ReduceMin) RED(ReduceProd) RED(ReduceL1)
    RED(ReduceL2) RED(ReduceSumSquare) RED(ReduceLogSum) RED(ReduceLogSumExp)
#undef RED
    {PH_OP_ArgMax, eval_k_argmax, 0},
    {PH_OP_ArgMin, eval_k_argmax, 0},
    {PH_OP_Softmax, eval_k_softmax, 0},
    {PH_OP_LogSoftmax, eval_k_softmax, 0},
    {PH_OP_Hardmax, eval_k_softmax, 0},
    {PH_OP_UNKNOWN, NULL, 0},
};
