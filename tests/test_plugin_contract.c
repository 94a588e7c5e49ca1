/* tests/test_plugin_contract.c - a plugin is contained from dlopen to
 * dlclose (docs/reliability.md, "The plugin contract"), end to end through
 * the built binary with the test pass tests/plugins/tp_fault.c, which
 * misbehaves as the environment (TP_FAULT) says:
 *   - load: a constructor that loops is stopped at load_timeout_s, one that
 *     crashes is named; exit 9, no output (also for --list-passes and
 *     --trace-rule);
 *   - unload: a destructor that crashes or loops after the output was
 *     saved: exit 9 naming the plugin, and no output (the previous output
 *     untouched; -o -: nothing on stdout);
 *   - children: 50 children, or one that left the process group, are ended
 *     when the worker ends (a WARNING says so), and nothing keeps
 *     passhost's stdout and stderr open after it exits;
 *   - stdout: 288 bytes printed by the pass never reach the model on stdout;
 *   - blame: a pass that corrupts the graph behind the SDK's back, so that
 *     the next pass crashes, is named (and --skip-failing-passes skips it,
 *     not the pass that crashed); a pass that marks a node removed, or
 *     renames an output in place (to another value's name or to a new
 *     one), or moves a node after its readers in the list, and says it
 *     changed nothing, is named by the check before the save; an empty op_type under
 *     --verify is a verification failure naming the pass (exit 5), not an
 *     evaluator error (exit 8).
 * And the run's signals: SIGINT to a run started with SIGINT ignored (a
 * background job) is ignored: exit 0 and the output written, supervised
 * and in one process. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clirun.h"
#include "passhost/host.h"
#include "testkit.h"
#include "tmpdir.h"

static const char *plugdir;
static const char *input;
static char outdir[600], output[700];

static const char *const plugins[] = {"tp_fault", "tp_fault_victim", "tp_slow", NULL};

static void setup(void)
{
    tk_tmpdir_make("plugin_contract");
    plugdir = tk_tmpdir_plugins(plugins);
    unsetenv("PASSHOST_PLUGIN_PATH");
    input = tk_tpath("ids.onnx");
    tk_identity_chain_file(input, 6);
    snprintf(outdir, sizeof outdir, "%s", tk_tpath("out"));
    ck_assert_int_eq(mkdir(outdir, 0777), 0);
    snprintf(output, sizeof output, "%s/out.onnx", outdir);
}

static void teardown(void) { tk_tmpdir_remove(); }

/* passhost IN OUT --plugin-dir P --passes=PASSES [extra...] with
 * TP_FAULT=fault (and TP_FAULT_AT=at when at > 0), on model. */
static tk_cli_result run_fault_on(const char *model, const char *fault, int at, const char *passes,
                                  const char *out, const char *extra1, const char *extra2, const char *extra3)
{
    char f[200], a[64], p[200];
    snprintf(f, sizeof f, "TP_FAULT=%s", fault);
    snprintf(a, sizeof a, "TP_FAULT_AT=%d", at > 0 ? at : 1);
    snprintf(p, sizeof p, "--passes=%s", passes);
    const char *env[] = {f, a, NULL};
    tk_run_opts o = {.env = env};
    const char *args[] = {model, out, "--plugin-dir", plugdir, p, extra1, extra2, extra3, NULL};
    return tk_cli_run_with(&o, args);
}

/* The same on the Identity chain. */
static tk_cli_result run_fault(const char *fault, int at, const char *passes, const char *out,
                               const char *extra1, const char *extra2)
{
    return run_fault_on(input, fault, at, passes, out, extra1, extra2, NULL);
}

/* exit code, the one "passhost: " line holding each fragment; frees r */
static void expect(tk_cli_result *r, int code, const char *frag1, const char *frag2)
{
    ck_assert_msg(r->status == code, "exit %d (signal %d), want %d: %s", r->status, r->term_signal, code, r->err);
    const char *line = strstr(r->err, "passhost: ");
    ck_assert_msg(line, "no passhost line: %s", r->err);
    ck_assert_msg(strstr(line, frag1), "'%s' not in: %s", frag1, r->err);
    if (frag2)
        ck_assert_msg(strstr(line, frag2), "'%s' not in: %s", frag2, r->err);
    tk_cli_free(r);
}

/* ------------------------------------------------------------ load */

