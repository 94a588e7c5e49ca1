/* tests/test_pass_gathers_to_split.c - gathers_to_split: Gathers of one
 * tensor with constant indices partitioning one axis become one Split (and a
 * Squeeze per scalar index). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("gathers_to_split");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Gather of x on axis with constant indices: n < 0 = a scalar idx[0]. */
static ph_value *gather(ph_graph *g, ph_value *x, int64_t axis, int n, const int64_t *idx, int dtype)
{
    int32_t i32[16];
    for (int i = 0; i < (n < 0 ? 1 : n); i++)
        i32[i] = (int32_t)idx[i];
    ph_tensor *t = ph_tensor_new(dtype, n < 0 ? 0 : 1, n < 0 ? NULL : TK_I64(n),
                                 dtype == PH_DT_INT32 ? (const void *)i32 : (const void *)idx);
    ph_value *in[2] = {x, ph_graph_add_initializer(g, "idx", t)};
    ph_node *node = tk_node(g, "Gather", 2, in);
    ph_node_set_attr_int(node, "axis", axis);
    return ph_node_output(node, 0);
}

START_TEST(scalar_indices_split_and_squeeze)
{
    char ops[256];
    for (int variant = 0; variant < 2; variant++) {
        int64_t opset = variant ? 11 : 17;
        ph_model *m = ph_model_new(opset);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 3, TK_I64(2, 4, 3));
        for (int64_t i = 3; i >= 0; i--) /* any order; -1 is 3 */
            tk_neg_output(g, gather(g, x, variant ? -2 : 1, -1, TK_I64(i == 3 ? -1 : i), PH_DT_INT64));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Split,Squeeze,Squeeze,Squeeze,Squeeze,Neg,Neg,Neg,Neg");
        ph_node *split = tk_find_op(g, PH_OP_Split), *sq = tk_find_op(g, PH_OP_Squeeze);
        ck_assert_int_eq(ph_node_attr_int(split, "axis", -1), 1);
        ck_assert_uint_eq(ph_node_input_count(split), opset >= 13 ? 2 : 1);
        ck_assert_uint_eq(ph_node_input_count(sq), opset >= 13 ? 2 : 1);
        if (opset < 13) {
            const int64_t *v;
            ck_assert_int_eq(ph_node_attr_ints(sq, "axes", &v), 1);
            ck_assert_int_eq(v[0], 1);
        }
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Gather), 0);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(runs_of_indices_and_graph_outputs)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(6, 2));
    ph_value *a = gather(g, x, 0, 2, TK_I64(0, 1), PH_DT_INT32);
    ph_value *b = gather(g, x, 0, 3, TK_I64(2, 3, -2), PH_DT_INT64);
    ph_value *c = gather(g, x, 0, -1, TK_I64(5), PH_DT_INT64);
    tk_output(g, a);
    tk_neg_output(g, b);
    tk_output(g, c);
    tk_neg_output(g, c); /* c also has a reader */
    char *na = strdup(ph_value_name(a)), *nc = strdup(ph_value_name(c));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Split,Squeeze,Neg,Neg");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), na);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 2)), nc);
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(g, 2)), tk_find_op(g, PH_OP_Squeeze));
    int64_t sz[4];
    ph_node *split = tk_find_op(g, PH_OP_Split);
    ck_assert_int_eq(ph_value_const_ints(ph_node_input(split, 1), sz, NULL, 4), 3);
    ck_assert_int_eq(sz[0], 2);
    ck_assert_int_eq(sz[1], 3);
    ck_assert_int_eq(sz[2], 1);
    free(na);
    free(nc);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 8; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 2, TK_I64(variant == 4 ? -1 : 4, 3));
        ph_value *a = NULL, *b = NULL;
        switch (variant) {
        case 0: /* a gap: 0, then 2..3 */
            a = gather(g, x, 0, -1, TK_I64(0), PH_DT_INT64), b = gather(g, x, 0, 2, TK_I64(2, 3), PH_DT_INT64);
            break;
        case 1: /* not consecutive */
            a = gather(g, x, 0, 2, TK_I64(0, 2), PH_DT_INT64), b = gather(g, x, 0, 2, TK_I64(1, 3), PH_DT_INT64);
            break;
        case 2: /* an overlap */
            a = gather(g, x, 0, 2, TK_I64(0, 1), PH_DT_INT64), b = gather(g, x, 0, 3, TK_I64(1, 2, 3), PH_DT_INT64);
            break;
        case 3: { /* indices not constant */
            a = gather(g, x, 0, 2, TK_I64(0, 1), PH_DT_INT64);
            ph_value *in[2] = {x, ph_graph_add_input(g, "i", PH_DT_INT64, 1, TK_I64(2))};
            b = ph_node_output(tk_node(g, "Gather", 2, in), 0);
            break;
        }
        case 4: /* the axis' dim is unknown */
            a = gather(g, x, 0, 2, TK_I64(0, 1), PH_DT_INT64), b = gather(g, x, 0, 2, TK_I64(2, 3), PH_DT_INT64);
            break;
        case 5: { /* 2-D indices */
            a = gather(g, x, 0, 2, TK_I64(0, 1), PH_DT_INT64);
            ph_value *in[2] = {x, ph_graph_add_initializer(g, "i2", ph_tensor_new(PH_DT_INT64, 2, TK_I64(2, 1),
                                                                                   TK_I64(2, 3)))};
            b = ph_node_output(tk_node(g, "Gather", 2, in), 0);
            break;
        }
        case 6: /* different axes */
            a = gather(g, x, 0, 2, TK_I64(0, 1), PH_DT_INT64), b = gather(g, x, 1, 2, TK_I64(2, 3), PH_DT_INT64);
            break;
        case 7: /* one Gather of everything */
            a = gather(g, x, 0, 4, TK_I64(0, 1, 2, 3), PH_DT_INT64), b = tk_op1(g, "Relu", x);
            break;
        }
        tk_neg_output(g, a);
        tk_neg_output(g, b);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op2(then_g, "Add", gather(then_g, x, 0, -1, TK_I64(0), PH_DT_INT64),
                             gather(then_g, x, 0, -1, TK_I64(1), PH_DT_INT64)));
    tk_output(else_g, tk_op1(else_g, "Neg", gather(else_g, x, 0, -1, TK_I64(0), PH_DT_INT64)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Split), 1);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Squeeze), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Gather), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Gather), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gathers_to_split");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, scalar_indices_split_and_squeeze);
    tcase_add_test(tc, runs_of_indices_and_graph_outputs);
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
