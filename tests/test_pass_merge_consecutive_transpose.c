/* tests/test_pass_merge_consecutive_transpose.c - merge_consecutive_transpose. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("merge_consecutive_transpose"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Assert n's perm attribute equals want[0..rank). */
static void assert_perm(const ph_node *n, size_t rank, const int64_t *want)
{
    const int64_t *p;
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(ph_node_attr_ints(n, "perm", &p), (ptrdiff_t)rank);
    for (size_t i = 0; i < rank; i++)
        ck_assert_msg(p[i] == want[i], "perm[%zu] = %lld, want %lld", i, (long long)p[i],
                      (long long)want[i]);
}

/* Seed 001 example: [0,2,1] then [0,2,1] on [2,3,4] cancel. */
START_TEST(inverse_pair_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 4));
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *t = tk_transpose(g, tk_transpose(g, r, 3, TK_I64(0, 2, 1)), 3, TK_I64(0, 2, 1));
    tk_output(g, tk_op1(g, "Neg", t));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 21), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

/* [0,2,3,1] then [0,1,3,2] = one Transpose [0,2,1,3]. */
START_TEST(composed_into_one)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(2, 3, 4, 5));
    ph_value *t1 = tk_transpose(g, x, 4, TK_I64(0, 2, 3, 1));
    tk_output(g, tk_transpose(g, t1, 4, TK_I64(0, 1, 3, 2)));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 22), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Transpose");
    ph_node *t = ph_graph_first_node(g);
    ck_assert_ptr_eq(ph_node_input(t, 0), x);
    assert_perm(t, 4, TK_I64(0, 2, 1, 3));
    ph_model_free(m);
}
END_TEST

START_TEST(chain_of_three_folds_in_one_run)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(2, 3, 4)));
    ph_value *t = tk_transpose(g, x, 3, TK_I64(1, 0, 2));
    t = tk_transpose(g, t, 3, TK_I64(0, 2, 1));
    t = tk_transpose(g, t, 3, TK_I64(2, 1, 0));
    tk_output(g, tk_op1(g, "Neg", t));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 23), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Transpose,Neg");
    /* p1=[1,0,2], p2=[0,2,1] -> [1,2,0]; then p3=[2,1,0] -> [0,2,1] */
    assert_perm(tk_find_op(g, PH_OP_Transpose), 3, TK_I64(0, 2, 1));
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

/* No perm = reversed dims; twice reversed is the identity (rank known). */
START_TEST(missing_perms_with_known_rank)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(2, 3, 4)));
    tk_set_shape(x, 3, TK_I64(2, 3, 4)); /* the rank must be known */
    ph_value *t = tk_transpose(g, tk_transpose(g, x, 0, NULL), 0, NULL);
    tk_output(g, tk_op1(g, "Neg", t));
    ck_assert_int_eq(tk_pass_run_checked(pass, m, 24), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ph_model_free(m);
}
END_TEST

/* One perm given, the other missing: the rank comes from the given perm
 * even though no value has a known shape. */
START_TEST(missing_perm_rank_from_other_perm)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", -1, NULL));
    ph_value *t = tk_transpose(g, tk_transpose(g, x, 3, TK_I64(1, 2, 0)), 0, NULL);
    tk_output(g, tk_op1(g, "Neg", t));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 1);
    /* [1,2,0] then [2,1,0]: c[j] = p1[p2[j]] = [0,2,1] */
    assert_perm(tk_find_op(g, PH_OP_Transpose), 3, TK_I64(0, 2, 1));
    ph_model_free(m);
}
END_TEST

/* The first Transpose also feeds a graph output (a value in the middle of
 * the pattern is used elsewhere): it stays for that user, the second one
 * is folded. */
START_TEST(first_with_graph_output_kept_for_it)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(3, 5)));
    ph_value *t1 = tk_transpose(g, r, 2, TK_I64(1, 0));
    tk_output(g, t1);
    tk_output(g, tk_op1(g, "Neg", tk_transpose(g, t1, 2, TK_I64(1, 0))));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 25), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Transpose,Neg");
    ck_assert_ptr_eq(ph_node_input(tk_find_op(g, PH_OP_Neg), 0), r);
    ck_assert_ptr_eq(ph_graph_output(g, 0), t1);
    ph_model_free(m);
}
END_TEST

