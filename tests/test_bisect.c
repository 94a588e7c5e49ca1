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
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "exit.h"
#include "loader.h"
#include "passhost/passhost.h"
#include "plan.h"
#include "report.h"
#include "runner.h"
#include "verify.h"

extern char **environ;

static char tmpdir[256];
static char plugdir[300];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ph_test_bisect.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    snprintf(plugdir, sizeof plugdir, "%s/plugins", tmpdir);
    ck_assert_int_eq(mkdir(plugdir, 0700), 0);
    const char *plugins[] = {"tp_seventh_scales", "tp_unnumbered", "tp_wrong_math", NULL};
    for (size_t i = 0; plugins[i]; i++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "cp '%s/test-plugins/%s.so' '%s/'", PH_BUILD_DIR, plugins[i],
                 plugdir);
        ck_assert_msg(system(cmd) == 0, "%s", cmd);
    }
    unsetenv("PASSHOST_PLUGIN_PATH");
}

static void teardown(void)
{
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* tmpdir/name in a static ring of buffers (enough for one test). */
static const char *tpath(const char *name)
{
    static char bufs[64][600];
    static int next;
    char *b = bufs[next++ % 64];
    snprintf(b, 600, "%s/%s", tmpdir, name);
    return b;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    if (len)
        *len = got;
    return buf;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

typedef struct result {
    int status;
    char *out;
    char *err;
} result;

/* Run passhost with the NULL-terminated args; stdout and stderr captured
 * (into files outside tmpdir, so tests can count tmpdir's entries). */
static result run_args(const char *const *args)
{
    char bin[600];
    snprintf(bin, sizeof bin, "%s/bin/passhost", PH_BUILD_DIR);
    const char *argv[64] = {bin};
    size_t n = 1;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    char out_path[600], err_path[600];
    snprintf(out_path, sizeof out_path, "%s.stdout", tmpdir);
    snprintf(err_path, sizeof err_path, "%s.stderr", tmpdir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int rc = posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ck_assert_msg(rc == 0, "cannot spawn %s", bin);
    int ws = 0;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert_msg(WIFEXITED(ws), "passhost did not exit normally");
    result r = {WEXITSTATUS(ws), slurp(out_path, NULL), slurp(err_path, NULL)};
    remove(out_path);
    remove(err_path);
    return r;
}

#define RUN(...) run_args((const char *const[]){__VA_ARGS__, NULL})

static void free_result(result *r)
{
    free(r->out);
    free(r->err);
}

static int line_count(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
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
    const char *path = tpath(name);
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
    host_verify_config vc = {.runs = HOST_DEFAULT_VERIFY_RUNS, .atol = HOST_DEFAULT_ATOL,
                             .rtol = HOST_DEFAULT_RTOL, .seed = 0};
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
    char *bytes_before = slurp(in, &len_before);
    result r = RUN("-i", in, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
                   "optimize.pass_on=tp_seventh_scales", "--bisect");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    ck_assert_msg(line_count(r.err) == 1, "want one stderr line: %s", r.err);
    ck_assert_msg(strncmp(r.err, "passhost: bisect: ", 18) == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "rewrite 7 of 12") && strstr(r.err, "pass tp_seventh_scales") &&
                  strstr(r.err, "#7 of its call") && strstr(r.err, "matched relu_6"),
                  "%s", r.err);
    ck_assert_msg(strstr(r.err, "then output '") != NULL, "names the output: %s", r.err);
    /* the search is shown on stdout */
    ck_assert_msg(strstr(r.out, "first 6 rewrites: ok") && strstr(r.out, "first 7 rewrites: outputs differ"),
                  "%s", r.out);
    free_result(&r);
    /* nothing written, the input untouched */
    DIR *d = opendir(tmpdir);
    int entries = 0;
    for (struct dirent *de; (de = readdir(d));)
        entries += de->d_name[0] != '.';
    closedir(d);
    ck_assert_int_eq(entries, 2); /* relus.onnx and plugins/ */
    size_t len_after;
    char *bytes_after = slurp(in, &len_after);
    ck_assert(len_before == len_after && memcmp(bytes_before, bytes_after, len_after) == 0);
    free(bytes_before);
    free(bytes_after);

    /* -q: the same one line, no progress */
    r = RUN("-i", in, "-o", tpath("out.onnx"), "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
            "optimize.pass_on=tp_seventh_scales", "--bisect", "-q", "--verify=2");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(strstr(r.err, "rewrite 7 of 12") != NULL, "%s", r.err);
    ck_assert(!exists(tpath("out.onnx"))); /* --bisect writes no output model */
    free_result(&r);
}
END_TEST

START_TEST(bisect_out_writes_a_reproducer)
{
    const char *in = build_model("relus.onnx", 10, 0);
    const char *dir = tpath("repro");
    result r = RUN("-i", in, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
                   "optimize.pass_on=tp_seventh_scales", "--set", "verify.seed=42",
                   "--bisect-out", dir);
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "rewrite 7 of 10") && strstr(r.err, "relu_6"), "%s", r.err);
    free_result(&r);
    const char *before = tpath("repro/before.onnx"), *after = tpath("repro/after.onnx");
    ck_assert(exists(before) && exists(after) && exists(tpath("repro/config.ini")) &&
              exists(tpath("repro/README.txt")));
    /* before: 6 rewrites, computes the same; after: 7, does not */
    ck_assert_int_eq(count_op(before, PH_OP_Max), 6);
    ck_assert_int_eq(count_op(after, PH_OP_Max), 7);
    ck_assert_int_eq(count_op(after, PH_OP_Mul), 1);
    ck_assert_int_eq(verify_against(in, before), 0);
    ck_assert_int_eq(verify_against(in, after), HOST_EXIT_MISMATCH);
    char *readme = slurp(tpath("repro/README.txt"), NULL);
    ck_assert_msg(strstr(readme, "seed 42") && strstr(readme, "--max-rewrites 6") &&
                  strstr(readme, "tp_seventh_scales") && strstr(readme, "--bisect-out"),
                  "%s", readme);
    free(readme);
    char *ini = slurp(tpath("repro/config.ini"), NULL);
    ck_assert_msg(strstr(ini, "seed = 42") && strstr(ini, "tp_seventh_scales") &&
                  strstr(ini, "max_iterations = 16") && strstr(ini, "[pass.tp_seventh_scales]"),
                  "%s", ini);
    free(ini);

    /* the config reproduces both files */
    const char *cfg = tpath("repro/config.ini");
    r = RUN(cfg, "--max-rewrites", "6", "--verify", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    free_result(&r);
    size_t la, lb;
    char *a = slurp(tpath("repro/out.onnx"), &la), *b = slurp(before, &lb);
    ck_assert_msg(a && la == lb && memcmp(a, b, la) == 0, "out.onnx differs from before.onnx");
    free(a);
    free(b);
    r = RUN(cfg, "--max-rewrites", "7", "--verify", "-q");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    free_result(&r);
    r = RUN(cfg, "--bisect", "-q");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH && strstr(r.err, "rewrite 7 of 10"), "%s", r.err);
    free_result(&r);
}
END_TEST

