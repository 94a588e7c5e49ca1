/* sdk/src/onnx/tensor_file.c - one tensor from a file: a serialized
 * TensorProto (.pb, as ONNX's test_data_set folders hold them), a NumPy
 * .npy file, or raw little-endian bytes of a known dtype and shape (see
 * passhost/ir.h).
 *
 * The .npy format: the magic "\x93NUMPY", a major and a minor version byte,
 * the header length (2 bytes little endian in version 1, 4 bytes in 2 and
 * 3), then the header, a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a newline, then the elements. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define NPY_MAX_RANK 64

/* The whole file, malloc'd (caller frees), with its size; NULL with err. */
static unsigned char *slurp(const char *path, size_t *len, ph_error *err)
{
    struct stat st;
    FILE *f = fopen(path, "rb");
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        ph_error_set(err, PH_EIO, "%s: cannot read the file: %s", path,
                     f ? "not a regular file" : strerror(errno));
        if (f)
            fclose(f);
        return NULL;
    }
    *len = (size_t)st.st_size;
    unsigned char *buf = malloc(*len ? *len : 1);
    if (!buf || fread(buf, 1, *len, f) != *len) {
        if (buf)
            ph_error_set(err, PH_EIO, "%s: cannot read the file: %s", path, strerror(errno));
        else
            ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static void format_shape(char *buf, size_t size, size_t rank, const int64_t *dims)
{
    size_t k = (size_t)snprintf(buf, size, "[");
    for (size_t i = 0; i < rank && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)dims[i]);
    if (k < size)
        snprintf(buf + k, size - k, "]");
}

/* ------------------------------------------------------------------ raw */

PH_API ph_tensor *ph_tensor_load_raw(const char *path, int dtype, size_t rank, const int64_t *dims,
                                     ph_error *err)
{
    int64_t n = dims || !rank ? ir_dims_numel(dims, rank) : -1, want = -1;
    size_t es = ph_dtype_size(dtype);
    if (n < 0 || !es || ir_mul_ovf(n, (int64_t)es, &want)) {
        ph_error_set(err, PH_EINVAL, "%s: a raw file needs a fixed-size dtype and a static shape", path);
        return NULL;
    }
    size_t len = 0;
    unsigned char *buf = slurp(path, &len, err);
    if (!buf)
        return NULL;
    ph_tensor *t = NULL;
    if ((uint64_t)len != (uint64_t)want) {
        char shape[256];
        format_shape(shape, sizeof shape, rank, dims);
        ph_error_set(err, PH_EPARSE, "%s: the file has %zu bytes, but %s %s takes %lld", path, len,
                     ph_dtype_name(dtype), shape, (long long)want);
    } else if (!(t = ph_tensor_new(dtype, rank, dims, buf))) {
        ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
    }
    free(buf);
    return t;
}

/* ------------------------------------------------------------------- .pb */

PH_API ph_tensor *ph_tensor_load_pb(const char *path, char **name, ph_error *err)
{
    if (name)
        *name = NULL;
    size_t len = 0;
    unsigned char *buf = slurp(path, &len, err);
    if (!buf)
        return NULL;
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, buf);
    free(buf);
    if (!tp) {
        ph_error_set(err, PH_EPARSE, "%s: not a serialized ONNX TensorProto", path);
        return NULL;
    }
    char what[600];
    snprintf(what, sizeof what, "%s", path);
    if (ir_tensor_check(tp, 0, 0, what, err)) {
        protobuf_c_message_free_unpacked(&tp->base, NULL);
        return NULL;
    }
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        ph_error_set(err, PH_EUNSUPPORTED, "%s: the tensor's data is in an external file", path);
        protobuf_c_message_free_unpacked(&tp->base, NULL);
        return NULL;
    }
    char *copy = name && tp->name && tp->name[0] ? strdup(tp->name) : NULL;
    ph_tensor *t = ir_tensor_wrap(tp, 0);
    if (!t || (name && tp->name && tp->name[0] && !copy)) {
        ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
        free(copy);
        if (t)
            ph_tensor_free(t);
        else
            protobuf_c_message_free_unpacked(&tp->base, NULL);
        return NULL;
    }
    if (!ph_tensor_data(t) && tp->data_type != PH_DT_STRING) {
        ph_error_set(err, PH_EPARSE, "%s: the tensor's data cannot be read", path);
        free(copy);
        ph_tensor_free(t);
        return NULL;
    }
    if (name)
        *name = copy;
    return t;
}

/* ------------------------------------------------------------------ .npy */

