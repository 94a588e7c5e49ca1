/* tests/test_rule_regressions.c - what the rule checker (rulecheck.h,
 * `make test-rules`) found in the passes, kept fixed; and the rules whose
 * conditions lie outside their pattern, which the checker exercises through
 * their example graphs (ph_pass_desc.rule_examples), keep rewriting. */
#include <stdlib.h>
#include <string.h>

#include <passhost/rulecheck.h>

#include "passcase.h"

/* resize_1x1_to_nearest was declared exact; the checker found a double
 * cubic Resize of an axis of one element whose weighted sum is one ulp off
 * the element nearest returns: the pass is fp.  The same case judged bit
 * for bit fails, so this is the case that shows it. */
START_TEST(resize_1x1_cubic_double_is_not_bit_exact)
{
    pc_load("resize_1x1_to_nearest");
    const char *graph = "x: double[1,2,1,4]; sz: int64[4] = [1, 2, 4, 4]\n"
                        "y = Resize(x, _, _, sz) {mode=\"cubic\", coordinate_transformation_mode=\"half_pixel\"}\n"
                        "return y";
    const char *expect = "y = Resize(x, rest*) {mode=\"nearest\"}";
    ck_assert_int_eq(pass->exactness, PH_FP);
    PC_CASE(graph, 1, expect);
    ph_pass_desc exact = *pass;
    exact.exactness = PH_EXACT;
    ph_error err = {0};
    ph_test_options o = {.max_iterations = 4};
    int caught = 0;
    for (uint64_t s = 1; s <= 8 && !caught; s++) { /* a few input draws: one is off by an ulp */
        o.seed = s;
        caught = ph_test_case(&exact, graph, &o, 1, expect, &err) != 0;
    }
    ck_assert_msg(caught, "judged bit for bit, the rewrite always passed: the regression test cannot fail");
    pc_unload();
}
END_TEST

/* split_to_slices failed ("invalid argument") on a Split whose later
 * outputs nobody reads: found by the rule checker (an example with only
 * y0 returned). */
START_TEST(split_to_slices_unread_outputs)
{
    pc_load("split_to_slices");
    static const char *const params[] = {"axes=0", NULL};
    ph_test_options o = {.max_iterations = 4, .params = params};
    PC_CASE_OPTS(&o,
                 "x: float[6,3,6]; s: int64[3] = [1, 2, 3]\n"
                 "y0, y1, y2 = Split(x, s) {axis=2}\nreturn y0",
                 1, "y0 = Slice(x, _, _, _)");
    PC_CASE_OPTS(&o,
                 "x: float[6,3,6]; s: int64[3] = [1, 2, 3]\n"
                 "y0, y1, y2 = Split(x, s) {axis=2}\nreturn y0, y2",
                 1, "y0 = Slice(x, _, _, _)\n--\ny2 = Slice(x, _, _, _)");
    pc_unload();
}
END_TEST

/* channel_shuffle_to_conv was declared exact; the checker found an input
 * of -0.0 that the 1x1 Conv returns as +0.0 (-0 * 1 + 0 * x ...): fp. */
START_TEST(channel_shuffle_negative_zero)
{
    pc_load("channel_shuffle_to_conv");
    const char *graph = "x: float[1,4,1,2]; s1: int64[5] = [1, 2, 2, 1, 2]; s2: int64[4] = [1, 4, 1, 2]\n"
                        "r = Reshape(x, s1); t = Transpose(r) {perm=[0,2,1,3,4]}; y = Reshape(t, s2)\nreturn y";
    const char *expect = "y = Conv(x, _:const)";
    static const float v[8] = {-0.0f, 1.5f, 0.25f, -0.0f, 2.0f, -1.0f, -0.0f, 0.5f};
    ph_tensor *in = ph_tensor_new(PH_DT_FLOAT, 4, (const int64_t[]){1, 4, 1, 2}, v);
    const ph_tensor *inputs[1] = {in};
    ck_assert_int_eq(pass->exactness, PH_FP);
    ph_test_options o = {.max_iterations = 4, .inputs = inputs};
    PC_CASE_OPTS(&o, graph, 1, expect);
    ph_pass_desc exact = *pass;
    exact.exactness = PH_EXACT;
    ph_error err = {0};
    ck_assert_msg(ph_test_case(&exact, graph, &o, 1, expect, &err) != 0,
                  "judged bit for bit, -0.0 came through: the regression test cannot fail");
    ph_tensor_free(in);
    pc_unload();
}
END_TEST

/* The checker's own finding on conv_to_matmul: a double instance (15x15
 * kernel as a MatMul, 675 terms summed in another order) was judged against
 * 4 ulp, below the rounding of any reordered sum (the float64 reference of
 * a double model is no more precise than it).  The seed that showed it
 * passes now. */
START_TEST(conv_to_matmul_double_budget)
{
    pc_load("conv_to_matmul");
    ph_rulecheck_options o = {.size = sizeof o, .seed = 1, .instances = 60};
    ph_rulecheck_rule r[1];
    ph_error err = {0};
    ck_assert_int_eq(ph_rulecheck_run(pass, &o, r, 1, &err), 1);
    ck_assert_msg(r[0].failures == 0, "%s", r[0].failure);
    ck_assert_int_gt(r[0].rewritten, 0);
    pc_unload();
}
END_TEST

/* Each rule whose condition the generator met only by chance (none
 * rewritten before the examples) rewrites a share of its instances, and
 * every instance passes. */
static const char *const example_passes[] = {
    "add_tree_to_chain",  "conv_to_matmul",           "dynamic_reshape_to_static",
    "resize_1x1_to_nearest", "split_group_conv",      "split_qkv_matmul",
    "stack_unstack_to_reshape", "push_transpose_through_elementwise", "transpose_large_input_conv",
};

START_TEST(examples_rewrite)
{
    const char *name = example_passes[_i];
    pc_load(name);
    ck_assert_msg(pass->rule_examples != NULL, "%s has no example graphs", name);
    ph_rulecheck_options o = {.size = sizeof o, .seed = 3, .instances = 16};
    ph_rulecheck_rule r[8];
    ph_error err = {0};
    int n = ph_rulecheck_run(pass, &o, r, 8, &err);
    ck_assert_int_gt(n, 0);
    for (int i = 0; i < n && i < 8; i++) {
        ck_assert_msg(r[i].failures == 0, "%s/%s: %s", name, r[i].name, r[i].failure);
        int has_example = 0;
        for (const ph_rule_example *e = pass->rule_examples; e->rule; e++)
            has_example |= !strcmp(e->rule, r[i].name);
        if (has_example)
            ck_assert_msg(r[i].rewritten > 0, "%s/%s rewrote none of %d instances", name, r[i].name, r[i].tried);
    }
    pc_unload();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rule_regressions");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, resize_1x1_cubic_double_is_not_bit_exact);
    tcase_add_test(tc, conv_to_matmul_double_budget);
    tcase_add_test(tc, split_to_slices_unread_outputs);
    tcase_add_test(tc, channel_shuffle_negative_zero);
    tcase_add_loop_test(tc, examples_rewrite, 0, (int)(sizeof example_passes / sizeof *example_passes));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
