/* tests/test_cli.c - the passhost program end to end, through the built
 * binary $(PH_BUILD_DIR)/bin/passhost: --list-passes, a no-pass round trip
 * that is byte-identical, each documented exit code with its one-line
 * message, the input never touched, no output (and no stray temporary
 * file) after a failure, the report, the log file and the cap warning.
 * Test plugins are copied from $(BUILD)/test-plugins into a mkdtemp folder
 * given with --plugin-dir. */
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

#include "exit.h"
#include "passhost/passhost.h"

extern char **environ;

static char tmpdir[256];
static char plugdir[300];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

static const char *const test_plugins[] = {"tp_good", "tp_one_step", "tp_flip_a", "tp_flip_b",
                                           "tp_once", "tp_fail", "tp_break_graph",
                                           "tp_make_cycle", "tp_wrong_math", NULL};

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ph_test_cli.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    snprintf(plugdir, sizeof plugdir, "%s/plugins", tmpdir);
    ck_assert_int_eq(mkdir(plugdir, 0700), 0);
    for (size_t i = 0; test_plugins[i]; i++) {
        char from[600];
        snprintf(from, sizeof from, "%s/test-plugins/%s.so", PH_BUILD_DIR, test_plugins[i]);
        copy_file(from, plugdir);
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

typedef struct result {
    int status;
    char *out;
    char *err;
} result;

/* Run passhost with the NULL-terminated args; stdout and stderr captured. */
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
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", tmpdir);
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", tmpdir);
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

/* Expect exit code and ONE stderr line holding each fragment. */
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

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* A copy of a bundled model in tmpdir; tests/models first, else models/. */
static const char *model_copy(const char *name)
{
    char from[600];
    snprintf(from, sizeof from, "%s/tests/models/%s", PH_SOURCE_DIR, name);
    if (!exists(from))
        snprintf(from, sizeof from, "%s/models/%s", PH_SOURCE_DIR, name);
    const char *to = tpath(name);
    copy_file(from, to);
    return to;
}

/* ------------------------------------------------------------------ tests */

START_TEST(help_and_version)
{
    result r = RUN("--help");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "exit codes"));
    ck_assert_ptr_nonnull(strstr(r.out, "--set SECTION.KEY=VALUE"));
    free_result(&r);
    r = RUN("--version");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "passhost "));
    free_result(&r);
}
END_TEST

START_TEST(list_passes)
{
    result r = RUN("--list-passes", "--plugin-dir", plugdir);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "EXACT"));
    ck_assert_ptr_nonnull(strstr(r.out, "tp_good"));
    ck_assert_ptr_nonnull(strstr(r.out, "test pass that changes nothing"));
    ck_assert_ptr_nonnull(strstr(r.out, "limit (int, default 3)"));
    ck_assert_ptr_nonnull(strstr(r.out, "tp_once"));
    free_result(&r);
    /* through PASSHOST_PLUGIN_PATH as well */
    setenv("PASSHOST_PLUGIN_PATH", plugdir, 1);
    r = RUN("--list-passes");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "tp_flip_b"));
    free_result(&r);
}
END_TEST

START_TEST(round_trip_is_byte_identical)
{
    const char *models[] = {"cnn_small.onnx", "transformer_block.onnx", "control_flow.onnx",
                            "unknown_fields.onnx"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const char *in = model_copy(models[i]);
        const char *out = tpath("out.onnx");
        struct stat before, after;
        ck_assert_int_eq(stat(in, &before), 0);
        result r = RUN("-i", in, "-o", out, "-q", "--set", "optimize.no_integral=true", "--set",
                       "adapt.no_integral=true");
        ck_assert_msg(r.status == 0, "%s: %s", models[i], r.err);
        ck_assert_str_eq(r.out, ""); /* -q */
        free_result(&r);
        size_t la, lb;
        char *a = slurp(in, &la), *b = slurp(out, &lb);
        ck_assert_ptr_nonnull(b);
        ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "%s: output differs", models[i]);
        free(a);
        free(b);
        ck_assert_int_eq(stat(in, &after), 0);
        ck_assert_msg(before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
                      before.st_mtim.tv_nsec == after.st_mtim.tv_nsec, "input mtime changed");
        remove(out);
        remove(in);
    }
}
END_TEST