START_TEST(constructors_are_supervised)
{
    tk_cli_result r = run_fault("ctor_loop", 0, "tp_fault", output, "--set", "model.load_timeout_s=1");
    ck_assert_msg(r.seconds < 30, "took %.1f s", r.seconds);
    expect(&r, 9, "plugin ", "tp_fault.so ran longer than the 1 s time limit (load_timeout_s)");
    ck_assert_int_eq(tk_dir_entries(outdir), 0);
    r = run_fault("ctor_crash", 0, "tp_fault", output, NULL, NULL);
    expect(&r, 9, "tp_fault.so crashed with SIGSEGV", "while it was loaded (its constructors run in dlopen)");
    ck_assert_int_eq(tk_dir_entries(outdir), 0);
    /* --list-passes loads the plugins under the supervisor too */
    const char *env[] = {"TP_FAULT=ctor_loop", NULL};
    tk_run_opts o = {.env = env};
    const char *args[] = {"--list-passes", "--plugin-dir", plugdir, "--set", "model.load_timeout_s=1", NULL};
    r = tk_cli_run_with(&o, args);
    expect(&r, 9, "tp_fault.so ran longer than the 1 s time limit (load_timeout_s)", NULL);
    /* and --trace-rule: the same plugins with a pass that has rules, which
     * traces the model when no constructor misbehaves */
    static const char *const rules[] = {"tp_rule_beta", NULL};
    tk_copy_test_plugins(plugdir, rules);
    const char *trace[] = {"--trace-rule", "tp_rule_beta", input, "--plugin-dir", plugdir, "--set",
                           "model.load_timeout_s=1", NULL};
    const char *no_fault[] = {"TP_FAULT=", NULL};
    o.env = no_fault;
    r = tk_cli_run_with(&o, trace);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "trace of pass tp_rule_beta on "), "no trace on stdout: %s", r.out);
    tk_cli_free(&r);
    o.env = env;
    r = tk_cli_run_with(&o, trace);
    ck_assert_msg(r.seconds < 30, "took %.1f s", r.seconds);
    expect(&r, 9, "tp_fault.so ran longer than the 1 s time limit (load_timeout_s)", "while it was loaded");
    const char *crash[] = {"TP_FAULT=ctor_crash", NULL};
    o.env = crash;
    r = tk_cli_run_with(&o, trace);
    expect(&r, 9, "tp_fault.so crashed with SIGSEGV", "while it was loaded");
}
END_TEST

/* ---------------------------------------------------------- unload */

START_TEST(destructors_are_supervised)
{
    /* a good output there already: it must survive the failed run */
    tk_cli_result r = run_fault("", 0, "tp_fault", output, NULL, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    size_t before_len;
    char *before = tk_slurp(output, &before_len);
    r = run_fault("dtor_crash", 0, "tp_fault", output, "--set", "optimize.max_iterations=1");
    expect(&r, 9, "tp_fault.so crashed with SIGSEGV", "while it was unloaded (its destructors run in dlclose)");
    size_t after_len;
    char *after = tk_slurp(output, &after_len);
    ck_assert_msg(after && after_len == before_len && memcmp(before, after, before_len) == 0,
                  "the previous output changed");
    ck_assert_int_eq(tk_dir_entries(outdir), 1);
    free(before);
    free(after);
    /* -o -: nothing on stdout, the exit code says the run failed */
    r = run_fault("dtor_crash", 0, "tp_fault", "-", NULL, NULL);
    ck_assert_uint_eq(r.out_len, 0);
    expect(&r, 9, "tp_fault.so crashed with SIGSEGV", "unloaded");
    r = run_fault("dtor_loop", 0, "tp_fault", output, "--set", "model.load_timeout_s=1");
    expect(&r, 9, "tp_fault.so ran longer than the 1 s time limit (load_timeout_s)", "unloaded");
}
END_TEST

/* -------------------------------------------------------- children */

START_TEST(children_end_with_the_worker)
{
    tk_cli_result r = run_fault("fork:50", 1, "tp_fault", output, NULL, NULL);
    /* the children sleep 300 s holding stdout and stderr: the pipes close
     * only because they were ended */
    ck_assert_msg(r.seconds < 30, "stdout/stderr stayed open %.1f s", r.seconds);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "passhost: warning: 50 processes started by the passes were still running"),
                  "%s", r.err);
    tk_cli_free(&r);
    ck_assert(tk_exists(output));
    /* one that left the process group (setsid): the supervisor is its subreaper */
    r = run_fault("daemon:1", 1, "tp_fault", output, NULL, NULL);
    ck_assert_msg(r.seconds < 30, "stdout/stderr stayed open %.1f s", r.seconds);
    ck_assert_msg(r.status == 0 && strstr(r.err, "1 process started by the passes was still running"), "%s",
                  r.err);
    tk_cli_free(&r);
    /* a worker that crashes with children: the same, and exit 9 */
    r = run_fault("fork:5", 1, "tp_fault", output, NULL, NULL);
    tk_cli_free(&r);
    const char *env[] = {"TP_FAULT=fork:5", "TP_FAULT_AT=1", NULL};
    tk_run_opts o = {.env = env};
    char p[] = "--passes=tp_fault,tp_slow";
    /* 0.3 s against tp_slow's 1.1 s: a margin that holds on a loaded machine */
    const char *args[] = {"-q", input, output, "--plugin-dir", plugdir, p, "--pass-timeout", "0.3", NULL};
    r = tk_cli_run_with(&o, args);
    ck_assert_msg(r.seconds < 30, "stdout/stderr stayed open %.1f s", r.seconds);
    expect(&r, 9, "pass tp_slow ran longer than the 0.3 s time limit", NULL);
}
END_TEST

