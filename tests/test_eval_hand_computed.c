/* tests/test_eval_hand_computed.c - the SDK evaluator (eval.h) against
 * results computed by hand: pooling (strides, ceil mode, dilations, pads,
 * count_include_pad), MatMul with broadcasting and 1-D operands, Gemm with
 * transposes, alpha, beta and a row C, Transpose and broadcasting Add, and
 * a clear refusal of an attribute it cannot honour.  The numeric checks of
 * every pass test rest on this evaluator. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/passhost.h"
#include "passhost/testing.h"

/* Evaluate the model of `text` on inputs arange(start[i], ...) of each input's
 * shape; out gets one new tensor per graph output.  0, or the evaluator's
 * code with its message in err. */
static int eval_text(const char *text, const float *start, ph_tensor **out, ph_error *err)
{
    ph_model *m = ph_test_model_text(text, err);
    ck_assert_msg(m != NULL, "%s", err->message);
    ph_graph *g = ph_model_graph(m);
    size_t n_in = ph_graph_input_count(g);
    ph_tensor *in[8] = {0};
    for (size_t i = 0; i < n_in; i++) {
        const ph_value *v = ph_graph_input(g, i);
        int64_t dims[8], n = 1;
        for (int d = 0; d < ph_value_rank(v); d++)
            n *= dims[d] = ph_value_dim(v, d);
        double *vals = malloc((size_t)n * sizeof *vals);
        for (int64_t k = 0; k < n; k++)
            vals[k] = start[i] + (double)k;
        in[i] = ph_tensor_from_f64(PH_DT_FLOAT, (size_t)ph_value_rank(v), dims, vals);
        free(vals);
    }
    ph_eval *e = NULL;
    int rc = ph_eval_new(g, &e, err);
    if (!rc)
        rc = ph_eval_run(e, (const ph_tensor *const *)in, n_in, out, ph_graph_output_count(g), err);
    ph_eval_free(e);
    for (size_t i = 0; i < n_in; i++)
        ph_tensor_free(in[i]);
    ph_model_free(m);
    return rc;
}

static void expect(ph_tensor *t, size_t rank, const int64_t *dims, int64_t n, const float *want)
{
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_FLOAT);
    ck_assert_uint_eq(ph_tensor_rank(t), rank);
    for (size_t d = 0; d < rank; d++)
        ck_assert_int_eq(ph_tensor_dim(t, d), dims[d]);
    ck_assert_int_eq(ph_tensor_numel(t), n);
    const float *got = ph_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "element %lld: %g, want %g", (long long)i, (double)got[i],
                      (double)want[i]);
    ph_tensor_free(t);
}

#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define F32(...) ((const float[]){__VA_ARGS__})

START_TEST(maxpool_stride2)
{
    ph_tensor *y;
    ph_error err = {0};
    ck_assert_msg(eval_text("x: float[1,1,4,4]\ny = MaxPool(x) {kernel_shape=[2,2], strides=[2,2]}\nreturn y",
                            F32(0), &y, &err) == 0, "%s", err.message);
    expect(y, 4, I64(1, 1, 2, 2), 4, F32(5, 7, 13, 15));
}
END_TEST

START_TEST(maxpool_ceil_and_dilation)
{
    ph_tensor *y;
    ph_error err = {0};
    ck_assert_msg(eval_text("x: float[1,1,5,5]\n"
                            "y = MaxPool(x) {kernel_shape=[2,2], strides=[2,2], ceil_mode=1}\nreturn y",
                            F32(0), &y, &err) == 0, "%s", err.message);
    expect(y, 4, I64(1, 1, 3, 3), 9, F32(6, 8, 9, 16, 18, 19, 21, 23, 24));
    ck_assert_msg(eval_text("x: float[1,1,4,4]\n"
                            "y = MaxPool(x) {kernel_shape=[2,2], dilations=[2,2]}\nreturn y",
                            F32(0), &y, &err) == 0, "%s", err.message);
    expect(y, 4, I64(1, 1, 2, 2), 4, F32(10, 11, 14, 15));
}
END_TEST

/* 3x3 arange, kernel 3, pads 1: corners average the in-bounds values only,
 * unless count_include_pad divides by the kernel size. */
