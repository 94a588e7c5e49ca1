/* tests/test_pass_check_target_constraints.c - the check_target_constraints
 * pass (the real plugin) and ph_target_check behind it: each constraint on
 * a model that violates it and on one that does not, unknown shapes and
 * constants left alone, a violation inside an If branch and a Loop body
 * named by its path, nothing rewritten; and the program: --check-target,
 * --target with --strict-target (exit 10, nothing written) and without it
 * (a warning, the model written, the table in --report-json).
 *
 * The models are text (passhost/testing.h); the pass reports and rewrites
 * nothing, so its cases run it with ph_test_run and a violation callback and
 * compare the reports, which no expected pattern can say. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/exit.h"
#include "clirun.h"
#include "passcase.h"
#include "testkit.h"
#include "tmpdir.h"

static void setup(void)
{
    pc_load("check_target_constraints");
    tk_tmpdir_make("check_target");
}

static void teardown(void)
{
    pc_unload();
    tk_tmpdir_remove();
}

/* The violations reported, one "path|node|op|key|value|limit" line each. */
typedef struct seen {
    char text[8192];
    int count;
} seen;

static int collect(void *user, const ph_violation *v)
{
    seen *s = user;
    size_t len = strlen(s->text);
    snprintf(s->text + len, sizeof s->text - len, "%s|%s|%s|%s|%s|%s\n", v->graph, v->name, v->op, v->key, v->value,
             v->limit);
    s->count++;
    return 0;
}

/* A profile from "section.key=value" items ("" section: [target]). */
static ph_target *profile(const char *const *items)
{
    ph_target *t = ph_target_new();
    for (size_t i = 0; items[i]; i++) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", items[i]);
        char *eq = strchr(buf, '='), *dot = NULL;
        ck_assert_ptr_nonnull(eq);
        *eq = '\0';
        for (char *c = buf; *c; c++)
            if (*c == '.')
                dot = c;
        const char *section = "", *key = buf;
        if (dot && strncmp(buf, "opset.", 6)) {
            *dot = '\0';
            section = buf;
            key = dot + 1;
        } else if (dot) {
            buf[5] = '\0';
            section = buf;
            key = buf + 6;
        }
        ph_error err = {0};
        ck_assert_msg(ph_target_set(t, section, key, eq + 1, &err) == 0, "%s: %s", items[i], err.message);
    }
    return t;
}

/* Run the pass on m with the profile; the violations into *s; asserts the
 * model is unchanged and the outputs bit for bit the same. */
static void check(ph_model *m, const char *const *items, seen *s)
{
    ph_target *t = profile(items);
    memset(s, 0, sizeof *s);
    char *before = tk_graph_sig(ph_model_graph(m));
    ph_test_options o = {.profile = t, .violation = collect, .violation_user = s};
    ph_test_result res;
    ph_error err = {0};
    int rc = ph_test_run(pass, m, &o, &res, &err);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, err.message);
    char *after = tk_graph_sig(ph_model_graph(m));
    ck_assert_str_eq(before, after);
    free(before);
    free(after);
    ph_target_free(t);
}

static void expect_has(const seen *s, const char *line)
{
    ck_assert_msg(strstr(s->text, line) != NULL, "'%s' not in:\n%s", line, s->text);
}

/* The model of `text`, its first node of `op` named `name` (NULL: none). */
static ph_model *text_model(const char *text, ph_op op, const char *name)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(text, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    if (name)
        ck_assert_int_eq(ph_node_set_name(tk_find_op(ph_model_graph(m), op), name), 0);
    return m;
}

/* x [1,2,40,40] -> Conv(W [4,2,k,k], dilation d) named "conv" -> y */
static ph_model *conv_model(int64_t k, int64_t d)
{
    char text[256];
    snprintf(text, sizeof text, "x: float[1,2,40,40]; W: const float[4,2,%lld,%lld]\n"
             "y = Conv(x, W) {dilations=[%lld,%lld]}\nreturn y", (long long)k, (long long)k, (long long)d, (long long)d);
    return text_model(text, PH_OP_Conv, "conv");
}

START_TEST(conv_kernel_area)
{
    seen s;
    const char *const area[] = {"Conv.max_kernel_area=48", NULL};
    ph_model *m = conv_model(7, 1); /* 49 */
    check(m, area, &s);
    ck_assert_int_eq(s.count, 1);
    expect_has(&s, "|conv|Conv|Conv.max_kernel_area|49|48\n");
    ph_model_free(m);
    m = conv_model(4, 2); /* spans 7 x 7 with its dilation */
    check(m, area, &s);
    expect_has(&s, "|conv|Conv|Conv.max_kernel_area|49|48\n");
    ph_model_free(m);
    m = conv_model(6, 1); /* 36: fits */
    check(m, area, &s);
    ck_assert_int_eq(s.count, 0);
    ph_model_free(m);
}
END_TEST

/* without a profile the pass does nothing */
START_TEST(no_profile_no_check)
{
    PC_UNTOUCHED("x: float[1,2,40,40]; W: const float[4,2,7,7]\ny = Conv(x, W)\nreturn y");
}
END_TEST

