/* conv1d_to_conv2d - lift connected 1-D convolutions and the elementwise ops
 * between them to 2-D with H = 1 (seed 000 KnowledgeConv1d2Conv2d): an
 * Unsqueeze at the inputs of the region, Conv2d and elementwise ops inside,
 * a Squeeze at its outputs, so a backend that runs Conv1d as Conv2d converts
 * the layout once per region instead of once per Conv.
 *
 * The region grows one node at a time by pushing the Squeeze down:
 *   conv1d:   y = Conv(x, w, b?), x rank 3, w a constant [M, C/g, k]
 *             -> Squeeze(Conv(Unsqueeze(x, 2), w as [M, C/g, 1, k], b), 2)
 *             with kernel_shape [1, k], strides [1, s], dilations [1, d],
 *             pads [0, p0, 0, p1] (auto_pad and group kept: with H = 1 and a
 *             kernel of height 1 they add no padding on H);
 *   conv_sq:  the same Conv reading Squeeze(t, 2) reads t, no Unsqueeze;
 *   unary:    E(Squeeze(t, 2)) -> Squeeze(E(t), 2) for the elementwise
 *             unary ops below (Clip with its scalar bounds);
 *   binary:   E(Squeeze(a, 2), Squeeze(b, 2)) -> Squeeze(E(a, b), 2), and
 *             E(Squeeze(a, 2), o) (either order) -> Squeeze(E(a, o'), 2) with
 *             o' = o for rank <= 1, else o with a 1 inserted before its last
 *             dim (a reshaped constant, or an Unsqueeze: the region's input);
 *             E one of Add Sub Mul Div Pow Max Min PRelu, y of known rank 3;
 *   pair:     Unsqueeze(Squeeze(t, 2), 2) -> t (where two regions meet).
 * Requires: default-domain ops; Squeeze/Unsqueeze axes exactly [2] (or
 *   [-2]), read from the attribute or a constant input; the Squeezes pushed
 *   down read a rank-4 value made by a Conv or one of the elementwise ops
 *   (so the pass moves only what a region produces); a Squeeze read by
 *   others stays for them.  Conv attributes of length 1 (2 for pads).
 * Changes: as above; axes are an input from opset 13, an attribute before.
 *   Old weights go when nothing else reads them.  Main graph and every
 *   If/Loop/Scan body.
 * Exact: fp.  A Conv over H = 1 with a kernel of height 1 computes the same
 *   sums, but a runtime adds them in the order its 2-D kernel does, not its
 *   1-D one (the SDK's evaluator: x[1,1,2] * w[1,1,2] differs in the last
 *   bit; tests/test_pass_conv1d_to_conv2d.c); elementwise ops and
 *   broadcasting are unchanged by a dim of 1.
 */
#include <string.h>

#include <passhost/passhost.h>

#define UNARY                                                                                              \
    "Relu|LeakyRelu|Sigmoid|Tanh|Elu|Selu|Celu|HardSigmoid|HardSwish|Softplus|Softsign|ThresholdedRelu|" \
    "Mish|Gelu|Abs|Neg|Exp|Log|Sqrt|Reciprocal|Erf|Floor|Ceil|Round|Sign|Sin|Cos|Tan|Not|Cast|Identity|" \
    "IsNaN|IsInf"
#define BINARY "Add|Sub|Mul|Div|Pow|Max|Min|PRelu"