START_TEST(config_file_run_and_report)
{
    model_copy("cnn_small.onnx");
    FILE *f = fopen(tpath("run.ini"), "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "[model]\ninput = cnn_small.onnx\noutput = out/cnn.opt.onnx\n"
               "plugin_dir = plugins\nlog_path = run.log\n"
               "[optimize]\nno_integral = true\npass_on = \"tp_one_step;tp_good\"\n"
               "[adapt]\nno_integral = true\n[pass.tp_good]\nlimit = 5\n");
    fclose(f);
    ck_assert_int_eq(mkdir(tpath("out"), 0700), 0);
    result r = RUN(tpath("run.ini"));
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "stage optimize") && strstr(r.out, "tp_one_step") &&
                  strstr(r.out, "stage adapt") && strstr(r.out, "rewrites"), "%s", r.out);
    /* the model has two Identity nodes: 26 -> 24 */
    ck_assert_msg(strstr(r.out, "nodes 26 -> 24") != NULL, "%s", r.out);
    ck_assert(exists(tpath("out/cnn.opt.onnx")));
    char *log = slurp(tpath("run.log"), NULL);
    ck_assert_ptr_nonnull(log);
    ck_assert_ptr_nonnull(strstr(log, "tp_one_step"));
    free(log);
    free_result(&r);

    /* -o overrides [model] output; --set overrides a value */
    r = RUN(tpath("run.ini"), "-o", tpath("other.onnx"), "--set", "optimize.pass_on=tp_good");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert(exists(tpath("other.onnx")));
    ck_assert_ptr_null(strstr(r.out, "tp_one_step"));
    free_result(&r);
}
END_TEST

START_TEST(cap_warning_on_stderr)
{
    const char *in = model_copy("cnn_small.onnx");
    result r = RUN("-i", in, "-o", tpath("out.onnx"), "--plugin-dir", plugdir, "--set",
                   "optimize.no_integral=true", "--set", "adapt.no_integral=true", "--set",
                   "optimize.pass_on=tp_flip_a,tp_flip_b", "--set", "optimize.max_iterations=3");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "warning") && strstr(r.err, "tp_flip_a, tp_flip_b"), "%s",
                  r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "cap reached"));
    free_result(&r);
}
END_TEST

START_TEST(usage_errors)
{
    result r = RUN("--no-such-option");
    expect_failure(&r, HOST_EXIT_USAGE, "--no-such-option", NULL);
    r = run_args((const char *const[]){NULL});
    expect_failure(&r, HOST_EXIT_USAGE, "-i", NULL);
    r = RUN("-i", "a.onnx");
    expect_failure(&r, HOST_EXIT_USAGE, "output", NULL);
    r = RUN("-i", "a.onnx", "-o", "b.onnx", "--set", "nodot");
    expect_failure(&r, HOST_EXIT_USAGE, "nodot", NULL);
    r = RUN("a.ini", "b.ini");
    expect_failure(&r, HOST_EXIT_USAGE, "b.ini", NULL);
}
END_TEST

