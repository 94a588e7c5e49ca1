/* tests/test_pass_eliminate_nop_expand.c - the eliminate_nop_expand pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("eliminate_nop_expand");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

static ph_value *expand(ph_graph *g, ph_value *x, size_t n, const int64_t *shape)
{
    return tk_op2(g, "Expand", x, tk_ints(g, "shape", n, shape));
}

/* Relu(x) with x's dims; names[i] (when not NULL) names dim i. */
static ph_value *relu_in(ph_graph *g, const char *name, int rank, const int64_t *dims, const char *const *names)
{
    ph_value *x = tk_input(g, name, rank, dims);
    for (int i = 0; names && i < rank; i++)
        if (names[i])
            ck_assert_int_eq(ph_value_set_dim_param(x, i, names[i]), 0);
    return tk_op1(g, "Relu", x);
}

static void neg_out(ph_graph *g, ph_value *v) { tk_output(g, tk_op1(g, "Neg", v)); }

START_TEST(same_shape_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    neg_out(g, expand(g, relu_in(g, "x", 2, TK_I64(3, 4), NULL), 2, TK_I64(3, 4)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

/* Ones and shorter shapes broadcast to x's own shape. */
START_TEST(ones_and_shorter_shapes_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = relu_in(g, "x", 2, TK_I64(3, 4), NULL);
    ph_value *a = expand(g, r, 2, TK_I64(1, 4));
    ph_value *b = expand(g, a, 1, TK_I64(4));
    ph_value *c = expand(g, b, 1, TK_I64(1));
    ph_value *d = expand(g, c, 0, NULL);
    neg_out(g, d);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 4);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Expand), 0);
    ph_model_free(m);
}
END_TEST

/* Expand(x, Shape(x)) with a symbolic batch: the Shape goes too. */
START_TEST(expand_to_own_shape_symbolic_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = relu_in(g, "x", 3, TK_I64(-1, 2, -1), (const char *[]){"batch", NULL, "seq"});
    neg_out(g, tk_op2(g, "Expand", r, tk_op1(g, "Shape", r)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 2, TK_I64(1, 3)), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ph_model_free(m);
}
END_TEST

/* An unknown dim (no name) is kept by a 1. */
START_TEST(one_over_unknown_dim_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    neg_out(g, expand(g, relu_in(g, "x", 2, TK_I64(-1, 4), NULL), 2, TK_I64(1, 4)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 2, TK_I64(1, 3)), 1);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_output_in_middle_redirected)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *y = expand(g, relu_in(g, "x", 2, TK_I64(3, 4), NULL), 2, TK_I64(3, 4));
    tk_output(g, y);
    neg_out(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Expand), 0);
    free(name);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(rank_grows_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    neg_out(g, expand(g, relu_in(g, "x", 2, TK_I64(3, 4), NULL), 3, TK_I64(1, 3, 4)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(broadcast_grows_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    neg_out(g, expand(g, relu_in(g, "x", 2, TK_I64(1, 4), NULL), 2, TK_I64(3, 4)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* x [3,?]: the unknown dim could be 1 and grow to 4. */
START_TEST(unknown_dim_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    neg_out(g, expand(g, relu_in(g, "x", 2, TK_I64(3, -1), NULL), 2, TK_I64(3, 4)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(unknown_rank_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    neg_out(g, expand(g, relu_in(g, "x", -1, NULL, NULL), 1, TK_I64(1)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(runtime_shape_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = relu_in(g, "x", 2, TK_I64(3, 4), NULL);
    ph_value *s = ph_graph_add_input(g, "s", PH_DT_INT64, 1, TK_I64(2));
    neg_out(g, tk_op2(g, "Expand", r, s));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* x [batch,4] expanded to Shape(y) with y [seq,4]: other name. */
START_TEST(symbols_differ_by_name_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = relu_in(g, "x", 2, TK_I64(-1, 4), (const char *[]){"batch", NULL});
    ph_value *y = relu_in(g, "y", 2, TK_I64(-1, 4), (const char *[]){"seq", NULL});
    neg_out(g, tk_op2(g, "Expand", r, tk_op1(g, "Shape", y)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(input_to_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_output(g, expand(g, tk_input(g, "x", 2, TK_I64(3, 4)), 2, TK_I64(3, 4)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_expand");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, same_shape_removed);
    tcase_add_test(tc, ones_and_shorter_shapes_removed);
    tcase_add_test(tc, expand_to_own_shape_symbolic_removed);
    tcase_add_test(tc, one_over_unknown_dim_removed);
    tcase_add_test(tc, graph_output_in_middle_redirected);
    tcase_add_test(tc, rank_grows_kept);
    tcase_add_test(tc, broadcast_grows_kept);
    tcase_add_test(tc, unknown_dim_kept);
    tcase_add_test(tc, unknown_rank_kept);
    tcase_add_test(tc, runtime_shape_kept);
    tcase_add_test(tc, symbols_differ_by_name_kept);
    tcase_add_test(tc, input_to_output_kept);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
