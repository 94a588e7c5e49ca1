/* tests/test_pipeline_api.c - the embedding API (passhost/pipeline.h),
 * linked against libpasshost-pipeline.so itself.
 *
 * A run writes the same bytes as the passhost program with the same
 * options, whichever way the model goes in and out (path or bytes); the
 * INI file and INI text, [model] paths and --set work as in the program;
 * errors carry the program's exit code and message (a bad model: 3, an
 * unknown pass: 2, a failing pass: 5, --verify finding other outputs: 7,
 * the output is the input: 6) and leave no output file, no buffer and no
 * temporary folder; the input file and bytes are never changed; options
 * the library cannot take are refused at once; nothing is printed on
 * stdout or stderr, the log holds what the program would have printed. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clirun.h"
#include "passhost/pipeline.h"
#include "tmpdir.h"

static const char *plugdir;
static const char *const test_plugins[] = {"tp_fail", "tp_wrong_math", NULL};

static void setup(void)
{
    tk_tmpdir_make("pipeline");
    plugdir = tk_tmpdir_plugins(test_plugins);
    unsetenv("PASSHOST_PLUGIN_PATH");
    setenv("TMPDIR", tk_tpath(""), 1); /* bytes outputs stage their file here */
    ck_assert_int_eq(chdir(tk_tpath("")), 0); /* relative paths of INI text land here */
}

static void teardown(void)
{
    tk_tmpdir_remove();
}

/* A copy of a bundled model in the scratch folder. */
static const char *model(const char *name)
{
    char from[600];
    snprintf(from, sizeof from, "%s/models/%s", PH_SOURCE_DIR, name);
    const char *to = tk_tpath(name);
    tk_copy_file(from, to);
    return to;
}

static char *bytes_of(const char *path, size_t *len)
{
    char *d = tk_slurp(path, len);
    ck_assert_msg(d != NULL, "cannot read %s", path);
    return d;
}

static void assert_same_bytes(const void *a, size_t la, const char *file)
{
    size_t lb;
    char *b = bytes_of(file, &lb);
    ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "%zu bytes differ from %s (%zu bytes)", la,
                  file, lb);
    free(b);
}

static void assert_same_files(const char *a, const char *b)
{
    size_t la;
    char *x = bytes_of(a, &la);
    assert_same_bytes(x, la, b);
    free(x);
}

/* Entries of the scratch folder whose name starts with prefix. */
static int entries(const char *prefix)
{
    DIR *d = opendir(tk_tpath(""));
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* The program's result for the same options. */
static void cli_ok(const char *const *args)
{
    tk_cli_result r = tk_cli_run(args);
    ck_assert_msg(r.status == 0, "passhost exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
}

/* ------------------------------------------------------------------ runs */

START_TEST(path_in_path_out_same_as_program)
{
    const char *in = model("cnn_small.onnx");
    cli_ok((const char *const[]){in, tk_tpath("cli.onnx"), "--passes=eliminate_identity,fuse_conv_bn",
                                 "--input-shape", "input:2,3,64,64", "-q", NULL});
    ph_pipeline *p = ph_pipeline_new();
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ph_pipeline_passes(p, "eliminate_identity,fuse_conv_bn"), 0);
    ck_assert_int_eq(ph_pipeline_input_shape(p, "input:2,3,64,64"), 0);
    int rc = ph_pipeline_run(p, in, NULL, 0, tk_tpath("lib.onnx"), NULL, NULL);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, ph_pipeline_error(p));
    ck_assert_str_eq(ph_pipeline_error(p), "");
    assert_same_files(tk_tpath("lib.onnx"), tk_tpath("cli.onnx"));
    /* the same object runs again, to the same bytes */
    rc = ph_pipeline_run(p, in, NULL, 0, tk_tpath("lib2.onnx"), NULL, NULL);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, ph_pipeline_error(p));
    assert_same_files(tk_tpath("lib2.onnx"), tk_tpath("cli.onnx"));
    ph_pipeline_free(p);
}
END_TEST

