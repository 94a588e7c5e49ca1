/* tests/test_cli_conventions.c - the command-line conventions users bring
 * from onnxsim, OnnxSlim and LLVM opt, through the built binary:
 * `passhost IN.onnx OUT.onnx` (models told from INI files by content),
 * --passes (exact order, close matches for a typo), --skip, --input-shape
 * (and --overwrite-input-shape), --no-fold, --version, -o - and -i -,
 * --inspect and its terminal width, the report's tables and verify
 * verdicts, the progress line on a terminal, a foreign .so in a plugin
 * folder, and the report-file options' errors; each error with its exit
 * code and one-line message. */
#include <check.h>
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
#include "passhost/plugin.h"
#include "tmpdir.h"

static const char *tmpdir;
static const char *plugdir;
static char bin[600];

static const char *const test_plugins[] = {"tp_good", "tp_one_step", "tp_once", "tp_slow", NULL};

static void setup(void)
{
    tmpdir = tk_tmpdir_make("conv");
    plugdir = tk_tmpdir_plugins(test_plugins);
    unsetenv("PASSHOST_PLUGIN_PATH");
    unsetenv("COLUMNS");
    snprintf(bin, sizeof bin, "%s/bin/passhost", PH_BUILD_DIR);
}

static void teardown(void)
{
    tk_tmpdir_remove();
}

/* A copy of a bundled model in tmpdir, under the name `as`. */
static const char *model_as(const char *name, const char *as)
{
    char from[600];
    snprintf(from, sizeof from, "%s/models/%s", PH_SOURCE_DIR, name);
    const char *to = tk_tpath(as);
    tk_copy_file(from, to);
    return to;
}


static int same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = tk_slurp(a, &la), *y = tk_slurp(b, &lb);
    int same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* The line of text that starts with prefix (after blanks), or NULL. */
static const char *line_with(const char *text, const char *prefix)
{
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *p = l;
        while (*p == ' ')
            p++;
        if (strncmp(p, prefix, strlen(prefix)) == 0)
            return p;
    }
    return NULL;
}

/* ------------------------------------------------------ positional models */

