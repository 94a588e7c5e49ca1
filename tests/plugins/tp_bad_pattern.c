/* tests/plugins/tp_bad_pattern.c - malformed: a pattern with a typo, which
 * the host must report when it loads the plugin. */
#include <passhost/passhost.h>

static int rewrite(ph_rewriter *rw, const ph_match *m) { return 0; }

static const ph_rule rules[] = {
    {"good", "y = Relu(x)", NULL, rewrite},
    {"conv_bn", "c = Conv(x, w:konst); y = BatchNormalization(c, s, t, m, v)", NULL, rewrite},
    {0}};

PH_PASS_DEFINE(.name = "tp_bad_pattern", .summary = "a pattern that does not parse",
               .stages = PH_STAGE_OPTIMIZE, .rules = rules)
