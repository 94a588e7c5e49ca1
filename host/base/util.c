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

size_t host_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *row = host_xcalloc(lb + 1, sizeof *row);
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[lb];
    free(row);
    return d;
}

size_t host_close_names(const char *name, const char *const *cands, size_t n_cands,
                        const char **out, size_t max)
{
    size_t limit = strlen(name) / 3 > 2 ? strlen(name) / 3 : 2;
    size_t *dist = host_xcalloc(max + 1, sizeof *dist);
    size_t count = 0;
    for (size_t i = 0; i < n_cands && max; i++) {
        size_t d = host_edit_distance(name, cands[i]);
        if (d > limit)
            continue;
        size_t at = count; /* insertion sort by distance, stable */
        while (at > 0 && dist[at - 1] > d)
            at--;
        if (at >= max)
            continue;
        size_t last = count < max ? count : max - 1;
        for (size_t k = last; k > at; k--)
            out[k] = out[k - 1], dist[k] = dist[k - 1];
        out[at] = cands[i];
        dist[at] = d;
        if (count < max)
            count++;
    }
    free(dist);
    return count;
}