START_TEST(positional_models_by_content)
{
    /* a model named .ini and an INI file named .onnx: the content decides */
    const char *in = model_as("cnn_small.onnx", "model.ini");
    tk_cli_result r = TK_CLI(in, tk_tpath("out.onnx"), "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert(tk_exists(tk_tpath("out.onnx")));
    tk_cli_free(&r);
    FILE *f = fopen(tk_tpath("run.onnx"), "w");
    fprintf(f, "[model]\ninput = model.ini\noutput = viaini.onnx\n");
    fclose(f);
    r = TK_CLI(tk_tpath("run.onnx"), "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert(tk_exists(tk_tpath("viaini.onnx")));
    tk_cli_free(&r);
    /* the same result both ways */
    ck_assert(same_file(tk_tpath("out.onnx"), tk_tpath("viaini.onnx")));
    /* -o with one positional model */
    r = TK_CLI(in, "-o", tk_tpath("out2.onnx"), "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    /* a damaged model as the first of two is a model that does not load (3) */
    size_t len;
    char *bytes = tk_slurp(in, &len);
    f = fopen(tk_tpath("half.onnx"), "wb");
    fwrite(bytes, 1, len / 2, f);
    fclose(f);
    free(bytes);
    r = TK_CLI(tk_tpath("half.onnx"), tk_tpath("o.onnx"));
    tk_expect_failure(&r, HOST_EXIT_MODEL, "half.onnx", NULL);
    ck_assert(!tk_exists(tk_tpath("o.onnx")));
}
END_TEST

START_TEST(positional_errors)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    FILE *f = fopen(tk_tpath("c.ini"), "w");
    fprintf(f, "[model]\ninput = m.onnx\noutput = x.onnx\n");
    fclose(f);
    /* one model and no output */
    tk_cli_result r = TK_CLI(in);
    tk_expect_failure(&r, HOST_EXIT_USAGE, "no output model", "OUT.onnx");
    /* the input twice, the output twice */
    r = TK_CLI(in, tk_tpath("o.onnx"), "-i", in);
    tk_expect_failure(&r, HOST_EXIT_USAGE, "input model is given twice", NULL);
    r = TK_CLI(in, tk_tpath("o.onnx"), "-o", tk_tpath("p.onnx"));
    tk_expect_failure(&r, HOST_EXIT_USAGE, "output model is given twice", NULL);
    /* three positional arguments */
    r = TK_CLI(in, tk_tpath("o.onnx"), tk_tpath("p.onnx"));
    tk_expect_failure(&r, HOST_EXIT_USAGE, "too many arguments", NULL);
    /* an INI file and a model: the INI form mixed with the positional one */
    r = TK_CLI(tk_tpath("c.ini"), in);
    tk_expect_failure(&r, HOST_EXIT_USAGE, "c.ini is a config file", "-i/-o");
    /* two INI files */
    r = TK_CLI(tk_tpath("c.ini"), tk_tpath("c.ini"));
    tk_expect_failure(&r, HOST_EXIT_USAGE, "more than one config file", NULL);
    /* the first of two does not exist */
    r = TK_CLI(tk_tpath("nothere.onnx"), tk_tpath("o.onnx"));
    tk_expect_failure(&r, HOST_EXIT_USAGE, "nothere.onnx does not exist", NULL);
    ck_assert(!tk_exists(tk_tpath("o.onnx")) && !tk_exists(tk_tpath("x.onnx")));
}
END_TEST

/* ------------------------------------------------------------- --passes */

START_TEST(passes_run_in_the_given_order)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    /* catalogue order is tp_good, tp_once, tp_one_step (file names) */
    tk_cli_result r = TK_CLI(in, tk_tpath("o.onnx"), "--plugin-dir", plugdir,
                             "--passes=tp_one_step,tp_good", "--set", "adapt.no_integral=true", "-v");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    const char *a = strstr(r.out, "  tp_one_step "), *b = strstr(r.out, "  tp_good ");
    ck_assert_msg(a && b && a < b, "%s", r.out);
    ck_assert_ptr_null(strstr(r.out, "eliminate_identity")); /* no default pass */
    ck_assert_msg(strstr(r.out, "2 passes, 2 rewrites"), "%s", r.out);
    tk_cli_free(&r);
    /* and the other way round */
    r = TK_CLI(in, tk_tpath("o.onnx"), "--plugin-dir", plugdir, "--passes", "tp_good,tp_one_step",
               "--set", "adapt.no_integral=true", "-v");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    a = strstr(r.out, "  tp_one_step "), b = strstr(r.out, "  tp_good ");
    ck_assert_msg(a && b && b < a, "%s", r.out);
    tk_cli_free(&r);
    /* the same through the INI keys --passes stands for */
    FILE *f = fopen(tk_tpath("order.ini"), "w");
    fprintf(f, "[model]\ninput = m.onnx\noutput = o.onnx\nplugin_dir = plugins\n"
               "[optimize]\nno_integral = true\nkeep_order = true\npass_on = tp_one_step, tp_good\n"
               "[adapt]\nno_integral = true\n");
    fclose(f);
    r = TK_CLI(tk_tpath("order.ini"), "-v");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    a = strstr(r.out, "  tp_one_step "), b = strstr(r.out, "  tp_good ");
    ck_assert_msg(a && b && a < b, "%s", r.out);
    tk_cli_free(&r);
}
END_TEST

START_TEST(passes_errors)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    const char *out = tk_tpath("o.onnx");
    /* a typo: the close names, nearest first */
    tk_cli_result r = TK_CLI(in, out, "--passes=eliminate_identiy,fuse_conv_bn");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "--passes: unknown pass 'eliminate_identiy'",
                      "did you mean 'eliminate_identity'");
    r = TK_CLI(in, out, "--passes=eliminate_nop_poool");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "'eliminate_nop_pool'", " or ");
    r = TK_CLI(in, out, "--passes=zzzzzzzzzzzz");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "unknown pass 'zzzzzzzzzzzz'", "--list-passes");
    /* twice in the list */
    r = TK_CLI(in, out, "--passes=eliminate_identity,fuse_conv_bn,eliminate_identity");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "named twice", "eliminate_identity");
    /* empty */
    r = TK_CLI(in, out, "--passes=,");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--passes", NULL);
    /* keep_order without no_integral */
    r = TK_CLI(in, out, "--set", "optimize.keep_order=true");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "keep_order", "no_integral");
    ck_assert(!tk_exists(out));
}
END_TEST

