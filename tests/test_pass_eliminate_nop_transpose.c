/* tests/test_pass_eliminate_nop_transpose.c - the eliminate_nop_transpose pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("eliminate_nop_transpose");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

START_TEST(identity_perm_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 3, TK_I64(2, 3, 4), NULL);
    tk_neg_output(g, tk_transpose(g, r, 3, TK_I64(0, 1, 2)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    tk_assert_untouched(pass, m); /* idempotent */
    ph_model_free(m);
}
END_TEST

/* Without perm the dims are reversed: nothing moves at rank 0 or 1. */
START_TEST(no_perm_rank_0_and_1_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_neg_output(g, tk_transpose(g, tk_relu_input(g, 1, TK_I64(5), NULL), 0, NULL));
    tk_neg_output(g, tk_transpose(g, tk_op1(g, "Abs", tk_input(g, "s", 0, NULL)), 0, NULL));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg,Abs,Neg");
    ph_model_free(m);
}
END_TEST

/* The identity perm needs no shape; int64 data and a symbolic dim. */
START_TEST(int64_symbolic_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT64, 2, TK_I64(-1, 3));
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "batch"), 0);
    tk_neg_output(g, tk_transpose(g, x, 2, TK_I64(0, 1)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 2, TK_I64(1, 4)), 1);
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(g), 0), x);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_output_takes_the_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *y = tk_transpose(g, r, 2, TK_I64(0, 1));
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    ck_assert_ptr_eq(ph_graph_output(g, 0), r);
    ck_assert_str_eq(ph_value_name(r), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(real_permutations_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 3, TK_I64(2, 3, 4), NULL);
    tk_neg_output(g, tk_transpose(g, r, 3, TK_I64(0, 2, 1)));
    tk_neg_output(g, tk_transpose(g, r, 3, TK_I64(2, 1, 0)));
    tk_neg_output(g, tk_transpose(g, r, 0, NULL)); /* reverses 3 dims */
    /* only size-1 dims move, but the shape changes: not this pass's job */
    ph_value *o = tk_op1(g, "Abs", tk_input(g, "o", 2, TK_I64(1, 4)));
    tk_neg_output(g, tk_transpose(g, o, 2, TK_I64(1, 0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(no_perm_unknown_rank_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_neg_output(g, tk_transpose(g, tk_relu_input(g, -1, NULL, NULL), 0, NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_input_to_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_output(g, tk_transpose(g, tk_input(g, "x", 2, TK_I64(3, 4)), 2, TK_I64(0, 1)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    char ops[64];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 3));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op1(then_g, "Neg", tk_transpose(then_g, x, 2, TK_I64(0, 1))));
    tk_output(else_g, tk_op1(else_g, "Neg", tk_transpose(else_g, x, 2, TK_I64(1, 0))));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1); /* the evaluator has no If: structure only */
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Neg");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(then_g), 0), x);
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Transpose,Neg");
    tk_assert_untouched(pass, m);
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
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
