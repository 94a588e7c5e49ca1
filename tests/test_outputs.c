/* tests/test_outputs.c - outputs that are never wrong or mixed
 * (docs/reliability.md, "The output contract"), through the built binary:
 *   - a character device (made here with mknod, never the real /dev/null),
 *     a FIFO and passhost's own stdout (/proc/self/fd/1, never the real
 *     /dev/stdout link) are written in place, never replaced;
 *     a folder, a missing folder, a socket are refused before the model is
 *     loaded; an output that is a symbolic link keeps the link;
 *   - one commit point: a rename that fails (the fault shim, at the data
 *     file's move and at the model's) leaves the old model with its old
 *     data, whole; eight runs into one output at once leave one whole pair
 *     and no stray data or staging file;
 *   - SIGKILL in the middle of the save (the shim): the staging folder it
 *     leaves is removed by the next run into that folder, supervised (the
 *     supervisor killed) and in one process. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clirun.h"
#include "passhost/host.h"
#include "testkit.h"
#include "tmpdir.h"

extern char **environ;

static const char *model; /* the bundled CNN, 1.2 MB of weights */
static char dir[600];     /* an empty folder for outputs */

static void setup(void)
{
    tk_tmpdir_make("outputs");
    unsetenv("PASSHOST_PLUGIN_PATH");
    static char path[700];
    snprintf(path, sizeof path, "%s/models/cnn_small.onnx", PH_SOURCE_DIR);
    model = path;
    snprintf(dir, sizeof dir, "%s", tk_tpath("d"));
    ck_assert_int_eq(mkdir(dir, 0777), 0);
}

static void teardown(void) { tk_tmpdir_remove(); }

static const char *in_dir(const char *name)
{
    static char ring[8][800];
    static int k;
    char *p = ring[k++ % 8];
    snprintf(p, sizeof ring[0], "%s/%s", dir, name);
    return p;
}

/* The names in dir, sorted, joined by spaces. */
static char *listing(void)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    char *names[64];
    int n = 0;
    for (struct dirent *de; (de = readdir(d)) && n < 64;)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            names[n++] = strdup(de->d_name);
    closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    static char buf[4096];
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "", names[i]);
        free(names[i]);
    }
    return buf;
}

static tk_cli_result run(const char *const *env, const char *out, const char *extra1, const char *extra2)
{
    tk_run_opts o = {.env = env};
    const char *args[] = {"-q", model, out, extra1, extra2, NULL};
    return tk_cli_run_with(&o, args);
}

