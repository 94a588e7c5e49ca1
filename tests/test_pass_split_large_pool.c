/* tests/test_pass_split_large_pool.c - the split_large_pool pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;
static const char *const limits[] = {"max_kernel", "4", "max_kernel_maxpool", "4", NULL};

static void setup(void)
{
    pass = tk_pass_load("split_large_pool");
    pass->shapes = 1;
    pass->params = limits;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* x [1,2,h,w] -> Relu -> POOL(kernel = strides = kh x kw) -> y; the pool. */
static ph_node *pool(ph_graph *g, const char *op, int64_t h, int64_t w, int64_t kh, int64_t kw)
{
    ph_value *r = tk_relu_input(g, 4, TK_I64(1, 2, h, w), NULL);
    ph_node *p = tk_node(g, op, 1, &r);
    ck_assert_int_eq(ph_node_set_attr_ints(p, "kernel_shape", 2, TK_I64(kh, kw)), 0);
    ck_assert_int_eq(ph_node_set_attr_ints(p, "strides", 2, TK_I64(kh, kw)), 0);
    tk_output(g, ph_node_output(p, 0));
    return p;
}

START_TEST(pools_split)
{
    char ops[128];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    pool(g, "MaxPool", 16, 32, 8, 16); /* 8 = 4 * 2, 16 = 4 * 4 */
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,MaxPool,MaxPool");
    const int64_t *k;
    ck_assert_int_eq(ph_node_attr_ints(ph_node_next(ph_graph_first_node(g)), "kernel_shape", &k), 2);
    ck_assert(k[0] == 4 && k[1] == 4);
    const ph_node *first = ph_node_next(ph_graph_first_node(g));
    ck_assert_str_ne(ph_node_name(first), ph_node_name(ph_node_next(first))); /* node names stay unique */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    m = tk_model();
    g = ph_model_graph(m);
    pool(g, "AveragePool", 27, 9, 27, 9); /* 27 = 3 * 3 * 3, 9 = 3 * 3 */
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,AveragePool,AveragePool,AveragePool");
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    pool(g, "MaxPool", 14, 14, 7, 7); /* 7 has no factor <= 4 */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    m = tk_model();
    g = ph_model_graph(m);
    pool(g, "AveragePool", 18, 18, 8, 8); /* 18 is no multiple of 8: a partial window */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    m = tk_model();
    g = ph_model_graph(m);
    ph_node *p = pool(g, "AveragePool", 16, 16, 8, 8);
    ck_assert_int_eq(ph_node_set_attr_ints(p, "strides", 2, TK_I64(4, 4)), 0); /* overlapping windows */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    m = tk_model();
    g = ph_model_graph(m);
    pool(g, "MaxPool", 16, 16, 4, 4); /* within the limit */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_if_branches)
{
    char ops[64];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 8, 8));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    ph_node *p = tk_node(then_g, "MaxPool", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_ints(p, "kernel_shape", 2, TK_I64(8, 8)), 0);
    ck_assert_int_eq(ph_node_set_attr_ints(p, "strides", 2, TK_I64(8, 8)), 0);
    tk_output(then_g, ph_node_output(p, 0));
    tk_output(else_g, tk_op1(else_g, "Neg", x));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "MaxPool,MaxPool");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_split_large_pool");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, pools_split);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
