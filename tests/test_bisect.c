/* tests/test_bisect.c - numbered rewrites end to end, through the built
 * binary $(PH_BUILD_DIR)/bin/passhost: --max-rewrites (0 is a load/save
 * round trip, N applies exactly N, a pass that does not number its rewrites
 * is numbered by the host and stopped between calls), --bisect naming the
 * pass and the rewrite that broke the outputs, --bisect-out's reproducer,
 * --print-changes, --dump-dir, and bad values.
 *
 * Models are built with the IR API and saved into a mkdtemp folder; the
 * passes are the test plugins tp_seventh_scales (Relu -> Max(x, 0), the 7th
 * also scales by 1.001) and tp_unnumbered (Neg -> Mul(x, -1), never asks
 * ph_ctx_rewrite_begin), copied into a plugin folder given with
 * --plugin-dir. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clirun.h"
#include "config/config.h"
#include "base/exit.h"
#include "config/loader.h"
#include "passhost/host.h"
#include "passhost/passhost.h"
#include "config/plan.h"
#include "report/report.h"
#include "run/runner.h"
#include "tmpdir.h"
#include "check/verify.h"

static const char *tmpdir;
static const char *plugdir;

static void setup(void)
{
    static const char *const plugins[] = {"tp_seventh_scales", "tp_unnumbered", "tp_wrong_math",
                                          "tp_rule_seventh", NULL};
    tmpdir = tk_tmpdir_make("bisect");
    plugdir = tk_tmpdir_plugins(plugins);
    unsetenv("PASSHOST_PLUGIN_PATH");
}

static void teardown(void)
{
    tk_tmpdir_remove();
}

/* Lines of s that start with prefix. */
static int lines_starting(const char *s, const char *prefix)
{
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *line = s; line && *line;) {
        n += strncmp(line, prefix, len) == 0;
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return n;
}

/* x[4,16] -> n_neg Neg nodes (outputs neg_out_I) and n_relu Relu nodes
 * named relu_I (outputs y_I), all reading x; saved to tmpdir/name. */
static const char *build_model(const char *name, int n_relu, int n_neg)
{
    static const int64_t dims[] = {4, 16};
    ph_model *m = ph_model_new(13);
    ck_assert_ptr_nonnull(m);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, dims);
    ck_assert_ptr_nonnull(x);
    for (int i = 0; i < n_neg + n_relu; i++) {
        int neg = i < n_neg;
        ph_node *n = ph_node_create(g, NULL, neg ? "Neg" : "Relu", 1, &x, 1);
        ck_assert_ptr_nonnull(n);
        char buf[64];
        snprintf(buf, sizeof buf, neg ? "neg_%d" : "relu_%d", neg ? i : i - n_neg);
        ck_assert_int_eq(ph_node_set_name(n, buf), 0);
        ph_value *y = ph_node_output(n, 0);
        ck_assert_int_eq(ph_value_set_type(y, PH_DT_FLOAT, 2, dims), 0);
        ck_assert_int_eq(ph_graph_add_output(g, y), 0);
    }
    ck_assert_int_eq(ph_graph_verify(g, NULL), 0);
    const char *path = tk_tpath(name);
    ph_error err = {0};
    ck_assert_msg(ph_model_save(m, path, &err) == 0, "%s", err.message);
    ph_model_free(m);
    return path;
}

static ph_model *load(const char *path)
{
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_msg(ph_model_load(path, &m, &err) == 0, "%s: %s", path, err.message);
    ck_assert_msg(ph_graph_verify(ph_model_graph(m), &err) == 0, "%s: %s", path, err.message);
    return m;
}

static size_t count_op(const char *path, ph_op op)
{
    ph_model *m = load(path);
    size_t n = 0;
    for (ph_node *x = ph_graph_first_node(ph_model_graph(m)); x; x = ph_node_next(x))
        n += ph_node_op(x) == op;
    ph_model_free(m);
    return n;
}

