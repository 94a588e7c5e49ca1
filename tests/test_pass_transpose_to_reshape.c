/* tests/test_pass_transpose_to_reshape.c - transpose_to_reshape. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("transpose_to_reshape");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* A float input x (dims < 0 named by names[i]) through Relu. */
static ph_value *input(ph_graph *g, int rank, const int64_t *dims, const char *const *names)
{
    ph_value *x = tk_input(g, "x", rank, dims);
    for (int i = 0; names && i < rank; i++)
        if (dims[i] < 0)
            ck_assert_int_eq(ph_value_set_dim_param(x, i, names[i]), 0);
    return tk_op1(g, "Relu", x);
}

/* g holds exactly Relu, Reshape, Neg, the Reshape reading `from` with the
 * constant shape want[0..n). */
static void assert_reshape(ph_graph *g, ph_value *from, size_t n, const int64_t *want)
{
    char ops[256];
    int64_t got[16];
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Reshape,Neg");
    ph_node *r = tk_find_op(g, PH_OP_Reshape);
    ck_assert_ptr_eq(ph_node_input(r, 0), from);
    ck_assert_int_eq(ph_value_const_ints(ph_node_input(r, 1), got, NULL, 16), (ptrdiff_t)n);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(got[k] == want[k], "shape[%zu] = %lld, want %lld", k, (long long)got[k],
                      (long long)want[k]);
}

/* [2,1,3] by (1,0,2): only the 1 moves. */
START_TEST(size_one_dim_moves)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(2, 1, 3), NULL);
    tk_neg_output(g, tk_transpose(g, x, 3, TK_I64(1, 0, 2)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    assert_reshape(g, x, 3, TK_I64(1, 2, 3));
    tk_assert_untouched(pass, m); /* idempotent */
    ph_model_free(m);
}
END_TEST

/* [5,1,1,7] by (0,2,3,1) -> [5,1,7,1]: two 1s move around the 7. */
START_TEST(several_ones_move)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 4, TK_I64(5, 1, 1, 7), NULL);
    tk_neg_output(g, tk_transpose(g, x, 4, TK_I64(0, 2, 3, 1)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    assert_reshape(g, x, 4, TK_I64(5, 1, 7, 1));
    ph_model_free(m);
}
END_TEST

/* [N,1,5] by (1,0,2): the symbolic N moves, everything else is known: -1. */
START_TEST(symbolic_dim_moves_minus_one)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(-1, 1, 5), (const char *[]){"N", NULL, NULL});
    tk_neg_output(g, tk_transpose(g, x, 3, TK_I64(1, 0, 2)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 2, TK_I64(1, 3)), 1);
    assert_reshape(g, x, 3, TK_I64(1, -1, 5));
    ph_model_free(m);
}
END_TEST

/* [N,1,1,M] by (0,2,1,3): symbolic dims keep their place: copied with 0. */
START_TEST(symbolic_dims_in_place_copied)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 4, TK_I64(-1, 1, 1, -1), (const char *[]){"N", NULL, NULL, "M"});
    tk_neg_output(g, tk_transpose(g, x, 4, TK_I64(0, 2, 1, 3)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 2, TK_I64(1, 3)), 1);
    assert_reshape(g, x, 4, TK_I64(0, 1, 1, 0));
    ph_model_free(m);
}
END_TEST

/* An identity perm keeps memory order too. */
START_TEST(identity_perm)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 2, TK_I64(3, 4), NULL);
    tk_neg_output(g, tk_transpose(g, x, 2, TK_I64(0, 1)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    assert_reshape(g, x, 2, TK_I64(3, 4));
    ph_model_free(m);
}
END_TEST

/* A missing perm reverses the dims: [1,6] -> [6,1]. */
START_TEST(missing_perm_reverses)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 2, TK_I64(1, 6), NULL);
    tk_neg_output(g, tk_transpose(g, x, 0, NULL));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 0, NULL), 1);
    assert_reshape(g, x, 2, TK_I64(6, 1));
    ph_model_free(m);
}
END_TEST

/* x a graph input and y a graph output: the Reshape reads the input and
 * takes the output's name. */
