/* tests/test_supervise.c - contained passes, end to end through the built
 * binary $(PH_BUILD_DIR)/bin/passhost: a pass that dereferences NULL, calls
 * abort(), never returns or calls exit(0) ends the run with exit 9 and one
 * line naming the pass, the signal (or the time limit, or exit()), the
 * stage, round and rewrite; no output and no temporary file are left and the
 * input is untouched.  --crash-out and --bisect-out write a reproducer whose
 * --max-rewrites value runs clean; --skip-failing-passes runs again without
 * the culprit (and stops after three); --no-fork runs in one process; SIGTERM
 * to passhost reaches the worker.  And, as a unit, the context's count hook
 * the worker publishes its progress through.
 *
 * The passes are the test plugins tp_crash_null, tp_crash_abort,
 * tp_crash_loop and tp_crash_exit (tests/plugins/tp_crash.h: each bypasses
 * Identity nodes and misbehaves when granted the run's 4th rewrite, in round
 * 2 after rewrite 3) and tp_one_step, on a chain of six Identity nodes.
 *
 * Sanitized builds: AddressSanitizer takes SIGSEGV itself, prints its report
 * and exits with code 1.  The worker's own handler records the signal in
 * the shared page before handing it on, and a sanitizer death callback
 * records that the sanitizer ended the process, so the supervisor still
 * names SIGSEGV and exits 9; these tests therefore need no ASAN_OPTIONS and
 * check the one line that starts with "passhost: " (the sanitizer's report
 * lines around it do not). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clirun.h"
#include "base/exit.h"
#include "passhost/host.h"
#include "passhost/passhost.h"
#include "testkit.h"
#include "tmpdir.h"

extern char **environ;

static const char *tmpdir;
static const char *plugdir;
static const char *input;   /* the Identity chain, in tmpdir */
static char *input_bytes;   /* its bytes before any run */
static size_t input_len;
static struct stat input_stat;
static char outdir[600];    /* an empty folder for the output */
static char output[700];

static const char *const plugins[] = {"tp_crash_null", "tp_crash_abort", "tp_crash_loop",
                                      "tp_crash_exit", "tp_one_step", NULL};

/* x[2,3] -> n Identity nodes in a chain -> y, saved to tmpdir/name. */
static const char *identity_chain(const char *name, int n)
{
    const char *path = tk_tpath(name);
    tk_identity_chain_file(path, n);
    return path;
}

static void setup(void)
{
    tmpdir = tk_tmpdir_make("supervise");
    plugdir = tk_tmpdir_plugins(plugins);
    unsetenv("PASSHOST_PLUGIN_PATH");
    unsetenv("TP_CRASH_PIDFILE");
    input = identity_chain("ids.onnx", 6);
    input_bytes = tk_slurp(input, &input_len);
    ck_assert_ptr_nonnull(input_bytes);
    ck_assert_int_eq(stat(input, &input_stat), 0);
    snprintf(outdir, sizeof outdir, "%s", tk_tpath("out"));
    ck_assert_int_eq(mkdir(outdir, 0777), 0);
    snprintf(output, sizeof output, "%s/out.onnx", outdir);
}

static void teardown(void)
{
    free(input_bytes);
    input_bytes = NULL;
    tk_tmpdir_remove();
}

/* The input has the same bytes and modification time as before the run. */
static void input_untouched(void)
{
    size_t len = 0;
    char *now = tk_slurp(input, &len);
    ck_assert_ptr_nonnull(now);
    ck_assert_msg(len == input_len && memcmp(now, input_bytes, len) == 0, "input changed");
    free(now);
    struct stat st;
    ck_assert_int_eq(stat(input, &st), 0);
    ck_assert(st.st_mtim.tv_sec == input_stat.st_mtim.tv_sec &&
              st.st_mtim.tv_nsec == input_stat.st_mtim.tv_nsec);
}