START_TEST(broadcast_and_rank)
{
    seen s;
    ph_model *m = text_model("a: float[1,3,8,8]; b: float[1,3,1,1]; u: float[1,3,?,8]; x5: float[1,1,3,8,8]\n"
                             "c: const float[8]\n"
                             "y1 = Add(a, b)    # broadcasts\n"
                             "y2 = Mul(a, a)    # same shapes\n"
                             "y3 = Sub(a, u)    # not known: not reported\n"
                             "y4 = Add(a, c)    # a constant operand still broadcasts\n"
                             "y5 = Relu(x5)\n"
                             "return y1, y2, y3, y4, y5",
                             PH_OP_Add, NULL);
    const char *const p[] = {"broadcast=no", "max_rank=4", NULL};
    check(m, p, &s);
    ck_assert_msg(s.count == 4, "%s", s.text);
    expect_has(&s, "Add|broadcast|[1, 3, 8, 8] with [1, 3, 1, 1]|no\n");
    expect_has(&s, "Add|broadcast|[1, 3, 8, 8] with [8]|no\n");
    expect_has(&s, "|x5|(input)|max_rank|5|4\n");
    expect_has(&s, "Relu|max_rank|5|4\n");
    /* same_rank: only the rank must agree */
    const char *const q[] = {"broadcast=same_rank", NULL};
    check(m, q, &s);
    ck_assert_msg(s.count == 1, "%s", s.text); /* [8] with rank 4 */
    expect_has(&s, "Add|broadcast|[1, 3, 8, 8] with [8]|same_rank\n");
    ph_model_free(m);
}
END_TEST

START_TEST(ops_dtypes_opsets)
{
    seen s;
    /* Shape's int64 is the spec's (not counted), the Cast's a choice */
    ph_model *m = text_model("x: float[2,3]\ns = Shape(x); c = Cast(x) {to=7}; gl = Gelu(x)\n"
                             "f = FastGelu@com.microsoft(x)\nreturn s, c, gl, f",
                             PH_OP_Cast, "cast");
    ck_assert_int_eq(ph_node_set_name(tk_find_op(ph_model_graph(m), PH_OP_Gelu), "gelu"), 0);
    const char *const p[] = {"dtypes=float32, int32", "domains=ai.onnx", "ops_except=Gelu", "opset.ai.onnx=11..13", NULL};
    check(m, p, &s);
    expect_has(&s, "|cast|Cast|dtypes|int64|float32, int32\n");
    expect_has(&s, "|gelu|Gelu|ops_except|Gelu|Gelu\n");
    expect_has(&s, "FastGelu@com.microsoft|domains|FastGelu@com.microsoft|ai.onnx\n");
    expect_has(&s, "||(model)|opset.ai.onnx|17|11..13\n");
    ck_assert_msg(s.count == 4, "%s", s.text);
    /* an operator's own dtypes replace the model's */
    const char *const q[] = {"dtypes=float32", "Cast.dtypes=int64", NULL};
    check(m, q, &s);
    ck_assert_msg(s.count == 0, "%s", s.text);
    ph_model_free(m);
}
END_TEST

START_TEST(operator_limits)
{
    seen s;
    ph_model *m = text_model(
        "x: float[1,4,32,32]\n"
        "p = AveragePool(x) {kernel_shape=[32,32], strides=[32,32]}\n"
        "mp = MaxPool(x) {kernel_shape=[3,3]}\n"
        "scales: float[4] = [1, 1, 30, 30]; rs = Resize(x, _, scales) {mode=\"cubic\"}\n"
        "s0, s1 = Split(x) {axis=-1, num_outputs=2}\n"
        "shape: int64[4] = [2, 4, 32, 32]; one: float[1,4,1,32]; e = Expand(one, shape)\n"
        "flat: float[10]; k: int64[1] = [3]; tv, ti = TopK(flat, k)\n"
        "c = Cast(ti) {to=1}; n = Neg(c)     # to float: not a fix\n"
        "s1c: int64[2] = [4, 1024]; r1 = Reshape(x, s1c); s2c: int64[1] = [4096]; r2 = Reshape(r1, s2c)\n"
        "return p, mp, rs, s0, e, tv, n, r2",
        PH_OP_TopK, "topk");
    tk_infer(m);
    const char *const p[] = {"AveragePool.max_kernel=16",
                             "AveragePool.count_include_pad=true",
                             "MaxPool.max_kernel=16",
                             "Resize.max_scale=22",
                             "Resize.modes=nearest, linear",
                             "Split.axes=0, 1",
                             "Expand.max_broadcast_dims=1",
                             "TopK.index_dtype=int32",
                             "noop_ops=Reshape",
                             NULL};
    check(m, p, &s);
    expect_has(&s, "AveragePool|AveragePool.max_kernel|32|16\n");
    expect_has(&s, "AveragePool|AveragePool.count_include_pad|false|true\n");
    expect_has(&s, "Resize|Resize.max_scale|30|22\n");
    expect_has(&s, "Resize|Resize.modes|cubic|nearest, linear\n");
    expect_has(&s, "Split|Split.axes|3|0, 1\n");
    expect_has(&s, "Expand|Expand.max_broadcast_dims|2|1\n");
    expect_has(&s, "|topk|TopK|TopK.index_dtype|int64|int32\n");
    expect_has(&s, "Reshape|noop_ops|after Reshape");
    ck_assert_msg(s.count == 8, "%s", s.text); /* the 3x3 MaxPool fits */
    ph_model_free(m);
}
END_TEST

