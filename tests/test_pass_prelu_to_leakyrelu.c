/* tests/test_pass_prelu_to_leakyrelu.c - prelu_to_leakyrelu: PRelu with one
 * slope value becomes LeakyRelu. */
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("prelu_to_leakyrelu")

START_TEST(float_slopes_of_one_value)
{
    /* scalar, [1,1,1] and [1,1,1,1] slopes; the slopes are pruned, the last
     * output keeps its name */
    PC_CASE("x: float[1,3,4,4]\n"
            "a: float[] = [0.1]; b: float[1,1,1] = [-0.3]; c: float[1,1,1,1] = [2.5]\n"
            "p = PRelu(x, a); q = PRelu(x, b); y = PRelu(x, c)\n"
            "return p, q, y",
            3, "p = LeakyRelu(x) {alpha=0.1}\n--\nq = LeakyRelu(x) {alpha=-0.3}\n--\n"
               "y = LeakyRelu(x) {alpha=2.5}");
}
END_TEST

/* double when the slope is a float value (0.1 is none); float16 always */
START_TEST(double_and_float16)
{
    PC_CASE("x: float[4,6]\n"
            "s1: double[1] = [0.375]; s2: double[] = [0.1]; s3: float16[] = [0.1]\n"
            "d = Cast(x) {to=11}; h = Cast(x) {to=10}\n"
            "a = PRelu(d, s1); b = PRelu(d, s2); c = PRelu(h, s3); f = Cast(c) {to=1}\n"
            "return a, b, f",
            2, "d = Cast(x) {to=11}\n--\na = LeakyRelu(d) {alpha=0.375}\n--\nb = PRelu(d, s2)\n--\n"
               "h = Cast(x) {to=10}\nc = LeakyRelu(h)\nf = Cast(c) {to=1}");
}
END_TEST

START_TEST(slope_not_constant_left_alone)
{
    PC_UNTOUCHED("x: float[3,2,2]; s: float[]\ny = PRelu(x, s)\nreturn y");
}
END_TEST

START_TEST(slope_per_channel_left_alone)
{
    PC_UNTOUCHED("x: float[3,2,2]; s: const float[3,1,1]\ny = PRelu(x, s)\nreturn y");
}
END_TEST

/* a slope of higher rank would widen the output */
START_TEST(slope_of_higher_rank_left_alone)
{
    PC_UNTOUCHED_UNCHECKED("x: float[3,2,2]; s: float[1,1,1,1] = [0.5]\ny = PRelu(x, s)\nreturn y");
}
END_TEST

START_TEST(rank_unknown_left_alone)
{
    PC_UNTOUCHED_UNCHECKED("u: float[*]; s: float[1] = [0.5]\ny = PRelu(u, s)\nreturn y");
}
END_TEST

/* integer PRelu: no integer LeakyRelu */
START_TEST(integer_left_alone)
{
    PC_UNTOUCHED("x: float[3,2,2]; s: int32[] = [2]\nc = Cast(x) {to=6}\ny = PRelu(c, s)\nreturn y");
}
END_TEST

START_TEST(nan_slope_left_alone)
{
    PC_UNTOUCHED("x: float[3,2,2]; s: float[] = [nan]\ny = PRelu(x, s)\nreturn y");
}
END_TEST

/* The text has no subgraphs: the If is built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[2,3]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_find_value(g, "x");
    float v = 0.2f;
    ph_value *one = ph_graph_add_initializer(then_g, "slope", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &v));
    tk_output(then_g, tk_op2(then_g, "PRelu", x, one));
    tk_output(else_g, tk_op2(else_g, "PRelu", x, tk_init(else_g, "s", 1, TK_I64(3), 9)));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = LeakyRelu(x) {alpha=0.2}");
    PC_GRAPH_IS(else_g, "y = PRelu(x, s)"); /* three slopes stay */
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("prelu_to_leakyrelu");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, float_slopes_of_one_value);
    tcase_add_test(tc, double_and_float16);
    tcase_add_test(tc, slope_not_constant_left_alone);
    tcase_add_test(tc, slope_per_channel_left_alone);
    tcase_add_test(tc, slope_of_higher_rank_left_alone);
    tcase_add_test(tc, rank_unknown_left_alone);
    tcase_add_test(tc, integer_left_alone);
    tcase_add_test(tc, nan_slope_left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
