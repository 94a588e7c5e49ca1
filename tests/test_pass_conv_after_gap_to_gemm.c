/* tests/test_pass_conv_after_gap_to_gemm.c - conv_after_gap_to_gemm: a 1x1
 * Conv after global pooling becomes Flatten + Gemm + Reshape. */
#include <stdio.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("conv_after_gap_to_gemm")

/* The result: pool, Flatten, Gemm {transB=1} (with the bias or not),
 * Reshape back to the Conv's output of rank r and M channels, Relu. */
static const char *gemm_result(const char *pool, int bias, int r, int64_t m)
{
    static char buf[512];
    snprintf(buf, sizeof buf,
             "p = %s(x)\nf = Flatten(p)\ng = Gemm(f, _:const%s) {transB=1}\nc = Reshape(g, _:const)\n"
             "y = Relu(c:rank=%d:shape=[*,%lld%s])",
             pool, bias ? ", _:const" : "", r, (long long)m, r == 3 ? ",*" : ",*,*");
    return buf;
}

static const struct {
    const char *graph, *pool;
    int bias, rank;
} folds[] = {
    {"x: float[2,6,3,3]; w: const float[5,6,1,1]; b: const float[5]\n"
     "p = GlobalAveragePool(x); c = Conv(p, w, b); y = Relu(c)\nreturn y", "GlobalAveragePool", 1, 4},
    {"x: float[2,6,3,3]; w: const float[5,6,1,1]; b: const float[5]\n"
     "p = GlobalMaxPool(x); c = Conv(p, w, b); y = Relu(c)\nreturn y", "GlobalMaxPool", 1, 4},
    {"x: float[2,6,3,3]; w: const float[5,6,1,1]\n"
     "p = GlobalAveragePool(x); c = Conv(p, w); y = Relu(c)\nreturn y", "GlobalAveragePool", 0, 4},
    {"x: float[2,6,3]; w: const float[5,6,1]; b: const float[5]\n"
     "p = GlobalMaxPool(x); c = Conv(p, w, b); y = Relu(c)\nreturn y", "GlobalMaxPool", 1, 3},
    /* strides and explicit zero pads are fine on a 1x1 input */
    {"x: float[2,6,3,3]; w: const float[5,6,1,1]; b: const float[5]\n"
     "p = GlobalAveragePool(x)\nc = Conv(p, w, b) {strides=[2,2], pads=[0,0,0,0], kernel_shape=[1,1]}\n"
     "y = Relu(c)\nreturn y", "GlobalAveragePool", 1, 4},
    /* opset 10: Gemm needs C below 11, the pass gives it zeros */
    {"opset 10\nx: float[2,6,3,3]; w: const float[5,6,1,1]\n"
     "p = GlobalMaxPool(x); c = Conv(p, w); y = Relu(c)\nreturn y", "GlobalMaxPool", 1, 4},
};

START_TEST(folds_to_gemm)
{
    PC_CASE(folds[_i].graph, 1, gemm_result(folds[_i].pool, folds[_i].bias, folds[_i].rank, 5));
}
END_TEST

START_TEST(pool_shared_and_output_name_kept)
{
    ph_test_options o = {.max_iterations = 4, .sizes = (const int64_t[]){1, 2}, .n_sizes = 2};
    const char *graph = "x: float[N,4,5,5]; w: const float[3,4,1,1]; b: const float[3]\n"
                        "p = GlobalAveragePool(x); y = Conv(p, w, b)\nreturn y, p";
    PC_CASE_OPTS(&o, graph, 1,
                 "p = GlobalAveragePool(x)\n--\nf = Flatten(p)\ng = Gemm(f, _:const, _:const)\ny = Reshape(g, _:const)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_str_eq(ph_value_dim_param(ph_graph_output(g, 0), 0), "N");
    ph_model_free(m);
}
END_TEST

static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* a 3x3 kernel with pads */
    {"x: float[2,4,3,3]; w: const float[4,4,3,3]; b: const float[4]\n"
     "p = GlobalAveragePool(x); y = Conv(p, w, b) {pads=[1,1,1,1]}\nreturn y", 0},
    /* a 1x1 kernel with pads: the output grows */
    {"x: float[2,4,3,3]; w: const float[4,4,1,1]; b: const float[4]\n"
     "p = GlobalAveragePool(x); y = Conv(p, w, b) {pads=[1,1,1,1]}\nreturn y", 0},
    /* grouped */
    {"x: float[2,4,3,3]; w: const float[4,2,1,1]; b: const float[4]\n"
     "p = GlobalAveragePool(x); y = Conv(p, w, b) {group=2}\nreturn y", 0},
    /* unknown rank */
    {"x: float[*]; w: const float[4,4,1,1]; b: const float[4]\n"
     "p = GlobalAveragePool(x); y = Conv(p, w, b)\nreturn y", 1},
    /* the weight is not constant */
    {"x: float[2,4,3,3]; w: float[4,4,1,1]; b: const float[4]\n"
     "p = GlobalAveragePool(x); y = Conv(p, w, b)\nreturn y", 0},
    /* the bias is not constant */
    {"x: float[2,4,3,3]; w: const float[4,4,1,1]; b: float[4]\n"
     "p = GlobalAveragePool(x); y = Conv(p, w, b)\nreturn y", 0},
    /* bfloat16: Conv has no such dtype here */
    {"x: bfloat16[2,4,3,3]; w: bfloat16[4,4,1,1] = [0]\n"
     "p = GlobalAveragePool(x); y = Conv(p, w)\nreturn y", 1},
    /* no global pooling before the Conv */
    {"x: float[2,4,1,1]; w: const float[4,4,1,1]; b: const float[4]\n"
     "p = Relu(x); y = Conv(p, w, b)\nreturn y", 0},
};

START_TEST(left_alone)
{
    if (alone[_i].unchecked)
        PC_UNTOUCHED_UNCHECKED(alone[_i].graph);
    else
        PC_UNTOUCHED(alone[_i].graph);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[1,6,3,3]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    for (int i = 0; i < 2; i++) { /* average pooling and a bias, max pooling without */
        ph_value *in[3] = {tk_op1(body[i], i ? "GlobalMaxPool" : "GlobalAveragePool", x),
                           tk_init(body[i], "w", 4, TK_I64(5, 6, 1, 1), 3), tk_init(body[i], "b", 1, TK_I64(5), 4)};
        tk_output(body[i], ph_node_output(tk_node(body[i], "Conv", i ? 2 : 3, in), 0));
    }
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "p = GlobalAveragePool(x)\nf = Flatten(p)\ng = Gemm(f, _:const, _:const)\ny = Reshape(g, _:const)");
    PC_GRAPH_IS(body[1], "p = GlobalMaxPool(x)\nf = Flatten(p)\ng = Gemm(f, _:const)\ny = Reshape(g, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("conv_after_gap_to_gemm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, folds_to_gemm, 0, (int)(sizeof folds / sizeof *folds));
    tcase_add_test(tc, pool_shared_and_output_name_kept);
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
