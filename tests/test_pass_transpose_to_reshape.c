/* tests/test_pass_transpose_to_reshape.c - transpose_to_reshape: a Transpose
 * that only moves dims of size 1 (keeping memory order) becomes a Reshape. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("transpose_to_reshape")

/* Relu(x) -> Transpose {perm} -> Neg */
#define T(dims, perm) "x: float[" dims "]\nr = Relu(x); t = Transpose(r) " perm "; n = Neg(t)\nreturn n"

static const struct {
    const char *graph;
    size_t n;
    int64_t want[4];
} reshapes[] = {
    /* [2,1,3] by (1,0,2): only the 1 moves; idempotent */
    {T("2,1,3", "{perm=[1,0,2]}"), 3, {1, 2, 3}},
    /* [5,1,1,7] by (0,2,3,1) -> [5,1,7,1]: two 1s move around the 7 */
    {T("5,1,1,7", "{perm=[0,2,3,1]}"), 4, {5, 1, 7, 1}},
    /* [N,1,5] by (1,0,2): the symbolic N moves, everything else is known: -1 */
    {T("N,1,5", "{perm=[1,0,2]}"), 3, {1, -1, 5}},
    /* [N,1,1,M] by (0,2,1,3): symbolic dims keep their place: copied with 0 */
    {T("N,1,1,M", "{perm=[0,2,1,3]}"), 4, {0, 1, 1, 0}},
    /* an identity perm keeps memory order too */
    {T("3,4", "{perm=[0,1]}"), 2, {3, 4}},
    /* a missing perm reverses the dims: [1,6] -> [6,1] */
    {T("1,6", ""), 2, {6, 1}},
};

/* the result is Relu, Reshape(shape want), Neg */
START_TEST(becomes_reshape)
{
    PC_CASE(reshapes[_i].graph, 1, "r = Relu(x)\nt = Reshape(r, _:const)\nn = Neg(t)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(reshapes[_i].graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ph_node *r = ph_value_producer(ph_node_input(ph_value_producer(ph_graph_output(ph_model_graph(m), 0)), 0));
    int64_t got[16];
    ck_assert_int_eq(ph_value_const_ints(ph_node_input(r, 1), got, NULL, 16), (ptrdiff_t)reshapes[_i].n);
    for (size_t k = 0; k < reshapes[_i].n; k++)
        ck_assert_msg(got[k] == reshapes[_i].want[k], "shape[%zu] = %lld, want %lld", k, (long long)got[k],
                      (long long)reshapes[_i].want[k]);
    ph_model_free(m);
}
END_TEST

/* x a graph input and y a graph output: the Reshape reads the input and
 * takes the output's name. */
START_TEST(graph_input_to_graph_output)
{
    const char *graph = "x: float[1,4,1]\ny = Transpose(x) {perm=[2,1,0]}\nreturn y";
    PC_CASE(graph, 1, "y = Reshape(x, _:const)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* unchecked: 1 no numeric check, 2 no shapes either (inference refuses the
 * model; the pass must refuse it too) */
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* a real transpose */
    {T("2,1,3", "{perm=[2,1,0]}"), 0},
    /* an unknown dim that moves past another unknown one may be > 1 for both */
    {T("N,1,M", "{perm=[2,1,0]}"), 0},
    /* an unknown dim treated as 1 would be wrong: [N,3] by (1,0) when N may
     * be 1 or more */
    {T("N,3", "{perm=[1,0]}"), 0},
    /* [N,1,M] by (1,0,2) needs [1,-1,0]: a 0 copy beside -1 is refused (M =
     * 0 at run time leaves -1 undefined) */
    {T("N,1,M", "{perm=[1,0,2]}"), 0},
    /* unknown rank */
    {T("*", "{perm=[0,1]}"), 1},
    /* a zero dim */
    {T("0,1,3", "{perm=[1,0,2]}"), 0},
    /* an invalid perm */
    {"x: float[2,1,3]\ny = Transpose(x) {perm=[1,1,2]}\nreturn y", 2},
    /* opset 4 */
    {"opset 4\n" T("2,1,3", "{perm=[1,0,2]}"), 0},
    /* another domain */
    {"x: float[2,1,3]\nr = Relu(x); t = Transpose@com.example(r) {perm=[1,0,2]}; n = Neg(t)\nreturn n", 1},
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
    ph_model *m = pc_if_model("x: float[4,1,6]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(body[0], tk_op1(body[0], "Neg", tk_transpose(body[0], x, 3, TK_I64(1, 0, 2))));
    tk_output(body[1], tk_op1(body[1], "Neg", tk_transpose(body[1], x, 3, TK_I64(2, 1, 0))));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "r = Reshape(x, _:const)\ny = Neg(r)");
    PC_GRAPH_IS(body[1], "t = Transpose(x)\ny = Neg(t)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_transpose_to_reshape");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, becomes_reshape, 0, (int)(sizeof reshapes / sizeof *reshapes));
    tcase_add_test(tc, graph_input_to_graph_output);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
