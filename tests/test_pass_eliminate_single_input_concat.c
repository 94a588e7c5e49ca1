/* tests/test_pass_eliminate_single_input_concat.c - the
 * eliminate_single_input_concat pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("eliminate_single_input_concat"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

static ph_value *concat(ph_graph *g, size_t n, ph_value *const *in, int64_t axis)
{
    ph_node *c = tk_node(g, "Concat", n, in);
    ck_assert_int_eq(ph_node_set_attr_int(c, "axis", axis), 0);
    return ph_node_output(c, 0);
}

START_TEST(single_input_removed)
{
    char ops[256];
    for (int64_t axis = -2; axis <= 1; axis++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
        tk_neg_output(g, concat(g, 1, &r, axis));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
        tk_assert_untouched(pass, m); /* idempotent */
        ph_model_free(m);
    }
}
END_TEST

/* An int64 input read directly from the graph input, with a symbolic dim. */
START_TEST(graph_input_feeding_a_node_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT64, 2, TK_I64(-1, 3));
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "batch"), 0);
    tk_neg_output(g, concat(g, 1, &x, 0));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 2, TK_I64(1, 3)), 1);
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(g), 0), x);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_output_takes_the_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *y = concat(g, 1, &r, 1);
    tk_output(g, y);
    tk_neg_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ck_assert_ptr_eq(ph_graph_output(g, 0), r);
    ck_assert_str_eq(ph_value_name(r), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(two_inputs_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    tk_neg_output(g, concat(g, 2, (ph_value *[]){r, r}, 0));
    tk_neg_output(g, concat(g, 2, (ph_value *[]){r, tk_init(g, "c", 2, TK_I64(1, 4), 3)}, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_input_to_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 4));
    tk_output(g, concat(g, 1, &x, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The input is itself a graph output: both names must stay. */
START_TEST(graph_output_to_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    tk_output(g, r);
    tk_output(g, concat(g, 1, &r, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    char ops[64];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    /* then: a branch output from a Concat of the outer x stays (the branch
     * output cannot take the outer value's name); else: Concat(Abs(x)) goes */
    tk_output(then_g, concat(then_g, 1, &x, 0));
    ph_value *a = tk_op1(else_g, "Abs", x);
    tk_output(else_g, concat(else_g, 1, &a, 0));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1); /* the evaluator has no If: structure only */
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Concat");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Abs");
    ck_assert_ptr_eq(ph_graph_output(else_g, 0), a);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_single_input_concat");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, single_input_removed);
    tcase_add_test(tc, graph_input_feeding_a_node_removed);
    tcase_add_test(tc, graph_output_takes_the_name);
    tcase_add_test(tc, two_inputs_kept);
    tcase_add_test(tc, graph_input_to_graph_output_kept);
    tcase_add_test(tc, graph_output_to_graph_output_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
