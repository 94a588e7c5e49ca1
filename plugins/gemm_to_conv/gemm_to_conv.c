/* gemm_to_conv - a fully connected layer on a flattened [N, C, 1, 1] tensor
 * becomes a 1x1 Conv (seed 003 "Linear -> Conv2D", seed 004
 * ConvertInnerProduct2Conv2dPass), for targets that run Conv best.
 *
 * Requires: f = Flatten or Reshape of x, x of known rank 4 with dims 2 and 3
 *   equal to 1 and a known channel count C > 0 (dtype float, float16 or
 *   double), f of known rank 2 with dim 1 = C (so dim 0 is x's N, whatever
 *   the Flatten axis or Reshape shape was), read only by
 *   y = Gemm(f, w, c?) {transA = 0} with w a constant [C, M] ([M, C] with
 *   transB) and c absent or a constant that varies along dim 1 only
 *   ([M], [1, M], a scalar), or y = MatMul(f, w) with w a constant [C, M];
 *   w and c of x's dtype.
 * Changes: y becomes Flatten(Conv(x, W', B'), axis 1) with W'[m, c, 0, 0] =
 *   alpha * w (transposed unless transB) and B' = beta * c (no bias without
 *   c); f and the old operands go when nothing else reads them.
 * Exact: fp (alpha and beta are folded into the constants; the runtime's
 *   Conv may sum in another order).
 */
#include <passhost/passhost.h>
#include <passhost/constant.h>

static int flat_input(const ph_match *m, const ph_params *params)
{
    ph_value *x = ph_match_value(m, "x"), *f = ph_match_value(m, "f");
    const ph_tensor *w = ph_match_const(m, "w");
    int dt = ph_value_dtype(x);
    int64_t C = ph_value_dim(x, 1);
    if ((dt != PH_DT_FLOAT && dt != PH_DT_FLOAT16 && dt != PH_DT_DOUBLE) || ph_tensor_dtype(w) != dt ||
        ph_value_dim(x, 2) != 1 || ph_value_dim(x, 3) != 1 || C < 1 || ph_value_rank(f) != 2 ||
        ph_value_dim(f, 1) != C)
        return 0;
    ph_node *y = ph_match_root(m);
    int trans_b = ph_node_op(y) == PH_OP_Gemm && ph_node_attr_int(y, "transB", 0);
    const ph_tensor *c = ph_match_const(m, "c");
    return ph_tensor_dim(w, trans_b ? 1 : 0) == C &&
           (!c || (ph_tensor_dtype(c) == dt && ph_const_is_per_channel(c, 2, 1, ph_tensor_dim(w, trans_b ? 0 : 1))));
}

static int to_conv(ph_rewriter *rw, const ph_match *m)
{
    ph_node *y = ph_match_root(m);
    ph_value *x = ph_match_value(m, "x");
    const ph_tensor *w = ph_match_const(m, "w"), *c = ph_match_const(m, "c");
    int gemm = ph_node_op(y) == PH_OP_Gemm, trans_b = gemm && ph_node_attr_int(y, "transB", 0);
    int64_t C = ph_value_dim(x, 1), M = ph_tensor_dim(w, trans_b ? 0 : 1), wd[4] = {M, C, 1, 1};
    double alpha = gemm ? ph_node_attr_float(y, "alpha", 1.0f) : 1.0, beta = ph_node_attr_float(y, "beta", 1.0f);
    double *W = ph_rw_alloc(rw, (size_t)(M * C) * 2 * sizeof *W), *T = W ? W + M * C : NULL;
    double *B = ph_rw_alloc(rw, (size_t)M * sizeof *B);
    if (!W || !B)
        return PH_ENOMEM;
    if (ph_tensor_read_f64(w, 2, ph_tensor_dims(w), T) || (c && ph_const_channel_values(c, 2, 1, M, B)))
        return 0;
    for (int64_t o = 0; o < M; o++) {
        for (int64_t i = 0; i < C; i++)
            W[o * C + i] = alpha * (trans_b ? T[o * C + i] : T[i * M + o]);
        B[o] *= beta;
    }
    int dt = ph_value_dtype(x);
    ph_value *in[3] = {x, ph_rw_initializer(rw, "conv_w", ph_tensor_from_f64(dt, 4, wd, W)),
                       c ? ph_rw_initializer(rw, "conv_b", ph_tensor_from_f64(dt, 1, &M, B)) : NULL};
    ph_value *conv = in[1] && (in[2] || !c) ? ph_rw_op(rw, "Conv", c ? 3 : 2, in) : NULL;
    ph_node *flat = conv ? ph_rw_node(rw, "Flatten", 1, &conv, 1) : NULL;
    if (!flat || ph_node_set_attr_int(flat, "axis", 1) < 0 ||
        ph_value_copy_type(ph_node_output(flat, 0), ph_match_value(m, "y")))
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(flat, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"gemm", "f = Flatten|Reshape(x:rank=4, s?)\ny = Gemm(f, w:const:rank=2, c?:const) {transA?=0}", flat_input,
     to_conv},
    {"matmul", "f = Flatten|Reshape(x:rank=4, s?)\ny = MatMul(f, w:const:rank=2)", flat_input, to_conv},
    {0}};

PH_PASS_DEFINE(
    .name = "gemm_to_conv",
    .summary = "Gemm/MatMul with a constant weight on a flattened [N,C,1,1] -> 1x1 Conv + Flatten",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_FP,
    .rules = rules)
