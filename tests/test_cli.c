/* tests/test_cli.c - the passhost program end to end, through the built
 * binary $(PH_BUILD_DIR)/bin/passhost: --list-passes, a no-pass round trip
 * that is byte-identical, each documented exit code with its one-line
 * message, the input never touched, no output (and no stray temporary
 * file) after a failure, the report, the log file and the cap warning.
 * Test plugins are copied from $(BUILD)/test-plugins into a mkdtemp folder
 * given with --plugin-dir. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clirun.h"
#include "base/exit.h"
#include "pbwire.h"
#include "passhost/host.h"
#include "passhost/passhost.h"
#include "tmpdir.h"

static const char *tmpdir;
static const char *plugdir;

static const char *const test_plugins[] = {"tp_good", "tp_one_step", "tp_flip_a", "tp_flip_b",
                                           "tp_once", "tp_fail", "tp_break_graph",
                                           "tp_make_cycle", "tp_wrong_math", NULL};

static void setup(void)
{
    tmpdir = tk_tmpdir_make("cli");
    plugdir = tk_tmpdir_plugins(test_plugins);
    unsetenv("PASSHOST_PLUGIN_PATH");
}

static void teardown(void)
{
    tk_tmpdir_remove();
}

/* A copy of a bundled model in tmpdir; tests/models first, else models/. */
static const char *model_copy(const char *name)
{
    char from[600];
    snprintf(from, sizeof from, "%s/tests/models/%s", PH_SOURCE_DIR, name);
    if (!tk_exists(from))
        snprintf(from, sizeof from, "%s/models/%s", PH_SOURCE_DIR, name);
    const char *to = tk_tpath(name);
    tk_copy_file(from, to);
    return to;
}

/* ------------------------------------------------------------------ tests */

START_TEST(help_and_version)
{
    tk_cli_result r = TK_CLI("--help");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "exit codes"));
    ck_assert_ptr_nonnull(strstr(r.out, "--set SECTION.KEY=VALUE"));
    tk_cli_free(&r);
    r = TK_CLI("--version");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "passhost "));
    tk_cli_free(&r);
}
END_TEST

START_TEST(list_passes)
{
    tk_cli_result r = TK_CLI("--list-passes", "--plugin-dir", plugdir);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "EXACT"));
    ck_assert_ptr_nonnull(strstr(r.out, "tp_good"));
    ck_assert_ptr_nonnull(strstr(r.out, "test pass that changes nothing"));
    ck_assert_ptr_nonnull(strstr(r.out, "limit (int, default 3)"));
    ck_assert_ptr_nonnull(strstr(r.out, "tp_once"));
    tk_cli_free(&r);
    /* as the markdown table of docs/passes.md */
    r = TK_CLI("--list-passes", "--markdown", "--plugin-dir", plugdir);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "| pass | stage | default | exactness |"));
    ck_assert_ptr_nonnull(strstr(r.out, "`limit` (3)"));
    ck_assert_ptr_nonnull(strstr(r.out, "once, after the fixpoint"));
    ck_assert_ptr_null(strstr(r.out, "EXACT"));
    tk_cli_free(&r);
    /* through PASSHOST_PLUGIN_PATH as well */
    setenv("PASSHOST_PLUGIN_PATH", plugdir, 1);
    r = TK_CLI("--list-passes");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "tp_flip_b"));
    tk_cli_free(&r);
}
END_TEST