/* Lines of s that start with prefix; *last gets the last one (static). */
static int lines_starting(const char *s, const char *prefix, const char **last)
{
    static char buf[2048];
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *line = s; line && *line;) {
        const char *end = strchr(line, '\n');
        if (strncmp(line, prefix, len) == 0) {
            n++;
            snprintf(buf, sizeof buf, "%.*s", (int)(end ? end - line : (long)strlen(line)), line);
        }
        line = end ? end + 1 : NULL;
    }
    if (last)
        *last = buf;
    return n;
}

/* A contained failure: exit 9, one "passhost: " line holding each fragment
 * (NULL-terminated), no file in the output folder, the input untouched.
 * Frees r. */
static void expect_contained(tk_cli_result *r, const char *const *frags)
{
    const char *line = NULL;
    ck_assert_msg(r->status == HOST_EXIT_CRASH, "exit %d (want %d); stderr: %s", r->status,
                  HOST_EXIT_CRASH, r->err);
    ck_assert_msg(lines_starting(r->err, "passhost: ", &line) == 1, "want one line: %s", r->err);
    for (; *frags; frags++)
        ck_assert_msg(strstr(line, *frags) != NULL, "'%s' not in: %s", *frags, line);
    ck_assert_msg(tk_dir_entries(outdir) == 0, "the output folder is not empty");
    input_untouched();
    tk_cli_free(r);
}

#define FRAGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* passhost -i input -o output -q, only `pass` in the optimize stage, and
 * more arguments (at least one). */
#define RUN_ONLY(pass, ...)                                                                    \
    TK_CLI("-i", input, "-o", output, "--plugin-dir", plugdir, "--set",                        \
           "optimize.no_integral=true", "--set", "adapt.no_integral=true", "--set",           \
           "optimize.pass_on=" pass, __VA_ARGS__)

static size_t count_op(const char *path, ph_op op)
{
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_msg(ph_model_load(path, &m, &err) == 0, "%s: %s", path, err.message);
    size_t n = 0;
    for (ph_node *x = ph_graph_first_node(ph_model_graph(m)); x; x = ph_node_next(x))
        n += ph_node_op(x) == op;
    ph_model_free(m);
    return n;
}

/* Run passhost with args (NULL-terminated, argv[0] added); *pid gets its
 * process id.  Returns without waiting. */
static pid_t spawn(const char *const *args)
{
    char bin[600];
    snprintf(bin, sizeof bin, "%s/bin/passhost", PH_BUILD_DIR);
    const char *argv[64] = {bin};
    size_t n = 1;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ck_assert_msg(rc == 0, "cannot spawn %s", bin);
    return pid;
}

static int wait_status(pid_t pid)
{
    int ws = 0;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    return ws;
}

/* ------------------------------------------------------------------ tests */

START_TEST(null_dereference_is_named)
{
    tk_cli_result r = RUN_ONLY("tp_crash_null", "-q");
    expect_contained(&r, FRAGS("pass tp_crash_null crashed with SIGSEGV", "stage optimize",
                               "round 2", "after rewrite 3 of the run (1 of this call)",
                               "no output written"));
}
END_TEST

START_TEST(abort_is_named)
{
    tk_cli_result r = RUN_ONLY("tp_crash_abort", "-q");
    expect_contained(&r, FRAGS("pass tp_crash_abort crashed with SIGABRT", "stage optimize",
                               "round 2", "after rewrite 3 of the run"));
}
END_TEST

START_TEST(exit_zero_is_not_success)
{
    tk_cli_result r = RUN_ONLY("tp_crash_exit", "-q");
    expect_contained(&r, FRAGS("pass tp_crash_exit called exit(0)", "stage optimize", "round 2",
                               "after rewrite 3 of the run"));
}
END_TEST

