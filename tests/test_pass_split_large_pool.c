/* tests/test_pass_split_large_pool.c - split_large_pool: a non-overlapping
 * pool whose kernel exceeds the limit becomes a cascade of smaller pools. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("split_large_pool")

static const char *const limits[] = {"max_kernel=4", "max_kernel_maxpool=4", NULL};
static const ph_test_options opts = {.max_iterations = 4, .params = limits};

/* x [1,2,H,W] -> Relu -> POOL(kernel = strides = K) -> y */
#define POOL(op, hw, k, more) "x: float[1,2," hw "]\nr = Relu(x); y = " op "(r) {kernel_shape=[" k "], strides=[" k "]" more "}\nreturn y"

/* 8 = 4 * 2, 16 = 4 * 4; node names stay unique */
START_TEST(maxpool_split)
{
    const char *graph = POOL("MaxPool", "16,32", "8,16", "");
    PC_CASE_OPTS(&opts, graph, 1, "r = Relu(x)\na = MaxPool(r) {kernel_shape=[4,4]}\ny = MaxPool(a) {kernel_shape=[2,4]}");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, &opts, NULL, &err), 1);
    const ph_node *first = ph_node_next(ph_graph_first_node(ph_model_graph(m)));
    ck_assert_str_ne(ph_node_name(first), ph_node_name(ph_node_next(first)));
    ph_model_free(m);
}
END_TEST

/* 27 = 3 * 3 * 3, 9 = 3 * 3 */
START_TEST(averagepool_split)
{
    PC_CASE_OPTS(&opts, POOL("AveragePool", "27,9", "27,9", ""), 1,
                 "r = Relu(x)\na = AveragePool(r)\nb = AveragePool(a)\ny = AveragePool(b)");
}
END_TEST

static const struct {
    const char *graph;
} alone[] = {
    /* 7 has no factor <= 4 */
    {POOL("MaxPool", "14,14", "7,7", "")},
    /* 18 is no multiple of 8: a partial window */
    {POOL("AveragePool", "18,18", "8,8", "")},
    /* overlapping windows */
    {"x: float[1,2,16,16]\nr = Relu(x); y = AveragePool(r) {kernel_shape=[8,8], strides=[4,4]}\nreturn y"},
    /* within the limit */
    {POOL("MaxPool", "16,16", "4,4", "")},
};

START_TEST(left_alone)
{
    PC_CASE_OPTS(&opts, alone[_i].graph, 0, NULL);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_if_branches)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[1,2,8,8]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    ph_node *p = tk_node(body[0], "MaxPool", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_ints(p, "kernel_shape", 2, TK_I64(8, 8)), 0);
    ck_assert_int_eq(ph_node_set_attr_ints(p, "strides", 2, TK_I64(8, 8)), 0);
    tk_output(body[0], ph_node_output(p, 0));
    tk_output(body[1], tk_op1(body[1], "Neg", x));
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run_checked(pass, m, &opts, NULL, &err), 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "a = MaxPool(x)\ny = MaxPool(a)");
    PC_GRAPH_IS(body[1], "y = Neg(x)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_split_large_pool");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, maxpool_split);
    tcase_add_test(tc, averagepool_split);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
