/* fuzz/plugin_faults.c - libFuzzer target: the plugin contract, driven by
 * the fuzzer's bytes.
 *
 * Each input chooses a fault of the test pass tests/plugins/tp_fault.c (a
 * crash, abort, endless loop or exit() at a chosen rewrite; children left
 * running, in the process group or out of it; bytes printed to stdout; a
 * graph broken behind the SDK's back: a use list, a node marked removed, an
 * output renamed in place, an empty op_type; a constructor or destructor
 * that loops or crashes; or none), the passes run with it (tp_fault alone,
 * followed by tp_fault_victim, which crashes on a broken use list, or by
 * fuse_conv_bn) and the run's options (-o FILE or -o -, external data,
 * --verify, --skip-failing-passes, --no-fork), then runs the real passhost
 * program on the bundled CNN, as a user would, and checks the contract:
 *   - the run ends (time limits of 2 s for pass calls and plugin loads;
 *     one round of the passes);
 *   - exit 0 exactly when there is an output: the file (with its one data
 *     file when external) loads, or stdout holds a model that loads and
 *     nothing else; otherwise no output, and stdout is empty;
 *   - nothing is left in the output's folder but the output and its data
 *     file (no staging folder, no stray data file);
 *   - supervised, no process the pass started is running afterwards;
 *   - a failure is one line naming tp_fault (or its file, for a
 *     constructor or destructor), and for a graph broken behind the SDK's
 *     back, tp_fault and not a pass that ran later.
 * The program runs in a child process, so libFuzzer's coverage sees only
 * this harness: the fault space is small and explored by the bytes, not
 * guided.  The program and the test plugins are found beside this binary
 * (BIN/passhost, BIN/../test-plugins).  Seeds: fuzz/corpus/plugin_faults. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/fuzz_support.h"

extern char **environ;

static const char *const pf_kinds[] = {"none", "crash", "abort", "loop", "exit", "fork", "daemon", "stdout",
                                       "corrupt", "removed", "rename", "empty_op", "ctor_loop", "ctor_crash",
                                       "dtor_loop", "dtor_crash"};
enum { PF_NKINDS = sizeof pf_kinds / sizeof pf_kinds[0] };

static char pf_bin[PATH_MAX + 64], pf_plugins[PATH_MAX], pf_model[PATH_MAX + 64];

/* BIN (this executable's folder): BIN/passhost, BIN/../test-plugins. */
static void pf_locate(void)
{
    if (pf_bin[0])
        return;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        fz_fail("cannot find this program's folder");
    self[n] = 0;
    *strrchr(self, '/') = 0;
    snprintf(pf_bin, sizeof pf_bin, "%s/../bin/passhost", self);
    if (access(pf_bin, X_OK) != 0)
        snprintf(pf_bin, sizeof pf_bin, "%s/passhost", self);
    snprintf(pf_plugins, sizeof pf_plugins, "%s", fz_path("pf_plugins"));
    mkdir(pf_plugins, 0700);
    const char *names[] = {"tp_fault", "tp_fault_victim"};
    for (int i = 0; i < 2; i++) { /* a folder of just the two test passes */
        char from[PATH_MAX + 64], to[PATH_MAX + 64];
        snprintf(from, sizeof from, "%s/../test-plugins/%s.so", self, names[i]);
        snprintf(to, sizeof to, "%s/%s.so", pf_plugins, names[i]);
        unlink(to);
        if (symlink(from, to) != 0 || access(from, R_OK) != 0)
            fz_fail("no test plugin %s (make test-build, or fuzz-build, builds it)", from);
    }
    if (access(pf_bin, X_OK) != 0)
        fz_fail("no passhost program at %s", pf_bin);
    /* the model: the bundled CNN, found from the source folder */
    const char *src = getenv("PH_SOURCE_DIR");
    snprintf(pf_model, sizeof pf_model, "%s/models/cnn_small.onnx", src && *src ? src : ".");
    if (access(pf_model, R_OK) != 0)
        snprintf(pf_model, sizeof pf_model, "%s/../../../models/cnn_small.onnx", self);
    if (access(pf_model, R_OK) != 0)
        fz_fail("no models/cnn_small.onnx (run from the source folder, or set PH_SOURCE_DIR)");
}

/* The names in dir, other than keep and its data files (keep.*.data):
 * how many. */
static int pf_strays(const char *dir, const char *keep, char *first, size_t size)
{
    DIR *d = opendir(dir);
    int n = 0;
    size_t kl = strlen(keep);
    for (struct dirent *de; d && (de = readdir(d));) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || strcmp(de->d_name, keep) == 0)
            continue;
        size_t l = strlen(de->d_name);
        if (l > kl + 6 && strncmp(de->d_name, keep, kl) == 0 && strcmp(de->d_name + l - 5, ".data") == 0)
            continue; /* counted by pf_data_files */
        if (!n)
            snprintf(first, size, "%s", de->d_name);
        n++;
    }
    if (d)
        closedir(d);
    return n;
}