START_TEST(round_trip_is_byte_identical)
{
    const char *models[] = {"cnn_small.onnx", "transformer_block.onnx", "control_flow.onnx",
                            "unknown_fields.onnx"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const char *in = model_copy(models[i]);
        const char *out = tk_tpath("out.onnx");
        struct stat before, after;
        ck_assert_int_eq(stat(in, &before), 0);
        tk_cli_result r = TK_CLI("-i", in, "-o", out, "-q", "--set", "optimize.no_integral=true",
                                 "--set", "adapt.no_integral=true");
        ck_assert_msg(r.status == 0, "%s: %s", models[i], r.err);
        ck_assert_str_eq(r.out, ""); /* -q */
        tk_cli_free(&r);
        size_t la, lb;
        char *a = tk_slurp(in, &la), *b = tk_slurp(out, &lb);
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
    FILE *f = fopen(tk_tpath("run.ini"), "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "[model]\ninput = cnn_small.onnx\noutput = out/cnn.opt.onnx\n"
               "plugin_dir = plugins\nlog_path = run.log\n"
               "[optimize]\nno_integral = true\npass_on = \"tp_one_step;tp_good\"\n"
               "[adapt]\nno_integral = true\n[pass.tp_good]\nlimit = 5\n");
    fclose(f);
    ck_assert_int_eq(mkdir(tk_tpath("out"), 0700), 0);
    tk_cli_result r = TK_CLI(tk_tpath("run.ini"));
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "stage optimize") && strstr(r.out, "tp_one_step") &&
                  strstr(r.out, "stage adapt") && strstr(r.out, "rewrites"), "%s", r.out);
    /* the model has two Identity nodes: 26 -> 24 */
    ck_assert_msg(strstr(r.out, "nodes 26 -> 24") != NULL, "%s", r.out);
    ck_assert(tk_exists(tk_tpath("out/cnn.opt.onnx")));
    char *log = tk_slurp(tk_tpath("run.log"), NULL);
    ck_assert_ptr_nonnull(log);
    ck_assert_ptr_nonnull(strstr(log, "tp_one_step"));
    free(log);
    tk_cli_free(&r);

    /* -o overrides [model] output; --set overrides a value */
    r = TK_CLI(tk_tpath("run.ini"), "-o", tk_tpath("other.onnx"), "--set",
               "optimize.pass_on=tp_good");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert(tk_exists(tk_tpath("other.onnx")));
    ck_assert_ptr_null(strstr(r.out, "tp_one_step"));
    tk_cli_free(&r);
}
END_TEST

START_TEST(cap_warning_on_stderr)
{
    const char *in = model_copy("cnn_small.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), "--plugin-dir", plugdir, "--set",
                             "optimize.no_integral=true", "--set", "adapt.no_integral=true",
                             "--set", "optimize.pass_on=tp_one_step", "--set",
                             "optimize.max_iterations=1");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "warning") && strstr(r.err, "no fixpoint after 1 round") &&
                  strstr(r.err, "tp_one_step"), "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "cap reached"));
    tk_cli_free(&r);
    /* two passes that undo each other: named, and the stage stops early */
    r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), "--plugin-dir", plugdir, "--set",
               "optimize.no_integral=true", "--set", "adapt.no_integral=true",
               "--set", "optimize.pass_on=tp_flip_a,tp_flip_b");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "undo each other") && strstr(r.err, "tp_flip_a, tp_flip_b"), "%s",
                  r.err);
    tk_cli_free(&r);
}
END_TEST

START_TEST(usage_errors)
{
    tk_cli_result r = TK_CLI("--no-such-option");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--no-such-option", NULL);
    r = tk_cli_run((const char *const[]){NULL});
    tk_expect_failure(&r, HOST_EXIT_USAGE, "-i", NULL);
    r = TK_CLI("-i", "a.onnx");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "output", NULL);
    r = TK_CLI("-i", "a.onnx", "-o", "b.onnx", "--set", "nodot");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "nodot", NULL);
    r = TK_CLI("a.ini", "b.ini");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "b.ini", NULL);
}
END_TEST

