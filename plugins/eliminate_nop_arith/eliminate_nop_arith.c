/* eliminate_nop_arith - remove arithmetic with the identity element.
 *
 * Requires: a default-domain Add or Sub of 0, Mul, Div or Pow by 1, And
 *   with true, Or with false (not the legacy `broadcast` attribute of
 *   opsets < 7), where the constant c is an initializer whose every element
 *   is that identity value, and c cannot change the output:
 *   - shape: c broadcasts to x's shape (c's rank at most x's, each of c's
 *     dims 1 or equal to x's known dim, aligned on the right); x's rank
 *     must be known unless c is a scalar of rank 0;
 *   - dtype: the output's dtype is x's (ONNX requires equal input types
 *     for Add/Sub/Mul/Div/And/Or; Pow returns its base's type);
 *   Add, Mul, And and Or take c on either side; Sub, Div and Pow only on
 *   the right (0 - x, 1 / x and 1 ^ x are not x).
 * Changes:  users of the output read x; the node is removed, and c when
 *   nothing else reads it.  A graph output keeps its name when x can take
 *   it over, otherwise nothing changes.  Main graph and every If/Loop/Scan
 *   body.
 * Exact:    yes, with one float note: x + (+0.0) and x - (-0.0) turn -0.0
 *   into +0.0 (every other value, NaN and infinities included, is
 *   unchanged, and the two zeros compare equal).  x - (+0.0), x + (-0.0),
 *   x * 1, x / 1 and pow(x, 1) are bit-exact; integers and bools are exact.
 */
#include <passhost/passhost.h>

/* The identity element of the root's op on the constant's side. */
static double identity_of(ph_op op)
{
    return op == PH_OP_Add || op == PH_OP_Sub || op == PH_OP_Or ? 0.0 : 1.0;
}

/* c cannot change x's shape: it broadcasts to it. */
static int keeps_shape(const ph_tensor *c, const ph_value *x)
{
    int r = ph_value_rank(x), cr = (int)ph_tensor_rank(c);
    if (cr == 0)
        return 1;
    if (r < cr)
        return 0; /* also r < 0: unknown */
    for (int i = 1; i <= cr; i++) {
        int64_t d = ph_tensor_dim(c, (size_t)(cr - i));
        if (d != 1 && d != ph_value_dim(x, r - i))
            return 0; /* an unknown dim of x is -1: never equal */
    }
    return 1;
}

static int is_nop(const ph_match *m, const ph_params *params)
{
    const ph_tensor *c = ph_match_const(m, "c");
    const ph_value *x = ph_match_value(m, "x"), *y = ph_match_value(m, "y");
    ph_op op = ph_node_op(ph_match_root(m));
    int xt = ph_value_dtype(x), yt = ph_value_dtype(y);
    if (!c || !x || xt == PH_DT_UNDEFINED || (yt != PH_DT_UNDEFINED && yt != xt) || !keeps_shape(c, x))
        return 0;
    if (op != PH_OP_Pow && ph_tensor_dtype(c) != xt)
        return 0;
    return ph_tensor_all_equal(c, identity_of(op));
}

/* the output now reads x */
static int to_x(ph_rewriter *rw, const ph_match *m)
{
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_match_value(m, "x")) ? PH_ENOMEM : 1;
}

/* Add/Mul/And/Or are matched with c on either side. */
static const ph_rule rules[] = {
    {"commutative", "y = Add|Mul|And|Or(x, c:const) {!broadcast}", is_nop, to_x},
    {"right_only", "y = Sub|Div|Pow(x, c:const) {!broadcast}", is_nop, to_x},
    {0}};

PH_PASS_DEFINE(
    .name = "eliminate_nop_arith",
    .summary = "Add/Sub of 0, Mul/Div/Pow by 1, And with true, Or with false that keep shape and dtype -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
