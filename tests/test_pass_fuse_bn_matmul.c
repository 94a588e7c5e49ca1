/* tests/test_pass_fuse_bn_matmul.c - fuse_bn_matmul: BatchNormalization
 * before or after a 2-D MatMul/Gemm with a constant weight. */
#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("fuse_bn_matmul")

/* BatchNormalization parameters over 4 and 5 channels (variance positive) */
#define P4 "s: const float[4]; bb: const float[4]; mean: const float[4]; var: float[4] = [0.6, 1.3, 0.9, 1.5]\n"
#define P5 "s: const float[5]; bb: const float[5]; mean: const float[5]; var: float[5] = [0.6, 1.3, 0.9, 1.5, 1.1]\n"
#define BN(in) "n = BatchNormalization(" in ", s, bb, mean, var) {epsilon=0.001}\n"
#define X "x: float[3,4]; r = Relu(x)\n"

/* Relu(x) -> BN -> MatMul or Gemm: one Gemm with beta 1 */
static const struct {
    const char *graph;
} before[] = {
    {X P4 "w: const float[4,5]\n" BN("r") "y = MatMul(n, w)\nreturn y"},
    {X P4 "w: const float[5,4]; c: const float[5]\n" BN("r") "y = Gemm(n, w, c) {transB=1, alpha=0.5, beta=2.0}\nreturn y"},
    {X P4 "w: const float[4,5]; c: const float[3,1]\n" BN("r") "y = Gemm(n, w, c) {alpha=1.5}\nreturn y"},
    {X P4 "w: const float[4,5]\n" BN("r") "y = Gemm(n, w) {beta=3.0}\nreturn y"},
};

/* W' and the new bias are the only initializers */
START_TEST(bn_before)
{
    PC_CASE(before[_i].graph, 1, "r = Relu(x)\ny = Gemm(r, _:const, _:const) {beta(1.0)=1.0}");
    PC_INITIALIZERS_AFTER(before[_i].graph, 1, 2);
}
END_TEST

/* MatMul or Gemm -> BN: one Gemm */
static const struct {
    const char *graph;
} after[] = {
    {X P5 "w: const float[4,5]\np = MatMul(r, w)\n" BN("p") "return n"},
    {X P5 "w: const float[5,4]; c: const float[3,5]\np = Gemm(r, w, c) {transB=1, alpha=0.5, beta=2.0}\n" BN("p") "return n"},
    {X P5 "w: const float[4,5]\np = Gemm(r, w) {alpha=2.0}\n" BN("p") "return n"},
    /* transA: the product is still [M, N] */
    {"x: float[4,3]; r = Relu(x)\n" P5 "w: const float[4,5]; c: const float[]\np = Gemm(r, w, c) {transA=1, beta=0.5}\n"
     BN("p") "return n"},
};

START_TEST(bn_after)
{
    PC_CASE(after[_i].graph, 1, "r = Relu(x)\nn = Gemm(r, _:const, _:const)");
    PC_INITIALIZERS_AFTER(after[_i].graph, 1, 2);
}
END_TEST

static const struct {
    const char *graph;
    int mode;
} alone[] = {
    /* the BN output has another consumer */
    {X P4 "w: const float[4,5]\n" BN("r") "y = MatMul(n, w)\nreturn y, n", PC_CHECKED},
    /* the product feeds the BN and a graph output */
    {X P5 "w: const float[4,5]\np = MatMul(r, w)\n" BN("p") "return n, p", PC_CHECKED},
    /* a BN parameter is not constant */
    {X "s: const float[4]; bb: const float[4]; mean: float[4]; var: float[4] = [0.6, 1.3, 0.9, 1.5]\n"
     "w: const float[4,5]\n" BN("r") "y = MatMul(n, w)\nreturn y", PC_CHECKED},
    /* the weight is not constant */
    {X P5 "wv: float[4,5]; w = Relu(wv); p = MatMul(r, w)\n" BN("p") "return n", PC_CHECKED},
    /* BN on a rank-3 input: channel axis 1 is not the contraction axis */
    {"x: float[2,4,4]; r = Relu(x)\n" P4 "w: const float[4,5]\n" BN("r") "y = MatMul(n, w)\nreturn y", PC_CHECKED},
    /* Gemm with transA: the BN channel is A's column, the M axis of op(A) */
    {"x: float[4,4]; r = Relu(x)\n" P4 "w: const float[4,5]\n" BN("r") "y = Gemm(n, w) {transA=1}\nreturn y", PC_CHECKED},
    /* training mode */
    {X P5 "w: const float[4,5]\np = MatMul(r, w)\nn = BatchNormalization(p, s, bb, mean, var) {epsilon=0.001, training_mode=1}\n"
     "return n", PC_UNCHECKED},
    /* opset 6: BatchNormalization had is_test */
    {"opset 6\n" X P4 "w: const float[4,5]\n" BN("r") "y = MatMul(n, w)\nreturn y", PC_UNCHECKED},
    /* the Gemm's bias is not constant */
    {X P5 "w: const float[4,5]; cv: float[5]; c = Relu(cv); p = Gemm(r, w, c)\n" BN("p") "return n", PC_CHECKED},
    /* the rank of x unknown */
    {"x: float[*]; r = Relu(x)\n" P4 "w: const float[4,5]\n" BN("r") "y = MatMul(n, w)\nreturn y", PC_UNCHECKED},
    /* the BN's second output is used */
    {X P5 "w: const float[4,5]\np = MatMul(r, w)\nn, rm, rv = BatchNormalization(p, s, bb, mean, var) {epsilon=0.001}\n"
     "return n, rm", PC_UNCHECKED},
    /* N-D MatMul then BN: channel axis 1 is a batch axis */
    {"x: float[2,5,4]; r = Relu(x)\n" P5 "w: const float[4,5]\np = MatMul(r, w)\n" BN("p") "return n", PC_CHECKED},
    /* the weight is shared with another MatMul */
    {X P4 "w: const float[4,5]; z: float[2,4]\n" BN("r") "y = MatMul(n, w); q = Relu(z); y2 = MatMul(q, w)\nreturn y, y2",
     PC_CHECKED},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].mode, alone[_i].graph);
}
END_TEST

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[3,4]; cond: bool[]; r = Relu(x); y = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *r = pc_node_output(m, 0);
    tk_output(then_g, tk_op2(then_g, "MatMul", pc_body_bn(then_g, r, 4), tk_init(then_g, "w", 2, TK_I64(4, 5), 1)));
    tk_output(else_g, pc_body_bn(else_g, tk_op2(else_g, "MatMul", r, tk_init(else_g, "w", 2, TK_I64(4, 5), 1)), 5));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Gemm(r, _:const, _:const)");
    PC_GRAPH_IS(else_g, "y = Gemm(r, _:const, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_bn_matmul");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, bn_before, 0, (int)(sizeof before / sizeof *before));
    tcase_add_loop_test(tc, bn_after, 0, (int)(sizeof after / sizeof *after));
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
