/* tests/test_pass_explicit_pads.c - the explicit_pads pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "clirun.h"
#include "passhost/testing.h"
#include "testkit.h"
#include "tmpdir.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("explicit_pads");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

static void set_ints(ph_node *n, const char *name, size_t count, const int64_t *v)
{
    ck_assert_int_eq(ph_node_set_attr_ints(n, name, count, v), 0);
}

static void set_str(ph_node *n, const char *name, const char *v)
{
    ck_assert_int_eq(ph_node_set_attr_string(n, name, v), 0);
}

/* x [1,2,h,w] -> Relu -> Conv(W [m,2,k,k]) -> Neg -> y; returns the Conv. */
static ph_node *conv(ph_model *m, const char *op, int64_t h, int64_t w, int64_t mch, int64_t k)
{
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 4, TK_I64(1, 2, h, w)));
    int transpose = !strcmp(op, "ConvTranspose");
    ph_value *wt = transpose ? tk_init(g, "W", 4, TK_I64(2, mch, k, k), 7) : tk_init(g, "W", 4, TK_I64(mch, 2, k, k), 7);
    ph_node *c = tk_node(g, op, 2, (ph_value *[]){r, wt});
    tk_output(g, tk_op1(g, "Neg", ph_node_output(c, 0)));
    return c;
}

/* x [1,2,h,w] -> Relu -> POOL(kernel k) -> Neg -> y */
static ph_node *pool(ph_model *m, const char *op, int64_t h, int64_t w, int64_t k)
{
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 4, TK_I64(1, 2, h, w)));
    ph_node *p = tk_node(g, op, 1, &r);
    set_ints(p, "kernel_shape", 2, TK_I64(k, k));
    tk_output(g, tk_op1(g, "Neg", ph_node_output(p, 0)));
    return p;
}

/* The node's pads equal want (4 entries) and it has no auto_pad. */
static void expect_pads(const ph_node *n, const int64_t *want)
{
    const int64_t *p;
    ck_assert_int_eq(ph_node_attr_type(n, "auto_pad"), PH_ATTR_NONE);
    ck_assert_int_eq(ph_node_attr_ints(n, "pads", &p), 4);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(p[i] == want[i], "pads[%d] = %lld, want %lld", i, (long long)p[i], (long long)want[i]);
}

/* 6x6, kernel 3, stride 2: out 3, total padding 1 per axis; UPPER puts it
 * at the end, LOWER at the begin. */
START_TEST(conv_same_upper_and_lower)
{
    ph_model *m = tk_model();
    ph_node *c = conv(m, "Conv", 6, 6, 3, 3);
    set_ints(c, "strides", 2, TK_I64(2, 2));
    set_str(c, "auto_pad", "SAME_UPPER");
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    expect_pads(c, TK_I64(0, 0, 1, 1));
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);

    m = tk_model();
    c = conv(m, "Conv", 6, 7, 3, 3);
    set_ints(c, "strides", 2, TK_I64(2, 2));
    set_str(c, "auto_pad", "SAME_LOWER");
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    expect_pads(c, TK_I64(1, 1, 0, 1)); /* 7 wide: out 4, total 2 */
    ph_model_free(m);
}
END_TEST

/* Dilation 2 counts in a Conv's SAME padding: kernel 3 -> extent 5. */
START_TEST(conv_same_dilated)
{
    ph_model *m = tk_model();
    ph_node *c = conv(m, "Conv", 8, 8, 2, 3);
    set_ints(c, "dilations", 2, TK_I64(2, 2));
    set_str(c, "auto_pad", "SAME_UPPER");
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    expect_pads(c, TK_I64(2, 2, 2, 2));
    ph_model_free(m);
}
END_TEST

/* Kernel 1, stride 2 on 6: total -1, no padding at all. */
START_TEST(conv_same_negative_one_is_zero)
{
    ph_model *m = tk_model();
    ph_node *c = conv(m, "Conv", 6, 6, 2, 1);
    set_ints(c, "strides", 2, TK_I64(2, 2));
    set_str(c, "auto_pad", "SAME_LOWER");
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    expect_pads(c, TK_I64(0, 0, 0, 0));
    ph_model_free(m);
}
END_TEST

/* VALID needs no shape: spatial dims unknown. */
START_TEST(conv_valid_unknown_dims)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 4, TK_I64(1, 2, -1, -1)));
    ph_node *c = tk_node(g, "Conv", 2, (ph_value *[]){r, tk_init(g, "W", 4, TK_I64(3, 2, 3, 3), 5)});
    set_str(c, "auto_pad", "VALID");
    set_ints(c, "pads", 4, TK_I64(1, 1, 1, 1)); /* ignored under VALID */
    tk_output(g, tk_op1(g, "Neg", ph_node_output(c, 0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 2, TK_I64(5, 8)), 1);
    expect_pads(c, TK_I64(0, 0, 0, 0));
    ph_model_free(m);
}
END_TEST

