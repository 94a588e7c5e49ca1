/* tests/plugins/tp_rule_flip_b.c - a rule pass: Sigmoid becomes Relu (see
 * tp_rule_flip_a). */
#include <passhost/passhost.h>

static const ph_rule rules[] = {{"sigmoid_to_relu", "y = Sigmoid(x)\n=>\ny = Relu(x)", NULL, NULL}, {0}};

PH_PASS_DEFINE(.name = "tp_rule_flip_b", .summary = "Sigmoid -> Relu (a rule)", .stages = PH_STAGE_OPTIMIZE,
               .exactness = PH_EXACT, .rules = rules)
