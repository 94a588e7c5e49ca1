/* tests/test_pass_slices_to_split.c - slices_to_split: Slices of one tensor
 * that partition one axis become one Split. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("slices_to_split");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Slice of x on one axis [s, e) */
static ph_value *cut(ph_graph *g, ph_value *x, int64_t axis, int64_t s, int64_t e)
{
    return tk_slice(g, x, 1, TK_I64(s), TK_I64(e), TK_I64(axis), NULL);
}

/* The Split's sizes (input or attribute) into out; their count. */
static ptrdiff_t split_sizes(const ph_node *split, int64_t *out)
{
    if (ph_node_input_count(split) > 1)
        return ph_value_const_ints(ph_node_input(split, 1), out, NULL, 16);
    const int64_t *v;
    ptrdiff_t n = ph_node_attr_ints(split, "split", &v);
    if (n > 0)
        memcpy(out, v, (size_t)n * sizeof *v);
    return n;
}

START_TEST(three_slices_become_one_split)
{
    char ops[256];
    int64_t sz[16];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 6, 3));
    /* out of order, negative and clamped bounds */
    tk_neg_output(g, cut(g, x, 1, 5, INT64_MAX));
    tk_neg_output(g, cut(g, x, -2, -6, -4));
    tk_neg_output(g, cut(g, x, 1, 2, 5));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Split,Neg,Neg,Neg");
    ph_node *split = tk_find_op(g, PH_OP_Split);
    ck_assert_int_eq(ph_node_attr_int(split, "axis", -1), 1);
    ck_assert_int_eq(split_sizes(split, sz), 3);
    ck_assert_int_eq(sz[0], 2);
    ck_assert_int_eq(sz[1], 3);
    ck_assert_int_eq(sz[2], 1);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1); /* only the sizes are left */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_outputs_and_other_readers_keep_working)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(4, 5));
    ph_value *a = cut(g, x, 0, 0, 1), *b = cut(g, x, 0, 1, 4);
    tk_output(g, a);
    tk_output(g, b);
    tk_neg_output(g, b);
    tk_neg_output(g, x); /* x has another reader */
    char *na = strdup(ph_value_name(a)), *nb = strdup(ph_value_name(b));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), na);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 1)), nb);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Slice), 0);
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(g, 0)), tk_find_op(g, PH_OP_Split));
    free(na);
    free(nb);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(forms_and_opsets)
{
    int64_t sz[16];
    for (int variant = 0; variant < 4; variant++) {
        int64_t opset = variant == 1 ? 11 : variant == 2 ? 9 : 17;
        ph_model *m = ph_model_new(opset);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 3, TK_I64(3, 4, 2));
        for (int k = 0; k < 2; k++) {
            ph_value *y;
            if (variant == 2) { /* opset 9: attributes */
                ph_node *s = tk_node(g, "Slice", 1, &x);
                ph_node_set_attr_ints(s, "starts", 1, TK_I64(k ? 1 : 0));
                ph_node_set_attr_ints(s, "ends", 1, TK_I64(k ? 4 : 1));
                ph_node_set_attr_ints(s, "axes", 1, TK_I64(1));
                y = ph_node_output(s, 0);
            } else if (variant == 3) { /* a second axis named, whole; steps given */
                y = tk_slice(g, x, 2, TK_I64(0, k ? 1 : 0), TK_I64(3, k ? 4 : 1), TK_I64(0, 1), TK_I64(1, 1));
            } else {
                y = cut(g, x, 1, k ? 1 : 0, k ? 4 : 1);
            }
            tk_neg_output(g, y);
        }
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
        ph_node *split = tk_find_op(g, PH_OP_Split);
        ck_assert_ptr_nonnull(split);
        ck_assert_uint_eq(ph_node_input_count(split), opset >= 13 ? 2 : 1);
        ck_assert_int_eq(split_sizes(split, sz), 2);
        ck_assert_int_eq(sz[0], 1);
        ck_assert_int_eq(sz[1], 3);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(two_axes_two_splits_and_many_pieces)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(4, 60));
    tk_neg_output(g, cut(g, x, 0, 0, 2));
    tk_neg_output(g, cut(g, x, 0, 2, 4));
    for (int64_t i = 0; i < 60; i++)
        tk_neg_output(g, cut(g, x, 1, i, i + 1));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 2);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Split), 2);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Slice), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 10; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        int64_t d1 = variant == 5 ? -1 : 6;
        ph_value *x = tk_input(g, "x", variant == 9 ? -1 : 2, TK_I64(2, d1));
        ph_value *a = NULL, *b = NULL;
        switch (variant) {
        case 0: /* a gap */
            a = cut(g, x, 1, 0, 2), b = cut(g, x, 1, 3, 6);
            break;
        case 1: /* an overlap */
            a = cut(g, x, 1, 0, 3), b = cut(g, x, 1, 2, 6);
            break;
        case 2: /* step 2 */
            a = cut(g, x, 1, 0, 3);
            b = tk_slice(g, x, 1, TK_I64(3), TK_I64(6), TK_I64(1), TK_I64(2));
            tk_neg_output(g, tk_slice(g, x, 1, TK_I64(4), TK_I64(6), TK_I64(1), NULL));
            break;
        case 3: { /* starts not constant */
            a = cut(g, x, 1, 0, 3);
            ph_value *st = ph_graph_add_input(g, "st", PH_DT_INT64, 1, TK_I64(1));
            ph_value *in[4] = {x, st, tk_ints(g, "e", 1, TK_I64(6)), tk_ints(g, "ax", 1, TK_I64(1))};
            b = ph_node_output(tk_node(g, "Slice", 4, in), 0);
            break;
        }
        case 4: /* different axes */
            a = cut(g, x, 1, 0, 3), b = cut(g, x, 0, 1, 2);
            break;
        case 5: /* the axis' dim is unknown */
            a = cut(g, x, 1, 0, 3), b = cut(g, x, 1, 3, 6);
            break;
        case 6: /* a single Slice (the rest is not read) */
            a = cut(g, x, 1, 0, 6), b = tk_op1(g, "Relu", x);
            break;
        case 7: /* two axes cut in one Slice */
            a = tk_slice(g, x, 2, TK_I64(0, 0), TK_I64(1, 3), TK_I64(0, 1), NULL);
            b = tk_slice(g, x, 2, TK_I64(1, 3), TK_I64(2, 6), TK_I64(0, 1), NULL);
            break;
        case 8: /* an empty Slice among them */
            a = cut(g, x, 1, 0, 6), b = cut(g, x, 1, 6, 6);
            break;
        case 9: /* x's rank unknown: no rewrite, and none reported (the pass
                 * once counted every such x as one, in every round) */
            a = cut(g, x, 1, 0, 3), b = cut(g, x, 1, 3, 6);
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
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 6));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op2(then_g, "Add", cut(then_g, x, 1, 0, 3), cut(then_g, x, 1, 3, 6)));
    tk_output(else_g, tk_op2(else_g, "Sub", cut(else_g, x, 1, 0, 3), cut(else_g, x, 1, 3, 6)));
    tk_output(g, ph_node_output(iff, 0));
    tk_neg_output(g, cut(g, x, 1, 0, 3)); /* the outer Slice alone is no partition */
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Split), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Split), 1);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Slice), 0);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Slice), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("slices_to_split");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, three_slices_become_one_split);
    tcase_add_test(tc, graph_outputs_and_other_readers_keep_working);
    tcase_add_test(tc, forms_and_opsets);
    tcase_add_test(tc, two_axes_two_splits_and_many_pieces);
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
