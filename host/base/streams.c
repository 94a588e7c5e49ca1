/* host/base/streams.c - escaped text streams and the kept standard output
 * (streams.h). */
#include "streams.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct escaper {
    int fd;
    int pending_c2; /* the last byte written was 0xC2 (a C1 control may follow) */
} escaper;

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static ssize_t escaper_write(void *cookie, const char *buf, size_t size)
{
    escaper *e = cookie;
    char out[4096];
    size_t n = 0;
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (n + 8 > sizeof out) {
            if (write_all(e->fd, out, n))
                return -1;
            n = 0;
        }
        if (e->pending_c2) { /* U+0080..U+009F: 0xC2 0x80..0x9F */
            e->pending_c2 = 0;
            if (c >= 0x80 && c <= 0x9f) {
                n += (size_t)snprintf(out + n, sizeof out - n, "\\u%04x", c);
                continue;
            }
            out[n++] = (char)0xc2;
        }
        if (c == 0xc2) {
            e->pending_c2 = 1;
            continue;
        }
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
            n += (size_t)snprintf(out + n, sizeof out - n, "\\u%04x", c);
        else
            out[n++] = (char)c;
    }
    return write_all(e->fd, out, n) ? -1 : (ssize_t)size;
}

/* The escaping streams made (a few per process: never freed, as the
 * standard streams they stand for), with their state. */
static struct {
    FILE *f;
    escaper e;
} g_made[8];

static int escaper_close(void *cookie)
{
    escaper *e = cookie;
    int rc = 0;
    if (e->pending_c2) /* a lone 0xC2 at the end: as it was */
        rc = write_all(e->fd, "\xc2", 1);
    e->pending_c2 = 0;
    for (size_t i = 0; i < sizeof g_made / sizeof g_made[0]; i++)
        if (&g_made[i].e == e)
            g_made[i].f = NULL;
    return rc;
}

int host_stream_fd(FILE *f)
{
    for (size_t i = 0; i < sizeof g_made / sizeof g_made[0]; i++)
        if (g_made[i].f && g_made[i].f == f)
            return g_made[i].e.fd;
    return fileno(f);
}

FILE *host_escaping_stream(int fd)
{
    size_t i = 0;
    while (i < sizeof g_made / sizeof g_made[0] && g_made[i].f)
        i++;
    if (i == sizeof g_made / sizeof g_made[0])
        return NULL;
    g_made[i].e = (escaper){.fd = fd};
    cookie_io_functions_t io = {.write = escaper_write, .close = escaper_close};
    FILE *f = fopencookie(&g_made[i].e, "w", io);
    if (!f)
        return NULL;
    setvbuf(f, NULL, _IOLBF, BUFSIZ);
    g_made[i].f = f;
    return f;
}

static FILE *g_stdout, *g_raw_stderr;
static int g_stdout_fd = -1;

void host_streams_init(void)
{
    if (g_stdout)
        return;
    fflush(NULL);
    g_stdout_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    FILE *own = g_stdout_fd >= 0 ? host_escaping_stream(g_stdout_fd) : NULL;
    FILE *out = host_escaping_stream(STDOUT_FILENO), *err = host_escaping_stream(STDERR_FILENO);
    g_raw_stderr = stderr;
    if (err)
        stderr = err;
    if (out)
        stdout = out;
    g_stdout = own ? own : stdout;
    if (g_stdout_fd < 0)
        g_stdout_fd = STDOUT_FILENO;
}

void host_streams_protect_stdout(void)
{
    if (!g_stdout || g_stdout_fd == STDOUT_FILENO)
        return;
    fflush(stdout);
    dup2(STDERR_FILENO, STDOUT_FILENO);
}

FILE *host_stdout(void) { return g_stdout ? g_stdout : stdout; }
int host_stdout_fd(void) { return g_stdout ? g_stdout_fd : STDOUT_FILENO; }
FILE *host_raw_stderr(void) { return g_raw_stderr ? g_raw_stderr : stderr; }
