/* tests/test_disk_faults.c - the passhost program when the disk, the file
 * system or the world misbehaves, through the built binary:
 *   - a full output folder (a 256 KiB tmpfs when the test may mount one,
 *     always the fault shim of tests/tools/faultshim.c: ENOSPC part way,
 *     EIO from fsync), a read-only folder, a folder that does not exist,
 *     the output a hard link or a symbolic link to the input;
 *   - SIGTERM and SIGINT arriving in the middle of the save;
 *   - the input file truncated while passhost has it mapped (SIGBUS);
 *   - a pass that leaves a graph passhost would not load (empty op_type,
 *     a required input dropped): the verifier before the save names it;
 *   - external data through the command line ([model]
 *     external_data_threshold).
 * Every failure must be one line naming the problem, with its exit code;
 * the folder must hold no temporary file and no output afterwards, and the
 * input must be untouched. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clirun.h"
#include "base/exit.h"
#include "passhost/host.h"
#include "passhost/passhost.h"
#include "tmpdir.h"

extern char **environ;

static const char *tmpdir;
static const char *plugdir;
static char mounted[600]; /* a tmpfs this test mounted, to unmount */

static const char *const test_plugins[] = {"tp_break_graph", "tp_drop_input", "tp_truncate_input", NULL};

static void setup(void)
{
    tmpdir = tk_tmpdir_make("disk");
    plugdir = tk_tmpdir_plugins(test_plugins);
    unsetenv("PASSHOST_PLUGIN_PATH");
}

static void teardown(void)
{
    if (mounted[0]) {
        umount2(mounted, MNT_DETACH);
        mounted[0] = 0;
    }
    tk_tmpdir_remove();
}

/* Entries of dir other than . and .. (and the plugins folder). */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, "plugins");
    closedir(d);
    return n;
}

/* Entries of dir whose name holds ".tmp." */
static int temps(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        n += strstr(de->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

/* A model of about 1 MB (one 256 Ki-float initializer) at path. */
static void big_model(const char *path)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    int64_t n = 256 * 1024;
    float *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)i;
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 1, &n);
    ph_value *w = ph_graph_add_initializer(g, "w", ph_tensor_new(PH_DT_FLOAT, 1, &n, v));
    free(v);
    ph_node *add = ph_node_create(g, NULL, "Add", 2, (ph_value *[]){x, w}, 1);
    ph_value_set_type(ph_node_output(add, 0), PH_DT_FLOAT, 1, &n); /* typed: a round trip is the identity */
    ph_graph_add_output(g, ph_node_output(add, 0));
    ph_error e = {0};
    ck_assert_msg(ph_model_save(m, path, &e) == 0, "%s", e.message);
    ph_model_free(m);
}

static const char *model_copy(const char *name)
{
    char from[600];
    snprintf(from, sizeof from, "%s/models/%s", PH_SOURCE_DIR, name);
    const char *to = tk_tpath(name);
    tk_copy_file(from, to);
    return to;
}

/* What a run did: the raw wait status and stderr. */
typedef struct raw_run {
    int status; /* as waitpid gives it */
    char *err;
} raw_run;

/* Run passhost with args and, on top of the environment, the NULL-ended
 * NAME=VALUE list env (may be NULL); passhost may die of a signal. */
static raw_run run_env(const char *const *env, const char *const *args)
{
    tk_run_opts o = {.env = env};
    tk_cli_result res = tk_cli_run_with(&o, args);
    raw_run r = {res.term_signal ? res.term_signal : res.status << 8, res.err};
    free(res.out);
    return r;
}

#define RUN_ENV(env, ...) run_env(env, (const char *const[]){__VA_ARGS__, NULL})

/* The shim, and the sanitizer setting it needs, as environment entries. */
static char shim_env[700], asan_env[700];
static void shim(const char **env, const char *fault)
{
    snprintf(shim_env, sizeof shim_env, "LD_PRELOAD=%s/test-tools/faultshim.so", PH_BUILD_DIR);
    const char *old = getenv("ASAN_OPTIONS");
    snprintf(asan_env, sizeof asan_env, "ASAN_OPTIONS=%s%sverify_asan_link_order=0", old ? old : "",
             old && *old ? ":" : "");
    env[0] = shim_env;
    env[1] = asan_env;
    env[2] = fault;
    env[3] = NULL;
}

