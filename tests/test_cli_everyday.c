/* tests/test_cli_everyday.c - what a new user meets, through the built
 * binary: an out-of-order node list (sorted, said in one line) and a cycle
 * (refused); --level and -O0..-O3; subgraph extraction with --inputs and
 * --outputs; the misuse messages; --print-changes for unnamed nodes; the
 * progress phases of --verify; rule tracing.  Each error with its exit code
 * and one-line message. */
#include <check.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clirun.h"
#include "base/exit.h"
#include "passhost/host.h"
#include "passhost/passhost.h"
#include "tmpdir.h"

static const char *tmpdir;

static void setup(void)
{
    tmpdir = tk_tmpdir_make("everyday");
    unsetenv("PASSHOST_PLUGIN_PATH");
    unsetenv("COLUMNS");
}

static void teardown(void) { tk_tmpdir_remove(); }

/* A copy of a bundled model in tmpdir, under the name `as`. */
static const char *model_as(const char *name, const char *as)
{
    char from[600];
    snprintf(from, sizeof from, "%s/models/%s", PH_SOURCE_DIR, name);
    if (!tk_exists(from))
        snprintf(from, sizeof from, "%s/tests/models/%s", PH_SOURCE_DIR, name);
    const char *to = tk_tpath(as);
    tk_copy_file(from, to);
    return to;
}

/* The nodes of a saved model's main graph. */
static size_t saved_nodes(const char *path)
{
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_msg(ph_model_load(path, &m, &err) == 0, "%s: %s", path, err.message);
    size_t n = ph_graph_node_count(ph_model_graph(m));
    ph_model_free(m);
    return n;
}

/* The names of the passes in a -v report's optimize table, ","-joined. */
static void table_passes(const char *report, char *buf, size_t size)
{
    buf[0] = 0;
    const char *t = strstr(report, "stage optimize: ");
    const char *end = t ? strstr(t, "\n  total ") : NULL;
    for (const char *l = t ? strstr(t, "-----\n") : NULL; l && l < end; l = strchr(l, '\n')) {
        l++;
        char name[128];
        if (l < end && sscanf(l, " %127s", name) == 1 && name[0] != '(') {
            size_t len = strlen(buf);
            snprintf(buf + len, size - len, "%s%s,", len ? "" : ",", name);
        }
    }
}

/* ------------------------------------------------------------- --level */

START_TEST(levels)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    const char *out = tk_tpath("o.onnx");
    char names[8192];
    /* exact: no fp pass in the stage (fuse_conv_bn is fp), exact ones stay;
     * the outputs are bit for bit the original's */
    tk_cli_result r = TK_CLI(in, out, "--level", "exact", "-v", "--verify=2");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    table_passes(r.out, names, sizeof names);
    ck_assert_msg(strstr(names, ",eliminate_identity,") && !strstr(names, ",fuse_conv_bn,") &&
                  !strstr(names, ",div_const_to_mul,"), "%s", names);
    ck_assert_msg(strstr(r.out, "max abs 0, max rel 0; ") && strstr(r.out, "OK (and the written file)"), "%.3000s", r.out);
    tk_cli_free(&r);
    /* -O1 is the same */
    r = TK_CLI(in, out, "-O1", "-v");
    char names1[8192];
    table_passes(r.out, names1, sizeof names1);
    ck_assert_str_eq(names1, names);
    tk_cli_free(&r);
    /* fp (-O2) is the default */
    r = TK_CLI(in, out, "-v");
    table_passes(r.out, names, sizeof names);
    ck_assert_msg(strstr(names, ",fuse_conv_bn,"), "%s", names);
    tk_cli_free(&r);
    r = TK_CLI(in, out, "-O2", "-v");
    table_passes(r.out, names1, sizeof names1);
    ck_assert_str_eq(names1, names);
    tk_cli_free(&r);
    /* none (-O0): no pass at all; the model is only loaded, checked, saved */
    r = TK_CLI(in, out, "-O0");
    ck_assert_msg(r.status == 0 && strstr(r.out, ": 0 passes, 0 rewrites, nodes 26 -> 26"), "%s", r.out);
    tk_cli_free(&r);
    ck_assert_uint_eq(saved_nodes(out), saved_nodes(in));
    /* approx (-O3) lets an approx pass run without allow_approximate; fp refuses it */
    r = TK_CLI(in, out, "--passes=resize_to_nearest", "-O3");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    r = TK_CLI(in, out, "--passes=resize_to_nearest", "--level=fp");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "resize_to_nearest changes results by design", "--level approx");
    /* the same as an INI key, per stage */
    FILE *f = fopen(tk_tpath("l.ini"), "w");
    fprintf(f, "[model]\ninput = m.onnx\noutput = o.onnx\n[optimize]\nlevel = exact\n");
    fclose(f);
    r = TK_CLI(tk_tpath("l.ini"), "-v");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    table_passes(r.out, names1, sizeof names1);
    ck_assert_msg(!strstr(names1, ",fuse_conv_bn,") && strstr(names1, ",eliminate_identity,"), "%s", names1);
    tk_cli_free(&r);
    /* errors: a pass named above the level, two levels, an unknown level */
    r = TK_CLI(in, out, "-O1", "--passes=fuse_conv_bn");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "pass fuse_conv_bn is fp, above level exact (-O1)", NULL);
    r = TK_CLI(in, out, "-O1", "--level", "fp");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "-O1 and --level", NULL);
    r = TK_CLI(in, out, "--level", "fast");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--level fast", "none, exact, fp or approx");
    r = TK_CLI(in, out, "-O0", "--passes=eliminate_identity");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "-O0 runs no pass", "--passes");
    r = TK_CLI(tk_tpath("l.ini"), "--set", "optimize.level=slow");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "level: 'slow' is not a level", NULL);
}
END_TEST

