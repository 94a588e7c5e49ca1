/* sdk/src/ir/names.c - the model's name maps (ir_names): the values by name,
 * the nodes by name.
 *
 * A slot is 8 bytes: the object's pointer, with 16 bits of its name's hash
 * in the pointer's unused top bits (user-space addresses fit in 48 bits), so
 * a probe reads the object only when those bits agree.  The key is the
 * object's own name, read through the object: no key pointer, no copy.  A
 * value keeps the 32-bit hash of its name (ph_value.name_hash) for the
 * rehash; a node's is computed again.  A million names take 2^21 slots of 8
 * bytes (16 MB), where a slot holding hash, key and value took 24. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SLOT_TOMB ((uint64_t)1) /* a removed entry (no object is at address 1) */
#define PTR_BITS 48
#define PTR_MASK ((((uint64_t)1) << PTR_BITS) - 1)

/* The hash of a name: 8 bytes at a time (names are mostly 10 to 40 bytes:
 * a third of the work of a byte-wise hash), the low 32 bits kept. */
uint32_t ir_name_hash(const void *key, size_t len)
{
    const char *s = key;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ len;
    for (; len >= 8; s += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    for (size_t k = 0; k < len; k++)
        w |= (uint64_t)(unsigned char)s[k] << (8 * k);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    h *= 0xff51afd7ed558ccdull;
    return (uint32_t)(h ^ (h >> 32));
}

/* The 16 bits kept in the slot: the hash's bits mixed again, so that they
 * differ from the bits that choose the slot. */
static uint64_t tag_of(uint32_t h) { return (uint64_t)((h * 0x9E3779B1u) >> 16) << PTR_BITS; }

static const char *obj_name(const ir_names *m, const void *o)
{
    if (m->nodes) {
        return ((const ph_node *)o)->name;
    }
    return ((const ph_value *)o)->name;
}

static uint32_t obj_hash(const ir_names *m, const void *o)
{
    if (m->nodes) {
        const char *s = obj_name(m, o);
        return ir_name_hash(s, strlen(s));
    }
    return ((const ph_value *)o)->name_hash;
}

static void *slot_obj(const ir_names *m, uint64_t s)
{
    return (void *)(uintptr_t)(m->wide ? s : s & PTR_MASK);
}

static uint64_t slot_of(const ir_names *m, const void *o, uint32_t h)
{
    return m->wide ? (uint64_t)(uintptr_t)o : tag_of(h) | (uint64_t)(uintptr_t)o;
}

/* s may hold an object whose name hashes to h (tag check only). */
static int tag_agrees(const ir_names *m, uint64_t s, uint32_t h)
{
    return m->wide || (s & ~PTR_MASK) == tag_of(h);
}

/* The object of slot s when its name is key[0, len), else NULL. */
static inline __attribute__((always_inline)) void *slot_match(const ir_names *m, uint64_t s, const char *key, size_t len, uint32_t h)
{
    if (s == SLOT_TOMB || !tag_agrees(m, s, h))
        return NULL;
    void *o = slot_obj(m, s);
    if (!m->nodes && ((const ph_value *)o)->name_hash != h)
        return NULL;
    const char *name = obj_name(m, o);
    return name && strncmp(name, key, len) == 0 && name[len] == '\0' ? o : NULL;
}

void ir_names_init(ir_names *m, int nodes)
{
    memset(m, 0, sizeof *m);
    m->nodes = (uint8_t)(nodes != 0);
}

void ir_names_free(ir_names *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = m->used = 0;
}

void *ir_names_get_mem(const ir_names *m, const char *key, size_t len)
{
    return m->cap ? ir_names_get_hashed(m, key, len, ir_name_hash(key, len)) : NULL;
}

void *ir_names_get_hashed(const ir_names *m, const char *key, size_t len, uint32_t h)
{
    if (!m->cap)
        return NULL;
    for (size_t mask = m->cap - 1, i = h & mask;; i = (i + 1) & mask) {
        uint64_t s = m->slots[i];
        if (!s)
            return NULL;
        void *o = slot_match(m, s, key, len, h);
        if (o)
            return o;
    }
}

void *ir_names_get(const ir_names *m, const char *key)
{
    return m->cap ? ir_names_get_mem(m, key, strlen(key)) : NULL;
}

size_t ir_names_count(const ir_names *m, const char *key)
{
    if (!m->cap)
        return 0;
    size_t len = strlen(key), count = 0;
    uint32_t h = ir_name_hash(key, len);
    for (size_t mask = m->cap - 1, i = h & mask; m->slots[i]; i = (i + 1) & mask)
        if (slot_match(m, m->slots[i], key, len, h))
            count++;
    return count;
}

/* Zeroed room for ncap slots.  A large map (a million names take 16 MB)
 * is probed at random, so nearly every probe also missed the TLB with 4 KB
 * pages: it asks for huge pages (a hint; the kernel may say no). */
static uint64_t *slots_new(size_t ncap)
{
    size_t bytes = ncap * sizeof(uint64_t), huge = (size_t)2 << 20;
    void *p = NULL;
    if (bytes >= huge && bytes / sizeof(uint64_t) == ncap && posix_memalign(&p, huge, bytes) == 0) {
        ir_prefer_huge_pages(p, bytes);
        return memset(p, 0, bytes);
    }
    return calloc(ncap, sizeof(uint64_t));
}

static int rehash(ir_names *m, size_t ncap)
{
    uint64_t *slots = slots_new(ncap);
    if (!slots)
        return PH_ENOMEM;
    size_t count = 0;
    for (size_t i = 0; i < m->cap; i++) {
        uint64_t s = m->slots[i];
        if (!s || s == SLOT_TOMB)
            continue;
        uint32_t h = obj_hash(m, slot_obj(m, s));
        size_t j = h & (ncap - 1);
        while (slots[j])
            j = (j + 1) & (ncap - 1);
        slots[j] = s;
        count++;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = ncap;
    m->count = m->used = count;
    return 0;
}

/* Room for n entries: at most three quarters of the slots taken (removed
 * ones count), at most half after growing. */
int ir_names_reserve(ir_names *m, size_t n)
{
    size_t more = n > m->count ? n - m->count : 0;
    if (m->cap && (m->used + more) * 4 < m->cap * 3)
        return 0;
    size_t ncap = m->cap ? m->cap : 16;
    while (n * 2 >= ncap)
        ncap *= 2;
    return rehash(m, ncap);
}

/* The size adding n entries one by one would reach (ir_names_add grows the
 * map when an entry would take three quarters of the slots), at once. */
int ir_names_presize(ir_names *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 16;
    while (n * 4 >= cap * 3)
        cap *= 2;
    return cap > m->cap ? rehash(m, cap) : 0;
}

/* A pointer that does not fit in 48 bits: every slot holds its plain
 * pointer from now on (each probe then reads the object). */
static void go_wide(ir_names *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i] && m->slots[i] != SLOT_TOMB)
            m->slots[i] &= PTR_MASK;
    m->wide = 1;
}

