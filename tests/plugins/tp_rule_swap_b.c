/* tests/plugins/tp_rule_swap_b.c - a rule pass with a declarative result
 * of two nodes: Neg(Sin(x)) becomes Sin(Neg(x)) (see tp_rule_swap_a). */
#include <passhost/passhost.h>

static const ph_rule rules[] = {{"neg_before_sin", "t = Sin(x)\ny = Neg(t)\n=>\nu = Neg(x)\ny = Sin(u)", NULL, NULL},
                                {0}};

PH_PASS_DEFINE(.name = "tp_rule_swap_b", .summary = "Neg(Sin(x)) -> Sin(Neg(x)) (a declarative rule)",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .rules = rules)
