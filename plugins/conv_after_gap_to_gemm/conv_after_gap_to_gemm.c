/* conv_after_gap_to_gemm - a 1x1 Conv after global pooling is a fully
 * connected layer: Flatten + Gemm + Reshape (seed 003 "Conv -> Linear after
 * global pooling").
 *
 * Requires: p = GlobalAveragePool, GlobalMaxPool or GlobalLpPool of x (p may
 *   have other readers: the pooling stays), p of known rank r >= 3 and a
 *   float, float16 or double dtype, read by y = Conv(p, w, b?) with w a
 *   constant [M, C, 1, ...] of rank r and p's dtype, b absent or a constant
 *   [M] of that dtype, group 1, pads absent or all 0 (strides, dilations and
 *   auto_pad change nothing on a 1x1 input with a 1x1 kernel); opset >= 7.
 * Changes: y becomes Reshape(Gemm(Flatten(p), w as [M, C], b) {transB = 1},
 *   [0, M, 1, ...]) (below opset 11, where Gemm needs C, a missing b is a
 *   zero vector), the Gemm named as the Conv; w and b go when nothing else
 *   reads them.
 * Exact: fp (the runtime's Gemm may sum in another order than its Conv).
 */

#include <passhost/passhost.h>

static int gap_conv(const ph_match *m, const ph_params *params)
{
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b");
    int r = ph_value_rank(ph_match_value(m, "p"));
    if (r < 3 || (int)ph_tensor_rank(w) != r || ph_tensor_dim(w, 0) < 1 || (b && ph_tensor_dim(b, 0) != ph_tensor_dim(w, 0)))
        return 0;
    for (int i = 2; i < r; i++)
        if (ph_tensor_dim(w, (size_t)i) != 1)
            return 0;
    return 1;
}

static int to_gemm(ph_rewriter *rw, const ph_match *m)
{
    ph_value *p = ph_match_value(m, "p");
    const ph_tensor *w = ph_match_const(m, "w");
    int r = ph_value_rank(p), dt = ph_value_dtype(p);
    int64_t M = ph_tensor_dim(w, 0), wd[2] = {M, ph_tensor_dim(w, 1)}, shape[64] = {0, M};
    if (!ph_tensor_data(w) || r > 64)
        return 0;
    for (int i = 2; i < r; i++)
        shape[i] = 1; /* shape[0] = 0: N copied */
    ph_node *flat = ph_rw_node(rw, "Flatten", 1, &p, 1);
    ph_node_set_attr_int(flat, "axis", 1);
    ph_value *in[3] = {ph_node_output(flat, 0), ph_rw_initializer(rw, "gemm_w", ph_tensor_new(dt, 2, wd, ph_tensor_data(w))),
                       ph_match_value(m, "b")};
    if (!in[2] && ph_rw_opset(rw) < 11)
        in[2] = ph_rw_initializer(rw, "gemm_c", ph_tensor_new(dt, 1, &M, NULL));
    ph_node *gemm = ph_rw_node(rw, "Gemm", in[2] ? 3 : 2, in, 1);
    ph_node_set_attr_int(gemm, "transB", 1);
    ph_node_set_name(gemm, ph_node_name(ph_match_root(m))); /* the Conv's work: its name */
    return ph_rw_replace_root(rw, ph_rw_reshape(rw, ph_node_output(gemm, 0), (size_t)r, shape));
}

static const ph_rule rules[] = {
    {"gap_conv",
     "opset >= 7\n"
     "p:shared = GlobalAveragePool|GlobalMaxPool|GlobalLpPool(x)\n"
     "y = Conv(p:float32|float16|double:dtype=$t, w:const:dtype=$t, b?:const:rank=1:dtype=$t) {group(1)=1, pads? all=0}",
     gap_conv, to_gemm},
    {0}};

PH_PASS_DEFINE(
    .name = "conv_after_gap_to_gemm",
    .summary = "1x1 Conv on [N,C,1,1] after global pooling -> Flatten + Gemm + Reshape",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_FP,
    .rules = rules)
