/* tests/plugins/tp_wrong_rules.c - a pattern pass with one wrong rule and
 * one right one, for the rule checker (tests/test_rulecheck.c):
 *   scale_off:  Mul(x, c) -> Mul(x, c * 1.001): outputs move far beyond
 *               the error budget; the checker must find it and write a
 *               reproducer;
 *   add_zero:   Add(x, c) with every element of c 0, c fitting x -> x:
 *               right (exact), with a value test the checker breaks in
 *               its negative instances. */
#include <passhost/passhost.h>

static int scale(ph_rewriter *rw, const ph_match *m)
{
    const ph_tensor *c = ph_match_const(m, "c");
    ph_tensor *t = NULL;
    double f = 1.001;
    if (ph_tensor_scaled(c, 1, 1, &f, 0, &t) < 0)
        return ph_rw_status(rw);
    ph_rw_bind(rw, "c2", ph_rw_initializer(rw, "scaled", t));
    return 1;
}

static const ph_rule rules[] = {
    {"scale_off", "y = Mul(x, c:const:float32)\n=>\ny = Mul(x, c2)", NULL, scale},
    {"add_zero", "y = Add(x:float32, c:all=0:fits(x):float32)\n=>\ny = x", NULL, NULL},
    {0}};

PH_PASS_DEFINE(.name = "tp_wrong_rules", .summary = "one wrong rule, one right (for the rule checker)",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_FP, .rules = rules)