static int pf_data_files(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    int n = 0;
    size_t kl = strlen(name);
    for (struct dirent *de; d && (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        n += l > kl + 6 && strncmp(de->d_name, name, kl) == 0 && de->d_name[kl] == '.' &&
             strcmp(de->d_name + l - 5, ".data") == 0;
    }
    if (d)
        closedir(d);
    return n;
}

static void pf_clear(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *de; d && (de = readdir(d));) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char p[PATH_MAX + 300];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (unlink(p) != 0)
            ph_staging_remove(p);
    }
    if (d)
        closedir(d);
}

static double pf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct pf_run {
    int status;
    char *out, *err;
    size_t out_len, err_len;
} pf_run;

/* Spawn passhost with args and the extra environment; collect stdout and
 * stderr until both are closed (by every process holding them). */
static pf_run pf_spawn(const char *const *args, const char *const *env)
{
    const char *envp[256];
    size_t ne = 0;
    for (char **e = environ; *e && ne < 200; e++)
        if (strncmp(*e, "TP_FAULT", 8) != 0)
            envp[ne++] = *e;
    for (size_t i = 0; env[i] && ne < 255; i++)
        envp[ne++] = env[i];
    envp[ne] = NULL;
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        fz_fail("pipe: %s", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    pid_t pid;
    if (posix_spawn(&pid, pf_bin, &fa, NULL, (char *const *)args, (char *const *)envp) != 0)
        fz_fail("cannot run %s", pf_bin);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    pf_run r = {0};
    size_t cap_o = 1 << 16, cap_e = 1 << 12;
    r.out = malloc(cap_o);
    r.err = malloc(cap_e);
    int open_o = 1, open_e = 1, exited = 0;
    double t0 = pf_now();
    while (open_o || open_e || !exited) {
        if (!exited && waitpid(pid, &r.status, WNOHANG) == pid)
            exited = 1;
        if (pf_now() - t0 > 60)
            fz_fail("the run did not end in 60 s (%s open; exited %d)",
                    open_o ? "stdout" : open_e ? "stderr" : "nothing", exited);
        if (!open_o && !open_e) {
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
            continue;
        }
        struct pollfd pf[2] = {{open_o ? out[0] : -1, POLLIN, 0}, {open_e ? err[0] : -1, POLLIN, 0}};
        if (poll(pf, 2, 50) <= 0)
            continue;
        for (int k = 0; k < 2; k++) {
            if (!(pf[k].revents & (POLLIN | POLLHUP)))
                continue;
            char **buf = k ? &r.err : &r.out;
            size_t *len = k ? &r.err_len : &r.out_len, *cap = k ? &cap_e : &cap_o;
            if (*len + 65536 + 1 > *cap) {
                *cap = (*len + 65536 + 1) * 2;
                *buf = realloc(*buf, *cap);
            }
            ssize_t got = read(k ? err[0] : out[0], *buf + *len, 65536);
            if (got > 0)
                *len += (size_t)got;
            else if (got == 0 || errno != EINTR)
                *(k ? &open_e : &open_o) = 0;
        }
    }
    r.out[r.out_len] = 0;
    r.err[r.err_len] = 0;
    close(out[0]);
    close(err[0]);
    return r;
}

/* The pids tp_fault's children wrote; 1 when one of them is alive. */
static int pf_children_alive(const char *pidfile)
{
    FILE *f = fopen(pidfile, "r");
    long pid;
    int alive = 0;
    while (f && fscanf(f, "%ld", &pid) == 1)
        if (kill((pid_t)pid, 0) == 0) {
            alive = 1;
            kill((pid_t)pid, SIGKILL); /* the next input starts clean */
        }
    if (f)
        fclose(f);
    return alive;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    pf_locate();
    int kind = data[0] % PF_NKINDS, at = 1 + data[1] % 2, flags = data[3];
    long n = data[2] % 8;
    const char *k = pf_kinds[kind];
    int no_fork = flags & 1, to_stdout = flags & 2, external = flags & 4, verify = flags & 8,
        skip = flags & 16, then = (flags >> 5) % 3;
    /* with --no-fork nothing contains a crash, a hang, children or a graph
     * whose memory was broken: that part of the contract is the
     * supervisor's.  In one process: no fault, stdout, and the faults the
     * check before the save finds (each pass is called once). */
    if (no_fork && kind != 0 && kind != 7 && kind != 9 && kind != 10 && kind != 11)
        no_fork = 0;
    if (no_fork && skip)
        skip = 0;
    char fault[64], atv[32], pidfile[PATH_MAX + 32];
    snprintf(fault, sizeof fault, "TP_FAULT=%s:%ld", k, kind == 7 ? n * 100 + 1 : kind == 5 ? n + 1 : n);
    snprintf(atv, sizeof atv, "TP_FAULT_AT=%d", at);
    snprintf(pidfile, sizeof pidfile, "TP_FAULT_PIDS=%s", fz_path("pf_pids"));
    unlink(pidfile + 14);
    const char *env[] = {fault, atv, pidfile, NULL};
    const char *outdir = fz_path("pf_out");
    mkdir(outdir, 0700);
    pf_clear(outdir);
    char out_path[PATH_MAX + 16];
    snprintf(out_path, sizeof out_path, "%s/out.onnx", outdir);
    const char *passes = then == 0 ? "--passes=tp_fault" : then == 1 ? "--passes=tp_fault,tp_fault_victim"
                                                                     : "--passes=tp_fault,fuse_conv_bn";
    const char *args[24] = {pf_bin, "-q", pf_model, to_stdout ? "-" : out_path, "--plugin-dir", pf_plugins, passes,
                            "--set", "model.load_timeout_s=2", "--set", "optimize.max_iterations=1"};
    int na = 11;
    if (!no_fork) {
        args[na++] = "--pass-timeout";
        args[na++] = "2";
    }
    if (no_fork)
        args[na++] = "--no-fork";
    if (external) {
        args[na++] = "--set";
        args[na++] = "model.external_data_threshold=1";
    }
    if (verify)
        args[na++] = "--verify";
    if (skip)
        args[na++] = "--skip-failing-passes";
    args[na] = NULL;
    pf_run r = pf_spawn(args, env);

    /* the exit code */
    if (!WIFEXITED(r.status))
        fz_fail("passhost ended from signal %d (%s; supervised: %d): %s", WTERMSIG(r.status), k, !no_fork, r.err);
    int code = WEXITSTATUS(r.status);
    if (code != 0 && code != 5 && code != 6 && code != 7 && code != 9)
        fz_fail("exit %d for fault %s: %s", code, k, r.err);
    /* output exactly when exit 0 */
    int have_file = fz_exists(out_path);
    if (code == 0 && !to_stdout) {
        if (!have_file)
            fz_fail("exit 0 and no output (%s)", k);
        ph_model *m = NULL;
        ph_error e = {0};
        if (ph_model_load(out_path, &m, &e) != 0)
            fz_fail("exit 0 and the output does not load (%s): %s", k, e.message);
        ph_model_free(m);
        if (pf_data_files(outdir, "out.onnx") != (external ? 1 : 0))
            fz_fail("exit 0 with %d data files (external %d, %s)", pf_data_files(outdir, "out.onnx"), !!external, k);
    }
    if (code == 0 && to_stdout && !external) {
        ph_model *m = NULL;
        ph_error e = {0};
        if (ph_model_load_memory(r.out, r.out_len, "stdout", &m, &e) != 0)
            fz_fail("exit 0 and stdout (%zu bytes) is not a model (%s): %s", r.out_len, k, e.message);
        ph_model_free(m);
    }
    if (code != 0 && (have_file || pf_data_files(outdir, "out.onnx")))
        fz_fail("exit %d and an output is there (%s): %s", code, k, r.err);
    if (code != 0 && to_stdout && r.out_len)
        fz_fail("exit %d and %zu bytes on stdout (%s)", code, r.out_len, k);
    char stray[300] = "";
    if (pf_strays(outdir, "out.onnx", stray, sizeof stray))
        fz_fail("left in the output's folder: %s (%s, exit %d)", stray, k, code);
    /* children */
    if (pf_children_alive(pidfile + 14) && !no_fork)
        fz_fail("a process the pass started is still running (%s)", k);
    /* the one line names the culprit */
    if (code != 0) {
        const char *line = strstr(r.err, "passhost: ");
        if (!line)
            fz_fail("exit %d without a passhost line (%s): %s", code, k, r.err);
        /* -o - cannot carry external data: refused before any pass runs */
        int no_stream = to_stdout && external && strstr(line, "needs an external-data file");
        if (!strstr(line, "tp_fault") && !no_stream)
            fz_fail("the failure does not name tp_fault (%s): %s", k, line);
        if ((kind == 8 || kind == 9 || kind == 10) && strstr(line, "pass tp_fault_victim") &&
            !strstr(line, "pass tp_fault left"))
            fz_fail("the victim is blamed, not tp_fault (%s): %s", k, line);
    }
    free(r.out);
    free(r.err);
    pf_clear(outdir);
    return 0;
}
