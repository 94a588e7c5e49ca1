/* tests/test_pass_eliminate_nop_pool.c - the eliminate_nop_pool pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("eliminate_nop_pool"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* x [1,2,5,4] -> Relu -> POOL -> Neg -> y; returns the pool node. */
static ph_node *relu_pool_neg(ph_model *m, const char *op)
{
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 4, TK_I64(1, 2, 5, 4)));
    ph_node *pool = tk_node(g, op, 1, &r);
    ck_assert_int_eq(ph_node_set_attr_ints(pool, "kernel_shape", 2, TK_I64(1, 1)), 0);
    tk_output(g, tk_op1(g, "Neg", ph_node_output(pool, 0)));
    return pool;
}

static void set_ints(ph_node *n, const char *name, size_t count, const int64_t *v)
{
    ck_assert_int_eq(ph_node_set_attr_ints(n, name, count, v), 0);
}

START_TEST(maxpool_kernel1_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    relu_pool_neg(m, "MaxPool");
    ck_assert_int_eq(tk_pass_run_checked(pass, m, 11), 1);
    ck_assert_str_eq(tk_ops(ph_model_graph(m), ops, sizeof ops), "Relu,Neg");
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

/* Every attribute spelled out with its no-op value. */
START_TEST(averagepool_explicit_attrs_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_node *pool = relu_pool_neg(m, "AveragePool");
    set_ints(pool, "strides", 2, TK_I64(1, 1));
    set_ints(pool, "pads", 4, TK_I64(0, 0, 0, 0));
    ck_assert_int_eq(ph_node_set_attr_string(pool, "auto_pad", "VALID"), 0);
    ck_assert_int_eq(ph_node_set_attr_int(pool, "ceil_mode", 1), 0);
    ck_assert_int_eq(ph_node_set_attr_int(pool, "count_include_pad", 1), 0);
    ck_assert_int_eq(tk_pass_run_checked(pass, m, 12), 1);
    ck_assert_str_eq(tk_ops(ph_model_graph(m), ops, sizeof ops), "Relu,Neg");
    ph_model_free(m);
}
END_TEST

START_TEST(maxpool_unit_dilations_removed)
{
    ph_model *m = tk_model();
    ph_node *pool = relu_pool_neg(m, "MaxPool");
    set_ints(pool, "dilations", 2, TK_I64(1, 1));
    set_ints(pool, "strides", 2, TK_I64(1, 1));
    ck_assert_int_eq(tk_pass_run_checked(pass, m, 13), 1);
    ck_assert_uint_eq(tk_count_op(ph_model_graph(m), PH_OP_MaxPool), 0);
    ph_model_free(m);
}
END_TEST

/* The pool's output is a graph output: the Relu's value takes its name. */
START_TEST(pool_output_graph_output_redirected)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 4, TK_I64(2, 3, 2, 2)));
    ph_node *pool = tk_node(g, "AveragePool", 1, &r);
    set_ints(pool, "kernel_shape", 2, TK_I64(1, 1));
    tk_output(g, ph_node_output(pool, 0));
    char *name = strdup(ph_value_name(ph_node_output(pool, 0)));
    ck_assert_int_eq(tk_pass_run_checked(pass, m, 14), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* MaxPool declares its Indices output but nobody reads it. */
START_TEST(maxpool_unused_indices_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 4, TK_I64(1, 1, 3, 3)));
    ph_node *pool = ph_node_create(g, NULL, "MaxPool", 1, &r, 2);
    ck_assert_ptr_nonnull(pool);
    set_ints(pool, "kernel_shape", 2, TK_I64(1, 1));
    tk_output(g, tk_op1(g, "Neg", ph_node_output(pool, 0)));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ph_model_free(m);
}
END_TEST

/* Inside the 1-D case too: kernel [1] on [N,C,L]. */
START_TEST(pool_1d_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(1, 2, 7)));
    ph_node *pool = tk_node(g, "MaxPool", 1, &r);
    set_ints(pool, "kernel_shape", 1, TK_I64(1));
    set_ints(pool, "pads", 2, TK_I64(0, 0));
    tk_output(g, tk_op1(g, "Neg", ph_node_output(pool, 0)));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_MaxPool), 0);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases: the graph must come back untouched */

