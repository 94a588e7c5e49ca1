/* tests/plugins/tp_rule_seventh.c - tp_seventh_scales as a rule pass, run
 * by the stage's worklist, which numbers its rewrites: each Relu becomes
 * Max(x, 0) (bit-exact), but the one named relu_6 (the 7th in scan order
 * of tests/test_bisect.c's models) also scales x by 1.001.  --bisect must
 * name this pass and rewrite 7. */
#include <string.h>

#include <passhost/passhost.h>

static int to_max(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    if (!strcmp(ph_node_name(ph_match_root(m)), "relu_6")) { /* the wrong one */
        ph_value *in[2] = {x, ph_rw_constant(rw, "tp7_scale", NULL, PH_DT_FLOAT, 0, NULL, 1.001)};
        x = ph_rw_op(rw, "Mul", 2, in);
    }
    ph_rw_bind(rw, "x2", x);
    ph_rw_bind(rw, "zero", ph_rw_constant(rw, "tp7_zero", NULL, PH_DT_FLOAT, 0, NULL, 0.0));
    return 1;
}

static const ph_rule rules[] = {{"relu_to_max", "y = Relu(x)\n=>\ny = Max(x2, zero)", NULL, to_max}, {0}};

PH_PASS_DEFINE(.name = "tp_rule_seventh", .summary = "Relu -> Max(x, 0), but relu_6 also scales by 1.001 (a rule)",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .rules = rules)