/* 0 when model `path` computes what `original` computes ([verify] defaults). */
static int verify_against(const char *original, const char *path)
{
    host_verify_config vc = host_verify_defaults();
    ph_model *a = load(original), *b = load(path);
    ph_error err = {0};
    ph_graph_infer_shapes(ph_model_graph(a), &err);
    ph_graph_infer_shapes(ph_model_graph(b), &err);
    host_verify *v = NULL;
    ck_assert_msg(host_verify_new(a, &vc, &v, &err) == 0, "%s", err.message);
    int rc = host_verify_check(v, b, &err);
    host_verify_free(v);
    ph_model_free(a);
    ph_model_free(b);
    return rc;
}

#define NO_DEFAULTS "--set", "optimize.no_integral=true", "--set", "adapt.no_integral=true"

/* ------------------------------------------------------------ bisect */

START_TEST(bisect_names_the_seventh_rewrite)
{
    const char *in = build_model("relus.onnx", 12, 0);
    size_t len_before;
    char *bytes_before = tk_slurp(in, &len_before);
    tk_cli_result r = TK_CLI("-i", in, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
                             "optimize.pass_on=tp_seventh_scales", "--bisect");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    ck_assert_msg(tk_line_count(r.err) == 1, "want one stderr line: %s", r.err);
    ck_assert_msg(strncmp(r.err, "passhost: bisect: ", 18) == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "rewrite 7 of 12") && strstr(r.err, "pass tp_seventh_scales") &&
                  strstr(r.err, "#7 of its call") && strstr(r.err, "matched relu_6"),
                  "%s", r.err);
    ck_assert_msg(strstr(r.err, "then output '") != NULL, "names the output: %s", r.err);
    /* the search is shown on stdout */
    ck_assert_msg(strstr(r.out, "first 6 rewrites: ok") && strstr(r.out, "first 7 rewrites: outputs differ"),
                  "%s", r.out);
    tk_cli_free(&r);
    /* nothing written, the input untouched */
    DIR *d = opendir(tmpdir);
    int entries = 0;
    for (struct dirent *de; (de = readdir(d));)
        entries += de->d_name[0] != '.';
    closedir(d);
    ck_assert_int_eq(entries, 2); /* relus.onnx and plugins/ */
    size_t len_after;
    char *bytes_after = tk_slurp(in, &len_after);
    ck_assert(len_before == len_after && memcmp(bytes_before, bytes_after, len_after) == 0);
    free(bytes_before);
    free(bytes_after);

    /* -q: the same one line, no progress */
    r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
               "optimize.pass_on=tp_seventh_scales", "--bisect", "-q", "--verify=2");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(strstr(r.err, "rewrite 7 of 12") != NULL, "%s", r.err);
    ck_assert(!tk_exists(tk_tpath("out.onnx"))); /* --bisect writes no output model */
    tk_cli_free(&r);
}
END_TEST