/* ------------------------------------------------ --inputs / --outputs */

/* The names of a saved model's graph inputs (or outputs), ","-joined. */
static void io_names(const char *path, int outputs, char *buf, size_t size)
{
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_msg(ph_model_load(path, &m, &err) == 0, "%s: %s", path, err.message);
    ph_graph *g = ph_model_graph(m);
    buf[0] = 0;
    size_t n = outputs ? ph_graph_output_count(g) : ph_graph_input_count(g);
    for (size_t i = 0; i < n; i++) {
        const ph_value *v = outputs ? ph_graph_output(g, i) : ph_graph_input(g, i);
        if (!outputs && ph_value_is_initializer(v))
            continue;
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", len ? "," : "", ph_value_name(v));
    }
    ph_model_free(m);
}

START_TEST(subgraph_extraction)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    const char *out = tk_tpath("cut.onnx");
    size_t in_size;
    char *before = tk_slurp(in, &in_size);
    char names[512];
    /* the second residual block alone: 8 nodes, then optimized and verified */
    tk_cli_result r = TK_CLI(in, out, "--inputs", "/layer1/relu_1/Relu_output_0", "--outputs",
                             "/layer2/Add_output_0", "--verify=2", "-O0");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "cut to 8 of its 26 nodes") && strstr(r.out, "verify: 2 runs"), "%s%s",
                  r.err, r.out);
    tk_cli_free(&r);
    ck_assert_uint_eq(saved_nodes(out), 8);
    io_names(out, 0, names, sizeof names);
    ck_assert_str_eq(names, "/layer1/relu_1/Relu_output_0");
    io_names(out, 1, names, sizeof names);
    ck_assert_str_eq(names, "/layer2/Add_output_0");
    /* the default stages on the cut */
    r = TK_CLI(in, out, "--inputs=/layer1/relu_1/Relu_output_0", "--outputs=/layer2/Add_output_0",
               "--verify=1");
    ck_assert_msg(r.status == 0 && strstr(r.out, "nodes 26 -> 5"), "exit %d: %s%s", r.status, r.out, r.err);
    tk_cli_free(&r);
    /* --outputs alone: the model's own input; two outputs in the order given */
    r = TK_CLI(in, out, "--outputs", "/layer1/Add_output_0,/relu/Relu_output_0", "-O0");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    io_names(out, 0, names, sizeof names);
    ck_assert_str_eq(names, "input");
    io_names(out, 1, names, sizeof names);
    ck_assert_str_eq(names, "/layer1/Add_output_0,/relu/Relu_output_0");
    ck_assert_uint_eq(saved_nodes(out), 11);
    /* --inputs alone: the model's own output */
    r = TK_CLI(in, out, "--inputs", "/layer2/relu_1/Relu_output_0", "-O0");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    io_names(out, 1, names, sizeof names);
    ck_assert_str_eq(names, "logits");
    ck_assert_uint_eq(saved_nodes(out), 5);
    /* values read by If branches count: the Loop and its trip count go */
    const char *cf = model_as("control_flow.onnx", "cf.onnx");
    r = TK_CLI(cf, out, "--outputs", "if_out", "-O0");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    io_names(out, 0, names, sizeof names);
    ck_assert_str_eq(names, "x,flag");
    ck_assert_uint_eq(saved_nodes(out), 3);
    /* errors: nothing written, the input untouched */
    unlink(out);
    r = TK_CLI(in, out, "--inputs", "nosuch", "--outputs", "logits");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "input 'nosuch': no value of that name", NULL);
    r = TK_CLI(in, out, "--outputs", "logits,logitz");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "output 'logitz': no value of that name", NULL);
    r = TK_CLI(in, out, "--inputs", "conv1.weight", "--outputs", "logits");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "'conv1.weight' is an initializer", NULL);
    /* a cut that leaves a graph input needed but not given */
    r = TK_CLI(in, out, "--inputs", "/layer2/relu/Relu_output_0", "--outputs", "/layer2/Add_output_0");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "the cut leaves 'input' unreachable", "add it to them");
    /* an input no output depends on */
    r = TK_CLI(in, out, "--inputs", "/layer1/relu_1/Relu_output_0,input", "--outputs",
               "/layer2/Add_output_0");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "input 'input' is unreachable", "none of the outputs");
    r = TK_CLI(in, out, "--outputs", "logits,logits");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "'logits' is given twice", NULL);
    r = TK_CLI(cf, out, "--outputs", "then_out");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "'then_out': a value inside an If/Loop/Scan body", NULL);
    r = TK_CLI(in, out, "--outputs=,");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--outputs: no value named", NULL);
    ck_assert(!tk_exists(out));
    size_t after_size;
    char *after = tk_slurp(in, &after_size);
    ck_assert(after_size == in_size && memcmp(before, after, in_size) == 0);
    free(before);
    free(after);
}
END_TEST

