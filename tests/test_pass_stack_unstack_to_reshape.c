/* tests/test_pass_stack_unstack_to_reshape.c - stack_unstack_to_reshape:
 * Unsqueeze*N -> Concat becomes Concat + Reshape; Split -> Squeeze becomes
 * Split + Reshape. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("stack_unstack_to_reshape");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Squeeze or Unsqueeze of x on one axis, in the opset's form. */
static ph_value *sq1(ph_graph *g, const char *op, ph_value *x, int64_t axis, int64_t opset)
{
    ph_value *in[2] = {x, opset >= 13 ? tk_ints(g, "axes", 1, TK_I64(axis)) : NULL};
    ph_node *node = tk_node(g, op, in[1] ? 2 : 1, in);
    if (opset < 13)
        ph_node_set_attr_ints(node, "axes", 1, TK_I64(axis));
    return ph_node_output(node, 0);
}

/* Concat of n values on axis */
static ph_value *concat(ph_graph *g, size_t n, ph_value *const *xs, int64_t axis)
{
    ph_node *c = tk_node(g, "Concat", n, xs);
    ph_node_set_attr_int(c, "axis", axis);
    return ph_node_output(c, 0);
}

/* A Split of x on axis into n pieces of 1 (sizes in the opset's form). */
static ph_node *split1(ph_graph *g, ph_value *x, int64_t axis, size_t n, int64_t opset)
{
    int64_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    ph_value *in[2] = {x, opset >= 13 ? tk_ints(g, "split", n, ones) : NULL};
    ph_node *s = ph_node_create(g, NULL, "Split", in[1] ? 2 : 1, in, n);
    ck_assert_ptr_nonnull(s);
    ph_node_set_attr_int(s, "axis", axis);
    if (opset < 13)
        ph_node_set_attr_ints(s, "split", n, ones);
    return s;
}

/* stack of inputs a, b, c of shape [2, 3] at axis (given as unsq/cat) */
static ph_value *stack3(ph_graph *g, ph_value *const *x, int64_t unsq, int64_t cat, int64_t opset)
{
    ph_value *u[3];
    for (int i = 0; i < 3; i++)
        u[i] = sq1(g, "Unsqueeze", x[i], unsq, opset);
    return concat(g, 3, u, cat);
}

START_TEST(stack_becomes_concat_and_reshape)
{
    char ops[256];
    static const int64_t axes[3][2] = {{1, 1}, {0, -3}, {-2, 1}};
    for (int opset = 11; opset <= 17; opset += 6)
        for (int v = 0; v < 3; v++) {
            ph_model *m = ph_model_new(opset);
            ph_graph *g = ph_model_graph(m);
            ph_value *x[3] = {tk_input(g, "a", 2, TK_I64(2, 3)), tk_input(g, "b", 2, TK_I64(2, 3)),
                              tk_input(g, "c", 2, TK_I64(2, 3))};
            ph_value *y = stack3(g, x, axes[v][0], axes[v][1], opset);
            tk_output(g, y);
            char *ny = strdup(ph_value_name(y));
            ck_assert_int_eq(tk_pass_run_eval(pass, m, 1 + (uint64_t)v, 0, NULL), 1);
            ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Concat,Reshape");
            ph_node *cat = tk_find_op(g, PH_OP_Concat);
            int64_t a = axes[v][1] < 0 ? axes[v][1] + 3 : axes[v][1];
            ck_assert_int_eq(ph_node_attr_int(cat, "axis", -9), a);
            ck_assert_ptr_eq(ph_node_input(cat, 0), x[0]);
            ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), ny);
            ck_assert_uint_eq(ph_graph_initializer_count(g), 1); /* the shape; axes are gone */
            free(ny);
            tk_assert_untouched(pass, m);
            ph_model_free(m);
        }
}
END_TEST