START_TEST(model_errors)
{
    const char *out = tk_tpath("out.onnx");
    /* missing */
    tk_cli_result r = TK_CLI("-i", tk_tpath("missing.onnx"), "-o", out);
    tk_expect_failure(&r, HOST_EXIT_MODEL, "missing.onnx", NULL);
    ck_assert(!tk_exists(out));
    /* truncated: the first half of a real model */
    const char *full = model_copy("cnn_small.onnx");
    size_t len;
    char *bytes = tk_slurp(full, &len);
    FILE *f = fopen(tk_tpath("half.onnx"), "wb");
    fwrite(bytes, 1, len / 2, f);
    fclose(f);
    free(bytes);
    r = TK_CLI("-i", tk_tpath("half.onnx"), "-o", out);
    tk_expect_failure(&r, HOST_EXIT_MODEL, "half.onnx", NULL);
    ck_assert(!tk_exists(out));
    /* not ONNX at all */
    f = fopen(tk_tpath("text.onnx"), "w");
    fputs("name,value\nthis is a text file\n", f);
    fclose(f);
    r = TK_CLI("-i", tk_tpath("text.onnx"), "-o", out);
    tk_expect_failure(&r, HOST_EXIT_MODEL, "text.onnx", NULL);
    ck_assert(!tk_exists(out));
    /* a folder */
    r = TK_CLI("-i", tmpdir, "-o", out);
    tk_expect_failure(&r, HOST_EXIT_MODEL, tmpdir, NULL);
    ck_assert(!tk_exists(out));
}
END_TEST

START_TEST(config_errors)
{
    const char *in = model_copy("cnn_small.onnx");
    FILE *f = fopen(tk_tpath("bad.ini"), "w");
    fprintf(f, "[model]\ninput = cnn_small.onnx\noutput = o.onnx\n[optimize\n");
    fclose(f);
    tk_cli_result r = TK_CLI(tk_tpath("bad.ini"));
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "bad.ini:4:", NULL);
    ck_assert(!tk_exists(tk_tpath("o.onnx")));

    r = TK_CLI("-i", in, "-o", tk_tpath("o.onnx"), "--set", "optimize.pass_on=no_such_pass");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "unknown pass 'no_such_pass'", NULL);
    r = TK_CLI("-i", in, "-o", tk_tpath("o.onnx"), "--plugin-dir", plugdir, "--set",
               "optimize.pass_on=tp_once", "--set", "optimize.pass_off=tp_once");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "tp_once", "pass_off");
    r = TK_CLI("-i", in, "-o", tk_tpath("o.onnx"), "--plugin-dir", plugdir, "--set",
               "pass.tp_good.limit=many");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "pass.tp_good.limit", "many");
    r = TK_CLI(tk_tpath("nonexistent.ini"));
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "nonexistent.ini", NULL);
    ck_assert(!tk_exists(tk_tpath("o.onnx")));
}
END_TEST

START_TEST(plugin_errors)
{
    const char *in = model_copy("cnn_small.onnx");
    char from[600];
    snprintf(from, sizeof from, "%s/test-plugins/tp_abi2.so", PH_BUILD_DIR);
    tk_copy_file(from, plugdir);
    tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("o.onnx"), "--plugin-dir", plugdir);
    tk_expect_failure(&r, HOST_EXIT_PLUGIN, "tp_abi2.so", "ABI 2.0");
    r = TK_CLI("--list-passes", "--plugin-dir", tk_tpath("nowhere"));
    tk_expect_failure(&r, HOST_EXIT_PLUGIN, "nowhere", NULL);
    ck_assert(!tk_exists(tk_tpath("o.onnx")));
}
END_TEST

START_TEST(pass_errors)
{
    const char *in = model_copy("cnn_small.onnx");
    const char *out = tk_tpath("o.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", out, "--plugin-dir", plugdir, "--set",
                             "optimize.pass_on=tp_fail");
    tk_expect_failure(&r, HOST_EXIT_PASS, "pass tp_fail", "deliberate failure");
    ck_assert(!tk_exists(out));
    r = TK_CLI("-i", in, "-o", out, "--plugin-dir", plugdir, "--set",
               "optimize.pass_on=tp_make_cycle");
    tk_expect_failure(&r, HOST_EXIT_PASS, "pass tp_make_cycle", "cycle");
    ck_assert(!tk_exists(out));
    r = TK_CLI("-i", in, "-o", out, "--plugin-dir", plugdir, "--verify-each", "--set",
               "optimize.pass_on=tp_good,tp_break_graph");
    tk_expect_failure(&r, HOST_EXIT_PASS, "pass tp_break_graph", NULL);
    ck_assert(!tk_exists(out));
}
END_TEST