START_TEST(bisect_of_a_good_run_exits_0)
{
    char from[600];
    snprintf(from, sizeof from, "%s/models/cnn_small.onnx", PH_SOURCE_DIR);
    result r = RUN("-i", from, "-o", tpath("out.onnx"), "--bisect");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "verifies") && strstr(r.out, "nothing to bisect"), "%s", r.out);
    ck_assert(!exists(tpath("out.onnx")));
    free_result(&r);
    /* with a pass that does not number its rewrites: still fine */
    const char *in = build_model("negs.onnx", 0, 5);
    r = RUN("-i", in, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
            "optimize.pass_on=tp_unnumbered", "--bisect");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "all 5 rewrites verifies") || strstr(r.out, "of all 5 rewrites"),
                  "%s", r.out);
    free_result(&r);
}
END_TEST

START_TEST(bisect_with_an_unnumbered_pass_names_its_call)
{
    /* the numbered pass breaks at its 7th; the unnumbered one runs first
       and takes rewrites 1..3 in one call */
    const char *in = build_model("mixed.onnx", 9, 3);
    result r = RUN("-i", in, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
                   "optimize.pass_on=tp_unnumbered,tp_seventh_scales", "--bisect");
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "rewrite 10 of 12") && strstr(r.err, "#7 of its call") &&
                  strstr(r.err, "relu_6"), "%s", r.err);
    free_result(&r);
    /* an unnumbered pass that breaks the outputs (one Relu -> Sigmoid per
       call): its first call is the culprit, named as a whole call */
    r = RUN("-i", in, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
            "optimize.pass_on=tp_wrong_math", "--bisect-out", tpath("repro"));
    ck_assert_msg(r.status == HOST_EXIT_MISMATCH, "exit %d: %s", r.status, r.err);
    ck_assert_msg(line_count(r.err) == 1 && strstr(r.err, "rewrite 1 of 9") &&
                  strstr(r.err, "pass tp_wrong_math") && strstr(r.err, "does not number"),
                  "%s", r.err);
    free_result(&r);
    ck_assert_int_eq(count_op(tpath("repro/before.onnx"), PH_OP_Sigmoid), 0);
    ck_assert_int_eq(count_op(tpath("repro/after.onnx"), PH_OP_Sigmoid), 1);
}
END_TEST