START_TEST(bytes_in_bytes_out_same_as_program)
{
    const char *models[] = {"cnn_small.onnx", "transformer_block.onnx"};
    for (size_t i = 0; i < 2; i++) {
        const char *in = model(models[i]);
        cli_ok((const char *const[]){in, tk_tpath("cli.onnx"), "--skip=fuse_conv_bn", "-q", NULL});
        size_t n;
        char *data = bytes_of(in, &n);
        char *copy = malloc(n);
        memcpy(copy, data, n);
        ph_pipeline *p = ph_pipeline_new();
        ck_assert_int_eq(ph_pipeline_skip(p, "fuse_conv_bn"), 0);
        void *out = NULL;
        size_t out_size = 0;
        int rc = ph_pipeline_run(p, NULL, data, n, NULL, &out, &out_size);
        ck_assert_msg(rc == 0, "%s: rc %d: %s", models[i], rc, ph_pipeline_error(p));
        ck_assert_ptr_nonnull(out);
        assert_same_bytes(out, out_size, tk_tpath("cli.onnx"));
        ck_assert_msg(memcmp(data, copy, n) == 0, "the input bytes changed");
        ph_pipeline_free_buffer(out);
        /* mixed: bytes in, path out; path in, bytes out */
        rc = ph_pipeline_run(p, NULL, data, n, tk_tpath("b2p.onnx"), NULL, NULL);
        ck_assert_msg(rc == 0, "rc %d: %s", rc, ph_pipeline_error(p));
        assert_same_files(tk_tpath("b2p.onnx"), tk_tpath("cli.onnx"));
        rc = ph_pipeline_run(p, in, NULL, 0, NULL, &out, &out_size);
        ck_assert_msg(rc == 0, "rc %d: %s", rc, ph_pipeline_error(p));
        assert_same_bytes(out, out_size, tk_tpath("cli.onnx"));
        ph_pipeline_free_buffer(out);
        ph_pipeline_free(p);
        free(data);
        free(copy);
        ck_assert_int_eq(entries("passhost-pipeline."), 0); /* no staging folder left */
    }
}
END_TEST

START_TEST(config_file_and_text)
{
    const char *in = model("cnn_small.onnx");
    FILE *f = fopen(tk_tpath("run.ini"), "w");
    fprintf(f, "[model]\ninput = cnn_small.onnx\noutput = cli.onnx\n[optimize]\n"
               "pass_off = fuse_conv_bn\n");
    fclose(f);
    cli_ok((const char *const[]){tk_tpath("run.ini"), "-q", NULL});
    /* the file, its [model] paths: the same run */
    ph_pipeline *p = ph_pipeline_new();
    ck_assert_int_eq(ph_pipeline_config_file(p, tk_tpath("run.ini")), 0);
    void *out = NULL;
    size_t n = 0;
    int rc = ph_pipeline_run(p, NULL, NULL, 0, NULL, &out, &n); /* [model] input, bytes out */
    ck_assert_msg(rc == 0, "rc %d: %s", rc, ph_pipeline_error(p));
    assert_same_bytes(out, n, tk_tpath("cli.onnx"));
    ph_pipeline_free_buffer(out);
    ph_pipeline_free(p);
    /* the same settings as text */
    p = ph_pipeline_new();
    ck_assert_int_eq(ph_pipeline_config_text(p, "[optimize]\npass_off = fuse_conv_bn\n"), 0);
    rc = ph_pipeline_run(p, in, NULL, 0, tk_tpath("text.onnx"), NULL, NULL);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, ph_pipeline_error(p));
    assert_same_files(tk_tpath("text.onnx"), tk_tpath("cli.onnx"));
    /* text after the file: its keys win */
    ck_assert_int_eq(ph_pipeline_config_file(p, tk_tpath("run.ini")), 0);
    ck_assert_int_eq(ph_pipeline_config_text(p, "[model]\noutput = other.onnx\n"), 0);
    rc = ph_pipeline_run(p, in, NULL, 0, NULL, NULL, NULL);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, ph_pipeline_error(p));
    ck_assert(tk_exists(tk_tpath("other.onnx"))); /* relative to the working folder */
    assert_same_files(tk_tpath("other.onnx"), tk_tpath("cli.onnx"));
    /* a syntax error of the text names it and its line */
    ck_assert_int_eq(ph_pipeline_config_text(p, "[optimize]\nno_such_key = 1\n"), 0);
    rc = ph_pipeline_run(p, in, NULL, 0, tk_tpath("x.onnx"), NULL, NULL);
    ck_assert_int_eq(rc, PH_PIPELINE_CONFIG);
    ck_assert_msg(strstr(ph_pipeline_error(p), "<config text>:2"), "%s", ph_pipeline_error(p));
    ck_assert(!tk_exists(tk_tpath("x.onnx")));
    ph_pipeline_free(p);
}
END_TEST

