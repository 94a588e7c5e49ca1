/* tests/test_pass_fuse_matmul_add_to_gemm.c - fuse_matmul_add_to_gemm:
 * MatMul(A, B const) + Add(C const) -> Gemm(A, B, C). */
#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("fuse_matmul_add_to_gemm")

/* Relu(a[3,4]) @ B[4,5] + C of the shape given (ADD_CP: Add(c, p)) -> Neg */
#define FOLD(cshape, add) "a: float[3,4]; b: const float[4,5]; c: const float" cshape "\n" \
                          "r = Relu(a); p = MatMul(r, b); s = " add "; y = Neg(s)\nreturn y"
#define ADD_PC "Add(p, c)"
#define ADD_CP "Add(c, p)"

static const struct {
    const char *graph;
} biases[] = {
    {FOLD("[5]", ADD_PC)},
    {FOLD("[1,5]", ADD_CP)},
    {FOLD("[3,5]", ADD_PC)},
    {FOLD("[]", ADD_CP)},
    {FOLD("[3,1]", ADD_PC)},
    {FOLD("[1]", ADD_CP)},
    {FOLD("[1,1]", ADD_PC)},
};

/* one Gemm reading the Relu, no transA */
START_TEST(bias_shapes_fold)
{
    PC_CASE(biases[_i].graph, 1, "r = Relu(a)\ng = Gemm(r, b, _:const) {!transA}\ny = Neg(g)");
}
END_TEST

/* A symbolic batch dim: [N] and [1, N] biases fold. */
static const struct {
    const char *graph;
} symbolic[] = {
    {"a: float[batch,4]; b: const float[4,6]; c: const float[6]; r = Relu(a); p = MatMul(r, b); y = Add(p, c); return y"},
    {"a: float[batch,4]; b: const float[4,6]; c: const float[1,6]; r = Relu(a); p = MatMul(r, b); y = Add(p, c); return y"},
};

START_TEST(symbolic_rows)
{
    PC_CASE(symbolic[_i].graph, 1, "r = Relu(a)\ny = Gemm(r, b, _:const)");
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    const char *graph = "a: float[2,3]; b: const float[3,4]; c: const float[4]\n"
                        "r = Relu(a); p = MatMul(r, b); y = Add(p, c)\nreturn y";
    PC_CASE(graph, 1, "r = Relu(a)\ny = Gemm(r, b, _:const)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* a [3,4] (or as given) -> Relu -> MatMul b [4,5] -> Add c [5] */
#define A34 "a: float[3,4]; r = Relu(a)\n"
#define MM "p = MatMul(r, b); y = Add(p, c)\n"
#define BC "b: const float[4,5]; c: const float[5]\n"
static const struct {
    const char *graph;
    int mode; /* PC_CHECKED, PC_UNCHECKED, PC_NO_SHAPES */
} alone[] = {
    /* the MatMul output has another consumer; is a graph output */
    {A34 BC MM "q = Relu(p)\nreturn y, q", 0},
    {A34 BC MM "return y, p", 0},
    /* B is not constant */
    {A34 "b: float[4,5]; c: const float[5]\n" MM "return y", 0},
    /* the rank of A unknown; A of rank 3 */
    {"a: float[*]; r = Relu(a)\n" BC MM "return y", 1},
    {"a: float[2,3,4]; r = Relu(a)\n" BC MM "return y", 0},
    /* a bias of rank 3 widens the output */
    {A34 "b: const float[4,5]; c: const float[1,1,5]\n" MM "return y", 0},
    /* [3, N] against an unknown M */
    {"a: float[?,4]; r = Relu(a)\nb: const float[4,5]; c: const float[3,5]\n" MM "return y", 1},
    /* [2, N] against M = 1 widens the output */
    {"a: float[1,4]; r = Relu(a)\nb: const float[4,5]; c: const float[2,5]\n" MM "return y", 0},
    /* the bias is not constant */
    {A34 "b: const float[4,5]; c: float[5]\n" MM "return y", 0},
    /* opset 6: Gemm's C did not broadcast yet */
    {"opset 6\n" A34 BC MM "return y", 1},
    /* B of rank 3 */
    {A34 "b: const float[1,4,5]; c: const float[5]\n" MM "return y", 0},
    /* int32 MatMul + Add: Gemm takes no integers here */
    {"a: int32[2,2]; b: int32[2,3] = [1, 2, 3, 4, 5, 6]; c: int32[3] = [1]\n"
     "r = Abs(a); p = MatMul(r, b); y = Add(p, c)\nreturn y", 0},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].mode, alone[_i].graph);
}
END_TEST

/* MatMul(a, B) + C in body g (swap: Add(C, mm)). */
static ph_value *body_mm_add(ph_graph *g, ph_value *a, int crank, const int64_t *cdims, int swap)
{
    ph_value *p = tk_op2(g, "MatMul", a, tk_init(g, "b", 2, TK_I64(4, 5), 3));
    ph_value *c = tk_init(g, "c", crank, cdims, 4);
    return swap ? tk_op2(g, "Add", c, p) : tk_op2(g, "Add", p, c);
}

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("a: float[3,4]; cond: bool[]; r = Relu(a); y = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *r = pc_node_output(m, 0);
    tk_output(then_g, body_mm_add(then_g, r, 1, TK_I64(5), 0));
    tk_output(else_g, body_mm_add(else_g, r, 2, TK_I64(1, 5), 1));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Gemm(r, b, _:const)");
    PC_GRAPH_IS(else_g, "y = Gemm(r, b, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_matmul_add_to_gemm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, bias_shapes_fold, 0, (int)(sizeof biases / sizeof *biases));
    tcase_add_loop_test(tc, symbolic_rows, 0, (int)(sizeof symbolic / sizeof *symbolic));
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
