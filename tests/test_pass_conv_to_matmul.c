/* tests/test_pass_conv_to_matmul.c - conv_to_matmul: a Conv with stride =
 * kernel becomes Reshape/Transpose/MatMul. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("conv_to_matmul");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Conv(x, w [M,C,k,k], b?) {strides [k,k]}; returns the node. */
static ph_node *patch_conv(ph_graph *g, ph_value *x, int64_t C, int64_t M, int64_t k, int bias, const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "%s_w", tag);
    ph_value *in[3] = {x, tk_init(g, name, 4, TK_I64(M, C, k, k), 3)};
    snprintf(name, sizeof name, "%s_b", tag);
    if (bias)
        in[2] = tk_init(g, name, 1, TK_I64(M), 4);
    ph_node *n = tk_node(g, "Conv", bias ? 3 : 2, in);
    ph_node_set_attr_ints(n, "strides", 2, TK_I64(k, k));
    return n;
}

START_TEST(default_limit_15)
{
    char ops[256];
    for (int v = 0; v < 3; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        /* v 1: 34 x 33 leaves rows and columns the Conv never reads */
        ph_value *x = tk_input(g, "x", 4, v == 1 ? TK_I64(2, 3, 34, 33) : TK_I64(2, 3, 32, 32));
        ph_node *conv = patch_conv(g, x, 3, 4, 16, v != 2, "a");
        if (v == 2) {
            ph_node_set_attr_ints(conv, "kernel_shape", 2, TK_I64(16, 16));
            ph_node_set_attr_ints(conv, "pads", 4, TK_I64(0, 0, 0, 0));
            ph_node_set_attr_ints(conv, "dilations", 2, TK_I64(1, 1));
            ph_node_set_attr_string(conv, "auto_pad", "VALID");
        }
        ph_value *y = ph_node_output(conv, 0);
        tk_output(g, y);
        char *name = strdup(ph_value_name(y));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 5 + (uint64_t)v, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops),
                         v == 0 ? "Reshape,Transpose,Reshape,MatMul,Add,Reshape"
                         : v == 1 ? "Slice,Reshape,Transpose,Reshape,MatMul,Add,Reshape"
                                  : "Reshape,Transpose,Reshape,MatMul,Reshape");
        ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
        ph_value *out = ph_graph_output(g, 0);
        ck_assert_int_eq(ph_value_dim(out, 2), 2);
        ck_assert_int_eq(ph_value_dim(out, 3), 2);
        free(name);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(lower_limit_symbolic_batch)
{
    const char *params[] = {"min_kernel", "4", NULL};
    pass->params = params;
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(-1, 5, 12, 8));
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "N"), 0);
    ph_node *conv = patch_conv(g, x, 5, 6, 4, 1, "a");
    tk_output(g, tk_op1(g, "Relu", ph_node_output(conv, 0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 9, 2, TK_I64(1, 3)), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Conv), 0);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_MatMul), 1);
    ck_assert_str_eq(ph_value_dim_param(ph_graph_output(g, 0), 0), "N");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int v = 0; v < 11; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", v == 5 ? -1 : 4, TK_I64(1, 2, v == 6 ? -1 : 32, 32));
        ph_node *conv = patch_conv(g, x, 2, 3, 16, 1, "a");
        tk_output(g, ph_node_output(conv, 0));
        switch (v) {
        case 0: /* a kernel under the limit */
            ph_node_set_input(conv, 1, tk_init(g, "w8", 4, TK_I64(3, 2, 8, 8), 9));
            ph_node_set_attr_ints(conv, "strides", 2, TK_I64(8, 8));
            break;
        case 1: /* overlapping patches: stride < kernel */
            ph_node_set_attr_ints(conv, "strides", 2, TK_I64(8, 16));
            break;
        case 2: /* pads */
            ph_node_set_attr_ints(conv, "pads", 4, TK_I64(0, 1, 0, 1));
            break;
        case 3: /* dilations */
            ph_node_set_input(conv, 0, tk_input(g, "x2", 4, TK_I64(1, 2, 64, 64)));
            ph_node_set_attr_ints(conv, "dilations", 2, TK_I64(2, 2));
            break;
        case 4: /* grouped */
            ph_node_set_input(conv, 1, tk_init(g, "wg", 4, TK_I64(2, 1, 16, 16), 9));
            ph_node_set_input(conv, 2, tk_init(g, "bg", 1, TK_I64(2), 9));
            ph_node_set_attr_int(conv, "group", 2);
            break;
        case 5: /* unknown rank */
        case 6: /* unknown height */
            break;
        case 7: /* the weight is not constant */
            ph_node_set_input(conv, 1, tk_input(g, "w", 4, TK_I64(3, 2, 16, 16)));
            break;
        case 8: /* auto_pad SAME_UPPER */
            ph_node_set_attr_string(conv, "auto_pad", "SAME_UPPER");
            break;
        case 9: { /* bfloat16 */
            ph_value *xb = ph_graph_add_input(g, "xb", PH_DT_BFLOAT16, 4, TK_I64(1, 2, 32, 32));
            uint16_t *wv = calloc(3 * 2 * 16 * 16, sizeof *wv);
            ph_value *in[2] = {xb, ph_graph_add_initializer(g, "wb", ph_tensor_new(PH_DT_BFLOAT16, 4, TK_I64(3, 2, 16, 16), wv))};
            free(wv);
            ph_node *cb = tk_node(g, "Conv", 2, in);
            ph_node_set_attr_ints(cb, "strides", 2, TK_I64(16, 16));
            tk_output(g, ph_node_output(cb, 0));
            ph_node_set_input(conv, 1, tk_input(g, "w", 4, TK_I64(3, 2, 16, 16)));
            break;
        }
        case 10: /* no strides: stride 1 */
            ph_node_remove_attr(conv, "strides");
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
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 32, 32));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, ph_node_output(patch_conv(then_g, x, 2, 3, 16, 1, "t"), 0));
    tk_output(else_g, ph_node_output(patch_conv(else_g, x, 2, 3, 16, 0, "e"), 0));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Conv), 0);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_MatMul), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Conv), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_MatMul), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("conv_to_matmul");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, default_limit_15);
    tcase_add_test(tc, lower_limit_symbolic_batch);
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