static const ph_op region_ops[] = {
    PH_OP_Conv, PH_OP_Clip, PH_OP_Relu, PH_OP_LeakyRelu, PH_OP_Sigmoid, PH_OP_Tanh, PH_OP_Elu, PH_OP_Selu,
    PH_OP_Celu, PH_OP_HardSigmoid, PH_OP_HardSwish, PH_OP_Softplus, PH_OP_Softsign, PH_OP_ThresholdedRelu,
    PH_OP_Mish, PH_OP_Gelu, PH_OP_Abs, PH_OP_Neg, PH_OP_Exp, PH_OP_Log, PH_OP_Sqrt, PH_OP_Reciprocal,
    PH_OP_Erf, PH_OP_Floor, PH_OP_Ceil, PH_OP_Round, PH_OP_Sign, PH_OP_Sin, PH_OP_Cos, PH_OP_Tan, PH_OP_Not,
    PH_OP_Cast, PH_OP_Identity, PH_OP_IsNaN, PH_OP_IsInf, PH_OP_Add, PH_OP_Sub, PH_OP_Mul, PH_OP_Div,
    PH_OP_Pow, PH_OP_Max, PH_OP_Min, PH_OP_PRelu};

/* 1 if n (a Squeeze or Unsqueeze; `rank` the rank of its 4-D side) has axes [2]. */
static int axis2(const ph_node *n, int rank)
{
    int64_t ax[4];
    return n && ph_node_axes(n, rank, ax, 4) == 1 && ax[0] == 2;
}

/* 1 if the Squeeze binding `s` drops axis 2 of a region value (see header). */
static int region_squeeze(const ph_match *m, const char *s)
{
    ph_node *sq = ph_match_node(m, s), *p = sq ? ph_value_producer(ph_node_input(sq, 0)) : NULL;
    if (!axis2(sq, 4) || !p || ph_node_domain(p)[0])
        return 0;
    for (size_t i = 0; i < sizeof region_ops / sizeof region_ops[0]; i++)
        if (ph_node_op(p) == region_ops[i])
            return 1;
    return 0;
}

/* dst gets src's type with a dim of 1 inserted at axis (src's rank known). */
static int type_insert1(ph_value *dst, const ph_value *src, int axis)
{
    int r = ph_value_rank(src);
    int64_t d[8];
    if (r < 0 || r > 7 || axis > r)
        return 0;
    for (int i = 0, j = 0; i <= r; i++)
        d[i] = i == axis ? 1 : ph_value_dim(src, j++);
    if (ph_value_set_type(dst, ph_value_dtype(src), r + 1, d) < 0)
        return PH_ENOMEM;
    for (int i = 0, j = 0; i <= r; i++) {
        const char *p = i == axis ? NULL : ph_value_dim_param(src, j++);
        if (p && ph_value_set_dim_param(dst, i, p) < 0)
            return PH_ENOMEM;
    }
    return 0;
}

