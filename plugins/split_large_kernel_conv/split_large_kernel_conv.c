/* split_large_kernel_conv - a Conv whose kernel spans more than the target
 * allows becomes Convs over tiles of the kernel, on shifted slices of the
 * input, summed.
 *
 * Icraft ConvertBigKernel2SmallKernelPass (seed 004): split when ((kh - 1)
 * * dh + 1) * ((kw - 1) * dw + 1) > 2048; msit's
 * KnowledgeSplitLargeKernelConv (seed 000): Slice + Conv per kernel part,
 * the results added.
 *
 * Requires: a default-domain 2-D Conv (input [N, C, H, W] with H and W
 *   known, a constant weight [M, C/group, kh, kw]), auto_pad absent or
 *   NOTSET, whose spanned area ((kh - 1) * dh + 1) * ((kw - 1) * dw + 1) is
 *   above the parameter max_kernel_area (the profile's
 *   Conv.max_kernel_area), at most 64 tiles.
 * Changes:  tiles of th rows and tw columns, the largest th (then tw = kw)
 *   whose span fits, else rows of one and the widest tw that fits:
 *   x is padded once (Pad, when the Conv pads), each tile is
 *   Conv(Slice(x_padded) starting at (i * dh, j * dw), W[:, :, i:i+th,
 *   j:j+tw]) with the Conv's strides, dilations and group and no pads, the
 *   first one with the bias; the tiles are added in order.  The weight
 *   tiles are new initializers.  Main graph and every If/Loop/Scan body.
 * Exact:    fp; the same products, added in another order.
 */
#include <string.h>

#include <passhost/passhost.h>

#define MAX_TILES 64

typedef struct geom {
    int64_t N, C, H, W, M, kh, kw, sh, sw, dh, dw, p[4], oh, ow, th, tw;
} geom;

static int64_t attr_at(const ph_node *n, const char *name, int i, int len, int64_t dflt)
{
    const int64_t *v;
    ptrdiff_t k = ph_node_attr_ints(n, name, &v);
    return k == len ? v[i] : k < 0 ? dflt : -1;
}

static int too_large(const ph_match *m, const ph_params *params)
{
    const ph_node *n = ph_match_root(m);
    const ph_value *x = ph_match_value(m, "x");
    const ph_tensor *w = ph_match_const(m, "w");
    int64_t limit = ph_params_int(params, "max_kernel_area");
    const char *ap = ph_node_attr_string(n, "auto_pad", "NOTSET");
    if (limit < 1 || !w || ph_tensor_rank(w) != 4 || ph_value_rank(x) != 4 || strcmp(ap, "NOTSET"))
        return 0;
    geom *g = ph_match_state(m, sizeof *g);
    if (!g)
        return PH_ENOMEM;
    g->H = ph_value_dim(x, 2), g->W = ph_value_dim(x, 3);
    g->M = ph_tensor_dim(w, 0), g->C = ph_tensor_dim(w, 1), g->kh = ph_tensor_dim(w, 2), g->kw = ph_tensor_dim(w, 3);
    g->sh = attr_at(n, "strides", 0, 2, 1), g->sw = attr_at(n, "strides", 1, 2, 1);
    g->dh = attr_at(n, "dilations", 0, 2, 1), g->dw = attr_at(n, "dilations", 1, 2, 1);
    for (int i = 0; i < 4; i++)
        g->p[i] = attr_at(n, "pads", i, 4, 0);
    if (g->H < 1 || g->W < 1 || g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1 || g->p[0] < 0 || g->p[1] < 0 ||
        g->p[2] < 0 || g->p[3] < 0)
        return 0;
    int64_t span_h = (g->kh - 1) * g->dh + 1, span_w = (g->kw - 1) * g->dw + 1;
    if (span_h * span_w <= limit)
        return 0;
    g->oh = (g->H + g->p[0] + g->p[2] - span_h) / g->sh + 1;
    g->ow = (g->W + g->p[1] + g->p[3] - span_w) / g->sw + 1;
    if (g->oh < 1 || g->ow < 1)
        return 0;
    /* tiles: whole rows when one row fits, else one row and columns */
    g->tw = g->kw;
    g->th = 0;
    for (int64_t th = g->kh; th >= 1 && !g->th; th--)
        if (((th - 1) * g->dh + 1) * span_w <= limit)
            g->th = th;
    if (!g->th) {
        g->th = 1;
        g->tw = 0;
        for (int64_t tw = g->kw; tw >= 1 && !g->tw; tw--)
            if ((tw - 1) * g->dw + 1 <= limit)
                g->tw = tw;
    }
    int64_t tiles = ((g->kh + g->th - 1) / g->th) * ((g->kw + g->tw - 1) / g->tw);
    return g->tw >= 1 && tiles > 1 && tiles <= MAX_TILES;
}