/* ----------------------------------------------------- misuse messages */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}


START_TEST(misuse_messages)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    const char *out = tk_tpath("o.onnx");
    const char *empty = tk_tpath("empty.onnx"), *lfs = tk_tpath("lfs.onnx"), *ini = tk_tpath("run.ini");
    write_text(empty, "");
    write_text(lfs, "version https://git-lfs.github.com/spec/v1\n"
                    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
                    "size 2239180\n");
    write_text(ini, "; a run\n[model]\ninput = m.onnx\noutput = o.onnx\n");
    /* models told by content, and what they are said to be (exit 3) */
    tk_cli_result r = TK_CLI(empty, out);
    tk_expect_failure(&r, HOST_EXIT_MODEL, "empty.onnx: an empty file, not an ONNX model", NULL);
    r = TK_CLI(lfs, out);
    tk_expect_failure(&r, HOST_EXIT_MODEL, "lfs.onnx: a git-lfs pointer", "git lfs pull");
    r = TK_CLI("-i", lfs, "-o", out);
    tk_expect_failure(&r, HOST_EXIT_MODEL, "a git-lfs pointer", NULL);
    r = TK_CLI("-i", ini, "-o", out);
    tk_expect_failure(&r, HOST_EXIT_MODEL, "run.ini: an INI file, not an ONNX model", "-i");
    /* a model where a custom_config belongs */
    r = TK_CLI(in, out, "--set", "optimize.custom_config=" PH_SOURCE_DIR "/models/cnn_small.onnx");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "is not an INI file", "binary data");
    /* --list-passes reads no model */
    r = TK_CLI("--list-passes", in);
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--list-passes", "reads no model");
    /* --shapes runs no passes */
    r = TK_CLI("--shapes", in, out, "--passes=eliminate_identity");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--shapes runs no passes", "--passes");
    r = TK_CLI("--shapes", in, out, "--skip=eliminate_identity");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--shapes runs no passes", "--skip");
    r = TK_CLI("--shapes", in, out, "--no-fold");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--shapes runs no passes", "--no-fold");
    /* a misspelled option gets the close names */
    r = TK_CLI(in, out, "--verfy");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "unknown option --verfy", "did you mean --verify?");
    r = TK_CLI(in, out, "--pases=eliminate_identity");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "unknown option --pases", "--passes");
    r = TK_CLI(in, out, "--no-frok");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "unknown option --no-frok", "--no-fork");
    r = TK_CLI(in, out, "--zzzzzzzz");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "unknown option --zzzzzzzz", NULL);
    ck_assert(!tk_exists(out));
    /* --passes accumulates as --skip does */
    r = TK_CLI(in, out, "--passes=eliminate_identity", "--passes", "fuse_conv_bn", "-v");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "  eliminate_identity ") && strstr(r.out, "  fuse_conv_bn ") &&
                  strstr(r.out, ": 2 passes,"), "%s", r.out);
    tk_cli_free(&r);
    /* stdin: errors say <stdin>, not a temporary file */
    ck_assert_int_eq(tk_sh("'%s/bin/passhost' - '%s' < '%s' 2> '%s'", PH_BUILD_DIR, out, lfs,
                        tk_tpath("err.txt")), HOST_EXIT_MODEL);
    char *err = tk_slurp(tk_tpath("err.txt"), NULL);
    ck_assert_msg(err && strstr(err, "passhost: <stdin>: a git-lfs pointer") && !strstr(err, "/tmp/"),
                  "%s", err);
    free(err);
    write_text(tk_tpath("junk.bin"), "\x08\x07\x12\xff\xff\xff\xff\x0f");
    ck_assert_int_eq(tk_sh("'%s/bin/passhost' - '%s' < '%s' 2> '%s'", PH_BUILD_DIR, out,
                        tk_tpath("junk.bin"), tk_tpath("err.txt")), HOST_EXIT_MODEL);
    err = tk_slurp(tk_tpath("err.txt"), NULL);
    ck_assert_msg(err && strstr(err, "<stdin>") && !strstr(err, "stdin.onnx"), "%s", err);
    free(err);
}
END_TEST

