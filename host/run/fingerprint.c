/* host/run/fingerprint.c - a hash of a model's graphs (fingerprint.h). */
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

static uint64_t mix_value(uint64_t h, const ph_value *v)
{
    if (!v)
        return mix(h, 1);
    h = mix_str(h, ph_value_name(v));
    h = mix(h, (uint64_t)ph_value_dtype(v));
    int rank = ph_value_rank(v);
    h = mix(h, (uint64_t)(int64_t)rank);
    for (int i = 0; i < rank; i++) {
        h = mix(h, (uint64_t)ph_value_dim(v, i));
        h = mix_str(h, ph_value_dim_param(v, i));
    }
    return mix(h, (uint64_t)(uintptr_t)ph_value_const(v));
}

static uint64_t graph_hash(const ph_graph *g, uint64_t h)
{
    for (size_t i = 0; i < ph_graph_input_count(g); i++)
        h = mix_value(h, ph_graph_input(g, i));
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++)
        h = mix_value(h, ph_graph_initializer(g, i));
    for (const ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        h = mix_str(h, ph_node_op_type(n));
        h = mix_str(h, ph_node_domain(n));
        h = mix_str(h, ph_node_name(n));
        for (size_t i = 0; i < ph_node_input_count(n); i++) {
            const ph_value *v = ph_node_input(n, i);
            h = v ? mix_str(h, ph_value_name(v)) : mix(h, 2);
        }
        for (size_t i = 0; i < ph_node_output_count(n); i++)
            h = mix_value(h, ph_node_output(n, i));
        h = mix(h, ph_node_attrs_hash(n));
        for (size_t i = 0; i < ph_node_attr_count(n); i++) {
            const char *a = ph_node_attr_name(n, i);
            if (ph_node_attr_type(n, a) == PH_ATTR_TENSOR) /* the hash reads its first bytes only */
                h = mix(h, (uint64_t)(uintptr_t)ph_node_attr_tensor(n, a));
        }
        for (size_t s = 0; s < ph_node_subgraph_count(n); s++)
            h = graph_hash(ph_node_subgraph(n, s), mix(h, 3));
    }
    for (size_t i = 0; i < ph_graph_output_count(g); i++)
        h = mix_value(h, ph_graph_output(g, i));
    return h;
}

uint64_t host_model_fingerprint(ph_model *m)
{
    uint64_t h = mix(0x243F6A8885A308D3ull, ph_model_initializers_version(m));
    return graph_hash(ph_model_graph(m), h);
}