typedef struct npy_header {
    int dtype;
    int swap; /* big-endian elements of more than one byte */
    int fortran;
    size_t rank;
    int64_t dims[NPY_MAX_RANK];
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

static int bad_header(ph_error *err, const char *path, const char *what)
{
    return ph_error_set(err, PH_EPARSE, "%s: %s", path, what);
}

/* Parse the header dict [p, end) into h; 0, or PH_EPARSE with err. */
static int parse_dict(const char *p, const char *end, npy_header *h, const char *path, ph_error *err)
{
    char key[64], val[64];
    p = skip_ws(p, end);
    if (p >= end || *p++ != '{')
        return bad_header(err, path, "the .npy header is not a dict");
    for (;;) {
        p = skip_ws(p, end);
        if (p < end && *p == '}')
            break;
        if (!(p = quoted(p, end, key, sizeof key)) || (p = skip_ws(p, end)) >= end || *p++ != ':')
            return bad_header(err, path, "the .npy header is malformed");
        p = skip_ws(p, end);
        if (strcmp(key, "descr") == 0) {
            if (!(p = quoted(p, end, val, sizeof val)))
                return bad_header(err, path, "the .npy header's descr is not a simple type string");
            if (!(h->dtype = descr_dtype(val, &h->swap)))
                return ph_error_set(err, PH_EPARSE,
                                    "%s: the .npy dtype '%s' is not supported (numeric or bool only)",
                                    path, val);
            h->have |= 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            size_t n = end - p >= 4 && memcmp(p, "True", 4) == 0 ? 4 : end - p >= 5 && memcmp(p, "False", 5) == 0 ? 5 : 0;
            if (!n)
                return bad_header(err, path, "the .npy header's fortran_order is not True or False");
            h->fortran = n == 4;
            p += n;
            h->have |= 2;
        } else if (strcmp(key, "shape") == 0) {
            if (p >= end || *p++ != '(')
                return bad_header(err, path, "the .npy header's shape is not a tuple");
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
                if (!k || errno || h->rank == NPY_MAX_RANK)
                    return bad_header(err, path, "the .npy header's shape is malformed or too long");
                h->dims[h->rank++] = d;
                p = skip_ws(p + k, end);
                if (p < end && *p == 'L') /* written by Python 2 */
                    p = skip_ws(p + 1, end);
                if (p < end && *p == ',')
                    p++;
                else if (p >= end || *p != ')')
                    return bad_header(err, path, "the .npy header's shape is malformed");
            }
            h->have |= 4;
        } else {
            return ph_error_set(err, PH_EPARSE, "%s: the .npy header has an unknown key '%s'", path, key);
        }
        p = skip_ws(p, end);
        if (p < end && *p == ',')
            p++;
        else if (p >= end || *p != '}')
            return bad_header(err, path, "the .npy header is malformed");
    }
    if (h->have != 7)
        return bad_header(err, path, "the .npy header lacks descr, fortran_order or shape");
    if (h->fortran)
        return bad_header(err, path, "the .npy array is in Fortran order: save it in C order "
                                     "(numpy.ascontiguousarray)");
    return 0;
}

PH_API ph_tensor *ph_tensor_load_npy(const char *path, ph_error *err)
{
    size_t len = 0;
    unsigned char *buf = slurp(path, &len, err);
    if (!buf)
        return NULL;
    ph_tensor *t = NULL;
    npy_header h = {0};
    size_t start = 0, hlen = 0;
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) {
        bad_header(err, path, "not a .npy file (no \\x93NUMPY magic)");
    } else if (buf[6] < 1 || buf[6] > 3) {
        ph_error_set(err, PH_EPARSE, "%s: .npy format version %d is not supported (1 to 3)", path, buf[6]);
    } else if (buf[6] > 1 && len < 12) {
        bad_header(err, path, "the .npy file is truncated in its header");
    } else {
        hlen = buf[6] == 1 ? (size_t)buf[8] | (size_t)buf[9] << 8
                           : (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        start = (buf[6] == 1 ? 10 : 12) + hlen;
        if (start > len)
            bad_header(err, path, "the .npy file is truncated in its header");
        else if (parse_dict((const char *)buf + start - hlen, (const char *)buf + start, &h, path, err) == 0) {
            int64_t n = ir_dims_numel(h.dims, h.rank), want = -1;
            size_t es = ph_dtype_size(h.dtype);
            if (n < 0 || ir_mul_ovf(n, (int64_t)es, &want))
                want = -1;
            if (want < 0 || (uint64_t)want != (uint64_t)(len - start)) {
                char shape[256];
                format_shape(shape, sizeof shape, h.rank, h.dims);
                ph_error_set(err, PH_EPARSE, "%s: the .npy data has %zu bytes, but %s %s takes %lld%s", path,
                             len - start, ph_dtype_name(h.dtype), shape, (long long)want,
                             want >= 0 && (uint64_t)want > (uint64_t)(len - start) ? " (truncated file)" : "");
            } else {
                unsigned char *d = buf + start;
                for (int64_t i = 0; h.swap && i < want; i += (int64_t)es)
                    for (size_t a = 0, b = es - 1; a < b; a++, b--) {
                        unsigned char c = d[i + (int64_t)a];
                        d[i + (int64_t)a] = d[i + (int64_t)b];
                        d[i + (int64_t)b] = c;
                    }
                if (!(t = ph_tensor_new(h.dtype, h.rank, h.dims, d)))
                    ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
            }
        }
    }
    free(buf);
    return t;
}