START_TEST(bisect_out_writes_a_reproducer)
{
    const char *in = build_model("relus.onnx", 10, 0);
    const char *dir = tk_tpath("repro");
    tk_cli_result r = TK_CLI("-i", in, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
                             "optimize.pass_on=tp_seventh_scales", "--set", "verify.seed=42",
                             "--bisect-out", dir);
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "rewrite 7 of 10") && strstr(r.err, "relu_6"), "%s", r.err);
    tk_cli_free(&r);
    const char *before = tk_tpath("repro/before.onnx"), *after = tk_tpath("repro/after.onnx");
    ck_assert(tk_exists(before) && tk_exists(after) && tk_exists(tk_tpath("repro/config.ini")) &&
              tk_exists(tk_tpath("repro/README.txt")));
    /* before: 6 rewrites, computes the same; after: 7, does not */
    ck_assert_int_eq(count_op(before, PH_OP_Max), 6);
    ck_assert_int_eq(count_op(after, PH_OP_Max), 7);
    ck_assert_int_eq(count_op(after, PH_OP_Mul), 1);
    ck_assert_int_eq(verify_against(in, before), 0);
    ck_assert_int_eq(verify_against(in, after), HOST_EXIT_MISMATCH);
    char *readme = tk_slurp(tk_tpath("repro/README.txt"), NULL);
    ck_assert_msg(strstr(readme, "seed 42") && strstr(readme, "--max-rewrites 6") &&
                  strstr(readme, "tp_seventh_scales") && strstr(readme, "--bisect-out"),
                  "%s", readme);
    free(readme);
    char *ini = tk_slurp(tk_tpath("repro/config.ini"), NULL);
    ck_assert_msg(strstr(ini, "seed = 42") && strstr(ini, "tp_seventh_scales") &&
                  strstr(ini, "max_iterations = 16") && strstr(ini, "[pass.tp_seventh_scales]"),
                  "%s", ini);
    free(ini);

    /* the config reproduces both files */
    const char *cfg = tk_tpath("repro/config.ini");
    r = TK_CLI(cfg, "--max-rewrites", "6", "--verify", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    size_t la, lb;
    char *a = tk_slurp(tk_tpath("repro/out.onnx"), &la), *b = tk_slurp(before, &lb);
    ck_assert_msg(a && la == lb && memcmp(a, b, la) == 0, "out.onnx differs from before.onnx");
    free(a);
    free(b);
    r = TK_CLI(cfg, "--max-rewrites", "7", "--verify", "-q");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    r = TK_CLI(cfg, "--bisect", "-q");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH && strstr(r.err, "rewrite 7 of 10"), "%s", r.err);
    tk_cli_free(&r);
}
END_TEST

START_TEST(bisect_of_a_good_run_exits_0)
{
    char from[600];
    snprintf(from, sizeof from, "%s/models/cnn_small.onnx", PH_SOURCE_DIR);
    tk_cli_result r = TK_CLI("-i", from, "-o", tk_tpath("out.onnx"), "--bisect");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "verifies") && strstr(r.out, "nothing to bisect"), "%s", r.out);
    ck_assert(!tk_exists(tk_tpath("out.onnx")));
    tk_cli_free(&r);
    /* with a pass that does not number its rewrites: still fine */
    const char *in = build_model("negs.onnx", 0, 5);
    r = TK_CLI("-i", in, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
               "optimize.pass_on=tp_unnumbered", "--bisect");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "all 5 rewrites verifies") || strstr(r.out, "of all 5 rewrites"),
                  "%s", r.out);
    tk_cli_free(&r);
}
END_TEST

START_TEST(bisect_with_an_unnumbered_pass_names_its_call)
{
    /* the numbered pass breaks at its 7th; the unnumbered one runs first
       and takes rewrites 1..3 in one call */
    const char *in = build_model("mixed.onnx", 9, 3);
    tk_cli_result r = TK_CLI("-i", in, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
                             "optimize.pass_on=tp_unnumbered,tp_seventh_scales", "--bisect");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "rewrite 10 of 12") && strstr(r.err, "#7 of its call") &&
                  strstr(r.err, "relu_6"), "%s", r.err);
    tk_cli_free(&r);
    /* an unnumbered pass that breaks the outputs (one Relu -> Sigmoid per
       call): its first call is the culprit, named as a whole call */
    r = TK_CLI("-i", in, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
               "optimize.pass_on=tp_wrong_math", "--bisect-out", tk_tpath("repro"));
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    ck_assert_msg(tk_line_count(r.err) == 1 && strstr(r.err, "rewrite 1 of 9") &&
                  strstr(r.err, "pass tp_wrong_math") && strstr(r.err, "does not number"),
                  "%s", r.err);
    tk_cli_free(&r);
    ck_assert_int_eq(count_op(tk_tpath("repro/before.onnx"), PH_OP_Sigmoid), 0);
    ck_assert_int_eq(count_op(tk_tpath("repro/after.onnx"), PH_OP_Sigmoid), 1);
}
END_TEST