int ir_names_add(ir_names *m, void *o, int unique)
{
    if ((m->used + 1) * 4 >= m->cap * 3 && ir_names_reserve(m, m->count + 1))
        return PH_ENOMEM;
    if (!m->wide && ((uint64_t)(uintptr_t)o & ~PTR_MASK))
        go_wide(m);
    const char *name = obj_name(m, o);
    size_t len = strlen(name);
    uint32_t h = ir_name_hash(name, len);
    if (!m->nodes)
        ((ph_value *)o)->name_hash = h;
    size_t mask = m->cap - 1, i = h & mask, at = (size_t)-1;
    for (;; i = (i + 1) & mask) {
        uint64_t s = m->slots[i];
        if (!s)
            break;
        if (s == SLOT_TOMB) {
            if (at == (size_t)-1)
                at = i;
            if (!unique)
                break;
        } else if (unique && slot_match(m, s, name, len, h)) {
            return PH_EEXIST;
        }
    }
    if (at == (size_t)-1) {
        at = i;
        m->used++;
    }
    m->slots[at] = slot_of(m, o, h);
    m->count++;
    return 0;
}

void ir_names_del(ir_names *m, const void *o)
{
    if (!m->cap)
        return;
    uint32_t h = obj_hash(m, o);
    uint64_t want = slot_of(m, o, h);
    for (size_t mask = m->cap - 1, i = h & mask; m->slots[i]; i = (i + 1) & mask)
        if (m->slots[i] == want) {
            /* a slot whose successor is empty ends no probe run: empty it */
            int last = !m->slots[(i + 1) & mask];
            m->slots[i] = last ? 0 : SLOT_TOMB;
            m->count--;
            if (last)
                m->used--;
            return;
        }
}

int ir_names_value_hash_agrees(const ph_value *v)
{
    return v->name && ir_name_hash(v->name, strlen(v->name)) == v->name_hash;
}