/* --------------------------------------------------- --skip and --no-fold */

START_TEST(skip_and_no_fold)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    const char *out = tk_tpath("o.onnx");
    tk_cli_result r = TK_CLI(in, out, "-v");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(line_with(r.out, "eliminate_identity "));
    ck_assert_ptr_nonnull(line_with(r.out, "constant_folding "));
    tk_cli_free(&r);
    r = TK_CLI(in, out, "--skip=eliminate_identity", "--skip", "fuse_conv_bn,eliminate_nop_pool", "-v");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_null(line_with(r.out, "eliminate_identity "));
    ck_assert_ptr_null(line_with(r.out, "fuse_conv_bn "));
    ck_assert_ptr_nonnull(line_with(r.out, "constant_folding "));
    tk_cli_free(&r);
    r = TK_CLI(in, out, "--no-fold", "-v");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_null(line_with(r.out, "constant_folding "));
    ck_assert_ptr_null(line_with(r.out, "fold_constant_inputs "));
    ck_assert_ptr_nonnull(line_with(r.out, "eliminate_identity "));
    tk_cli_free(&r);
    /* --no-fold where the folding passes are not loaded: nothing to switch off */
    r = TK_CLI(in, out, "--no-fold", "--plugin-dir", plugdir, "--passes=tp_good");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    /* errors */
    r = TK_CLI(in, out, "--skip=eliminate_identiti");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "--skip: unknown pass", "eliminate_identity");
    r = TK_CLI(in, out, "--no-fold", "--passes=constant_folding");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "constant_folding", "--no-fold");
    r = TK_CLI(in, out, "--passes=fuse_conv_bn", "--skip=fuse_conv_bn");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "fuse_conv_bn", "pass_off");
}
END_TEST

/* -------------------------------------------------------- --input-shape */

START_TEST(input_shape_option)
{
    const char *in = model_as("transformer_block.onnx", "t.onnx");
    const char *out = tk_tpath("o.onnx");
    /* onnxsim's syntax, its alias, and the dims alone for a one-input model */
    const char *forms[][2] = {{"--input-shape", "tokens:2,16,64"},
                              {"--overwrite-input-shape", "tokens:2,16,64"},
                              {"--input-shape", "tokens:2x16x64"},
                              {"--input-shape", "2,16,64"}};
    for (size_t i = 0; i < 4; i++) {
        tk_cli_result r = TK_CLI(in, out, forms[i][0], forms[i][1], "-q");
        ck_assert_msg(r.status == 0, "%s %s: exit %d: %s", forms[i][0], forms[i][1], r.status, r.err);
        tk_cli_free(&r);
        ph_model *m;
        ph_error e = {0};
        ck_assert_int_eq(ph_model_load(out, &m, &e), 0);
        const ph_value *v = ph_graph_input(ph_model_graph(m), 0);
        ck_assert_int_eq(ph_value_dim(v, 0), 2);
        ck_assert_int_eq(ph_value_dim(v, 1), 16);
        ph_model_free(m);
        remove(out);
    }
    /* a name the model does not have: its real inputs are listed */
    tk_cli_result r = TK_CLI(in, out, "--input-shape", "input:1,16,64");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "no input 'input'", "its inputs: tokens float[batch,seq,64]");
    /* a dim that contradicts the model: a configuration error */
    r = TK_CLI(in, out, "--input-shape", "tokens:1,16,65");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "dim 2 is 64", "65");
    r = TK_CLI(in, out, "--input-shape", "tokens:1,16");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "rank 3", NULL);
    /* malformed */
    const char *bad[] = {"tokens:1,q,64", "tokens:", "tokens:1,,2", ":1,2", "tokens:1,2,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = TK_CLI(in, out, "--input-shape", bad[i]);
        tk_expect_failure(&r, HOST_EXIT_CONFIG, "--input-shape", bad[i]);
    }
    /* given twice */
    r = TK_CLI(in, out, "--input-shape", "tokens:1,16,64", "--input-shape", "tokens:2,16,64");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "'tokens' given twice", NULL);
    ck_assert(!tk_exists(out));
}
END_TEST