/* ------------------------------------------------------ --max-rewrites */

START_TEST(max_rewrites_zero_is_a_round_trip)
{
    const char *models[] = {"cnn_small.onnx", "transformer_block.onnx"};
    for (size_t i = 0; i < 2; i++) {
        char in[600];
        snprintf(in, sizeof in, "%s/models/%s", PH_SOURCE_DIR, models[i]);
        tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("a.onnx"), "-q", "--max-rewrites", "0");
        ck_assert_msg(r.status == 0, "%s", r.err);
        tk_cli_free(&r);
        r = TK_CLI("-i", in, "-o", tk_tpath("b.onnx"), "-q", NO_DEFAULTS);
        ck_assert_msg(r.status == 0, "%s", r.err);
        tk_cli_free(&r);
        size_t la, lb;
        char *a = tk_slurp(tk_tpath("a.onnx"), &la), *b = tk_slurp(tk_tpath("b.onnx"), &lb);
        ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "%s: --max-rewrites 0 differs", models[i]);
        free(a);
        free(b);
    }
}
END_TEST

START_TEST(max_rewrites_applies_exactly_n)
{
    const char *in = build_model("relus.onnx", 12, 0);
    const char *out = tk_tpath("out.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", out, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
                             "optimize.pass_on=tp_seventh_scales", "--max-rewrites", "3",
                             "--verify");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "--max-rewrites 3: 3 rewrites applied") != NULL, "%s", r.err);
    ck_assert_msg(strstr(r.out, "3 rewrites") != NULL, "%s", r.out);
    tk_cli_free(&r);
    ck_assert_int_eq(count_op(out, PH_OP_Max), 3);
    ck_assert_int_eq(count_op(out, PH_OP_Relu), 9);
    /* more than there are: all of them */
    r = TK_CLI("-i", in, "-o", out, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
               "optimize.pass_on=tp_seventh_scales", "--max-rewrites=100", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    ck_assert_int_eq(count_op(out, PH_OP_Max), 12);
}
END_TEST

/* The same through a rule pass: the stage's worklist numbers its rewrites,
 * stops it between two of them, and bisect names the one that broke. */
START_TEST(rule_pass_rewrites_numbered_limited_and_bisected)
{
    const char *in = build_model("relus.onnx", 12, 0);
    const char *out = tk_tpath("out.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", out, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
                             "optimize.pass_on=tp_rule_seventh", "--max-rewrites", "3", "--print-changes");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "--max-rewrites 3: 3 rewrites applied") != NULL, "%s", r.err);
    ck_assert_int_eq(lines_starting(r.err, "rewrite "), 3);
    ck_assert_msg(strstr(r.err, "rewrite 1 [tp_rule_seventh #1]: relu_0") != NULL, "%s", r.err);
    ck_assert_msg(strstr(r.err, "rewrite 3 [tp_rule_seventh #3]: relu_2") != NULL, "%s", r.err);
    tk_cli_free(&r);
    ck_assert_int_eq(count_op(out, PH_OP_Max), 3);
    ck_assert_int_eq(count_op(out, PH_OP_Relu), 9);

    r = TK_CLI("-i", in, "--plugin-dir", plugdir, NO_DEFAULTS, "--set", "optimize.pass_on=tp_rule_seventh",
               "--bisect", "-q");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "rewrite 7 of 12") && strstr(r.err, "pass tp_rule_seventh") &&
                  strstr(r.err, "#7 of its call") && strstr(r.err, "matched relu_6"),
                  "%s", r.err);
    tk_cli_free(&r);
}
END_TEST

