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

/* ---- mini_eval's MatMul, Gemm, Transpose and Add on hand-computed data */

static void eval_with(ph_model *m, const me_tensor *in, size_t n_in, me_tensor *out)
{
    char err[512] = "";
    int rc = me_eval(ph_model_graph(m), in, n_in, out, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
}

static void arange(me_tensor *t, int rank, const int64_t *dims, float start)
{
    ck_assert_int_eq(me_tensor_alloc(t, rank, dims), 0);
    for (int64_t i = 0; i < me_numel(t); i++)
        t->data[i] = start + (float)i;
}

static void expect_data(const me_tensor *t, int64_t n, const float *want)
{
    ck_assert_int_eq(me_numel(t), n);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(t->data[i] == want[i], "element %lld: %g, want %g", (long long)i,
                      (double)t->data[i], (double)want[i]);
}

START_TEST(eval_matmul_broadcast_and_1d)
{
    /* a [2,2,3] x b [3,2] (batch broadcast), and v [3] x b -> [2] */
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_input(g, "a", 3, TK_I64(2, 2, 3));
    ph_value *b = tk_input(g, "b", 2, TK_I64(3, 2));
    ph_value *v = tk_input(g, "v", 1, TK_I64(3));
    tk_output(g, tk_op2(g, "MatMul", a, b));
    tk_output(g, tk_op2(g, "MatMul", v, b));
    me_tensor in[3], out[2];
    arange(&in[0], 3, TK_I64(2, 2, 3), 0);
    arange(&in[1], 2, TK_I64(3, 2), 0);
    arange(&in[2], 1, TK_I64(3), 1);
    eval_with(m, in, 3, out);
    /* b = [[0,1],[2,3],[4,5]]; rows of a: [0,1,2] [3,4,5] [6,7,8] [9,10,11] */
    ck_assert_int_eq(out[0].rank, 3);
    expect_data(&out[0], 8, (const float[]){10, 13, 28, 40, 46, 67, 64, 94});
    ck_assert_int_eq(out[1].rank, 1);
    expect_data(&out[1], 2, (const float[]){16, 22});
    for (int i = 0; i < 3; i++)
        me_tensor_free(&in[i]);
    me_tensor_free(&out[0]);
    me_tensor_free(&out[1]);
    ph_model_free(m);
}
END_TEST

START_TEST(eval_gemm_transposes_and_c)
{
    /* A stored [3,2] with transA, B stored [2,3] with transB, C [2] row. */
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *in_v[3] = {tk_input(g, "a", 2, TK_I64(3, 2)), tk_input(g, "b", 2, TK_I64(2, 3)),
                         tk_input(g, "c", 1, TK_I64(2))};
    ph_node *gemm = tk_node(g, "Gemm", 3, in_v);
    ck_assert_int_eq(ph_node_set_attr_int(gemm, "transA", 1), 0);
    ck_assert_int_eq(ph_node_set_attr_int(gemm, "transB", 1), 0);
    ck_assert_int_eq(ph_node_set_attr_float(gemm, "alpha", 2.0f), 0);
    ck_assert_int_eq(ph_node_set_attr_float(gemm, "beta", 0.5f), 0);
    tk_output(g, ph_node_output(gemm, 0));
    me_tensor in[3], out;
    arange(&in[0], 2, TK_I64(3, 2), 0); /* A' = [[0,2,4],[1,3,5]] */
    arange(&in[1], 2, TK_I64(2, 3), 0); /* B' = [[0,3],[1,4],[2,5]] */
    arange(&in[2], 1, TK_I64(2), 10);   /* C = [10, 11] */
    eval_with(m, in, 3, &out);
    /* A'B' = [[10,28],[13,40]]; 2*AB + 0.5*C */
    expect_data(&out, 4, (const float[]){25, 61.5f, 31, 85.5f});
    for (int i = 0; i < 3; i++)
        me_tensor_free(&in[i]);
    me_tensor_free(&out);
    ph_model_free(m);
}
END_TEST

START_TEST(eval_transpose_and_add)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 2));
    ph_value *r = tk_input(g, "r", 2, TK_I64(1, 2));
    tk_output(g, tk_transpose(g, x, 3, TK_I64(2, 0, 1)));
    tk_output(g, tk_op2(g, "Add", x, r));
    me_tensor in[2], out[2];
    arange(&in[0], 3, TK_I64(2, 3, 2), 0);
    arange(&in[1], 2, TK_I64(1, 2), 100);
    eval_with(m, in, 2, out);
    ck_assert_int_eq(out[0].dims[0], 2);
    ck_assert_int_eq(out[0].dims[1], 2);
    ck_assert_int_eq(out[0].dims[2], 3);
    expect_data(&out[0], 12, (const float[]){0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11});
    expect_data(&out[1], 12,
                (const float[]){100, 102, 102, 104, 104, 106, 106, 108, 108, 110, 110, 112});
    for (int i = 0; i < 2; i++) {
        me_tensor_free(&in[i]);
        me_tensor_free(&out[i]);
    }
    ph_model_free(m);
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
    TCase *te = tcase_create("mini_eval");
    tcase_set_timeout(te, 60);
    tcase_add_test(te, eval_matmul_broadcast_and_1d);
    tcase_add_test(te, eval_gemm_transposes_and_c);
    tcase_add_test(te, eval_transpose_and_add);
    suite_add_tcase(s, te);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
