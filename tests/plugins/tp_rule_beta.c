/* tests/plugins/tp_rule_beta.c - a third-party rule written the way that
 * misses exports: `{beta=0.5}` while exporters leave beta out at its
 * default.  For --trace-rule; its rewrite never changes anything. */
#include <passhost/passhost.h>

static int keep(ph_rewriter *rw, const ph_match *m)
{
    (void)rw, (void)m;
    return 0;
}

static int small_a(const ph_match *m, const ph_params *p)
{
    (void)p;
    return ph_value_rank(ph_match_value(m, "a")) == 2;
}

static const ph_rule rules[] = {
    {"half_beta", "y = Gemm(a, b, c) {beta=0.5}", NULL, keep},
    {"checked", "y = Gemm(a:rank=2, b:const, c?)", small_a, keep},
    {0}};

PH_PASS_DEFINE(.name = "tp_rule_beta", .summary = "Gemm with beta 0.5 (a rule that misses exports)",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .rules = rules)