START_TEST(unnumbered_pass_is_numbered_and_stopped_per_call)
{
    const char *in = build_model("mixed.onnx", 12, 5);
    const char *out = tk_tpath("out.onnx");
    /* the unnumbered pass is called (0 < 3) and makes all 5; then the
       budget is used up and the numbered pass is never called */
    tk_cli_result r = TK_CLI("-i", in, "-o", out, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
                             "optimize.pass_on=tp_unnumbered,tp_seventh_scales",
                             "--max-rewrites", "3", "--print-changes");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_int_eq(lines_starting(r.err, "rewrite "), 5);
    ck_assert_msg(strstr(r.err, "rewrite 5 [tp_unnumbered #5]: (the pass does not number") != NULL,
                  "%s", r.err);
    ck_assert_msg(strstr(r.err, "5 rewrites applied") != NULL, "%s", r.err);
    tk_cli_free(&r);
    ck_assert_int_eq(count_op(out, PH_OP_Neg), 0);
    ck_assert_int_eq(count_op(out, PH_OP_Relu), 12);
    /* 7: the 5 and then 2 numbered ones */
    r = TK_CLI("-i", in, "-o", out, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
               "optimize.pass_on=tp_unnumbered,tp_seventh_scales", "--max-rewrites", "7", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    ck_assert_int_eq(count_op(out, PH_OP_Max), 2);
}
END_TEST

/* The same through the runner's API: ph_ctx_rewrite_count and the calls. */
START_TEST(unnumbered_pass_in_the_runner)
{
    host_registry *reg = host_registry_new();
    ph_error err = {0};
    ck_assert_msg(host_registry_load_dir(reg, plugdir, &err) == 0, "%s", err.message);
    host_config *cfg = host_config_new();
    const char *sets[] = {"optimize.no_integral=true", "adapt.no_integral=true",
                          "optimize.pass_on=tp_unnumbered,tp_seventh_scales", NULL};
    for (size_t i = 0; sets[i]; i++)
        ck_assert_msg(host_config_set(cfg, sets[i], &err) == 0, "%s", err.message);
    host_plan plan;
    ck_assert_msg(host_plan_build(&plan, cfg, reg, &err) == 0, "%s", err.message);
    const char *path = build_model("mixed.onnx", 12, 5);
    const struct { int64_t limit; uint64_t count; unsigned seventh_calls; } cases[] = {
        {-1, 17, 2}, {0, 0, 0}, {3, 5, 0}, {5, 5, 0}, {6, 6, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ph_model *m = load(path);
        host_stage_stats stats[HOST_STAGE_COUNT];
        host_run_opts opts = {0};
        uint64_t n = 99;
        ck_assert_int_eq(host_run_all(m, &plan, cases[c].limit, &opts, stats, &n, &err), 0);
        ck_assert_msg(n == cases[c].count, "limit %lld: %llu rewrites", (long long)cases[c].limit,
                      (unsigned long long)n);
        const host_stage_stats *st = &stats[HOST_STAGE_OPTIMIZE];
        ck_assert_uint_eq(st->count, 2);
        ck_assert_str_eq(st->passes[0].name, "tp_unnumbered");
        ck_assert_uint_eq(st->passes[1].calls, cases[c].seventh_calls);
        for (int s = 0; s < HOST_STAGE_COUNT; s++)
            host_stage_stats_free(&stats[s]);
        ph_model_free(m);
    }
    /* and with a context of one's own */
    ph_model *m = load(path);
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    host_stage_stats st;
    host_run_opts opts = {0};
    ck_assert_int_eq(host_run_stage(m, &plan.stage[HOST_STAGE_OPTIMIZE], ctx, &opts, &st, &err), 0);
    ck_assert_uint_eq(ph_ctx_rewrite_count(ctx), 17);
    host_stage_stats_free(&st);
    ph_ctx_free(ctx);
    ph_model_free(m);
    host_plan_free(&plan);
    host_config_free(cfg);
    host_registry_free(reg);
}
END_TEST

/* ------------------------------------------- --print-changes, --dump-dir */

START_TEST(print_changes_one_line_per_rewrite)
{
    const char *in = build_model("relus.onnx", 12, 0);
    tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), "--plugin-dir", plugdir,
                             NO_DEFAULTS, "--set", "optimize.pass_on=tp_seventh_scales",
                             "--print-changes", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_int_eq(lines_starting(r.err, "rewrite "), 12);
    ck_assert_int_eq(tk_line_count(r.err), 12);
    ck_assert_msg(strstr(r.err, "rewrite 1 [tp_seventh_scales #1]: relu_0\n") != NULL, "%s", r.err);
    /* the 7th says what it removed and added */
    ck_assert_msg(strstr(r.err, "rewrite 7 [tp_seventh_scales #7]: relu_6 -> Mul") != NULL, "%s",
                  r.err);
    ck_assert_msg(strstr(r.err, "rewrite 12 [tp_seventh_scales #12]: relu_11\n") != NULL, "%s",
                  r.err);
    tk_cli_free(&r);
    /* the bundled transformer: the default passes number every rewrite */
    char from[600];
    snprintf(from, sizeof from, "%s/models/transformer_block.onnx", PH_SOURCE_DIR);
    r = TK_CLI("-i", from, "-o", tk_tpath("out.onnx"), "--print-changes");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    const char *sum = strstr(r.out, " rewrites, ");
    ck_assert_ptr_nonnull(sum);
    const char *p = sum;
    while (p > r.out && p[-1] >= '0' && p[-1] <= '9')
        p--;
    ck_assert_int_eq(lines_starting(r.err, "rewrite "), atoi(p));
    ck_assert_int_eq(lines_starting(r.err, "rewrite "), tk_line_count(r.err));
    tk_cli_free(&r);
}
END_TEST

/* Every *.onnx in dir loads and verifies; every *.mmd is a flowchart.
 * Returns the number of .onnx files. */
static int check_dump_dir(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int models = 0, pictures = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t n = strlen(de->d_name);
        char path[900];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (n > 5 && strcmp(de->d_name + n - 5, ".onnx") == 0) {
            ph_model_free(load(path));
            models++;
        } else if (n > 4 && strcmp(de->d_name + n - 4, ".mmd") == 0) {
            char *text = tk_slurp(path, NULL);
            ck_assert_msg(strncmp(text, "flowchart TD\n", 13) == 0, "%s: %s", path, text);
            free(text);
            pictures++;
        }
    }
    closedir(d);
    ck_assert_int_eq(models, pictures);
    return models;
}

