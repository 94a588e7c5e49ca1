/* tests/test_pass_eliminate_dropout.c - the eliminate_dropout pass: an
 * inference Dropout (no training, mask unused) goes, its readers take its
 * input. */
#include <stdio.h>
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("eliminate_dropout")

START_TEST(removes_inference_dropout)
{
    PC_CASE("x: float[3,4]\nr = Relu(x); d = Dropout(r); y = Neg(d)\nreturn y", 1, "r = Relu(x); y = Neg(r)");
}
END_TEST

/* ratio and training_mode = false as inputs, an unused mask: all go. */
START_TEST(training_mode_false_and_unused_mask_removed)
{
    const char *graph = "x: float[3,4]; ratio: const float[]; mode: bool[] = [0]\n"
                        "r = Relu(x); d, mask = Dropout(r, ratio, mode); y = Neg(d)\nreturn y";
    PC_CASE(graph, 1, "r = Relu(x); y = Neg(r)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 0);
    ph_model_free(m);
}
END_TEST

/* Several readers and a graph output in the middle: all follow the input,
 * which takes over the output's name. */
START_TEST(fan_out_and_graph_output_redirected)
{
    const char *graph = "x: float[3,4]\nr = Relu(x); d = Dropout(r); n = Neg(d); a = Abs(d)\nreturn d, n, a";
    PC_CASE(graph, 1, "r = Relu(x)\n--\nn = Neg(r)\n--\na = Abs(r)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));
    ph_value *r = ph_node_output(ph_graph_first_node(g), 0);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_ptr_eq(ph_graph_output(g, 0), r);
    ph_model_free(m);
}
END_TEST

/* A graph input feeding a node: the reader takes the input. */
START_TEST(graph_input_feeding_a_node_removed)
{
    PC_CASE("x: float[5]\nd = Dropout(x); y = Neg(d)\nreturn y", 1, "y = Neg(x)");
}
END_TEST

/* opset 10: ratio attribute, no training switch. */
START_TEST(opset10_removed)
{
    PC_CASE("opset 10\nx: float[2,2]\nr = Relu(x); d = Dropout(r) {ratio=0.3}; y = Neg(d)\nreturn y", 1,
            "r = Relu(x); y = Neg(r)");
}
END_TEST

/* opset 6: only is_test = 1 is inference. */
START_TEST(opset6_is_test)
{
    PC_CASE("opset 6\nx: float[2,2]\nr = Relu(x); d = Dropout(r) {is_test=1}; y = Neg(d)\nreturn y",
            1, "r = Relu(x); y = Neg(r)");
    PC_UNTOUCHED("opset 6\nx: float[2,2]\nr = Relu(x); d = Dropout(r) {is_test=0}; y = Neg(d)\nreturn y");
    PC_UNTOUCHED("opset 6\nx: float[2,2]\nr = Relu(x); d = Dropout(r); y = Neg(d)\nreturn y");
}
END_TEST

/* ---- negative cases (training: random, so unchecked) */

START_TEST(training_mode_true_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[3,4]; ratio: const float[]; mode: bool[] = [1]\n"
                           "r = Relu(x); d = Dropout(r, ratio, mode); y = Neg(d)\nreturn y");
}
END_TEST

START_TEST(runtime_training_mode_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[3,4]; mode: bool[]\nr = Relu(x); d = Dropout(r, _, mode); y = Neg(d)\nreturn y");
}
END_TEST

START_TEST(used_mask_kept)
{
    PC_UNTOUCHED("x: float[3,4]\nr = Relu(x); d, mask = Dropout(r); y = Neg(d); n = Not(mask)\nreturn y, n");
}
END_TEST

START_TEST(mask_graph_output_kept)
{
    PC_UNTOUCHED("x: float[3,4]\nr = Relu(x); d, mask = Dropout(r); y = Neg(d)\nreturn y, mask");
}
END_TEST

START_TEST(graph_input_to_graph_output_kept)
{
    PC_UNTOUCHED("x: float[3,4]\ny = Dropout(x)\nreturn y");
}
END_TEST

START_TEST(other_domain_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[3,4]\nr = Relu(x); d = Dropout@com.example(r); y = Neg(d)\nreturn y");
}
END_TEST

/* The text has no subgraphs: the If bodies are built with the IR calls.
 * then: Neg(Dropout(x)) reads the outer x; else: Dropout(Abs(x)) is the
 * branch output, which Abs's output takes over. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[3,4]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_input(ph_model_graph(m), 0);
    tk_output(then_g, tk_op1(then_g, "Neg", tk_op1(then_g, "Dropout", x)));
    tk_output(else_g, tk_op1(else_g, "Dropout", tk_op1(else_g, "Abs", x)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Neg(x)");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(then_g), 0), x);
    PC_GRAPH_IS(else_g, "y = Abs(x)");
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(else_g, 0)), ph_graph_first_node(else_g));
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_dropout");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, removes_inference_dropout);
    tcase_add_test(tc, training_mode_false_and_unused_mask_removed);
    tcase_add_test(tc, fan_out_and_graph_output_redirected);
    tcase_add_test(tc, graph_input_feeding_a_node_removed);
    tcase_add_test(tc, opset10_removed);
    tcase_add_test(tc, opset6_is_test);
    tcase_add_test(tc, training_mode_true_kept);
    tcase_add_test(tc, runtime_training_mode_kept);
    tcase_add_test(tc, used_mask_kept);
    tcase_add_test(tc, mask_graph_output_kept);
    tcase_add_test(tc, graph_input_to_graph_output_kept);
    tcase_add_test(tc, other_domain_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