START_TEST(maxpool_same_lower)
{
    ph_model *m = tk_model();
    ph_node *p = pool(m, "MaxPool", 5, 5, 2);
    set_ints(p, "strides", 2, TK_I64(2, 2));
    set_str(p, "auto_pad", "SAME_LOWER");
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 0, NULL), 1);
    expect_pads(p, TK_I64(1, 1, 0, 0));
    ph_model_free(m);
}
END_TEST

/* Pads are excluded from the average in both forms. */
START_TEST(averagepool_same_upper)
{
    ph_model *m = tk_model();
    ph_node *p = pool(m, "AveragePool", 5, 6, 3);
    set_str(p, "auto_pad", "SAME_UPPER");
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 7, 0, NULL), 1);
    expect_pads(p, TK_I64(1, 1, 1, 1));
    ph_model_free(m);
}
END_TEST

/* ceil_mode with a span that divides by the stride: floor = ceil. */
START_TEST(maxpool_valid_ceil_mode_divisible)
{
    ph_model *m = tk_model();
    ph_node *p = pool(m, "MaxPool", 5, 5, 3);
    set_ints(p, "strides", 2, TK_I64(2, 2));
    ck_assert_int_eq(ph_node_set_attr_int(p, "ceil_mode", 1), 0);
    set_str(p, "auto_pad", "VALID");
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 8, 0, NULL), 1);
    expect_pads(p, TK_I64(0, 0, 0, 0));
    ph_model_free(m);
}
END_TEST

/* ConvTranspose 4 -> 8 (stride 2, kernel 4): total 2, one each side. */
START_TEST(convtranspose_same_even)
{
    ph_model *m = tk_model();
    ph_node *c = conv(m, "ConvTranspose", 4, 4, 3, 4);
    set_ints(c, "strides", 2, TK_I64(2, 2));
    set_str(c, "auto_pad", "SAME_UPPER");
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 9, 0, NULL), 1);
    expect_pads(c, TK_I64(1, 1, 1, 1));
    ph_model_free(m);
}
END_TEST

START_TEST(lppool_same)
{
    ph_model *m = tk_model();
    ph_node *p = pool(m, "LpPool", 4, 4, 2);
    set_str(p, "auto_pad", "SAME_UPPER");
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    expect_pads(p, TK_I64(0, 0, 1, 1));
    ph_model_free(m);
}
END_TEST

/* TuningPadPass: 6 + 1 + 1 - 3 = 5, stride 2 leaves 1 row no window reads. */
START_TEST(conv_unread_end_pad_trimmed)
{
    ph_model *m = tk_model();
    ph_node *c = conv(m, "Conv", 6, 7, 2, 3);
    set_ints(c, "strides", 2, TK_I64(2, 2));
    set_ints(c, "pads", 4, TK_I64(1, 1, 1, 1));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 10, 0, NULL), 1);
    expect_pads(c, TK_I64(1, 1, 0, 1)); /* width 7 + 2 - 3 = 6: all read */
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

/* MaxPool 7x7, kernel 2, stride 3, pads 0,0,2,2: span 7, remainder 1. */
START_TEST(maxpool_unread_end_pad_trimmed)
{
    ph_model *m = tk_model();
    ph_node *p = pool(m, "MaxPool", 7, 7, 2);
    set_ints(p, "strides", 2, TK_I64(3, 3));
    set_ints(p, "pads", 4, TK_I64(0, 0, 2, 2));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 11, 0, NULL), 1);
    expect_pads(p, TK_I64(0, 0, 1, 1));
    ph_model_free(m);
}
END_TEST

