/* tests/tools/dump_shapes.c - print the inferred type of every value of a model.
 *
 *   dump_shapes [-s NAME:D0xD1x...]... MODEL.onnx
 *
 * Runs ph_graph_infer_shapes (after fixing the given input shapes) and
 * prints one line per graph input and node output, subgraphs included:
 *   NAME<TAB>DTYPE<TAB>[d0,d1,...]
 * with symbolic dims by name, unknown dims as ?, and an unknown rank as ?.
 * Used by scripts/compare_onnx_shapes.py.  Exit 1 when inference fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

static void print_value(const ph_value *v)
{
    printf("%s\t%s\t", ph_value_name(v), ph_value_dtype(v) ? ph_dtype_name(ph_value_dtype(v)) : "?");
    int r = ph_value_rank(v);
    if (r < 0) {
        printf("?\n");
        return;
    }
    putchar('[');
    for (int i = 0; i < r; i++) {
        if (i)
            putchar(',');
        const char *p = ph_value_dim_param(v, i);
        if (ph_value_dim(v, i) >= 0)
            printf("%lld", (long long)ph_value_dim(v, i));
        else if (p && *p)
            printf("%s", p);
        else
            putchar('?');
    }
    printf("]\n");
}

static void dump_graph(const ph_graph *g)
{
    for (size_t i = 0; i < ph_graph_input_count(g); i++)
        print_value(ph_graph_input(g, i));
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        for (size_t s = 0; s < ph_node_subgraph_count(n); s++)
            dump_graph(ph_node_subgraph(n, s));
        for (size_t i = 0; i < ph_node_output_count(n); i++)
            if (ph_node_output(n, i))
                print_value(ph_node_output(n, i));
    }
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    const char *sets[32];
    int nsets = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-s") == 0 && i + 1 < argc && nsets < 32)
            sets[nsets++] = argv[++i];
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: dump_shapes [-s NAME:D0xD1...]... MODEL.onnx\n");
        return 2;
    }
    ph_error err = {0};
    ph_model *m = NULL;
    if (ph_model_load(path, &m, &err)) {
        fprintf(stderr, "dump_shapes: %s\n", err.message);
        return 1;
    }
    ph_graph *g = ph_model_graph(m);
    for (int k = 0; k < nsets; k++) {
        char name[256];
        const char *colon = strrchr(sets[k], ':');
        if (!colon || (size_t)(colon - sets[k]) >= sizeof name)
            return fprintf(stderr, "dump_shapes: bad shape '%s'\n", sets[k]), 2;
        memcpy(name, sets[k], (size_t)(colon - sets[k]));
        name[colon - sets[k]] = 0;
        int64_t dims[64];
        int rank = 0;
        for (const char *p = colon + 1; *p && rank < 64;) {
            char *end;
            dims[rank++] = strtoll(p, &end, 10);
            p = *end == 'x' ? end + 1 : end;
            if (end == p && *p)
                break;
        }
        if (ph_graph_set_input_shape(g, name, rank, dims, &err)) {
            fprintf(stderr, "dump_shapes: %s\n", err.message);
            return 1;
        }
    }
    int rc = ph_graph_infer_shapes(g, &err);
    if (rc) {
        fprintf(stderr, "dump_shapes: %s: %s\n", path, err.message);
        ph_model_free(m);
        return 1;
    }
    dump_graph(g);
    ph_model_free(m);
    return 0;
}
