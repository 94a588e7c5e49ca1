/* tests/test_pass_eliminate_nop_transpose.c - eliminate_nop_transpose: a
 * Transpose whose perm moves nothing goes, its reader takes its input. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("eliminate_nop_transpose")

START_TEST(identity_perm_removed)
{
    PC_CASE("x: float[2,3,4]; r = Relu(x); t = Transpose(r) {perm=[0,1,2]}; y = Neg(t); return y", 1,
            "r = Relu(x)\ny = Neg(r)");
}
END_TEST

/* Without perm the dims are reversed: nothing moves at rank 0 or 1. */
START_TEST(no_perm_rank_0_and_1_removed)
{
    PC_CASE("x: float[5]; s: float[]\nr = Relu(x); t = Transpose(r); y1 = Neg(t)\n"
            "a = Abs(s); u = Transpose(a); y2 = Neg(u)\nreturn y1, y2",
            2, "r = Relu(x)\ny1 = Neg(r)\n--\na = Abs(s)\ny2 = Neg(a)");
}
END_TEST

/* The identity perm needs no shape; int64 data and a symbolic dim. */
START_TEST(int64_symbolic_removed)
{
    PC_CASE("x: int64[batch,3]; t = Transpose(x) {perm=[0,1]}; y = Neg(t); return y", 1, "y = Neg(x)");
}
END_TEST

START_TEST(graph_output_takes_the_name)
{
    const char *graph = "x: float[3,4]; r = Relu(x); y = Transpose(r) {perm=[0,1]}; return y";
    PC_CASE(graph, 1, "y = Relu(x)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* ---- negative cases */

START_TEST(real_permutations_kept)
{
    PC_UNTOUCHED("x: float[2,3,4]; o: float[1,4]; r = Relu(x)\n"
                 "a = Transpose(r) {perm=[0,2,1]}; y1 = Neg(a)\n"
                 "b = Transpose(r) {perm=[2,1,0]}; y2 = Neg(b)\n"
                 "c = Transpose(r); y3 = Neg(c)\n" /* reverses 3 dims */
                 /* only size-1 dims move, but the shape changes: not this pass's job */
                 "p = Abs(o); d = Transpose(p) {perm=[1,0]}; y4 = Neg(d)\n"
                 "return y1, y2, y3, y4");
}
END_TEST

START_TEST(no_perm_unknown_rank_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[*]; r = Relu(x); t = Transpose(r); y = Neg(t); return y");
}
END_TEST

START_TEST(graph_input_to_graph_output_kept)
{
    PC_UNTOUCHED("x: float[3,4]; y = Transpose(x) {perm=[0,1]}; return y");
}
END_TEST

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[3,3]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(then_g, tk_op1(then_g, "Neg", tk_transpose(then_g, x, 2, TK_I64(0, 1))));
    tk_output(else_g, tk_op1(else_g, "Neg", tk_transpose(else_g, x, 2, TK_I64(1, 0))));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Neg(x)");
    PC_GRAPH_IS(else_g, "t = Transpose(x) {perm=[1,0]}\ny = Neg(t)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_transpose");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, identity_perm_removed);
    tcase_add_test(tc, no_perm_rank_0_and_1_removed);
    tcase_add_test(tc, int64_symbolic_removed);
    tcase_add_test(tc, graph_output_takes_the_name);
    tcase_add_test(tc, real_permutations_kept);
    tcase_add_test(tc, no_perm_unknown_rank_kept);
    tcase_add_test(tc, graph_input_to_graph_output_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