START_TEST(output_errors)
{
    const char *in = model_copy("cnn_small.onnx");
    size_t len;
    char *orig = tk_slurp(in, &len);
    struct stat before, after;
    ck_assert_int_eq(stat(in, &before), 0);
    int entries = tk_dir_entries(tmpdir);

    /* a folder that does not exist */
    tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("no/such/dir/out.onnx"));
    tk_expect_failure(&r, HOST_EXIT_OUTPUT, "no/such/dir/out.onnx", NULL);
    /* a parent that is a file */
    r = TK_CLI("-i", in, "-o", tk_tpath("cnn_small.onnx/out.onnx"));
    tk_expect_failure(&r, HOST_EXIT_OUTPUT, "out.onnx", NULL);
    /* the output is an existing folder: the rename fails, no temp is left */
    ck_assert_int_eq(mkdir(tk_tpath("adir"), 0700), 0);
    entries++;
    r = TK_CLI("-i", in, "-o", tk_tpath("adir"));
    tk_expect_failure(&r, HOST_EXIT_OUTPUT, "adir", NULL);
    ck_assert_int_eq(tk_dir_entries(tmpdir), entries);
    ck_assert_int_eq(tk_dir_entries(tk_tpath("adir")), 0);
    /* the input itself, by the same and by another name */
    r = TK_CLI("-i", in, "-o", in);
    tk_expect_failure(&r, HOST_EXIT_OUTPUT, "input", NULL);
    ck_assert_int_eq(symlink(in, tk_tpath("alias.onnx")), 0);
    entries++;
    r = TK_CLI("-i", in, "-o", tk_tpath("alias.onnx"));
    tk_expect_failure(&r, HOST_EXIT_OUTPUT, "input", NULL);

    ck_assert_int_eq(tk_dir_entries(tmpdir), entries);
    ck_assert_int_eq(stat(in, &after), 0);
    ck_assert(before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
              before.st_mtim.tv_nsec == after.st_mtim.tv_nsec);
    size_t len2;
    char *now = tk_slurp(in, &len2);
    ck_assert(len == len2 && memcmp(orig, now, len) == 0);
    free(orig);
    free(now);
}
END_TEST


/* ------------------------------------------------- numeric verification */

START_TEST(verify_passes_on_default_stages)
{
    const char *in = model_copy("cnn_small.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), "--verify=2", "-v");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "verify: 2 runs"));
    ck_assert_ptr_nonnull(strstr(r.out, "output logits")); /* -v: each output's errors */
    ck_assert_ptr_null(strstr(r.out, "MISMATCH"));
    ck_assert(tk_exists(tk_tpath("out.onnx")));
    tk_cli_free(&r);
}
END_TEST

START_TEST(verify_catches_a_wrong_pass)
{
    const char *in = model_copy("cnn_small.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), "--plugin-dir", plugdir, "--set",
                             "optimize.no_integral=true", "--set", "optimize.pass_on=tp_wrong_math",
                             "--verify");
    ck_assert_ptr_nonnull(strstr(r.out, "MISMATCH"));
    tk_expect_failure(&r, HOST_EXIT_MISMATCH, "output 'logits' differs", "max abs");
    ck_assert(!tk_exists(tk_tpath("out.onnx"))); /* nothing written */
}
END_TEST

START_TEST(verify_each_names_the_wrong_pass)
{
    const char *in = model_copy("cnn_small.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("out.onnx"), "--plugin-dir", plugdir, "--set",
                             "optimize.pass_on=tp_wrong_math", "--verify-each", "-q");
    tk_expect_failure(&r, HOST_EXIT_MISMATCH, "pass tp_wrong_math", "numeric equivalence");
    ck_assert(!tk_exists(tk_tpath("out.onnx")));
    /* a model the evaluator cannot run: --verify refuses, --verify-each checks structure only */
    in = model_copy("control_flow.onnx");
    r = TK_CLI("-i", in, "-o", tk_tpath("cf.onnx"), "--verify");
    tk_expect_failure(&r, HOST_EXIT_NOVERIFY, "cannot evaluate", NULL);
    r = TK_CLI("-i", in, "-o", tk_tpath("cf.onnx"), "--verify-each");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "structure only"));
    tk_cli_free(&r);
}
END_TEST

