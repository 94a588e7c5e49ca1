/* tests/test_pass_eliminate_single_input_concat.c - the
 * eliminate_single_input_concat pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("eliminate_single_input_concat")

START_TEST(single_input_removed)
{
    char graph[128];
    for (int axis = -2; axis <= 1; axis++) {
        snprintf(graph, sizeof graph, "x: float[3,4]\nr = Relu(x); c = Concat(r) {axis=%d}; y = Neg(c)\nreturn y",
                 axis);
        PC_CASE(graph, 1, "r = Relu(x)\ny = Neg(r)");
    }
}
END_TEST

/* An int64 input read directly from the graph input, with a symbolic dim. */
START_TEST(graph_input_feeding_a_node_removed)
{
    PC_CASE("x: int64[batch,3]\nc = Concat(x) {axis=0}; y = Neg(c)\nreturn y", 1, "y = Neg(x)");
}
END_TEST

START_TEST(graph_output_takes_the_name)
{
    const char *graph = "x: float[3,4]\nr = Relu(x); y = Concat(r) {axis=1}; n = Neg(y)\nreturn y, n";
    PC_CASE(graph, 1, "r = Relu(x)\n--\nn = Neg(r)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_int_eq(ph_node_op(ph_value_producer(ph_graph_output(g, 0))), PH_OP_Relu);
    free(name);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(two_inputs_kept)
{
    PC_UNTOUCHED("x: float[3,4]; c: const float[1,4]\nr = Relu(x)\n"
                 "a = Concat(r, r) {axis=0}; p = Neg(a); b = Concat(r, c) {axis=0}; q = Neg(b)\nreturn p, q");
}
END_TEST

START_TEST(graph_input_to_graph_output_kept)
{
    PC_UNTOUCHED("x: float[3,4]\ny = Concat(x) {axis=0}\nreturn y");
}
END_TEST

/* The input is itself a graph output: both names must stay. */
START_TEST(graph_output_to_graph_output_kept)
{
    PC_UNTOUCHED("x: float[3,4]\nr = Relu(x); y = Concat(r) {axis=0}\nreturn r, y");
}
END_TEST

/* then: a branch output from a Concat of the outer x stays (the branch
 * output cannot take the outer value's name); else: Concat(Abs(x)) goes.
 * The text has no subgraphs: the If is built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[3,4]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_find_value(g, "x");
    ph_node *c = tk_node(then_g, "Concat", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_int(c, "axis", 0), 0);
    tk_output(then_g, ph_node_output(c, 0));
    ph_value *a = tk_op1(else_g, "Abs", x);
    c = tk_node(else_g, "Concat", 1, &a);
    ck_assert_int_eq(ph_node_set_attr_int(c, "axis", 0), 0);
    tk_output(else_g, ph_node_output(c, 0));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Concat(x)");
    PC_GRAPH_IS(else_g, "y = Abs(x)");
    ck_assert_ptr_eq(ph_graph_output(else_g, 0), a);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_single_input_concat");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, single_input_removed);
    tcase_add_test(tc, graph_input_feeding_a_node_removed);
    tcase_add_test(tc, graph_output_takes_the_name);
    tcase_add_test(tc, two_inputs_kept);
    tcase_add_test(tc, graph_input_to_graph_output_kept);
    tcase_add_test(tc, graph_output_to_graph_output_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