/* W[:, :, i:i+th, j:j+tw] as a new initializer. */
static ph_value *weight_tile(ph_rewriter *rw, const ph_tensor *w, const geom *g, int64_t i, int64_t j, int64_t th,
                             int64_t tw)
{
    size_t es = ph_dtype_size(ph_tensor_dtype(w));
    int64_t dims[4] = {g->M, g->C, th, tw};
    void *data = NULL;
    ph_tensor *t = ph_tensor_new_uninit(ph_tensor_dtype(w), 4, dims, &data);
    if (!t)
        return NULL;
    const unsigned char *src = ph_tensor_data(w);
    unsigned char *dst = data;
    for (int64_t mc = 0; mc < g->M * g->C; mc++)
        for (int64_t r = 0; r < th; r++)
            memcpy(dst + (size_t)((mc * th + r) * tw) * es, src + (size_t)((mc * g->kh + i + r) * g->kw + j) * es,
                   (size_t)tw * es);
    return ph_rw_initializer(rw, "conv_tile", t);
}

static int tiles(ph_rewriter *rw, const ph_match *m)
{
    const geom *g = ph_match_state(m, sizeof *g);
    ph_node *root = ph_match_root(m);
    ph_value *x = ph_match_value(m, "x"), *b = ph_match_value(m, "b"), *sum = NULL;
    const ph_tensor *w = ph_match_const(m, "w");
    if (!g)
        return ph_rw_fail(rw, PH_ENOMEM);
    if (g->p[0] || g->p[1] || g->p[2] || g->p[3]) {
        int64_t pads[8] = {0, 0, g->p[0], g->p[1], 0, 0, g->p[2], g->p[3]}, eight = 8;
        ph_value *in[2] = {x, ph_rw_initializer(rw, "conv_pads", ph_tensor_new(PH_DT_INT64, 1, &eight, pads))};
        x = in[1] ? ph_rw_op(rw, "Pad", 2, in) : NULL;
    }
    int64_t hp = g->H + g->p[0] + g->p[2], wp = g->W + g->p[1] + g->p[3];
    for (int64_t i = 0; i < g->kh && x; i += g->th) {
        for (int64_t j = 0; j < g->kw && x; j += g->tw) {
            int64_t th = g->kh - i < g->th ? g->kh - i : g->th, tw = g->kw - j < g->tw ? g->kw - j : g->tw;
            int64_t starts[2] = {i * g->dh, j * g->dw};
            int64_t ends[2] = {starts[0] + (g->oh - 1) * g->sh + (th - 1) * g->dh + 1,
                               starts[1] + (g->ow - 1) * g->sw + (tw - 1) * g->dw + 1};
            ph_value *s = starts[0] == 0 && starts[1] == 0 && ends[0] == hp && ends[1] == wp
                              ? x
                              : ph_rw_slice(rw, x, 2, starts, ends, (const int64_t[]){2, 3}, NULL);
            ph_value *in[3] = {s, weight_tile(rw, w, g, i, j, th, tw), sum ? NULL : b};
            ph_node *c = s && in[1] ? ph_rw_clone(rw, root, NULL, in[2] ? 3 : 2, in) : NULL;
            if (!c)
                return ph_rw_fail(rw, PH_ENOMEM);
            ph_node_set_name(c, ph_graph_unique_name(ph_rw_graph(rw), ph_node_name(root)));
            ph_node_remove_attr(c, "pads");
            ph_node_remove_attr(c, "kernel_shape");
            ph_value *out = ph_node_output(c, 0);
            if (sum) {
                ph_value *add[2] = {sum, out};
                out = ph_rw_op(rw, "Add", 2, add);
            }
            sum = out;
        }
    }
    return sum ? ph_rw_replace_root(rw, sum) : ph_rw_fail(rw, PH_ENOMEM);
}

static const ph_rule rules[] = {{"split_large_kernel_conv", "y = Conv(x, w:const, b?)", too_large, tiles}, {0}};

static const ph_param_def params[] = {
    {"max_kernel_area", PH_PARAM_INT, "2048", "largest area a kernel may span, ((kh-1)*dh+1)*((kw-1)*dw+1)"},
    {NULL, 0, NULL, NULL},
};

static const ph_profile_key keys[] = {{"Conv.max_kernel_area", "max_kernel_area"}, {NULL, NULL}};

/* Examples for the rule checker: kernels above a small max_kernel_area. */
static const ph_rule_example examples[] = {
    {"split_large_kernel_conv",
     "x: <T=float|double>[<1|2>,<C=2|4>,<6|9>,<7|8>]\nw: const <T>[<M=1|2|4>,<C>,<5|3>,<3|5>]\nb: const <T>[<M>]\n"
     "y = Conv(x, w<, b|>) {< pads=[1,2,1,0]| strides=[2,1]| dilations=[1,2]| pads=[0,0,0,0]>}\nreturn y",
     (const char *const[]){"max_kernel_area=6", NULL}},
    {0}};

PH_PASS_DEFINE(
    .name = "split_large_kernel_conv",
    .summary = "Conv whose kernel spans more than the target's area -> Convs over kernel tiles on shifted slices, summed",
    .stages = PH_STAGE_ADAPT,
    .exactness = PH_FP,
    .params = params,
    .rules = rules,
    .profile_keys = keys,
    .rule_examples = examples)
