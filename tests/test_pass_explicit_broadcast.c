/* tests/test_pass_explicit_broadcast.c - the explicit_broadcast pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("explicit_broadcast");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* A constant operand gets leading dims of 1, an activation an Unsqueeze;
 * the outputs are the same bit for bit. */
START_TEST(constant_and_activation_aligned)
{
    char ops[128];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 3, TK_I64(2, 3, 4), NULL);
    ph_value *bias = tk_init(g, "bias", 1, TK_I64(4), 3);
    ph_value *y = tk_op2(g, "Add", x, bias);
    ph_value *v = tk_op1(g, "Abs", tk_input(g, "v", 2, TK_I64(3, 4)));
    ph_value *z = tk_op2(g, "Mul", y, v);
    tk_output(g, z);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Add,Abs,Unsqueeze,Mul");
    const ph_node *add = tk_find_op(g, PH_OP_Add);
    const ph_tensor *b = ph_value_const(ph_node_input(add, 1));
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(ph_tensor_rank(b), 3);
    ck_assert_int_eq(ph_tensor_dim(b, 2), 4);
    ck_assert_ptr_null(ph_graph_find_value(g, "bias")); /* the old one pruned */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Where with three operands, Sum with a scalar */
START_TEST(variadic_and_where)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *c = ph_graph_add_input(g, "c", PH_DT_BOOL, 1, TK_I64(3));
    ph_node *wn = tk_node(g, "Where", 3, (ph_value *[]){c, x, tk_init(g, "s", 0, NULL, 4)});
    ph_value *t = tk_init(g, "t", 1, TK_I64(3), 5);
    ph_value *sum = ph_node_output(tk_node(g, "Sum", 3, (ph_value *[]){ph_node_output(wn, 0), x, t}), 0);
    tk_output(g, sum);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 2);
    for (const ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        for (size_t i = 0; i < ph_node_input_count(n); i++)
            if (ph_node_op(n) != PH_OP_Unsqueeze && ph_node_op(n) != PH_OP_Constant)
                ck_assert_int_eq(ph_value_rank(ph_node_input(n, i)), 2);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    /* one rank already, an unknown rank, PRelu (broadcasts one way) */
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_input(g, "a", 2, TK_I64(2, 3));
    tk_output(g, tk_op2(g, "Add", a, tk_input(g, "b", 2, TK_I64(1, 3))));
    tk_output(g, tk_op2(g, "Mul", a, tk_input(g, "u", -1, NULL)));
    tk_output(g, tk_op2(g, "PRelu", a, tk_init(g, "slope", 1, TK_I64(3), 6)));
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
    tk_output(then_g, tk_op2(then_g, "Add", x, tk_init(g, "b", 1, TK_I64(4), 7)));
    tk_output(else_g, tk_op1(else_g, "Neg", x));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1); /* the evaluator has no If: structure only */
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Add");
    ck_assert_int_eq(ph_value_rank(ph_node_input(ph_graph_first_node(then_g), 1)), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_explicit_broadcast");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, constant_and_activation_aligned);
    tcase_add_test(tc, variadic_and_where);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
