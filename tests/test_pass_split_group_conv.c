/* tests/test_pass_split_group_conv.c - split_group_conv: a grouped Conv
 * becomes Split + Conv per group + Concat. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("split_group_conv");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Conv(x [.., C, ..], w [M, C/g, 3 (x nd)], b?) {group g, pads 1}; nd spatial dims. */
static ph_node *group_conv(ph_graph *g, ph_value *x, int nd, int64_t C, int64_t M, int64_t group, int bias,
                           const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "%s_w", tag);
    ph_value *in[3] = {x, tk_init(g, name, 2 + nd, TK_I64(M, C / group, 3, 3, 3), 3)};
    snprintf(name, sizeof name, "%s_b", tag);
    if (bias)
        in[2] = tk_init(g, name, 1, TK_I64(M), 4);
    ph_node *n = tk_node(g, "Conv", bias ? 3 : 2, in);
    ph_node_set_attr_int(n, "group", group);
    ph_node_set_attr_ints(n, "pads", 2 * (size_t)nd, TK_I64(1, 1, 1, 1, 1, 1));
    return n;
}

START_TEST(splits)
{
    for (int v = 0; v < 5; v++) {
        ph_model *m = tk_model();
        if (v == 1)
            ph_model_set_opset(m, "", 11); /* Split sizes as an attribute */
        ph_graph *g = ph_model_graph(m);
        int nd = v == 2 ? 1 : 2;
        int64_t group = v == 3 ? 4 : 2;
        ph_value *x = tk_input(g, "x", 2 + nd, TK_I64(2, 8, 7, 6));
        ph_node *conv = group_conv(g, x, nd, 8, 12, group, v != 4, "a");
        if (v == 3) {
            ph_node_set_attr_ints(conv, "strides", 2, TK_I64(2, 1));
            ph_node_set_attr_ints(conv, "dilations", 2, TK_I64(1, 2));
        }
        ph_value *y = ph_node_output(conv, 0);
        tk_output(g, y);
        char *name = strdup(ph_value_name(y));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 3 + (uint64_t)v, 0, NULL), 1);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Split), 1);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Conv), (size_t)group);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Concat), 1);
        ph_node *c = tk_find_op(g, PH_OP_Conv);
        ck_assert_int_eq(ph_node_attr_int(c, "group", 1), 1);
        ck_assert_int_eq(ph_tensor_dim(ph_value_const(ph_node_input(c, 1)), 0), 12 / group);
        ck_assert_uint_eq(ph_node_input_count(tk_find_op(g, PH_OP_Split)), v == 1 ? 1 : 2);
        ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
        free(name);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(depthwise_when_asked)
{
    const char *params[] = {"depthwise", "true", NULL};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(-1, 3, 5, 5));
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "N"), 0);
    tk_output(g, tk_op1(g, "Relu", ph_node_output(group_conv(g, x, 2, 3, 6, 3, 1, "a"), 0)));
    pass->params = params;
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 8, 2, TK_I64(1, 2)), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Conv), 3);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    const char *few[] = {"max_groups", "2", NULL};
    for (int v = 0; v < 6; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 8, 5, 5));
        ph_node *conv = group_conv(g, x, 2, 8, 8, 2, 1, "a");
        tk_output(g, ph_node_output(conv, 0));
        pass->params = NULL;
        switch (v) {
        case 0: /* group 1 */
            ph_node_set_input(conv, 1, tk_init(g, "w1", 4, TK_I64(8, 8, 3, 3), 9));
            ph_node_set_attr_int(conv, "group", 1);
            break;
        case 1: /* the weight is not constant */
            ph_node_set_input(conv, 1, tk_input(g, "w", 4, TK_I64(8, 4, 3, 3)));
            break;
        case 2: /* the bias is not constant */
            ph_node_set_input(conv, 2, tk_input(g, "b", 1, TK_I64(8)));
            break;
        case 3: /* more groups than max_groups */
            ph_node_set_input(conv, 1, tk_init(g, "w4", 4, TK_I64(8, 2, 3, 3), 9));
            ph_node_set_attr_int(conv, "group", 4);
            pass->params = few;
            break;
        case 4: { /* bfloat16 */
            ph_value *xb = ph_graph_add_input(g, "xb", PH_DT_BFLOAT16, 4, TK_I64(1, 8, 5, 5));
            uint16_t wv[8 * 4 * 9] = {0};
            ph_value *in[2] = {xb, ph_graph_add_initializer(g, "wb", ph_tensor_new(PH_DT_BFLOAT16, 4, TK_I64(8, 4, 3, 3), wv))};
            ph_node *cb = tk_node(g, "Conv", 2, in);
            ph_node_set_attr_int(cb, "group", 2);
            tk_output(g, ph_node_output(cb, 0));
            ph_node_set_attr_int(conv, "group", 1);
            ph_node_set_input(conv, 1, tk_init(g, "w1", 4, TK_I64(8, 8, 3, 3), 9));
            break;
        }
        case 5: /* depthwise, not asked for */
            ph_node_set_input(conv, 1, tk_init(g, "wd", 4, TK_I64(8, 1, 3, 3), 9));
            ph_node_set_attr_int(conv, "group", 8);
            break;
        }
        ck_assert_int_eq(ph_graph_toposort(g), 0);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 4, 5, 5));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, ph_node_output(group_conv(then_g, x, 2, 4, 4, 2, 1, "t"), 0));
    tk_output(else_g, ph_node_output(group_conv(else_g, x, 2, 4, 4, 2, 0, "e"), 0));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Conv), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Split), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Conv), 2);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Concat), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("split_group_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, splits);
    tcase_add_test(tc, depthwise_when_asked);
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