/* v (4-D) squeezed on axis 2 to replace y (3-D): the end of every rewrite. */
static int finish(ph_rewriter *rw, ph_value *v, ph_value *y)
{
    ph_value *out = v && !type_insert1(v, y, 2) ? ph_rw_axes_op(rw, "Squeeze", v, 1, (const int64_t[]){2}) : NULL;
    if (!out || ph_value_copy_type(out, y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, out) ? PH_ENOMEM : 1;
}

/* ------------------------------------------------------------- Conv1d */

static int conv1d_ok(const ph_match *m, const ph_params *params)
{
    ph_node *c = ph_match_root(m);
    const int64_t *v;
    static const char *const one[] = {"kernel_shape", "strides", "dilations"};
    if (ph_match_node(m, "s") && !axis2(ph_match_node(m, "s"), 4))
        return 0;
    for (int i = 0; i < 3; i++)
        if (ph_node_attr_type(c, one[i]) != PH_ATTR_NONE && ph_node_attr_ints(c, one[i], &v) != 1)
            return 0;
    return (ph_node_attr_type(c, "pads") == PH_ATTR_NONE || ph_node_attr_ints(c, "pads", &v) == 2) &&
           ph_tensor_data(ph_match_const(m, "w"));
}

/* Set attribute key of n, a copy of a Conv1d, to its 2-D form. */
static int lift_attr(ph_node *n, const char *key, int64_t h)
{
    const int64_t *v;
    ptrdiff_t k = ph_node_attr_ints(n, key, &v);
    if (k < 1)
        return 0;
    int64_t d[4] = {h, v[0], h, k > 1 ? v[1] : 0};
    return ph_node_set_attr_ints(n, key, 2 * (size_t)k, d);
}

static int to_conv2d(ph_rewriter *rw, const ph_match *m)
{
    ph_node *conv = ph_match_root(m);
    ph_value *x = ph_match_value(m, "x"), *y = ph_match_value(m, "y");
    const ph_tensor *w = ph_match_const(m, "w");
    int64_t wd[4] = {ph_tensor_dim(w, 0), ph_tensor_dim(w, 1), 1, ph_tensor_dim(w, 2)};
    ph_tensor *w4 = ph_tensor_new(ph_tensor_dtype(w), 4, wd, ph_tensor_data(w));
    ph_value *in[3] = {ph_match_value(m, "t"), ph_rw_initializer(rw, "conv2d_w", w4), ph_match_value(m, "b")};
    if (!in[0]) {
        in[0] = ph_rw_axes_op(rw, "Unsqueeze", x, 1, (const int64_t[]){2});
        if (!in[0] || type_insert1(in[0], x, 2))
            return PH_ENOMEM;
    }
    ph_node *c = in[1] ? ph_rw_node(rw, "Conv", in[2] ? 3 : 2, in, 1) : NULL;
    if (!c || ph_node_copy_attrs(c, conv) < 0 || lift_attr(c, "kernel_shape", 1) < 0 ||
        lift_attr(c, "strides", 1) < 0 || lift_attr(c, "dilations", 1) < 0 || lift_attr(c, "pads", 0) < 0)
        return PH_ENOMEM;
    return finish(rw, ph_node_output(c, 0), y);
}

/* ------------------------------------------------------------- elementwise */

static int unary_ok(const ph_match *m, const ph_params *params) { return region_squeeze(m, "s"); }

static int sink_unary(ph_rewriter *rw, const ph_match *m)
{
    ph_node *e = ph_match_root(m);
    ph_value *in[3] = {ph_match_value(m, "t"), ph_match_value(m, "lo"), ph_match_value(m, "hi")};
    size_t n = ph_node_input_count(e);
    ph_node *c = ph_rw_clone(rw, e, NULL, n > 3 ? 3 : n, in);
    return c ? finish(rw, ph_node_output(c, 0), ph_match_value(m, "y")) : PH_ENOMEM;
}

static int binary2_ok(const ph_match *m, const ph_params *params)
{
    return ph_value_rank(ph_match_value(m, "y")) == 3 && region_squeeze(m, "a") && axis2(ph_match_node(m, "b"), 4);
}

static int binary1_ok(const ph_match *m, const ph_params *params)
{
    int r = ph_value_rank(ph_match_value(m, "o"));
    return ph_value_rank(ph_match_value(m, "y")) == 3 && r >= 0 && r <= 3 && region_squeeze(m, "a");
}

/* o, an operand of a 3-D elementwise result, as an operand of its 4-D form. */
static ph_value *lift_operand(ph_rewriter *rw, ph_value *o)
{
    int r = ph_value_rank(o);
    if (r <= 1)
        return o;
    const ph_tensor *c = ph_value_const(o);
    if (c) {
        int64_t d[4];
        for (int i = 0, j = 0; i <= r; i++)
            d[i] = i == r - 1 ? 1 : ph_tensor_dim(c, (size_t)j++);
        const void *data = ph_tensor_data(c);
        return data ? ph_rw_initializer(rw, "unsqueezed", ph_tensor_new(ph_tensor_dtype(c), (size_t)r + 1, d, data))
                    : NULL;
    }
    ph_value *u = ph_rw_axes_op(rw, "Unsqueeze", o, 1, (const int64_t[]){r - 1});
    return u && !type_insert1(u, o, r - 1) ? u : NULL;
}

static int sink_binary(ph_rewriter *rw, const ph_match *m)
{
    ph_node *e = ph_match_root(m);
    ph_value *a = ph_match_value(m, "a"), *in[2];
    for (int i = 0; i < 2; i++) {
        ph_value *v = ph_node_input(e, (size_t)i);
        if (v == a)
            in[i] = ph_match_value(m, "ta");
        else if (ph_match_value(m, "b"))
            in[i] = ph_match_value(m, "tb");
        else if (!(in[i] = lift_operand(rw, v)))
            return 0;
    }
    ph_node *c = ph_rw_clone(rw, e, NULL, 2, in);
    return c ? finish(rw, ph_node_output(c, 0), ph_match_value(m, "y")) : PH_ENOMEM;
}

/* ------------------------------------------------------------- pair */

static int pair_ok(const ph_match *m, const ph_params *params)
{
    return region_squeeze(m, "s") && axis2(ph_match_root(m), 4);
}

static int drop_pair(ph_rewriter *rw, const ph_match *m)
{
    return ph_rw_replace(rw, ph_match_value(m, "u"), ph_match_value(m, "t")) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"conv_sq", "s:shared = Squeeze(t:rank=4, sa?)\ny = Conv(s, w:const:rank=3, b?)", conv1d_ok, to_conv2d},
    {"conv1d", "y = Conv(x:rank=3, w:const:rank=3, b?)", conv1d_ok, to_conv2d},
    {"unary", "s:shared = Squeeze(t:rank=4, sa?)\ny = " UNARY "(s)", unary_ok, sink_unary},
    {"clip", "s:shared = Squeeze(t:rank=4, sa?)\ny = Clip(s, lo?, hi?)", unary_ok, sink_unary},
    {"binary2",
     "a:shared = Squeeze(ta:rank=4, xa?)\nb:shared = Squeeze(tb:rank=4, xb?)\ny = " BINARY "(a, b)",
     binary2_ok, sink_binary},
    {"binary1", "a:shared = Squeeze(ta:rank=4, xa?)\ny = " BINARY "(a, o)", binary1_ok, sink_binary},
    {"binary1r", "a:shared = Squeeze(ta:rank=4, xa?)\ny = Sub|Div|Pow|PRelu(o, a)", binary1_ok, sink_binary},
    {"pair", "s:shared = Squeeze(t:rank=4, sa?)\nu = Unsqueeze(s, ua?)", pair_ok, drop_pair},
    {0}};