static void expect_exit(const raw_run *r, int code, const char *frag)
{
    ck_assert_msg(WIFEXITED(r->status) && WEXITSTATUS(r->status) == code, "status %#x (want exit %d): %s",
                  r->status, code, r->err);
    ck_assert_msg(tk_line_count(r->err) == 1 && strncmp(r->err, "passhost: ", 10) == 0, "%s", r->err);
    ck_assert_msg(strstr(r->err, frag), "'%s' not in: %s", frag, r->err);
}

/* A tmpfs of size at dir (made), read-only when ro; 0 when mounting is not
 * allowed here (not root, or no mount in this container). */
static int mount_tmpfs(const char *dir, const char *size, int ro)
{
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    char opts[64];
    snprintf(opts, sizeof opts, "size=%s", size);
    if (mount("tmpfs", dir, "tmpfs", ro ? MS_RDONLY : 0, opts) != 0) {
        printf("test_disk_faults: cannot mount a tmpfs (%s): that case runs with the fault shim only\n",
               strerror(errno));
        return 0;
    }
    snprintf(mounted, sizeof mounted, "%s", dir);
    return 1;
}

static void unmount(void)
{
    ck_assert_int_eq(umount2(mounted, 0), 0);
    mounted[0] = 0;
}

/* The input's bytes, to compare after a run. */
typedef struct snapshot {
    char *bytes;
    size_t len;
    struct stat st;
} snapshot;

static snapshot take(const char *path)
{
    snapshot s;
    s.bytes = tk_slurp(path, &s.len);
    ck_assert_int_eq(stat(path, &s.st), 0);
    return s;
}

static void untouched(const char *path, snapshot *s)
{
    size_t len;
    char *now = tk_slurp(path, &len);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_msg(len == s->len && memcmp(now, s->bytes, len) == 0, "%s changed", path);
    ck_assert(st.st_mtim.tv_sec == s->st.st_mtim.tv_sec && st.st_mtim.tv_nsec == s->st.st_mtim.tv_nsec);
    free(now);
}

/* The data file NAME.XXXXXX.data a save of tmpdir/NAME wrote. */
static const char *data_file(const char *name)
{
    const char *d = tk_data_file(name);
    ck_assert_msg(d != NULL, "no data file of %s", name);
    return d;
}

/* ------------------------------------------------------------------ tests */

START_TEST(full_disk)
{
    const char *in = tk_tpath("big.onnx");
    big_model(in);
    snapshot s = take(in);
    /* a real full file system */
    const char *small = tk_tpath("small");
    if (mount_tmpfs(small, "256k", 0)) {
        char out[700];
        snprintf(out, sizeof out, "%s/out.onnx", small);
        tk_cli_result r = TK_CLI("-i", in, "-o", out, "-q");
        tk_expect_failure(&r, HOST_EXIT_OUTPUT, "out.onnx", "No space left on device");
        ck_assert_int_eq(entries(small), 0);
        /* external data: the data file fills the disk; neither file stays */
        r = TK_CLI("-i", in, "-o", out, "-q", "--set", "model.external_data_threshold=0");
        tk_expect_failure(&r, HOST_EXIT_OUTPUT, "out.onnx", "No space left on device");
        ck_assert_int_eq(entries(small), 0);
        unmount();
    }
    /* the shim: ENOSPC after 100 kB, EIO from fsync, each also with external data */
    const char *faults[] = {"PH_FAULT_ENOSPC_AFTER=100000", "PH_FAULT_FSYNC_EIO=1", NULL};
    const char *whys[] = {"No space left on device", "Input/output error"};
    for (int i = 0; faults[i]; i++) {
        const char *env[4];
        shim(env, faults[i]);
        const char *out = tk_tpath("out.onnx");
        int before = entries(tmpdir);
        raw_run r = RUN_ENV(env, "-i", in, "-o", out, "-q");
        expect_exit(&r, HOST_EXIT_OUTPUT, whys[i]);
        free(r.err);
        ck_assert_int_eq(entries(tmpdir), before);
        r = RUN_ENV(env, "-i", in, "-o", out, "-q", "--set", "model.external_data_threshold=0");
        expect_exit(&r, HOST_EXIT_OUTPUT, whys[i]);
        free(r.err);
        ck_assert_int_eq(entries(tmpdir), before);
        ck_assert(!tk_exists(tk_tpath("out.onnx.data")));
    }
    untouched(in, &s);
    free(s.bytes);
}
END_TEST

