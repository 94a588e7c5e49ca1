/* host/run/fingerprint.c - hashes of a model's graphs (fingerprint.h). */
#include "fingerprint.h"

#include <string.h>

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
    uint64_t f = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; s && *s; s++)
        f = (f ^ (unsigned char)*s) * 0x100000001b3ull;
    return mix(h, f);
}

/* One walk that makes both fingerprints: exact (names included) and
 * structure (values by their place of definition, node names aside). */
typedef struct walk {
    uint64_t exact, structure;
    ph_hmap *ids;  /* value -> its number (1, 2, ...) in order of definition */
    uintptr_t next;
    int failed;    /* the map ran out of memory */
} walk;

static void both(walk *w, uint64_t v)
{
    w->exact = mix(w->exact, v);
    w->structure = mix(w->structure, v);
}

/* dtype and dims (numbers and dim names) of v. */
static void mix_type(walk *w, const ph_value *v)
{
    both(w, (uint64_t)ph_value_dtype(v));
    int rank = ph_value_rank(v);
    both(w, (uint64_t)(int64_t)rank);
    for (int i = 0; i < rank; i++) {
        both(w, (uint64_t)ph_value_dim(v, i));
        uint64_t p = mix_str(0, ph_value_dim_param(v, i));
        both(w, p);
    }
}

/* A tensor (an initializer's, a tensor attribute's; may be NULL): by
 * identity in exact (the attribute hash reads its first bytes only); by
 * content when small in structure, so a rewrite that makes the same small
 * constant afresh makes the same structure. */
static void mix_tensor(walk *w, const ph_tensor *t)
{
    w->exact = mix(w->exact, (uint64_t)(uintptr_t)t);
    size_t nbytes = t ? ph_tensor_nbytes(t) : 0;
    const void *data = t ? ph_tensor_data(t) : NULL;
    if (!t || nbytes > 256 || (nbytes && !data)) {
        w->structure = mix(w->structure, (uint64_t)(uintptr_t)t);
        return;
    }
    w->structure = mix(w->structure, (uint64_t)ph_tensor_dtype(t));
    for (size_t d = 0; d < ph_tensor_rank(t); d++)
        w->structure = mix(w->structure, (uint64_t)ph_tensor_dim(t, d));
    w->structure = mix(w->structure, ph_hash_bytes(nbytes, data, nbytes));
}

/* v is defined here (a graph input, an initializer, a node output): its
 * name (exact; structure too when named is set), its number (structure),
 * its type and constant. */
static void define(walk *w, const ph_value *v, int named)
{
    if (!v) {
        both(w, 1);
        return;
    }
    w->exact = mix_str(w->exact, ph_value_name(v));
    if (!w->failed && ph_hmap_put(w->ids, ph_hash_ptr(v), v, (void *)++w->next))
        w->failed = 1;
    if (named)
        w->structure = mix_str(w->structure, ph_value_name(v));
    else
        w->structure = mix(w->structure, (uint64_t)w->next);
    mix_type(w, v);
    mix_tensor(w, ph_value_const(v));
}

/* v is read here (a node input, a graph output). */
static void use(walk *w, const ph_value *v, int named)
{
    if (!v) {
        both(w, 2);
        return;
    }
    w->exact = mix_str(w->exact, ph_value_name(v));
    uintptr_t id = w->failed ? 0 : (uintptr_t)ph_hmap_get(w->ids, ph_hash_ptr(v), v);
    if (named || !id)
        w->structure = mix_str(w->structure, ph_value_name(v));
    if (id)
        w->structure = mix(w->structure, (uint64_t)id);
}

static void graph_hash(walk *w, const ph_graph *g, int main_graph)
{
    for (size_t i = 0; i < ph_graph_input_count(g); i++)
        define(w, ph_graph_input(g, i), main_graph);
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++)
        define(w, ph_graph_initializer(g, i), 0);
    for (const ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        w->exact = mix_str(w->exact, ph_node_op_type(n));
        w->structure = mix_str(w->structure, ph_node_op_type(n));
        w->exact = mix_str(w->exact, ph_node_domain(n));
        w->structure = mix_str(w->structure, ph_node_domain(n));
        w->exact = mix_str(w->exact, ph_node_name(n));
        for (size_t i = 0; i < ph_node_input_count(n); i++)
            use(w, ph_node_input(n, i), 0);
        for (size_t i = 0; i < ph_node_output_count(n); i++)
            define(w, ph_node_output(n, i), 0);
        both(w, ph_node_attrs_hash(n));
        for (size_t i = 0; i < ph_node_attr_count(n); i++) {
            const char *a = ph_node_attr_name(n, i);
            if (ph_node_attr_type(n, a) == PH_ATTR_TENSOR)
                mix_tensor(w, ph_node_attr_tensor(n, a));
        }
        for (size_t s = 0; s < ph_node_subgraph_count(n); s++) {
            both(w, 3);
            graph_hash(w, ph_node_subgraph(n, s), 0);
        }
    }
    for (size_t i = 0; i < ph_graph_output_count(g); i++) {
        const ph_value *v = ph_graph_output(g, i);
        use(w, v, main_graph);
        if (v)
            mix_type(w, v);
    }
}

int host_model_fingerprint(ph_model *m, ph_hmap *ids, host_fingerprint *out)
{
    if (!ids)
        return PH_ENOMEM;
    walk w = {.ids = ids};
    ph_hmap_clear(ids);
    both(&w, 0x243F6A8885A308D3ull);
    both(&w, ph_model_initializers_version(m));
    graph_hash(&w, ph_model_graph(m), 1);
    *out = (host_fingerprint){.exact = w.exact, .structure = w.structure};
    return w.failed ? PH_ENOMEM : 0;
}
