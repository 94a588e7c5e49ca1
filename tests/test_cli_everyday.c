/* tests/test_cli_everyday.c - what a new user meets, through the built
 * binary: an out-of-order node list (sorted, said in one line) and a cycle
 * (refused); --level and -O0..-O3; subgraph extraction with --inputs and
 * --outputs; the misuse messages; --print-changes for unnamed nodes; the
 * progress phases of --verify; rule tracing.  Each error with its exit code
 * and one-line message. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clirun.h"
#include "base/exit.h"
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
    ck_assert_msg(strstr(r.out, "max abs 0, max rel 0: OK"), "%s", r.out);
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

static Suite *suite(void)
{
    Suite *s = suite_create("cli_everyday");
    TCase *tc = tcase_create("binary");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, levels);
    tcase_add_test(tc, subgraph_extraction);
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
