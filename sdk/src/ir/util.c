/* sdk/src/ir/util.c - errors, dtypes, the string map, growable arrays, file mappings. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "passhost/hashmap.h"

/* ----------------------------------------------------------------- errors */

PH_API const char *ph_strerror(int code)
{
    switch (code) {
#define PH_X_STR(name, value, desc) case value: return desc;
        PH_ERROR_TABLE(PH_X_STR)
#undef PH_X_STR
    default:
        return "unknown error";
    }
}

PH_API int ph_error_set(ph_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* ----------------------------------------------------------------- dtypes */

/* ------------------------------------------------------------ close names */

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t row_buf[64], *row = lb < 64 ? row_buf : malloc((lb + 1) * sizeof *row);
    if (!row)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[lb];
    if (row != row_buf)
        free(row);
    return d;
}

PH_API size_t ph_close_names(const char *name, const char *const *cands, size_t n, const char **out,
                             size_t max)
{
    size_t limit = strlen(name) / 3 > 2 ? strlen(name) / 3 : 2, count = 0;
    size_t dist[16];
    if (max > 16)
        max = 16;
    for (size_t i = 0; i < n && max; i++) {
        size_t d = edit_distance(name, cands[i]);
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
    return count;
}

PH_API char *ph_close_names_text(const char *name, const char *const *cands, size_t n, char *buf,
                                 size_t size)
{
    const char *near[3];
    size_t k = ph_close_names(name, cands, n, near, 3), len = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < k && len < size; i++) {
        int w = snprintf(buf + len, size - len, "%s'%s'", i == 0 ? "" : i + 1 == k ? " or " : ", ", near[i]);
        len += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

PH_API size_t ph_dtype_size(int dtype)
{
    switch (dtype) {
    case PH_DT_FLOAT: case PH_DT_INT32: case PH_DT_UINT32: return 4;
    case PH_DT_UINT8: case PH_DT_INT8: case PH_DT_BOOL: return 1;
    case PH_DT_UINT16: case PH_DT_INT16: case PH_DT_FLOAT16: case PH_DT_BFLOAT16: return 2;
    case PH_DT_INT64: case PH_DT_DOUBLE: case PH_DT_UINT64: case PH_DT_COMPLEX64: return 8;
    case PH_DT_COMPLEX128: return 16;
    default: return 0;
    }
}

PH_API const char *ph_dtype_name(int dtype)
{
    static const char *const names[] = {
        "undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64",
        "string", "bool", "float16", "double", "uint32", "uint64", "complex64",
        "complex128", "bfloat16"};
    if (dtype >= 0 && dtype < (int)(sizeof names / sizeof names[0]))
        return names[dtype];
    return "unknown";
}

/* ------------------------------------------------------------------ misc */

char *ir_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

int ir_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 4;
    while (nc < need)
        nc *= 2;
    void *p = realloc(*arr, nc * elem);
    if (!p)
        return PH_ENOMEM;
    *arr = p;
    *cap = nc;
    return 0;
}

/* ------------------------------------------------------------ string map */

/* ir_map: the public hash map (ir/hashmap.c) with NUL-terminated keys. */

static int same_text(const void *a, const void *b, void *user)
{
    (void)user;
    return strcmp(a, b) == 0;
}

static uint64_t text_hash(const char *key) { return ph_hash_bytes(0, key, strlen(key)); }

void ir_map_free(ir_map *m)
{
    ph_hmap_free(m->h);
    m->h = NULL;
}

void *ir_map_get(const ir_map *m, const char *key)
{
    return m->h ? ph_hmap_get(m->h, text_hash(key), key) : NULL;
}

int ir_map_put(ir_map *m, const char *key, void *val)
{
    if (!m->h && !(m->h = ph_hmap_new(same_text, NULL)))
        return PH_ENOMEM;
    return ph_hmap_put(m->h, text_hash(key), key, val);
}

/* --------------------------------------------------------------- mappings */

/* Map the file open on fd (closed here in every case); path is for the
 * messages and the mapping's name. */
static ir_mapping *map_fd(int fd, const char *path, ph_error *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        ph_error_set(err, PH_EIO, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        ph_error_set(err, PH_EIO, "%s: not a regular file (%s)", path, ir_file_kind(st.st_mode));
        close(fd);
        return NULL;
    }
    ir_mapping *m = calloc(1, sizeof *m);
    if (!m || !(m->path = ir_strdup(path))) {
        free(m);
        close(fd);
        ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    m->size = (size_t)st.st_size;
    m->dev = (uint64_t)st.st_dev;
    m->ino = (uint64_t)st.st_ino;
    if (m->size > 0) {
        void *p = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            ph_error_set(err, PH_EIO, "%s: cannot map: %s", path, strerror(errno));
            free(m->path);
            free(m);
            close(fd);
            return NULL;
        }
        madvise(p, m->size, MADV_SEQUENTIAL);
        m->data = p;
    }
    close(fd);
    return m;
}

/* A name for what a file of this mode is, for messages: "a FIFO". */
const char *ir_file_kind(unsigned mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a folder";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    }
    return "not a file";
}

/* O_NONBLOCK: opening a FIFO without a writer (or a device that waits for
 * one) must not block before map_fd refuses what is not a regular file;
 * the flag changes nothing for a regular file, which is only mapped. */
ir_mapping *ir_map_file(const char *path, ph_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* a socket: ENXIO */
        ph_error_set(err, PH_EIO, "%s: not a regular file (%s)", path, ir_file_kind(st.st_mode));
        return NULL;
    }
    if (fd < 0) {
        ph_error_set(err, PH_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    return map_fd(fd, path, err);
}

/* The bytes go to an in-memory file (memfd) that is then mapped like any
 * file: the save may drop pages of a mapping it has written out
 * (MADV_DONTNEED), which a file-backed mapping reads again and anonymous
 * memory would lose. */
ir_mapping *ir_map_memory(const void *data, size_t size, const char *name, ph_error *err)
{
    int fd = memfd_create("passhost-model", MFD_CLOEXEC);
    if (fd < 0) {
        ph_error_set(err, PH_EIO, "%s: cannot make an in-memory file: %s", name, strerror(errno));
        return NULL;
    }
    const uint8_t *p = data;
    for (size_t left = size; left > 0;) {
        ssize_t k = write(fd, p, left);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            ph_error_set(err, k < 0 && errno == ENOMEM ? PH_ENOMEM : PH_EIO, "%s: cannot copy the model: %s",
                         name, k < 0 ? strerror(errno) : "short write");
            close(fd);
            return NULL;
        }
        p += k;
        left -= (size_t)k;
    }
    return map_fd(fd, name, err);
}

void ir_mapping_release(const ir_mapping *m)
{
    if (m && m->data && m->size)
        madvise((void *)m->data, m->size, MADV_DONTNEED);
}

const uint8_t *ir_mapping_release_range(const ir_mapping *m, const void *lo, const void *hi)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)lo + page - 1) & ~(page - 1), b = (uintptr_t)hi & ~(page - 1);
    uintptr_t start = (uintptr_t)m->data, end = start + m->size;
    if (a < start)
        a = (start + page - 1) & ~(page - 1);
    if (b > end)
        b = end & ~(page - 1);
    if (a < b)
        madvise((void *)a, b - a, MADV_DONTNEED);
    return (const uint8_t *)(a < b ? b : a);
}

void ir_unmap_file(ir_mapping *m)
{
    if (!m)
        return;
    if (m->data)
        munmap((void *)m->data, m->size);
    free(m->path);
    free(m);
}

void ir_prefer_huge_pages(void *buf, size_t nbytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)buf + huge - 1) & ~(huge - 1), hi = ((uintptr_t)buf + nbytes) & ~(huge - 1);
    if (hi <= lo)
        return;
    madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)buf, (void)nbytes;
#endif
}