START_TEST(read_only_and_missing_folders)
{
    const char *in = model_copy("cnn_small.onnx");
    snapshot s = take(in);
    const char *ro = tk_tpath("ro");
    char out[700];
    snprintf(out, sizeof out, "%s/out.onnx", ro);
    if (getuid() == 0) { /* root writes anywhere: a read-only mount instead (skipped without one) */
        if (mount_tmpfs(ro, "1m", 1)) {
            tk_cli_result r = TK_CLI("-i", in, "-o", out, "-q");
            tk_expect_failure(&r, HOST_EXIT_OUTPUT, "out.onnx", "Read-only file system");
            ck_assert_int_eq(entries(ro), 0);
            unmount();
        }
    } else {
        ck_assert_int_eq(mkdir(ro, 0555), 0);
        tk_cli_result r = TK_CLI("-i", in, "-o", out, "-q");
        tk_expect_failure(&r, HOST_EXIT_OUTPUT, "out.onnx", "Permission denied");
        ck_assert_int_eq(entries(ro), 0);
    }
    int before = entries(tmpdir);
    tk_cli_result r = TK_CLI("-i", in, "-o", tk_tpath("missing/dir/out.onnx"), "-q");
    tk_expect_failure(&r, HOST_EXIT_OUTPUT, "missing/dir/out.onnx", "No such file or directory");
    ck_assert_int_eq(entries(tmpdir), before);
    untouched(in, &s);
    free(s.bytes);
}
END_TEST

START_TEST(output_is_the_input_under_another_name)
{
    const char *in = model_copy("cnn_small.onnx");
    snapshot s = take(in);
    ck_assert_int_eq(link(in, tk_tpath("hard.onnx")), 0);
    ck_assert_int_eq(symlink(in, tk_tpath("soft.onnx")), 0);
    int before = entries(tmpdir);
    const char *outs[] = {in, tk_tpath("hard.onnx"), tk_tpath("soft.onnx"), NULL};
    for (int i = 0; outs[i]; i++) {
        tk_cli_result r = TK_CLI("-i", in, "-o", outs[i], "-q");
        tk_expect_failure(&r, HOST_EXIT_OUTPUT, "passhost never overwrites its input", NULL);
        ck_assert_int_eq(entries(tmpdir), before);
    }
    /* the input's external-data file as the output: refused */
    const char *ext = tk_tpath("ext.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", ext, "-q", "--set", "model.external_data_threshold=0");
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    const char *data = data_file("ext.onnx");
    snapshot sd = take(data);
    tk_copy_file(ext, tk_tpath("moved.onnx"));
    r = TK_CLI("-i", tk_tpath("moved.onnx"), "-o", data, "-q");
    tk_expect_failure(&r, HOST_EXIT_OUTPUT, "a file the input model reads", NULL);
    /* the output it replaces (ext.onnx) names the input's data file too:
     * the commit removes the data files of the model it replaces, never
     * one the input reads */
    r = TK_CLI("-i", tk_tpath("moved.onnx"), "-o", ext, "-q", "--set", "model.external_data_threshold=0");
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    untouched(data, &sd);
    ph_model *back = NULL;
    ph_error e = {0};
    ck_assert_msg(ph_model_load(tk_tpath("moved.onnx"), &back, &e) == 0, "%s", e.message);
    ph_model_free(back);
    untouched(in, &s);
    free(sd.bytes);
    free(s.bytes);
}
END_TEST