START_TEST(model_errors)
{
    const char *out = tpath("out.onnx");
    /* missing */
    result r = RUN("-i", tpath("missing.onnx"), "-o", out);
    expect_failure(&r, HOST_EXIT_MODEL, "missing.onnx", NULL);
    ck_assert(!exists(out));
    /* truncated: the first half of a real model */
    const char *full = model_copy("cnn_small.onnx");
    size_t len;
    char *bytes = slurp(full, &len);
    FILE *f = fopen(tpath("half.onnx"), "wb");
    fwrite(bytes, 1, len / 2, f);
    fclose(f);
    free(bytes);
    r = RUN("-i", tpath("half.onnx"), "-o", out);
    expect_failure(&r, HOST_EXIT_MODEL, "half.onnx", NULL);
    ck_assert(!exists(out));
    /* not ONNX at all */
    f = fopen(tpath("text.onnx"), "w");
    fputs("name,value\nthis is a text file\n", f);
    fclose(f);
    r = RUN("-i", tpath("text.onnx"), "-o", out);
    expect_failure(&r, HOST_EXIT_MODEL, "text.onnx", NULL);
    ck_assert(!exists(out));
    /* a folder */
    r = RUN("-i", tmpdir, "-o", out);
    expect_failure(&r, HOST_EXIT_MODEL, tmpdir, NULL);
    ck_assert(!exists(out));
}
END_TEST

START_TEST(config_errors)
{
    const char *in = model_copy("cnn_small.onnx");
    FILE *f = fopen(tpath("bad.ini"), "w");
    fprintf(f, "[model]\ninput = cnn_small.onnx\noutput = o.onnx\n[optimize\n");
    fclose(f);
    result r = RUN(tpath("bad.ini"));
    expect_failure(&r, HOST_EXIT_CONFIG, "bad.ini:4:", NULL);
    ck_assert(!exists(tpath("o.onnx")));

    r = RUN("-i", in, "-o", tpath("o.onnx"), "--set", "optimize.pass_on=no_such_pass");
    expect_failure(&r, HOST_EXIT_CONFIG, "unknown pass 'no_such_pass'", NULL);
    r = RUN("-i", in, "-o", tpath("o.onnx"), "--plugin-dir", plugdir, "--set",
            "optimize.pass_on=tp_once", "--set", "optimize.pass_off=tp_once");
    expect_failure(&r, HOST_EXIT_CONFIG, "tp_once", "pass_off");
    r = RUN("-i", in, "-o", tpath("o.onnx"), "--plugin-dir", plugdir, "--set",
            "pass.tp_good.limit=many");
    expect_failure(&r, HOST_EXIT_CONFIG, "pass.tp_good.limit", "many");
    r = RUN(tpath("nonexistent.ini"));
    expect_failure(&r, HOST_EXIT_CONFIG, "nonexistent.ini", NULL);
    ck_assert(!exists(tpath("o.onnx")));
}
END_TEST

START_TEST(plugin_errors)
{
    const char *in = model_copy("cnn_small.onnx");
    char from[600];
    snprintf(from, sizeof from, "%s/test-plugins/tp_abi2.so", PH_BUILD_DIR);
    copy_file(from, plugdir);
    result r = RUN("-i", in, "-o", tpath("o.onnx"), "--plugin-dir", plugdir);
    expect_failure(&r, HOST_EXIT_PLUGIN, "tp_abi2.so", "ABI 2.0");
    r = RUN("--list-passes", "--plugin-dir", tpath("nowhere"));
    expect_failure(&r, HOST_EXIT_PLUGIN, "nowhere", NULL);
    ck_assert(!exists(tpath("o.onnx")));
}
END_TEST

START_TEST(pass_errors)
{
    const char *in = model_copy("cnn_small.onnx");
    const char *out = tpath("o.onnx");
    result r = RUN("-i", in, "-o", out, "--plugin-dir", plugdir, "--set",
                   "optimize.pass_on=tp_fail");
    expect_failure(&r, HOST_EXIT_PASS, "pass tp_fail", "deliberate failure");
    ck_assert(!exists(out));
    r = RUN("-i", in, "-o", out, "--plugin-dir", plugdir, "--set",
            "optimize.pass_on=tp_make_cycle");
    expect_failure(&r, HOST_EXIT_PASS, "pass tp_make_cycle", "cycle");
    ck_assert(!exists(out));
    r = RUN("-i", in, "-o", out, "--plugin-dir", plugdir, "--verify-each", "--set",
            "optimize.pass_on=tp_good,tp_break_graph");
    expect_failure(&r, HOST_EXIT_PASS, "pass tp_break_graph", NULL);
    ck_assert(!exists(out));
}
END_TEST