/* ------------------------------------------------------ --max-rewrites */

START_TEST(max_rewrites_zero_is_a_round_trip)
{
    const char *models[] = {"cnn_small.onnx", "transformer_block.onnx"};
    for (size_t i = 0; i < 2; i++) {
        char in[600];
        snprintf(in, sizeof in, "%s/models/%s", PH_SOURCE_DIR, models[i]);
        result r = RUN("-i", in, "-o", tpath("a.onnx"), "-q", "--max-rewrites", "0");
        ck_assert_msg(r.status == 0, "%s", r.err);
        free_result(&r);
        r = RUN("-i", in, "-o", tpath("b.onnx"), "-q", NO_DEFAULTS);
        ck_assert_msg(r.status == 0, "%s", r.err);
        free_result(&r);
        size_t la, lb;
        char *a = slurp(tpath("a.onnx"), &la), *b = slurp(tpath("b.onnx"), &lb);
        ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "%s: --max-rewrites 0 differs", models[i]);
        free(a);
        free(b);
    }
}
END_TEST

START_TEST(max_rewrites_applies_exactly_n)
{
    const char *in = build_model("relus.onnx", 12, 0);
    const char *out = tpath("out.onnx");
    result r = RUN("-i", in, "-o", out, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
                   "optimize.pass_on=tp_seventh_scales", "--max-rewrites", "3", "--verify");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "--max-rewrites 3: 3 rewrites applied") != NULL, "%s", r.err);
    ck_assert_msg(strstr(r.out, "3 rewrites") != NULL, "%s", r.out);
    free_result(&r);
    ck_assert_int_eq(count_op(out, PH_OP_Max), 3);
    ck_assert_int_eq(count_op(out, PH_OP_Relu), 9);
    /* more than there are: all of them */
    r = RUN("-i", in, "-o", out, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
            "optimize.pass_on=tp_seventh_scales", "--max-rewrites=100", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    free_result(&r);
    ck_assert_int_eq(count_op(out, PH_OP_Max), 12);
}
END_TEST

