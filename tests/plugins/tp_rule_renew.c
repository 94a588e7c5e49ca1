/* tests/plugins/tp_rule_renew.c - a rule pass whose declarative result is
 * its pattern: every Relu is made again (keeping its name) with an output
 * under a fresh name, one rewrite per Relu and call, and nothing else
 * changes.  The stage runner names it as a pass that changes only names. */
#include <passhost/passhost.h>

static const ph_rule rules[] = {{"relu_again", "y = Relu(x)\n=>\ny = Relu(x)", NULL, NULL}, {0}};

PH_PASS_DEFINE(.name = "tp_rule_renew", .summary = "Relu -> the same Relu, its output renamed (a rule)",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .rules = rules)
