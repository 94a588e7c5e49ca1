/* tests/test_pass_eliminate_nop_split.c - eliminate_nop_split: a Split
 * into one part, the whole input, goes. */
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("eliminate_nop_split")

START_TEST(one_part_removed)
{
    PC_CASE("x: float[3,4]; r = Relu(x); q = Split(r) {axis=1}; y = Neg(q); return y", 1, "r = Relu(x)\ny = Neg(r)");
}
END_TEST

/* opset 13+: split sizes as an input equal to the dim (negative axis too);
 * the sizes initializers are pruned. */
START_TEST(split_input_of_the_whole_dim_removed)
{
    const char *graph = "x: float[2,3,4]; s4: int64[1] = [4]; s2: int64[1] = [2]\n"
                        "r = Relu(x); a = Split(r, s4) {axis=-1}; b = Split(a, s2) {axis=0}; y = Neg(b)\nreturn y";
    PC_CASE(graph, 2, "r = Relu(x)\ny = Neg(r)");
    PC_INITIALIZERS_AFTER(graph, 2, 0);
}
END_TEST

/* opset 11: split sizes as an attribute; 4 of 4 goes */
START_TEST(opset11_split_attribute)
{
    PC_CASE("opset 11; x: float[3,4]; q = Split(x) {axis=1, split=[4]}; y = Neg(q); return y", 1, "y = Neg(x)");
}
END_TEST

/* 3 of 4: an invalid model (inference refuses it), left alone */
START_TEST(opset11_split_attribute_not_the_dim_kept)
{
    PC_CASE_OPTS(&pc_no_shapes, "opset 11; x: float[3,4]; q = Split(x) {axis=1, split=[3]}; y = Neg(q); return y", 0, NULL);
}
END_TEST

/* opset 18: num_outputs = 1 (structure only, as before). */
START_TEST(opset18_num_outputs_one_removed)
{
    PC_CASE_OPTS(&pc_unchecked, "opset 18; x: float[3,4]; r = Relu(x); q = Split(r) {axis=0, num_outputs=1}; y = Neg(q)\n"
                                "return y",
                 1, "r = Relu(x)\ny = Neg(r)");
}
END_TEST

START_TEST(graph_output_takes_the_name)
{
    const char *graph = "x: float[3,4]; r = Relu(x); y = Split(r) {axis=0}; return y";
    PC_CASE(graph, 1, "y = Relu(x)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

START_TEST(graph_input_feeding_a_node_removed)
{
    PC_CASE("x: int64[5]; q = Split(x) {axis=0}; y = Neg(q); return y", 1, "y = Neg(x)");
}
END_TEST

/* ---- negative cases */

/* Two outputs, only the first read: it is half the input (or all of it,
 * with sizes [4, 0], but the second output still exists). */
START_TEST(two_outputs_kept)
{
    PC_UNTOUCHED("x: float[4,4]; s: int64[2] = [4, 0]; r = Relu(x)\n"
                 "a, b = Split(r) {axis=0}; y1 = Neg(a)\nc, d = Split(r, s) {axis=0}; y2 = Neg(c)\nreturn y1, y2");
}
END_TEST

/* An invalid model, which inference refuses: the pass sees the declared
 * shape of the graph input (the size is not the dim). */
START_TEST(size_not_the_dim_kept)
{
    PC_CASE_OPTS(&pc_no_shapes, "x: float[3,4]; s: int64[1] = [3]; q = Split(x, s) {axis=1}; y = Neg(q); return y", 0, NULL);
}
END_TEST

START_TEST(unknown_dim_with_sizes_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[batch,4]; s: int64[1] = [2]; r = Relu(x); q = Split(r, s) {axis=0}; y = Neg(q)\n"
                           "return y");
}
END_TEST

START_TEST(runtime_sizes_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[3,4]; s: int64[1]; r = Relu(x); q = Split(r, s) {axis=0}; y = Neg(q); return y");
}
END_TEST

START_TEST(graph_input_to_graph_output_kept)
{
    PC_UNTOUCHED("x: float[3,4]; y = Split(x) {axis=0}; return y");
}
END_TEST

/* Split(x) {axis} with one output in body g. */
static ph_value *split1(ph_graph *g, ph_value *x, int64_t axis)
{
    ph_value *q = tk_op1(g, "Split", x);
    ck_assert_int_eq(ph_node_set_attr_int(ph_value_producer(q), "axis", axis), 0);
    return q;
}

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[3,4]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(then_g, tk_op1(then_g, "Neg", split1(then_g, x, 0)));
    tk_output(else_g, tk_op1(else_g, "Abs", split1(else_g, x, 1)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Neg(x)");
    PC_GRAPH_IS(else_g, "y = Abs(x)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_split");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, one_part_removed);
    tcase_add_test(tc, split_input_of_the_whole_dim_removed);
    tcase_add_test(tc, opset11_split_attribute);
    tcase_add_test(tc, opset11_split_attribute_not_the_dim_kept);
    tcase_add_test(tc, opset18_num_outputs_one_removed);
    tcase_add_test(tc, graph_output_takes_the_name);
    tcase_add_test(tc, graph_input_feeding_a_node_removed);
    tcase_add_test(tc, two_outputs_kept);
    tcase_add_test(tc, size_not_the_dim_kept);
    tcase_add_test(tc, unknown_dim_with_sizes_kept);
    tcase_add_test(tc, runtime_sizes_kept);
    tcase_add_test(tc, graph_input_to_graph_output_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
