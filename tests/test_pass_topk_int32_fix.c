/* tests/test_pass_topk_int32_fix.c - the topk_int32_fix pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;
static const char *const int64_params[] = {"index_dtype", "int64", NULL};

static void setup(void)
{
    pass = tk_pass_load("topk_int32_fix");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* x [2,10] -> Relu -> TopK(k = 3) in graph g; the node. */
static ph_node *topk(ph_graph *g, ph_value *x)
{
    ph_node *t = ph_node_create(g, NULL, "TopK", 2, (ph_value *[]){x, tk_ints(g, "k", 1, TK_I64(3))}, 2);
    ck_assert_ptr_nonnull(t);
    return t;
}

START_TEST(indices_cast)
{
    char ops[128];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_node *t = topk(g, tk_relu_input(g, 2, TK_I64(2, 10), NULL));
    tk_output(g, ph_node_output(t, 0));
    tk_output(g, ph_node_output(t, 1)); /* a graph output keeps its name and dtype */
    const char *name = ph_value_name(ph_node_output(t, 1));
    char saved[64];
    strcpy(saved, name);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,TopK,Cast,Cast");
    ph_value *out = ph_graph_output(g, 1);
    ck_assert_str_eq(ph_value_name(out), saved);
    ck_assert_int_eq(ph_value_dtype(out), PH_DT_INT64);
    ck_assert_int_eq(ph_node_attr_int(ph_value_producer(out), "to", 0), PH_DT_INT64);
    tk_assert_untouched(pass, m); /* done: the indices' one reader is a Cast to int32 */
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_node *t = topk(g, tk_relu_input(g, 2, TK_I64(2, 10), NULL));
    tk_output(g, ph_node_output(t, 0)); /* indices not read */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    m = tk_model(); /* a target whose indices are int64 */
    g = ph_model_graph(m);
    t = topk(g, tk_relu_input(g, 2, TK_I64(2, 10), NULL));
    tk_output(g, ph_node_output(t, 1));
    pass->params = int64_params;
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_if_branches)
{
    char ops[64];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 10));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    ph_node *t = topk(then_g, x);
    tk_output(then_g, tk_op1(then_g, "Neg", ph_node_output(t, 1)));
    tk_output(else_g, tk_op1(else_g, "Neg", ph_node_output(topk(else_g, x), 1)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "TopK,Cast,Cast,Neg");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "TopK,Cast,Cast,Neg");
    tk_assert_untouched(pass, m);
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
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