/* ----------------------------------------- --print-changes, unnamed nodes */

/* x -> Neg -> Identity -> Transpose(identity perm) -> y, no node named (as
 * in every model of the ONNX conformance suite). */
static void write_unnamed_model(const char *path)
{
    static const int64_t dims[] = {2, 3};
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    ph_value *v = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, dims);
    const char *ops[] = {"Neg", "Identity", "Transpose"};
    for (int i = 0; i < 3; i++) {
        ph_node *n = ph_node_create(g, NULL, ops[i], 1, &v, 1);
        ck_assert_ptr_nonnull(n);
        if (i == 2)
            ck_assert_int_eq(ph_node_set_attr_ints(n, "perm", 2, (const int64_t[]){0, 1}), 0);
        ck_assert_int_eq(ph_node_set_name(n, ""), 0);
        v = ph_node_output(n, 0);
    }
    ck_assert_int_eq(ph_graph_add_output(g, v), 0);
    ph_error err = {0};
    ck_assert_msg(ph_model_save(m, path, &err) == 0, "%s", err.message);
    ph_model_free(m);
}

START_TEST(print_changes_names_unnamed_nodes)
{
    const char *in = tk_tpath("unnamed.onnx");
    write_unnamed_model(in);
    tk_cli_result r = TK_CLI(in, tk_tpath("o.onnx"), "--print-changes", "-q");
    ck_assert_msg(r.status == 0, "%s", r.err);
    /* by op and index in the file's node list, never "nothing -> nothing" */
    ck_assert_msg(strstr(r.err, "[eliminate_identity #1]: Identity#1 -> nothing") &&
                  strstr(r.err, "[eliminate_nop_transpose #1]: Transpose#2 -> nothing") &&
                  !strstr(r.err, "nothing -> nothing"), "%s", r.err);
    tk_cli_free(&r);
}
END_TEST

