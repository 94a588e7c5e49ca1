/* tests/test_pass_squeeze_to_reshape.c - squeeze_to_reshape: Squeeze and
 * Unsqueeze with a static output shape become Reshape. */
#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("squeeze_to_reshape")

/* The result's shapes are read from the Reshapes' constant operands by
 * shape inference, which the harness runs after the pass. */
static const char *const reshaped =
    "a = Reshape(x, _:const)\nb = Reshape(a, _:const)\nn = Neg(b:shape=[3,4,1])\n--\n"
    "r = Relu(x)\nc = Reshape(r:shape=[1,3,1,4], s:const:shape=[2])";

/* opset 13 on: axes are an input; the axes initializers go with the nodes;
 * the graph output keeps its name */
START_TEST(squeeze_and_unsqueeze_become_reshape)
{
    PC_CASE("x: float[1,3,1,4]; ax: int64[2] = [0, -2]; ay: int64[1] = [-1]\n"
            "a = Squeeze(x, ax); b = Unsqueeze(a, ay); n = Neg(b)\n"
            "r = Relu(x); c = Squeeze(r)     # all dims of 1\n"
            "return n, c",
            3, reshaped);
}
END_TEST

/* before opset 13: axes are an attribute */
START_TEST(squeeze_and_unsqueeze_of_opset_11)
{
    PC_CASE("opset 11\nx: float[1,3,1,4]\n"
            "a = Squeeze(x) {axes=[0, -2]}; b = Unsqueeze(a) {axes=[-1]}; n = Neg(b)\n"
            "r = Relu(x); c = Squeeze(r)\n"
            "return n, c",
            3, reshaped);
}
END_TEST

START_TEST(to_a_scalar)
{
    PC_CASE("x: float[1]; ax: int64[1] = [0]\ns = Squeeze(x, ax); y = Neg(s)\nreturn y",
            1, "s = Reshape(x, _:const:shape=[0])\ny = Neg(s:rank=0)");
}
END_TEST

START_TEST(symbolic_dim_left_alone)
{
    PC_UNTOUCHED("x: float[batch,1,4]; ax: int64[1] = [1]\ns = Squeeze(x, ax); y = Neg(s)\nreturn y");
}
END_TEST

START_TEST(unknown_rank_left_alone)
{
    PC_UNTOUCHED_UNCHECKED("x: float[*]; ax: int64[1] = [1]\ns = Squeeze(x, ax); y = Neg(s)\nreturn y");
}
END_TEST

START_TEST(dim_0_left_alone)
{
    PC_UNTOUCHED("x: float[0,1,4]; ax: int64[1] = [1]\ns = Squeeze(x, ax); y = Neg(s)\nreturn y");
}
END_TEST

/* axes not constant: the output shape is unknown */
START_TEST(axes_not_constant_left_alone)
{
    PC_UNTOUCHED_UNCHECKED("x: float[2,1,4]; ax: int64[1]\ns = Squeeze(x, ax); y = Neg(s)\nreturn y");
}
END_TEST

/* opset 4: Reshape has no shape input */
START_TEST(opset_4_left_alone)
{
    PC_UNTOUCHED_UNCHECKED("opset 4\nx: float[2,1,4]\ns = Squeeze(x) {axes=[1]}; y = Neg(s)\nreturn y");
}
END_TEST

/* The text has no subgraphs: the If is built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,6]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_find_value(g, "x");
    ph_value *in_t[2] = {x, tk_ints(then_g, "axes", 1, TK_I64(0))};
    tk_output(then_g, ph_node_output(tk_node(then_g, "Squeeze", 2, in_t), 0));
    ph_value *in_e[2] = {x, tk_ints(else_g, "axes", 1, TK_I64(0))};
    tk_output(else_g, tk_op1(else_g, "Neg", ph_node_output(tk_node(else_g, "Squeeze", 2, in_e), 0)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Reshape(x, _:const)");
    PC_GRAPH_IS(else_g, "s = Reshape(x, _:const)\ny = Neg(s)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("squeeze_to_reshape");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, squeeze_and_unsqueeze_become_reshape);
    tcase_add_test(tc, squeeze_and_unsqueeze_of_opset_11);
    tcase_add_test(tc, to_a_scalar);
    tcase_add_test(tc, symbolic_dim_left_alone);
    tcase_add_test(tc, unknown_rank_left_alone);
    tcase_add_test(tc, dim_0_left_alone);
    tcase_add_test(tc, axes_not_constant_left_alone);
    tcase_add_test(tc, opset_4_left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