START_TEST(unnumbered_pass_is_numbered_and_stopped_per_call)
{
    const char *in = build_model("mixed.onnx", 12, 5);
    const char *out = tpath("out.onnx");
    /* the unnumbered pass is called (0 < 3) and makes all 5; then the
       budget is used up and the numbered pass is never called */
    result r = RUN("-i", in, "-o", out, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
                   "optimize.pass_on=tp_unnumbered,tp_seventh_scales", "--max-rewrites", "3",
                   "--print-changes");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_int_eq(lines_starting(r.err, "rewrite "), 5);
    ck_assert_msg(strstr(r.err, "rewrite 5 [tp_unnumbered #5]: (the pass does not number") != NULL,
                  "%s", r.err);
    ck_assert_msg(strstr(r.err, "5 rewrites applied") != NULL, "%s", r.err);
    free_result(&r);
    ck_assert_int_eq(count_op(out, PH_OP_Neg), 0);
    ck_assert_int_eq(count_op(out, PH_OP_Relu), 12);
    /* 7: the 5 and then 2 numbered ones */
    r = RUN("-i", in, "-o", out, "--plugin-dir", plugdir, NO_DEFAULTS, "--set",
            "optimize.pass_on=tp_unnumbered,tp_seventh_scales", "--max-rewrites", "7", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    free_result(&r);
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
    result r = RUN("-i", in, "-o", tpath("out.onnx"), "--plugin-dir", plugdir, NO_DEFAULTS,
                   "--set", "optimize.pass_on=tp_seventh_scales", "--print-changes", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_int_eq(lines_starting(r.err, "rewrite "), 12);
    ck_assert_int_eq(line_count(r.err), 12);
    ck_assert_msg(strstr(r.err, "rewrite 1 [tp_seventh_scales #1]: relu_0\n") != NULL, "%s", r.err);
    /* the 7th says what it removed and added */
    ck_assert_msg(strstr(r.err, "rewrite 7 [tp_seventh_scales #7]: relu_6 -> Mul") != NULL, "%s",
                  r.err);
    ck_assert_msg(strstr(r.err, "rewrite 12 [tp_seventh_scales #12]: relu_11\n") != NULL, "%s",
                  r.err);
    free_result(&r);
    /* the bundled transformer: the default passes number every rewrite */
    char from[600];
    snprintf(from, sizeof from, "%s/models/transformer_block.onnx", PH_SOURCE_DIR);
    r = RUN("-i", from, "-o", tpath("out.onnx"), "--print-changes");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    const char *sum = strstr(r.out, " rewrites, ");
    ck_assert_ptr_nonnull(sum);
    const char *p = sum;
    while (p > r.out && p[-1] >= '0' && p[-1] <= '9')
        p--;
    ck_assert_int_eq(lines_starting(r.err, "rewrite "), atoi(p));
    ck_assert_int_eq(lines_starting(r.err, "rewrite "), line_count(r.err));
    free_result(&r);
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
            char *text = slurp(path, NULL);
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
    const char *dir = tpath("dump");
    result r = RUN("-i", in, "-o", tpath("out.onnx"), "--plugin-dir", plugdir, NO_DEFAULTS,
                   "--set", "optimize.pass_on=tp_unnumbered,tp_seventh_scales", "--dump-dir", dir,
                   "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    free_result(&r);
    ck_assert_int_eq(check_dump_dir(dir), 2);
    ck_assert(exists(tpath("dump/001-optimize-tp_unnumbered.onnx")));
    ck_assert(exists(tpath("dump/002-optimize-tp_seventh_scales.onnx")));
    /* the second picture shows the changed nodes, the Mul and the input */
    char *mmd = slurp(tpath("dump/002-optimize-tp_seventh_scales.mmd"), NULL);
    ck_assert_msg(strstr(mmd, "relu_6<br/>Max") && strstr(mmd, "Mul") && strstr(mmd, ":::changed") &&
                  strstr(mmd, "-->") && strstr(mmd, "x (input)"), "%s", mmd);
    free(mmd);
    /* the last dump is the output */
    size_t la, lb;
    char *a = slurp(tpath("dump/002-optimize-tp_seventh_scales.onnx"), &la);
    char *b = slurp(tpath("out.onnx"), &lb);
    ck_assert(la == lb && memcmp(a, b, la) == 0);
    free(a);
    free(b);

    /* the bundled models with the default passes */
    const char *models[] = {"cnn_small.onnx", "transformer_block.onnx"};
    for (size_t i = 0; i < 2; i++) {
        char from[600], sub[64];
        snprintf(from, sizeof from, "%s/models/%s", PH_SOURCE_DIR, models[i]);
        snprintf(sub, sizeof sub, "dump%zu", i);
        r = RUN("-i", from, "-o", tpath("out.onnx"), "--dump-dir", tpath(sub), "-q");
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        free_result(&r);
        ck_assert_int_ge(check_dump_dir(tpath(sub)), 1);
    }
}
END_TEST

/* ------------------------------------------------------------ errors */

static void expect_failure(result *r, int code, const char *frag1, const char *frag2)
{
    ck_assert_msg(r->status == code, "exit %d (want %d); stderr: %s", r->status, code, r->err);
    ck_assert_msg(line_count(r->err) == 1, "want one stderr line, got: %s", r->err);
    ck_assert_msg(strncmp(r->err, "passhost: ", 10) == 0, "%s", r->err);
    ck_assert_msg(strstr(r->err, frag1) != NULL, "'%s' not in: %s", frag1, r->err);
    if (frag2)
        ck_assert_msg(strstr(r->err, frag2) != NULL, "'%s' not in: %s", frag2, r->err);
    free_result(r);
}

START_TEST(bad_values)
{
    const char *in = build_model("relus.onnx", 2, 0);
    const char *out = tpath("out.onnx");
    result r = RUN("-i", in, "-o", out, "--max-rewrites", "-1");
    expect_failure(&r, HOST_EXIT_CONFIG, "--max-rewrites", "'-1'");
    r = RUN("-i", in, "-o", out, "--max-rewrites", "abc");
    expect_failure(&r, HOST_EXIT_CONFIG, "--max-rewrites", "'abc'");
    r = RUN("-i", in, "-o", out, "--max-rewrites=");
    expect_failure(&r, HOST_EXIT_CONFIG, "--max-rewrites", "whole number");
    r = RUN("-i", in, "-o", out, "--max-rewrites", "3x");
    expect_failure(&r, HOST_EXIT_CONFIG, "'3x'", NULL);
    r = RUN("-i", in, "-o", out, "--max-rewrites", "99999999999999999999");
    expect_failure(&r, HOST_EXIT_CONFIG, "--max-rewrites", NULL);
    r = RUN("-i", in, "-o", out, "--max-rewrites");
    expect_failure(&r, HOST_EXIT_USAGE, "--max-rewrites needs a value", NULL);
    r = RUN("-i", in, "-o", out, "--bisect", "--max-rewrites", "3");
    expect_failure(&r, HOST_EXIT_USAGE, "--bisect", "--max-rewrites");
    r = RUN("-i", in, "--bisect", "--verify-each");
    expect_failure(&r, HOST_EXIT_USAGE, "--verify-each", NULL);
    r = RUN("-i", in, "-o", out, "--shapes", "--dump-dir", tpath("d"));
    expect_failure(&r, HOST_EXIT_USAGE, "--shapes", "--dump-dir");
    r = RUN("-i", in, "-o", out, "--print-changes=yes");
    expect_failure(&r, HOST_EXIT_USAGE, "--print-changes takes no value", NULL);
    r = RUN("-i", in, "--max-rewrites", "3");
    expect_failure(&r, HOST_EXIT_USAGE, "output", NULL);
    /* --dump-dir on a file */
    r = RUN("-i", in, "-o", out, "--dump-dir", in);
    expect_failure(&r, HOST_EXIT_OUTPUT, "not a folder", NULL);
    ck_assert(!exists(out));
}
END_TEST

START_TEST(help_lists_the_flags)
{
    result r = RUN("--help");
    ck_assert_int_eq(r.status, 0);
    const char *flags[] = {"--max-rewrites N", "--bisect ", "--bisect-out DIR", "--print-changes",
                           "--dump-dir DIR"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        ck_assert_msg(strstr(r.out, flags[i]) != NULL, "%s not in --help", flags[i]);
    free_result(&r);
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
