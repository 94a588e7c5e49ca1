/* tests/support/clirun.h - the passhost program run from a test.
 *
 * tk_cli_run runs the built binary PH_BUILD_DIR/bin/passhost with the
 * given arguments and the test's environment, waits for it and returns its
 * exit status with all it wrote to stdout and stderr.  The two streams go
 * through temporary files of their own in /tmp, removed before it returns,
 * never into a test's tk_tmpdir folder, so a test may count that folder's
 * entries around a run.  tk_expect_failure checks a failed run: its exit
 * code and its one stderr line.
 *
 * Failures are Check assertions (ck_assert_msg), so these helpers are only
 * for use inside a Check test.  Ownership: a tk_cli_result owns its out and
 * err strings; free them with tk_cli_free. */
#ifndef PASSHOST_TESTS_CLIRUN_H
#define PASSHOST_TESTS_CLIRUN_H

#include <stddef.h>

typedef struct tk_cli_result {
    int status; /* exit status; the program must have exited normally */
    char *out;  /* all it wrote to stdout, NUL-terminated; owned */
    char *err;  /* all it wrote to stderr, NUL-terminated; owned */
    size_t out_len;    /* tk_cli_run_with: the bytes of out (a model is binary) */
    int term_signal;   /* tk_cli_run_with: the signal that ended passhost (0: it exited) */
    double seconds;    /* tk_cli_run_with: from the start until stdout and stderr were closed */
} tk_cli_result;

/* How tk_cli_run_with runs passhost. */
typedef struct tk_run_opts {
    const char *const *env; /* NAME=VALUE entries set on top of the test's environment (NULL: none) */
    int sigint_ignored;     /* start with SIGINT ignored, as a background job of a script does */
    int signal;             /* send this signal to passhost ... */
    double signal_after;    /* ... this many seconds after the start (0: no signal) */
} tk_run_opts;

/* tk_cli_run with options; stdout and stderr are read through pipes, so
 * the run is over only when every process that holds them has closed them
 * (a child a pass left behind keeps them open).  passhost may also end
 * from a signal (term_signal). */
tk_cli_result tk_cli_run_with(const tk_run_opts *o, const char *const *args);

/* Run passhost with the NULL-terminated args (up to 62 of them; argv[0] is
 * the binary).  The caller frees the result with tk_cli_free. */
tk_cli_result tk_cli_run(const char *const *args);

/* The arguments inline: tk_cli_result r = TK_CLI("-i", in, "-o", out). */
#define TK_CLI(...) tk_cli_run((const char *const[]){__VA_ARGS__, NULL})

/* Free r's strings (r itself is the caller's). */
void tk_cli_free(tk_cli_result *r);

/* Assert that r exited with code and wrote ONE stderr line, starting
 * "passhost: ", that holds frag1 and frag2 (frag2 may be NULL); then free
 * r's strings (tk_cli_free). */
void tk_expect_failure(tk_cli_result *r, int code, const char *frag1, const char *frag2);

/* Run a shell command (printf-style, under 4 KiB) with system(3), asserting
 * it exited normally; its exit status. */
int tk_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Newlines in s. */
int tk_line_count(const char *s);

#endif
