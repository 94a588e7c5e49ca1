/* tests/plugins/tp_rule_swap_a.c - a rule pass with a declarative result
 * of two nodes: Sin(Neg(x)) becomes Neg(Sin(x)) (equal: sine is odd).
 * The Neg that replaces the root keeps its name; the Sin and both outputs
 * are made under fresh names.  With tp_rule_swap_b (the other way round)
 * the two undo each other forever, each round leaving the graph as it was
 * but for those names. */
#include <passhost/passhost.h>

static const ph_rule rules[] = {{"sin_before_neg", "t = Neg(x)\ny = Sin(t)\n=>\nu = Sin(x)\ny = Neg(u)", NULL, NULL},
                                {0}};

PH_PASS_DEFINE(.name = "tp_rule_swap_a", .summary = "Sin(Neg(x)) -> Neg(Sin(x)) (a declarative rule)",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .rules = rules)
