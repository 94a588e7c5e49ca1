/* tests/test_rulecheck.c - the rule checker (passhost/rulecheck.h) and
 * `passhost --check-rules`: a wrong rule is found and reproduced, a right
 * one passes its positive and negative instances, the same seed gives the
 * same instances, and the findings of the checker on the passes stay
 * fixed (conv1d_to_conv2d, exact -> fp). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <passhost/passhost.h>
#include <passhost/rulecheck.h>
#include <passhost/testing.h>

#include "clirun.h"
#include "tmpdir.h"

#define WRONG_SO PH_BUILD_DIR "/test-plugins/tp_wrong_rules.so"

static ph_test_pass *load(const char *path)
{
    ph_error err = {0};
    ph_test_pass *tp = NULL;
    ck_assert_msg(ph_test_load_pass(path, NULL, &tp, &err) == 0, "%s", err.message);
    return tp;
}

START_TEST(t_wrong_rule_found)
{
    const char *dir = tk_tmpdir_make("rulecheck");
    ph_test_pass *tp = load(WRONG_SO);
    ph_rulecheck_options o = {.size = sizeof o, .seed = 7, .instances = 24, .repro_dir = dir};
    ph_rulecheck_rule r[2];
    ph_error err = {0};
    ck_assert_int_eq(ph_rulecheck_run(ph_test_pass_desc(tp), &o, r, 2, &err), 2);
    ck_assert_str_eq(r[0].name, "scale_off");
    ck_assert_int_gt(r[0].rewritten, 0);
    ck_assert_int_gt(r[0].failures, 0);
    ck_assert_msg(strstr(r[0].failure, "beyond the budget"), "%s", r[0].failure);
    ck_assert_msg(strstr(r[0].failure, "reproducer:"), "%s", r[0].failure);
    /* the reproducer: a model that loads and its text, shrunk to dims of 1 */
    char *onnx = strstr(r[0].failure, "reproducer: ") + strlen("reproducer: ");
    char path[1024];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(onnx, ","), onnx);
    ph_model *m = NULL;
    ck_assert_msg(ph_model_load(path, &m, &err) == 0, "%s: %s", path, err.message);
    ph_model_free(m);
    char text[1100];
    snprintf(text, sizeof text, "%.*s.txt", (int)(strlen(path) - 5), path);
    char *t = tk_slurp(text, NULL);
    ck_assert_msg(t && strstr(t, "= Mul(") && strstr(t, "# input x: float[1"), "%s", t ? t : text);
    free(t);
    /* the right rule: rewritten where it should, and negative instances kept */
    ck_assert_str_eq(r[1].name, "add_zero");
    ck_assert_int_gt(r[1].rewritten, 0);
    ck_assert_int_gt(r[1].negatives, 0);
    ck_assert_msg(r[1].failures == 0, "%s", r[1].failure);
    ph_test_pass_free(tp);
    tk_tmpdir_remove();
}
END_TEST

START_TEST(t_same_seed_same_instances)
{
    ph_test_pass *tp = load(PH_BUILD_DIR "/plugins/fuse_conv_bn.so");
    ph_rulecheck_options o = {.size = sizeof o, .seed = 3, .instances = 12};
    ph_rulecheck_rule a[1], b[1];
    ph_error err = {0};
    ck_assert_int_eq(ph_rulecheck_run(ph_test_pass_desc(tp), &o, a, 1, &err), 1);
    ck_assert_int_eq(ph_rulecheck_run(ph_test_pass_desc(tp), &o, b, 1, &err), 1);
    ck_assert_int_eq(a[0].tried, 12);
    ck_assert_int_eq(a[0].positives, b[0].positives);
    ck_assert_int_eq(a[0].rewritten, b[0].rewritten);
    ck_assert_int_eq(a[0].negatives, b[0].negatives);
    ck_assert_int_gt(a[0].rewritten, 0);
    ck_assert_int_gt(a[0].negatives, 0);
    ck_assert_int_eq(a[0].failures, 0);
    ph_test_pass_free(tp);
}
END_TEST

