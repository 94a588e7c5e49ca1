/* tests/test_pass_dynamic_reshape_to_static.c - dynamic_reshape_to_static: a
 * Reshape target computed from shapes becomes a constant (0 for a copied
 * dim, -1 for one unknown). */
#include <stdio.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("dynamic_reshape_to_static")

/* r = Relu(x) and its Shape; DIM(k) is dim k of r as a 1-element vector
 * (Unsqueeze(Gather(Shape, k), [0])), the way PyTorch exports x.size(k). */
#define SHAPE "r = Relu(x); sh = Shape(r); ax: int64[1] = [0]\n"
#define DIM(k) "i" #k ": int64[] = [" #k "]; g" #k " = Gather(sh, i" #k "); d" #k " = Unsqueeze(g" #k ", ax)\n"
#define OUT "s = Reshape(r, c); y = Neg(s)\nreturn y"
#define BATCH_SEQ "x: float[batch,seq,8]\n" SHAPE DIM(0) DIM(1)
#define RESULT "r = Relu(x); s = Reshape(r, _:const); y = Neg(s)"

/* The case, then the constant the (first) Reshape reads: want (n entries). */
static void expect_target(const ph_test_options *o, const char *graph, int rewrites, const char *expect, size_t n,
                          const int64_t *want)
{
    PC_CASE_OPTS(o, graph, rewrites, expect);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), rewrites);
    const ph_tensor *t = ph_value_const(ph_node_input(tk_find_op(ph_model_graph(m), PH_OP_Reshape), 1));
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_INT64);
    ck_assert_int_eq(ph_tensor_rank(t), 1);
    ck_assert_int_eq(ph_tensor_dim(t, 0), (int64_t)n);
    const int64_t *v = ph_tensor_data(t);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(v[i] == want[i], "target[%zu] = %lld, want %lld", i, (long long)v[i], (long long)want[i]);
    ph_model_free(m);
}

static const ph_test_options sizes13 = {.max_iterations = 4, .sizes = (const int64_t[]){1, 3}, .n_sizes = 2};

/* x [batch,seq,8] -> Reshape(x, Concat(size(0), size(1), [2], [4])):
 * [0, 0, 2, 4], and the Shape/Gather/Unsqueeze/Concat chain goes. */
START_TEST(copied_dims_become_zero)
{
    const char *graph = BATCH_SEQ "tail: int64[2] = [2, 4]; c = Concat(d0, d1, tail) {axis=0}\n" OUT;
    expect_target(&sizes13, graph, 1, RESULT, 4, TK_I64(0, 0, 2, 4));
    ph_error err = {0}; /* the chain's constants went with it */
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 1);
    ph_model_free(m);
}
END_TEST

/* [batch*seq, 8] with allow_minus_one (the default): the product is not a
 * dim of x, so it becomes -1. */
START_TEST(one_unknown_becomes_minus_one)
{
    ph_test_options o = {.max_iterations = 4, .seed = 2, .sizes = (const int64_t[]){1, 2, 5}, .n_sizes = 3};
    expect_target(&o, BATCH_SEQ "bs = Mul(d0, d1); c8: int64[1] = [8]; c = Concat(bs, c8) {axis=0}\n" OUT, 1, RESULT,
                  2, TK_I64(-1, 8));
}
END_TEST

/* An OCR recognizer's x.reshape(b, c * h, w) on x [batch, 32, 2, width]:
 * Shape -> Gather -> Unsqueeze -> Concat of batch, 64 and width, where
 * width sits at another position than in x: [0, 64, -1] by default, and
 * the chain goes. */
START_TEST(crnn_reshape_chain_removed_by_default)
{
    expect_target(&sizes13,
                  "x: float[batch,32,2,width]\n" SHAPE DIM(0) DIM(3)
                  "ch: int64[1] = [64]; c = Concat(d0, ch, d3) {axis=0}\n" OUT,
                  1, RESULT, 3, TK_I64(0, 64, -1));
}
END_TEST

/* Static input: every entry is a number. */
START_TEST(static_input_all_numbers)
{
    expect_target(&pc_defaults,
                  "x: float[2,3,8]\n" SHAPE DIM(0) DIM(1) "c8: int64[1] = [8]; c = Concat(d1, d0, c8) {axis=0}\n" OUT,
                  1, RESULT, 3, TK_I64(3, 2, 8));
}
END_TEST

