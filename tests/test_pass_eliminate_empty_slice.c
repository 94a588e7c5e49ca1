/* tests/test_pass_eliminate_empty_slice.c - the eliminate_empty_slice pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

#define I64MAX INT64_MAX

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("eliminate_empty_slice");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Slice x along one axis with constant operands. */
static ph_value *slice1(ph_graph *g, ph_value *x, int64_t start, int64_t end, int64_t axis)
{
    return tk_slice(g, x, 1, TK_I64(start), TK_I64(end), TK_I64(axis), NULL);
}

static ph_node *concat(ph_graph *g, size_t n, ph_value *const *in, int64_t axis)
{
    ph_node *c = tk_node(g, "Concat", n, in);
    ck_assert_int_eq(ph_node_set_attr_int(c, "axis", axis), 0);
    return c;
}

/* The seed's picture: x -> {empty Slice, normal Slice} -> Concat -> Neg. */
START_TEST(empty_slice_input_dropped)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *in[2] = {slice1(g, r, 4, I64MAX, 1), slice1(g, r, 0, 2, 1)};
    ph_node *c = concat(g, 2, in, 1);
    tk_neg_output(g, ph_node_output(c, 0));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Slice,Concat,Neg");
    ck_assert_uint_eq(ph_node_input_count(c), 1);
    ck_assert_ptr_eq(ph_node_input(c, 0), in[1]);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 3); /* the empty Slice's went */
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

/* On a symbolic axis: start 5 >= end 3, and start -1 >= end -2, are empty
 * whatever batch is; negative Concat axis. */
START_TEST(symbolic_axis_same_sign_dropped)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(-1, 4), "batch");
    ph_value *in[3] = {slice1(g, r, 5, 3, 0), r, slice1(g, r, -1, -2, 0)};
    ph_node *c = concat(g, 3, in, -2);
    tk_neg_output(g, ph_node_output(c, 0));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 3, TK_I64(1, 4, 7)), 2);
    ck_assert_uint_eq(ph_node_input_count(c), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Slice), 0);
    ph_model_free(m);
}
END_TEST

/* The empty Slice has another user and is a graph output: the Concat still
 * stops reading it, the Slice stays for the others. */
START_TEST(slice_with_other_users_kept_input_dropped)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *e = slice1(g, r, 2, 1, 1);
    ph_value *in[2] = {r, e};
    ph_node *c = concat(g, 2, in, 1);
    tk_neg_output(g, ph_node_output(c, 0));
    tk_neg_output(g, e);
    tk_output(g, e);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ck_assert_uint_eq(ph_node_input_count(c), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Slice), 1);
    ph_model_free(m);
}
END_TEST

/* Every input empty along the axis: one stays, never zero. */
START_TEST(all_empty_keeps_one)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *in[2] = {slice1(g, r, 0, 0, 1), slice1(g, r, 3, 3, 1)};
    ph_node *c = concat(g, 2, in, 1);
    tk_neg_output(g, ph_node_output(c, 0));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    ck_assert_uint_eq(ph_node_input_count(c), 1);
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

/* Empty along axis 0 but concatenated along axis 1: the output [0,6]
 * counts this input's 2 columns. */
START_TEST(empty_along_other_axis_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *a = slice1(g, r, 0, 0, 0);   /* [0,4] */
    ph_value *b = slice1(g, slice1(g, r, 3, 3, 0), 0, 2, 1); /* [0,2] */
    ph_value *in[2] = {a, b};
    tk_neg_output(g, ph_node_output(concat(g, 2, in, 1), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(nonempty_slices_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *in[3] = {slice1(g, r, 3, I64MAX, 1), slice1(g, r, -1, 4, 1), slice1(g, r, 0, 1, 1)};
    tk_neg_output(g, ph_node_output(concat(g, 3, in, 1), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Symbolic axis, start 1 and end -1: empty only when batch <= 2. */
START_TEST(symbolic_axis_mixed_signs_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(-1, 4), "batch");
    ph_value *in[2] = {r, slice1(g, r, 1, -1, 0)};
    tk_neg_output(g, ph_node_output(concat(g, 2, in, 0), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Symbolic axis, start 2 and end 5: empty only when batch <= 2. */
START_TEST(symbolic_axis_forward_range_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(-1, 4), "batch");
    ph_value *in[2] = {r, slice1(g, r, 2, 5, 0)};
    tk_neg_output(g, ph_node_output(concat(g, 2, in, 0), 0));
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
    ph_value *sin[4] = {r, st, tk_ints(g, "ends", 1, TK_I64(4)), tk_ints(g, "axes", 1, TK_I64(1))};
    ph_value *in[2] = {r, ph_node_output(tk_node(g, "Slice", 4, sin), 0)};
    tk_neg_output(g, ph_node_output(concat(g, 2, in, 1), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(unknown_rank_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", -1, NULL));
    ph_value *in[2] = {r, slice1(g, r, 0, 0, 1)};
    tk_neg_output(g, ph_node_output(concat(g, 2, in, 1), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A single empty input is never removed (no Concat of zero inputs). */
START_TEST(single_empty_input_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *e = slice1(g, r, 0, 0, 1);
    tk_neg_output(g, ph_node_output(concat(g, 1, &e, 1), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* An empty value that is not a Slice is not this pass's business. */
START_TEST(not_a_slice_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *z = tk_op1(g, "Relu", tk_input(g, "z", 2, TK_I64(3, 0)));
    ph_value *in[2] = {r, z};
    tk_neg_output(g, ph_node_output(concat(g, 2, in, 1), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_empty_slice");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, empty_slice_input_dropped);
    tcase_add_test(tc, symbolic_axis_same_sign_dropped);
    tcase_add_test(tc, slice_with_other_users_kept_input_dropped);
    tcase_add_test(tc, all_empty_keeps_one);
    tcase_add_test(tc, empty_along_other_axis_kept);
    tcase_add_test(tc, nonempty_slices_kept);
    tcase_add_test(tc, symbolic_axis_mixed_signs_kept);
    tcase_add_test(tc, symbolic_axis_forward_range_kept);
    tcase_add_test(tc, runtime_starts_kept);
    tcase_add_test(tc, unknown_rank_kept);
    tcase_add_test(tc, single_empty_input_kept);
    tcase_add_test(tc, not_a_slice_kept);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
