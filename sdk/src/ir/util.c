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

static const char ir_tombstone[1];

static uint64_t hash_finish(uint64_t h)
{
    h ^= h >> 33; /* murmur3 finalizer: spread similar names over the table */
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

/* The hash of the first len bytes of s: hash_str of the same text. */
static uint64_t hash_mem(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return hash_finish(h);
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return hash_finish(h);
}


void ir_map_free(ir_map *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* The slot holding key (found = 1), or where to insert it. */
static size_t map_find(const ir_map *m, const char *key, uint64_t h, int *found)
{
    size_t mask = m->cap - 1, i = h & mask, tomb = (size_t)-1;
    for (;;) {
        const ir_map_entry *e = &m->slots[i];
        if (!e->key) {
            *found = 0;
            return tomb != (size_t)-1 ? tomb : i;
        }
        if (e->key == ir_tombstone) {
            if (tomb == (size_t)-1)
                tomb = i;
        } else if (e->hash == h && strcmp(e->key, key) == 0) {
            *found = 1;
            return i;
        }
        i = (i + 1) & mask;
    }
}

void *ir_map_get_mem(const ir_map *m, const char *key, size_t len)
{
    if (!m->cap)
        return NULL;
    uint64_t h = hash_mem(key, len);
    for (size_t mask = m->cap - 1, i = h & mask;; i = (i + 1) & mask) {
        const ir_map_entry *e = &m->slots[i];
        if (!e->key)
            return NULL;
        if (e->key != ir_tombstone && e->hash == h && strncmp(e->key, key, len) == 0 &&
            e->key[len] == '\0')
            return e->val;
    }
}

void *ir_map_get(const ir_map *m, const char *key)
{
    if (!m->cap)
        return NULL;
    int found;
    size_t i = map_find(m, key, hash_str(key), &found);
    return found ? m->slots[i].val : NULL;
}

static int map_rehash(ir_map *m, size_t ncap)
{
    ir_map_entry *slots = calloc(ncap, sizeof *slots);
    if (!slots)
        return PH_ENOMEM;
    size_t count = 0;
    for (size_t i = 0; i < m->cap; i++) {
        const ir_map_entry *e = &m->slots[i];
        if (e->key && e->key != ir_tombstone) {
            size_t j = e->hash & (ncap - 1); /* keys are distinct: just probe for a hole */
            while (slots[j].key)
                j = (j + 1) & (ncap - 1);
            slots[j] = *e;
            count++;
        }
    }
    free(m->slots);
    m->slots = slots;
    m->cap = ncap;
    m->count = m->used = count;
    return 0;
}

/* Room for one more key: at most three quarters full (tombstones count);
 * at most half full after growing.  Every slot holds its key's hash, so a
 * probe compares strings only on a hash match and the longer runs of a
 * fuller table cost little; a million names take 2^21 slots (48 MB), not
 * 2^22. */
static int map_reserve(ir_map *m)
{
    if ((m->used + 1) * 4 < m->cap * 3)
        return 0;
    size_t ncap = m->cap ? m->cap : 16;
    while ((m->count + 1) * 2 >= ncap)
        ncap *= 2;
    return map_rehash(m, ncap);
}

int ir_map_put(ir_map *m, const char *key, void *val)
{
    if (map_reserve(m))
        return PH_ENOMEM;
    int found;
    uint64_t h = hash_str(key);
    size_t i = map_find(m, key, h, &found);
    ir_map_entry *e = &m->slots[i];
    if (!found) {
        if (!e->key)
            m->used++;
        m->count++;
    }
    e->key = key;
    e->val = val;
    e->hash = h;
    return 0;
}

int ir_map_add(ir_map *m, const char *key, void *val)
{
    if (map_reserve(m))
        return PH_ENOMEM;
    int found;
    uint64_t h = hash_str(key);
    size_t i = map_find(m, key, h, &found);
    if (found)
        return PH_EEXIST;
    ir_map_entry *e = &m->slots[i];
    if (!e->key)
        m->used++;
    m->count++;
    e->key = key;
    e->val = val;
    e->hash = h;
    return 0;
}

ir_map_entry *ir_map_lookup(const ir_map *m, const char *key)
{
    if (!m->cap)
        return NULL;
    int found;
    size_t i = map_find(m, key, hash_str(key), &found);
    return found ? &m->slots[i] : NULL;
}

ir_map_entry *ir_map_upsert(ir_map *m, const char *key, int *created)
{
    if (map_reserve(m))
        return NULL;
    int found;
    uint64_t h = hash_str(key);
    size_t i = map_find(m, key, h, &found);
    ir_map_entry *e = &m->slots[i];
    *created = !found;
    if (!found) {
        if (!e->key)
            m->used++;
        m->count++;
        e->key = key;
        e->val = NULL;
        e->hash = h;
    }
    return e;
}

void ir_map_remove(ir_map *m, ir_map_entry *e)
{
    size_t i = (size_t)(e - m->slots);
    int last = !m->slots[(i + 1) & (m->cap - 1)].key;
    e->key = last ? NULL : ir_tombstone;
    e->val = NULL;
    m->count--;
    if (last)
        m->used--;
}

void ir_map_del(ir_map *m, const char *key, const void *val)
{
    if (!m->cap)
        return;
    int found;
    size_t i = map_find(m, key, hash_str(key), &found);
    if (found && (!val || m->slots[i].val == val)) {
        /* a slot whose successor is empty ends no probe run: empty it */
        int last = !m->slots[(i + 1) & (m->cap - 1)].key;
        m->slots[i].key = last ? NULL : ir_tombstone;
        m->slots[i].val = NULL;
        m->count--;
        if (last)
            m->used--;
    }
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

void ir_unmap_file(ir_mapping *m)
{
    if (!m)
        return;
    if (m->data)
        munmap((void *)m->data, m->size);
    free(m->path);
    free(m);
}