START_TEST(input_shape_several_after_one_option)
{
    /* onnxsim: --overwrite-input-shape a:1,2 b:3,4; the words after the
     * option that look like NAME:DIMS are shapes too */
    const char *in = model_as("transformer_block.onnx", "t.onnx");
    tk_cli_result r = TK_CLI(in, tk_tpath("o.onnx"), "--overwrite-input-shape", "tokens:1,16,64",
                             "other:1,2");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "no input 'other'", NULL);
}
END_TEST

/* ---------------------------------------------------------- --version */

START_TEST(version_names_the_abi)
{
    tk_cli_result r = TK_CLI("--version");
    ck_assert_int_eq(r.status, 0);
    char want[64];
    snprintf(want, sizeof want, "plugin ABI %d.%d", PH_ABI_MAJOR, PH_ABI_MINOR);
    ck_assert_msg(strstr(r.out, "passhost ") && strstr(r.out, want), "%s", r.out);
    tk_cli_free(&r);
    r = TK_CLI("--help");
    ck_assert_int_eq(r.status, 0);
    const char *opts[] = {"--passes", "--skip", "--input-shape", "--overwrite-input-shape",
                          "--no-fold", "--inspect", "--report-json", "--report-html",
                          "IN.onnx OUT.onnx"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        ck_assert_msg(strstr(r.out, opts[i]) != NULL, "%s not in --help", opts[i]);
    tk_cli_free(&r);
}
END_TEST

/* ------------------------------------------------------------ streams */

START_TEST(streams)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    const char *t = tmpdir;
    /* the model to a file, then the same to stdout */
    tk_cli_result r = TK_CLI(in, tk_tpath("file.onnx"), "-q");
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    ck_assert_int_eq(tk_sh("'%s' '%s' - > '%s/piped.onnx' 2> '%s/err.txt'", bin, in, t, t), 0);
    ck_assert(same_file(tk_tpath("file.onnx"), tk_tpath("piped.onnx")));
    /* the report went to stderr */
    char *err = tk_slurp(tk_tpath("err.txt"), NULL);
    ck_assert_msg(strstr(err, "stage optimize") && strstr(err, "-> -:"), "%s", err);
    free(err);
    /* and from stdin */
    ck_assert_int_eq(tk_sh("'%s' -i - -o '%s/fromstdin.onnx' -q < '%s'", bin, t, in), 0);
    ck_assert(same_file(tk_tpath("file.onnx"), tk_tpath("fromstdin.onnx")));
    ck_assert_int_eq(tk_sh("'%s' - - -q < '%s' > '%s/both.onnx'", bin, in, t), 0);
    ck_assert(same_file(tk_tpath("file.onnx"), tk_tpath("both.onnx")));
    /* not a model on stdin: exit 3, nothing on stdout */
    ck_assert_int_eq(tk_sh("echo hello | '%s' - - > '%s/none.onnx' 2>/dev/null", bin, t), HOST_EXIT_MODEL);
    size_t len = 1;
    free(tk_slurp(tk_tpath("none.onnx"), &len));
    ck_assert_uint_eq(len, 0);
    /* a failed run writes nothing to stdout either */
    ck_assert_int_eq(tk_sh("'%s' '%s' - --passes=nosuch > '%s/none2.onnx' 2>/dev/null", bin, in, t),
                     HOST_EXIT_CONFIG);
    free(tk_slurp(tk_tpath("none2.onnx"), &len));
    ck_assert_uint_eq(len, 0);
    /* stdout a terminal: refused */
    ck_assert_int_eq(tk_sh("script -qec \"'%s' '%s' -o -\" /dev/null > '%s/tty.txt' 2>&1", bin, in, t),
                     HOST_EXIT_USAGE);
    char *tty = tk_slurp(tk_tpath("tty.txt"), NULL);
    ck_assert_msg(strstr(tty, "stdout is a terminal"), "%s", tty);
    free(tty);
    /* only one thing can go to stdout */
    r = TK_CLI(in, "-", "--report-json", "-");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "only one of", NULL);
}
END_TEST