START_TEST(input_shapes)
{
    const char *in = model_copy("transformer_block.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("o.onnx"), "--set",
                             "model.input_shape=nosuch:1x2");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "nosuch", NULL);
    r = TK_CLI("-i", in, "-o", tk_tpath("o.onnx"), "--set", "model.input_shape=tokens:1xq");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "input_shape", NULL);
    r = TK_CLI("-i", in, "-o", tk_tpath("o.onnx"), "--set", "model.input_shape=tokens:1x16x65");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "tokens", NULL); /* the model says 64 */
    r = TK_CLI("-i", in, "-o", tk_tpath("o.onnx"), "--set", "verify.atol=abc");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "atol", NULL);
    r = TK_CLI("-i", in, "-o", tk_tpath("o.onnx"), "--set", "verify.runs=0");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "runs", NULL);
    r = TK_CLI("-i", in, "-o", tk_tpath("o.onnx"), "--set", "verify.tolerance=1");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "unknown key 'tolerance'", NULL);
    r = TK_CLI("-i", in, "-o", tk_tpath("o.onnx"), "--set",
               "model.input_shape_range=tokens:1~8x3~3x64", "--verify=1", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
}
END_TEST

START_TEST(shapes_written_to_value_info)
{
    const char *in = model_copy("transformer_block.onnx");
    tk_cli_result r = TK_CLI("--shapes", "-i", in, "-o", tk_tpath("shapes.onnx"), "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    ph_model *m;
    ph_error e = {0};
    ck_assert_int_eq(ph_model_load(tk_tpath("shapes.onnx"), &m, &e), 0);
    ph_graph *g = ph_model_graph(m);
    size_t nodes = 0, typed = 0;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n), nodes++)
        typed += ph_value_rank(ph_node_output(n, 0)) >= 0 && ph_value_dtype(ph_node_output(n, 0));
    ck_assert_uint_eq(nodes, 122); /* no passes ran */
    ck_assert_uint_eq(typed, nodes);
    ph_model_free(m);
}
END_TEST

/* A ValueInfoProto with a name and no type (field `field` of a graph). */
static void untyped(pb *graph, unsigned field, const char *name)
{
    pb v = {0};
    pb_str(&v, 1, name);
    pb_msg(graph, field, &v);
}

/* Write model bytes to the scratch folder. */
static const char *write_model(const pb *model, const char *name)
{
    const char *path = tk_tpath(name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(model->data, 1, model->len, f), model->len);
    fclose(f);
    return path;
}

/* --shapes writes a known dtype even when the rank is not known: Squeeze
 * with its axes as a graph input, into an untyped intermediate value and an
 * untyped graph output. */
START_TEST(shapes_write_dtype_of_unknown_rank)
{
    pb graph = {0}, opset = {0}, model = {0};
    pb_node(&graph, "Squeeze", "x", "axes", "z", NULL);
    pb_node(&graph, "Relu", "z", NULL, "y", NULL);
    pb_str(&graph, 2, "g");
    pb_value_info(&graph, 11, "x", PH_DT_FLOAT, 3, (const int64_t[]){3, 1, 4});
    pb_value_info(&graph, 11, "axes", PH_DT_INT64, 1, (const int64_t[]){1});
    untyped(&graph, 12, "y");
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 13);
    pb_int(&model, 1, 8);
    pb_msg(&model, 7, &graph);
    pb_msg(&model, 8, &opset);
    const char *in = write_model(&model, "squeeze.onnx");
    tk_cli_result r = TK_CLI("--shapes", "-i", in, "-o", tk_tpath("typed.onnx"), "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    ph_model *m;
    ph_error e = {0};
    ck_assert_int_eq(ph_model_load(tk_tpath("typed.onnx"), &m, &e), 0);
    ph_graph *g = ph_model_graph(m);
    const ph_value *z = ph_node_output(ph_graph_first_node(g), 0), *y = ph_graph_output(g, 0);
    ck_assert_int_eq(ph_value_dtype(z), PH_DT_FLOAT);
    ck_assert_int_eq(ph_value_rank(z), -1);
    ck_assert_int_eq(ph_value_dtype(y), PH_DT_FLOAT);
    ck_assert_int_eq(ph_value_rank(y), -1);
    ph_model_free(m);
}
END_TEST

