/* passhost/hashmap.h - one hash map for passes and the SDK: keys the
 * caller hashes and compares, pointer values.
 *
 * A pass that groups nodes, values or tensors by content (common
 * subexpressions, duplicate initializers, a memo of computed constants)
 * hashes each key itself (ph_hash_mix, ph_hash_ptr, ph_hash_bytes) and
 * gives the map that hash, the key and, once for the map, how to compare
 * two keys with equal hashes.  Open addressing with linear probing, at most
 * half full, so a lookup costs one or two cache lines.
 *
 *     ph_hmap *seen = ph_hmap_new(same_node, NULL);
 *     int created;
 *     void **slot = ph_hmap_slot(seen, node_hash(n), n, &created);
 *     if (!slot) return PH_ENOMEM;
 *     if (created) *slot = n;          // first of its kind
 *     else merge(*slot, n);            // an equal node was seen before
 *
 * Ownership: the map owns its table; keys and values are borrowed (the
 * caller keeps each key alive while it is in the map).  No global state.
 */
#ifndef PASSHOST_HASHMAP_H
#define PASSHOST_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ph_hmap ph_hmap;

/* 1 when keys a and b (whose hashes are equal) are the same key. */
typedef int (*ph_hmap_eq_fn)(const void *a, const void *b, void *user);

/* A new empty map comparing keys with eq (NULL: keys are the same when
 * their pointers are, e.g. nodes or values themselves); user is passed to
 * eq.  Caller frees with ph_hmap_free.  NULL when out of memory. */
PH_API ph_hmap *ph_hmap_new(ph_hmap_eq_fn eq, void *user);
PH_API void ph_hmap_free(ph_hmap *m);
/* Make room for n entries in all (so filling it never rehashes).  0 or
 * PH_ENOMEM. */
PH_API int ph_hmap_reserve(ph_hmap *m, size_t n);
/* Number of entries. */
PH_API size_t ph_hmap_count(const ph_hmap *m);
/* Forget every entry (the table is kept for reuse). */
PH_API void ph_hmap_clear(ph_hmap *m);

/* The value stored under key (hash h), or NULL when there is none. */
PH_API void *ph_hmap_get(const ph_hmap *m, uint64_t h, const void *key);
/* The stored key equal to key, or NULL. */
PH_API const void *ph_hmap_key(const ph_hmap *m, uint64_t h, const void *key);
/* The value slot of key: found (*created 0), or inserted with a NULL value
 * (*created 1; the caller fills it).  The pointer is valid until the next
 * insertion.  NULL when out of memory (nothing inserted). */
PH_API void **ph_hmap_slot(ph_hmap *m, uint64_t h, const void *key, int *created);
/* Insert key -> val, or overwrite the value of an equal key.  0 or
 * PH_ENOMEM. */
PH_API int ph_hmap_put(ph_hmap *m, uint64_t h, const void *key, void *val);

/* Every entry, in table order: start with *pos = 0; 1 and the entry while
 * there is one, then 0.  The map must not change during the walk. */
PH_API int ph_hmap_next(const ph_hmap *m, size_t *pos, const void **key, void **val);

/* Hashing helpers: a 64-bit mix of h and v (order matters); the hash of a
 * pointer; the hash of n bytes (any alignment), seeded. */
PH_API uint64_t ph_hash_mix(uint64_t h, uint64_t v);
PH_API uint64_t ph_hash_ptr(const void *p);
PH_API uint64_t ph_hash_bytes(uint64_t seed, const void *data, size_t n);

#ifdef __cplusplus
}
#endif
#endif