/* The model saved with -o FILE, for comparing. */
static char *reference(size_t *len)
{
    const char *ref = tk_tpath("ref.onnx");
    tk_cli_result r = run(NULL, ref, NULL, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    return tk_slurp(ref, len);
}

/* ------------------------------------------------- devices and FIFOs */

START_TEST(devices_and_fifos_are_written_in_place)
{
    size_t len;
    char *ref = reference(&len);
    /* a character device: 1:3 is the null device, made here */
    if (mknod(in_dir("null"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
        tk_cli_result r = run(NULL, in_dir("null"), NULL, NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        tk_cli_free(&r);
        struct stat st;
        ck_assert_int_eq(lstat(in_dir("null"), &st), 0);
        ck_assert_msg(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3), "the device was replaced");
        ck_assert_str_eq(listing(), "null");
        unlink(in_dir("null"));
    } else {
        fprintf(stderr, "devices_and_fifos: cannot mknod (%s): the device case is left out\n", strerror(errno));
    }
    /* a FIFO: its reader gets exactly the model */
    ck_assert_int_eq(mkfifo(in_dir("fifo"), 0600), 0);
    char catcmd[1200];
    snprintf(catcmd, sizeof catcmd, "cat '%s' > '%s'", in_dir("fifo"), tk_tpath("from_fifo.onnx"));
    pid_t reader;
    const char *sh[] = {"/bin/sh", "-c", catcmd, NULL};
    ck_assert_int_eq(posix_spawn(&reader, "/bin/sh", NULL, NULL, (char *const *)sh, environ), 0);
    tk_cli_result r = run(NULL, in_dir("fifo"), NULL, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    int ws;
    ck_assert_int_eq(waitpid(reader, &ws, 0), reader);
    size_t got_len;
    char *got = tk_slurp(tk_tpath("from_fifo.onnx"), &got_len);
    ck_assert_msg(got_len == len && memcmp(got, ref, len) == 0, "the FIFO's reader got %zu bytes, not the model",
                  got_len);
    free(got);
    struct stat st;
    ck_assert(lstat(in_dir("fifo"), &st) == 0 && S_ISFIFO(st.st_mode));
    ck_assert_str_eq(listing(), "fifo");
    unlink(in_dir("fifo"));
    /* passhost's own stdout by name: the model on stdout, the report not.
     * /proc/self/fd/1 is what /dev/stdout links to; unlike the link it
     * cannot be replaced, should a run get it wrong */
    r = run(NULL, "/proc/self/fd/1", NULL, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(r.out_len == len && memcmp(r.out, ref, len) == 0, "stdout holds %zu bytes, not the model",
                  r.out_len);
    tk_cli_free(&r);
    free(ref);
}
END_TEST

START_TEST(outputs_that_cannot_be_written_fail_first)
{
    /* checked before the model is loaded: the input, cut short, does not
     * load, but that is not what the message is about */
    const char *missing_in = tk_tpath("cut_short.onnx");
    size_t len;
    char *bytes = tk_slurp(model, &len);
    FILE *f = fopen(missing_in, "wb");
    ck_assert_uint_eq(fwrite(bytes, 1, 5000, f), 5000);
    fclose(f);
    free(bytes);
    const char *args1[] = {"-q", missing_in, tk_tpath("no/such/folder/out.onnx"), NULL};
    tk_run_opts o = {0};
    tk_cli_result r = tk_cli_run_with(&o, args1);
    tk_expect_failure(&r, 6, "no/such/folder/out.onnx: cannot create output", "No such file or directory");
    const char *args2[] = {"-q", missing_in, dir, NULL};
    r = tk_cli_run_with(&o, args2);
    tk_expect_failure(&r, 6, "the output is a folder", NULL);
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", in_dir("sock"));
    ck_assert_int_eq(bind(sock, (struct sockaddr *)&sa, sizeof sa), 0);
    const char *args3[] = {"-q", missing_in, in_dir("sock"), NULL};
    r = tk_cli_run_with(&o, args3);
    tk_expect_failure(&r, 6, "the output is a socket", NULL);
    close(sock);
    unlink(in_dir("sock"));
    /* a symbolic link: the file it names is replaced, the link stays; a
     * link to nothing is refused */
    ck_assert_int_eq(symlink("target.onnx", in_dir("link.onnx")), 0);
    const char *args4[] = {"-q", missing_in, in_dir("link.onnx"), NULL};
    r = tk_cli_run_with(&o, args4);
    tk_expect_failure(&r, 6, "link.onnx: the output is a symbolic link to nothing", NULL);
    fclose(fopen(in_dir("target.onnx"), "w"));
    r = run(NULL, in_dir("link.onnx"), NULL, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    struct stat st;
    ck_assert(lstat(in_dir("link.onnx"), &st) == 0 && S_ISLNK(st.st_mode));
    ck_assert_str_eq(listing(), "link.onnx target.onnx");
}
END_TEST

/* ------------------------------------------------------- one commit */

/* The one data file NAME.*.data the model at path names, loaded with it;
 * asserts the pair is whole (the model loads and its tensors are read). */
static void pair_is_whole(const char *path)
{
    ph_model *m = NULL;
    ph_error e = {0};
    ck_assert_msg(ph_model_load(path, &m, &e) == 0, "%s", e.message);
    ph_graph *g = ph_model_graph(m);
    double sum = 0;
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++) {
        const ph_tensor *t = ph_value_const(ph_graph_initializer(g, i));
        const unsigned char *b = t ? ph_tensor_data(t) : NULL;
        for (size_t k = 0; b && k < ph_tensor_nbytes(t); k += 4096)
            sum += b[k]; /* every page of the data file is read */
    }
    (void)sum;
    ph_model_free(m);
}

static const char *const ext_env[] = {NULL};

START_TEST(a_failed_commit_keeps_the_old_pair)
{
    const char *out = in_dir("out.onnx");
    /* the old pair: external data (threshold 1 byte) */
    tk_cli_result r = run(ext_env, out, "--set", "model.external_data_threshold=1");
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    char *before = strdup(listing());
    ck_assert_msg(strncmp(before, "out.onnx out.onnx.", 18) == 0 && strstr(before, ".data"), "%s", before);
    size_t mlen;
    char *old_model = tk_slurp(out, &mlen);
    /* a rename fails: the data file's move (1st), the model's exchange (2nd) */
    char shim[700], asan[700];
    snprintf(shim, sizeof shim, "LD_PRELOAD=%s/test-tools/faultshim.so", PH_BUILD_DIR);
    const char *old = getenv("ASAN_OPTIONS");
    snprintf(asan, sizeof asan, "ASAN_OPTIONS=%s%sverify_asan_link_order=0", old ? old : "", old && *old ? ":" : "");
    const char *which[] = {"PH_FAULT_RENAME=1", "PH_FAULT_RENAME=2"};
    const char *modes[] = {NULL, "--no-fork"};
    for (int k = 0; k < 2; k++)
        for (int m = 0; m < 2; m++) {
            const char *env[] = {shim, asan, which[k], NULL};
            /* another model: without the shim it would replace the pair */
            r = run(env, out, "--set", "model.external_data_threshold=1");
            if (modes[m]) {
                tk_cli_free(&r);
                tk_run_opts o = {.env = env};
                const char *args[] = {"-q", model, out, "--set", "model.external_data_threshold=1",
                                      "--no-fork", "--passes=eliminate_identity", NULL};
                r = tk_cli_run_with(&o, args);
            }
            ck_assert_msg(r.status == 6 && strstr(r.err, "cannot write output") && strstr(r.err, "Input/output error"),
                          "%s: exit %d: %s", which[k], r.status, r.err);
            tk_cli_free(&r);
            ck_assert_str_eq(listing(), before);
            size_t len;
            char *now = tk_slurp(out, &len);
            ck_assert(len == mlen && memcmp(now, old_model, len) == 0);
            free(now);
            pair_is_whole(out);
        }
    /* a run that succeeds replaces the pair whole, and removes the old data file */
    r = run(ext_env, out, "--set", "model.external_data_threshold=1");
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    ck_assert_str_ne(listing(), before);
    ck_assert_msg(strncmp(listing(), "out.onnx out.onnx.", 18) == 0 && !strchr(listing() + 18, ' '), "%s", listing());
    pair_is_whole(out);
    /* and a model without external data removes it too */
    r = run(ext_env, out, NULL, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tk_cli_free(&r);
    ck_assert_str_eq(listing(), "out.onnx");
    free(before);
    free(old_model);
}
END_TEST

START_TEST(concurrent_runs_leave_one_whole_pair)
{
    const char *out = in_dir("out.onnx");
    char bin[600];
    snprintf(bin, sizeof bin, "%s/bin/passhost", PH_BUILD_DIR);
    /* eight runs at once, four configurations (external data or not, all
     * passes or one): each commit replaces the pair whole */
    for (int round = 0; round < 2; round++) {
        pid_t pids[8];
        for (int i = 0; i < 8; i++) {
            const char *args[] = {bin, "-q", model, out, "--set",
                                  i % 2 ? "model.external_data_threshold=1" : "model.external_data_threshold=0",
                                  i % 4 < 2 ? "--skip=fuse_conv_bn" : "--skip=eliminate_identity", NULL};
            if (i % 2 == 0)
                args[5] = "model.external_data_min_size=1000000000"; /* external, but nothing that large: whole */
            ck_assert_int_eq(posix_spawn(&pids[i], bin, NULL, NULL, (char *const *)args, environ), 0);
        }
        for (int i = 0; i < 8; i++) {
            int ws;
            ck_assert_int_eq(waitpid(pids[i], &ws, 0), pids[i]);
            ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "run %d: status %#x", i, ws);
        }
        pair_is_whole(out);
        /* the model, and at most its own data file: no stray data, no staging */
        const char *l = listing();
        ck_assert_msg(strcmp(l, "out.onnx") == 0 ||
                          (strncmp(l, "out.onnx out.onnx.", 18) == 0 && !strchr(l + 18, ' ')), "%s", l);
        if (strcmp(l, "out.onnx") != 0) { /* the data file is the one the model names */
            ph_model *m = NULL;
            ph_error e = {0};
            ck_assert_int_eq(ph_model_load(out, &m, &e), 0);
            char data[900];
            snprintf(data, sizeof data, "%s/%s", dir, l + 9);
            ck_assert_int_eq(ph_model_reads_file(m, data), 1);
            ph_model_free(m);
        }
    }
}
END_TEST

/* ---------------------------------------------------------- SIGKILL */

START_TEST(sigkill_leftovers_are_removed_by_the_next_run)
{
    const char *out = in_dir("out.onnx");
    char shim[700], asan[700];
    snprintf(shim, sizeof shim, "LD_PRELOAD=%s/test-tools/faultshim.so", PH_BUILD_DIR);
    const char *old = getenv("ASAN_OPTIONS");
    snprintf(asan, sizeof asan, "ASAN_OPTIONS=%s%sverify_asan_link_order=0", old ? old : "", old && *old ? ":" : "");
    /* supervised: SIGKILL to the supervisor (its worker dies with it) and to
     * the worker, at the worker's first write into the staging folder; in
     * one process: SIGKILL at its first write */
    const char *env_sup[] = {shim, asan, "PH_FAULT_SIGNAL=9", "PH_FAULT_KILL_PARENT=1", NULL};
    const char *env_one[] = {shim, asan, "PH_FAULT_SIGNAL=9", NULL};
    for (int k = 0; k < 2; k++) {
        tk_run_opts o = {.env = k ? env_one : env_sup};
        const char *args[] = {"-q", model, out, "--set", "model.external_data_threshold=1", k ? "--no-fork" : NULL,
                              NULL};
        tk_cli_result r = tk_cli_run_with(&o, args);
        ck_assert_msg(r.term_signal == SIGKILL, "status %d, signal %d: %s", r.status, r.term_signal, r.err);
        tk_cli_free(&r);
        /* what a process killed that way leaves: its staging folder, nothing else */
        const char *l = listing();
        ck_assert_msg(strncmp(l, ".out.onnx.tmp.", 14) == 0 && !strchr(l, ' '), "left: '%s'", l);
        sleep(1); /* the worker may take a moment to die after its supervisor */
        /* the next run into the folder removes it (its process is gone) */
        r = run(NULL, out, NULL, NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        tk_cli_free(&r);
        ck_assert_str_eq(listing(), "out.onnx");
        unlink(out);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("outputs");
    TCase *tc = tcase_create("outputs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, devices_and_fifos_are_written_in_place);
    tcase_add_test(tc, outputs_that_cannot_be_written_fail_first);
    tcase_add_test(tc, a_failed_commit_keeps_the_old_pair);
    tcase_add_test(tc, concurrent_runs_leave_one_whole_pair);
    tcase_add_test(tc, sigkill_leftovers_are_removed_by_the_next_run);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