/* A Loop whose body inputs and outputs carry no type (as exporters and the
 * ONNX test suite write them) round-trips byte for byte: what shape
 * inference learns of them is not written back. */
START_TEST(untyped_loop_body_round_trips)
{
    pb body = {0}, attrs = {0}, loop = {0}, graph = {0}, opset = {0}, model = {0};
    pb_node(&body, "Identity", "cond_in", NULL, "cond_out", NULL);
    pb_node(&body, "Add", "acc", "x", "acc_out", NULL);
    pb_str(&body, 2, "body");
    untyped(&body, 11, "i");
    untyped(&body, 11, "cond_in");
    untyped(&body, 11, "acc");
    untyped(&body, 12, "cond_out");
    untyped(&body, 12, "acc_out");
    pb_graph_attr(&attrs, "body", &body);
    pb_str(&loop, 1, "M");
    pb_str(&loop, 1, "");
    pb_str(&loop, 1, "acc0");
    pb_str(&loop, 2, "y");
    pb_str(&loop, 3, "loop");
    pb_str(&loop, 4, "Loop");
    for (size_t i = 0; i < attrs.len; i++)
        pb_byte(&loop, attrs.data[i]);
    pb_msg(&graph, 1, &loop);
    pb_str(&graph, 2, "main");
    pb_value_info(&graph, 11, "M", PH_DT_INT64, 0, NULL);
    pb_value_info(&graph, 11, "acc0", PH_DT_FLOAT, 1, (const int64_t[]){2});
    pb_value_info(&graph, 11, "x", PH_DT_FLOAT, 1, (const int64_t[]){2});
    pb_value_info(&graph, 12, "y", PH_DT_FLOAT, 1, (const int64_t[]){2});
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 13);
    pb_int(&model, 1, 8);
    pb_msg(&model, 7, &graph);
    pb_msg(&model, 8, &opset);
    const char *in = write_model(&model, "loop.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("loop_out.onnx"), "--set", "optimize.no_integral=true",
                             "--set", "adapt.no_integral=true", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    size_t n = 0;
    char *out = tk_slurp(tk_tpath("loop_out.onnx"), &n);
    ck_assert_ptr_nonnull(out);
    ck_assert_msg(n == model.len && !memcmp(out, model.data, n), "%zu bytes in, %zu out", model.len, n);
    free(out);
    /* and the evaluator runs it: acc0 + M * x */
    ph_model *m;
    ph_error e = {0};
    ck_assert_int_eq(ph_model_load(in, &m, &e), 0);
    ph_eval *ev = NULL;
    ck_assert_msg(ph_eval_new(ph_model_graph(m), &ev, &e) == 0, "%s", e.message);
    const int64_t trips = 3;
    const float acc0[2] = {1, 2}, x[2] = {0.5f, -1};
    ph_tensor *tm = ph_tensor_new(PH_DT_INT64, 0, NULL, &trips), *ta = ph_tensor_new(PH_DT_FLOAT, 1, (const int64_t[]){2}, acc0),
              *tx = ph_tensor_new(PH_DT_FLOAT, 1, (const int64_t[]){2}, x), *y = NULL;
    ck_assert_msg(ph_eval_run(ev, (const ph_tensor *[]){tm, ta, tx}, 3, &y, 1, &e) == 0, "%s", e.message);
    const float *yd = ph_tensor_data(y);
    ck_assert(yd[0] == 2.5f && yd[1] == -1.0f);
    ph_tensor_free(y);
    ph_tensor_free(tm);
    ph_tensor_free(ta);
    ph_tensor_free(tx);
    ph_eval_free(ev);
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
    tcase_add_test(tc, shapes_write_dtype_of_unknown_rank);
    tcase_add_test(tc, untyped_loop_body_round_trips);
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