START_TEST(unstack_becomes_split_and_reshape)
{
    char ops[256];
    for (int opset = 11; opset <= 17; opset += 6) {
        ph_model *m = ph_model_new(opset);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 4));
        ph_node *s = split1(g, x, -2, 3, opset);
        for (int i = 0; i < 3; i++)
            tk_output(g, sq1(g, "Squeeze", ph_node_output(s, (size_t)i), i == 1 ? -2 : 1, opset));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 7, 0, NULL), 3);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Split,Reshape,Reshape,Reshape");
        int64_t shp[4];
        ck_assert_int_eq(ph_value_const_ints(ph_node_input(tk_find_op(g, PH_OP_Reshape), 1), shp, NULL, 4), 2);
        ck_assert_int_eq(shp[0], 2);
        ck_assert_int_eq(shp[1], 4);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(stack_left_alone)
{
    for (int variant = 0; variant < 7; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        int64_t d = variant == 3 ? 1 : 3; /* 3: Unsqueeze at 1 and 2 give the same shape */
        int64_t b = variant == 5 ? -1 : 2; /* 5: a dim unknown */
        ph_value *x[3] = {tk_input(g, "a", 2, TK_I64(b, d)), tk_input(g, "b", 2, TK_I64(b, d)),
                          tk_input(g, "c", 2, TK_I64(b, d))};
        ph_value *u[3];
        for (int i = 0; i < 3; i++)
            u[i] = sq1(g, "Unsqueeze", x[i], variant == 2 ? 2 : variant == 3 && i == 1 ? 2 : 1, 17);
        if (variant == 4) { /* axes of one Unsqueeze not constant */
            ph_node *un = ph_value_producer(u[1]);
            ph_node_set_input(un, 1, ph_graph_add_input(g, "ax", PH_DT_INT64, 1, TK_I64(1)));
        }
        if (variant == 6) /* one input is no Unsqueeze */
            u[2] = tk_op1(g, "Relu", u[2]);
        ph_value *y = concat(g, 3, u, variant == 2 ? 2 : 1);
        tk_neg_output(g, y);
        switch (variant) {
        case 0: /* an Unsqueeze output has another reader */
            tk_neg_output(g, u[0]);
            break;
        case 1: /* an Unsqueeze output is a graph output */
            tk_output(g, u[2]);
            break;
        default: /* 2: stacked after the last axis; 3: another axis; 5: a dim unknown */
            break;
        }
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(unstack_left_alone)
{
    for (int variant = 0; variant < 4; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 3, TK_I64(variant == 3 ? -1 : 2, 1, 4));
        ph_value *p;
        int64_t axis = 1;
        if (variant == 0) { /* split on axis 0, squeeze axis 1 */
            p = ph_node_output(split1(g, x, 0, 2, 17), 0);
        } else if (variant == 1) { /* not a Split */
            p = tk_op1(g, "Relu", x);
        } else {
            p = ph_node_output(split1(g, x, 1, 1, 17), 0);
        }
        ph_value *y;
        if (variant == 2) { /* Squeeze without axes */
            y = tk_op1(g, "Squeeze", p);
        } else {
            y = sq1(g, "Squeeze", p, axis, 17);
        }
        tk_neg_output(g, y);
        if (variant == 0)
            tk_neg_output(g, ph_node_output(ph_value_producer(p), 1));
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x[3] = {tk_input(g, "a", 2, TK_I64(2, 3)), tk_input(g, "b", 2, TK_I64(2, 3)),
                      tk_input(g, "c", 2, TK_I64(2, 3))};
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, stack3(then_g, x, 0, 0, 17));
    ph_node *s = split1(else_g, x[0], 0, 2, 17);
    tk_output(else_g, tk_op2(else_g, "Add", sq1(else_g, "Squeeze", ph_node_output(s, 0), 0, 17),
                             sq1(else_g, "Squeeze", ph_node_output(s, 1), 0, 17)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 3);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Unsqueeze), 0);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Reshape), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Squeeze), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Reshape), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stack_unstack_to_reshape");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, stack_becomes_concat_and_reshape);
    tcase_add_test(tc, unstack_becomes_split_and_reshape);
    tcase_add_test(tc, stack_left_alone);
    tcase_add_test(tc, unstack_left_alone);
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