START_TEST(dump_dir_writes_valid_models_and_pictures)
{
    const char *in = build_model("mixed.onnx", 12, 5);
    const char *dir = tk_tpath("dump");
    tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), "--plugin-dir", plugdir,
                             NO_DEFAULTS, "--set",
                             "optimize.pass_on=tp_unnumbered,tp_seventh_scales", "--dump-dir",
                             dir, "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    ck_assert_int_eq(check_dump_dir(dir), 2);
    ck_assert(tk_exists(tk_tpath("dump/001-optimize-tp_unnumbered.onnx")));
    ck_assert(tk_exists(tk_tpath("dump/002-optimize-tp_seventh_scales.onnx")));
    /* the second picture shows the changed nodes, the Mul and the input */
    char *mmd = tk_slurp(tk_tpath("dump/002-optimize-tp_seventh_scales.mmd"), NULL);
    ck_assert_msg(strstr(mmd, "relu_6<br/>Max") && strstr(mmd, "Mul") && strstr(mmd, ":::changed") &&
                  strstr(mmd, "-->") && strstr(mmd, "x (input)"), "%s", mmd);
    free(mmd);
    /* the last dump is the output */
    size_t la, lb;
    char *a = tk_slurp(tk_tpath("dump/002-optimize-tp_seventh_scales.onnx"), &la);
    char *b = tk_slurp(tk_tpath("out.onnx"), &lb);
    ck_assert(la == lb && memcmp(a, b, la) == 0);
    free(a);
    free(b);

    /* the bundled models with the default passes */
    const char *models[] = {"cnn_small.onnx", "transformer_block.onnx"};
    for (size_t i = 0; i < 2; i++) {
        char from[600], sub[64];
        snprintf(from, sizeof from, "%s/models/%s", PH_SOURCE_DIR, models[i]);
        snprintf(sub, sizeof sub, "dump%zu", i);
        r = TK_CLI("-i", from, "-o", tk_tpath("out.onnx"), "--dump-dir", tk_tpath(sub), "-q");
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        tk_cli_free(&r);
        ck_assert_int_ge(check_dump_dir(tk_tpath(sub)), 1);
    }
}
END_TEST

