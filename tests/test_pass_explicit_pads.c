/* tests/test_pass_explicit_pads.c - explicit_pads: auto_pad SAME/VALID
 * becomes explicit pads, and an end pad no window reads is trimmed. */
#include <string.h>

#include "clirun.h"
#include "passcase.h"
#include "tmpdir.h"

PASS_FIXTURE("explicit_pads")

/* x [1,2,H,W] -> Relu -> Conv(w [M,2,K,K]) {ATTRS} -> Neg */
#define CONV(h, w, m, k, attrs) "x: float[1,2," h "," w "]; w: const float[" m ",2," k "," k "]\n" \
                                "r = Relu(x); c = Conv(r, w) {" attrs "}; y = Neg(c)\nreturn y"
/* the same with ConvTranspose (w [2,M,K,K]) */
#define CONVT(h, w, m, k, attrs) "x: float[1,2," h "," w "]; w: const float[2," m "," k "," k "]\n" \
                                 "r = Relu(x); c = ConvTranspose(r, w) {" attrs "}; y = Neg(c)\nreturn y"
/* x [1,2,H,W] -> Relu -> POOL {kernel K, ATTRS} -> Neg */
#define POOL(op, h, w, k, attrs) "x: float[1,2," h "," w "]\n" \
                                 "r = Relu(x); c = " op "(r) {kernel_shape=[" k "," k "]" attrs "}; y = Neg(c)\nreturn y"
/* the result: the node with these pads and no auto_pad */
#define PADS(op, args, pads) "r = Relu(x)\nc = " op "(" args ") {!auto_pad, pads=" pads "}\ny = Neg(c)"

static const struct {
    const char *graph, *expect;
    int mode;
} explicit[] = {
    /* 6x6, kernel 3, stride 2: out 3, total padding 1 per axis; UPPER puts
     * it at the end, LOWER at the begin (7 wide: out 4, total 2) */
    {CONV("6", "6", "3", "3", "strides=[2,2], auto_pad=\"SAME_UPPER\""), PADS("Conv", "r, w", "[0,0,1,1]"), PC_CHECKED},
    {CONV("6", "7", "3", "3", "strides=[2,2], auto_pad=\"SAME_LOWER\""), PADS("Conv", "r, w", "[1,1,0,1]"), PC_CHECKED},
    /* dilation 2 counts in a Conv's SAME padding: kernel 3 -> extent 5 */
    {CONV("8", "8", "2", "3", "dilations=[2,2], auto_pad=\"SAME_UPPER\""), PADS("Conv", "r, w", "[2,2,2,2]"), PC_CHECKED},
    /* kernel 1, stride 2 on 6: total -1, no padding at all */
    {CONV("6", "6", "2", "1", "strides=[2,2], auto_pad=\"SAME_LOWER\""), PADS("Conv", "r, w", "[0,0,0,0]"), PC_CHECKED},
    {POOL("MaxPool", "5", "5", "2", ", strides=[2,2], auto_pad=\"SAME_LOWER\""), PADS("MaxPool", "r", "[1,1,0,0]"),
     PC_CHECKED},
    /* pads are excluded from the average in both forms */
    {POOL("AveragePool", "5", "6", "3", ", auto_pad=\"SAME_UPPER\""), PADS("AveragePool", "r", "[1,1,1,1]"), PC_CHECKED},
    /* ceil_mode with a span that divides by the stride: floor = ceil */
    {POOL("MaxPool", "5", "5", "3", ", strides=[2,2], ceil_mode=1, auto_pad=\"VALID\""), PADS("MaxPool", "r", "[0,0,0,0]"),
     PC_CHECKED},
    /* ConvTranspose 4 -> 8 (stride 2, kernel 4): total 2, one each side */
    {CONVT("4", "4", "3", "4", "strides=[2,2], auto_pad=\"SAME_UPPER\""), PADS("ConvTranspose", "r, w", "[1,1,1,1]"),
     PC_CHECKED},
    /* LpPool (the evaluator has none) */
    {POOL("LpPool", "4", "4", "2", ", auto_pad=\"SAME_UPPER\""), PADS("LpPool", "r", "[0,0,1,1]"), PC_UNCHECKED},
    /* TuningPadPass: 6 + 1 + 1 - 3 = 5, stride 2 leaves 1 row no window
     * reads (width 7 + 2 - 3 = 6: all read) */
    {CONV("6", "7", "2", "3", "strides=[2,2], pads=[1,1,1,1]"), PADS("Conv", "r, w", "[1,1,0,1]"), PC_CHECKED},
    /* MaxPool 7x7, kernel 2, stride 3, pads 0,0,2,2: span 7, remainder 1 */
    {POOL("MaxPool", "7", "7", "2", ", strides=[3,3], pads=[0,0,2,2]"), PADS("MaxPool", "r", "[0,0,1,1]"), PC_CHECKED},
    /* AveragePool counting pads: the trimmed row was outside every window */
    {POOL("AveragePool", "6", "6", "3", ", strides=[2,2], pads=[1,1,1,1], count_include_pad=1"),
     PADS("AveragePool", "r", "[1,1,0,0]"), PC_CHECKED},
};

