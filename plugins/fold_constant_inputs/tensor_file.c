/* tensor_file.c - .npy and raw tensor files (see tensor_file.h).
 *
 * The .npy format: the magic "\x93NUMPY", a major and a minor version byte,
 * the header length (2 bytes little endian in version 1, 4 bytes in 2 and
 * 3), then the header, a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a newline, then the elements. */
#include "tensor_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TF_MAX_RANK 64

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

/* ------------------------------------------------------------------ .npy */

typedef struct npy_header {
    int dtype;
    int swap; /* big-endian elements of more than one byte */
    int fortran;
    size_t rank;
    int64_t dims[TF_MAX_RANK];
    int have; /* bit 0 descr, 1 fortran_order, 2 shape */
} npy_header;

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* A quoted string into out; the position after it, or NULL. */
static const char *quoted(const char *p, const char *end, char *out, size_t size)
{
    if (p >= end || (*p != '\'' && *p != '"'))
        return NULL;
    char q = *p++;
    size_t k = 0;
    for (; p < end && *p != q; p++)
        if (k + 1 < size)
            out[k++] = *p;
        else
            return NULL;
    out[k] = 0;
    return p < end ? p + 1 : NULL;
}

/* The ONNX dtype of a NumPy type string ("<f4", "|b1", ...), or 0. */
static int descr_dtype(const char *d, int *swap)
{
    static const struct { const char *code; int dtype; } map[] = {
        {"f2", PH_DT_FLOAT16}, {"f4", PH_DT_FLOAT},  {"f8", PH_DT_DOUBLE}, {"i1", PH_DT_INT8},
        {"i2", PH_DT_INT16},   {"i4", PH_DT_INT32},  {"i8", PH_DT_INT64},  {"u1", PH_DT_UINT8},
        {"u2", PH_DT_UINT16},  {"u4", PH_DT_UINT32}, {"u8", PH_DT_UINT64}, {"b1", PH_DT_BOOL},
    };
    const uint16_t one = 1;
    int host_le = *(const unsigned char *)&one == 1;
    if (strlen(d) != 3 || !strchr("<>|=", d[0]))
        return 0;
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strcmp(d + 1, map[i].code) == 0) {
            int big = d[0] == '>' || (d[0] == '=' && !host_le);
            *swap = big && ph_dtype_size(map[i].dtype) > 1;
            return map[i].dtype;
        }
    return 0;
}