START_TEST(set_verify_and_log)
{
    const char *in = model("cnn_small.onnx");
    cli_ok((const char *const[]){in, tk_tpath("cli.onnx"), "--set", "optimize.pass_off=fuse_conv_bn",
                                 "--verify=2", "--no-fold", "-q", NULL});
    ph_pipeline *p = ph_pipeline_new();
    ck_assert_int_eq(ph_pipeline_set(p, "optimize.pass_off=fuse_conv_bn"), 0);
    ck_assert_int_eq(ph_pipeline_verify(p, 2), 0);
    ck_assert_int_eq(ph_pipeline_option(p, "--no-fold"), 0);
    int rc = ph_pipeline_run(p, in, NULL, 0, tk_tpath("lib.onnx"), NULL, NULL);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, ph_pipeline_error(p));
    assert_same_files(tk_tpath("lib.onnx"), tk_tpath("cli.onnx"));
    /* -q's output: the verdict only */
    ck_assert_msg(strstr(ph_pipeline_log(p), "verify: 2 runs") && strstr(ph_pipeline_log(p), "OK"),
                  "%s", ph_pipeline_log(p));
    ck_assert_msg(!strstr(ph_pipeline_log(p), "stage optimize"), "%s", ph_pipeline_log(p));
    /* the full report on request */
    ph_pipeline_full_report(p, 1);
    rc = ph_pipeline_run(p, in, NULL, 0, tk_tpath("lib2.onnx"), NULL, NULL);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, ph_pipeline_error(p));
    ck_assert_msg(strstr(ph_pipeline_log(p), "stage optimize") &&
                  strstr(ph_pipeline_log(p), "passhost: "), "%s", ph_pipeline_log(p));
    ph_pipeline_free(p);
    /* the verification options of the program: fixed tolerances, ranges */
    p = ph_pipeline_new();
    ck_assert_int_eq(ph_pipeline_option(p, "--verify-atol=1e-3"), 0);
    ck_assert_int_eq(ph_pipeline_option(p, "--verify-range=input=0:1"), 0);
    ck_assert_int_eq(ph_pipeline_option(p, "--verify-data"), PH_PIPELINE_USAGE);
    rc = ph_pipeline_run(p, in, NULL, 0, tk_tpath("lib3.onnx"), NULL, NULL);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, ph_pipeline_error(p));
    ck_assert_msg(strstr(ph_pipeline_log(p), "atol 0.001, rtol 0.0001: OK"), "%s", ph_pipeline_log(p));
    ph_pipeline_free(p);
}
END_TEST

/* ---------------------------------------------------------------- errors */

/* A failed run: code, a message holding frag, the log's last line, no
 * output file, no buffer. */
static void expect_failure(ph_pipeline *p, int rc, int code, const char *frag, const char *out,
                           void *buf)
{
    ck_assert_msg(rc == code, "rc %d (want %d): %s", rc, code, ph_pipeline_error(p));
    ck_assert_msg(strstr(ph_pipeline_error(p), frag), "'%s' not in: %s", frag, ph_pipeline_error(p));
    char line[700];
    snprintf(line, sizeof line, "passhost: %s\n", ph_pipeline_error(p));
    ck_assert_msg(strstr(ph_pipeline_log(p), line), "log: %s", ph_pipeline_log(p));
    if (out)
        ck_assert_msg(!tk_exists(out), "%s left behind", out);
    ck_assert_ptr_null(buf);
    ck_assert_int_eq(entries("passhost-pipeline."), 0);
    ck_assert_int_eq(entries(".out"), 0); /* no temporary file of the save */
}

START_TEST(bad_model_is_code_3)
{
    FILE *f = fopen(tk_tpath("bad.onnx"), "w");
    fputs("\x08\x07\x12\xff garbage", f);
    fclose(f);
    ph_pipeline *p = ph_pipeline_new();
    int rc = ph_pipeline_run(p, tk_tpath("bad.onnx"), NULL, 0, tk_tpath("out.onnx"), NULL, NULL);
    expect_failure(p, rc, PH_PIPELINE_MODEL, "bad.onnx", tk_tpath("out.onnx"), NULL);
    /* the program says the same */
    tk_cli_result r = TK_CLI(tk_tpath("bad.onnx"), tk_tpath("out.onnx"));
    char want[700];
    snprintf(want, sizeof want, "passhost: %s\n", ph_pipeline_error(p));
    ck_assert_int_eq(r.status, PH_PIPELINE_MODEL);
    ck_assert_str_eq(r.err, want);
    tk_cli_free(&r);
    /* as bytes: named <memory> */
    void *out = NULL;
    size_t n = 0;
    rc = ph_pipeline_run(p, NULL, "garbage", 7, NULL, &out, &n);
    expect_failure(p, rc, PH_PIPELINE_MODEL, "<memory>", NULL, out);
    ck_assert_uint_eq(n, 0);
    rc = ph_pipeline_run(p, tk_tpath("missing.onnx"), NULL, 0, tk_tpath("out.onnx"), NULL, NULL);
    expect_failure(p, rc, PH_PIPELINE_MODEL, "missing.onnx", tk_tpath("out.onnx"), NULL);
    ph_pipeline_free(p);
}
END_TEST

