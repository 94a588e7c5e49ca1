/* conv_after_gap_to_gemm - a 1x1 Conv after global pooling is a fully
 * connected layer: Flatten + Gemm + Reshape.
 *
 * Requires: p of known rank r >= 3 (it may have other readers: the pooling
 *   stays); w [M, C, 1, ...] of rank r; b absent or [M]; no padding
 *   (strides, dilations and auto_pad change nothing on a 1x1 input with a
 *   1x1 kernel).
 * Changes: y = Reshape(Gemm(Flatten(p), w as [M, C], b) {transB = 1},
 *   [0, M, 1, ...]), the Gemm named as the Conv (below opset 11, where Gemm
 *   needs C, a missing b is a zero vector).
 * Exact: fp (the runtime's Gemm may sum in another order than its Conv).
 */
#include <passhost/passhost.h>

static int gap_conv(const ph_match *m, const ph_params *params)
{
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b");
    int r = ph_value_rank(ph_match_value(m, "p"));
    int ok = r >= 3 && r <= 64 && (int)ph_tensor_rank(w) == r && ph_tensor_dim(w, 0) >= 1 && ph_tensor_data(w) &&
             (!b || ph_tensor_dim(b, 0) == ph_tensor_dim(w, 0));
    for (int i = 2; ok && i < r; i++)
        ok = ph_tensor_dim(w, (size_t)i) == 1;
    return ok;
}

static int to_gemm(ph_rewriter *rw, const ph_match *m)
{
    ph_value *p = ph_match_value(m, "p");
    const ph_tensor *w = ph_match_const(m, "w");
    int r = ph_value_rank(p), dt = ph_value_dtype(p);
    int64_t M = ph_tensor_dim(w, 0), wd[2] = {M, ph_tensor_dim(w, 1)}, shape[64] = {0, M};
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
     "opset >= 7\np:shared = GlobalAveragePool|GlobalMaxPool|GlobalLpPool(x)\n"
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
