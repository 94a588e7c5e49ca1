/* tensor_file.c - raw tensor files (see tensor_file.h); .npy files are read
 * by the SDK (ph_tensor_load_npy). */
#include "tensor_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void say(char *msg, size_t size, const char *fmt, ...) PH_PRINTF(3, 4);
static void say(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

/* The whole file, malloc'd (caller frees), with its size; NULL with msg. */
static unsigned char *slurp(const char *path, size_t *len, char *msg, size_t size)
{
    struct stat st;
    FILE *f = fopen(path, "rb");
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        say(msg, size, "cannot read the file: %s", f ? "not a regular file" : strerror(errno));
        if (f)
            fclose(f);
        return NULL;
    }
    *len = (size_t)st.st_size;
    unsigned char *buf = malloc(*len ? *len : 1);
    if (!buf || fread(buf, 1, *len, f) != *len) {
        say(msg, size, buf ? "cannot read the file: %s" : "out of memory", strerror(errno));
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

/* numel of a shape times elem bytes, or -1 on overflow. */
static int64_t byte_count(size_t rank, const int64_t *dims, size_t elem)
{
    int64_t n = (int64_t)elem;
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] < 0 || (dims[i] && n > INT64_MAX / dims[i]))
            return -1;
        n *= dims[i];
    }
    return n;
}

static void format_shape(char *buf, size_t size, size_t rank, const int64_t *dims)
{
    size_t k = (size_t)snprintf(buf, size, "[");
    for (size_t i = 0; i < rank && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)dims[i]);
    if (k < size)
        snprintf(buf + k, size - k, "]");
}

ph_tensor *tf_load_raw(const char *path, int dtype, size_t rank, const int64_t *dims, char *msg,
                       size_t size)
{
    size_t len = 0;
    int64_t want = byte_count(rank, dims, ph_dtype_size(dtype));
    if (want < 0 || ph_dtype_size(dtype) == 0) {
        say(msg, size, "a raw file needs a fixed-size dtype and a static shape");
        return NULL;
    }
    unsigned char *buf = slurp(path, &len, msg, size);
    if (!buf)
        return NULL;
    ph_tensor *t = NULL;
    if ((uint64_t)len != (uint64_t)want) {
        char shape[256];
        format_shape(shape, sizeof shape, rank, dims);
        say(msg, size, "the file has %zu bytes, but %s %s takes %lld", len, ph_dtype_name(dtype), shape,
            (long long)want);
    } else if (!(t = ph_tensor_new(dtype, rank, dims, buf))) {
        say(msg, size, "out of memory");
    }
    free(buf);
    return t;
}
