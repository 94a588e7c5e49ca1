/* tests/test_pass_insert_copy_between_noop_ops.c - the insert_copy_between_noop_ops pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;
/* parameter lists (name, value, ..., NULL) */
static const char *const params_0[] = {"noop_ops", "Reshape, Flatten, Split, Concat", NULL};
static const char *const params_1[] = {"noop_ops", "", NULL};

static void setup(void)
{
    pass = tk_pass_load("insert_copy_between_noop_ops");
    pass->shapes = 1;
    pass->params = params_0;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

START_TEST(copy_between_two_views)
{
    char ops[128];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 3, TK_I64(2, 3, 4), NULL);
    ph_value *r = tk_op2(g, "Reshape", x, tk_ints(g, "s", 2, TK_I64(6, 4)));
    ph_value *f = tk_op1(g, "Flatten", r);
    tk_output(g, f);
    tk_output(g, tk_op1(g, "Neg", r)); /* another reader of the Reshape keeps it */
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Reshape,Identity,Flatten,Neg");
    tk_assert_untouched(pass, m); /* Identity is no view: done */
    ph_model_free(m);
}
END_TEST

START_TEST(split_after_concat)
{
    char ops[128];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_relu_input(g, 2, TK_I64(2, 3), NULL);
    ph_node *c = tk_node(g, "Concat", 2, (ph_value *[]){a, a});
    ck_assert_int_eq(ph_node_set_attr_int(c, "axis", 0), 0);
    ph_node *sp = ph_node_create(g, NULL, "Split", 1, (ph_value *[]){ph_node_output(c, 0)}, 2);
    ck_assert_int_eq(ph_node_set_attr_int(sp, "num_outputs", 2), 0);
    ck_assert_int_eq(ph_model_set_opset(m, "", 18), 0);
    tk_output(g, ph_node_output(sp, 0));
    tk_output(g, ph_node_output(sp, 1));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Concat,Identity,Split");
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 3, TK_I64(2, 3, 4), NULL);
    /* Reshape after Relu (an instruction), Squeeze after Reshape (not listed) */
    ph_value *r = tk_op2(g, "Reshape", x, tk_ints(g, "s", 4, TK_I64(1, 2, 3, 4)));
    tk_output(g, ph_node_output(tk_node(g, "Squeeze", 2, (ph_value *[]){r, tk_ints(g, "ax", 1, TK_I64(0))}), 0));
    tk_assert_untouched(pass, m);
    pass->params = params_1; /* no list: nothing */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_if_branches)
{
    char ops[64];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    ph_value *f = tk_op1(then_g, "Flatten", tk_op2(then_g, "Reshape", x, tk_ints(g, "s", 2, TK_I64(6, 4))));
    tk_output(then_g, f);
    tk_output(else_g, tk_op1(else_g, "Flatten", x));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Reshape,Identity,Flatten");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Flatten");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_insert_copy_between_noop_ops");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, copy_between_two_views);
    tcase_add_test(tc, split_after_concat);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
