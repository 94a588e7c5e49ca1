/* tests/test_pass_merge_consecutive_slice.c - merge_consecutive_slice. */
#include <check.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("merge_consecutive_slice");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

#define BIG INT64_MAX
#define SMALL INT64_MIN

/* The constant int64 operand `i` of the only Slice of g equals want[0..n). */
static void assert_operand(ph_graph *g, size_t i, size_t n, const int64_t *want)
{
    int64_t got[16];
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Slice), 1);
    ph_value *v = ph_node_input(tk_find_op(g, PH_OP_Slice), i);
    ck_assert_int_eq(ph_value_const_ints(v, got, NULL, 16), (ptrdiff_t)n);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(got[k] == want[k], "operand %zu [%zu] = %lld, want %lld", i, k, (long long)got[k],
                      (long long)want[k]);
}

/* Seed 000: slices of different axes -> one Slice of both. */
START_TEST(different_axes)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 3, TK_I64(4, 6, 8), NULL);
    ph_value *s = tk_slice(g, x, 1, TK_I64(1), TK_I64(3), TK_I64(0), NULL);
    s = tk_slice(g, s, 2, TK_I64(-5, 0), TK_I64(-1, BIG), TK_I64(-1, 1), TK_I64(2, 3));
    tk_neg_output(g, s);

    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Slice,Neg");
    ph_node *sl = tk_find_op(g, PH_OP_Slice);
    ck_assert_ptr_eq(ph_node_input(sl, 0), x);
    assert_operand(g, 1, 3, TK_I64(1, 0, -5)); /* starts as written */
    assert_operand(g, 2, 3, TK_I64(3, BIG, -1));
    assert_operand(g, 3, 3, TK_I64(0, 1, 2));
    assert_operand(g, 4, 3, TK_I64(1, 3, 2));
    tk_assert_untouched(pass, m); /* idempotent */
    ph_model_free(m);
}
END_TEST

/* [2:18:3] then [1:100:2] of 20 = 5, 11, 17 = [5:18:6]. */
START_TEST(same_axis_composed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 2, TK_I64(3, 20), NULL);
    ph_value *s = tk_slice(g, x, 1, TK_I64(2), TK_I64(18), TK_I64(1), TK_I64(3));
    tk_neg_output(g, tk_slice(g, s, 1, TK_I64(1), TK_I64(100), TK_I64(-1), TK_I64(2)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    assert_operand(g, 1, 1, TK_I64(5));
    assert_operand(g, 2, 1, TK_I64(18));
    assert_operand(g, 3, 1, TK_I64(1));
    assert_operand(g, 4, 1, TK_I64(6));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Three Slices, mixing shared and separate axes, fold in one run. */
START_TEST(chain_of_three)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 3, TK_I64(5, 7, 9), NULL);
    ph_value *s = tk_slice(g, x, 2, TK_I64(1, -8), TK_I64(BIG, 8), TK_I64(0, 2), NULL);
    s = tk_slice(g, s, 2, TK_I64(6, 1), TK_I64(0, 5), TK_I64(1, 2), TK_I64(-2, 1));
    s = tk_slice(g, s, 1, TK_I64(-1), TK_I64(SMALL), TK_I64(0), TK_I64(-1));
    tk_neg_output(g, s);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Slice,Neg");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Every combination of a sample of starts, ends and steps of both signs,
 * out of range included, on one axis: the composite selects exactly what
 * the two Slices did (checked by the evaluator, bit for bit). */
START_TEST(same_axis_exhaustive)
{
    static const int64_t starts[] = {-9, -3, 0, 2, 6, BIG, SMALL};
    static const int64_t ends[] = {-8, -1, 1, 4, 7, BIG, SMALL};
    static const int64_t steps[] = {1, 2, 3, -1, -2};
    const size_t ns = sizeof starts / sizeof *starts, ne = sizeof ends / sizeof *ends,
                 nk = sizeof steps / sizeof *steps;
    uint64_t state = 12345;
    int merged = 0;
    for (int t = 0; t < 400; t++) {
        int64_t p[6];
        for (int i = 0; i < 2; i++) {
            state = state * 6364136223846793005u + 1442695040888963407u;
            p[3 * i] = starts[(state >> 33) % ns];
            p[3 * i + 1] = ends[(state >> 40) % ne];
            p[3 * i + 2] = steps[(state >> 50) % nk];
        }
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_relu_input(g, 2, TK_I64(2, 7), NULL);
        ph_value *s = tk_slice(g, x, 1, &p[0], &p[1], TK_I64(1), &p[2]);
        tk_neg_output(g, tk_slice(g, s, 1, &p[3], &p[4], TK_I64(-1), &p[5]));
        int rc = tk_pass_run_eval(pass, m, (uint64_t)t, 0, NULL);
        ck_assert_msg(rc == 1, "case %d: [%lld:%lld:%lld] then [%lld:%lld:%lld]: %d rewrites", t,
                      (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3], (long long)p[4],
                      (long long)p[5], rc);
        merged += rc;
        ph_model_free(m);
    }
    ck_assert_int_eq(merged, 400);
}
END_TEST

/* An empty first range leaves nothing for the second: start = end = 0. */
START_TEST(empty_composite)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *s = tk_slice(g, x, 1, TK_I64(3), TK_I64(1), TK_I64(1), NULL);
    tk_neg_output(g, tk_slice(g, s, 1, TK_I64(0), TK_I64(BIG), TK_I64(1), NULL));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    assert_operand(g, 1, 1, TK_I64(0));
    assert_operand(g, 2, 1, TK_I64(0));
    ph_model_free(m);
}
END_TEST