START_TEST(signal_during_save)
{
    const char *in = tk_tpath("big.onnx");
    big_model(in);
    snapshot s = take(in);
    const char *out = tk_tpath("out.onnx");
    int before = entries(tmpdir);
    const char *sigs[] = {"PH_FAULT_SIGNAL=15", "PH_FAULT_SIGNAL=2", NULL};
    const int nums[] = {SIGTERM, SIGINT};
    for (int i = 0; sigs[i]; i++) {
        const char *env[4];
        shim(env, sigs[i]);
        /* in one process: the handler removes the temporary file and the
         * process dies of the signal */
        raw_run r = RUN_ENV(env, "-i", in, "-o", out, "-q", "--no-fork");
        ck_assert_msg(WIFSIGNALED(r.status) && WTERMSIG(r.status) == nums[i], "status %#x: %s", r.status, r.err);
        free(r.err);
        ck_assert_int_eq(temps(tmpdir), 0);
        ck_assert_int_eq(entries(tmpdir), before);
        /* with external data: two temporary files */
        r = RUN_ENV(env, "-i", in, "-o", out, "-q", "--no-fork", "--set", "model.external_data_threshold=0");
        ck_assert_msg(WIFSIGNALED(r.status) && WTERMSIG(r.status) == nums[i], "status %#x: %s", r.status, r.err);
        free(r.err);
        ck_assert_int_eq(entries(tmpdir), before);
        /* supervised (the default): not a success, and nothing left */
        r = RUN_ENV(env, "-i", in, "-o", out, "-q");
        ck_assert_msg(!(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0), "%s", r.err);
        free(r.err);
        ck_assert_int_eq(entries(tmpdir), before);
    }
    untouched(in, &s);
    free(s.bytes);
}
END_TEST

START_TEST(input_truncated_while_mapped)
{
    const char *modes[] = {"pass.tp_truncate_input.read=true", "pass.tp_truncate_input.read=false", NULL};
    for (int i = 0; modes[i]; i++) {
        const char *in = model_copy("cnn_small.onnx");
        char path_set[700];
        snprintf(path_set, sizeof path_set, "pass.tp_truncate_input.path=%s", in);
        int before = entries(tmpdir);
        const char *out = tk_tpath("out.onnx");
        const char *forks[] = {"--no-fork", "--quiet"}; /* one process, then supervised */
        for (int f = 0; f < 2; f++) {
            tk_copy_file(PH_SOURCE_DIR "/models/cnn_small.onnx", in);
            tk_cli_result r = TK_CLI("-i", in, "-o", out, "-q", forks[f], "--plugin-dir", plugdir, "--set",
                                     "optimize.no_integral=true", "--set", "adapt.no_integral=true", "--set",
                                     "optimize.pass_on=tp_truncate_input", "--set", path_set, "--set", modes[i]);
            /* reading the weights (or copying them out in the save) finds
             * the file shorter than its mapping */
            ck_assert_msg(r.status == HOST_EXIT_MODEL || r.status == HOST_EXIT_OUTPUT, "exit %d: %s", r.status,
                          r.err);
            ck_assert_msg(strstr(r.err, "changed while it was") || strstr(r.err, "input changed"), "%s", r.err);
            ck_assert_msg(tk_line_count(r.err) == 1, "%s", r.err);
            if (i == 0)
                ck_assert_msg(r.status == HOST_EXIT_MODEL && strstr(r.err, in), "%s", r.err);
            tk_cli_free(&r);
            ck_assert_int_eq(entries(tmpdir), before);
        }
    }
}
END_TEST

START_TEST(broken_graph_is_never_written)
{
    const char *in = model_copy("cnn_small.onnx");
    snapshot s = take(in);
    const char *out = tk_tpath("out.onnx");
    int before = entries(tmpdir);
    const char *off[] = {"--set", "optimize.no_integral=true", "--set", "adapt.no_integral=true"};
    tk_cli_result r = TK_CLI("-i", in, "-o", out, "-q", "--plugin-dir", plugdir, off[0], off[1], off[2], off[3],
                             "--set", "optimize.pass_on=tp_break_graph");
    tk_expect_failure(&r, HOST_EXIT_PASS, "pass tp_break_graph left a graph that fails the structural check",
                      "node has no op_type");
    ck_assert_int_eq(entries(tmpdir), before);
    r = TK_CLI("-i", in, "-o", out, "-q", "--plugin-dir", plugdir, off[0], off[1], off[2], off[3], "--set",
               "optimize.pass_on=tp_drop_input");
    tk_expect_failure(&r, HOST_EXIT_PASS, "pass tp_drop_input left a graph that fails the structural check",
                      "required input 1 is missing");
    ck_assert_int_eq(entries(tmpdir), before);
    /* nor dumped */
    r = TK_CLI("-i", in, "-o", out, "-q", "--plugin-dir", plugdir, "--dump-dir", tk_tpath("dumps"), off[0], off[1],
               off[2], off[3], "--set", "optimize.pass_on=tp_drop_input");
    tk_expect_failure(&r, HOST_EXIT_PASS, "pass tp_drop_input", "required input 1 is missing");
    ck_assert_int_eq(entries(tk_tpath("dumps")), 0);
    ck_assert(!tk_exists(out));
    untouched(in, &s);
    free(s.bytes);
}
END_TEST