/* ---------------------------------------------------------- stdout */

START_TEST(plugin_stdout_never_reaches_the_model)
{
    tk_cli_result ref = run_fault("", 0, "tp_fault", output, NULL, NULL);
    ck_assert_int_eq(ref.status, 0);
    tk_cli_free(&ref);
    size_t len;
    char *model = tk_slurp(output, &len);
    const char *modes[] = {NULL, "--no-fork"};
    for (int k = 0; k < 2; k++) {
        tk_cli_result r = run_fault("stdout:288", 1, "tp_fault", "-", modes[k], NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(r.out_len == len && memcmp(r.out, model, len) == 0,
                      "stdout is not the model (%zu bytes, the model has %zu)", r.out_len, len);
        ck_assert_msg(strstr(r.err, "xxxxxxxx"), "the plugin's bytes went nowhere: %s", r.err);
        tk_cli_free(&r);
    }
    free(model);
}
END_TEST

/* ----------------------------------------------------------- blame */

START_TEST(the_pass_that_broke_the_graph_is_blamed)
{
    /* tp_fault corrupts a use list in its call and says it changed nothing;
     * tp_fault_victim, called next, crashes on that graph */
    tk_cli_result r = run_fault("corrupt", 1, "tp_fault,tp_fault_victim", output, NULL, NULL);
    expect(&r, 9, "passhost: pass tp_fault left a graph that fails the structural check (graph 'main', node",
           "; then pass tp_fault_victim crashed with SIGSEGV");
    ck_assert_int_eq(tk_dir_entries(outdir), 0);
    /* --skip-failing-passes skips the culprit, not the victim: the second run is clean */
    r = run_fault("corrupt", 1, "tp_fault,tp_fault_victim", output, "--skip-failing-passes", NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "running again without pass tp_fault (--skip-failing-passes)"), "%s", r.err);
    tk_cli_free(&r);
    ck_assert(tk_exists(output));
    unlink(output);
    /* faults the check before the save finds, on the bundled CNN: tp_fault
     * breaks the graph at its first rewrite and says it changed nothing;
     * fuse_conv_bn then changes the graph (the last to do so) and was
     * blamed.  The pass is named, in the worker and in one process.  (One
     * round: in a second one tp_fault would bypass the node it broke.) */
    char cnn[700];
    snprintf(cnn, sizeof cnn, "%s/models/cnn_small.onnx", PH_SOURCE_DIR);
    const char *faults[] = {"removed", "rename", "fresh_name", "to_end", NULL};
    const char *what[] = {"removed node", "does not resolve to its value", "does not resolve to its value",
                          "input is used before it is defined"};
    for (int i = 0; faults[i]; i++) {
        r = run_fault_on(cnn, faults[i], 1, "tp_fault,fuse_conv_bn", output, "--set", "optimize.max_iterations=1",
                         NULL);
        expect(&r, 5, "pass tp_fault left a graph that fails the structural check", what[i]);
        ck_assert_int_eq(tk_dir_entries(outdir), 0);
        r = run_fault_on(cnn, faults[i], 1, "tp_fault,fuse_conv_bn", output, "--set", "optimize.max_iterations=1",
                         "--no-fork");
        expect(&r, 5, "pass tp_fault left a graph that fails the structural check", what[i]);
    }
    /* an empty op_type with --verify: the structural check comes before any evaluation */
    r = run_fault("empty_op", 3, "tp_fault", output, "--verify", NULL);
    expect(&r, 5, "tp_fault", "node has no op_type");
    ck_assert_int_eq(tk_dir_entries(outdir), 0);
}
END_TEST

/* --------------------------------------------------------- signals */

START_TEST(sigint_ignored_at_start_stays_ignored)
{
    const char *modes[] = {NULL, "--no-fork"};
    for (int k = 0; k < 2; k++) {
        const char *env[] = {NULL};
        tk_run_opts o = {.env = env, .sigint_ignored = 1, .signal = SIGINT, .signal_after = 0.5};
        const char *args[] = {"-q", input, output, "--plugin-dir", plugdir, "--passes=tp_slow", modes[k], NULL};
        tk_cli_result r = tk_cli_run_with(&o, args);
        ck_assert_msg(r.status == 0 && r.term_signal == 0, "exit %d, signal %d: %s", r.status, r.term_signal, r.err);
        tk_cli_free(&r);
        ph_model *m = NULL;
        ph_error e = {0};
        ck_assert_msg(ph_model_load(output, &m, &e) == 0, "%s", e.message);
        ph_model_free(m);
        unlink(output);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plugin_contract");
    TCase *tc = tcase_create("contract");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, constructors_are_supervised);
    tcase_add_test(tc, destructors_are_supervised);
    tcase_add_test(tc, children_end_with_the_worker);
    tcase_add_test(tc, plugin_stdout_never_reaches_the_model);
    tcase_add_test(tc, the_pass_that_broke_the_graph_is_blamed);
    tcase_add_test(tc, sigint_ignored_at_start_stays_ignored);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