/* A negative step on an empty axis selects nothing (it selected one
 * element once, in ph_slice_length and in the evaluator). */
START_TEST(empty_axis_negative_step)
{
    int64_t first = -5;
    ck_assert_int_eq(ph_slice_length(0, -1, SMALL, -1, &first), 0);
    ck_assert_int_eq(ph_slice_length(0, BIG, SMALL, -2, NULL), 0);
    ck_assert_int_eq(ph_slice_length(0, 0, BIG, 1, NULL), 0);
    ck_assert_int_eq(ph_slice_length(3, -1, SMALL, -1, &first), 3);
    ck_assert_int_eq(first, 2);
    /* [1:1] empties the axis, then [::-1] of nothing; merged: still empty */
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *s = tk_slice(g, x, 1, TK_I64(1), TK_I64(1), TK_I64(1), NULL);
    tk_neg_output(g, tk_slice(g, s, 1, TK_I64(-1), TK_I64(SMALL), TK_I64(1), TK_I64(-1)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    ph_model_free(m);
}
END_TEST

/* The second Slice's output is a graph output: it keeps its name. */
START_TEST(graph_output_keeps_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(10));
    ph_value *y = tk_slice(g, tk_slice(g, x, 1, TK_I64(1), TK_I64(9), NULL, NULL), 1, TK_I64(2), TK_I64(5),
                           NULL, NULL);
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    assert_operand(g, 1, 1, TK_I64(3));
    assert_operand(g, 2, 1, TK_I64(6));
    free(name);
    ph_model_free(m);
}
END_TEST

/* Opset 9: attributes in, attributes out. */
START_TEST(opset9_attributes)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "", 9), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 2, TK_I64(4, 10), NULL);
    ph_node *a = tk_node(g, "Slice", 1, &x);
    ph_node_set_attr_ints(a, "starts", 2, TK_I64(1, 2));
    ph_node_set_attr_ints(a, "ends", 2, TK_I64(BIG, -1));
    ph_value *ao = ph_node_output(a, 0);
    ph_node *b = tk_node(g, "Slice", 1, &ao);
    ph_node_set_attr_ints(b, "starts", 1, TK_I64(-4));
    ph_node_set_attr_ints(b, "ends", 1, TK_I64(-2));
    ph_node_set_attr_ints(b, "axes", 1, TK_I64(1));
    tk_neg_output(g, ph_node_output(b, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1); /* no evaluator below opset 11 */
    ph_node *s = tk_find_op(g, PH_OP_Slice);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Slice), 1);
    ck_assert_uint_eq(ph_node_input_count(s), 1);
    const int64_t *v;
    /* axis 1: [2:9] of 10 = 2..8, then [-4:-2] of 7 = 3, 4 -> 5, 6 */
    ck_assert_int_eq(ph_node_attr_ints(s, "starts", &v), 2);
    ck_assert(v[0] == 1 && v[1] == 5);
    ck_assert_int_eq(ph_node_attr_ints(s, "ends", &v), 2);
    ck_assert(v[0] == BIG && v[1] == 7);
    ck_assert_int_eq(ph_node_attr_ints(s, "axes", &v), 2);
    ck_assert(v[0] == 0 && v[1] == 1);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(middle_with_other_consumer_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 1, TK_I64(10), NULL);
    ph_value *s = tk_slice(g, x, 1, TK_I64(1), TK_I64(9), NULL, NULL);
    tk_neg_output(g, tk_slice(g, s, 1, TK_I64(1), TK_I64(5), NULL, NULL));
    tk_neg_output(g, s);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(middle_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 1, TK_I64(10), NULL);
    ph_value *s = tk_slice(g, x, 1, TK_I64(1), TK_I64(9), NULL, NULL);
    tk_neg_output(g, tk_slice(g, s, 1, TK_I64(1), TK_I64(5), NULL, NULL));
    tk_output(g, s);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The same axis on a symbolic dim: the composite needs the length. */