/* Found by the checker: a Conv1d made 2-D rounds differently (the
 * evaluator's 1-D and 2-D kernels), so conv1d_to_conv2d is fp.  Declared
 * exact, the same instances fail; as it is, they pass. */
START_TEST(t_conv1d_to_conv2d_is_fp)
{
    ph_test_pass *tp = load(PH_BUILD_DIR "/plugins/conv1d_to_conv2d.so");
    const ph_pass_desc *d = ph_test_pass_desc(tp);
    ck_assert_int_eq(d->exactness, PH_FP);
    ph_rulecheck_options o = {.size = sizeof o, .seed = 1, .instances = 200, .only = "conv1d"};
    ph_rulecheck_rule r[16];
    ph_error err = {0};
    int n = ph_rulecheck_run(d, &o, r, 16, &err);
    ck_assert_int_gt(n, 1);
    int i = 0;
    while (strcmp(r[i].name, "conv1d"))
        i++;
    ck_assert_int_gt(r[i].rewritten, 0);
    ck_assert_msg(r[i].failures == 0, "%s", r[i].failure);
    ph_pass_desc exact = *d;
    exact.exactness = PH_EXACT;
    ck_assert_int_eq(ph_rulecheck_run(&exact, &o, r, 16, &err), n);
    ck_assert_int_gt(r[i].failures, 0);
    ck_assert_msg(strstr(r[i].failure, "(the pass is exact)"), "%s", r[i].failure);
    ph_test_pass_free(tp);
}
END_TEST

/* fuse_gelu's constants are value tests (kappa:scalar~0.044715, ...): an
 * instance drawn inside a tolerance is rewritten to com.microsoft's Gelu,
 * which computes with the exact constants; judged against the original
 * alone, 37 of these 60 instances fail, against the original with the
 * constants at their values none does. */
START_TEST(t_values_inside_a_tolerance)
{
    ph_test_pass *tp = load(PH_BUILD_DIR "/plugins/fuse_gelu.so");
    ph_rulecheck_options o = {.size = sizeof o, .seed = 1, .instances = 60};
    ph_rulecheck_rule r[1];
    ph_error err = {0};
    ck_assert_int_eq(ph_rulecheck_run(ph_test_pass_desc(tp), &o, r, 1, &err), 1);
    ck_assert_int_gt(r[0].rewritten, 30);
    ck_assert_int_eq(r[0].unjudged, 0); /* the evaluator runs com.microsoft's Gelu */
    ck_assert_msg(r[0].failures == 0, "%s", r[0].failure);
    ph_test_pass_free(tp);
}
END_TEST

/* Example graphs (ph_pass_desc.rule_examples): a rule whose condition the
 * generator cannot meet (add_tree_to_chain's tree) rewrites with them and
 * not without; the template's tied choices hold (the 4 leaves share one
 * shape, else no instance would build); a malformed template or a graph
 * that does not build is a failure of the rule; a rule with examples gets
 * instances inside an If's branches too. */
