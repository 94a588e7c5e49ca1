/* host/base/util.h - small helpers shared by the host modules: allocation that
 * never returns NULL, formatted strings, paths, monotonic time.
 *
 * The host is a program (also when embedded through libpasshost-pipeline.so,
 * whose header, passhost/pipeline.h, says so): on out-of-memory these
 * helpers print one line and abort rather than thread an error through
 * every caller.
 * Every returned string is owned by the caller (free()).
 */
#ifndef PASSHOST_HOST_UTIL_H
#define PASSHOST_HOST_UTIL_H

#include <stddef.h>

#if defined(__GNUC__)
#define HOST_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HOST_PRINTF(f, a)
#endif

void *host_xmalloc(size_t size);
void *host_xcalloc(size_t count, size_t size);
/* Grow *items (of *cap elements of elem_size) to hold at least need. */
void host_xgrow(void *items_ptr, size_t *cap, size_t need, size_t elem_size);
char *host_xstrdup(const char *s);
char *host_xstrndup(const char *s, size_t n);
char *host_xasprintf(const char *fmt, ...) HOST_PRINTF(1, 2);

/* The folder part of path ("." when it has none). */
char *host_dirname(const char *path);
/* path itself when absolute or base is NULL/"", else base/path. */
char *host_path_resolve(const char *base, const char *path);

/* Trim ASCII whitespace in place at both ends; returns the start. */
char *host_trim(char *s);
/* Replace every occurrence of `from` (not empty) in the NUL-terminated
 * buf, of size bytes, by `to`, cutting what no longer fits. */
void host_replace_text(char *buf, size_t size, const char *from, const char *to);

/* Milliseconds on CLOCK_MONOTONIC. */
double host_now_ms(void);

#endif