START_TEST(bad_pass_name_is_config_error)
{
    const char *in = model("cnn_small.onnx");
    ph_pipeline *p = ph_pipeline_new();
    ck_assert_int_eq(ph_pipeline_passes(p, "eliminate_identity,fuse_conv_bm"), 0);
    int rc = ph_pipeline_run(p, in, NULL, 0, tk_tpath("out.onnx"), NULL, NULL);
    expect_failure(p, rc, PH_PIPELINE_CONFIG, "unknown pass 'fuse_conv_bm'", tk_tpath("out.onnx"),
                   NULL);
    tk_cli_result r = TK_CLI(in, tk_tpath("out.onnx"), "--passes=eliminate_identity,fuse_conv_bm");
    tk_expect_failure(&r, PH_PIPELINE_CONFIG, "unknown pass 'fuse_conv_bm'", NULL);
    ph_pipeline_free(p);
}
END_TEST

START_TEST(failed_runs_leave_nothing)
{
    const char *in = model("cnn_small.onnx");
    size_t n;
    char *before = bytes_of(in, &n);
    /* a pass that fails: 5 */
    ph_pipeline *p = ph_pipeline_new();
    ck_assert_int_eq(ph_pipeline_plugin_dir(p, plugdir), 0);
    ck_assert_int_eq(ph_pipeline_passes(p, "tp_fail"), 0);
    int rc = ph_pipeline_run(p, in, NULL, 0, tk_tpath("out.onnx"), NULL, NULL);
    expect_failure(p, rc, PH_PIPELINE_PASS, "tp_fail", tk_tpath("out.onnx"), NULL);
    void *out = NULL;
    size_t out_size = 0;
    rc = ph_pipeline_run(p, in, NULL, 0, NULL, &out, &out_size);
    expect_failure(p, rc, PH_PIPELINE_PASS, "tp_fail", NULL, out);
    ph_pipeline_free(p);
    /* outputs that differ under --verify: 7, the written file removed */
    p = ph_pipeline_new();
    ck_assert_int_eq(ph_pipeline_plugin_dir(p, plugdir), 0);
    ck_assert_int_eq(ph_pipeline_passes(p, "tp_wrong_math"), 0);
    ck_assert_int_eq(ph_pipeline_verify(p, 0), 0);
    rc = ph_pipeline_run(p, in, NULL, 0, tk_tpath("out.onnx"), NULL, NULL);
    expect_failure(p, rc, PH_PIPELINE_MISMATCH, "logits", tk_tpath("out.onnx"), NULL);
    ph_pipeline_free(p);
    /* the output is the input: 6 */
    p = ph_pipeline_new();
    rc = ph_pipeline_run(p, in, NULL, 0, in, NULL, NULL);
    expect_failure(p, rc, PH_PIPELINE_OUTPUT, "never overwrites its input", NULL, NULL);
    /* a model that needs an external-data file cannot go into one buffer */
    ck_assert_int_eq(ph_pipeline_set(p, "model.external_data_threshold=0"), 0);
    rc = ph_pipeline_run(p, in, NULL, 0, NULL, &out, &out_size);
    expect_failure(p, rc, PH_PIPELINE_OUTPUT, "external-data file", NULL, out);
    ph_pipeline_free(p);
    assert_same_bytes(before, n, in); /* the input untouched throughout */
    free(before);
}
END_TEST

