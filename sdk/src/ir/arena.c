/* sdk/src/ir/arena.c - a model's arena, and copy-on-write of node fields
 * that lie in it.
 *
 * The loader reads the main graph's nodes into the arena (onnx/read_nodes.c):
 * their names, op types, attribute messages and strings, and the names of the
 * values they make, in a few large blocks instead of some twenty small
 * allocations a node.  Nothing in the arena is freed before the model: a
 * node removed by a pass leaves its bytes there, and a pointer read from it
 * (a name, an attribute's ints) stays valid until ph_model_free.
 *
 * Freeing code asks ir_arena_owns before it frees a message or a string it
 * might not own; a function that changes a node's fields first calls
 * ir_node_fields_own, which gives the node malloc'd copies of those that
 * lie in the arena.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct arena_block {
    struct arena_block *next;
    uint8_t *base; /* this struct's own bytes follow the header */
    size_t size, used;
} arena_block;

struct ir_arena {
    arena_block *blocks; /* newest first */
    size_t n_blocks;
};

#define ARENA_FIRST_BLOCK ((size_t)256 << 10)
#define ARENA_MAX_BLOCK ((size_t)64 << 20)
#define ARENA_ALIGN 8u

static arena_block *block_new(size_t size)
{
    arena_block *b = malloc(sizeof *b + size);
    if (!b)
        return NULL;
    b->base = (uint8_t *)(b + 1);
    b->size = size;
    b->used = 0;
    return b;
}

void *ir_arena_alloc(ir_arena **ap, size_t size)
{
    ir_arena *a = *ap;
    if (!a && !(a = *ap = calloc(1, sizeof *a)))
        return NULL;
    size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (!size)
        size = ARENA_ALIGN;
    arena_block *b = a->blocks;
    if (!b || b->size - b->used < size) {
        /* blocks double up to ARENA_MAX_BLOCK; a large request gets its own */
        size_t want = b ? b->size * 2 : ARENA_FIRST_BLOCK;
        if (want > ARENA_MAX_BLOCK)
            want = ARENA_MAX_BLOCK;
        if (want < size)
            want = size;
        arena_block *nb = block_new(want);
        if (!nb)
            return NULL;
        nb->next = a->blocks;
        a->blocks = nb;
        a->n_blocks++;
        b = nb;
    }
    void *p = b->base + b->used;
    b->used += size;
    return p;
}

char *ir_arena_strndup(ir_arena **ap, const char *s, size_t len)
{
    char *d = ir_arena_alloc(ap, len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

int ir_arena_owns(const ir_arena *a, const void *p)
{
    const uint8_t *q = p;
    for (const arena_block *b = a ? a->blocks : NULL; b; b = b->next)
        if (q >= b->base && q < b->base + b->size)
            return 1;
    return 0;
}

void ir_arena_free(ir_arena *a)
{
    if (!a)
        return;
    while (a->blocks) {
        arena_block *next = a->blocks->next;
        free(a->blocks);
        a->blocks = next;
    }
    free(a);
}

size_t ir_arena_bytes(const ir_arena *a)
{
    size_t n = 0;
    for (const arena_block *b = a ? a->blocks : NULL; b; b = b->next)
        n += b->used;
    return n;
}

/* protobuf-c's allocator hook: allocations from the arena, frees ignored
 * (protobuf-c frees only on its failure paths and its scratch space). */
static void *pb_alloc(void *data, size_t size)
{
    return ir_arena_alloc((ir_arena **)data, size);
}

static void pb_free(void *data, void *p)
{
    (void)data, (void)p;
}

ProtobufCAllocator ir_arena_allocator(ir_arena **ap)
{
    return (ProtobufCAllocator){pb_alloc, pb_free, ap};
}

/* ------------------------------------------------------ copy on write */

void *ir_message_copy(const ProtobufCMessage *msg)
{
    size_t size = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return NULL;
    protobuf_c_message_pack(msg, buf);
    ProtobufCMessage *copy = protobuf_c_message_unpack(msg->descriptor, NULL, size, buf);
    free(buf);
    return copy;
}

/* A malloc'd copy of s (NULL stays NULL); 0 or PH_ENOMEM. */
static int own_string(char **s)
{
    if (!*s)
        return 0;
    char *d = ir_strdup(*s);
    if (!d)
        return PH_ENOMEM;
    *s = d;
    return 0;
}

int ir_node_fields_own(ph_node *n)
{
    if (n->fields_owned)
        return 0;
    ir_node_rare *r = n->rare; /* its arrays are the node's already */
    char *name = n->name, *domain = r ? r->domain : NULL, *doc = r ? r->doc_string : NULL;
    char *op_type = r ? r->op_type : NULL;
    Onnx__AttributeProto **attrs = NULL;
    size_t n_attrs = 0;
    int rc = 0;
    if (own_string(&name))
        name = NULL, rc = PH_ENOMEM;
    if (own_string(&domain))
        domain = NULL, rc = PH_ENOMEM;
    if (own_string(&doc))
        doc = NULL, rc = PH_ENOMEM;
    if (own_string(&op_type))
        op_type = NULL, rc = PH_ENOMEM;
    if (!rc && n->n_attrs && !(attrs = malloc(n->n_attrs * sizeof *attrs)))
        rc = PH_ENOMEM;
    for (size_t i = 0; i < n->n_attrs && !rc; i++) {
        Onnx__AttributeProto *a = ir_message_copy(&n->attrs[i]->base);
        if (a && ir_attr_normalize(a)) {
            protobuf_c_message_free_unpacked(&a->base, NULL);
            a = NULL;
        }
        if (!a)
            rc = PH_ENOMEM;
        else
            attrs[n_attrs++] = a;
    }
    if (rc) {
        if (name != n->name)
            free(name);
        if (r && domain != r->domain)
            free(domain);
        if (r && doc != r->doc_string)
            free(doc);
        if (r && op_type != r->op_type)
            free(op_type);
        for (size_t i = 0; i < n_attrs; i++)
            protobuf_c_message_free_unpacked(&attrs[i]->base, NULL);
        free(attrs);
        return rc;
    }
    /* the arena's bytes stay, unused, until the model goes */
    n->name = name;
    if (r) {
        r->domain = domain;
        r->doc_string = doc;
        r->op_type = op_type;
    }
    n->attrs = attrs;
    n->fields_owned = 1;
    return 0;
}