/* ---------------------------------------------------------- --trace-rule */

/* Entries of folder dir, "." and ".." left out. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* a [2,3] x b [3,4] + c [4] through three Gemms: beta absent, 0.5, 2. */
static void write_gemm_model(const char *path)
{
    static const int64_t da[] = {2, 3}, db[] = {3, 4}, dc[] = {4};
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    ph_value *a = ph_graph_add_input(g, "a", PH_DT_FLOAT, 2, da);
    float bv[12] = {0}, cv[4] = {0};
    ph_value *b = ph_graph_add_initializer(g, "b", ph_tensor_new(PH_DT_FLOAT, 2, db, bv));
    ph_value *c = ph_graph_add_initializer(g, "c", ph_tensor_new(PH_DT_FLOAT, 1, dc, cv));
    const float betas[] = {-1, 0.5f, 2.0f};
    const char *names[] = {"gemm_default", "gemm_half", "gemm_two"};
    for (int i = 0; i < 3; i++) {
        ph_value *in[3] = {a, b, c};
        ph_node *n = ph_node_create(g, NULL, "Gemm", 3, in, 1);
        ck_assert_int_eq(ph_node_set_name(n, names[i]), 0);
        if (betas[i] > 0)
            ck_assert_int_eq(ph_node_set_attr_float(n, "beta", betas[i]), 0);
        ck_assert_int_eq(ph_graph_add_output(g, ph_node_output(n, 0)), 0);
    }
    ph_error err = {0};
    ck_assert_msg(ph_model_save(m, path, &err) == 0, "%s", err.message);
    ph_model_free(m);
}

START_TEST(trace_rule_says_why)
{
    static const char *const plugins[] = {"tp_rule_beta", NULL};
    const char *plugdir = tk_tmpdir_plugins(plugins);
    const char *in = tk_tpath("gemms.onnx");
    write_gemm_model(in);
    tk_cli_result r = TK_CLI("--trace-rule", "tp_rule_beta:half_beta", in, "--plugin-dir", plugdir);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "rule half_beta: y = Gemm(a, b, c) {beta=0.5}") &&
                  strstr(r.out, "Gemm 'gemm_default': no match: statement 1 (Gemm): attribute beta is "
                                "absent; the pattern wants beta = 0.5") &&
                  strstr(r.out, "write beta ?= 0.5") &&
                  strstr(r.out, "Gemm 'gemm_half': match\n") &&
                  strstr(r.out, "Gemm 'gemm_two': no match: statement 1 (Gemm): attribute beta is 2; "
                                "the pattern wants 0.5") &&
                  strstr(r.out, "3 candidates, 1 matched") && !strstr(r.out, "rule checked"),
                  "%s", r.out);
    tk_cli_free(&r);
    /* every rule by default; a rule by number; the check's verdict */
    r = TK_CLI("--trace-rule", "tp_rule_beta:2", in, "--plugin-dir", plugdir);
    ck_assert_msg(r.status == 0 && strstr(r.out, "rule checked: ") && !strstr(r.out, "half_beta") &&
                  strstr(r.out, "3 candidates, 3 matched, 3 accepted by the rule's check\n"), "%s", r.out);
    tk_cli_free(&r);
    r = TK_CLI("--trace-rule", "tp_rule_beta", in, "--plugin-dir", plugdir);
    ck_assert_msg(r.status == 0 && strstr(r.out, "rule half_beta") && strstr(r.out, "rule checked"), "%s",
                  r.out);
    tk_cli_free(&r);
    /* nothing is written; errors */
    ck_assert_int_eq(entries(tmpdir), 2); /* the model and the plugin folder */
    r = TK_CLI("--trace-rule", "tp_rule_bet", in, "--plugin-dir", plugdir);
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "unknown pass 'tp_rule_bet'", "did you mean 'tp_rule_beta'");
    r = TK_CLI("--trace-rule", "tp_rule_beta:zero_beta", in, "--plugin-dir", plugdir);
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "no rule 'zero_beta'", "1 half_beta, 2 checked");
    r = TK_CLI("--trace-rule", "constant_folding", in);
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "constant_folding is not written as rules", NULL);
    r = TK_CLI("--trace-rule", "eliminate_identity", in, "--bisect");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--trace-rule only reads the model", "--bisect");
    r = TK_CLI("--trace-rule", "eliminate_identity");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "no input model", NULL);
}
END_TEST