START_TEST(refused_arguments)
{
    ph_pipeline *p = ph_pipeline_new();
    const char *refused[] = {"-o", "--output=x.onnx", "-i", "--bisect", "--list-passes",
                             "--inspect", "-q", "--no-fork", "--print-changes",
                             "--crash-out=d", "--report-json=-", "--passes", "x.onnx"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        ck_assert_msg(ph_pipeline_option(p, refused[i]) == PH_PIPELINE_USAGE, "%s", refused[i]);
        ck_assert_msg(ph_pipeline_error(p)[0], "%s: no message", refused[i]);
    }
    /* bad values: the program's codes and messages, at once */
    ck_assert_int_eq(ph_pipeline_input_shape(p, "input:1,x,3"), PH_PIPELINE_CONFIG);
    ck_assert_msg(strstr(ph_pipeline_error(p), "NAME:DIMS"), "%s", ph_pipeline_error(p));
    ck_assert_int_eq(ph_pipeline_set(p, "nodots"), PH_PIPELINE_USAGE);
    ck_assert_int_eq(ph_pipeline_set(p, "optimize.no_such_key=1"), PH_PIPELINE_CONFIG);
    ck_assert_msg(strstr(ph_pipeline_error(p), "no_such_key"), "%s", ph_pipeline_error(p));
    ck_assert_int_eq(ph_pipeline_verify(p, 5000), PH_PIPELINE_USAGE);
    ck_assert_int_eq(ph_pipeline_option(p, "--max-rewrites=lots"), PH_PIPELINE_CONFIG);
    ck_assert_int_eq(ph_pipeline_passes(p, NULL), PH_PIPELINE_USAGE);
    /* a refused option leaves the object as it was: this run uses none */
    const char *in = model("cnn_small.onnx");
    cli_ok((const char *const[]){in, tk_tpath("cli.onnx"), "-q", NULL});
    int rc = ph_pipeline_run(p, in, NULL, 0, tk_tpath("lib.onnx"), NULL, NULL);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, ph_pipeline_error(p));
    assert_same_files(tk_tpath("lib.onnx"), tk_tpath("cli.onnx"));
    /* both forms of one side */
    void *out = NULL;
    size_t n = 0;
    ck_assert_int_eq(ph_pipeline_run(p, in, "x", 1, tk_tpath("o.onnx"), NULL, NULL), PH_PIPELINE_USAGE);
    ck_assert_int_eq(ph_pipeline_run(p, in, NULL, 0, tk_tpath("o.onnx"), &out, &n), PH_PIPELINE_USAGE);
    ck_assert_int_eq(ph_pipeline_run(p, in, NULL, 0, NULL, &out, NULL), PH_PIPELINE_USAGE);
    ck_assert_ptr_null(out);
    ck_assert(!tk_exists(tk_tpath("o.onnx")));
    /* no model at all */
    ck_assert_int_eq(ph_pipeline_run(p, NULL, NULL, 0, NULL, NULL, NULL), PH_PIPELINE_USAGE);
    ck_assert_msg(strstr(ph_pipeline_error(p), "no input model"), "%s", ph_pipeline_error(p));
    ph_pipeline_free(p);
    ck_assert_str_eq(ph_pipeline_version(), "0.1.0");
}
END_TEST

START_TEST(prints_nothing)
{
    const char *in = model("cnn_small.onnx");
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    int fd = open(tk_tpath("printed.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert(fd >= 0 && saved_out >= 0 && saved_err >= 0);
    dup2(fd, 1);
    dup2(fd, 2);
    ph_pipeline *p = ph_pipeline_new();
    ph_pipeline_full_report(p, 1);
    ph_pipeline_verify(p, 1);
    ph_pipeline_option(p, "--verify-each");
    int ok = ph_pipeline_run(p, in, NULL, 0, tk_tpath("out.onnx"), NULL, NULL);
    ph_pipeline_passes(p, "no_such_pass");
    int bad = ph_pipeline_run(p, in, NULL, 0, tk_tpath("out2.onnx"), NULL, NULL);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    close(fd);
    ck_assert_int_eq(ok, 0);
    ck_assert_int_eq(bad, PH_PIPELINE_CONFIG);
    size_t n;
    char *printed = bytes_of(tk_tpath("printed.txt"), &n);
    ck_assert_msg(n == 0, "printed: %s", printed);
    free(printed);
    ph_pipeline_free(p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pipeline_api");
    TCase *tc = tcase_create("api");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, path_in_path_out_same_as_program);
    tcase_add_test(tc, bytes_in_bytes_out_same_as_program);
    tcase_add_test(tc, config_file_and_text);
    tcase_add_test(tc, set_verify_and_log);
    tcase_add_test(tc, bad_model_is_code_3);
    tcase_add_test(tc, bad_pass_name_is_config_error);
    tcase_add_test(tc, failed_runs_leave_nothing);
    tcase_add_test(tc, refused_arguments);
    tcase_add_test(tc, prints_nothing);
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
