/* tests/support/clirun.c - the passhost binary run with its output captured
 * (see clirun.h). */
#include "clirun.h"

#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tmpdir.h"

#ifndef PH_BUILD_DIR
#define PH_BUILD_DIR "build"
#endif

extern char **environ;

/* A new empty file /tmp/ph_test_WHAT.XXXXXX, its name in path; returns its
 * descriptor (close-on-exec: the child gets it only as a dup2 copy). */
static int tk_capture_file(char *path, size_t size, const char *what)
{
    snprintf(path, size, "/tmp/ph_test_%s.XXXXXX", what);
    int fd = mkostemp(path, O_CLOEXEC);
    ck_assert_msg(fd >= 0, "cannot make %s", path);
    return fd;
}

/* The program's path into bin, and argv: bin, then args (up to 62). */
static void program_argv(char *bin, size_t size, const char **argv, const char *const *args)
{
    snprintf(bin, size, "%s/bin/passhost", PH_BUILD_DIR);
    argv[0] = bin;
    size_t n = 1;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
}

tk_cli_result tk_cli_run(const char *const *args)
{
    char bin[600];
    const char *argv[64];
    program_argv(bin, sizeof bin, argv, args);
    char out_path[64], err_path[64];
    int out_fd = tk_capture_file(out_path, sizeof out_path, "stdout");
    int err_fd = tk_capture_file(err_path, sizeof err_path, "stderr");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out_fd);
    close(err_fd);
    if (rc != 0) {
        remove(out_path);
        remove(err_path);
    }
    ck_assert_msg(rc == 0, "cannot spawn %s", bin);
    int ws = 0;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert_msg(WIFEXITED(ws), "passhost did not exit normally");
    tk_cli_result r = {.status = WEXITSTATUS(ws), .out = tk_slurp(out_path, NULL), .err = tk_slurp(err_path, NULL)};
    remove(out_path);
    remove(err_path);
    return r;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct grow {
    char *d;
    size_t n, cap;
} grow;

/* Read what fd has (it is readable); 0 at its end. */
static int drain(int fd, grow *g)
{
    if (g->n + 65536 + 1 > g->cap) {
        g->cap = (g->n + 65536 + 1) * 2;
        g->d = realloc(g->d, g->cap);
        ck_assert_ptr_nonnull(g->d);
    }
    ssize_t k = read(fd, g->d + g->n, 65536);
    if (k > 0)
        g->n += (size_t)k;
    g->d[g->n] = 0;
    return k > 0 || (k < 0 && errno == EINTR);
}

tk_cli_result tk_cli_run_with(const tk_run_opts *o, const char *const *args)
{
    char bin[600];
    const char *argv[64];
    program_argv(bin, sizeof bin, argv, args);
    /* o->env, then the test's environment but what o->env replaces */
    const char *envp[256];
    size_t ne = 0;
    for (size_t i = 0; o->env && o->env[i] && ne < 200; i++)
        envp[ne++] = o->env[i];
    for (char **e = environ; *e && ne < 255; e++) {
        int replaced = 0;
        for (size_t i = 0; o->env && o->env[i]; i++) {
            size_t l = strcspn(o->env[i], "=");
            replaced |= strncmp(*e, o->env[i], l + 1) == 0;
        }
        if (!replaced)
            envp[ne++] = *e;
    }
    envp[ne] = NULL;
    int out[2], err[2];
    ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    struct sigaction old_int;
    if (o->sigint_ignored) /* an ignored disposition is inherited across exec */
        sigaction(SIGINT, &(struct sigaction){.sa_handler = SIG_IGN}, &old_int);
    double t0 = now_s();
    pid_t pid;
    int rc = posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, (char *const *)envp);
    if (o->sigint_ignored)
        sigaction(SIGINT, &old_int, NULL);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    ck_assert_msg(rc == 0, "cannot spawn %s", bin);
    grow go = {0}, ge = {0};
    int open_out = 1, open_err = 1, signalled = 0, ws = 0, exited = 0;
    while (open_out || open_err || !exited) {
        if (!exited && waitpid(pid, &ws, WNOHANG) == pid)
            exited = 1;
        if (o->signal && !signalled && now_s() - t0 >= o->signal_after) {
            kill(pid, o->signal);
            signalled = 1;
        }
        struct pollfd pf[2] = {{open_out ? out[0] : -1, POLLIN, 0}, {open_err ? err[0] : -1, POLLIN, 0}};
        if (!open_out && !open_err) {
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (poll(pf, 2, 20) <= 0)
            continue;
        if (open_out && (pf[0].revents & (POLLIN | POLLHUP)) && !drain(out[0], &go))
            open_out = 0;
        if (open_err && (pf[1].revents & (POLLIN | POLLHUP)) && !drain(err[0], &ge))
            open_err = 0;
    }
    tk_cli_result r = {0};
    r.seconds = now_s() - t0;
    close(out[0]);
    close(err[0]);
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    r.term_signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
    r.out = go.d ? go.d : calloc(1, 1);
    r.out_len = go.n;
    r.err = ge.d ? ge.d : calloc(1, 1);
    return r;
}

void tk_cli_free(tk_cli_result *r)
{
    free(r->out);
    free(r->err);
}

void tk_expect_failure(tk_cli_result *r, int code, const char *frag1, const char *frag2)
{
    ck_assert_msg(r->status == code, "exit %d (want %d); stderr: %s", r->status, code, r->err);
    ck_assert_msg(tk_line_count(r->err) == 1, "want one stderr line, got: %s", r->err);
    ck_assert_msg(strncmp(r->err, "passhost: ", 10) == 0, "%s", r->err);
    ck_assert_msg(strstr(r->err, frag1) != NULL, "'%s' not in: %s", frag1, r->err);
    if (frag2)
        ck_assert_msg(strstr(r->err, frag2) != NULL, "'%s' not in: %s", frag2, r->err);
    tk_cli_free(r);
}

int tk_line_count(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

int tk_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    ck_assert_msg(n >= 0 && (size_t)n < sizeof cmd, "command too long");
    int ws = system(cmd);
    ck_assert_msg(ws != -1 && WIFEXITED(ws), "%s", cmd);
    return WEXITSTATUS(ws);
}
