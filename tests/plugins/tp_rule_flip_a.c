/* tests/plugins/tp_rule_flip_a.c - a rule pass: Relu becomes Sigmoid; with
 * tp_rule_flip_b (Sigmoid -> Relu) the two undo each other forever, through
 * the stage's worklist. */
#include <passhost/passhost.h>

static const ph_rule rules[] = {{"relu_to_sigmoid", "y = Relu(x)\n=>\ny = Sigmoid(x)", NULL, NULL}, {0}};

PH_PASS_DEFINE(.name = "tp_rule_flip_a", .summary = "Relu -> Sigmoid (a rule)", .stages = PH_STAGE_OPTIMIZE,
               .exactness = PH_EXACT, .rules = rules)