/* AveragePool counting pads: the trimmed row was outside every window. */
START_TEST(averagepool_count_include_pad_trimmed)
{
    ph_model *m = tk_model();
    ph_node *p = pool(m, "AveragePool", 6, 6, 3);
    set_ints(p, "strides", 2, TK_I64(2, 2));
    set_ints(p, "pads", 4, TK_I64(1, 1, 1, 1));
    ck_assert_int_eq(ph_node_set_attr_int(p, "count_include_pad", 1), 0);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 12, 0, NULL), 1);
    expect_pads(p, TK_I64(1, 1, 0, 0));
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(same_unknown_dims_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 4, TK_I64(1, 2, -1, 6)));
    ph_node *c = tk_node(g, "Conv", 2, (ph_value *[]){r, tk_init(g, "W", 4, TK_I64(3, 2, 3, 3), 5)});
    set_str(c, "auto_pad", "SAME_UPPER");
    tk_output(g, tk_op1(g, "Neg", ph_node_output(c, 0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ConvTranspose 4 -> 8 with kernel 3: total 1, runtimes disagree where
 * the odd element goes. */
START_TEST(convtranspose_same_odd_kept)
{
    ph_model *m = tk_model();
    ph_node *c = conv(m, "ConvTranspose", 4, 4, 3, 3);
    set_ints(c, "strides", 2, TK_I64(2, 2));
    set_str(c, "auto_pad", "SAME_UPPER");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(convtranspose_output_shape_kept)
{
    ph_model *m = tk_model();
    ph_node *c = conv(m, "ConvTranspose", 4, 4, 3, 4);
    set_ints(c, "strides", 2, TK_I64(2, 2));
    set_ints(c, "output_shape", 2, TK_I64(8, 8));
    set_str(c, "auto_pad", "SAME_UPPER");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ConvTranspose pads crop the output: never trimmed. */
START_TEST(convtranspose_explicit_pads_kept)
{
    ph_model *m = tk_model();
    ph_node *c = conv(m, "ConvTranspose", 4, 4, 3, 3);
    set_ints(c, "strides", 2, TK_I64(2, 2));
    set_ints(c, "pads", 4, TK_I64(1, 1, 1, 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ONNX Runtime pads a dilated pool's SAME as if undilated. */
START_TEST(maxpool_same_dilated_kept)
{
    ph_model *m = tk_model();
    ph_node *p = pool(m, "MaxPool", 6, 6, 2);
    set_ints(p, "dilations", 2, TK_I64(2, 2));
    set_str(p, "auto_pad", "SAME_UPPER");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ceil_mode and a span that does not divide: the spec and ONNX Runtime
 * give different output sizes. */
START_TEST(maxpool_valid_ceil_mode_remainder_kept)
{
    ph_model *m = tk_model();
    ph_node *p = pool(m, "MaxPool", 6, 6, 3);
    set_ints(p, "strides", 2, TK_I64(2, 2));
    ck_assert_int_eq(ph_node_set_attr_int(p, "ceil_mode", 1), 0);
    set_str(p, "auto_pad", "VALID");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Kernel 1, stride 4 on 7: total -2, negative padding. */
START_TEST(conv_same_negative_total_kept)
{
    ph_model *m = tk_model();
    ph_node *c = conv(m, "Conv", 7, 7, 2, 1);
    set_ints(c, "strides", 2, TK_I64(4, 4));
    set_str(c, "auto_pad", "SAME_UPPER");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Consistent pads: 7 + 1 + 1 - 3 = 6 divides by 2. */
START_TEST(consistent_pads_kept)
{
    ph_model *m = tk_model();
    ph_node *c = conv(m, "Conv", 7, 7, 2, 3);
    set_ints(c, "strides", 2, TK_I64(2, 2));
    set_ints(c, "pads", 4, TK_I64(1, 1, 1, 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The remainder is there, but the begin pad is never touched and the end
 * pad is already 0. */
START_TEST(begin_pad_never_trimmed)
{
    ph_model *m = tk_model();
    ph_node *c = conv(m, "Conv", 6, 6, 2, 3);
    set_ints(c, "strides", 2, TK_I64(2, 2));
    set_ints(c, "pads", 4, TK_I64(2, 2, 0, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(ceil_mode_pads_not_trimmed)
{
    ph_model *m = tk_model();
    ph_node *p = pool(m, "MaxPool", 6, 6, 3);
    set_ints(p, "strides", 2, TK_I64(2, 2));
    set_ints(p, "pads", 4, TK_I64(1, 1, 1, 1));
    ck_assert_int_eq(ph_node_set_attr_int(p, "ceil_mode", 1), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(explicit_pads_unknown_dims_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 4, TK_I64(1, 2, -1, -1)));
    ph_node *p = tk_node(g, "MaxPool", 1, &r);
    set_ints(p, "kernel_shape", 2, TK_I64(3, 3));
    set_ints(p, "strides", 2, TK_I64(2, 2));
    set_ints(p, "pads", 4, TK_I64(1, 1, 1, 1));
    tk_output(g, tk_op1(g, "Neg", ph_node_output(p, 0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(malformed_attrs_kept)
{
    ph_model *m = tk_model();
    ph_node *p = pool(m, "MaxPool", 6, 6, 2);
    set_str(p, "auto_pad", "SAME_UPPER");
    set_ints(p, "strides", 3, TK_I64(1, 1, 1));
    /* inference rejects the node too, so run the pass without it */
    pass->shapes = 0;
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(no_pads_at_all_kept)
{
    ph_model *m = tk_model();
    ph_node *c = conv(m, "Conv", 6, 6, 2, 3);
    set_ints(c, "strides", 2, TK_I64(2, 2));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The profile: a target with auto_pad = no (npu) switches the pass on in
 * the adapt stage, and --check-target names it; without the key (ort) or
 * without a target the adapt stage leaves auto_pad.  The optimize stage's
 * run is switched off to see the adapt stage's. */
START_TEST(profile_auto_pad)
{
    tk_tmpdir_make("explicit_pads");
    ph_error err = {0};
    ph_model *m = ph_test_model_text("x: float[1,2,8,8]; w: const float[4,2,3,3]\n"
                                     "y = Conv(x, w) {auto_pad=\"SAME_UPPER\"}\nreturn y",
                                     &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    const char *in = tk_tpath("same.onnx"), *out = tk_tpath("out.onnx");
    ck_assert_int_eq(ph_model_save(m, in, &err), 0);
    ph_model_free(m);
    tk_cli_result r = TK_CLI("--check-target", "npu", in);
    ck_assert_msg(r.status == 0 && strstr(r.out, "auto_pad") && strstr(r.out, "SAME_UPPER") &&
                      strstr(r.out, "explicit_pads"),
                  "%s%s", r.out, r.err);
    tk_cli_free(&r);
    r = TK_CLI("-i", in, "-o", out, "--set", "optimize.pass_off=explicit_pads", "--target", "npu", "--verify");
    ck_assert_msg(r.status == 0 && strstr(r.out, "explicit_pads 1") && strstr(r.out, "target npu: no violations"),
                  "%s%s", r.out, r.err);
    tk_cli_free(&r);
    ck_assert_msg(ph_model_load(out, &m, &err) == 0, "%s", err.message);
    ph_node *conv = ph_graph_first_node(ph_model_graph(m));
    const int64_t *pads;
    ck_assert_str_eq(ph_node_attr_string(conv, "auto_pad", "NOTSET"), "NOTSET");
    ck_assert_int_eq(ph_node_attr_ints(conv, "pads", &pads), 4);
    ck_assert(pads[0] == 1 && pads[1] == 1 && pads[2] == 1 && pads[3] == 1);
    ph_model_free(m);
    const char *const without[][6] = {{"--target", "ort"}, {"--set", "adapt.max_iterations=4"}};
    for (int i = 0; i < 2; i++) {
        r = TK_CLI("-i", in, "-o", out, "--set", "optimize.pass_off=explicit_pads", without[i][0], without[i][1]);
        ck_assert_msg(r.status == 0, "%s", r.err);
        tk_cli_free(&r);
        ck_assert_msg(ph_model_load(out, &m, &err) == 0, "%s", err.message);
        ck_assert_str_eq(ph_node_attr_string(ph_graph_first_node(ph_model_graph(m)), "auto_pad", ""), "SAME_UPPER");
        ph_model_free(m);
    }
    tk_tmpdir_remove();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_explicit_pads");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, conv_same_upper_and_lower);
    tcase_add_test(tc, conv_same_dilated);
    tcase_add_test(tc, conv_same_negative_one_is_zero);
    tcase_add_test(tc, conv_valid_unknown_dims);
    tcase_add_test(tc, maxpool_same_lower);
    tcase_add_test(tc, averagepool_same_upper);
    tcase_add_test(tc, maxpool_valid_ceil_mode_divisible);
    tcase_add_test(tc, convtranspose_same_even);
    tcase_add_test(tc, lppool_same);
    tcase_add_test(tc, conv_unread_end_pad_trimmed);
    tcase_add_test(tc, maxpool_unread_end_pad_trimmed);
    tcase_add_test(tc, averagepool_count_include_pad_trimmed);
    tcase_add_test(tc, same_unknown_dims_kept);
    tcase_add_test(tc, convtranspose_same_odd_kept);
    tcase_add_test(tc, convtranspose_output_shape_kept);
    tcase_add_test(tc, convtranspose_explicit_pads_kept);
    tcase_add_test(tc, maxpool_same_dilated_kept);
    tcase_add_test(tc, maxpool_valid_ceil_mode_remainder_kept);
    tcase_add_test(tc, conv_same_negative_total_kept);
    tcase_add_test(tc, consistent_pads_kept);
    tcase_add_test(tc, begin_pad_never_trimmed);
    tcase_add_test(tc, ceil_mode_pads_not_trimmed);
    tcase_add_test(tc, explicit_pads_unknown_dims_kept);
    tcase_add_test(tc, malformed_attrs_kept);
    tcase_add_test(tc, no_pads_at_all_kept);
    tcase_add_test(tc, profile_auto_pad);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
