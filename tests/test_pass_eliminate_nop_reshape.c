/* tests/test_pass_eliminate_nop_reshape.c - the eliminate_nop_reshape pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("eliminate_nop_reshape");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Reshape x to the constant target. */
static ph_value *reshape(ph_graph *g, ph_value *x, size_t n, const int64_t *target)
{
    return tk_op2(g, "Reshape", x, tk_ints(g, "target", n, target));
}

/* x [2,3,4] -> Relu -> Reshape [2,3,4] -> Neg -> y */
START_TEST(same_static_shape_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(2, 3, 4)));
    tk_output(g, tk_op1(g, "Neg", reshape(g, r, 3, TK_I64(2, 3, 4))));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0); /* the target was pruned */
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

/* [batch,3,4] -> Reshape [0,-1,4]: the inference proves [batch,3,4]. */
START_TEST(symbolic_zero_minus_one_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(-1, 3, 4));
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "batch"), 0);
    ph_value *r = tk_op1(g, "Relu", x);
    tk_output(g, tk_op1(g, "Neg", reshape(g, r, 3, TK_I64(0, -1, 4))));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 2, TK_I64(1, 3)), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ph_model_free(m);
}
END_TEST

/* Flatten of a 2-D tensor at axis 1, Squeeze with nothing to squeeze,
 * Unsqueeze of no axes: all keep the shape. */
START_TEST(flatten_squeeze_unsqueeze_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(5, 7)));
    ph_value *f = tk_op1(g, "Flatten", r);
    ph_value *s = tk_op1(g, "Squeeze", f);
    ph_value *u = tk_op2(g, "Unsqueeze", s, tk_ints(g, "axes", 0, NULL));
    tk_output(g, tk_op1(g, "Neg", u));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 3);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ph_model_free(m);
}
END_TEST

/* The Reshape's output is a graph output and also read by a node: the Relu
 * output takes over its name, and the other reader follows. */
START_TEST(graph_output_in_middle_redirected)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(3, 4)));
    ph_value *y = reshape(g, r, 2, TK_I64(3, 4));
    tk_output(g, y);
    tk_output(g, tk_op1(g, "Neg", y));
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* The target is shared with a Reshape that does change the shape: it stays. */
START_TEST(shared_target_kept_for_other_user)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *t = tk_ints(g, "target", 2, TK_I64(3, 4));
    ph_value *a = tk_op1(g, "Relu", tk_input(g, "a", 2, TK_I64(3, 4)));
    ph_value *b = tk_op1(g, "Relu", tk_input(g, "b", 2, TK_I64(4, 3)));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Reshape", a, t)));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Reshape", b, t)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Reshape), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(shape_changed_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(2, 3, 4)));
    tk_output(g, tk_op1(g, "Neg", reshape(g, r, 2, TK_I64(6, 4))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Same element count, same rank, dims permuted: still a real reshape. */
START_TEST(permuted_dims_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(3, 4)));
    tk_output(g, tk_op1(g, "Neg", reshape(g, r, 2, TK_I64(4, 3))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(input_to_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_output(g, reshape(g, tk_input(g, "x", 2, TK_I64(3, 4)), 2, TK_I64(3, 4)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The target comes from a graph input: the output shape is unknown. */
START_TEST(runtime_target_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(3, 4)));
    ph_value *t = ph_graph_add_input(g, "t", PH_DT_INT64, 1, TK_I64(2));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Reshape", r, t)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(unknown_input_shape_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", -1, NULL));
    tk_output(g, tk_op1(g, "Neg", reshape(g, r, 2, TK_I64(3, 4))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* [batch,4] -> Reshape(runtime) declared [seq,4]: different names. */
START_TEST(symbols_differ_by_name_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(-1, 4));
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "batch"), 0);
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *t = ph_graph_add_input(g, "t", PH_DT_INT64, 1, TK_I64(2));
    ph_value *y = tk_op2(g, "Reshape", r, t);
    tk_set_shape(y, 2, TK_I64(-1, 4));
    ck_assert_int_eq(ph_value_set_dim_param(y, 0, "seq"), 0);
    tk_output(g, tk_op1(g, "Neg", y));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Two unknown dims (no names) are not provably equal. */
START_TEST(unnamed_unknown_dims_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(-1, 4)));
    ph_value *t = ph_graph_add_input(g, "t", PH_DT_INT64, 1, TK_I64(2));
    ph_value *y = tk_op2(g, "Reshape", r, t);
    tk_set_shape(y, 2, TK_I64(-1, 4));
    tk_output(g, tk_op1(g, "Neg", y));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(squeeze_that_squeezes_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(2, 1, 4)));
    tk_output(g, tk_op1(g, "Neg", tk_op1(g, "Squeeze", r)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(other_domain_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(3, 4)));
    ph_value *y = reshape(g, r, 2, TK_I64(3, 4));
    ck_assert_int_eq(ph_node_set_domain(ph_value_producer(y), "com.example"), 0);
    tk_set_shape(y, 2, TK_I64(3, 4));
    tk_output(g, tk_op1(g, "Neg", y));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_reshape");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, same_static_shape_removed);
    tcase_add_test(tc, symbolic_zero_minus_one_removed);
    tcase_add_test(tc, flatten_squeeze_unsqueeze_removed);
    tcase_add_test(tc, graph_output_in_middle_redirected);
    tcase_add_test(tc, shared_target_kept_for_other_user);
    tcase_add_test(tc, shape_changed_kept);
    tcase_add_test(tc, permuted_dims_kept);
    tcase_add_test(tc, input_to_output_kept);
    tcase_add_test(tc, runtime_target_kept);
    tcase_add_test(tc, unknown_input_shape_kept);
    tcase_add_test(tc, symbols_differ_by_name_kept);
    tcase_add_test(tc, unnamed_unknown_dims_kept);
    tcase_add_test(tc, squeeze_that_squeezes_kept);
    tcase_add_test(tc, other_domain_kept);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
