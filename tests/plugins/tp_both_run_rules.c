/* tests/plugins/tp_both_run_rules.c - malformed: both run and rules. */
#include <passhost/passhost.h>

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx) { return 0; }
static int rewrite(ph_rewriter *rw, const ph_match *m) { return 0; }
static const ph_rule rules[] = {{"r", "y = Relu(x)", NULL, rewrite}, {0}};

PH_PASS_DEFINE(.name = "tp_both_run_rules", .summary = "run and rules",
               .stages = PH_STAGE_OPTIMIZE, .run = run, .rules = rules)