/* ------------------------------------------------------------ --inspect */

START_TEST(inspect_table)
{
    const char *a = model_as("cnn_small.onnx", "a.onnx");
    const char *b = model_as("transformer_block.onnx", "b.onnx");
    tk_cli_result r = TK_CLI("--inspect", a, b);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    const char *must[] = {"a.onnx", "b.onnx", "file size", "opsets", "ai.onnx 13", "inputs",
                          "input float[batch,3,64,64]", "tokens float[batch,seq,64]", "outputs",
                          "present_k", "nodes", "initializers", "op types", "BatchNormalization"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        ck_assert_msg(strstr(r.out, must[i]) != NULL, "'%s' not in:\n%s", must[i], r.out);
    /* side by side: the node counts on one line */
    const char *nodes = line_with(r.out, "nodes ");
    ck_assert_msg(nodes && strstr(nodes, "26") && strstr(nodes, "122") &&
                  strstr(nodes, "122") < strchr(nodes, '\n'), "%s", r.out);
    /* plain ASCII: not a terminal */
    for (const unsigned char *c = (const unsigned char *)r.out; *c; c++)
        ck_assert_msg(*c < 0x80 && *c != 0x1b, "not plain ASCII: %s", r.out);
    tk_cli_free(&r);
    /* COLUMNS bounds the width */
    setenv("COLUMNS", "60", 1);
    r = TK_CLI("--inspect", a, b);
    unsetenv("COLUMNS");
    ck_assert_msg(r.status == 0, "%s", r.err);
    for (const char *l = r.out; *l;) {
        const char *nl = strchr(l, '\n');
        ck_assert_msg(nl && nl - l <= 60, "line longer than 60: %.*s", (int)(nl ? nl - l : 80), l);
        l = nl + 1;
    }
    tk_cli_free(&r);
    /* on a terminal: its width, box rules */
    ck_assert_int_eq(tk_sh("COLUMNS=50 script -qec \"stty cols 50; '%s' --inspect '%s' '%s'\" /dev/null "
                        "> '%s/tty.txt'", bin, a, b, tmpdir), 0);
    char *tty = tk_slurp(tk_tpath("tty.txt"), NULL);
    ck_assert_msg(strstr(tty, "\xe2\x94\x80") != NULL, "no box rule on a terminal: %s", tty);
    free(tty);
    /* errors */
    r = TK_CLI("--inspect");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--inspect", NULL);
    FILE *f = fopen(tk_tpath("text.onnx"), "w");
    fputs("not a model\n", f);
    fclose(f);
    r = TK_CLI("--inspect", a, tk_tpath("text.onnx"));
    tk_expect_failure(&r, HOST_EXIT_MODEL, "text.onnx", NULL);
    r = TK_CLI("--inspect", a, "-o", tk_tpath("x.onnx"));
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--inspect", "-o");
}
END_TEST

/* ----------------------------------------------------- the run's report */

START_TEST(report_tables_and_verdicts)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    tk_cli_result r = TK_CLI(in, tk_tpath("o.onnx"), "--verify=2", "--verify-each", "-v");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    /* -v: the per-pass table says what its columns mean */
    ck_assert_msg(strstr(r.out, "node change") && strstr(r.out, "(checks between passes)") &&
                  strstr(r.out, "nodes added minus removed"), "%s", r.out);
    /* a pass that made no rewrite changed no node */
    const char *fold = line_with(r.out, "constant_folding ");
    ck_assert_ptr_nonnull(fold);
    ck_assert_msg(strstr(fold, " 0\n") == strchr(fold, '\n') - 2, "%.120s", fold);
    /* the input/output table after the run */
    const char *nodes = line_with(r.out, "nodes ");
    ck_assert_msg(nodes && strstr(nodes, "26") && strstr(nodes, "17 (-9)"), "%s", r.out);
    /* verdicts after the tables, the summary line last */
    const char *v = strstr(r.out, "verify: 2 runs, 1 output, max abs ");
    const char *ve = strstr(r.out, "verify-each: ");
    const char *last = strstr(r.out, "passhost: ");
    ck_assert_msg(v && ve && last && v > nodes && ve > v && last > ve, "%s", r.out);
    ck_assert_msg(strstr(v, ": OK (and the written file)\n") != NULL, "%s", v);
    ck_assert_msg(strstr(ve, "structure and outputs (2 runs") != NULL, "%s", ve);
    tk_cli_free(&r);
    /* the default: a few lines: each stage with the passes that changed the
     * graph (not the others), the sizes, the verdicts, the summary line */
    r = TK_CLI(in, tk_tpath("o.onnx"), "--verify=2", "--verify-each");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(tk_line_count(r.out) <= 8, "%s", r.out);
    const char *st = strstr(r.out, "stage optimize: "), *changed = strstr(r.out, " passes changed it");
    const char *size = strstr(r.out, "\nsize "), *verdict = strstr(r.out, "\nverify: 2 runs");
    ck_assert_msg(st == r.out && changed && size && verdict && size < verdict, "%s", r.out);
    ck_assert_msg(strstr(r.out, "eliminate_identity 2 (-2 nodes)"), "%s", r.out);
    ck_assert_msg(!strstr(r.out, "eliminate_nop_pad") && !strstr(r.out, "node change"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "initializers ") && strstr(r.out, " -> "), "%s", r.out);
    last = strrchr(r.out, '\n');
    while (last > r.out && last[-1] != '\n')
        last--;
    ck_assert_msg(strncmp(last, "passhost: ", 10) == 0, "%s", r.out);
    tk_cli_free(&r);
    /* -q: errors only; nothing at all on success */
    r = TK_CLI(in, tk_tpath("o.onnx"), "--verify=2", "--verify-each", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "");
    tk_cli_free(&r);
    /* -q and -v contradict */
    r = TK_CLI(in, tk_tpath("o.onnx"), "-q", "-v");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "-q and -v", NULL);
    /* no table with -q and no verification */
    r = TK_CLI(in, tk_tpath("o.onnx"), "-q");
    ck_assert_str_eq(r.out, "");
    tk_cli_free(&r);
}
END_TEST