START_TEST(output_errors)
{
    const char *in = model_copy("cnn_small.onnx");
    size_t len;
    char *orig = slurp(in, &len);
    struct stat before, after;
    ck_assert_int_eq(stat(in, &before), 0);
    int entries = dir_entries(tmpdir);

    /* a folder that does not exist */
    result r = RUN("-i", in, "-o", tpath("no/such/dir/out.onnx"));
    expect_failure(&r, HOST_EXIT_OUTPUT, "no/such/dir/out.onnx", NULL);
    /* a parent that is a file */
    r = RUN("-i", in, "-o", tpath("cnn_small.onnx/out.onnx"));
    expect_failure(&r, HOST_EXIT_OUTPUT, "out.onnx", NULL);
    /* the output is an existing folder: the rename fails, no temp is left */
    ck_assert_int_eq(mkdir(tpath("adir"), 0700), 0);
    entries++;
    r = RUN("-i", in, "-o", tpath("adir"));
    expect_failure(&r, HOST_EXIT_OUTPUT, "adir", NULL);
    ck_assert_int_eq(dir_entries(tmpdir), entries);
    ck_assert_int_eq(dir_entries(tpath("adir")), 0);
    /* the input itself, by the same and by another name */
    r = RUN("-i", in, "-o", in);
    expect_failure(&r, HOST_EXIT_OUTPUT, "input", NULL);
    ck_assert_int_eq(symlink(in, tpath("alias.onnx")), 0);
    entries++;
    r = RUN("-i", in, "-o", tpath("alias.onnx"));
    expect_failure(&r, HOST_EXIT_OUTPUT, "input", NULL);

    ck_assert_int_eq(dir_entries(tmpdir), entries);
    ck_assert_int_eq(stat(in, &after), 0);
    ck_assert(before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
              before.st_mtim.tv_nsec == after.st_mtim.tv_nsec);
    size_t len2;
    char *now = slurp(in, &len2);
    ck_assert(len == len2 && memcmp(orig, now, len) == 0);
    free(orig);
    free(now);
}
END_TEST


/* ------------------------------------------------- numeric verification */

START_TEST(verify_passes_on_default_stages)
{
    const char *in = model_copy("cnn_small.onnx");
    result r = RUN("-i", in, "-o", tpath("out.onnx"), "--verify=2");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "verify: 2 runs"));
    ck_assert_ptr_nonnull(strstr(r.out, "output logits"));
    ck_assert_ptr_null(strstr(r.out, "MISMATCH"));
    ck_assert(exists(tpath("out.onnx")));
    free_result(&r);
}
END_TEST

START_TEST(verify_catches_a_wrong_pass)
{
    const char *in = model_copy("cnn_small.onnx");
    result r = RUN("-i", in, "-o", tpath("out.onnx"), "--plugin-dir", plugdir, "--set",
                   "optimize.no_integral=true", "--set", "optimize.pass_on=tp_wrong_math", "--verify");
    ck_assert_ptr_nonnull(strstr(r.out, "MISMATCH"));
    expect_failure(&r, HOST_EXIT_MISMATCH, "output 'logits' differs", "max abs");
    ck_assert(!exists(tpath("out.onnx"))); /* nothing written */
}
END_TEST

