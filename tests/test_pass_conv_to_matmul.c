/* tests/test_pass_conv_to_matmul.c - conv_to_matmul: a Conv with stride =
 * kernel becomes Reshape/Transpose/MatMul. */
#include <stdio.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("conv_to_matmul")

/* The patches: [Slice,] Reshape, Transpose, Reshape, MatMul with the
 * weight, [Add the bias,] Reshape to the output of 2 x 2 patches. */
#define PATCHES "r = Reshape(x, _:const); t = Transpose(r); p = Reshape(t, _:const); m = MatMul(_:const, p)\n"

static const struct {
    const char *graph, *expect;
} patches[] = {
    {"x: float[2,3,32,32]; w: const float[4,3,16,16]; b: const float[4]\n"
     "y = Conv(x, w, b) {strides=[16,16]}\nreturn y",
     PATCHES "a = Add(m, _:const); y = Reshape(a, _:const)"},
    /* 34 x 33 leaves rows and columns the Conv never reads */
    {"x: float[2,3,34,33]; w: const float[4,3,16,16]; b: const float[4]\n"
     "y = Conv(x, w, b) {strides=[16,16]}\nreturn y",
     "s = Slice(x, sr*); r = Reshape(s, _:const); t = Transpose(r); p = Reshape(t, _:const)\n"
     "m = MatMul(_:const, p); a = Add(m, _:const); y = Reshape(a, _:const)"},
    /* no bias, every attribute written */
    {"x: float[2,3,32,32]; w: const float[4,3,16,16]\n"
     "y = Conv(x, w) {strides=[16,16], kernel_shape=[16,16], pads=[0,0,0,0], dilations=[1,1], auto_pad=\"VALID\"}\n"
     "return y",
     PATCHES "y = Reshape(m, _:const)"},
};

/* the default limit (kernels of 15 and more); the output keeps its name
 * and its shape */
START_TEST(default_limit_15)
{
    PC_CASE(patches[_i].graph, 1, patches[_i].expect);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(patches[_i].graph, &err);
    ph_graph *g = ph_model_graph(m);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ph_value *out = ph_graph_output(g, 0);
    ck_assert_str_eq(ph_value_name(out), name);
    ck_assert_int_eq(ph_value_dim(out, 2), 2);
    ck_assert_int_eq(ph_value_dim(out, 3), 2);
    ph_model_free(m);
}
END_TEST

START_TEST(lower_limit_symbolic_batch)
{
    ph_test_options o = {.max_iterations = 4, .seed = 9, .params = (const char *const[]){"min_kernel=4", NULL},
                         .sizes = (const int64_t[]){1, 3}, .n_sizes = 2};
    const char *graph = "x: float[N,5,12,8]; w: const float[6,5,4,4]; b: const float[6]\n"
                        "c = Conv(x, w, b) {strides=[4,4]}; y = Relu(c)\nreturn y";
    PC_CASE_OPTS(&o, graph, 1, PATCHES "a = Add(m, _:const); c = Reshape(a, _:const); y = Relu(c)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, &o, NULL, &err), 1);
    ck_assert_str_eq(ph_value_dim_param(ph_graph_output(ph_model_graph(m), 0), 0), "N");
    ph_model_free(m);
}
END_TEST

#define WB "w: const float[3,2,16,16]; b: const float[3]\n"

static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* a kernel under the limit */
    {"x: float[1,2,32,32]; w: const float[3,2,8,8]; b: const float[3]\ny = Conv(x, w, b) {strides=[8,8]}\nreturn y", 0},
    /* overlapping patches: stride < kernel */
    {"x: float[1,2,32,32]; " WB "y = Conv(x, w, b) {strides=[8,16]}\nreturn y", 0},
    /* pads */
    {"x: float[1,2,32,32]; " WB "y = Conv(x, w, b) {strides=[16,16], pads=[0,1,0,1]}\nreturn y", 0},
    /* dilations */
    {"x: float[1,2,64,64]; " WB "y = Conv(x, w, b) {strides=[16,16], dilations=[2,2]}\nreturn y", 0},
    /* grouped */
    {"x: float[1,2,32,32]; w: const float[2,1,16,16]; b: const float[2]\n"
     "y = Conv(x, w, b) {strides=[16,16], group=2}\nreturn y", 0},
    /* unknown rank */
    {"x: float[*]; " WB "y = Conv(x, w, b) {strides=[16,16]}\nreturn y", 1},
    /* unknown height (the evaluator's size of 32 for it) */
    {"x: float[1,2,?,32]; " WB "y = Conv(x, w, b) {strides=[16,16]}\nreturn y", 0},
    /* the weight is not constant */
    {"x: float[1,2,32,32]; w: float[3,2,16,16]; b: const float[3]\ny = Conv(x, w, b) {strides=[16,16]}\nreturn y", 0},
    /* auto_pad SAME_UPPER */
    {"x: float[1,2,32,32]; " WB "y = Conv(x, w, b) {strides=[16,16], auto_pad=\"SAME_UPPER\"}\nreturn y", 0},
    /* bfloat16 (Conv has no such dtype in the evaluator) */
    {"x: bfloat16[1,2,32,32]; w: bfloat16[3,2,16,16] = [0]\ny = Conv(x, w) {strides=[16,16]}\nreturn y", 1},
    /* no strides: stride 1 */
    {"x: float[1,2,32,32]; " WB "y = Conv(x, w, b)\nreturn y", 0},
};

START_TEST(left_alone)
{
    ph_test_options o = {.max_iterations = 4, .unchecked = alone[_i].unchecked,
                         .sizes = (const int64_t[]){32}, .n_sizes = 1};
    PC_CASE_OPTS(&o, alone[_i].graph, 0, NULL);
}
END_TEST

/* Conv(x, w [3,2,16,16], b?) {strides [16,16]} in the body g. */
static ph_value *patch_conv(ph_graph *g, ph_value *x, int bias)
{
    ph_value *in[3] = {x, tk_init(g, "w", 4, TK_I64(3, 2, 16, 16), 3), bias ? tk_init(g, "b", 1, TK_I64(3), 4) : NULL};
    ph_node *n = tk_node(g, "Conv", bias ? 3 : 2, in);
    ck_assert_int_eq(ph_node_set_attr_ints(n, "strides", 2, TK_I64(16, 16)), 0);
    return ph_node_output(n, 0);
}

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,2,32,32]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_input(ph_model_graph(m), 0);
    tk_output(then_g, patch_conv(then_g, x, 1));
    tk_output(else_g, patch_conv(else_g, x, 0));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, PATCHES "a = Add(m, _:const); y = Reshape(a, _:const)");
    PC_GRAPH_IS(else_g, PATCHES "y = Reshape(m, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("conv_to_matmul");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, default_limit_15, 0, (int)(sizeof patches / sizeof *patches));
    tcase_add_test(tc, lower_limit_symbolic_batch);
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
