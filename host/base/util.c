/* host/base/util.c - allocation, string, path and time helpers (see util.h). */
#include "util.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void out_of_memory(void)
{
    fputs("passhost: out of memory\n", stderr);
    abort();
}

void *host_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        out_of_memory();
    return p;
}

void *host_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        out_of_memory();
    return p;
}

void host_xgrow(void *items_ptr, size_t *cap, size_t need, size_t elem_size)
{
    void **items = items_ptr;
    if (need <= *cap)
        return;
    size_t n = *cap ? *cap * 2 : 8;
    while (n < need)
        n *= 2;
    void *p = realloc(*items, n * elem_size);
    if (!p)
        out_of_memory();
    *items = p;
    *cap = n;
}

char *host_xstrdup(const char *s)
{
    return host_xstrndup(s, strlen(s));
}

char *host_xstrndup(const char *s, size_t n)
{
    char *p = host_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *host_xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        out_of_memory();
    return s;
}

char *host_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return host_xstrdup(".");
    if (slash == path)
        return host_xstrdup("/");
    return host_xstrndup(path, (size_t)(slash - path));
}

char *host_path_resolve(const char *base, const char *path)
{
    if (path[0] == '/' || !base || !base[0] || strcmp(base, ".") == 0)
        return host_xstrdup(path);
    return host_xasprintf("%s/%s", base, path);
}

char *host_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

double host_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void host_replace_text(char *buf, size_t size, const char *from, const char *to)
{
    size_t lf = strlen(from);
    if (!lf || !size)
        return;
    char *out = host_xcalloc(size, 1), *hit;
    size_t n = 0;
    const char *p = buf;
    while ((hit = strstr(p, from)) != NULL) {
        size_t head = (size_t)(hit - p);
        n += (size_t)snprintf(out + n, n < size ? size - n : 0, "%.*s%s", (int)head, p, to);
        if (n >= size)
            break;
        p = hit + lf;
    }
    if (n < size)
        snprintf(out + n, size - n, "%s", p);
    memcpy(buf, out, size);
    buf[size - 1] = 0;
    free(out);
}