START_TEST(same_axis_unknown_dim_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 2, TK_I64(-1, 4), "N");
    ph_value *s = tk_slice(g, x, 1, TK_I64(1), TK_I64(BIG), TK_I64(0), NULL);
    tk_neg_output(g, tk_slice(g, s, 1, TK_I64(0), TK_I64(2), TK_I64(0), NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ... while different axes need no length: merged, and right for any N. */
START_TEST(different_axes_symbolic_dim_merged)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 2, TK_I64(-1, 6), "N");
    ph_value *s = tk_slice(g, x, 1, TK_I64(1), TK_I64(BIG), TK_I64(0), NULL);
    tk_neg_output(g, tk_slice(g, s, 1, TK_I64(-4), TK_I64(-1), TK_I64(1), NULL));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 2, TK_I64(1, 3)), 1);
    ph_model_free(m);
}
END_TEST

START_TEST(unknown_rank_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, -1, NULL, NULL);
    ph_value *s = tk_slice(g, x, 1, TK_I64(1), TK_I64(3), TK_I64(0), NULL);
    tk_neg_output(g, tk_slice(g, s, 1, TK_I64(0), TK_I64(2), TK_I64(1), NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* starts computed at run time */
START_TEST(non_constant_operand_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 1, TK_I64(10), NULL);
    ph_value *st = ph_graph_add_input(g, "st", PH_DT_INT64, 1, TK_I64(1));
    ph_value *s = tk_slice(g, x, 1, TK_I64(1), TK_I64(9), NULL, NULL);
    ph_node *sl = ph_value_producer(s);
    ph_value *old = ph_node_input(sl, 1);
    ph_node_set_input(sl, 1, st);
    ph_value_prune(old);
    tk_neg_output(g, tk_slice(g, s, 1, TK_I64(1), TK_I64(5), NULL, NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* An end that is a symbolic dim (Shape(x)[0]) cannot be written as a number. */
START_TEST(symbolic_end_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 2, TK_I64(-1, 6), "N");
    ph_value *shape = tk_op1(g, "Shape", x);
    ph_value *n = tk_slice(g, shape, 1, TK_I64(0), TK_I64(1), NULL, NULL);
    ph_value *s = tk_slice(g, x, 1, TK_I64(1), TK_I64(5), TK_I64(1), NULL);
    ph_value *in[4] = {s, tk_ints(g, "st", 1, TK_I64(0)), n, tk_ints(g, "ax", 1, TK_I64(0))};
    tk_neg_output(g, ph_node_output(tk_node(g, "Slice", 4, in), 0));
    tk_infer(m);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(other_domain_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_value *x = tk_relu_input(g, 1, TK_I64(10), NULL);
    ph_value *s = tk_slice(g, x, 1, TK_I64(1), TK_I64(9), NULL, NULL);
    ck_assert_int_eq(ph_node_set_domain(ph_value_producer(s), "com.example"), 0);
    tk_neg_output(g, tk_slice(g, s, 1, TK_I64(1), TK_I64(5), NULL, NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(4, 6));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *tg = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *eg = ph_node_add_subgraph(iff, "else_branch");
    ph_value *s = tk_slice(tg, x, 1, TK_I64(1), TK_I64(3), TK_I64(0), NULL);
    tk_output(tg, tk_slice(tg, s, 1, TK_I64(0), TK_I64(4), TK_I64(1), NULL));
    tk_output(eg, tk_op1(eg, "Relu", x));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(tg, PH_OP_Slice), 1);
    assert_operand(tg, 1, 2, TK_I64(1, 0));
    assert_operand(tg, 3, 2, TK_I64(0, 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_merge_consecutive_slice");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, different_axes);
    tcase_add_test(tc, same_axis_composed);
    tcase_add_test(tc, chain_of_three);
    tcase_add_test(tc, same_axis_exhaustive);
    tcase_add_test(tc, empty_composite);
    tcase_add_test(tc, empty_axis_negative_step);
    tcase_add_test(tc, graph_output_keeps_name);
    tcase_add_test(tc, opset9_attributes);
    tcase_add_test(tc, middle_with_other_consumer_kept);
    tcase_add_test(tc, middle_graph_output_kept);
    tcase_add_test(tc, same_axis_unknown_dim_kept);
    tcase_add_test(tc, different_axes_symbolic_dim_merged);
    tcase_add_test(tc, unknown_rank_kept);
    tcase_add_test(tc, non_constant_operand_kept);
    tcase_add_test(tc, symbolic_end_kept);
    tcase_add_test(tc, other_domain_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
