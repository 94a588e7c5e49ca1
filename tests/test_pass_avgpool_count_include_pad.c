/* tests/test_pass_avgpool_count_include_pad.c - avgpool_count_include_pad:
 * an AveragePool with no padding gets the count_include_pad the target
 * computes (the parameter; 1 by default). */
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("avgpool_count_include_pad")

#define RELU_INPUT "x: float[1,2,8,8]; r = Relu(x)\n"

START_TEST(unpadded_pool_set)
{
    PC_CASE(RELU_INPUT "y = AveragePool(r) {kernel_shape=[3,3], pads=[0,0,0,0]}\nreturn y",
            1, "r = Relu(x); y = AveragePool(r) {count_include_pad=1}");
}
END_TEST

/* the other way round, from the parameter (the profile's value) */
START_TEST(unpadded_pool_cleared_by_the_parameter)
{
    ph_test_options o = {.max_iterations = 4, .seed = 2,
                         .params = (const char *const[]){"count_include_pad=false", NULL}};
    PC_CASE_OPTS(&o, RELU_INPUT "y = AveragePool(r) {kernel_shape=[3,3], count_include_pad=1}\nreturn y",
                 1, "r = Relu(x); y = AveragePool(r) {count_include_pad=0}");
}
END_TEST

/* the border averages would change */
START_TEST(padded_left_alone)
{
    PC_UNTOUCHED(RELU_INPUT "y = AveragePool(r) {kernel_shape=[3,3], pads=[1,1,1,1], count_include_pad=0}\nreturn y");
}
END_TEST

START_TEST(ceil_mode_left_alone)
{
    PC_UNTOUCHED(RELU_INPUT "y = AveragePool(r) {kernel_shape=[3,3], count_include_pad=0, ceil_mode=1}\nreturn y");
}
END_TEST

START_TEST(auto_pad_left_alone)
{
    PC_UNTOUCHED(RELU_INPUT "y = AveragePool(r) {kernel_shape=[3,3], count_include_pad=0, auto_pad=\"SAME_UPPER\"}\n"
                            "return y");
}
END_TEST

/* already what the target computes */
START_TEST(already_set_left_alone)
{
    PC_UNTOUCHED(RELU_INPUT "y = AveragePool(r) {kernel_shape=[3,3], count_include_pad=1}\nreturn y");
}
END_TEST

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_if_branches)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,2,8,8]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_input(ph_model_graph(m), 0);
    ph_graph *body[2] = {then_g, else_g};
    for (int i = 0; i < 2; i++) {
        ph_node *p = tk_node(body[i], "AveragePool", 1, &x);
        ck_assert_int_eq(ph_node_set_attr_ints(p, "kernel_shape", 2, TK_I64(2, 2)), 0);
        tk_output(body[i], ph_node_output(p, 0));
    }
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = AveragePool(x) {count_include_pad=1, kernel_shape=[2,2]}");
    PC_GRAPH_IS(else_g, "y = AveragePool(x) {count_include_pad=1, kernel_shape=[2,2]}");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_avgpool_count_include_pad");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, unpadded_pool_set);
    tcase_add_test(tc, unpadded_pool_cleared_by_the_parameter);
    tcase_add_test(tc, padded_left_alone);
    tcase_add_test(tc, ceil_mode_left_alone);
    tcase_add_test(tc, auto_pad_left_alone);
    tcase_add_test(tc, already_set_left_alone);
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
