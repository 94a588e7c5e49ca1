/* conv3d_to_conv2d - a 3-D Conv becomes one 2-D Conv per depth tap of its
 * kernel, summed (seed 004 SplitConv3DSeqPass), for targets without 3-D
 * convolution.  The depth planes each tap reads are gathered with one
 * strided Slice and folded into the batch, so a kernel of depth kd costs kd
 * Conv2d nodes whatever the input's depth.
 *
 * Requires: y = Conv(x, w, b?) with x of known rank 5 and known dims C, D,
 *   H, W (N may be unknown or symbolic), dtype float, float16 or double; w a
 *   constant [M, C, kd, kh, kw] and b absent or a constant [M], both of x's
 *   dtype; group 1; auto_pad NOTSET or VALID; kd <= the parameter max_taps;
 *   opset >= 11.
 * Changes: with strides (sd, sh, sw), dilations (dd, dh, dw), pads
 *   (pd0, ph0, pw0, pd1, ph1, pw1) and OD, OH, OW the output dims:
 *     t = Transpose(Pad(x, depth pd0, pd1 with zeros), [0,2,1,3,4])
 *                                                    [N, D+pd0+pd1, C, H, W]
 *     for tap i < kd:  s_i = Reshape(Slice(t, axis 1, from i*dd, step sd,
 *                           OD planes), [-1, C, H, W])
 *                      c_i = Conv(s_i, w[:, :, i], b if i = 0) with the
 *                           spatial strides, dilations and pads
 *     y = Transpose(Reshape(c_0 + c_1 + ..., [-1, OD, M, OH, OW]), [0,2,1,3,4])
 *   (no Pad without depth padding, no Slice where a tap reads every plane).
 *   w and b go when nothing else reads them.  3-D pooling, Pad and
 *   BatchNormalization are not split.
 * Exact: fp (the sum over depth taps is rounded tap by tap).
 */
#include <string.h>

#include <passhost/passhost.h>

typedef struct geom {
    int64_t C, D, H, W, M, k[3], s[3], d[3], p[6], out[3];
} geom;

/* Fill *g from the match; 1 if the Conv is one this pass handles. */
static int read_geom(const ph_match *m, int64_t max_taps, geom *g)
{
    ph_node *conv = ph_match_root(m);
    ph_value *x = ph_match_value(m, "x");
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b");
    const int64_t *v;
    int dt = ph_value_dtype(x);
    const char *ap = ph_node_attr_string(conv, "auto_pad", "NOTSET");
    if ((dt != PH_DT_FLOAT && dt != PH_DT_FLOAT16 && dt != PH_DT_DOUBLE) || ph_tensor_dtype(w) != dt ||
        (b && ph_tensor_dtype(b) != dt) || ph_node_attr_int(conv, "group", 1) != 1 ||
        (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) || ph_node_opset(conv) < 11)
        return 0;
    g->C = ph_value_dim(x, 1), g->D = ph_value_dim(x, 2), g->H = ph_value_dim(x, 3), g->W = ph_value_dim(x, 4);
    g->M = ph_tensor_dim(w, 0);
    if (g->C < 1 || g->D < 1 || g->H < 1 || g->W < 1 || g->M < 1 || ph_tensor_dim(w, 1) != g->C ||
        (b && ph_tensor_dim(b, 0) != g->M) || ph_tensor_dim(w, 2) > max_taps || !ph_tensor_data(w) ||
        (b && !ph_tensor_data(b)))
        return 0;
    for (int i = 0; i < 3; i++) {
        g->k[i] = ph_tensor_dim(w, 2 + (size_t)i);
        g->s[i] = g->d[i] = 1;
        g->p[i] = g->p[i + 3] = 0;
    }
    if (ph_node_attr_ints(conv, "strides", &v) == 3)
        memcpy(g->s, v, sizeof g->s);
    if (ph_node_attr_ints(conv, "dilations", &v) == 3)
        memcpy(g->d, v, sizeof g->d);
    if (!strcmp(ap, "NOTSET") && ph_node_attr_ints(conv, "pads", &v) == 6)
        memcpy(g->p, v, sizeof g->p);
    int64_t in[3] = {g->D, g->H, g->W};
    for (int i = 0; i < 3; i++) {
        int64_t span = in[i] + g->p[i] + g->p[i + 3] - g->d[i] * (g->k[i] - 1) - 1;
        if (g->k[i] < 1 || g->s[i] < 1 || g->d[i] < 1 || g->p[i] < 0 || g->p[i + 3] < 0 || span < 0)
            return 0;
        g->out[i] = span / g->s[i] + 1;
    }
    return 1;
}