/* ------------------------------------------------ progress with --verify */

START_TEST(progress_phases_with_verify)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    ck_assert_int_eq(tk_sh("script -qec \"'%s/bin/passhost' '%s' '%s' --verify=2 > /dev/null\" /dev/null "
                        "> '%s'", PH_BUILD_DIR, in, tk_tpath("o.onnx"), tk_tpath("tty.txt")), 0);
    char *tty = tk_slurp(tk_tpath("tty.txt"), NULL);
    ck_assert_ptr_nonnull(tty);
    /* each phase with its runs, in order, and the line erased at the end */
    const char *a = strstr(tty, "\rpasshost: verify: evaluating the original, run 1 of 2");
    const char *b = strstr(tty, "\rpasshost: verify: evaluating the original, run 2 of 2");
    const char *c = strstr(tty, "\rpasshost: verify: evaluating the result, run 1 of 2");
    const char *d = strstr(tty, "\rpasshost: verify: evaluating the result, run 2 of 2");
    const char *e = strstr(tty, "\rpasshost: verify: checking the written file, run 2 of 2");
    ck_assert_msg(a && b && c && d && e && a < b && b < c && c < d && d < e, "%s", tty);
    ck_assert_msg(strstr(e, "\r\033[K") != NULL, "the line is not erased: %s", e);
    free(tty);
    /* not a terminal, or -q: no line */
    tk_cli_result r = TK_CLI(in, tk_tpath("o.onnx"), "--verify=1");
    ck_assert_msg(r.status == 0 && !strstr(r.err, "evaluating"), "%s", r.err);
    tk_cli_free(&r);
    ck_assert_int_eq(tk_sh("script -qec \"'%s/bin/passhost' '%s' '%s' --verify=2 -q\" /dev/null > '%s'",
                        PH_BUILD_DIR, in, tk_tpath("o.onnx"), tk_tpath("tty.txt")), 0);
    tty = tk_slurp(tk_tpath("tty.txt"), NULL);
    ck_assert_msg(tty && !strstr(tty, "passhost:"), "%s", tty);
    free(tty);
}
END_TEST

/* --------------------------------------------------- long op type names */

START_TEST(long_op_names_not_cut)
{
    static const int64_t dims[] = {2, 8};
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, dims);
    ck_assert_int_eq(ph_model_set_opset(m, "com.microsoft", 1), 0);
    ph_value *in[2] = {x, x};
    ph_node *n = ph_node_create(g, NULL, "SkipLayerNormalization", 2, in, 1);
    ck_assert_int_eq(ph_node_set_domain(n, "com.microsoft"), 0);
    ck_assert_int_eq(ph_graph_add_output(g, ph_node_output(n, 0)), 0);
    ph_error err = {0};
    const char *path = tk_tpath("skip.onnx");
    ck_assert_msg(ph_model_save(m, path, &err) == 0, "%s", err.message);
    ph_model_free(m);
    tk_cli_result r = TK_CLI("--inspect", path);
    ck_assert_msg(r.status == 0 && strstr(r.out, "com.microsoft.SkipLayerNormalization  "), "%s", r.out);
    tk_cli_free(&r);
    setenv("COLUMNS", "100", 1);
    r = TK_CLI("--inspect", path, path);
    unsetenv("COLUMNS");
    ck_assert_msg(r.status == 0 && strstr(r.out, "com.microsoft.SkipLayerNormalization  ") &&
                  !strstr(r.out, "SkipLayerNo~"), "%s", r.out);
    tk_cli_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cli_everyday");
    TCase *tc = tcase_create("binary");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, levels);
    tcase_add_test(tc, subgraph_extraction);
    tcase_add_test(tc, misuse_messages);
    tcase_add_test(tc, progress_phases_with_verify);
    tcase_add_test(tc, print_changes_names_unnamed_nodes);
    tcase_add_test(tc, trace_rule_says_why);
    tcase_add_test(tc, long_op_names_not_cut);
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
