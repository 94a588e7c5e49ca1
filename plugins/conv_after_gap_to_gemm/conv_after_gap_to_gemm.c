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
 *   zero vector); w and b go when nothing else reads them.
 * Exact: fp (the runtime's Gemm may sum in another order than its Conv).
 */
#include <passhost/passhost.h>
#include <passhost/constant.h>

static int gap_conv(const ph_match *m, const ph_params *params)
{
    ph_node *conv = ph_match_root(m);
    ph_value *p = ph_match_value(m, "p");
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b");
    const int64_t *pads;
    int r = ph_value_rank(p), dt = ph_value_dtype(p);
    ptrdiff_t np = ph_node_attr_ints(conv, "pads", &pads);
    if (r < 3 || (int)ph_tensor_rank(w) != r || ph_tensor_dtype(w) != dt || ph_tensor_dim(w, 0) < 1 ||
        (dt != PH_DT_FLOAT && dt != PH_DT_FLOAT16 && dt != PH_DT_DOUBLE) || ph_node_attr_int(conv, "group", 1) != 1 ||
        (b && (ph_tensor_dtype(b) != dt || ph_tensor_dim(b, 0) != ph_tensor_dim(w, 0))) ||
        ph_node_opset(conv) < 7)
        return 0;
    for (int i = 2; i < r; i++)
        if (ph_tensor_dim(w, (size_t)i) != 1)
            return 0;
    for (ptrdiff_t i = 0; i < np; i++)
        if (pads[i] != 0)
            return 0;
    return 1;
}

static int to_gemm(ph_rewriter *rw, const ph_match *m)
{
    ph_value *p = ph_match_value(m, "p"), *y = ph_match_value(m, "y");
    const ph_tensor *w = ph_match_const(m, "w");
    int r = ph_value_rank(p), dt = ph_value_dtype(p);
    int64_t M = ph_tensor_dim(w, 0), wd[2] = {M, ph_tensor_dim(w, 1)};
    int64_t *shape = ph_rw_alloc(rw, (size_t)r * sizeof *shape);
    if (!shape || !ph_tensor_data(w))
        return shape ? 0 : PH_ENOMEM;
    shape[1] = M;
    for (int i = 2; i < r; i++)
        shape[i] = 1; /* shape[0] = 0: N copied */
    ph_node *flat = ph_rw_node(rw, "Flatten", 1, &p, 1);
    ph_value *in[3] = {flat ? ph_node_output(flat, 0) : NULL,
                       ph_rw_initializer(rw, "gemm_w", ph_tensor_new(dt, 2, wd, ph_tensor_data(w))),
                       ph_match_value(m, "b")};
    if (!in[2] && ph_rw_opset(rw) < 11)
        in[2] = ph_rw_initializer(rw, "gemm_c", ph_tensor_new(dt, 1, &M, NULL));
    ph_node *gemm = in[0] && in[1] ? ph_rw_node(rw, "Gemm", in[2] ? 3 : 2, in, 1) : NULL;
    ph_value *out = gemm ? ph_rw_reshape(rw, ph_node_output(gemm, 0), (size_t)r, shape) : NULL;
    if (!out || ph_node_set_attr_int(flat, "axis", 1) < 0 || ph_node_set_attr_int(gemm, "transB", 1) < 0 ||
        ph_value_copy_type(out, y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, out) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"gap_conv",
     "p:shared = GlobalAveragePool|GlobalMaxPool|GlobalLpPool(x)\n"
     "y = Conv(p, w:const, b?:const:rank=1)",
     gap_conv, to_gemm},
    {0}};

PH_PASS_DEFINE(
    .name = "conv_after_gap_to_gemm",
    .summary = "1x1 Conv on [N,C,1,1] after global pooling -> Flatten + Gemm + Reshape",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_FP,
    .rules = rules)
