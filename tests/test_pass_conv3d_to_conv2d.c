/* tests/test_pass_conv3d_to_conv2d.c - conv3d_to_conv2d: a 3-D Conv becomes
 * one 2-D Conv per depth tap, summed. */
#include <stdio.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("conv3d_to_conv2d")

/* The result for kd taps: [Pad,] Transpose to [N, D, C, H, W]; per tap a
 * strided Slice (or none when the tap reads every plane) and a Reshape
 * into the batch, a 2-D Conv (the bias on the first), the sum, and back. */
static const char *taps_result(int kd, int pad, int bias)
{
    static char buf[2048];
    int len = snprintf(buf, sizeof buf, "%st = Transpose(%s) {perm=[0,2,1,3,4]}\n", pad ? "p = Pad(x, pr*)\n" : "",
                       pad ? "p" : "x");
    for (int i = 0; i < kd; i++)
        len += snprintf(buf + len, sizeof buf - (size_t)len,
                        "--\n( q%d = Slice(t, r%d*); s%d = Reshape(q%d, _:const) | s%d = Reshape(t, _:const) )\n"
                        "c%d = Conv(s%d, _:const:rank=4%s)\n",
                        i, i, i, i, i, i, i, i == 0 && bias ? ", _:const" : "");
    len += snprintf(buf + len, sizeof buf - (size_t)len, "--\n");
    char prev[16] = "c0";
    for (int i = 1; i < kd; i++) {
        len += snprintf(buf + len, sizeof buf - (size_t)len, "a%d = Add(%s, c%d)\n", i, prev, i);
        snprintf(prev, sizeof prev, "a%d", i);
    }
    snprintf(buf + len, sizeof buf - (size_t)len, "r = Reshape(%s, _:const)\ny = Transpose(r) {perm=[0,2,1,3,4]}", prev);
    return buf;
}

/* one input channel keeps the float error small */
static const struct {
    const char *graph;
    int kd, pad, bias;
} splits[] = {
    /* padding everywhere, depth stride 2 */
    {"x: float[2,1,6,5,7]; w: const float[4,1,3,3,3]; b: const float[4]\n"
     "y = Conv(x, w, b) {pads=[1,1,0,2,1,1], strides=[2,1,2]}\nreturn y", 3, 1, 1},
    /* depth dilation, spatial dilation */
    {"x: float[2,1,6,5,7]; w: const float[4,1,3,3,3]; b: const float[4]\n"
     "y = Conv(x, w, b) {dilations=[2,1,2]}\nreturn y", 3, 0, 1},
    /* no bias, no attributes */
    {"x: float[2,1,6,5,7]; w: const float[4,1,2,3,3]\ny = Conv(x, w)\nreturn y", 2, 0, 0},
    /* one tap */
    {"x: float[2,1,6,5,7]; w: const float[4,1,1,3,3]; b: const float[4]\ny = Conv(x, w, b)\nreturn y", 1, 0, 1},
    /* VALID, kernel_shape given */
    {"x: float[2,1,6,5,7]; w: const float[4,1,3,3,3]; b: const float[4]\n"
     "y = Conv(x, w, b) {auto_pad=\"VALID\", kernel_shape=[3,3,3]}\nreturn y", 3, 0, 1},
    /* depth stride 3, pads on the end only */
    {"x: float[2,1,6,5,7]; w: const float[4,1,3,3,3]; b: const float[4]\n"
     "y = Conv(x, w, b) {pads=[0,0,0,2,0,0], strides=[3,1,1]}\nreturn y", 3, 1, 1},
    /* many channels: the sum over taps is rounded tap by tap (the error
     * budget of --verify judges it) */
    {"x: float[2,5,6,5,7]; w: const float[4,5,3,3,3]; b: const float[4]\n"
     "y = Conv(x, w, b) {pads=[1,1,0,2,1,1], strides=[2,1,2]}\nreturn y", 3, 1, 1},
};

/* the output keeps its name */
START_TEST(splits_into_taps)
{
    PC_CASE(splits[_i].graph, 1, taps_result(splits[_i].kd, splits[_i].pad, splits[_i].bias));
    ph_error err = {0};
    ph_model *m = ph_test_model_text(splits[_i].graph, &err);
    ph_graph *g = ph_model_graph(m);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ph_model_free(m);
}
END_TEST