START_TEST(t_examples)
{
    ph_test_pass *tp = load(PH_BUILD_DIR "/plugins/add_tree_to_chain.so");
    ph_pass_desc d = *ph_test_pass_desc(tp);
    ph_rulecheck_options o = {.size = sizeof o, .seed = 5, .instances = 48};
    ph_rulecheck_rule r[1];
    ph_error err = {0};
    static const ph_rule_example tied[] = {
        {"add_tree", "x0: float[<S=2,3|4|1,5>]\nx1: float[<S>]\nx2: float[<S>]\nx3: float[<S~2,3|4|1,5>]\n"
                     "s1 = Add(x0, x1)\ns2 = Add(x2, x3)\ny = Add(s1, s2)\nreturn y", NULL},
        {0}};
    d.rule_examples = tied;
    ck_assert_int_eq(ph_rulecheck_run(&d, &o, r, 1, &err), 1);
    ck_assert_msg(r[0].failures == 0, "%s", r[0].failure);
    ck_assert_int_ge(r[0].rewritten, 12);
    ck_assert_int_eq(r[0].rejected, 0);
    ck_assert_int_gt(r[0].in_body_rewritten, 0);
    d.rule_examples = NULL;
    ck_assert_int_eq(ph_rulecheck_run(&d, &o, r, 1, &err), 1);
    ck_assert_int_lt(r[0].rewritten, 5);
    static const ph_rule_example unclosed[] = {{"add_tree", "x: float[<2|3]\ny = Add(x, x)\nreturn y", NULL}, {0}};
    d.rule_examples = unclosed;
    ck_assert_int_eq(ph_rulecheck_run(&d, &o, r, 1, &err), 1);
    ck_assert_msg(strstr(r[0].failure, "not a valid template"), "%s", r[0].failure);
    static const ph_rule_example unknown[] = {{"add_tree", "x: float[<N>]\ny = Add(x, x)\nreturn y", NULL}, {0}};
    d.rule_examples = unknown;
    ck_assert_int_eq(ph_rulecheck_run(&d, &o, r, 1, &err), 1);
    ck_assert_msg(strstr(r[0].failure, "not a valid template"), "%s", r[0].failure);
    static const ph_rule_example bad[] = {{"add_tree", "x: float[2]\ny = Add(x, z)\nreturn y", NULL}, {0}};
    d.rule_examples = bad;
    ck_assert_int_eq(ph_rulecheck_run(&d, &o, r, 1, &err), 1);
    ck_assert_msg(strstr(r[0].failure, "does not build"), "%s", r[0].failure);
    ph_test_pass_free(tp);
}
END_TEST

START_TEST(t_cli)
{
    tk_cli_result r = TK_CLI("--check-rules", "fuse_conv_bn", "--instances", "6", "--seed", "2");
    ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
    ck_assert_msg(strstr(r.out, "conv_bn") && strstr(r.out, "fuse_conv_bn: rules 1, rules covered 1, rules failing 0"),
                  "%s", r.out);
    tk_cli_free(&r);
    r = TK_CLI("--check-rules", WRONG_SO, "--instances", "8");
    ck_assert_msg(r.status == 7, "%s%s", r.out, r.err);
    ck_assert_msg(strstr(r.out, "FAIL tp_wrong_rules/scale_off: "), "%s", r.out);
    tk_cli_free(&r);
    r = TK_CLI("--check-rules", "fuse_conv_bn", "--instances", "zero");
    tk_expect_failure(&r, 1, "--instances takes a number", NULL);
    r = TK_CLI("--check-rules", PH_BUILD_DIR "/plugins/constant_folding.so");
    tk_expect_failure(&r, 4, "has no rules", NULL);
    r = TK_CLI("--check-rules", "/nonexistent/x.so");
    ck_assert_int_eq(r.status, 4);
    tk_cli_free(&r);
}
END_TEST

START_TEST(t_not_a_pattern_pass)
{
    ph_pass_desc d = {0};
    ph_error err = {0};
    ck_assert_int_eq(ph_rulecheck_run(&d, NULL, NULL, 0, &err), PH_EINVAL);
    ck_assert_msg(strstr(err.message, "not a pattern pass"), "%s", err.message);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rulecheck");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_wrong_rule_found);
    tcase_add_test(tc, t_same_seed_same_instances);
    tcase_add_test(tc, t_conv1d_to_conv2d_is_fp);
    tcase_add_test(tc, t_values_inside_a_tolerance);
    tcase_add_test(tc, t_examples);
    tcase_add_test(tc, t_cli);
    tcase_add_test(tc, t_not_a_pattern_pass);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
