/* conv_to_matmul - a Conv whose stride equals its kernel (non-overlapping
 * patches) becomes Reshape/Transpose/MatMul (seed 004
 * ConvertConv2d2MatmulPass: stride_h = kh >= 15 and stride_w = kw >= 15, no
 * pad or dilation), for targets that run large kernels badly.
 *
 * Requires: y = Conv(x, w, b?) with x of known rank 4 and known dims C, H, W
 *   (N may be unknown or symbolic), dtype float, float16 or double; w a
 *   constant [M, C, kh, kw] and b absent or a constant [M], both of x's
 *   dtype; group 1; strides = [kh, kw] with kh and kw >= the parameter
 *   min_kernel; dilations absent or 1; pads absent or 0 and auto_pad NOTSET
 *   or VALID; kh <= H, kw <= W; opset >= 5.
 * Changes: with OH = H / kh, OW = W / kw (rounded down; rows and columns
 *   past OH*kh, OW*kw, which the Conv never reads, are sliced off first):
 *     p = Reshape(x, [0, C, OH, kh, OW, kw]) -> Transpose [0,1,3,5,2,4]
 *         -> Reshape [0, C*kh*kw, OH*OW]
 *     y = Reshape(MatMul(w as [M, C*kh*kw], p) (+ b as [M, 1]), [0, M, OH, OW])
 *   w and b go when nothing else reads them.
 * Exact: fp (the MatMul may sum in another order than the Conv).
 */
#include <string.h>

#include <passhost/passhost.h>

static int patch_conv(const ph_match *m, const ph_params *params)
{
    ph_node *conv = ph_match_root(m);
    ph_value *x = ph_match_value(m, "x");
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b");
    int dt = ph_value_dtype(x);
    int64_t limit = ph_params_int(params, "min_kernel"), kh = ph_tensor_dim(w, 2), kw = ph_tensor_dim(w, 3);
    const int64_t *v;
    if ((dt != PH_DT_FLOAT && dt != PH_DT_FLOAT16 && dt != PH_DT_DOUBLE) || ph_tensor_dtype(w) != dt ||
        (b && (ph_tensor_dtype(b) != dt || ph_tensor_dim(b, 0) != ph_tensor_dim(w, 0))) ||
        ph_value_dim(x, 1) != ph_tensor_dim(w, 1) || ph_tensor_dim(w, 0) < 1 || ph_tensor_dim(w, 1) < 1 ||
        kh < limit || kw < limit || kh < 1 || kw < 1 || ph_value_dim(x, 2) < kh || ph_value_dim(x, 3) < kw ||
        ph_node_attr_int(conv, "group", 1) != 1 ||
        ph_node_opset(conv) < 5)
        return 0;
    const char *ap = ph_node_attr_string(conv, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
        return 0;
    if (ph_node_attr_ints(conv, "strides", &v) != 2 || v[0] != kh || v[1] != kw)
        return 0;
    ptrdiff_t n = ph_node_attr_ints(conv, "dilations", &v);
    for (ptrdiff_t i = 0; i < n; i++)
        if (v[i] != 1)
            return 0;
    n = ph_node_attr_ints(conv, "pads", &v);
    for (ptrdiff_t i = 0; i < n; i++)
        if (v[i] != 0)
            return 0;
    return 1;
}

static int to_matmul(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x"), *y = ph_match_value(m, "y");
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b");
    int dt = ph_value_dtype(x);
    int64_t M = ph_tensor_dim(w, 0), C = ph_value_dim(x, 1), kh = ph_tensor_dim(w, 2), kw = ph_tensor_dim(w, 3);
    int64_t OH = ph_value_dim(x, 2) / kh, OW = ph_value_dim(x, 3) / kw, K = C * kh * kw;
    if (!ph_tensor_data(w) || (b && !ph_tensor_data(b)))
        return 0;
    ph_value *p = x;
    if (OH * kh != ph_value_dim(x, 2) || OW * kw != ph_value_dim(x, 3))
        p = ph_rw_slice(rw, x, 2, (const int64_t[]){0, 0}, (const int64_t[]){OH * kh, OW * kw},
                        (const int64_t[]){2, 3}, NULL);
    p = p ? ph_rw_reshape(rw, p, 6, (const int64_t[]){0, C, OH, kh, OW, kw}) : NULL;
    ph_node *t = p ? ph_rw_node(rw, "Transpose", 1, &p, 1) : NULL;
    if (!t || ph_node_set_attr_ints(t, "perm", 6, (const int64_t[]){0, 1, 3, 5, 2, 4}) < 0)
        return PH_ENOMEM;
    ph_tensor *wm = ph_tensor_new(dt, 2, (const int64_t[]){M, K}, ph_tensor_data(w));
    ph_value *in[2] = {ph_rw_initializer(rw, "matmul_w", wm),
                       ph_rw_reshape(rw, ph_node_output(t, 0), 3, (const int64_t[]){0, K, OH * OW})};
    ph_value *out = in[0] && in[1] ? ph_rw_op(rw, "MatMul", 2, in) : NULL;
    if (out && b) {
        in[0] = out;
        in[1] = ph_rw_initializer(rw, "matmul_b", ph_tensor_new(dt, 2, (const int64_t[]){M, 1}, ph_tensor_data(b)));
        out = in[1] ? ph_rw_op(rw, "Add", 2, in) : NULL;
    }
    out = out ? ph_rw_reshape(rw, out, 4, (const int64_t[]){0, M, OH, OW}) : NULL;
    if (!out || ph_value_copy_type(out, y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, out) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"patch_conv", "y = Conv(x:rank=4, w:const:rank=4, b?:const:rank=1)", patch_conv, to_matmul},
    {0}};

static const ph_param_def params[] = {
    {"min_kernel", PH_PARAM_INT, "15", "convert only when both kernel dims (= strides) are at least this"},
    {NULL, 0, NULL, NULL},
};

/* Examples for the rule checker: kernels of 15 and more (min_kernel). */
static const ph_rule_example examples[] = {
    {"patch_conv", "opset <11|13|17>\n"
                   "x: <T=float|double|float16>[<1|2|N>,<C=1|2|3>,<H=16|30|31>,<W=17|30|35>]\n"
                   "w: const <T>[<M=1|2|4>,<C>,<KH=15|16>,<KW=15|17>]\nb: const <T>[<M>]\n"
                   "y = Conv(x, w<, b|>) {strides=[<KH>,<KW>]<|, pads=[0,0,0,0]|, auto_pad=\"VALID\"|, "
                   "dilations=[1,1]|, group=1>}\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "conv_to_matmul",
    .summary = "Conv with stride = kernel >= a limit, no pads/dilations/groups -> Reshape/Transpose/MatMul",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_FP,
    .params = params,
    .rules = rules,
    .rule_examples = examples)
