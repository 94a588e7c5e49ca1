/* sdk/src/ir/hashmap.c - the public hash map (passhost/hashmap.h): open
 * addressing, linear probing, at most half full; entries hold the caller's
 * hash, so a probe compares keys only when the hashes agree. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "passhost/hashmap.h"

typedef struct hm_entry {
    uint64_t hash;
    const void *key; /* NULL: empty */
    void *val;
} hm_entry;

struct ph_hmap {
    hm_entry *slots;
    size_t cap; /* a power of two, or 0 */
    size_t count;
    ph_hmap_eq_fn eq;
    void *user;
};

/* A key stands for "no key" in an empty slot: a NULL key is stored as this. */
static const char null_key;

PH_API ph_hmap *ph_hmap_new(ph_hmap_eq_fn eq, void *user)
{
    ph_hmap *m = calloc(1, sizeof *m);
    if (m) {
        m->eq = eq;
        m->user = user;
    }
    return m;
}

PH_API void ph_hmap_free(ph_hmap *m)
{
    if (m) {
        free(m->slots);
        free(m);
    }
}

PH_API size_t ph_hmap_count(const ph_hmap *m) { return m->count; }

PH_API void ph_hmap_clear(ph_hmap *m)
{
    if (m->cap)
        memset(m->slots, 0, m->cap * sizeof *m->slots);
    m->count = 0;
}

static int same(const ph_hmap *m, const hm_entry *e, uint64_t h, const void *key)
{
    if (e->hash != h)
        return 0;
    const void *k = e->key == &null_key ? NULL : e->key;
    return k == key || (m->eq && k && key && m->eq(k, key, m->user));
}

/* The slot of key, or the empty slot where it would go (cap > 0). */
static hm_entry *probe(const ph_hmap *m, uint64_t h, const void *key)
{
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask)
        if (!m->slots[i].key || same(m, &m->slots[i], h, key))
            return &m->slots[i];
}

static int resize(ph_hmap *m, size_t cap)
{
    hm_entry *old = m->slots;
    size_t old_cap = m->cap;
    m->slots = calloc(cap, sizeof *m->slots);
    if (!m->slots) {
        m->slots = old;
        return PH_ENOMEM;
    }
    m->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key) {
            size_t mask = cap - 1, k = (size_t)old[i].hash & mask;
            while (m->slots[k].key)
                k = (k + 1) & mask;
            m->slots[k] = old[i];
        }
    free(old);
    return 0;
}

PH_API int ph_hmap_reserve(ph_hmap *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 16;
    while (cap < 2 * n)
        cap *= 2;
    return cap > m->cap ? resize(m, cap) : 0;
}

PH_API void *ph_hmap_get(const ph_hmap *m, uint64_t h, const void *key)
{
    if (!m->cap)
        return NULL;
    const hm_entry *e = probe(m, h, key);
    return e->key ? e->val : NULL;
}

PH_API const void *ph_hmap_key(const ph_hmap *m, uint64_t h, const void *key)
{
    if (!m->cap)
        return NULL;
    const hm_entry *e = probe(m, h, key);
    return e->key && e->key != &null_key ? e->key : NULL;
}

PH_API void **ph_hmap_slot(ph_hmap *m, uint64_t h, const void *key, int *created)
{
    if (2 * (m->count + 1) > m->cap && resize(m, m->cap ? 2 * m->cap : 16))
        return NULL;
    hm_entry *e = probe(m, h, key);
    *created = !e->key;
    if (!e->key) {
        e->hash = h;
        e->key = key ? key : &null_key;
        e->val = NULL;
        m->count++;
    }
    return &e->val;
}

PH_API int ph_hmap_put(ph_hmap *m, uint64_t h, const void *key, void *val)
{
    int created;
    void **slot = ph_hmap_slot(m, h, key, &created);
    if (!slot)
        return PH_ENOMEM;
    *slot = val;
    return 0;
}

PH_API int ph_hmap_next(const ph_hmap *m, size_t *pos, const void **key, void **val)
{
    for (; *pos < m->cap; (*pos)++)
        if (m->slots[*pos].key) {
            const hm_entry *e = &m->slots[(*pos)++];
            if (key)
                *key = e->key == &null_key ? NULL : e->key;
            if (val)
                *val = e->val;
            return 1;
        }
    return 0;
}

PH_API uint64_t ph_hash_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

PH_API uint64_t ph_hash_ptr(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    return x ^ (x >> 33);
}

static uint64_t mix_word(uint64_t h, uint64_t w)
{
    h ^= w;
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

PH_API uint64_t ph_hash_bytes(uint64_t seed, const void *data, size_t n)
{
    /* 8 bytes at a time in four independent lanes (the multiplies overlap),
     * folded at the end */
    const unsigned char *p = data;
    uint64_t lane[4] = {seed, seed ^ 0x243F6A8885A308D3ull, seed ^ 0x13198A2E03707344ull,
                        seed ^ 0xA4093822299F31D0ull};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * k, 8);
            lane[k] = mix_word(lane[k], w);
        }
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        lane[0] = mix_word(lane[0], w);
    }
    uint64_t tail = 0;
    for (size_t k = 0; i < n; i++, k++)
        tail |= (uint64_t)p[i] << (8 * k);
    uint64_t h = mix_word(mix_word(mix_word(mix_word(lane[0], lane[1]), lane[2]), lane[3]), tail);
    return mix_word(h, n);
}
