/* tests/test_pass_add_tree_to_chain.c - add_tree_to_chain. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("add_tree_to_chain");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* n operands Relu(input_i) of shape [2,3], produced in order. */
static void operands(ph_graph *g, size_t n, ph_value **v, int dtype)
{
    for (size_t i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%zu", i);
        ph_value *x = dtype == PH_DT_FLOAT ? tk_input(g, name, 2, TK_I64(2, 3))
                                           : ph_graph_add_input(g, name, dtype, 2, TK_I64(2, 3));
        v[i] = tk_op1(g, dtype == PH_DT_FLOAT ? "Relu" : "Neg", x);
    }
}

/* Assert g's Adds form the chain ((l0 + l1) + l2) + ... ending in y. */
static void assert_chain(ph_graph *g, ph_value *const *l, size_t n)
{
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Add), n - 1);
    ph_value *acc = l[0];
    for (size_t k = 1; k < n; k++) {
        ph_node *add = ph_value_sole_consumer(l[k]);
        ck_assert_ptr_nonnull(add);
        ck_assert_int_eq(ph_node_op(add), PH_OP_Add);
        ck_assert_ptr_eq(ph_node_input(add, 0), acc);
        ck_assert_ptr_eq(ph_node_input(add, 1), l[k]);
        acc = ph_node_output(add, 0);
    }
}

/* (a + b) + (c + d): the chain's Adds run as soon as their operand is there. */
START_TEST(balanced_tree_becomes_chain)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *l[4];
    operands(g, 4, l, PH_DT_FLOAT);
    ph_value *y = tk_op2(g, "Add", tk_op2(g, "Add", l[0], l[1]), tk_op2(g, "Add", l[2], l[3]));
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    assert_chain(g, l, 4);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Relu,Add,Relu,Add,Relu,Add");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    tk_assert_untouched(pass, m); /* a chain is left alone */
    ph_model_free(m);
}
END_TEST

/* ((a + (b + c)) + ((d + e) + (f + (g + h)))), int32 (exact), and a leaf
 * that is a graph input with no producer. */
START_TEST(deep_tree_int32)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *l[8];
    operands(g, 7, l, PH_DT_INT32);
    l[7] = ph_graph_add_input(g, "raw", PH_DT_INT32, 2, TK_I64(2, 3));
    ph_value *left = tk_op2(g, "Add", l[0], tk_op2(g, "Add", l[1], l[2]));
    ph_value *right = tk_op2(g, "Add", tk_op2(g, "Add", l[3], l[4]),
                             tk_op2(g, "Add", l[5], tk_op2(g, "Add", l[6], l[7])));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Add", left, right)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    assert_chain(g, l, 8);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 7; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *l[4];
        operands(g, 4, l, PH_DT_FLOAT);
        ph_value *ab = tk_op2(g, "Add", l[0], l[1]);
        switch (variant) {
        case 0: /* a left-deep chain */
            tk_output(g, tk_op2(g, "Add", tk_op2(g, "Add", ab, l[2]), l[3]));
            break;
        case 1: /* a right-deep chain: a chain too */
            tk_output(g, tk_op2(g, "Add", l[0], tk_op2(g, "Add", l[1], tk_op2(g, "Add", l[2], l[3]))));
            break;
        case 2: /* a + b has another consumer: it is a leaf, the rest a chain */
            tk_output(g, tk_op2(g, "Add", ab, tk_op2(g, "Add", l[2], l[3])));
            tk_output(g, tk_op1(g, "Neg", ab));
            break;
        case 3: /* a + b is a graph output */
            tk_output(g, tk_op2(g, "Add", ab, tk_op2(g, "Add", l[2], l[3])));
            tk_output(g, ab);
            break;
        case 4: { /* c + d broadcasts */
            ph_value *c = tk_op1(g, "Relu", tk_input(g, "c", 2, TK_I64(1, 3)));
            tk_output(g, tk_op2(g, "Add", ab, tk_op2(g, "Add", l[2], c)));
            break;
        }
        case 5: /* unknown shapes */
            for (int i = 0; i < 4; i++)
                tk_set_shape(ph_graph_input(g, (size_t)i), -1, NULL);
            tk_output(g, tk_op2(g, "Add", ab, tk_op2(g, "Add", l[2], l[3])));
            break;
        case 6: /* Sum is no Add */
        {
            ph_value *in[2] = {l[2], l[3]};
            tk_output(g, tk_op2(g, "Add", ab, ph_node_output(tk_node(g, "Sum", 2, in), 0)));
            break;
        }
        }
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *l[4];
    operands(g, 4, l, PH_DT_FLOAT);
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op2(then_g, "Add", tk_op2(then_g, "Add", l[0], l[1]), tk_op2(then_g, "Add", l[2], l[3])));
    tk_output(else_g, tk_op2(else_g, "Add", tk_op2(else_g, "Add", l[0], l[1]), l[2]));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1); /* the evaluator has no If: structure only */
    ph_node *last = ph_graph_last_node(then_g);
    ck_assert_int_eq(ph_node_op(last), PH_OP_Add);
    ck_assert_ptr_eq(ph_node_input(last, 1), l[3]);
    ck_assert_ptr_eq(ph_node_input(ph_value_producer(ph_node_input(last, 0)), 1), l[2]);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("add_tree_to_chain");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, balanced_tree_becomes_chain);
    tcase_add_test(tc, deep_tree_int32);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
