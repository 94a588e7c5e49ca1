/* tests/test_pass_split_to_slices.c - the split_to_slices pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;
/* parameter lists (name, value, ..., NULL) */
static const char *const params_0[] = {"axes", "0, 1", NULL};
static const char *const params_1[] = {"axes", "0", NULL};

static void setup(void)
{
    pass = tk_pass_load("split_to_slices");
    pass->shapes = 1;
    pass->params = params_0;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* x [2,4,6] -> Relu -> Split(axis, n outputs, sizes) -> Neg each; returns the Split. */
static ph_node *split(ph_graph *g, int64_t axis, size_t n, const int64_t *sizes)
{
    ph_value *x = tk_relu_input(g, 3, TK_I64(2, 4, 6), NULL);
    ph_value *in[2] = {x, sizes ? tk_ints(g, "sizes", n, sizes) : NULL};
    ph_node *sp = ph_node_create(g, NULL, "Split", sizes ? 2 : 1, in, n);
    ck_assert_ptr_nonnull(sp);
    ck_assert_int_eq(ph_node_set_attr_int(sp, "axis", axis), 0);
    for (size_t i = 0; i < n; i++)
        tk_output(g, tk_op1(g, "Neg", ph_node_output(sp, i)));
    return sp;
}

START_TEST(inner_axis_to_slices)
{
    char ops[128];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    split(g, 2, 3, NULL); /* equal parts of 6 */
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Slice,Slice,Slice,Neg,Neg,Neg");
    ph_model_free(m);
    m = tk_model();
    g = ph_model_graph(m);
    split(g, -1, 2, TK_I64(1, 5)); /* sizes as an input, negative axis */
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_int_eq(tk_count_op(g, PH_OP_Slice), 2);
    ph_model_free(m);
    m = tk_model(); /* opset 18: num_outputs with a smaller last part (3, 1) */
    g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "", 18), 0);
    ph_node *sp = split(g, 1, 2, NULL);
    ck_assert_int_eq(ph_node_set_attr_int(sp, "num_outputs", 2), 0);
    ck_assert_int_eq(ph_node_set_attr_int(sp, "axis", 2), 0);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    split(g, 1, 2, NULL); /* an allowed axis */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    m = tk_model();
    g = ph_model_graph(m);
    split(g, -2, 2, NULL); /* the same axis, negative */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    m = tk_model();
    g = ph_model_graph(m);
    ph_value *u = tk_input(g, "u", 2, TK_I64(3, -1)); /* an unknown dim, no sizes */
    ph_node *sp = ph_node_create(g, NULL, "Split", 1, &u, 2);
    ck_assert_int_eq(ph_node_set_attr_int(sp, "axis", 1), 0);
    pass->params = params_1;
    tk_output(g, ph_node_output(sp, 0));
    tk_output(g, ph_node_output(sp, 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_if_branches)
{
    char ops[64];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    ph_node *sp = ph_node_create(then_g, NULL, "Split", 1, &x, 2);
    ck_assert_int_eq(ph_node_set_attr_int(sp, "axis", 1), 0);
    tk_output(then_g, tk_op2(then_g, "Add", ph_node_output(sp, 0), ph_node_output(sp, 1)));
    tk_output(else_g, tk_op1(else_g, "Neg", tk_slice(else_g, x, 1, TK_I64(0), TK_I64(2), TK_I64(1), NULL)));
    tk_output(g, ph_node_output(iff, 0));
    pass->params = params_1;
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Slice,Slice,Add");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_split_to_slices");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, inner_axis_to_slices);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
