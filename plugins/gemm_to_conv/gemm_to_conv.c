/* gemm_to_conv - a fully connected layer on a flattened [N, C, 1, 1] tensor
 * becomes a 1x1 Conv, for targets that run Conv best.
 *
 * Requires: x [N, C, 1, 1] with C known; f [N, C] (whatever the Flatten
 *   axis or Reshape shape); w [C, M] ([M, C] with transB); c absent or
 *   varying along dim 1 only ([M], [1, M], a scalar).
 * Changes: y = Flatten(Conv(x, W', B'), axis 1), W'[m, c, 0, 0] = alpha * w
 *   (transposed unless transB), B' = beta * c (no c: no bias), the Flatten
 *   named as y's node; f and the old operands go when nothing reads them.
 * Exact: fp (alpha, beta folded into the constants; Conv may sum otherwise).
 */
#include <passhost/passhost.h>

static int flat_input(const ph_match *m, const ph_params *params)
{
    const ph_tensor *w = ph_match_const(m, "w"), *c = ph_match_const(m, "c");
    int64_t C = ph_value_dim(ph_match_value(m, "x"), 1), tb = ph_match_int(m, "tb", 0);
    return C >= 1 && ph_value_dim(ph_match_value(m, "f"), 1) == C && ph_tensor_dim(w, tb ? 1 : 0) == C &&
           (!c || ph_const_is_per_channel(c, 2, 1, ph_tensor_dim(w, tb ? 0 : 1)));
}

static int to_conv(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    const ph_tensor *w = ph_match_const(m, "w"), *c = ph_match_const(m, "c");
    int tb = ph_match_int(m, "tb", 0), dt = ph_value_dtype(x);
    int64_t C = ph_value_dim(x, 1), M = ph_tensor_dim(w, tb ? 0 : 1), wd[4] = {M, C, 1, 1};
    double alpha = ph_match_float(m, "alpha", 1.0), beta = ph_match_float(m, "beta", 1.0);
    double *W = ph_rw_alloc(rw, (size_t)(2 * M * C + M) * sizeof *W), *T = W ? W + M * C : NULL;
    double *B = T ? T + M * C : NULL;
    if (!W || ph_tensor_read_f64(w, 2, ph_tensor_dims(w), T) || (c && ph_const_channel_values(c, 2, 1, M, B)))
        return ph_rw_status(rw);
    for (int64_t o = 0; o < M; o++) {
        for (int64_t i = 0; i < C; i++)
            W[o * C + i] = alpha * (tb ? T[o * C + i] : T[i * M + o]);
        B[o] *= beta;
    }
    ph_rw_bind(rw, "w2", ph_rw_initializer(rw, "conv_w", ph_tensor_from_f64(dt, 4, wd, W)));
    if (c)
        ph_rw_bind(rw, "b2", ph_rw_initializer(rw, "conv_b", ph_tensor_from_f64(dt, 1, &M, B)));
    return 1;
}

static const ph_rule rules[] = {
    {"fully_connected",
     "f = Flatten|Reshape(x:shape=[*,*,1,1]:float32|float16|double:dtype=$t, s?)\n"
     "( y = Gemm(f:rank=2, w:const:rank=2:dtype=$t, c?:const:dtype=$t)"
     " {transA?=0, transB(0)=$tb, alpha(1.0)=$alpha, beta(1.0)=$beta}\n"
     "| y = MatMul(f:rank=2, w:const:rank=2:dtype=$t) )\n"
     "=>\nk = Conv(x, w2, b2?)\ny = Flatten(k) {axis=1}",
     flat_input, to_conv},
    {0}};

PH_PASS_DEFINE(
    .name = "gemm_to_conv",
    .summary = "Gemm/MatMul with a constant weight on a flattened [N,C,1,1] -> 1x1 Conv + Flatten",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_FP,
    .rules = rules)
