/* tests/plugins/tp_rule_break.c - a rule pass whose result is not a valid
 * node: Relu(x) becomes Conv(x), without the weights Conv needs, which
 * --verify-each must blame on it. */
#include <passhost/passhost.h>

static const ph_rule rules[] = {{"conv_without_weights", "y = Relu(x)\n=>\ny = Conv(x)", NULL, NULL}, {0}};

PH_PASS_DEFINE(.name = "tp_rule_break", .summary = "Relu(x) -> Conv(x) (a rule that breaks the graph)",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .rules = rules)