START_TEST(graph_input_to_graph_output)
{
    char ops[64];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(1, 4, 1));
    ph_value *y = tk_transpose(g, x, 3, TK_I64(2, 1, 0));
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 7, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Reshape");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(g), 0), x);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(real_transpose_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_neg_output(g, tk_transpose(g, input(g, 3, TK_I64(2, 1, 3), NULL), 3, TK_I64(2, 1, 0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* An unknown dim that moves past another unknown one may be > 1 for both. */
START_TEST(unknown_dims_swapped_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(-1, 1, -1), (const char *[]){"N", NULL, "M"});
    tk_neg_output(g, tk_transpose(g, x, 3, TK_I64(2, 1, 0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* An unknown dim treated as 1 would be wrong: [N,3] by (1,0) when N may be
 * 1 or more. */
START_TEST(unknown_dim_not_assumed_one)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 2, TK_I64(-1, 3), (const char *[]){"N", NULL});
    tk_neg_output(g, tk_transpose(g, x, 2, TK_I64(1, 0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* [N,1,M] by (1,0,2) needs [1,-1,0]: a 0 copy beside -1 is refused (M = 0
 * at run time leaves -1 undefined). */
START_TEST(minus_one_with_copy_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(-1, 1, -1), (const char *[]){"N", NULL, "M"});
    tk_neg_output(g, tk_transpose(g, x, 3, TK_I64(1, 0, 2)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(unknown_rank_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", -1, NULL));
    tk_neg_output(g, tk_transpose(g, x, 2, TK_I64(0, 1)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(zero_dim_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(0, 1, 3)));
    tk_neg_output(g, tk_transpose(g, x, 3, TK_I64(1, 0, 2)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(invalid_perm_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 1, 3)); /* rank known without inference */
    tk_output(g, tk_transpose(g, x, 3, TK_I64(1, 1, 2)));
    pass->shapes = 0; /* inference refuses the perm; the pass must refuse it too */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(opset4_kept)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "", 4), 0);
    ph_graph *g = ph_model_graph(m);
    tk_neg_output(g, tk_transpose(g, input(g, 3, TK_I64(2, 1, 3), NULL), 3, TK_I64(1, 0, 2)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(other_domain_kept)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *t = tk_transpose(g, input(g, 3, TK_I64(2, 1, 3), NULL), 3, TK_I64(1, 0, 2));
    ck_assert_int_eq(ph_node_set_domain(ph_value_producer(t), "com.example"), 0);
    tk_neg_output(g, t);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(4, 1, 6));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *tg = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *eg = ph_node_add_subgraph(iff, "else_branch");
    tk_output(tg, tk_op1(tg, "Neg", tk_transpose(tg, x, 3, TK_I64(1, 0, 2))));
    tk_output(eg, tk_op1(eg, "Neg", tk_transpose(eg, x, 3, TK_I64(2, 1, 0))));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(tg, PH_OP_Transpose), 0);
    ph_node *r = tk_find_op(tg, PH_OP_Reshape);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_eq(ph_node_input(r, 0), x);
    ck_assert_uint_eq(tk_count_op(eg, PH_OP_Transpose), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_transpose_to_reshape");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, size_one_dim_moves);
    tcase_add_test(tc, several_ones_move);
    tcase_add_test(tc, symbolic_dim_moves_minus_one);
    tcase_add_test(tc, symbolic_dims_in_place_copied);
    tcase_add_test(tc, identity_perm);
    tcase_add_test(tc, missing_perm_reverses);
    tcase_add_test(tc, graph_input_to_graph_output);
    tcase_add_test(tc, real_transpose_kept);
    tcase_add_test(tc, unknown_dims_swapped_kept);
    tcase_add_test(tc, unknown_dim_not_assumed_one);
    tcase_add_test(tc, minus_one_with_copy_kept);
    tcase_add_test(tc, unknown_rank_kept);
    tcase_add_test(tc, zero_dim_kept);
    tcase_add_test(tc, invalid_perm_kept);
    tcase_add_test(tc, opset4_kept);
    tcase_add_test(tc, other_domain_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
