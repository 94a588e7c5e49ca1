/* sdk/src/ir/dims.c - a model's value dims, interned.
 *
 * A value's dims (ph_value.dims) point into a per-model table of distinct
 * dims arrays kept in the model's arena, as shape inference interns whole
 * types: a graph has few distinct shapes, so a million values share a few
 * hundred arrays instead of owning a 32-byte block each.  An interned array
 * is never changed: a setter builds the new dims and interns them. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* An entry: the rank, then the dims; the value points past the rank. */
static uint64_t dims_hash(const int64_t *d, size_t r)
{
    uint64_t h = 1469598103934665603ull ^ r;
    for (size_t i = 0; i < r; i++)
        h = (h ^ (uint64_t)d[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int dims_grow(ir_dims_table *t)
{
    size_t cap = t->cap ? 2 * t->cap : 64;
    int64_t **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return PH_ENOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        int64_t *e = t->slots[i];
        if (!e)
            continue;
        size_t k = dims_hash(e + 1, (size_t)e[0]) & (cap - 1);
        while (slots[k])
            k = (k + 1) & (cap - 1);
        slots[k] = e;
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

const int64_t *ir_dims_intern(ph_model *m, const int64_t *d, size_t r)
{
    if (!m)
        return NULL;
    ir_dims_table *t = &m->dims;
    if (t->last && (size_t)t->last[-1] == r && (!r || memcmp(t->last, d, r * sizeof *d) == 0))
        return t->last;
    if (2 * (t->count + 1) > t->cap && dims_grow(t))
        return NULL;
    size_t k = dims_hash(d, r) & (t->cap - 1);
    for (int64_t *e; (e = t->slots[k]); k = (k + 1) & (t->cap - 1))
        if ((size_t)e[0] == r && (!r || memcmp(e + 1, d, r * sizeof *d) == 0)) /* d may be NULL when r is 0 */
            return t->last = e + 1;
    int64_t *e = ir_arena_alloc(&m->arena, (r + 1) * sizeof *e);
    if (!e)
        return NULL;
    e[0] = (int64_t)r;
    if (r)
        memcpy(e + 1, d, r * sizeof *d);
    t->slots[k] = e;
    t->count++;
    return t->last = e + 1;
}

void ir_dims_free(ph_model *m) { free(m->dims.slots); }
