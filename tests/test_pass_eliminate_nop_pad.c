/* tests/test_pass_eliminate_nop_pad.c - eliminate_nop_pad: a Pad of zero
 * pads on every side goes, whatever its mode. */
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("eliminate_nop_pad")

static const struct {
    const char *graph;
} zero_pads[] = {
    {"x: float[3,4]; p: int64[4] = [0]; r = Relu(x); q = Pad(r, p); y = Neg(q); return y"},
    {"x: float[3,4]; p: int64[4] = [0]; r = Relu(x); q = Pad(r, p) {mode=\"constant\"}; y = Neg(q); return y"},
    {"x: float[3,4]; p: int64[4] = [0]; r = Relu(x); q = Pad(r, p) {mode=\"reflect\"}; y = Neg(q); return y"},
    {"x: float[3,4]; p: int64[4] = [0]; r = Relu(x); q = Pad(r, p) {mode=\"edge\"}; y = Neg(q); return y"},
};

/* the pads constant is pruned */
START_TEST(zero_pads_removed_in_every_mode)
{
    PC_CASE(zero_pads[_i].graph, 1, "r = Relu(x)\ny = Neg(r)");
    PC_INITIALIZERS_AFTER(zero_pads[_i].graph, 1, 0);
}
END_TEST

/* A constant value and an int64 input read straight from the graph input. */
START_TEST(with_value_from_graph_input_removed)
{
    const char *graph = "x: int64[2,3]; p: int64[4] = [0]; v: int64[] = [7]; q = Pad(x, p, v); y = Neg(q); return y";
    PC_CASE(graph, 1, "y = Neg(x)");
    PC_INITIALIZERS_AFTER(graph, 1, 0);
}
END_TEST

/* pads from a Constant node, which goes too. */
START_TEST(constant_node_pads_removed)
{
    PC_CASE("x: float[3,4]; r = Relu(x); p = Constant() {value_ints=[0,0,0,0]}; q = Pad(r, p); y = Neg(q); return y",
            1, "r = Relu(x)\ny = Neg(r)");
}
END_TEST

/* opset 10 (pads attribute) and opset 1 (paddings attribute): zeros go,
 * anything else stays (the evaluator has neither form) */
static const struct {
    const char *graph;
    int rewrites;
} attribute_pads[] = {
    {"opset 10; x: float[3,4]; r = Relu(x); q = Pad(r) {pads=[0,0,0,0]}; y = Neg(q); return y", 1},
    {"opset 10; x: float[3,4]; r = Relu(x); q = Pad(r) {pads=[0,1,0,0]}; y = Neg(q); return y", 0},
    {"opset 1; x: float[3,4]; r = Relu(x); q = Pad(r) {paddings=[0,0,0,0]}; y = Neg(q); return y", 1},
    {"opset 1; x: float[3,4]; r = Relu(x); q = Pad(r) {paddings=[0,1,0,0]}; y = Neg(q); return y", 0},
};

START_TEST(attribute_pads_before_opset_11)
{
    PC_CASE_OPTS(&pc_unchecked, attribute_pads[_i].graph, attribute_pads[_i].rewrites,
                 attribute_pads[_i].rewrites ? "r = Relu(x)\ny = Neg(r)" : NULL);
}
END_TEST

/* opset 18: zero pads on the given axes. */
START_TEST(opset18_axes_removed)
{
    const char *graph = "opset 18; x: float[2,3,4]; p: int64[2] = [0]; ax: int64[1] = [-1]\n"
                        "r = Relu(x); q = Pad(r, p, _, ax); y = Neg(q)\nreturn y";
    PC_CASE_OPTS(&pc_unchecked, graph, 1, "r = Relu(x)\ny = Neg(r)");
    PC_INITIALIZERS_AFTER(graph, 1, 0);
}
END_TEST