static int conv3d(const ph_match *m, const ph_params *params)
{
    geom g;
    return read_geom(m, ph_params_int(params, "max_taps"), &g);
}

static ph_value *transpose_021(ph_rewriter *rw, ph_value *x)
{
    ph_node *t = x ? ph_rw_node(rw, "Transpose", 1, &x, 1) : NULL;
    if (!t || ph_node_set_attr_ints(t, "perm", 5, (const int64_t[]){0, 2, 1, 3, 4}) < 0)
        return NULL;
    return ph_node_output(t, 0);
}

static int split(ph_rewriter *rw, const ph_match *m)
{
    geom g;
    if (!read_geom(m, INT64_MAX, &g))
        return 0;
    ph_value *t = ph_match_value(m, "x"), *y = ph_match_value(m, "y"), *acc = NULL;
    const ph_tensor *w = ph_match_const(m, "w");
    int dt = ph_tensor_dtype(w);
    size_t es = ph_dtype_size(dt), plane = (size_t)(g.k[1] * g.k[2]) * es;
    int64_t dp = g.D + g.p[0] + g.p[3], wd[4] = {g.M, g.C, g.k[1], g.k[2]};
    unsigned char *tap = ph_rw_alloc(rw, (size_t)(g.M * g.C) * plane);
    const unsigned char *src = ph_tensor_data(w);
    if (!tap)
        return PH_ENOMEM;
    if (g.p[0] || g.p[3]) {
        int64_t pads[10] = {0, 0, g.p[0], 0, 0, 0, 0, g.p[3], 0, 0}, ten = 10;
        ph_value *in[2] = {t, ph_rw_initializer(rw, "pad_pads", ph_tensor_new(PH_DT_INT64, 1, &ten, pads))};
        t = in[1] ? ph_rw_op(rw, "Pad", 2, in) : NULL;
    }
    t = transpose_021(rw, t);
    for (int64_t i = 0; i < g.k[0] && t; i++) {
        int64_t start = i * g.d[0], end = start + (g.out[0] - 1) * g.s[0] + 1;
        ph_value *s = start == 0 && end == dp && g.s[0] == 1
                          ? t
                          : ph_rw_slice(rw, t, 1, &start, &end, (const int64_t[]){1}, &g.s[0]);
        s = s ? ph_rw_reshape(rw, s, 4, (const int64_t[]){-1, g.C, g.H, g.W}) : NULL;
        for (int64_t mc = 0; mc < g.M * g.C; mc++)
            memcpy(tap + (size_t)mc * plane, src + ((size_t)(mc * g.k[0] + i)) * plane, plane);
        ph_value *in[3] = {s, ph_rw_initializer(rw, "tap_w", ph_tensor_new(dt, 4, wd, tap)),
                           i ? NULL : ph_match_value(m, "b")};
        ph_node *c = in[0] && in[1] ? ph_rw_node(rw, "Conv", in[2] ? 3 : 2, in, 1) : NULL;
        if (!c || ph_node_set_attr_ints(c, "kernel_shape", 2, g.k + 1) < 0 ||
            ph_node_set_attr_ints(c, "strides", 2, g.s + 1) < 0 ||
            ph_node_set_attr_ints(c, "dilations", 2, g.d + 1) < 0 ||
            ph_node_set_attr_ints(c, "pads", 4, (const int64_t[]){g.p[1], g.p[2], g.p[4], g.p[5]}) < 0)
            return PH_ENOMEM;
        in[0] = acc, in[1] = ph_node_output(c, 0);
        acc = acc ? ph_rw_op(rw, "Add", 2, in) : in[1];
        if (!acc)
            return PH_ENOMEM;
    }
    ph_value *out = acc ? ph_rw_reshape(rw, acc, 5, (const int64_t[]){-1, g.out[0], g.M, g.out[1], g.out[2]}) : NULL;
    out = transpose_021(rw, out);
    if (!out || ph_value_copy_type(out, y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, out) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"conv3d", "y = Conv(x:rank=5, w:const:rank=5, b?:const:rank=1)", conv3d, split},
    {0}};

static const ph_param_def params[] = {
    {"max_taps", PH_PARAM_INT, "16", "split only kernels of at most this depth (one Conv2d per depth tap)"},
    {NULL, 0, NULL, NULL},
};

PH_PASS_DEFINE(
    .name = "conv3d_to_conv2d",
    .summary = "Conv3d -> one Conv2d per depth tap on strided depth slices folded into the batch, summed",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_FP,
    .params = params,
    .rules = rules)