/* ------------------------------------------------------------ errors */

START_TEST(bad_values)
{
    const char *in = build_model("relus.onnx", 2, 0);
    const char *out = tk_tpath("out.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", out, "--max-rewrites", "-1");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "--max-rewrites", "'-1'");
    r = TK_CLI("-i", in, "-o", out, "--max-rewrites", "abc");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "--max-rewrites", "'abc'");
    r = TK_CLI("-i", in, "-o", out, "--max-rewrites=");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "--max-rewrites", "whole number");
    r = TK_CLI("-i", in, "-o", out, "--max-rewrites", "3x");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "'3x'", NULL);
    r = TK_CLI("-i", in, "-o", out, "--max-rewrites", "99999999999999999999");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "--max-rewrites", NULL);
    r = TK_CLI("-i", in, "-o", out, "--max-rewrites");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--max-rewrites needs a value", NULL);
    r = TK_CLI("-i", in, "-o", out, "--bisect", "--max-rewrites", "3");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--bisect", "--max-rewrites");
    r = TK_CLI("-i", in, "--bisect", "--verify-each");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--verify-each", NULL);
    r = TK_CLI("-i", in, "-o", out, "--shapes", "--dump-dir", tk_tpath("d"));
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--shapes", "--dump-dir");
    r = TK_CLI("-i", in, "-o", out, "--print-changes=yes");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--print-changes takes no value", NULL);
    r = TK_CLI("-i", in, "--max-rewrites", "3");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "output", NULL);
    /* --dump-dir on a file */
    r = TK_CLI("-i", in, "-o", out, "--dump-dir", in);
    tk_expect_failure(&r, HOST_EXIT_OUTPUT, "not a folder", NULL);
    ck_assert(!tk_exists(out));
}
END_TEST

START_TEST(help_lists_the_flags)
{
    tk_cli_result r = TK_CLI("--help");
    ck_assert_int_eq(r.status, 0);
    const char *flags[] = {"--max-rewrites N", "--bisect ", "--bisect-out DIR", "--print-changes",
                           "--dump-dir DIR"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        ck_assert_msg(strstr(r.out, flags[i]) != NULL, "%s not in --help", flags[i]);
    tk_cli_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("bisect");
    TCase *tc = tcase_create("numbered rewrites");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, bisect_names_the_seventh_rewrite);
    tcase_add_test(tc, bisect_out_writes_a_reproducer);
    tcase_add_test(tc, bisect_of_a_good_run_exits_0);
    tcase_add_test(tc, bisect_with_an_unnumbered_pass_names_its_call);
    tcase_add_test(tc, max_rewrites_zero_is_a_round_trip);
    tcase_add_test(tc, max_rewrites_applies_exactly_n);
    tcase_add_test(tc, rule_pass_rewrites_numbered_limited_and_bisected);
    tcase_add_test(tc, unnumbered_pass_is_numbered_and_stopped_per_call);
    tcase_add_test(tc, unnumbered_pass_in_the_runner);
    tcase_add_test(tc, print_changes_one_line_per_rewrite);
    tcase_add_test(tc, dump_dir_writes_valid_models_and_pictures);
    tcase_add_test(tc, bad_values);
    tcase_add_test(tc, help_lists_the_flags);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
