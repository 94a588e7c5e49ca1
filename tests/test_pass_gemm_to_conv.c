/* tests/test_pass_gemm_to_conv.c - gemm_to_conv: Gemm/MatMul with a constant
 * weight on a flattened [N,C,1,1] becomes a 1x1 Conv + Flatten. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("gemm_to_conv")

/* x [2,6,1,1] flattened to f [2,6] by Flatten or Reshape */
#define FLAT "x: float[2,6,1,1]\nf = Flatten(x)\n"
#define RESH "x: float[2,6,1,1]; shape: int64[2] = [-1, 6]\nf = Reshape(x, shape)\n"
#define CONV "c = Conv(x, _:const:shape=[5,6,1,1])\ny = Flatten(c)"
#define CONVB "c = Conv(x, _:const:shape=[5,6,1,1], _:const)\ny = Flatten(c)"

static const struct {
    const char *graph, *expect;
} variants[] = {
    {FLAT "w: const float[6,5]\ny = Gemm(f, w)\nreturn y", CONV},
    {RESH "w: const float[6,5]\ny = Gemm(f, w)\nreturn y", CONV},
    {FLAT "w: const float[5,6]; c: const float[5]\ny = Gemm(f, w, c) {transB=1}\nreturn y", CONVB},
    {RESH "w: const float[5,6]; c: const float[5]\ny = Gemm(f, w, c) {transB=1}\nreturn y", CONVB},
    {FLAT "w: const float[6,5]; c: const float[1,5]\ny = Gemm(f, w, c)\nreturn y", CONVB},
    {RESH "w: const float[6,5]; c: const float[1,5]\ny = Gemm(f, w, c)\nreturn y", CONVB},
    {FLAT "w: const float[5,6]; c: const float[1,5]\ny = Gemm(f, w, c) {transB=1}\nreturn y", CONVB},
    {RESH "w: const float[5,6]; c: const float[1,5]\ny = Gemm(f, w, c) {transB=1, alpha=0.5, beta=2.0}\nreturn y", CONVB},
};

START_TEST(gemm_variants)
{
    PC_CASE(variants[_i].graph, 1, variants[_i].expect);
}
END_TEST

/* MatMul, a symbolic batch: the output keeps its name and its dim N */
START_TEST(matmul_symbolic_batch)
{
    ph_test_options o = {.max_iterations = 4, .sizes = (const int64_t[]){1, 3}, .n_sizes = 2};
    const char *graph = "x: float[N,4,1,1]; shape: int64[2] = [-1, 4]; w: const float[4,3]\n"
                        "f = Reshape(x, shape); y = MatMul(f, w)\nreturn y";
    PC_CASE_OPTS(&o, graph, 1, "c = Conv(x, _:const:shape=[3,4,1,1])\ny = Flatten(c)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_str_eq(ph_value_dim_param(ph_graph_output(g, 0), 0), "N");
    free(name);
    ph_model_free(m);
}
END_TEST

#define G "w: const float[6,5]; c: const float[5]\n"
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* the flattened value has another consumer */
    {FLAT G "y = Gemm(f, w, c); r = Relu(f)\nreturn y, r", 0},
    /* the flattened value is a graph output */
    {FLAT G "y = Gemm(f, w, c)\nreturn y, f", 0},
    /* unknown rank */
    {"x: float[*]\nf = Flatten(x)\n" G "y = Gemm(f, w, c)\nreturn y", 1},
    /* [N,C,2,1]: not a 1x1 spatial input */
    {"x: float[2,6,2,1]; w: const float[12,5]; c: const float[5]\nf = Flatten(x); y = Gemm(f, w, c)\nreturn y", 0},
    /* the weight is not constant */
    {FLAT "w: float[6,5]; c: const float[5]\ny = Gemm(f, w, c)\nreturn y", 0},
    /* the bias is not constant */
    {FLAT "w: const float[6,5]; c: float[5]\ny = Gemm(f, w, c)\nreturn y", 0},
    /* transA */
    {FLAT "w: const float[2,5]; c: const float[5]\ny = Gemm(f, w, c) {transA=1}\nreturn y", 0},
    /* a bias of shape [N, M] is not per channel */
    {FLAT "w: const float[6,5]; c: const float[2,5]\ny = Gemm(f, w, c)\nreturn y", 0},
    /* Flatten at axis 2 gives [N*C, 1] */
    {"x: float[2,6,1,1]; w: const float[1,5]; c: const float[5]\nf = Flatten(x) {axis=2}; y = Gemm(f, w, c)\nreturn y", 0},
    /* integer dtype */
    {"x: int32[2,6,1,1]; w: int32[6,5] = [0]\nf = Flatten(x); y = MatMul(f, w)\nreturn y", 0},
    /* MatMul with the flattened value as the second operand */
    {"z: float[2,6,1,1]; l: const float[3,2]\nf = Flatten(z); y = MatMul(l, f)\nreturn y", 0},
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
    ph_model *m = pc_if_model("x: float[1,6,1,1]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    /* then: Flatten + Gemm {transB=1} with a bias; else: Reshape + MatMul */
    ph_value *gin[3] = {tk_op1(body[0], "Flatten", x), tk_init(body[0], "t_w", 2, TK_I64(5, 6), 3),
                        tk_init(body[0], "t_c", 1, TK_I64(5), 4)};
    ph_node *gemm = tk_node(body[0], "Gemm", 3, gin);
    ph_node_set_attr_int(gemm, "transB", 1);
    tk_output(body[0], ph_node_output(gemm, 0));
    ph_value *f = tk_op2(body[1], "Reshape", x, tk_ints(body[1], "shape", 2, TK_I64(-1, 6)));
    tk_output(body[1], tk_op2(body[1], "MatMul", f, tk_init(body[1], "e_w", 2, TK_I64(6, 5), 3)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], CONVB);
    PC_GRAPH_IS(body[1], CONV);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gemm_to_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, gemm_variants, 0, (int)(sizeof variants / sizeof *variants));
    tcase_add_test(tc, matmul_symbolic_batch);
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