START_TEST(stride2_kept)
{
    ph_model *m = tk_model();
    set_ints(relu_pool_neg(m, "MaxPool"), "strides", 2, TK_I64(2, 2));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(stride_one_axis_kept)
{
    ph_model *m = tk_model();
    set_ints(relu_pool_neg(m, "AveragePool"), "strides", 2, TK_I64(1, 2));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(nonzero_pads_kept)
{
    ph_model *m = tk_model();
    set_ints(relu_pool_neg(m, "MaxPool"), "pads", 4, TK_I64(0, 0, 1, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(kernel_2_kept)
{
    ph_model *m = tk_model();
    set_ints(relu_pool_neg(m, "AveragePool"), "kernel_shape", 2, TK_I64(1, 2));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(dilation_2_kept)
{
    ph_model *m = tk_model();
    set_ints(relu_pool_neg(m, "MaxPool"), "dilations", 2, TK_I64(2, 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(missing_kernel_kept)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_node_remove_attr(relu_pool_neg(m, "MaxPool"), "kernel_shape"), 1);
    tk_assert_invalid_untouched(pass, m, "required attribute 'kernel_shape' (INTS) is missing");
    ph_model_free(m);
}
END_TEST

START_TEST(malformed_strides_kept)
{
    ph_model *m = tk_model();
    set_ints(relu_pool_neg(m, "MaxPool"), "strides", 3, TK_I64(1, 1, 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(maxpool_used_indices_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 4, TK_I64(1, 1, 3, 3)));
    ph_node *pool = ph_node_create(g, NULL, "MaxPool", 1, &r, 2);
    ck_assert_ptr_nonnull(pool);
    set_ints(pool, "kernel_shape", 2, TK_I64(1, 1));
    tk_output(g, tk_op1(g, "Neg", ph_node_output(pool, 0)));
    tk_output(g, ph_node_output(pool, 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Graph input straight to graph output: the output name cannot move. */
START_TEST(input_to_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 1, 3, 3));
    ph_node *pool = tk_node(g, "MaxPool", 1, &x);
    set_ints(pool, "kernel_shape", 2, TK_I64(1, 1));
    tk_output(g, ph_node_output(pool, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(other_domain_kept)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ck_assert_int_eq(ph_node_set_domain(relu_pool_neg(m, "MaxPool"), "com.example"), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(other_pools_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 4, TK_I64(1, 1, 3, 3)));
    ph_node *lp = tk_node(g, "LpPool", 1, &r);
    set_ints(lp, "kernel_shape", 2, TK_I64(1, 1));
    tk_output(g, ph_node_output(lp, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The demo CNN has one no-op MaxPool (kernel 1, stride 1) and a real one. */
START_TEST(cnn_nop_maxpool_removed)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/tests/models/cnn_small.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_MaxPool), 2);
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_MaxPool), 1);
    const int64_t *k;
    ck_assert_int_eq(ph_node_attr_ints(tk_find_op(g, PH_OP_MaxPool), "kernel_shape", &k), 2);
    ck_assert_int_eq(k[0], 3);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_pool");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, maxpool_kernel1_removed);
    tcase_add_test(tc, averagepool_explicit_attrs_removed);
    tcase_add_test(tc, maxpool_unit_dilations_removed);
    tcase_add_test(tc, pool_output_graph_output_redirected);
    tcase_add_test(tc, maxpool_unused_indices_removed);
    tcase_add_test(tc, pool_1d_removed);
    tcase_add_test(tc, stride2_kept);
    tcase_add_test(tc, stride_one_axis_kept);
    tcase_add_test(tc, nonzero_pads_kept);
    tcase_add_test(tc, kernel_2_kept);
    tcase_add_test(tc, dilation_2_kept);
    tcase_add_test(tc, missing_kernel_kept);
    tcase_add_test(tc, malformed_strides_kept);
    tcase_add_test(tc, maxpool_used_indices_kept);
    tcase_add_test(tc, input_to_output_kept);
    tcase_add_test(tc, other_domain_kept);
    tcase_add_test(tc, other_pools_kept);
    tcase_add_test(tc, cnn_nop_maxpool_removed);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
