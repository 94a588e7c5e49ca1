/* tests/test_pass_eliminate_nop_slice.c - the eliminate_nop_slice pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

#define I64MAX INT64_MAX
#define I64MIN INT64_MIN

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("eliminate_nop_slice");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

START_TEST(whole_axis_int64max_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    tk_neg_output(g, tk_slice(g, r, 1, TK_I64(0), TK_I64(I64MAX), TK_I64(1), NULL));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

/* Exact ends, clamped ends, negative starts, explicit unit steps. */
START_TEST(known_dims_exact_and_clamped_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 3, TK_I64(3, 4, 5), NULL);
    ph_value *a = tk_slice(g, r, 2, TK_I64(0, 0), TK_I64(3, 4), NULL, NULL);
    ph_value *b = tk_slice(g, a, 2, TK_I64(-3, -100), TK_I64(100, 5), TK_I64(0, -1), TK_I64(1, 1));
    tk_neg_output(g, b);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 2);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Slice), 0);
    ph_model_free(m);
}
END_TEST

/* An axis of one element: any positive step keeps it. */
START_TEST(one_element_axis_step2_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(1, 4), NULL);
    tk_neg_output(g, tk_slice(g, r, 1, TK_I64(0), TK_I64(I64MAX), TK_I64(0), TK_I64(2)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ph_model_free(m);
}
END_TEST

/* [batch,4]: start 0 or INT64_MIN, end INT64_MAX or INT32_MAX on the
 * symbolic axis. */
START_TEST(symbolic_axis_sentinels_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(-1, 4), "batch");
    ph_value *a = tk_slice(g, r, 1, TK_I64(0), TK_I64(I64MAX), NULL, NULL);
    ph_value *b = tk_slice(g, a, 2, TK_I64(I64MIN, 0), TK_I64(INT32_MAX, 4), NULL, NULL);
    tk_neg_output(g, b);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 2, TK_I64(1, 5)), 2);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Slice), 0);
    ph_model_free(m);
}
END_TEST

/* ends = Shape(x)[0:1], i.e. [batch], on the batch axis. */
START_TEST(symbolic_end_same_dim_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(-1, 4), "batch");
    ph_value *shape = tk_op1(g, "Shape", r);
    ph_value *sin[3] = {shape, tk_ints(g, "s0", 1, TK_I64(0)), tk_ints(g, "e1", 1, TK_I64(1))};
    ph_value *end = ph_node_output(tk_node(g, "Slice", 3, sin), 0);
    ph_value *in[4] = {r, tk_ints(g, "starts", 1, TK_I64(0)), end, tk_ints(g, "axes", 1, TK_I64(0))};
    tk_neg_output(g, ph_node_output(tk_node(g, "Slice", 4, in), 0));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 2, TK_I64(2, 3)), 1);
    /* the Shape -> Slice chain that computed the end went with it */
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_output_in_middle_redirected)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *y = tk_slice(g, r, 1, TK_I64(0), TK_I64(4), TK_I64(1), NULL);
    tk_output(g, y);
    tk_neg_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(g, 0)), tk_find_op(g, PH_OP_Relu));
    free(name);
    ph_model_free(m);
}
END_TEST

/* Opset 9: starts/ends/axes are attributes. */
START_TEST(opset9_attributes_removed)
{
    ph_model *m = ph_model_new(9);
    ck_assert_ptr_nonnull(m);
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_node *s = tk_node(g, "Slice", 1, &r);
    ck_assert_int_eq(ph_node_set_attr_ints(s, "starts", 1, TK_I64(0)), 0);
    ck_assert_int_eq(ph_node_set_attr_ints(s, "ends", 1, TK_I64(I64MAX)), 0);
    ck_assert_int_eq(ph_node_set_attr_ints(s, "axes", 1, TK_I64(-1)), 0);
    tk_neg_output(g, ph_node_output(s, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Slice), 0);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(partial_slice_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    tk_neg_output(g, tk_slice(g, r, 1, TK_I64(0), TK_I64(3), TK_I64(1), NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(start_one_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(-1, 4), "batch");
    tk_neg_output(g, tk_slice(g, r, 1, TK_I64(1), TK_I64(I64MAX), NULL, NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(step2_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    tk_neg_output(g, tk_slice(g, r, 1, TK_I64(0), TK_I64(I64MAX), TK_I64(1), TK_I64(2)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The whole axis reversed: same shape, other order. */
START_TEST(negative_step_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    tk_neg_output(g, tk_slice(g, r, 1, TK_I64(-1), TK_I64(I64MIN), TK_I64(1), TK_I64(-1)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* An end of 100 on a symbolic axis could cut it. */
START_TEST(symbolic_axis_small_end_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(-1, 4), "batch");
    tk_neg_output(g, tk_slice(g, r, 1, TK_I64(0), TK_I64(100), NULL, NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* [batch,seq]: slicing axis 0 up to seq (Shape(x)[1:2]) is not provably
 * the whole axis. */
START_TEST(symbolic_end_other_name_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(-1, -1), "batch");
    ph_value *x = ph_graph_input(g, 0);
    ck_assert_int_eq(ph_value_set_dim_param(x, 1, "seq"), 0);
    ph_value *shape = tk_op1(g, "Shape", r);
    ph_value *sin[3] = {shape, tk_ints(g, "s0", 1, TK_I64(1)), tk_ints(g, "e1", 1, TK_I64(2))};
    ph_value *end = ph_node_output(tk_node(g, "Slice", 3, sin), 0);
    ph_value *in[4] = {r, tk_ints(g, "starts", 1, TK_I64(0)), end, tk_ints(g, "axes", 1, TK_I64(0))};
    tk_neg_output(g, ph_node_output(tk_node(g, "Slice", 4, in), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(runtime_starts_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *st = ph_graph_add_input(g, "starts", PH_DT_INT64, 1, TK_I64(1));
    ph_value *in[3] = {r, st, tk_ints(g, "ends", 1, TK_I64(I64MAX))};
    tk_neg_output(g, ph_node_output(tk_node(g, "Slice", 3, in), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(unknown_rank_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", -1, NULL));
    tk_neg_output(g, tk_slice(g, r, 1, TK_I64(0), TK_I64(I64MAX), NULL, NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Unknown (unnamed) dim with exact-looking end 4: could be longer. */
START_TEST(unknown_dim_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, -1), NULL);
    tk_neg_output(g, tk_slice(g, r, 1, TK_I64(0), TK_I64(4), TK_I64(1), NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(input_to_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 4));
    tk_output(g, tk_slice(g, x, 1, TK_I64(0), TK_I64(I64MAX), NULL, NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_slice");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, whole_axis_int64max_removed);
    tcase_add_test(tc, known_dims_exact_and_clamped_removed);
    tcase_add_test(tc, one_element_axis_step2_removed);
    tcase_add_test(tc, symbolic_axis_sentinels_removed);
    tcase_add_test(tc, symbolic_end_same_dim_removed);
    tcase_add_test(tc, graph_output_in_middle_redirected);
    tcase_add_test(tc, opset9_attributes_removed);
    tcase_add_test(tc, partial_slice_kept);
    tcase_add_test(tc, start_one_kept);
    tcase_add_test(tc, step2_kept);
    tcase_add_test(tc, negative_step_kept);
    tcase_add_test(tc, symbolic_axis_small_end_kept);
    tcase_add_test(tc, symbolic_end_other_name_kept);
    tcase_add_test(tc, runtime_starts_kept);
    tcase_add_test(tc, unknown_rank_kept);
    tcase_add_test(tc, unknown_dim_kept);
    tcase_add_test(tc, input_to_output_kept);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
