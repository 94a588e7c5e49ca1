/* tests/test_pass_fuse_transpose_into_matmul.c - fuse_transpose_into_matmul. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("fuse_transpose_into_matmul"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

#define SWAP2 TK_I64(1, 0)

/* Relu of a new graph input, with the shape recorded on the Relu's output
 * too (the pass needs known ranks; there is no shape inference here). */
static ph_value *activation(ph_graph *g, const char *name, int rank, const int64_t *dims)
{
    ph_value *r = tk_op1(g, "Relu", tk_input(g, name, rank, dims));
    tk_set_shape(r, rank, dims);
    return r;
}

START_TEST(matmul_transposed_a_becomes_gemm)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = activation(g, "a", 2, TK_I64(5, 3));
    ph_value *b = activation(g, "b", 2, TK_I64(5, 4));
    tk_output(g, tk_op2(g, "MatMul", tk_transpose(g, a, 2, SWAP2), b));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 31), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Relu,Gemm");
    ph_node *gemm = tk_find_op(g, PH_OP_Gemm);
    ck_assert_int_eq(ph_node_attr_int(gemm, "transA", 0), 1);
    ck_assert_int_eq(ph_node_attr_int(gemm, "transB", 0), 0);
    ck_assert_float_eq(ph_node_attr_float(gemm, "alpha", 1.0f), 1.0f);
    ck_assert_uint_eq(ph_node_input_count(gemm), 2);
    ck_assert_ptr_eq(ph_node_input(gemm, 0), a);
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

/* Transpose of B without a perm attribute (reversed dims, rank known 2). */
START_TEST(matmul_transposed_b_without_perm)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = activation(g, "a", 2, TK_I64(3, 6));
    ph_value *b = activation(g, "b", 2, TK_I64(4, 6));
    tk_output(g, tk_op2(g, "MatMul", a, tk_transpose(g, b, 0, NULL)));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 32), 1);
    ph_node *gemm = tk_find_op(g, PH_OP_Gemm);
    ck_assert_ptr_nonnull(gemm);
    ck_assert_int_eq(ph_node_attr_int(gemm, "transA", 0), 0);
    ck_assert_int_eq(ph_node_attr_int(gemm, "transB", 0), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 0);
    ph_model_free(m);
}
END_TEST

START_TEST(matmul_both_transposed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = activation(g, "a", 2, TK_I64(6, 3));
    ph_value *b = activation(g, "b", 2, TK_I64(4, 6));
    tk_output(g, tk_op2(g, "MatMul", tk_transpose(g, a, 2, SWAP2), tk_transpose(g, b, 2, SWAP2)));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 33), 1); /* both operands: one rewrite */
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Relu,Gemm");
    ph_node *gemm = tk_find_op(g, PH_OP_Gemm);
    ck_assert_int_eq(ph_node_attr_int(gemm, "transA", 0), 1);
    ck_assert_int_eq(ph_node_attr_int(gemm, "transB", 0), 1);
    ph_model_free(m);
}
END_TEST

/* Gemm already transposing B, with alpha, beta and C: the flag toggles. */
START_TEST(gemm_flag_toggles)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = activation(g, "a", 2, TK_I64(3, 5));
    ph_value *b = activation(g, "b", 2, TK_I64(5, 4)); /* transB=1 of T(b) reads b as-is */
    ph_value *c = tk_init(g, "c", 1, TK_I64(4), 5);
    ph_value *in[3] = {a, tk_transpose(g, b, 2, SWAP2), c};
    ph_node *gemm = tk_node(g, "Gemm", 3, in);
    ck_assert_int_eq(ph_node_set_attr_int(gemm, "transB", 1), 0);
    ck_assert_int_eq(ph_node_set_attr_float(gemm, "alpha", 0.5f), 0);
    ck_assert_int_eq(ph_node_set_attr_float(gemm, "beta", 2.0f), 0);
    tk_output(g, ph_node_output(gemm, 0));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 34), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Relu,Gemm");
    gemm = tk_find_op(g, PH_OP_Gemm); /* the pass replaced it */
    ck_assert_int_eq(ph_node_attr_int(gemm, "transB", 1), 0);
    ck_assert_int_eq(ph_node_attr_int(gemm, "transA", 0), 0);
    ck_assert_ptr_eq(ph_node_input(gemm, 1), b);
    ck_assert_ptr_eq(ph_node_input(gemm, 2), c);
    ph_model_free(m);
}
END_TEST

