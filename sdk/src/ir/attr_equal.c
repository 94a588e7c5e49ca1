/* sdk/src/ir/attr_equal.c - comparing and hashing the attributes of two
 * nodes, for passes that merge identical nodes (common subexpressions).
 * Everything is compared exactly: floats by their bits, strings by their
 * bytes (lengths included), tensors by dtype, shape and bytes.  Attributes
 * that cannot be compared (GRAPH, SPARSE_TENSOR, TYPE_PROTO and their lists,
 * TENSORS, references to a function's attributes) make a node equal to no
 * node, itself included. */
#include <string.h>

#include "internal.h"

typedef Onnx__AttributeProto attr_t;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static uint64_t mix_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t f = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        f = (f ^ p[i]) * 0x100000001b3ull;
    return mix(h, f ^ n);
}

static int bytes_eq(const ProtobufCBinaryData *a, const ProtobufCBinaryData *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static int comparable(const attr_t *a)
{
    if (!a->name || (a->ref_attr_name && a->ref_attr_name[0]))
        return 0;
    switch (a->type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return 1;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return a->t != NULL;
    default: return 0;
    }
}

static const attr_t *find(const ph_node *n, const char *name)
{
    for (size_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i]->name && strcmp(n->attrs[i]->name, name) == 0)
            return n->attrs[i];
    return NULL;
}

/* a of node na equals b of node nb (both comparable, same name). */
static int attr_eq(const ph_node *na, const attr_t *a, const ph_node *nb, const attr_t *b)
{
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return a->i == b->i;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return bytes_eq(&a->s, &b->s);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
        return a->n_floats == b->n_floats &&
               (!a->n_floats || memcmp(a->floats, b->floats, a->n_floats * sizeof *a->floats) == 0);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        return a->n_ints == b->n_ints &&
               (!a->n_ints || memcmp(a->ints, b->ints, a->n_ints * sizeof *a->ints) == 0);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
        if (a->n_strings != b->n_strings)
            return 0;
        for (size_t i = 0; i < a->n_strings; i++)
            if (!bytes_eq(&a->strings[i], &b->strings[i]))
                return 0;
        return 1;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
        const ph_tensor *ta = ph_node_attr_tensor(na, a->name), *tb = ph_node_attr_tensor(nb, b->name);
        return ta && tb && ph_tensor_equal(ta, tb);
    }
    default: return 0;
    }
}

PH_API int ph_node_attrs_equal(const ph_node *a, const ph_node *b)
{
    if (a->n_attrs != b->n_attrs)
        return 0;
    for (size_t i = 0; i < a->n_attrs; i++) {
        const attr_t *x = a->attrs[i];
        if (!comparable(x))
            return 0;
        /* usually in the same order: try the same position first */
        const attr_t *y = b->attrs[i];
        if (!y->name || strcmp(y->name, x->name) != 0)
            y = find(b, x->name);
        if (!y || !comparable(y) || !attr_eq(a, x, b, y))
            return 0;
    }
    return 1;
}

PH_API uint64_t ph_node_attrs_hash(const ph_node *n)
{
    uint64_t sum = n->n_attrs;
    for (size_t i = 0; i < n->n_attrs; i++) {
        const attr_t *a = n->attrs[i];
        if (!comparable(a))
            continue; /* equal to nothing anyway */
        uint64_t h = mix_bytes((uint64_t)a->type, a->name, strlen(a->name));
        switch (a->type) {
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: h = mix_bytes(h, &a->f, sizeof a->f); break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: h = mix(h, (uint64_t)a->i); break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: h = mix_bytes(h, a->s.data, a->s.len); break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
            h = mix_bytes(h, a->floats, a->n_floats * sizeof *a->floats);
            break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
            h = mix_bytes(h, a->ints, a->n_ints * sizeof *a->ints);
            break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
            for (size_t k = 0; k < a->n_strings; k++)
                h = mix_bytes(h, a->strings[k].data, a->strings[k].len);
            break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
            const ph_tensor *t = ph_node_attr_tensor(n, a->name);
            if (!t)
                break;
            h = mix(h, (uint64_t)ph_tensor_dtype(t));
            for (size_t k = 0; k < ph_tensor_rank(t); k++)
                h = mix(h, (uint64_t)ph_tensor_dim(t, k));
            const void *d = ph_tensor_data(t);
            size_t nb = ph_tensor_nbytes(t);
            if (d) /* the first bytes are enough to spread equal-shaped tensors */
                h = mix_bytes(h, d, nb < 64 ? nb : 64);
            break;
        }
        default: break;
        }
        sum += h; /* order-independent */
    }
    return sum;
}