START_TEST(averagepool_pads)
{
    ph_tensor *y;
    ph_error err = {0};
    ck_assert_msg(eval_text("x: float[1,1,3,3]\n"
                            "y = AveragePool(x) {kernel_shape=[3,3], pads=[1,1,1,1]}\nreturn y",
                            F32(0), &y, &err) == 0, "%s", err.message);
    expect(y, 4, I64(1, 1, 3, 3), 9, F32(2, 2.5f, 3, 3.5f, 4, 4.5f, 5, 5.5f, 6));
    ck_assert_msg(eval_text("x: float[1,1,3,3]\ny = AveragePool(x) {kernel_shape=[3,3], pads=[1,1,1,1], "
                            "count_include_pad=1}\nreturn y",
                            F32(0), &y, &err) == 0, "%s", err.message);
    ck_assert_float_eq(((const float *)ph_tensor_data(y))[0], 8.0f / 9.0f);
    ck_assert_float_eq(((const float *)ph_tensor_data(y))[4], 4.0f);
    ph_tensor_free(y);
}
END_TEST

START_TEST(refuses_an_unknown_auto_pad)
{
    ph_tensor *y = NULL;
    ph_error err = {0};
    int rc = eval_text("x: float[1,1,2,2]\ny = MaxPool(x) {kernel_shape=[1,1], auto_pad=\"BOGUS\"}\nreturn y",
                       F32(0), &y, &err);
    ck_assert_int_lt(rc, 0);
    ck_assert_msg(strstr(err.message, "auto_pad") || strstr(err.message, "BOGUS"), "%s", err.message);
    ck_assert_ptr_null(y);
}
END_TEST

/* a [2,2,3] x b [3,2] (batch broadcast), and v [3] x b -> [2] */
START_TEST(matmul_broadcast_and_1d)
{
    ph_tensor *y[2];
    ph_error err = {0};
    ck_assert_msg(eval_text("a: float[2,2,3]; b: float[3,2]; v: float[3]\n"
                            "p = MatMul(a, b); q = MatMul(v, b)\nreturn p, q",
                            F32(0, 0, 1), y, &err) == 0, "%s", err.message);
    /* b = [[0,1],[2,3],[4,5]]; rows of a: [0,1,2] [3,4,5] [6,7,8] [9,10,11] */
    expect(y[0], 3, I64(2, 2, 2), 8, F32(10, 13, 28, 40, 46, 67, 64, 94));
    expect(y[1], 1, I64(2), 2, F32(16, 22));
}
END_TEST

/* A stored [3,2] with transA, B stored [2,3] with transB, C [2] a row. */
START_TEST(gemm_transposes_and_c)
{
    ph_tensor *y;
    ph_error err = {0};
    ck_assert_msg(eval_text("a: float[3,2]; b: float[2,3]; c: float[2]\n"
                            "y = Gemm(a, b, c) {transA=1, transB=1, alpha=2.0, beta=0.5}\nreturn y",
                            F32(0, 0, 10), &y, &err) == 0, "%s", err.message);
    /* A' = [[0,2,4],[1,3,5]], B' = [[0,3],[1,4],[2,5]]: A'B' = [[10,28],[13,40]];
     * 2 A'B' + 0.5 [10, 11] */
    expect(y, 2, I64(2, 2), 4, F32(25, 61.5f, 31, 85.5f));
}
END_TEST

START_TEST(transpose_and_add)
{
    ph_tensor *y[2];
    ph_error err = {0};
    ck_assert_msg(eval_text("x: float[2,3,2]; r: float[1,2]\n"
                            "t = Transpose(x) {perm=[2,0,1]}; s = Add(x, r)\nreturn t, s",
                            F32(0, 100), y, &err) == 0, "%s", err.message);
    expect(y[0], 3, I64(2, 2, 3), 12, F32(0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11));
    expect(y[1], 3, I64(2, 3, 2), 12, F32(100, 102, 102, 104, 104, 106, 106, 108, 108, 110, 110, 112));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("eval_hand_computed");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, maxpool_stride2);
    tcase_add_test(tc, maxpool_ceil_and_dilation);
    tcase_add_test(tc, averagepool_pads);
    tcase_add_test(tc, refuses_an_unknown_auto_pad);
    tcase_add_test(tc, matmul_broadcast_and_1d);
    tcase_add_test(tc, gemm_transposes_and_c);
    tcase_add_test(tc, transpose_and_add);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