START_TEST(pads_made_explicit)
{
    PC_CASE_OPTS(pc_opts(explicit[_i].mode), explicit[_i].graph, 1, explicit[_i].expect);
}
END_TEST

/* VALID needs no shape: spatial dims unknown; the pads given are ignored
 * under VALID. */
START_TEST(conv_valid_unknown_dims)
{
    static const int64_t sizes[] = {5, 8};
    const ph_test_options o = {.max_iterations = 4, .sizes = sizes, .n_sizes = 2};
    PC_CASE_OPTS(&o, CONV("?", "?", "3", "3", "auto_pad=\"VALID\", pads=[1,1,1,1]"), 1, PADS("Conv", "r, w", "[0,0,0,0]"));
}
END_TEST

/* ---- negative cases */

static const struct {
    const char *graph;
    int mode;
} kept[] = {
    /* SAME with an unknown dim */
    {CONV("?", "6", "3", "3", "auto_pad=\"SAME_UPPER\""), PC_UNCHECKED},
    /* ConvTranspose 4 -> 8 with kernel 3: total 1, runtimes disagree where
     * the odd element goes */
    {CONVT("4", "4", "3", "3", "strides=[2,2], auto_pad=\"SAME_UPPER\""), PC_CHECKED},
    /* ConvTranspose with an output_shape */
    {CONVT("4", "4", "3", "4", "strides=[2,2], output_shape=[8,8], auto_pad=\"SAME_UPPER\""), PC_CHECKED},
    /* ConvTranspose pads crop the output: never trimmed */
    {CONVT("4", "4", "3", "3", "strides=[2,2], pads=[1,1,1,1]"), PC_CHECKED},
    /* ONNX Runtime pads a dilated pool's SAME as if undilated */
    {POOL("MaxPool", "6", "6", "2", ", dilations=[2,2], auto_pad=\"SAME_UPPER\""), PC_CHECKED},
    /* ceil_mode and a span that does not divide: the spec and ONNX Runtime
     * give different output sizes */
    {POOL("MaxPool", "6", "6", "3", ", strides=[2,2], ceil_mode=1, auto_pad=\"VALID\""), PC_CHECKED},
    /* kernel 1, stride 4 on 7: total -2, negative padding */
    {CONV("7", "7", "2", "1", "strides=[4,4], auto_pad=\"SAME_UPPER\""), PC_CHECKED},
    /* consistent pads: 7 + 1 + 1 - 3 = 6 divides by 2 */
    {CONV("7", "7", "2", "3", "strides=[2,2], pads=[1,1,1,1]"), PC_CHECKED},
    /* the remainder is there, but the begin pad is never touched and the
     * end pad is already 0 */
    {CONV("6", "6", "2", "3", "strides=[2,2], pads=[2,2,0,0]"), PC_CHECKED},
    /* ceil_mode: pads not trimmed */
    {POOL("MaxPool", "6", "6", "3", ", strides=[2,2], pads=[1,1,1,1], ceil_mode=1"), PC_CHECKED},
    /* explicit pads, unknown dims */
    {POOL("MaxPool", "?", "?", "3", ", strides=[2,2], pads=[1,1,1,1]"), PC_UNCHECKED},
    /* malformed attributes (inference rejects the node too) */
    {POOL("MaxPool", "6", "6", "2", ", auto_pad=\"SAME_UPPER\", strides=[1,1,1]"), PC_NO_SHAPES},
    /* no pads at all */
    {CONV("6", "6", "2", "3", "strides=[2,2]"), PC_CHECKED},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(kept[_i].mode, kept[_i].graph);
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
    tcase_add_loop_test(tc, pads_made_explicit, 0, (int)(sizeof explicit / sizeof *explicit));
    tcase_add_test(tc, conv_valid_unknown_dims);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof kept / sizeof *kept));
    tcase_add_test(tc, profile_auto_pad);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