START_TEST(progress_line_on_a_terminal)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    /* one call of 1.1 s: over a second, so the line shows on a terminal */
    ck_assert_int_eq(tk_sh("script -qec \"'%s' '%s' '%s/o.onnx' --plugin-dir '%s' --passes=tp_slow "
                        "--set adapt.no_integral=true > /dev/null\" /dev/null > '%s/tty.txt'",
                        bin, in, tmpdir, plugdir, tmpdir), 0);
    char *tty = tk_slurp(tk_tpath("tty.txt"), NULL);
    ck_assert_msg(strstr(tty, "\rpasshost: optimize round ") && strstr(tty, "tp_slow (1/1), 26 nodes"),
                  "no progress line: %s", tty);
    ck_assert_msg(strstr(tty, "\r\033[K") != NULL, "the line is not erased: %s", tty);
    free(tty);
    /* -q: none */
    ck_assert_int_eq(tk_sh("script -qec \"'%s' '%s' '%s/o.onnx' -q --plugin-dir '%s' --passes=tp_slow "
                        "--set adapt.no_integral=true\" /dev/null > '%s/tty.txt'",
                        bin, in, tmpdir, plugdir, tmpdir), 0);
    tty = tk_slurp(tk_tpath("tty.txt"), NULL);
    ck_assert_msg(strstr(tty, "passhost:") == NULL, "%s", tty);
    free(tty);
    /* not a terminal: none */
    tk_cli_result r = TK_CLI(in, tk_tpath("o.onnx"), "--plugin-dir", plugdir, "--passes=tp_slow",
                             "--set", "adapt.no_integral=true");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_str_eq(r.err, "");
    tk_cli_free(&r);
}
END_TEST

