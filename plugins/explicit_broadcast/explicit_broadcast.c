/* explicit_broadcast - the rank part of implicit broadcasting made
 * explicit: every operand of a broadcasting elementwise operator gets the
 * rank of the widest one.
 *
 * Icraft ExpandInputPass (seed 004): the backend's Add, Mul and the other
 * binary operators want operands of one rank ("expand the dims of the input
 * feature map or of the weights"); a dim of 1 against a larger one it
 * handles (a profile's broadcast = same_rank).
 *
 * Requires: a default-domain Add, Sub, Mul, Div, Pow, Mod, Equal, Less,
 *   LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Where, Max, Min,
 *   Sum, Mean or BitShift (PRelu broadcasts its slope one way only and is
 *   left alone) whose inputs all have a known rank, not all the same.  A
 *   target profile with broadcast other than yes switches it on.
 * Changes:  each operand of a lower rank r, below the widest rank R:
 *   a constant becomes a new initializer of the same data with R - r
 *   leading dims of 1 (the old one is pruned when nothing else reads it);
 *   any other value goes through an Unsqueeze on axes 0 .. R-r-1 (an input
 *   from opset 13, the attribute before).  The operator is rebuilt on the
 *   new operands.  Main graph and every If/Loop/Scan body.
 * Exact:    yes; numpy broadcasting prepends those dims of 1 itself.
 */
#include <string.h>

#include <passhost/passhost.h>

#define MAX_IN 64

/* Every input's rank known, not all equal. */
static int ranks_differ(const ph_match *m, const ph_params *params)
{
    (void)params;
    ph_value *const *xs;
    size_t n = ph_match_values(m, "xs", &xs);
    if (n < 2 || n > MAX_IN)
        return 0;
    int lo = 1 << 30, hi = -1;
    for (size_t i = 0; i < n; i++) {
        int r = xs[i] ? ph_value_rank(xs[i]) : -1;
        if (r < 0)
            return 0;
        lo = r < lo ? r : lo;
        hi = r > hi ? r : hi;
    }
    return lo < hi;
}

static int align(ph_rewriter *rw, const ph_match *m)
{
    ph_value *const *xs;
    size_t n = ph_match_values(m, "xs", &xs);
    int R = 0;
    for (size_t i = 0; i < n; i++)
        if (ph_value_rank(xs[i]) > R)
            R = ph_value_rank(xs[i]);
    ph_value *in[MAX_IN];
    int64_t axes[64], dims[64];
    for (size_t i = 0; i < n; i++) {
        int r = ph_value_rank(xs[i]);
        in[i] = xs[i];
        if (r == R)
            continue;
        const ph_tensor *t = ph_value_const(xs[i]);
        if (t) { /* the same data, R - r leading dims of 1 */
            for (int d = 0; d < R; d++)
                dims[d] = d < R - r ? 1 : ph_tensor_dim(t, (size_t)(d - (R - r)));
            ph_tensor *c = ph_tensor_new(ph_tensor_dtype(t), (size_t)R, dims, ph_tensor_data(t));
            in[i] = c ? ph_rw_initializer(rw, ph_value_name(xs[i]), c) : NULL;
        } else {
            for (int d = 0; d < R - r; d++)
                axes[d] = d;
            in[i] = ph_rw_axes_op(rw, "Unsqueeze", xs[i], (size_t)(R - r), axes);
        }
        if (!in[i])
            return ph_rw_fail(rw, PH_ENOMEM);
    }
    ph_node *root = ph_match_root(m);
    ph_node *copy = ph_rw_clone(rw, root, NULL, n, in);
    if (!copy)
        return ph_rw_fail(rw, PH_ENOMEM);
    return ph_rw_replace_root(rw, ph_node_output(copy, 0));
}

static const ph_rule rules[] = {
    {"broadcast_ranks",
     "y = Add|Sub|Mul|Div|Pow|Mod|Equal|Less|LessOrEqual|Greater|GreaterOrEqual|And|Or|Xor|Where|Max|Min|Sum|Mean|"
     "BitShift(xs*)",
     ranks_differ, align},
    {0},
};

static const ph_profile_key keys[] = {{"broadcast", NULL}, {NULL, NULL}};

/* Examples for the rule checker: operands of different ranks. */
static const ph_rule_example examples[] = {
    {"broadcast_ranks", "opset <11|13|17>\nx: <T=float|int32|double>[<2|1>,3,<4|1>]\nc: const <T>[<4|1>]\n"
                        "y = <Add|Mul|Sub|Max|Min>(<x, c|c, x>)\nreturn y", NULL},
    {"broadcast_ranks", "x: float[2,<3|1>,4]\nb: float[4]\nc: bool[<3,1|1>]\ny = Where(c, x, b)\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "explicit_broadcast",
    .summary = "operands of a broadcasting elementwise op brought to one rank (constants reshaped, "
               "activations unsqueezed)",
    .stages = PH_STAGE_ADAPT,
    .exactness = PH_EXACT,
    .rules = rules,
    .profile_keys = keys,
    .rule_examples = examples)