START_TEST(endless_pass_times_out)
{
    tk_cli_result r = RUN_ONLY("tp_crash_loop", "-q", "--pass-timeout", "1");
    expect_contained(&r, FRAGS("pass tp_crash_loop ran longer than the 1 s time limit",
                               "stage optimize", "round 2", "after rewrite 3 of the run"));
    /* the same from the INI file */
    const char *ini = tk_tpath("timeout.ini");
    FILE *f = fopen(ini, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "[model]\ninput = ids.onnx\noutput = out/out.onnx\nplugin_dir = plugins\n"
               "pass_timeout_s = 0.75\n[optimize]\nno_integral = true\npass_on = tp_crash_loop\n"
               "[adapt]\nno_integral = true\n");
    fclose(f);
    r = TK_CLI(ini, "-q");
    expect_contained(&r, FRAGS("pass tp_crash_loop ran longer than the 0.75 s time limit"));
    /* --pass-timeout overrides it; a generous limit lets a good pass finish */
    r = TK_CLI(ini, "-q", "--set", "optimize.pass_on=tp_one_step", "--pass-timeout", "60");
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    ck_assert_int_eq(count_op(output, PH_OP_Identity), 1);
}
END_TEST

START_TEST(crash_out_reproducer)
{
    const char *dir = tk_tpath("repro");
    tk_cli_result r = RUN_ONLY("tp_crash_null", "-q", "--crash-out", dir);
    char want[800];
    snprintf(want, sizeof want, "reproducer in %s (--max-rewrites 3)", dir);
    expect_contained(&r, FRAGS("pass tp_crash_null crashed with SIGSEGV", want));
    /* the input, copied */
    char path[900];
    snprintf(path, sizeof path, "%s/input.onnx", dir);
    size_t len = 0;
    char *copy = tk_slurp(path, &len);
    ck_assert_ptr_nonnull(copy);
    ck_assert(len == input_len && memcmp(copy, input_bytes, len) == 0);
    free(copy);
    /* the effective configuration */
    snprintf(path, sizeof path, "%s/config.ini", dir);
    char *cfg = tk_slurp(path, NULL);
    ck_assert_ptr_nonnull(cfg);
    ck_assert_ptr_nonnull(strstr(cfg, "pass_on = tp_crash_null"));
    ck_assert_ptr_nonnull(strstr(cfg, "input.onnx\""));
    ck_assert_ptr_nonnull(strstr(cfg, "output = \"out.onnx\""));
    free(cfg);
    /* the README: the line, the value, the command */
    snprintf(path, sizeof path, "%s/README.txt", dir);
    char *readme = tk_slurp(path, NULL);
    ck_assert_ptr_nonnull(readme);
    ck_assert_ptr_nonnull(strstr(readme, "pass tp_crash_null crashed with SIGSEGV"));
    ck_assert_ptr_nonnull(strstr(readme, "config.ini --max-rewrites 3 "));
    free(readme);
    /* the value reproduces the state just before the crash, cleanly */
    snprintf(path, sizeof path, "%s/config.ini", dir);
    r = TK_CLI(path, "--max-rewrites", "3", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    char out[900];
    snprintf(out, sizeof out, "%s/out.onnx", dir);
    ck_assert_int_eq(count_op(out, PH_OP_Identity), 3);
    /* and the whole configuration fails the same way */
    r = TK_CLI(path, "-q");
    ck_assert_int_eq(r.status, HOST_EXIT_CRASH);
    ck_assert_ptr_nonnull(strstr(r.err, "pass tp_crash_null crashed with SIGSEGV"));
    tk_cli_free(&r);
}
END_TEST

START_TEST(timeout_reproducer_keeps_the_limit)
{
    const char *dir = tk_tpath("repro");
    tk_cli_result r = RUN_ONLY("tp_crash_loop", "-q", "--pass-timeout", "1", "--crash-out", dir);
    expect_contained(&r, FRAGS("pass tp_crash_loop ran longer", "(--max-rewrites 3)"));
    char path[900];
    snprintf(path, sizeof path, "%s/config.ini", dir);
    char *cfg = tk_slurp(path, NULL);
    ck_assert_ptr_nonnull(cfg);
    ck_assert_ptr_nonnull(strstr(cfg, "pass_timeout_s = 1\n"));
    free(cfg);
    r = TK_CLI(path, "--max-rewrites", "3", "-q");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tk_cli_free(&r);
    r = TK_CLI(path, "-q");
    ck_assert_int_eq(r.status, HOST_EXIT_CRASH);
    ck_assert_ptr_nonnull(strstr(r.err, "time limit"));
    tk_cli_free(&r);
}
END_TEST

START_TEST(bisect_out_reproducer)
{
    const char *dir = tk_tpath("bisect");
    tk_cli_result r = TK_CLI("-i", input, "--plugin-dir", plugdir, "-q", "--set",
                             "optimize.no_integral=true", "--set", "adapt.no_integral=true",
                             "--set", "optimize.pass_on=tp_crash_abort", "--bisect-out", dir);
    expect_contained(&r, FRAGS("pass tp_crash_abort crashed with SIGABRT", "reproducer in"));
    char path[900];
    static const char *const files[] = {"input.onnx", "config.ini", "README.txt"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        ck_assert_msg(tk_exists(path), "%s missing", path);
    }
}
END_TEST

START_TEST(skip_failing_passes_reruns_without_the_culprit)
{
    tk_cli_result r = RUN_ONLY("tp_crash_null,tp_one_step", "-q", "--skip-failing-passes");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    const char *line = NULL;
    ck_assert_msg(lines_starting(r.err, "passhost: WARNING: ", &line) == 1, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(line, "pass tp_crash_null crashed with SIGSEGV"));
    ck_assert_ptr_nonnull(strstr(line, "running again without pass tp_crash_null"));
    tk_cli_free(&r);
    /* tp_one_step alone removed every Identity but the one making y */
    ck_assert_int_eq(count_op(output, PH_OP_Identity), 1);
    ck_assert_int_eq(tk_dir_entries(outdir), 1);
    input_untouched();
}
END_TEST

START_TEST(skip_failing_passes_gives_up_after_three)
{
    /* catalogue order: abort, exit, loop, null; each fails at rewrite 4 */
    tk_cli_result r = RUN_ONLY("tp_crash_abort,tp_crash_exit,tp_crash_loop,tp_crash_null",
                               "--skip-failing-passes", "--pass-timeout", "1");
    ck_assert_msg(r.status == HOST_EXIT_CRASH, "exit %d: %s", r.status, r.err);
    ck_assert_int_eq(lines_starting(r.err, "passhost: WARNING: ", NULL), 3);
    ck_assert_ptr_nonnull(strstr(r.err, "WARNING: pass tp_crash_exit called exit(0)"));
    ck_assert_ptr_nonnull(strstr(r.err, "WARNING: pass tp_crash_loop ran longer"));
    ck_assert_ptr_nonnull(strstr(r.err, "WARNING: pass tp_crash_null crashed with SIGSEGV"));
    const char *last = NULL;
    ck_assert_int_eq(lines_starting(r.err, "passhost: pass ", &last), 1);
    ck_assert_ptr_nonnull(strstr(last, "pass tp_crash_abort crashed with SIGABRT"));
    ck_assert_ptr_nonnull(strstr(last, "3 passes skipped already"));
    tk_cli_free(&r);
    ck_assert_int_eq(tk_dir_entries(outdir), 0);
    input_untouched();
}
END_TEST

START_TEST(no_fork_runs_in_one_process)
{
    /* a crash is not contained: the process itself dies from the signal */
    pid_t pid = spawn((const char *const[]){"-i", input, "-o", output, "--plugin-dir", plugdir,
                                            "--set", "optimize.no_integral=true", "--set",
                                            "adapt.no_integral=true", "--set",
                                            "optimize.pass_on=tp_crash_abort", "--no-fork",
                                            NULL});
    int ws = wait_status(pid);
    ck_assert_msg(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGABRT, "status %#x", ws);
    ck_assert_int_eq(tk_dir_entries(outdir), 0);
    /* exit(0) in a pass ends passhost with 0: what containment prevents */
    tk_cli_result r = RUN_ONLY("tp_crash_exit", "-q", "--no-fork");
    ck_assert_int_eq(r.status, 0);
    tk_cli_free(&r);
    ck_assert_int_eq(tk_dir_entries(outdir), 0);
    /* the same result either way, and nothing else left in the folder */
    char model[900], out2[900];
    snprintf(model, sizeof model, "%s/models/cnn_small.onnx", PH_SOURCE_DIR);
    snprintf(out2, sizeof out2, "%s/out2.onnx", outdir);
    r = TK_CLI("-i", model, "-o", output, "-q");
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    r = TK_CLI("-i", model, "-o", out2, "-q", "--no-fork");
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    size_t a_len = 0, b_len = 0;
    char *a = tk_slurp(output, &a_len), *b = tk_slurp(out2, &b_len);
    ck_assert(a && b && a_len == b_len && memcmp(a, b, a_len) == 0);
    free(a);
    free(b);
    ck_assert_int_eq(tk_dir_entries(outdir), 2);
}
END_TEST

START_TEST(option_errors)
{
    tk_cli_result r = RUN_ONLY("tp_one_step", "-q", "--no-fork", "--skip-failing-passes");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--skip-failing-passes needs the supervisor", NULL);
    r = RUN_ONLY("tp_one_step", "-q", "--no-fork", "--crash-out", tk_tpath("c"));
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--crash-out needs the supervisor", NULL);
    r = RUN_ONLY("tp_one_step", "-q", "--pass-timeout", "1", "--no-fork");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--pass-timeout needs the supervisor", NULL);
    r = RUN_ONLY("tp_one_step", "-q", "--pass-timeout", "soon");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "--pass-timeout: 'soon'", NULL);
    r = RUN_ONLY("tp_one_step", "-q", "--pass-timeout=-1");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "--pass-timeout: '-1'", NULL);
    r = RUN_ONLY("tp_one_step", "-q", "--no-fork=yes");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--no-fork takes no value", NULL);
    r = RUN_ONLY("tp_one_step", "-q", "--crash-out");
    tk_expect_failure(&r, HOST_EXIT_USAGE, "--crash-out needs a value", NULL);
    r = RUN_ONLY("tp_one_step", "-q", "--set", "model.pass_timeout_s=later");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "pass_timeout_s", "later");
    ck_assert_int_eq(tk_dir_entries(outdir), 0);
    r = TK_CLI("--help");
    ck_assert_int_eq(r.status, 0);
    static const char *const opts[] = {"--pass-timeout SECONDS", "--crash-out DIR",
                                       "--skip-failing-passes", "--no-fork", "  9  a pass crashed"};
    for (int i = 0; i < 5; i++)
        ck_assert_msg(strstr(r.out, opts[i]) != NULL, "--help lacks %s", opts[i]);
    tk_cli_free(&r);
}
END_TEST

