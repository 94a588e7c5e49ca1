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

/* The output's dtype, when known, is x's. */
static int same_dtype(const ph_match *m, const ph_params *params)
{
    int yt = ph_value_dtype(ph_match_value(m, "y"));
    return yt == PH_DT_UNDEFINED || yt == ph_match_int(m, "t", 0);
}

/* Add/Or/Mul/And take c on either side (commutative), Sub/Div/Pow only on
 * the right; Pow's exponent may have another dtype. */
static const ph_rule rules[] = {
    {"nop_arith",
     "( y = Add|Sub|Or(x:dtype=$t, c:all=0:fits(x):dtype=$t) {!broadcast}\n"
     "| y = Mul|Div|And(x:dtype=$t, c:all=1:fits(x):dtype=$t) {!broadcast}\n"
     "| y = Pow(x:dtype=$t, c:all=1:fits(x)) {!broadcast} )\n"
     "=>\n"
     "y = x",
     same_dtype, NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "eliminate_nop_arith",
    .summary = "Add/Sub of 0, Mul/Div/Pow by 1, And with true, Or with false that keep shape and dtype -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
