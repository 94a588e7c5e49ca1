/* tests/test_pass_reducemean_to_pool.c - reducemean_to_pool: ReduceMean over
 * the spatial axes becomes GlobalAveragePool (AveragePool for 3-D). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("reducemean_to_pool");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* ReduceMean of x over axes (n = 0: none given), keepdims k (< 0: absent). */
static ph_value *mean(ph_graph *g, ph_value *x, size_t n, const int64_t *axes, int keep, int64_t opset)
{
    ph_value *in[2] = {x, opset >= 18 && n ? tk_ints(g, "axes", n, axes) : NULL};
    ph_node *node = tk_node(g, "ReduceMean", in[1] ? 2 : 1, in);
    if (opset < 18 && n)
        ph_node_set_attr_ints(node, "axes", n, axes);
    if (keep >= 0)
        ph_node_set_attr_int(node, "keepdims", keep);
    return ph_node_output(node, 0);
}

START_TEST(spatial_means_become_pools)
{
    char ops[256];
    static const struct {
        int rank, keep;
        int64_t opset, axes[3];
        const char *ops;
    } cases[] = {
        {4, -1, 17, {2, 3}, "GlobalAveragePool,Neg"},
        {4, 1, 13, {-1, -2}, "GlobalAveragePool,Neg"},
        {4, 0, 17, {3, 2}, "GlobalAveragePool,Squeeze,Neg"},
        {4, 0, 11, {2, 3}, "GlobalAveragePool,Squeeze,Neg"},
        {3, 1, 17, {2}, "AveragePool,Neg"},
        {3, 0, 17, {-1}, "AveragePool,Squeeze,Neg"},
        {5, 1, 17, {2, 3, 4}, "GlobalAveragePool,Neg"},
        {4, 1, 18, {2, 3}, "GlobalAveragePool,Neg"},
        {4, 0, 18, {2, 3}, "GlobalAveragePool,Squeeze,Neg"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ph_model *m = ph_model_new(cases[c].opset);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", cases[c].rank, TK_I64(2, 3, 7, 5, 2));
        ph_value *y = mean(g, x, (size_t)cases[c].rank - 2, cases[c].axes, cases[c].keep, cases[c].opset);
        tk_neg_output(g, y);
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 10 + c, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), cases[c].ops);
        if (cases[c].rank == 3) {
            const int64_t *k;
            ck_assert_int_eq(ph_node_attr_ints(tk_find_op(g, PH_OP_AveragePool), "kernel_shape", &k), 1);
            ck_assert_int_eq(k[0], 7);
        }
        ph_node *sq = tk_find_op(g, PH_OP_Squeeze);
        if (sq)
            ck_assert_uint_eq(ph_node_input_count(sq), cases[c].opset >= 13 ? 2 : 1);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *y = mean(g, tk_input(g, "x", 4, TK_I64(1, 2, 3, 3)), 2, TK_I64(2, 3), 0, 17);
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 8; variant++) {
        ph_model *m = ph_model_new(variant == 6 ? 18 : 17);
        ph_graph *g = ph_model_graph(m);
        ph_value *x, *y;
        switch (variant) {
        case 0: /* the channel axis too */
            x = tk_input(g, "x", 4, TK_I64(1, 2, 3, 3));
            y = mean(g, x, 3, TK_I64(1, 2, 3), 1, 17);
            break;
        case 1: /* W only */
            x = tk_input(g, "x", 4, TK_I64(1, 2, 3, 3));
            y = mean(g, x, 1, TK_I64(3), 1, 17);
            break;
        case 2: /* rank unknown */
            x = tk_input(g, "x", -1, NULL);
            y = mean(g, x, 2, TK_I64(2, 3), 1, 17);
            break;
        case 3: /* 3-D with D unknown */
            x = tk_input(g, "x", 3, TK_I64(1, 2, -1));
            y = mean(g, x, 1, TK_I64(2), 1, 17);
            break;
        case 4: /* an integer dtype */
            x = ph_graph_add_input(g, "x", PH_DT_INT32, 4, TK_I64(1, 2, 3, 3));
            y = mean(g, x, 2, TK_I64(2, 3), 1, 17);
            break;
        case 5: /* no axes: every axis */
            x = tk_input(g, "x", 4, TK_I64(1, 2, 3, 3));
            y = mean(g, x, 0, NULL, 1, 17);
            break;
        case 6: { /* opset 18, axes not constant */
            x = tk_input(g, "x", 4, TK_I64(1, 2, 3, 3));
            ph_value *in[2] = {x, ph_graph_add_input(g, "axes", PH_DT_INT64, 1, TK_I64(2))};
            y = ph_node_output(tk_node(g, "ReduceMean", 2, in), 0);
            break;
        }
        default: /* a 2-D mean */
            x = tk_input(g, "x", 2, TK_I64(2, 3));
            y = mean(g, x, 1, TK_I64(1), 1, 17);
            break;
        }
        tk_neg_output(g, y);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 3, 3));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, mean(then_g, x, 2, TK_I64(2, 3), 1, 17));
    tk_output(else_g, tk_op1(else_g, "Neg", mean(else_g, x, 2, TK_I64(-2, -1), 1, 17)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_GlobalAveragePool), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_GlobalAveragePool), 1);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_ReduceMean), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("reducemean_to_pool");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, spatial_means_become_pools);
    tcase_add_test(tc, graph_output_keeps_its_name);
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