/* The first Transpose has another consumer: the second is composed to read
 * x directly, the first stays once for the other consumer. */
START_TEST(first_with_other_consumer)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 4));
    ph_value *t1 = tk_transpose(g, x, 3, TK_I64(2, 0, 1));
    tk_output(g, tk_op1(g, "Relu", t1));
    tk_output(g, tk_transpose(g, t1, 3, TK_I64(0, 2, 1)));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 26), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Transpose,Relu,Transpose");
    ck_assert_uint_eq(ph_value_use_count(t1), 1);
    ph_node *t2 = ph_value_producer(ph_graph_output(g, 1));
    ck_assert_ptr_eq(ph_node_input(t2, 0), x);
    assert_perm(t2, 3, TK_I64(2, 1, 0));
    ph_model_free(m);
}
END_TEST

/* Identity composite, but x is a graph input and y a graph output: y cannot
 * be redirected, so one identity-perm Transpose remains under y's name. */
START_TEST(identity_between_graph_input_and_output)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 4));
    ph_value *y = tk_transpose(g, tk_transpose(g, x, 2, TK_I64(1, 0)), 2, TK_I64(1, 0));
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 27), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Transpose");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(g), 0), x);
    assert_perm(ph_graph_first_node(g), 2, TK_I64(0, 1));
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    free(name);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(unknown_rank_without_perms_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", -1, NULL));
    tk_output(g, tk_op1(g, "Neg", tk_transpose(g, tk_transpose(g, x, 0, NULL), 0, NULL)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(single_transpose_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 4));
    ph_value *t = tk_transpose(g, tk_op1(g, "Relu", x), 3, TK_I64(0, 2, 1));
    tk_output(g, tk_transpose(g, tk_op1(g, "Neg", t), 3, TK_I64(0, 2, 1)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(rank_mismatch_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", -1, NULL));
    ph_value *t = tk_transpose(g, tk_transpose(g, x, 3, TK_I64(0, 2, 1)), 2, TK_I64(1, 0));
    tk_output(g, t);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(invalid_perm_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", -1, NULL));
    ph_value *t = tk_transpose(g, tk_transpose(g, x, 3, TK_I64(0, 0, 1)), 3, TK_I64(0, 2, 1));
    tk_output(g, t);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(other_domain_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(2, 3)));
    ph_value *t1 = tk_transpose(g, x, 2, TK_I64(1, 0));
    ck_assert_int_eq(ph_node_set_domain(ph_value_producer(t1), "com.example"), 0);
    tk_output(g, tk_transpose(g, t1, 2, TK_I64(1, 0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The demo transformer has two directly consecutive pairs: one composes to
 * a single Transpose, one cancels. */
START_TEST(transformer_pairs)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/tests/models/transformer_block.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    size_t before = tk_count_op(g, PH_OP_Transpose);
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), before - 3);
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_merge_consecutive_transpose");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, inverse_pair_removed);
    tcase_add_test(tc, composed_into_one);
    tcase_add_test(tc, chain_of_three_folds_in_one_run);
    tcase_add_test(tc, missing_perms_with_known_rank);
    tcase_add_test(tc, missing_perm_rank_from_other_perm);
    tcase_add_test(tc, first_with_graph_output_kept_for_it);
    tcase_add_test(tc, first_with_other_consumer);
    tcase_add_test(tc, identity_between_graph_input_and_output);
    tcase_add_test(tc, unknown_rank_without_perms_kept);
    tcase_add_test(tc, single_transpose_kept);
    tcase_add_test(tc, rank_mismatch_kept);
    tcase_add_test(tc, invalid_perm_kept);
    tcase_add_test(tc, other_domain_kept);
    tcase_add_test(tc, transformer_pairs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
