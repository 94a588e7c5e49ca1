/* tests/test_pass_avgpool_count_include_pad.c - the avgpool_count_include_pad pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;
/* parameter lists (name, value, ..., NULL) */
static const char *const params_0[] = {"count_include_pad", "false", NULL};

static void setup(void)
{
    pass = tk_pass_load("avgpool_count_include_pad");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* x [1,2,8,8] -> Relu -> AveragePool(k, pads) -> y; returns the pool. */
static ph_node *pool(ph_graph *g, const int64_t *pads, int64_t count_include_pad)
{
    ph_value *r = tk_relu_input(g, 4, TK_I64(1, 2, 8, 8), NULL);
    ph_node *p = tk_node(g, "AveragePool", 1, &r);
    ck_assert_int_eq(ph_node_set_attr_ints(p, "kernel_shape", 2, TK_I64(3, 3)), 0);
    if (pads)
        ck_assert_int_eq(ph_node_set_attr_ints(p, "pads", 4, pads), 0);
    if (count_include_pad >= 0)
        ck_assert_int_eq(ph_node_set_attr_int(p, "count_include_pad", count_include_pad), 0);
    tk_output(g, ph_node_output(p, 0));
    return p;
}

START_TEST(unpadded_pool_set)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    pool(g, TK_I64(0, 0, 0, 0), -1);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_int_eq(ph_node_attr_int(tk_find_op(g, PH_OP_AveragePool), "count_include_pad", 0), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    /* the other way round, from the parameter (the profile's value) */
    m = tk_model();
    g = ph_model_graph(m);
    pool(g, NULL, 1);
    pass->params = params_0;
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_int_eq(ph_node_attr_int(tk_find_op(g, PH_OP_AveragePool), "count_include_pad", 1), 0);
    ph_model_free(m);
}
END_TEST

START_TEST(padded_or_ceil_left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    pool(g, TK_I64(1, 1, 1, 1), 0); /* the border averages would change */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    m = tk_model();
    g = ph_model_graph(m);
    ph_node *p = pool(g, NULL, 0);
    ck_assert_int_eq(ph_node_set_attr_int(p, "ceil_mode", 1), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    m = tk_model();
    g = ph_model_graph(m);
    p = pool(g, NULL, 0);
    ck_assert_int_eq(ph_node_set_attr_string(p, "auto_pad", "SAME_UPPER"), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    m = tk_model(); /* already what the target computes */
    g = ph_model_graph(m);
    pool(g, NULL, 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_if_branches)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 8, 8));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    ph_node *p = tk_node(then_g, "AveragePool", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_ints(p, "kernel_shape", 2, TK_I64(2, 2)), 0);
    tk_output(then_g, ph_node_output(p, 0));
    ph_node *q = tk_node(else_g, "AveragePool", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_ints(q, "kernel_shape", 2, TK_I64(2, 2)), 0);
    tk_output(else_g, ph_node_output(q, 0));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_int_eq(ph_node_attr_int(ph_graph_first_node(then_g), "count_include_pad", 0), 1);
    ck_assert_int_eq(ph_node_attr_int(ph_graph_first_node(else_g), "count_include_pad", 0), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_avgpool_count_include_pad");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, unpadded_pool_set);
    tcase_add_test(tc, padded_or_ceil_left_alone);
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
