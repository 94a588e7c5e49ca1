/* stack_unstack_to_reshape - stack and unstack in ONNX form -> Concat or
 * Split plus Reshape.
 *
 * Icraft SplitStackPass and ConvertUnstackPass (seed 004): a backend without
 * stack/unstack runs them as Concat + Reshape and Split + Reshape.  In ONNX a
 * stack of x_1..x_n at axis a is Unsqueeze(x_i, a) -> Concat(axis a), and an
 * unstack is Split(axis a, pieces of 1) -> Squeeze(a) per piece.
 *
 * Requires:
 *   stack: a default-domain Concat of n >= 2 inputs, each the output of a
 *     default-domain Unsqueeze of the same graph with one axis (attribute or
 *     constant input), read only by this Concat (once) and no graph output,
 *     that axis equal to the Concat's axis a (both normalized to the output
 *     rank R), with a < R - 1 (stacking after the last axis has no Concat
 *     form: left alone); the Concat's output shape fully known, no dim 0.
 *   unstack: a default-domain Squeeze whose axes are exactly [a] (explicit),
 *     reading an output of a default-domain Split on axis a whose dim a is 1,
 *     with a fully known output shape without dim 0.
 *   Opset >= 5 (Reshape's shape input).
 * Changes:
 *   stack: Concat(x_1..x_n, axis a) -> Reshape to the stacked shape; the
 *     Unsqueezes (and their axes operands) are removed.
 *   unstack: the Squeeze becomes Reshape(piece, its static shape).
 *   Main graph and every If/Loop/Scan body.
 * Exact: yes.  Concat along a of [.., d_a, ..] pieces puts x_i's elements
 *   in the same row-major order as stacking at a, so the Reshape moves
 *   nothing; Squeeze and Reshape never move elements.
 */
#include <passhost/passhost.h>

/* the static output shape of y (no unknown or 0 dim) into dims; rank or -1 */
static int static_shape(const ph_value *y, int64_t *dims, int max)
{
    int r = ph_value_rank(y);
    if (!ph_value_shape_known(y) || r > max ||
        ph_model_opset(ph_graph_model(ph_value_graph(y)), "") < 5)
        return -1;
    for (int i = 0; i < r; i++)
        if ((dims[i] = ph_value_dim(y, i)) == 0)
            return -1;
    return r;
}

/* Reshape(x) to y's static shape, replacing y */
static int reshape_to(ph_rewriter *rw, ph_value *x, ph_value *y)
{
    int64_t dims[64], r = static_shape(y, dims, 64);
    ph_value *in[2] = {x, r < 0 ? NULL : ph_rw_initializer(rw, "reshape_shape", ph_tensor_new(PH_DT_INT64, 1, &r, dims))};
    ph_value *out = in[0] && in[1] ? ph_rw_op(rw, "Reshape", 2, in) : NULL;
    if (!out || ph_value_copy_type(out, y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, out) ? PH_ENOMEM : 1;
}

static int is_stack(const ph_match *m, const ph_params *params)
{
    ph_node *cat = ph_match_root(m);
    ph_value *const *xs;
    size_t n = ph_match_values(m, "xs", &xs);
    int64_t dims[64], ax[2];
    int R = static_shape(ph_match_value(m, "y"), dims, 64);
    int64_t a = ph_node_attr_int(cat, "axis", 0);
    if (a < 0)
        a += R;
    if (n < 2 || R < 2 || a < 0 || a >= R - 1)
        return 0;
    for (size_t i = 0; i < n; i++) {
        ph_node *u = ph_value_producer(xs[i]);
        if (!u || ph_node_op(u) != PH_OP_Unsqueeze || ph_node_domain(u)[0] || ph_node_graph(u) != ph_node_graph(cat) ||
            ph_value_sole_consumer(xs[i]) != cat || ph_node_axes(u, R, ax, 2) != 1 || ax[0] != a)
            return 0;
    }
    return 1;
}

static int stack(ph_rewriter *rw, const ph_match *m)
{
    ph_value *const *xs;
    size_t n = ph_match_values(m, "xs", &xs);
    ph_value **in = ph_rw_alloc(rw, n * sizeof *in);
    if (!in)
        return PH_ENOMEM;
    for (size_t i = 0; i < n; i++)
        in[i] = ph_node_input(ph_value_producer(xs[i]), 0);
    ph_value *y = ph_match_value(m, "y");
    int64_t a = ph_node_attr_int(ph_match_root(m), "axis", 0);
    ph_node *cat = ph_rw_clone(rw, ph_match_root(m), NULL, n, in);
    if (!cat || ph_node_set_attr_int(cat, "axis", a < 0 ? a + ph_value_rank(y) : a))
        return PH_ENOMEM;
    return reshape_to(rw, ph_node_output(cat, 0), y);
}

static int is_unstack(const ph_match *m, const ph_params *params)
{
    ph_value *s = ph_match_value(m, "s");
    ph_node *split = ph_value_producer(s);
    int64_t dims[64], ax[2];
    int r = ph_value_rank(s);
    if (!split || ph_node_op(split) != PH_OP_Split || ph_node_domain(split)[0] || r < 1 ||
        ph_node_axes(ph_match_root(m), r, ax, 2) != 1 || static_shape(ph_match_value(m, "y"), dims, 64) < 0)
        return 0;
    int64_t a = ph_node_attr_int(split, "axis", 0);
    return (a < 0 ? a + r : a) == ax[0] && ph_value_dim(s, (int)ax[0]) == 1;
}

static int unstack(ph_rewriter *rw, const ph_match *m)
{
    return reshape_to(rw, ph_match_value(m, "s"), ph_match_value(m, "y"));
}

static const ph_rule rules[] = {
    {"stack", "y = Concat(xs*)", is_stack, stack},
    {"unstack", "y = Squeeze(s, axes?)", is_unstack, unstack},
    {0}};

/* Examples for the rule checker: a stack and an unstack. */
static const ph_rule_example examples[] = {
    {"stack", "opset <13|17>\nx0: <T=float|int64|double>[<S=2,3|4|3,1,2>]\nx1: <T>[<S>]\nx2: <T>[<S>]\n"
              "ax: int64[1] = [<A=0|1|-2>]\nu0 = Unsqueeze(x0, ax)\nu1 = Unsqueeze(x1, ax)\n"
              "u2 = Unsqueeze(x2, ax)\ny = Concat(u0, u1, u2) {axis=<A>}\nreturn y", NULL},
    {"unstack", "opset <13|17>\nx: <T=float|int64>[<2|3>,<4|1>,3]\n"
                "a, b, c = Split(x) {axis=2}\nax: int64[1] = [2]\nya = Squeeze(a, ax)\nyb = Squeeze(b, ax)\n"
                "return ya, yb, c", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "stack_unstack_to_reshape",
    .summary = "Unsqueeze*N -> Concat (stack) -> Concat + Reshape; Split -> Squeeze (unstack) -> Split + Reshape",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_EXACT,
    .rules = rules,
    .rule_examples = examples)