/* SIGTERM to passhost reaches the worker (here in an endless pass), the
 * worker is gone when passhost is, and passhost dies from SIGTERM. */
START_TEST(sigterm_reaches_the_worker)
{
    const char *pidfile = tk_tpath("worker.pid");
    setenv("TP_CRASH_PIDFILE", pidfile, 1);
    pid_t pid = spawn((const char *const[]){"-i", input, "-o", output, "--plugin-dir", plugdir,
                                            "--set", "optimize.no_integral=true", "--set",
                                            "adapt.no_integral=true", "--set",
                                            "optimize.pass_on=tp_crash_loop", NULL});
    long worker = 0;
    for (int i = 0; i < 600 && worker <= 0; i++) { /* up to a minute on a loaded machine */
        char *text = tk_slurp(pidfile, NULL);
        if (text && strchr(text, '\n'))
            worker = strtol(text, NULL, 10);
        free(text);
        if (worker <= 0)
            nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
    ck_assert_msg(worker > 0, "the worker never reached its endless loop");
    ck_assert_int_ne(worker, pid);
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    int ws = wait_status(pid);
    ck_assert_msg(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGTERM, "status %#x", ws);
    ck_assert_msg(kill((pid_t)worker, 0) != 0 && errno == ESRCH, "the worker %ld still runs",
                  worker);
    ck_assert_int_eq(tk_dir_entries(outdir), 0);
    input_untouched();
}
END_TEST

/* The context's count hook, which the worker publishes its progress
 * through: told of each rewrite once it is complete, with the run's and the
 * call's index, and without asking passes for node names. */
static uint64_t seen[8][2];
static int n_seen;

static void on_count(void *user, uint64_t index, uint64_t pass_index)
{
    ck_assert_ptr_eq(user, &n_seen);
    ck_assert_int_lt(n_seen, 8);
    seen[n_seen][0] = index;
    seen[n_seen][1] = pass_index;
    n_seen++;
}

START_TEST(count_hook_sees_complete_rewrites)
{
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ck_assert_ptr_nonnull(ctx);
    n_seen = 0;
    ph_ctx_set_count_hook(ctx, on_count, &n_seen);
    ck_assert_int_eq(ph_ctx_wants_names(ctx), 0);
    ph_ctx_begin_pass(ctx, "a", "");
    ck_assert_int_eq(ph_ctx_rewrite_begin(ctx, NULL), 1);
    ck_assert_int_eq(n_seen, 0); /* begun, not complete */
    ph_ctx_rewrite_end(ctx, NULL, NULL);
    ck_assert_int_eq(n_seen, 1);
    ck_assert_int_eq(ph_ctx_rewrite_begin(ctx, NULL), 1);
    ck_assert_int_eq(ph_ctx_rewrite_begin(ctx, NULL), 1); /* completes the 2nd */
    ck_assert_int_eq(n_seen, 2);
    ph_ctx_end_pass(ctx); /* completes the 3rd */
    ck_assert_int_eq(n_seen, 3);
    ph_ctx_begin_pass(ctx, "b", "");
    ph_ctx_count_rewrites(ctx, 2); /* numbered by the host, not begun: not told */
    ph_ctx_set_rewrite_limit(ctx, 6);
    ck_assert_int_eq(ph_ctx_rewrite_begin(ctx, NULL), 1);
    ck_assert_int_eq(ph_ctx_rewrite_begin(ctx, NULL), 0); /* the budget: completes the 6th */
    ck_assert_int_eq(n_seen, 4);
    ph_ctx_end_pass(ctx);
    ck_assert_int_eq(n_seen, 4);
    static const uint64_t want[4][2] = {{1, 1}, {2, 2}, {3, 3}, {6, 3}};
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_eq(seen[i][0], want[i][0]);
        ck_assert_uint_eq(seen[i][1], want[i][1]);
    }
    ph_ctx_set_count_hook(ctx, NULL, NULL);
    ph_ctx_begin_pass(ctx, "c", "");
    ph_ctx_set_rewrite_limit(ctx, -1);
    ck_assert_int_eq(ph_ctx_rewrite_begin(ctx, NULL), 1);
    ph_ctx_end_pass(ctx);
    ck_assert_int_eq(n_seen, 4);
    ph_ctx_free(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("supervise");
    TCase *tc = tcase_create("binary");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, null_dereference_is_named);
    tcase_add_test(tc, abort_is_named);
    tcase_add_test(tc, exit_zero_is_not_success);
    tcase_add_test(tc, endless_pass_times_out);
    tcase_add_test(tc, crash_out_reproducer);
    tcase_add_test(tc, timeout_reproducer_keeps_the_limit);
    tcase_add_test(tc, bisect_out_reproducer);
    tcase_add_test(tc, skip_failing_passes_reruns_without_the_culprit);
    tcase_add_test(tc, skip_failing_passes_gives_up_after_three);
    tcase_add_test(tc, no_fork_runs_in_one_process);
    tcase_add_test(tc, option_errors);
    tcase_add_test(tc, sigterm_reaches_the_worker);
    suite_add_tcase(s, tc);
    TCase *unit = tcase_create("count hook");
    tcase_add_test(unit, count_hook_sees_complete_rewrites);
    suite_add_tcase(s, unit);
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
