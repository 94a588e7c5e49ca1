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
 *   of the same graph (a statement of the pattern: the pass moves only
 *   what a region produces); a Squeeze read by others stays for them.
 *   Conv attributes of length 1 (2 for pads).
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

/* 1 if n (a Squeeze or Unsqueeze; `rank` the rank of its 4-D side) has axes [2]. */
static int axis2(const ph_node *n, int rank)
{
    int64_t ax[4];
    return n && ph_node_axes(n, rank, ax, 4) == 1 && ax[0] == 2;
}

/* A Squeeze `s` of a region value `t` (made by a Conv or an elementwise op
 * of the region), read by others too. */
#define REGION_SQUEEZE(s, t)                                      \
    t ":shared = Conv|Clip|" UNARY "|" BINARY "(" t "_in*)\n" s \
    ":shared = Squeeze(" t ":rank=4, " s "_axes?)\n"

/* dst (a value the rewrite made) gets src's type with a dim of 1 inserted
 * at axis (src's rank known); the setters' errors are the rewrite's. */
static ph_value *type_insert1(ph_value *dst, const ph_value *src, int axis)
{
    int r = ph_value_rank(src);
    int64_t d[8];
    if (!dst || r < 0 || r > 7 || axis > r)
        return dst;
    for (int i = 0, j = 0; i <= r; i++)
        d[i] = i == axis ? 1 : ph_value_dim(src, j++);
    ph_value_set_type(dst, ph_value_dtype(src), r + 1, d);
    for (int i = 0, j = 0; i <= r; i++) {
        const char *p = i == axis ? NULL : ph_value_dim_param(src, j++);
        if (p)
            ph_value_set_dim_param(dst, i, p);
    }
    return dst;
}

/* v (4-D) squeezed on axis 2 to replace the root's y (3-D): the end of
 * every rewrite. */
static int finish(ph_rewriter *rw, ph_value *v, ph_value *y)
{
    v = type_insert1(v, y, 2);
    return ph_rw_replace_root(rw, v ? ph_rw_axes_op(rw, "Squeeze", v, 1, (const int64_t[]){2}) : NULL);
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
static void lift_attr(ph_node *n, const char *key, int64_t h)
{
    const int64_t *v;
    ptrdiff_t k = ph_node_attr_ints(n, key, &v);
    if (k >= 1)
        ph_node_set_attr_ints(n, key, 2 * (size_t)k, (int64_t[4]){h, v[0], h, k > 1 ? v[1] : 0});
}

/* The Conv2d is a copy of the Conv1d (its name kept). */
static int to_conv2d(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    const ph_tensor *w = ph_match_const(m, "w");
    int64_t wd[4] = {ph_tensor_dim(w, 0), ph_tensor_dim(w, 1), 1, ph_tensor_dim(w, 2)};
    ph_tensor *w4 = ph_tensor_new(ph_tensor_dtype(w), 4, wd, ph_tensor_data(w));
    ph_value *in[3] = {ph_match_value(m, "t"), ph_rw_initializer(rw, "conv2d_w", w4), ph_match_value(m, "b")};
    if (!in[0])
        in[0] = type_insert1(ph_rw_axes_op(rw, "Unsqueeze", x, 1, (const int64_t[]){2}), x, 2);
    ph_node *c = ph_rw_clone(rw, ph_match_root(m), NULL, in[2] ? 3 : 2, in);
    lift_attr(c, "kernel_shape", 1), lift_attr(c, "strides", 1), lift_attr(c, "dilations", 1);
    lift_attr(c, "pads", 0);
    return finish(rw, ph_node_output(c, 0), ph_match_value(m, "y"));
}

/* ------------------------------------------------------------- elementwise */

static int unary_ok(const ph_match *m, const ph_params *params) { return axis2(ph_match_node(m, "s"), 4); }

static int sink_unary(ph_rewriter *rw, const ph_match *m)
{
    ph_node *e = ph_match_root(m);
    ph_value *in[3] = {ph_match_value(m, "t"), ph_match_value(m, "lo"), ph_match_value(m, "hi")};
    size_t n = ph_node_input_count(e);
    return finish(rw, ph_node_output(ph_rw_clone(rw, e, NULL, n > 3 ? 3 : n, in), 0), ph_match_value(m, "y"));
}

static int binary2_ok(const ph_match *m, const ph_params *params)
{
    return ph_value_rank(ph_match_value(m, "y")) == 3 && axis2(ph_match_node(m, "a"), 4) && axis2(ph_match_node(m, "b"), 4);
}

static int binary1_ok(const ph_match *m, const ph_params *params)
{
    int r = ph_value_rank(ph_match_value(m, "o"));
    return ph_value_rank(ph_match_value(m, "y")) == 3 && r >= 0 && r <= 3 && axis2(ph_match_node(m, "a"), 4);
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
    return type_insert1(ph_rw_axes_op(rw, "Unsqueeze", o, 1, (const int64_t[]){r - 1}), o, r - 1);
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
    return finish(rw, ph_node_output(ph_rw_clone(rw, e, NULL, 2, in), 0), ph_match_value(m, "y"));
}

/* ------------------------------------------------------------- pair */

static int pair_ok(const ph_match *m, const ph_params *params)
{
    return axis2(ph_match_node(m, "s"), 4) && axis2(ph_match_root(m), 4);
}

static const ph_rule rules[] = {
    {"conv_sq", "s:shared = Squeeze(t:rank=4, sa?)\ny = Conv(s, w:const:rank=3, b?)", conv1d_ok, to_conv2d},
    {"conv1d", "y = Conv(x:rank=3, w:const:rank=3, b?)", conv1d_ok, to_conv2d},
    {"unary", REGION_SQUEEZE("s", "t") "y = " UNARY "(s)", unary_ok, sink_unary},
    {"clip", REGION_SQUEEZE("s", "t") "y = Clip(s, lo?, hi?)", unary_ok, sink_unary},
    {"binary2", REGION_SQUEEZE("a", "ta") "b:shared = Squeeze(tb:rank=4, xb?)\ny = " BINARY "(a, b)", binary2_ok,
     sink_binary},
    {"binary1", REGION_SQUEEZE("a", "ta") "y = " BINARY "(a, o)", binary1_ok, sink_binary},
    {"binary1r", REGION_SQUEEZE("a", "ta") "y = Sub|Div|Pow|PRelu(o, a)", binary1_ok, sink_binary},
    {"pair", REGION_SQUEEZE("s", "t") "u = Unsqueeze(s, ua?)\n=> u = t", pair_ok, NULL},
    {0}};

/* Examples for the rule checker: a 1-D region written in 2-D (Squeeze of
 * axis 2 after a Conv) and what follows it. */
#define C1_HEAD "opset <13|17>\nx: <T=float|double>[<1|2>,2,1,<5|7>]\nw: const <T>[3,2,1,<1|3>]\n" \
                "c = Conv(x, w)\nax: int64[1] = [<2|-2>]\n"
static const ph_rule_example examples[] = {
    {"unary", C1_HEAD "s = Squeeze(c, ax)\ny = <Relu|Sigmoid|Neg|Abs|Tanh>(s)\nreturn y", NULL},
    {"clip", C1_HEAD "s = Squeeze(c, ax)\nlo: const <T>[]\nhi: const <T>[]\ny = Clip(s, lo, hi)\nreturn y", NULL},
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