/* A violation in an If branch and in a Loop body names its path. */
START_TEST(bodies_named)
{
    seen s;
    ph_graph *body[2];
    ph_model *m = pc_if_model("c: bool[]; x: float[1,2,8,8]; W: const float[2,2,9,9]\ny = If(c)\nreturn y",
                              &body[0], &body[1]);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_node_set_name(tk_find_op(g, PH_OP_If), "if1"), 0);
    for (int branch = 0; branch < 2; branch++) {
        ph_node *conv = tk_node(body[branch], "Conv", 2,
                                (ph_value *[]){ph_graph_find_value(g, "x"), ph_graph_find_value(g, "W")});
        ck_assert_int_eq(ph_node_set_name(conv, branch ? "else_conv" : "then_conv"), 0);
        ck_assert_int_eq(ph_node_set_attr_ints(conv, "pads", 4, TK_I64(4, 4, 4, 4)), 0);
        tk_output(body[branch], ph_node_output(conv, 0));
    }
    const char *const p[] = {"Conv.max_kernel=8", NULL};
    check(m, p, &s);
    ck_assert_msg(s.count == 2, "%s", s.text);
    expect_has(&s, "if1/then_branch|then_conv|Conv|Conv.max_kernel|9|8\n");
    expect_has(&s, "if1/else_branch|else_conv|Conv|Conv.max_kernel|9|8\n");
    ph_model_free(m);
}
END_TEST

/* The program: the real model with a Loop, the shipped npu profile. */
START_TEST(cli)
{
    const char *model = PH_SOURCE_DIR "/tests/models/control_flow.onnx";
    tk_cli_result r = TK_CLI("--check-target", "npu", model);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "accumulate/body/body_add") && strstr(r.out, "broadcast"), "%s", r.out);
    ck_assert_msg(strstr(r.err, "--strict-target makes this exit 10"), "%s", r.err);
    tk_cli_free(&r);
    r = TK_CLI("--check-target", "npu", model, "--strict-target");
    tk_expect_failure(&r, HOST_EXIT_TARGET, "target violations", "npu");
    r = TK_CLI("--check-target", "nup", model);
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "unknown target 'nup'", "did you mean 'npu'");

    /* the adapt stage: strict fails and writes nothing */
    const char *out = tk_tpath("out.onnx"), *json = tk_tpath("r.json"), *html = tk_tpath("r.html");
    r = TK_CLI("-i", model, "-o", out, "--target", "npu", "--strict-target");
    ck_assert_msg(r.status == HOST_EXIT_TARGET, "%d %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "remain after the adapt stage (target npu)"), "%s", r.err);
    ck_assert_int_eq(tk_exists(out), 0);
    tk_cli_free(&r);
    /* without: a warning, the output, the table in the report */
    r = TK_CLI("-i", model, "-o", out, "--target", "npu", "--report-json", json);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "warning") && strstr(r.err, "target violation"), "%s", r.err);
    /* the Loop body's Add was brought to one rank by explicit_broadcast:
     * the custom op and the int64 input remain */
    ck_assert_msg(strstr(r.out, "target npu: 2 violations") && strstr(r.out, "call_fn") &&
                      !strstr(r.out, "body_add"),
                  "%s", r.out);
    ck_assert_int_eq(tk_exists(out), 1);
    tk_cli_free(&r);
    char *text = tk_slurp(json, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "\"target\": {\"name\": \"npu\"") &&
                      strstr(text, "\"constraint\": \"domains\"") && strstr(text, "\"node\": \"call_fn\""),
                  "target section not found");
    free(text);
    /* the HTML report has the table */
    r = TK_CLI("-i", model, "-o", out, "--target", "npu", "--report-html", html);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    text = tk_slurp(html, NULL);
    ck_assert_msg(text && strstr(text, "<section id=\"target\"><h2>Target npu: 2 violations</h2>") &&
                      strstr(text, "ScaleAdd@custom.fn"),
                  "target section not in the HTML report");
    free(text);
    /* no target: no check, "target": null */
    r = TK_CLI("-i", model, "-o", out, "--report-json", json);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    text = tk_slurp(json, NULL);
    ck_assert_msg(strstr(text, "\"target\": null"), "%s", text);
    free(text);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("check_target_constraints");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, conv_kernel_area);
    tcase_add_test(tc, no_profile_no_check);
    tcase_add_test(tc, broadcast_and_rank);
    tcase_add_test(tc, ops_dtypes_opsets);
    tcase_add_test(tc, operator_limits);
    tcase_add_test(tc, bodies_named);
    tcase_add_test(tc, cli);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