START_TEST(graph_output_takes_the_name)
{
    const char *graph = "x: float[3,4]; p: int64[4] = [0]; r = Relu(x); y = Pad(r, p); return y";
    PC_CASE(graph, 1, "y = Relu(x)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* ---- negative cases */

/* Without shape inference: it refuses a negative pad on a known dim (3 - 1
 * is taken as unknown, then as negative: infer_pad in infer_shape.c). */
START_TEST(nonzero_pads_kept)
{
    static const ph_test_options no_shapes = {.max_iterations = 4, .no_shapes = 1};
    PC_CASE_OPTS(&no_shapes, "x: float[3,4]; p1: int64[4] = [0, 0, 0, 1]; p2: int64[4] = [-1, 0, 0, 0]; p3: int64[4] = [1, 0, -1, 0]\n"
                 "r = Relu(x); a = Pad(r, p1); y1 = Neg(a); b = Pad(r, p2); y2 = Neg(b)\n"
                 "c = Pad(r, p3) {mode=\"edge\"}; y3 = Neg(c)\nreturn y1, y2, y3",
                 0, NULL);
}
END_TEST

START_TEST(runtime_pads_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[3,4]; p: int64[4]; r = Relu(x); q = Pad(r, p); y = Neg(q); return y");
}
END_TEST

/* Opset 10 with a pads input besides the zero pads attribute: not a Pad
 * this pass understands. */
START_TEST(malformed_pads_kept)
{
    PC_UNTOUCHED_UNCHECKED("opset 10; x: float[3,4]; p: int64[4] = [0, 1, 0, 0]\n"
                           "r = Relu(x); q = Pad(r, p) {pads=[0,0,0,0]}; y = Neg(q)\nreturn y");
}
END_TEST

/* Opset 10 without the pads attribute: the verifier refuses the model (the
 * loader never hands it to a pass), and the pass, called all the same,
 * changes nothing. */
START_TEST(missing_pads_attribute_kept)
{
    pc_invalid_untouched("opset 10; x: float[3,4]; r = Relu(x); q = Pad(r); y = Neg(q); return y",
                         "required attribute 'pads' (INTS) is missing", "r = Relu(x)\nq = Pad(r)\ny = Neg(q)");
}
END_TEST

START_TEST(graph_input_to_graph_output_kept)
{
    PC_UNTOUCHED("x: float[3,4]; p: int64[4] = [0]; y = Pad(x, p); return y");
}
END_TEST

/* The text has no subgraphs: the If bodies are built with the IR calls.
 * then: pads from an initializer of the branch; else: of the main graph;
 * both are pruned. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[3,4]; cond: bool[]; p: int64[4] = [0]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_find_value(g, "x");
    ph_value *inner = tk_ints(then_g, "inner_pads", 4, TK_I64(0, 0, 0, 0));
    tk_output(then_g, tk_op1(then_g, "Neg", tk_op2(then_g, "Pad", x, inner)));
    ph_value *q = tk_op2(else_g, "Pad", x, ph_graph_find_value(g, "p"));
    ck_assert_int_eq(ph_node_set_attr_string(ph_value_producer(q), "mode", "reflect"), 0);
    tk_output(else_g, tk_op1(else_g, "Neg", q));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Neg(x)");
    PC_GRAPH_IS(else_g, "y = Neg(x)");
    ck_assert_uint_eq(ph_graph_initializer_count(then_g), 0);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_pad");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, zero_pads_removed_in_every_mode, 0, (int)(sizeof zero_pads / sizeof *zero_pads));
    tcase_add_test(tc, with_value_from_graph_input_removed);
    tcase_add_test(tc, constant_node_pads_removed);
    tcase_add_loop_test(tc, attribute_pads_before_opset_11, 0, (int)(sizeof attribute_pads / sizeof *attribute_pads));
    tcase_add_test(tc, opset18_axes_removed);
    tcase_add_test(tc, graph_output_takes_the_name);
    tcase_add_test(tc, nonzero_pads_kept);
    tcase_add_test(tc, runtime_pads_kept);
    tcase_add_test(tc, malformed_pads_kept);
    tcase_add_test(tc, missing_pads_attribute_kept);
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
