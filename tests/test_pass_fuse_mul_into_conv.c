/* tests/test_pass_fuse_mul_into_conv.c - fuse_mul_into_conv: a per-channel
 * constant multiplying (or dividing) a Conv's output scales its W and B. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("fuse_mul_into_conv")

/* The factors keep |k| in [0.6, 1.9]: a divisor near 0 would magnify the
 * Conv's rounding noise. */
#define K6 "[0.7, -1.3, 1.9, 0.85, -0.6, 1.1]"
#define CONV "x: float[1,4,5,5]; w: const float[6,4,3,3]; b: const float[6]\n"             \
             "c = Conv(x, w, b) {pads=[1,1,1,1], dilations=[1,1]}\n"

static const struct {
    const char *graph, *expect;
} folds[] = {
    {CONV "a: float[6,1,1] = " K6 "\nm = Mul(c, a); y = Relu(m)\nreturn y",
     "c = Conv(x, _:const, _:const) {group(1)=1}\ny = Relu(c)"},
    /* no bias stays no bias */
    {"x: float[1,4,5,5]; w: const float[6,4,3,3]; a: float[1,6,1,1] = " K6 "\n"
     "c = Conv(x, w) {pads=[1,1,1,1]}; m = Mul(c, a); y = Relu(m)\nreturn y",
     "c = Conv(x, _:const)\ny = Relu(c)"},
    {CONV "a: float[] = [0.7]\nm = Mul(c, a); y = Relu(m)\nreturn y",
     "c = Conv(x, _:const, _:const)\ny = Relu(c)"},
    {CONV "a: float[1] = [-1.3]\nm = Mul(c, a); y = Relu(m)\nreturn y",
     "c = Conv(x, _:const, _:const)\ny = Relu(c)"},
    /* grouped and dilated */
    {"x: float[1,4,5,5]; w: const float[6,2,3,3]; b: const float[6]; a: float[6,1,1] = " K6 "\n"
     "c = Conv(x, w, b) {group=2, pads=[2,2,2,2], dilations=[2,2]}; m = Mul(c, a); y = Relu(m)\nreturn y",
     "c = Conv(x, _:const, _:const) {group=2, dilations=[2,2]}\ny = Relu(c)"},
    {CONV "a: float[6,1,1] = " K6 "\nm = Div(c, a); y = Relu(m)\nreturn y",
     "c = Conv(x, _:const, _:const)\ny = Relu(c)"},
    {CONV "a: float[6,1,1] = " K6 "\nm = Mul(a, c); y = Relu(m)\nreturn y",
     "c = Conv(x, _:const, _:const)\ny = Relu(c)"},
    /* 1-D convolution, a [M,1] */
    {"x: float[1,4,7]; w: const float[6,4,3]; b: const float[6]; a: float[6,1] = " K6 "\n"
     "c = Conv(x, w, b); m = Mul(c, a); y = Relu(m)\nreturn y",
     "c = Conv(x, _:const, _:const)\ny = Relu(c)"},
    {CONV "a: float[1,1,1,1] = [1.9]\nm = Mul(c, a); y = Relu(m)\nreturn y",
     "c = Conv(x, _:const, _:const)\ny = Relu(c)"},
};

START_TEST(scales_by_per_channel_constants)
{
    PC_CASE(folds[_i].graph, 1, folds[_i].expect);
}
END_TEST

