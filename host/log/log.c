/* host/log/log.c - the log: stderr and the log_path file (log.h). */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "base/exit.h"
#include "trace.h"

int host_log_open(host_log *log, FILE *err, const char *log_path, int quiet, ph_error *perr)
{
    log->err = err;
    log->quiet = quiet;
    log->file = NULL;
    if (!log_path)
        return 0;
    log->file = fopen(log_path, "w");
    if (!log->file)
        return ph_error_set(perr, HOST_EXIT_CONFIG, "log_path %s: %s", log_path,
                            strerror(errno));
    return 0;
}

void host_log_close(host_log *log)
{
    if (log->file)
        fclose(log->file);
    log->file = NULL;
}

static const char *level_name(ph_log_level level)
{
    switch (level) {
    case PH_LOG_ERROR: return "error";
    case PH_LOG_WARN: return "warning";
    case PH_LOG_INFO: return "info";
    case PH_LOG_DEBUG: return "debug";
    }
    return "log";
}

static void log_line(host_log *log, ph_log_level level, const char *pass, const char *message)
{
    const char *sep = pass && *pass ? ": " : "";
    const char *tag = pass && *pass ? "pass " : "";
    if (log->file) {
        fprintf(log->file, "%s: %s%s%s%s\n", level_name(level), tag, pass ? pass : "", sep,
                message);
        fflush(log->file);
    }
    int to_err = (level == PH_LOG_WARN || level == PH_LOG_INFO) && !log->quiet; /* -q: errors only */
    if (to_err && log->err)
        host_trace_clear_line(log->trace);
    if (to_err && log->err)
        fprintf(log->err, "passhost: %s: %s%s%s%s\n", level_name(level), tag,
                pass ? pass : "", sep, message);
}

void host_log_msg(host_log *log, ph_log_level level, const char *pass, const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    log_line(log, level, pass, message);
}

void host_log_fatal(host_log *log, const char *message)
{
    if (log && log->file) {
        fprintf(log->file, "error: %s\n", message);
        fflush(log->file);
    }
    if (log)
        host_trace_clear_line(log->trace);
    fprintf(log && log->err ? log->err : stderr, "passhost: %s\n", message);
}

void host_log_sink(void *user, ph_log_level level, const char *pass, const char *message)
{
    log_line(user, level, pass, message);
}