/* Parse the header dict [p, end) into h; 0, or -1 with msg. */
static int parse_dict(const char *p, const char *end, npy_header *h, char *msg, size_t size)
{
    char key[64], val[64];
    p = skip_ws(p, end);
    if (p >= end || *p++ != '{')
        return say(msg, size, "the .npy header is not a dict"), -1;
    for (;;) {
        p = skip_ws(p, end);
        if (p < end && *p == '}')
            break;
        if (!(p = quoted(p, end, key, sizeof key)) || (p = skip_ws(p, end)) >= end || *p++ != ':')
            return say(msg, size, "the .npy header is malformed"), -1;
        p = skip_ws(p, end);
        if (strcmp(key, "descr") == 0) {
            if (!(p = quoted(p, end, val, sizeof val)))
                return say(msg, size, "the .npy header's descr is not a simple type string"), -1;
            if (!(h->dtype = descr_dtype(val, &h->swap)))
                return say(msg, size, "the .npy dtype '%s' is not supported (numeric or bool only)", val), -1;
            h->have |= 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            size_t n = end - p >= 4 && memcmp(p, "True", 4) == 0 ? 4 : end - p >= 5 && memcmp(p, "False", 5) == 0 ? 5 : 0;
            if (!n)
                return say(msg, size, "the .npy header's fortran_order is not True or False"), -1;
            h->fortran = n == 4;
            p += n;
            h->have |= 2;
        } else if (strcmp(key, "shape") == 0) {
            if (p >= end || *p++ != '(')
                return say(msg, size, "the .npy header's shape is not a tuple"), -1;
            for (h->rank = 0;;) {
                p = skip_ws(p, end);
                if (p < end && *p == ')') {
                    p++;
                    break;
                }
                char *num_end;
                char digits[32];
                size_t k = 0;
                while (p + k < end && k + 1 < sizeof digits && p[k] >= '0' && p[k] <= '9')
                    k++;
                memcpy(digits, p, k);
                digits[k] = 0;
                errno = 0;
                long long d = strtoll(digits, &num_end, 10);
                if (!k || errno || h->rank == TF_MAX_RANK)
                    return say(msg, size, "the .npy header's shape is malformed or too long"), -1;
                h->dims[h->rank++] = d;
                p = skip_ws(p + k, end);
                if (p < end && *p == 'L') /* written by Python 2 */
                    p = skip_ws(p + 1, end);
                if (p < end && *p == ',')
                    p++;
                else if (p >= end || *p != ')')
                    return say(msg, size, "the .npy header's shape is malformed"), -1;
            }
            h->have |= 4;
        } else {
            return say(msg, size, "the .npy header has an unknown key '%s'", key), -1;
        }
        p = skip_ws(p, end);
        if (p < end && *p == ',')
            p++;
        else if (p >= end || *p != '}')
            return say(msg, size, "the .npy header is malformed"), -1;
    }
    if (h->have != 7)
        return say(msg, size, "the .npy header lacks descr, fortran_order or shape"), -1;
    if (h->fortran)
        return say(msg, size, "the .npy array is in Fortran order: save it in C order "
                              "(numpy.ascontiguousarray)"), -1;
    return 0;
}

ph_tensor *tf_load_npy(const char *path, char *msg, size_t size)
{
    size_t len = 0;
    unsigned char *buf = slurp(path, &len, msg, size);
    if (!buf)
        return NULL;
    ph_tensor *t = NULL;
    npy_header h = {0};
    size_t start = 0, hlen = 0;
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) {
        say(msg, size, "not a .npy file (no \\x93NUMPY magic)");
    } else if (buf[6] < 1 || buf[6] > 3) {
        say(msg, size, ".npy format version %d is not supported (1 to 3)", buf[6]);
    } else if (buf[6] > 1 && len < 12) {
        say(msg, size, "the .npy file is truncated in its header");
    } else {
        hlen = buf[6] == 1 ? (size_t)buf[8] | (size_t)buf[9] << 8
                           : (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        start = (buf[6] == 1 ? 10 : 12) + hlen;
        if (start > len)
            say(msg, size, "the .npy file is truncated in its header");
        else if (parse_dict((const char *)buf + start - hlen, (const char *)buf + start, &h, msg, size) == 0) {
            int64_t want = byte_count(h.rank, h.dims, ph_dtype_size(h.dtype));
            if (want < 0 || (uint64_t)want != (uint64_t)(len - start)) {
                char shape[256];
                format_shape(shape, sizeof shape, h.rank, h.dims);
                say(msg, size, "the .npy data has %zu bytes, but %s %s takes %lld%s", len - start,
                    ph_dtype_name(h.dtype), shape, (long long)want,
                    want >= 0 && (uint64_t)want > (uint64_t)(len - start) ? " (truncated file)" : "");
            } else {
                size_t es = ph_dtype_size(h.dtype);
                unsigned char *d = buf + start;
                for (int64_t i = 0; h.swap && i < want; i += (int64_t)es)
                    for (size_t a = 0, b = es - 1; a < b; a++, b--) {
                        unsigned char c = d[i + (int64_t)a];
                        d[i + (int64_t)a] = d[i + (int64_t)b];
                        d[i + (int64_t)b] = c;
                    }
                if (!(t = ph_tensor_new(h.dtype, h.rank, h.dims, d)))
                    say(msg, size, "out of memory");
            }
        }
    }
    free(buf);
    return t;
}