/* the old W and B go, the output keeps its name */
START_TEST(graph_output_keeps_its_name)
{
    const char *graph = "x: float[1,2,5,5]; w: const float[3,2,3,3]; b: const float[3]\n"
                        "a: float[3,1,1] = [0.7, -1.3, 1.9]\nc = Conv(x, w, b) {pads=[1,1,1,1]}; y = Mul(c, a)\nreturn y";
    PC_CASE(graph, 1, "y = Conv(x, _:const, _:const)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 2);
    free(name);
    ph_model_free(m);
}
END_TEST

static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* another consumer */
    {CONV "a: float[6,1,1] = " K6 "\ny = Mul(c, a); r = Relu(c)\nreturn y, r", 0},
    /* a graph output */
    {CONV "a: float[6,1,1] = " K6 "\ny = Mul(c, a)\nreturn y, c", 0},
    /* not constant */
    {CONV "a: float[6,1,1]\ny = Mul(c, a)\nreturn y", 0},
    /* varies along W */
    {CONV "a: float[1,1,1,5] = [0.7, -1.3, 1.9, 0.85, -0.6]\ny = Mul(c, a)\nreturn y", 0},
    /* widens N */
    {CONV "a: float[2,6,1,1] = [0.7]\ny = Mul(c, a)\nreturn y", 0},
    /* widens the rank */
    {CONV "a: float[1,1,6,1,1] = " K6 "\ny = Mul(c, a)\nreturn y", 0},
    /* varies along H */
    {CONV "a: float[5,1] = [0.7, -1.3, 1.9, 0.85, -0.6]\ny = Mul(c, a)\nreturn y", 0},
    /* an integer constant (an invalid model) */
    {CONV "a: int64[6,1,1] = [1, 2, 3, 4, 5, 6]\ny = Mul(c, a)\nreturn y", 1},
    /* a float16 constant: another dtype than W */
    {CONV "a: float16[6,1,1] = [1]\ny = Mul(c, a)\nreturn y", 1},
    /* the bias is not constant */
    {"x: float[1,4,5,5]; w: const float[6,4,3,3]; b: float[6]; a: float[6,1,1] = " K6 "\n"
     "c = Conv(x, w, b) {pads=[1,1,1,1]}; y = Mul(c, a)\nreturn y", 0},
    /* W is not constant */
    {"x: float[1,4,5,5]; w: float[6,4,3,3]; b: const float[6]; a: float[6,1,1] = " K6 "\n"
     "c = Conv(x, w, b) {pads=[1,1,1,1]}; y = Mul(c, a)\nreturn y", 0},
    /* a zero divisor */
    {CONV "a: float[6,1,1] = [1, 2, 3, 4, 5, 0]\ny = Div(c, a)\nreturn y", 0},
    /* an infinite factor */
    {CONV "a: float[6,1,1] = [1, 2, 3, 4, 5, inf]\ny = Mul(c, a)\nreturn y", 0},
    /* a / conv is not linear in the Conv's output */
    {CONV "a: float[6,1,1] = " K6 "\ny = Div(a, c)\nreturn y", 0},
    /* legacy broadcasting (opset < 7) aligns at an axis */
    {CONV "a: float[6,1,1] = " K6 "\ny = Mul(c, a) {broadcast=1, axis=1}\nreturn y", 1},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[1,2,5,5]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    float k[3] = {0.7f, -1.3f, 1.9f};
    /* then: Conv with a bias times a [3,1,1]; else: Conv without, divided by a scalar */
    ph_value *tin[3] = {x, tk_init(body[0], "tw", 4, TK_I64(3, 2, 3, 3), 7), tk_init(body[0], "tb", 1, TK_I64(3), 8)};
    ph_value *tc = ph_node_output(tk_node(body[0], "Conv", 3, tin), 0);
    tk_output(body[0], tk_op2(body[0], "Mul", tc,
                              ph_graph_add_initializer(body[0], "ta", ph_tensor_new(PH_DT_FLOAT, 3, TK_I64(3, 1, 1), k))));
    ph_value *ein[2] = {x, tk_init(body[1], "ew", 4, TK_I64(3, 2, 3, 3), 9)};
    ph_value *ec = ph_node_output(tk_node(body[1], "Conv", 2, ein), 0);
    tk_output(body[1], tk_op2(body[1], "Div", ec, ph_graph_add_initializer(body[1], "ea", ph_tensor_new(PH_DT_FLOAT, 0, NULL, k))));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "y = Conv(x, _:const, _:const)");
    PC_GRAPH_IS(body[1], "y = Conv(x, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_mul_into_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, scales_by_per_channel_constants, 0, (int)(sizeof folds / sizeof *folds));
    tcase_add_test(tc, graph_output_keeps_its_name);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