/* Gemm's operands are 2-D by definition: no perm and no known rank is fine. */
START_TEST(gemm_transpose_without_perm_or_shape)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_op1(g, "Relu", tk_input(g, "a", 2, TK_I64(4, 3)));
    ph_value *b = activation(g, "b", 2, TK_I64(4, 2));
    tk_output(g, tk_op2(g, "Gemm", tk_transpose(g, a, 0, NULL), b));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 35), 1);
    ph_node *n = tk_find_op(g, PH_OP_Gemm);
    ck_assert_int_eq(ph_node_attr_int(n, "transA", 0), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 0);
    ph_model_free(m);
}
END_TEST

/* N-D MatMul with a constant transposed weight: a new initializer holds the
 * transposed data and the old one goes away. */
START_TEST(nd_constant_weight_transposed_in_place)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(2, 3, 4, 5));
    ph_value *w = tk_init(g, "w", 4, TK_I64(2, 3, 6, 5), 36);
    tk_output(g, tk_op2(g, "MatMul", x, tk_transpose(g, w, 4, TK_I64(0, 1, 3, 2))));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 36), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "MatMul");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    const ph_tensor *t = ph_value_const(ph_node_input(ph_graph_first_node(g), 1));
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ph_tensor_dim(t, 2), 5);
    ck_assert_int_eq(ph_tensor_dim(t, 3), 6);
    ph_model_free(m);
}
END_TEST

/* 2-D constant on A: stays a MatMul with a transposed initializer. */
START_TEST(constant_a_2d)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *w = tk_init(g, "w", 2, TK_I64(4, 3), 37);
    ph_value *x = tk_input(g, "x", 2, TK_I64(4, 2));
    tk_output(g, tk_op2(g, "MatMul", tk_transpose(g, w, 2, SWAP2), x));
    ck_assert_int_eq(tk_pass_run_checked(pass, m, 37), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "MatMul");
    ck_assert_ptr_nonnull(ph_value_const(ph_node_input(ph_graph_first_node(g), 0)));
    ph_model_free(m);
}
END_TEST

/* The Transpose also feeds a graph output (middle of the pattern): the
 * MatMul stops reading it, the Transpose stays for the output. */
START_TEST(transpose_graph_output_kept_for_it)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = activation(g, "a", 2, TK_I64(5, 3));
    ph_value *b = activation(g, "b", 2, TK_I64(5, 2));
    ph_value *t = tk_transpose(g, a, 2, SWAP2);
    tk_output(g, t);
    tk_output(g, tk_op2(g, "MatMul", t, b));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 38), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Relu,Transpose,Gemm");
    ck_assert_ptr_eq(ph_graph_output(g, 0), t);
    ck_assert_uint_eq(ph_value_use_count(t), 0);
    ph_model_free(m);
}
END_TEST

START_TEST(transpose_other_consumer_kept_for_it)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = activation(g, "a", 2, TK_I64(5, 3));
    ph_value *b = activation(g, "b", 2, TK_I64(5, 2));
    ph_value *t = tk_transpose(g, a, 2, SWAP2);
    tk_output(g, tk_op1(g, "Neg", t));
    tk_output(g, tk_op2(g, "MatMul", t, b));

    ck_assert_int_eq(tk_pass_run_checked(pass, m, 39), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Relu,Transpose,Neg,Gemm");
    ck_assert_uint_eq(ph_value_use_count(t), 1);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

/* A constant whose Transpose has another user: no second copy of the weight. */
START_TEST(shared_constant_transpose_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *w = tk_init(g, "w", 3, TK_I64(2, 4, 3), 40);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 5, 3));
    ph_value *t = tk_transpose(g, w, 3, TK_I64(0, 2, 1));
    tk_output(g, t);
    tk_output(g, tk_op2(g, "MatMul", x, t));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* N-D MatMul with a non-constant transposed operand: Gemm cannot take it. */
