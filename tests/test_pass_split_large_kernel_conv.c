/* tests/test_pass_split_large_kernel_conv.c - the split_large_kernel_conv pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;
static const char *const limit12[] = {"max_kernel_area", "12", NULL};

static void setup(void)
{
    pass = tk_pass_load("split_large_kernel_conv");
    pass->shapes = 1;
    pass->params = limit12;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* x [1,4,h,w] -> Relu -> Conv(W [6, 4/group, kh, kw], b) -> y; the Conv. */
static ph_node *conv(ph_graph *g, ph_value *x, int64_t kh, int64_t kw, int64_t group, int bias)
{
    ph_value *in[3] = {x, tk_init(g, "W", 4, TK_I64(6, 4 / group, kh, kw), 3), bias ? tk_init(g, "B", 1, TK_I64(6), 4) : NULL};
    ph_node *c = tk_node(g, "Conv", bias ? 3 : 2, in);
    if (group > 1)
        ck_assert_int_eq(ph_node_set_attr_int(c, "group", group), 0);
    tk_output(g, ph_node_output(c, 0));
    return c;
}

START_TEST(tiles_summed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 4, TK_I64(1, 4, 12, 13), NULL);
    ph_node *c = conv(g, x, 5, 5, 1, 1); /* 25 > 12: tiles of 2 rows (10) */
    ck_assert_int_eq(ph_node_set_attr_ints(c, "pads", 4, TK_I64(2, 1, 2, 3)), 0);
    ck_assert_int_eq(ph_node_set_attr_ints(c, "strides", 2, TK_I64(2, 1)), 0);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_int_eq(tk_count_op(g, PH_OP_Conv), 3);
    ck_assert_int_eq(tk_count_op(g, PH_OP_Add), 2);
    ck_assert_int_eq(tk_count_op(g, PH_OP_Pad), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    /* a row too wide: tiles of one row and columns; dilation and group */
    m = tk_model();
    g = ph_model_graph(m);
    x = tk_relu_input(g, 4, TK_I64(1, 4, 9, 30), NULL);
    c = conv(g, x, 2, 7, 2, 0);
    ck_assert_int_eq(ph_node_set_attr_ints(c, "dilations", 2, TK_I64(3, 2)), 0); /* spans 4 x 13 */
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_int_eq(tk_count_op(g, PH_OP_Conv), 4); /* 2 rows x (6 + 1) columns */
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 4, 8, 8));
    conv(g, x, 3, 3, 1, 1); /* 9 fits */
    ph_node *c = conv(g, x, 5, 5, 1, 0);
    ck_assert_int_eq(ph_node_set_attr_string(c, "auto_pad", "SAME_UPPER"), 0);
    conv(g, tk_input(g, "u", 4, TK_I64(1, 4, -1, 8)), 5, 5, 1, 0); /* an unknown dim */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_if_branches)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 4, 8, 8));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    conv(then_g, x, 4, 4, 1, 0);
    tk_output(else_g, tk_op1(else_g, "Neg", x));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_int_eq(tk_count_op(then_g, PH_OP_Conv), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_split_large_kernel_conv");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, tiles_summed);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