/* ------------------------------------------------------ foreign plugins */

START_TEST(foreign_shared_object_is_skipped)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    char from[600];
    snprintf(from, sizeof from, "%s/test-plugins/tp_no_entry.so", PH_BUILD_DIR);
    tk_copy_file(from, plugdir);
    tk_cli_result r = TK_CLI(in, tk_tpath("o.onnx"), "--plugin-dir", plugdir, "--passes=tp_good");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "warning: skipped (not a pass plugin)") &&
                  strstr(r.err, "tp_no_entry.so"), "%s", r.err);
    tk_cli_free(&r);
    /* asked for by name, it is an error naming the file */
    remove(tk_tpath("o.onnx"));
    r = TK_CLI(in, tk_tpath("o.onnx"), "--plugin-dir", plugdir, "--passes=tp_no_entry", "-q");
    ck_assert_int_eq(r.status, HOST_EXIT_PLUGIN);
    ck_assert_msg(strstr(r.err, "pass tp_no_entry cannot be loaded") && strstr(r.err, "no entry symbol"),
                  "%s", r.err);
    ck_assert(!tk_exists(tk_tpath("o.onnx")));
    tk_cli_free(&r);
}
END_TEST

/* --------------------------------------------------------- report files */

START_TEST(report_file_errors)
{
    const char *in = model_as("cnn_small.onnx", "m.onnx");
    const char *out = tk_tpath("o.onnx");
    tk_cli_result r = TK_CLI(in, out, "--report-json", tk_tpath("no/such/r.json"));
    tk_expect_failure(&r, HOST_EXIT_OUTPUT, "--report-json", "does not exist");
    ck_assert(!tk_exists(out)); /* checked before the run */
    r = TK_CLI(in, out, "--report-html", in);
    tk_expect_failure(&r, HOST_EXIT_OUTPUT, "--report-html", "input model");
    r = TK_CLI(in, out, "--report-html", tmpdir);
    tk_expect_failure(&r, HOST_EXIT_OUTPUT, "is a folder", NULL);
    r = TK_CLI(in, "--bisect", "--report-json", tk_tpath("r.json"));
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--report-json", "--bisect");
    ck_assert(!tk_exists(out));
    /* a failed run still reports, with its exit code and error */
    r = TK_CLI(in, out, "--passes=nosuch_pass", "--report-json", tk_tpath("r.json"));
    ck_assert_int_eq(r.status, HOST_EXIT_CONFIG);
    tk_cli_free(&r);
    char *json = tk_slurp(tk_tpath("r.json"), NULL);
    ck_assert_ptr_nonnull(json);
    ck_assert_msg(strstr(json, "\"exit_code\": 2") && strstr(json, "unknown pass 'nosuch_pass'"), "%s",
                  json);
    free(json);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cli_conventions");
    TCase *tc = tcase_create("binary");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, positional_models_by_content);
    tcase_add_test(tc, positional_errors);
    tcase_add_test(tc, passes_run_in_the_given_order);
    tcase_add_test(tc, passes_errors);
    tcase_add_test(tc, skip_and_no_fold);
    tcase_add_test(tc, input_shape_option);
    tcase_add_test(tc, input_shape_several_after_one_option);
    tcase_add_test(tc, version_names_the_abi);
    tcase_add_test(tc, streams);
    tcase_add_test(tc, inspect_table);
    tcase_add_test(tc, report_tables_and_verdicts);
    tcase_add_test(tc, progress_line_on_a_terminal);
    tcase_add_test(tc, foreign_shared_object_is_skipped);
    tcase_add_test(tc, report_file_errors);
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
