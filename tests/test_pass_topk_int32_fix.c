/* tests/test_pass_topk_int32_fix.c - topk_int32_fix: TopK's indices read
 * through a Cast to int32 (and back to int64 for the readers). */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("topk_int32_fix")

/* x [2,10] -> Relu -> TopK(k = 3) */
#define TOPK "x: float[2,10]; k: int64[1] = [3]\nr = Relu(x); v, i = TopK(r, k)\n"

/* a graph output keeps its name and dtype; done: the indices' one reader is
 * a Cast to int32 */
START_TEST(indices_cast)
{
    const char *graph = TOPK "return v, i";
    PC_CASE(graph, 1, "r = Relu(x)\nv:shared, j = TopK(r, k)\nc = Cast(j) {to=6}\ni = Cast(c:dtype=int32) {to=7}");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char saved[64];
    snprintf(saved, sizeof saved, "%s", ph_value_name(ph_graph_output(g, 1)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 1)), saved);
    ck_assert_int_eq(ph_value_dtype(ph_graph_output(g, 1)), PH_DT_INT64);
    ph_model_free(m);
}
END_TEST

/* indices not read; a target whose indices are int64 */
START_TEST(left_alone)
{
    PC_UNTOUCHED(TOPK "return v");
    ph_test_options o = {.max_iterations = 4, .params = (const char *const[]){"index_dtype=int64", NULL}};
    PC_CASE_OPTS(&o, TOPK "return i", 0, NULL);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_if_branches)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[2,10]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    for (int b = 0; b < 2; b++) {
        ph_node *t = ph_node_create(body[b], NULL, "TopK", 2, (ph_value *[]){x, tk_ints(body[b], "k", 1, TK_I64(3))}, 2);
        tk_output(body[b], tk_op1(body[b], "Neg", ph_node_output(t, 1)));
    }
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    for (int b = 0; b < 2; b++)
        PC_GRAPH_IS(body[b], "_, i = TopK(x, k)\nc = Cast(i) {to=6}\nj = Cast(c) {to=7}\ny = Neg(j)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_topk_int32_fix");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, indices_cast);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