/* Examples for the rule checker: a 1-D region written in 2-D (Squeeze of
 * axis 2 after a Conv) and what follows it. */
#define C1_HEAD "opset <13|17>\nx: <T=float|double>[<1|2>,2,1,<5|7>]\nw: const <T>[3,2,1,<1|3>]\n" \
                "c = Conv(x, w)\nax: int64[1] = [<2|-2>]\n"
static const ph_rule_example examples[] = {
    {"unary", C1_HEAD "s = Squeeze(c, ax)\ny = <Relu|Sigmoid|Neg|Abs|Tanh>(s)\nreturn y", NULL},
    {"binary2", C1_HEAD "v: const <T>[3,2,1,1]\nd = Conv(x, v)\ns = Squeeze(c, ax)\nt = Squeeze(d, ax)\n"
                "y = <Add|Mul|Max|Sub>(s, t)\nreturn y", NULL},
    {"binary1", C1_HEAD "s = Squeeze(c, ax)\no: const <T>[<1|3,1>]\ny = <Add|Mul|Div|Min>(s, o)\nreturn y", NULL},
    {"binary1r", C1_HEAD "s = Squeeze(c, ax)\no: const <T>[<1|3,1>]\ny = <Sub|Div>(o, s)\nreturn y", NULL},
    {"pair", C1_HEAD "s = Squeeze(c, ax)\nu = Unsqueeze(s, ax)\ny = Relu(u)\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "conv1d_to_conv2d",
    .summary = "connected Conv1d + elementwise region -> Unsqueeze at its inputs, Conv2d (H = 1) inside, "
               "Squeeze at its outputs",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_FP,
    .rules = rules,
    .rule_examples = examples)