/* Two Reshapes share the computed shape; the shape is also a graph output,
 * so the chain stays for it while both Reshapes read constants. */
START_TEST(shared_shape_graph_output_kept)
{
    const char *graph = "x: float[batch,8]\n" SHAPE DIM(0)
                        "c24: int64[2] = [2, 4]; c = Concat(d0, c24) {axis=0}\n"
                        "a = Reshape(r, c); n = Neg(r); b = Reshape(n, c)\nreturn a, b, c";
    expect_target(&sizes13, graph, 2,
                  "r = Relu(x)\n--\nsh = Shape(r); g0 = Gather(sh, i0); d0 = Unsqueeze(g0, ax); c = Concat(d0, c24)\n--\n"
                  "a = Reshape(r, _:const)\n--\nn = Neg(r); b = Reshape(n, _:const)",
                  3, TK_I64(0, 2, 4));
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 2);
    const ph_tensor *t = ph_value_const(ph_node_input(ph_value_producer(ph_graph_output(g, 1)), 1));
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(((const int64_t *)ph_tensor_data(t))[0], 0);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

/* allow_minus_one = false (for models run on empty tensors): the
 * [batch*seq, 8] target stays dynamic. */
START_TEST(minus_one_not_allowed_kept)
{
    ph_test_options o = sizes13;
    o.params = (const char *const[]){"allow_minus_one=false", NULL};
    PC_CASE_OPTS(&o, BATCH_SEQ "bs = Mul(d0, d1); c8: int64[1] = [8]; c = Concat(bs, c8) {axis=0}\n" OUT, 0, NULL);
}
END_TEST

/* [seq, batch, 8] on x [batch, seq, 8]: both symbols sit at other
 * positions, two unknowns. */
START_TEST(swapped_symbols_kept)
{
    PC_CASE_OPTS(&sizes13, BATCH_SEQ "c8: int64[1] = [8]; c = Concat(d1, d0, c8) {axis=0}\n" OUT, 0, NULL);
}
END_TEST

/* allowzero = 1: a symbolic entry cannot become 0, and two are left. */
START_TEST(allowzero_kept)
{
    PC_CASE_OPTS(&sizes13,
                 BATCH_SEQ "c8: int64[1] = [8]; c = Concat(d0, d1, c8) {axis=0}\n"
                           "s = Reshape(r, c) {allowzero=1}; y = Neg(s)\nreturn y",
                 0, NULL);
}
END_TEST

/* One unknown besides a -1 already there. */
START_TEST(unknown_next_to_minus_one_kept)
{
    PC_CASE_OPTS(&sizes13, BATCH_SEQ "m1: int64[1] = [-1]; c = Concat(d1, m1) {axis=0}\n" OUT, 0, NULL);
}
END_TEST

/* (the evaluator's random int64s are no valid target) */
START_TEST(runtime_shape_input_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[2,8]; c: int64[2]\nr = Relu(x)\n" OUT);
}
END_TEST

/* Computed from a run-time value, not from shapes. */
START_TEST(data_dependent_shape_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[2,8]; t: int64[2]; zero: int64[2] = [0, 0]\nr = Relu(x); c = Add(t, zero)\n" OUT);
}
END_TEST

START_TEST(already_constant_kept)
{
    PC_UNTOUCHED("x: float[2,8]; c: int64[2] = [4, 4]\nr = Relu(x)\n" OUT);
}
END_TEST

/* x of unknown rank: Shape(x) has unknown length. */
START_TEST(unknown_rank_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[*]\nr = Relu(x); c = Shape(r)\n" OUT);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_dynamic_reshape_to_static");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, copied_dims_become_zero);
    tcase_add_test(tc, one_unknown_becomes_minus_one);
    tcase_add_test(tc, crnn_reshape_chain_removed_by_default);
    tcase_add_test(tc, static_input_all_numbers);
    tcase_add_test(tc, shared_shape_graph_output_kept);
    tcase_add_test(tc, minus_one_not_allowed_kept);
    tcase_add_test(tc, swapped_symbols_kept);
    tcase_add_test(tc, allowzero_kept);
    tcase_add_test(tc, unknown_next_to_minus_one_kept);
    tcase_add_test(tc, runtime_shape_input_kept);
    tcase_add_test(tc, data_dependent_shape_kept);
    tcase_add_test(tc, already_constant_kept);
    tcase_add_test(tc, unknown_rank_kept);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
