/* host/log/log.h - the log: what a run says while it goes.
 *
 * Warnings and info go to stderr (info not with -q) and, when log_path is
 * set, to that file too (with debug messages).  A fatal error is printed
 * once, by host_log_fatal, as `passhost: <message>`.  Messages a pass logs
 * at PH_LOG_ERROR go to the log file only: the pass's failure is reported
 * by the runner as that one fatal line.
 */
#ifndef PASSHOST_HOST_LOG_H
#define PASSHOST_HOST_LOG_H

#include <stdio.h>

#include "passhost/host.h"
#include "passhost/plugin.h"
#include "base/util.h"

struct host_trace;

typedef struct host_log {
    FILE *err;  /* borrowed: normally stderr */
    FILE *file; /* owned: the log_path file, or NULL */
    int quiet;  /* -q: neither warnings nor info on err */
    struct host_trace *trace; /* borrowed, may be NULL: its progress line is erased first */
} host_log;

/* Start logging to err (borrowed) and, if log_path is not NULL, to that file
 * (truncated).  HOST_EXIT_CONFIG when the file cannot be opened. */
int host_log_open(host_log *log, FILE *err, const char *log_path, int quiet, ph_error *perr);
void host_log_close(host_log *log);

void host_log_msg(host_log *log, ph_log_level level, const char *pass, const char *fmt, ...)
    HOST_PRINTF(4, 5);
/* The one line of a fatal error: `passhost: <message>` (also in the file). */
void host_log_fatal(host_log *log, const char *message);
/* A ph_log_fn for ph_ctx_new; user is the host_log. */
void host_log_sink(void *user, ph_log_level level, const char *pass, const char *message);

#endif
