/* tests/test_pass_conv_after_gap_to_gemm.c - conv_after_gap_to_gemm: a 1x1
 * Conv after global pooling becomes Flatten + Gemm + Reshape. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("conv_after_gap_to_gemm");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* pool(x) -> Conv(w [M,C,1..], b?) with x of rank r; returns the Conv. */
static ph_node *gap_conv(ph_graph *g, ph_value *x, const char *pool, int r, int64_t C, int64_t M, int bias,
                         const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "%s_w", tag);
    ph_value *in[3] = {tk_op1(g, pool, x), tk_init(g, name, r, TK_I64(M, C, 1, 1, 1), 3)};
    snprintf(name, sizeof name, "%s_b", tag);
    if (bias)
        in[2] = tk_init(g, name, 1, TK_I64(M), 4);
    return tk_node(g, "Conv", bias ? 3 : 2, in);
}

START_TEST(folds)
{
    char ops[256];
    for (int v = 0; v < 6; v++) {
        ph_model *m = tk_model();
        if (v == 5)
            ph_model_set_opset(m, "", 10); /* Gemm needs C below 11 */
        ph_graph *g = ph_model_graph(m);
        int r = v == 3 ? 3 : 4;
        ph_value *x = tk_input(g, "x", r, TK_I64(2, 6, 3, 3));
        ph_node *conv = gap_conv(g, x, v & 1 ? "GlobalMaxPool" : "GlobalAveragePool", r, 6, 5, v != 2 && v != 5, "a");
        if (v == 4) { /* strides and explicit zero pads are fine on a 1x1 input */
            ph_node_set_attr_ints(conv, "strides", 2, TK_I64(2, 2));
            ph_node_set_attr_ints(conv, "pads", 4, TK_I64(0, 0, 0, 0));
            ph_node_set_attr_ints(conv, "kernel_shape", 2, TK_I64(1, 1));
        }
        tk_output(g, tk_op1(g, "Relu", ph_node_output(conv, 0)));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 11 + (uint64_t)v, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops),
                         v & 1 ? "GlobalMaxPool,Flatten,Gemm,Reshape,Relu" : "GlobalAveragePool,Flatten,Gemm,Reshape,Relu");
        ph_node *gemm = tk_find_op(g, PH_OP_Gemm);
        ck_assert_int_eq(ph_node_attr_int(gemm, "transB", 0), 1);
        ck_assert_uint_eq(ph_node_input_count(gemm), v == 2 ? 2 : 3);
        ph_value *out = ph_node_output(tk_find_op(g, PH_OP_Reshape), 0);
        ck_assert_int_eq(ph_value_rank(out), r);
        ck_assert_int_eq(ph_value_dim(out, 1), 5);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(pool_shared_and_output_name_kept)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(-1, 4, 5, 5));
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "N"), 0);
    ph_node *conv = gap_conv(g, x, "GlobalAveragePool", 4, 4, 3, 1, "a");
    ph_value *y = ph_node_output(conv, 0);
    tk_output(g, y);
    tk_output(g, ph_node_input(conv, 0)); /* the pooled value is also an output */
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 7, 2, TK_I64(1, 2)), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "GlobalAveragePool,Flatten,Gemm,Reshape");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_str_eq(ph_value_dim_param(ph_graph_output(g, 0), 0), "N");
    free(name);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int v = 0; v < 8; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", v == 3 ? -1 : 4, TK_I64(2, 4, 3, 3));
        ph_node *conv = gap_conv(g, x, "GlobalAveragePool", 4, 4, 4, 1, "a");
        tk_output(g, ph_node_output(conv, 0));
        switch (v) {
        case 0: /* a 3x3 kernel with pads */
            ph_node_set_input(conv, 1, tk_init(g, "w3", 4, TK_I64(4, 4, 3, 3), 9));
            ph_node_set_attr_ints(conv, "pads", 4, TK_I64(1, 1, 1, 1));
            break;
        case 1: /* a 1x1 kernel with pads: the output grows */
            ph_node_set_attr_ints(conv, "pads", 4, TK_I64(1, 1, 1, 1));
            break;
        case 2: /* grouped */
            ph_node_set_input(conv, 1, tk_init(g, "wg", 4, TK_I64(4, 2, 1, 1), 9));
            ph_node_set_attr_int(conv, "group", 2);
            break;
        case 3: /* unknown rank */
            break;
        case 4: /* the weight is not constant */
            ph_node_set_input(conv, 1, tk_input(g, "w", 4, TK_I64(4, 4, 1, 1)));
            break;
        case 5: /* the bias is not constant */
            ph_node_set_input(conv, 2, tk_input(g, "b", 1, TK_I64(4)));
            break;
        case 6: { /* bfloat16: Conv has no such dtype here */
            ph_value *xb = ph_graph_add_input(g, "xb", PH_DT_BFLOAT16, 4, TK_I64(2, 4, 3, 3));
            uint16_t wv[16] = {0};
            ph_value *in[2] = {tk_op1(g, "GlobalAveragePool", xb),
                               ph_graph_add_initializer(g, "wb", ph_tensor_new(PH_DT_BFLOAT16, 4, TK_I64(4, 4, 1, 1), wv))};
            tk_output(g, ph_node_output(tk_node(g, "Conv", 2, in), 0));
            ph_node_set_input(conv, 1, tk_input(g, "w", 4, TK_I64(4, 4, 1, 1)));
            break;
        }
        case 7: /* no global pooling before the Conv */
            ph_node_set_input(conv, 0, tk_op1(g, "Relu", x));
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
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 6, 3, 3));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, ph_node_output(gap_conv(then_g, x, "GlobalAveragePool", 4, 6, 5, 1, "t"), 0));
    tk_output(else_g, ph_node_output(gap_conv(else_g, x, "GlobalMaxPool", 4, 6, 5, 0, "e"), 0));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Conv), 0);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Gemm), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Conv), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Gemm), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("conv_after_gap_to_gemm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, folds);
    tcase_add_test(tc, pool_shared_and_output_name_kept);
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