START_TEST(external_data_from_the_command_line)
{
    const char *in = tk_tpath("big.onnx");
    big_model(in);
    const char *out = tk_tpath("out.onnx");
    tk_cli_result r = TK_CLI("-i", in, "-o", out, "-q", "--set", "model.external_data_threshold=4096", "--set",
                             "model.external_data_min_size=2048", "--set", "optimize.no_integral=true", "--set",
                             "adapt.no_integral=true");
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    struct stat st, sd;
    ck_assert_int_eq(stat(out, &st), 0);
    ck_assert_int_eq(stat(data_file("out.onnx"), &sd), 0);
    ck_assert_int_lt(st.st_size, 4096);         /* the model without its weight */
    ck_assert_int_eq(sd.st_size, 256 * 1024 * 4); /* one tensor at offset 0 */
    ph_model *a = NULL, *b = NULL;
    ph_error e = {0};
    ck_assert_int_eq(ph_model_load(in, &a, &e), 0);
    ck_assert_msg(ph_model_load(out, &b, &e) == 0, "%s", e.message);
    ck_assert(ph_tensor_equal(ph_value_const(ph_graph_initializer(ph_model_graph(a), 0)),
                              ph_value_const(ph_graph_initializer(ph_model_graph(b), 0))));
    ph_model_free(a);
    ph_model_free(b);
    /* ONNX's own loader reads it (with the external data) and its checker
     * passes; skipped without python3-onnx */
    if (system("/usr/bin/python3 -c 'import onnx' 2>/dev/null") == 0) {
        char cmd[1400];
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -c 'import sys, onnx, numpy as np; from onnx import numpy_helper as nh; "
                 "onnx.checker.check_model(sys.argv[1]); m = onnx.load(sys.argv[1]); "
                 "w = nh.to_array(m.graph.initializer[0]); "
                 "sys.exit(0 if np.array_equal(w, np.arange(262144, dtype=np.float32)) else 1)' '%s'",
                 out);
        ck_assert_msg(system(cmd) == 0, "python onnx does not read %s with its external data", out);
    } else {
        printf("test_disk_faults: python3-onnx not installed: output not checked with onnx.load\n");
    }
    /* and back: a model with external data as input, written whole, is
     * the input again byte for byte (no pass ran) */
    r = TK_CLI("-i", out, "-o", tk_tpath("whole.onnx"), "-q", "--set", "optimize.no_integral=true", "--set",
               "adapt.no_integral=true");
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    size_t l1, l2;
    char *d1 = tk_slurp(in, &l1), *d2 = tk_slurp(tk_tpath("whole.onnx"), &l2);
    ck_assert(l1 == l2 && memcmp(d1, d2, l1) == 0);
    free(d1);
    free(d2);
    /* a stream cannot carry the data file */
    r = TK_CLI("-i", in, "-o", "-", "-q", "--set", "model.external_data_threshold=0");
    tk_expect_failure(&r, HOST_EXIT_OUTPUT, "-o -", "external-data file");
    /* a bad threshold is a configuration error */
    r = TK_CLI("-i", in, "-o", out, "-q", "--set", "model.external_data_threshold=-1");
    tk_expect_failure(&r, HOST_EXIT_CONFIG, "external_data_threshold", NULL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("disk_faults");
    TCase *tc = tcase_create("faults");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, full_disk);
    tcase_add_test(tc, read_only_and_missing_folders);
    tcase_add_test(tc, output_is_the_input_under_another_name);
    tcase_add_test(tc, signal_during_save);
    tcase_add_test(tc, input_truncated_while_mapped);
    tcase_add_test(tc, broken_graph_is_never_written);
    tcase_add_test(tc, external_data_from_the_command_line);
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