START_TEST(nd_non_constant_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = activation(g, "a", 3, TK_I64(2, 5, 3));
    ph_value *b = activation(g, "b", 3, TK_I64(2, 5, 4));
    tk_output(g, tk_op2(g, "MatMul", tk_transpose(g, a, 3, TK_I64(0, 2, 1)), b));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(perm_not_last_two_swap_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *w = tk_init(g, "w", 3, TK_I64(3, 2, 4), 41);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 5, 3));
    tk_output(g, tk_op2(g, "MatMul", x, tk_transpose(g, w, 3, TK_I64(1, 0, 2))));
    ph_value *w2 = tk_init(g, "w2", 3, TK_I64(4, 3, 2), 42);
    tk_output(g, tk_op2(g, "MatMul", x, tk_transpose(g, w2, 0, NULL))); /* [2,1,0] */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(unknown_rank_without_perm_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_op1(g, "Relu", tk_input(g, "a", -1, NULL));
    ph_value *b = activation(g, "b", 2, TK_I64(5, 2));
    tk_output(g, tk_op2(g, "MatMul", tk_transpose(g, a, 0, NULL), b));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A is a 2-D swap, but B's rank is unknown: Gemm would be a guess. */
START_TEST(other_operand_rank_unknown_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = activation(g, "a", 2, TK_I64(5, 3));
    ph_value *b = tk_op1(g, "Relu", tk_input(g, "b", -1, NULL));
    tk_output(g, tk_op2(g, "MatMul", tk_transpose(g, a, 2, SWAP2), b));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(other_operand_3d_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = activation(g, "a", 2, TK_I64(5, 3));
    ph_value *b = activation(g, "b", 3, TK_I64(2, 5, 4));
    tk_output(g, tk_op2(g, "MatMul", tk_transpose(g, a, 2, SWAP2), b));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Opset 10: Gemm needs C there, so no MatMul becomes a Gemm. */
START_TEST(old_opset_kept)
{
    ph_model *m = ph_model_new(10);
    ck_assert_ptr_nonnull(m);
    ph_graph *g = ph_model_graph(m);
    ph_value *a = activation(g, "a", 2, TK_I64(5, 3));
    ph_value *b = activation(g, "b", 2, TK_I64(5, 2));
    tk_output(g, tk_op2(g, "MatMul", tk_transpose(g, a, 2, SWAP2), b));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(identity_perm_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = activation(g, "a", 2, TK_I64(3, 5));
    ph_value *b = activation(g, "b", 2, TK_I64(5, 2));
    tk_output(g, tk_op2(g, "MatMul", tk_transpose(g, a, 2, TK_I64(0, 1)), b));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The transformer's head: MatMuls fed by Transposes of an initializer and of
 * activations.  Whatever folds, the result must verify and fold no further. */
START_TEST(transformer_folds_and_verifies)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/tests/models/transformer_block.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    size_t before = tk_count_op(g, PH_OP_Transpose);
    int folded = tk_pass_run(pass, m);
    ck_assert_int_gt(folded, 0);
    ck_assert_uint_lt(tk_count_op(g, PH_OP_Transpose), before);
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

/* Cancelling pairs must go first: x -> T -> T -> MatMul would otherwise keep
 * one Transpose and turn the MatMul into a transposing Gemm. */
START_TEST(runs_after_merge_consecutive_transpose)
{
    int found = 0;
    for (const char *const *a = pass->desc->run_after; a && *a; a++)
        found |= strcmp(*a, "merge_consecutive_transpose") == 0;
    ck_assert_msg(found, "run_after does not name merge_consecutive_transpose");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_fuse_transpose_into_matmul");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, matmul_transposed_a_becomes_gemm);
    tcase_add_test(tc, matmul_transposed_b_without_perm);
    tcase_add_test(tc, matmul_both_transposed);
    tcase_add_test(tc, gemm_flag_toggles);
    tcase_add_test(tc, gemm_transpose_without_perm_or_shape);
    tcase_add_test(tc, nd_constant_weight_transposed_in_place);
    tcase_add_test(tc, constant_a_2d);
    tcase_add_test(tc, transpose_graph_output_kept_for_it);
    tcase_add_test(tc, transpose_other_consumer_kept_for_it);
    tcase_add_test(tc, shared_constant_transpose_kept);
    tcase_add_test(tc, nd_non_constant_kept);
    tcase_add_test(tc, perm_not_last_two_swap_kept);
    tcase_add_test(tc, unknown_rank_without_perm_kept);
    tcase_add_test(tc, other_operand_rank_unknown_kept);
    tcase_add_test(tc, other_operand_3d_kept);
    tcase_add_test(tc, old_opset_kept);
    tcase_add_test(tc, identity_perm_kept);
    tcase_add_test(tc, transformer_folds_and_verifies);
    tcase_add_test(tc, runs_after_merge_consecutive_transpose);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