START_TEST(symbolic_batch)
{
    ph_test_options o = {.max_iterations = 4, .seed = 8, .sizes = (const int64_t[]){1, 3}, .n_sizes = 2};
    const char *graph = "x: float[N,2,4,4,4]; w: const float[3,2,2,3,3]; b: const float[3]\n"
                        "c = Conv(x, w, b) {pads=[1,1,1,0,1,1]}; y = Relu(c)\nreturn y";
    char expect[2048];
    snprintf(expect, sizeof expect, "%s", taps_result(2, 1, 1));
    char *last = strstr(expect, "y = Transpose");
    memcpy(last, "c", 1); /* c = Transpose(r) ... then the Relu */
    strcat(expect, "\ny = Relu(c)");
    PC_CASE_OPTS(&o, graph, 1, expect);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_dim_param(ph_graph_output(ph_model_graph(m), 0), 0), "N");
    ph_model_free(m);
}
END_TEST

#define CONV3D "y = Conv(x, w, b)\nreturn y"

static const struct {
    const char *graph;
    int unchecked;
    const char *param;
} alone[] = {
    /* deeper than max_taps */
    {"x: float[1,2,4,4,4]; w: const float[2,2,3,3,3]; b: const float[2]\n" CONV3D, 0, "max_taps=2"},
    /* grouped */
    {"x: float[1,2,4,4,4]; w: const float[2,1,3,3,3]; b: const float[2]\ny = Conv(x, w, b) {group=2}\nreturn y", 0, NULL},
    /* the weight is not constant */
    {"x: float[1,2,4,4,4]; w: float[2,2,3,3,3]; b: const float[2]\n" CONV3D, 0, NULL},
    /* unknown rank */
    {"x: float[*]; w: const float[2,2,3,3,3]; b: const float[2]\n" CONV3D, 1, NULL},
    /* unknown depth */
    {"x: float[1,2,?,4,4]; w: const float[2,2,3,3,3]; b: const float[2]\n" CONV3D, 0, NULL},
    /* auto_pad SAME_UPPER */
    {"x: float[1,2,4,4,4]; w: const float[2,2,3,3,3]; b: const float[2]\n"
     "y = Conv(x, w, b) {auto_pad=\"SAME_UPPER\"}\nreturn y", 0, NULL},
    /* opset 10 */
    {"opset 10\nx: float[1,2,4,4,4]; w: const float[2,2,3,3,3]; b: const float[2]\n" CONV3D, 0, NULL},
    /* a 2-D Conv */
    {"x: float[1,2,4,4]; w: const float[2,2,3,3]; b: const float[2]\n" CONV3D, 0, NULL},
    /* bfloat16 (Conv has no such dtype in the evaluator) */
    {"x: bfloat16[1,2,4,4,4]; w: bfloat16[2,2,3,3,3] = [0]\ny = Conv(x, w)\nreturn y", 1, NULL},
};

START_TEST(left_alone)
{
    ph_test_options o = {.max_iterations = 4, .unchecked = alone[_i].unchecked,
                         .params = (const char *const[]){alone[_i].param, NULL},
                         .sizes = (const int64_t[]){4}, .n_sizes = 1}; /* an unknown depth: 4 */
    PC_CASE_OPTS(&o, alone[_i].graph, 0, NULL);
}
END_TEST

/* Conv(x, w [3, 2, kd, 3, 3], b?) in the body g. */
static ph_value *conv3d(ph_graph *g, ph_value *x, int64_t kd, int bias)
{
    ph_value *in[3] = {x, tk_init(g, "w", 5, TK_I64(3, 2, kd, 3, 3), 3), bias ? tk_init(g, "b", 1, TK_I64(3), 4) : NULL};
    return ph_node_output(tk_node(g, "Conv", bias ? 3 : 2, in), 0);
}

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,2,4,4,4]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_input(ph_model_graph(m), 0);
    tk_output(then_g, conv3d(then_g, x, 2, 1));
    tk_output(else_g, conv3d(else_g, x, 3, 0));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, taps_result(2, 0, 1));
    PC_GRAPH_IS(else_g, taps_result(3, 0, 0));
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("conv3d_to_conv2d");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, splits_into_taps, 0, (int)(sizeof splits / sizeof *splits));
    tcase_add_test(tc, symbolic_batch);
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
