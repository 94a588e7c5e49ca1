/* tests/support/clirun.c - the passhost binary run with its output captured
 * (see clirun.h). */
#include "clirun.h"

#include <check.h>
#include <stdarg.h>
#include <fcntl.h>
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

tk_cli_result tk_cli_run(const char *const *args)
{
    char bin[600];
    snprintf(bin, sizeof bin, "%s/bin/passhost", PH_BUILD_DIR);
    const char *argv[64] = {bin};
    size_t n = 1;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
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
    tk_cli_result r = {WEXITSTATUS(ws), tk_slurp(out_path, NULL), tk_slurp(err_path, NULL)};
    remove(out_path);
    remove(err_path);
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