START_TEST(verify_each_names_the_wrong_pass)
{
    const char *in = model_copy("cnn_small.onnx");
    result r = RUN("-i", in, "-o", tpath("out.onnx"), "--plugin-dir", plugdir, "--set",
                   "optimize.pass_on=tp_wrong_math", "--verify-each", "-q");
    expect_failure(&r, HOST_EXIT_MISMATCH, "pass tp_wrong_math", "numeric equivalence");
    ck_assert(!exists(tpath("out.onnx")));
    /* a model the evaluator cannot run: --verify refuses, --verify-each checks structure only */
    in = model_copy("control_flow.onnx");
    r = RUN("-i", in, "-o", tpath("cf.onnx"), "--verify");
    expect_failure(&r, HOST_EXIT_NOVERIFY, "cannot evaluate", NULL);
    r = RUN("-i", in, "-o", tpath("cf.onnx"), "--verify-each", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "structure only"));
    free_result(&r);
}
END_TEST

START_TEST(input_shapes)
{
    const char *in = model_copy("transformer_block.onnx");
    result r = RUN("-i", in, "-o", tpath("o.onnx"), "--set", "model.input_shape=nosuch:1x2");
    expect_failure(&r, HOST_EXIT_CONFIG, "nosuch", NULL);
    r = RUN("-i", in, "-o", tpath("o.onnx"), "--set", "model.input_shape=tokens:1xq");
    expect_failure(&r, HOST_EXIT_CONFIG, "input_shape", NULL);
    r = RUN("-i", in, "-o", tpath("o.onnx"), "--set", "model.input_shape=tokens:1x16x65");
    expect_failure(&r, HOST_EXIT_MODEL, "tokens", NULL); /* the model says 64 */
    r = RUN("-i", in, "-o", tpath("o.onnx"), "--set", "verify.atol=abc");
    expect_failure(&r, HOST_EXIT_CONFIG, "atol", NULL);
    r = RUN("-i", in, "-o", tpath("o.onnx"), "--set", "verify.runs=0");
    expect_failure(&r, HOST_EXIT_CONFIG, "runs", NULL);
    r = RUN("-i", in, "-o", tpath("o.onnx"), "--set", "verify.tolerance=1");
    expect_failure(&r, HOST_EXIT_CONFIG, "unknown key 'tolerance'", NULL);
    r = RUN("-i", in, "-o", tpath("o.onnx"), "--set", "model.input_shape_range=tokens:1~8x3~3x64",
            "--verify=1", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    free_result(&r);
}
END_TEST

START_TEST(shapes_written_to_value_info)
{
    const char *in = model_copy("transformer_block.onnx");
    result r = RUN("--shapes", "-i", in, "-o", tpath("shapes.onnx"), "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    free_result(&r);
    ph_model *m;
    ph_error e = {0};
    ck_assert_int_eq(ph_model_load(tpath("shapes.onnx"), &m, &e), 0);
    ph_graph *g = ph_model_graph(m);
    size_t nodes = 0, typed = 0;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n), nodes++)
        typed += ph_value_rank(ph_node_output(n, 0)) >= 0 && ph_value_dtype(ph_node_output(n, 0));
    ck_assert_uint_eq(nodes, 122); /* no passes ran */
    ck_assert_uint_eq(typed, nodes);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("binary");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, help_and_version);
    tcase_add_test(tc, list_passes);
    tcase_add_test(tc, round_trip_is_byte_identical);
    tcase_add_test(tc, config_file_run_and_report);
    tcase_add_test(tc, cap_warning_on_stderr);
    tcase_add_test(tc, usage_errors);
    tcase_add_test(tc, model_errors);
    tcase_add_test(tc, config_errors);
    tcase_add_test(tc, plugin_errors);
    tcase_add_test(tc, pass_errors);
    tcase_add_test(tc, output_errors);
    tcase_add_test(tc, verify_passes_on_default_stages);
    tcase_add_test(tc, verify_catches_a_wrong_pass);
    tcase_add_test(tc, verify_each_names_the_wrong_pass);
    tcase_add_test(tc, input_shapes);
    tcase_add_test(tc, shapes_written_to_value_info);
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
