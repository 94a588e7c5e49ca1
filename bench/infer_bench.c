/* bench/infer_bench.c - timing of shape inference on a generated 100k-node graph.
 *
 *   infer_bench [NODES]      (default 100000)
 *
 * Builds in memory (public SDK builder API) a chain of 12-node blocks on
 * x: float[batch, seq, 64], each shaped like a torch-exported attention
 * reshape so the symbolic dims and the shape constants are exercised:
 *
 *     a = MatMul(x, W)  b = Add(a, B)  c = Relu(b)
 *     s = Shape(c)  g = Gather(s, 0)  u = Unsqueeze(g, [0])
 *     t = Concat(u, [-1, 4, 16])  r = Reshape(c, t)      -> [batch, seq, 4, 16]
 *     p = Transpose(r, 0,2,1,3)  q = Transpose(p, 0,2,1,3)
 *     o = Reshape(q, [0, 0, 64])  y = Add(o, x)          -> next block's x
 *
 * and prints: the full ph_graph_infer_shapes time; ph_graph_update_shapes
 * after a local rewrite (an Identity inserted in the middle block), after an
 * attribute change whose effect stays local, with nothing to do, and after
 * fixing the input shape (which changes every value). */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static ph_value *i64s(ph_graph *g, int n, const int64_t *v)
{
    int64_t d = n;
    return ph_graph_add_initializer(g, "k", ph_tensor_new(PH_DT_INT64, 1, &d, v));
}

static ph_node *mk(ph_graph *g, const char *op, size_t n, ph_value *a, ph_value *b)
{
    ph_value *ins[2] = {a, b};
    ph_node *nd = ph_node_create(g, NULL, op, n, ins, 1);
    if (!nd) {
        fprintf(stderr, "infer_bench: out of memory\n");
        exit(1);
    }
    return nd;
}

static void check(int rc, const ph_error *e)
{
    if (rc) {
        fprintf(stderr, "infer_bench: %s\n", e->message);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    long target = argc > 1 ? atol(argv[1]) : 100000;
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    int64_t xd[3] = {-1, -1, 64};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 3, xd);
    ph_value_set_dim_param(x, 0, "batch");
    ph_value_set_dim_param(x, 1, "seq");
    int64_t wd[2] = {64, 64}, bd = 64;
    ph_value *W = ph_graph_add_initializer(g, "W", ph_tensor_new(PH_DT_FLOAT, 2, wd, NULL));
    ph_value *B = ph_graph_add_initializer(g, "B", ph_tensor_new(PH_DT_FLOAT, 1, &bd, NULL));
    int64_t zero = 0;
    ph_value *idx0 = ph_graph_add_initializer(g, "i0", ph_tensor_new(PH_DT_INT64, 0, NULL, &zero));
    ph_value *ax0 = i64s(g, 1, (int64_t[]){0});
    ph_value *tail = i64s(g, 3, (int64_t[]){-1, 4, 16});
    ph_value *back = i64s(g, 3, (int64_t[]){0, 0, 64});
    long blocks = target / 12;
    ph_node *mid_relu = NULL, *mid_shape = NULL, *mid_tr = NULL;
    ph_value *v = x;
    double t0 = now();
    for (long k = 0; k < blocks; k++) {
        ph_node *a = mk(g, "MatMul", 2, v, W);
        ph_node *b = mk(g, "Add", 2, ph_node_output(a, 0), B);
        ph_node *c = mk(g, "Relu", 1, ph_node_output(b, 0), NULL);
        ph_node *s = mk(g, "Shape", 1, ph_node_output(c, 0), NULL);
        ph_node *gg = mk(g, "Gather", 2, ph_node_output(s, 0), idx0);
        ph_node *u = mk(g, "Unsqueeze", 2, ph_node_output(gg, 0), ax0);
        ph_node *t = mk(g, "Concat", 2, ph_node_output(u, 0), tail);
        ph_node_set_attr_int(t, "axis", 0);
        ph_node *r = mk(g, "Reshape", 2, ph_node_output(c, 0), ph_node_output(t, 0));
        ph_node *p = mk(g, "Transpose", 1, ph_node_output(r, 0), NULL);
        ph_node_set_attr_ints(p, "perm", 4, (int64_t[]){0, 2, 1, 3});
        ph_node *q = mk(g, "Transpose", 1, ph_node_output(p, 0), NULL);
        ph_node_set_attr_ints(q, "perm", 4, (int64_t[]){0, 2, 1, 3});
        ph_node *o = mk(g, "Reshape", 2, ph_node_output(q, 0), back);
        ph_node *y = mk(g, "Add", 2, ph_node_output(o, 0), v);
        v = ph_node_output(y, 0);
        if (k == blocks / 2)
            mid_relu = c, mid_shape = s, mid_tr = p;
    }
    ph_graph_add_output(g, v);
    double t_build = now() - t0;
    ph_error e = {0};
    ph_infer_stats st;

    t0 = now();
    check(ph_graph_infer_shapes(g, &e), &e);
    double t_full = now() - t0;
    ph_model_infer_stats(m, &st);
    size_t nodes = ph_graph_node_count(g);
    printf("graph: %zu nodes (%ld blocks of 12), built in %.1f ms\n", nodes, blocks, t_build * 1e3);
    printf("full inference:            %8.2f ms  (%zu nodes inferred, %.0f ns/node)\n", t_full * 1e3,
           st.nodes_inferred, t_full * 1e9 / (double)st.nodes_inferred);

    /* second full run: nothing changes, no type is rewritten */
    t0 = now();
    check(ph_graph_infer_shapes(g, &e), &e);
    double t_full2 = now() - t0;
    ph_model_infer_stats(m, &st);
    printf("full inference, unchanged: %8.2f ms  (%zu values changed)\n", t_full2 * 1e3, st.values_changed);

    /* local rewrite: Identity between the middle block's Relu and Shape */
    t0 = now();
    ph_value *cv = ph_node_output(mid_relu, 0);
    ph_node *id = ph_node_create(g, mid_shape, "Identity", 1, &cv, 1);
    ph_node_set_input(mid_shape, 0, ph_node_output(id, 0));
    double t_edit = now() - t0;
    t0 = now();
    check(ph_graph_update_shapes(g, &e), &e);
    double t_upd = now() - t0;
    ph_model_infer_stats(m, &st);
    printf("update after local rewrite:%8.3f ms  (%zu nodes re-inferred, %zu values changed; edit %.3f ms)\n",
           t_upd * 1e3, st.nodes_inferred, st.values_changed, t_edit * 1e3);

    /* attribute change with a local effect: the middle pair of Transposes swaps dims 1 and 2 both times */
    ph_node_set_attr_ints(mid_tr, "perm", 4, (int64_t[]){0, 1, 3, 2});
    ph_node *mid_tr2 = ph_value_sole_consumer(ph_node_output(mid_tr, 0));
    ph_node_set_attr_ints(mid_tr2, "perm", 4, (int64_t[]){0, 1, 3, 2});
    t0 = now();
    check(ph_graph_update_shapes(g, &e), &e);
    double t_attr = now() - t0;
    ph_model_infer_stats(m, &st);
    printf("update after perm change:  %8.3f ms  (%zu nodes re-inferred, %zu values changed)\n", t_attr * 1e3,
           st.nodes_inferred, st.values_changed);

    t0 = now();
    check(ph_graph_update_shapes(g, &e), &e);
    double t_none = now() - t0;
    ph_model_infer_stats(m, &st);
    printf("update with nothing to do: %8.3f ms  (%zu nodes re-inferred)\n", t_none * 1e3, st.nodes_inferred);

    /* fixing the input shape changes every value: the update walks everything */
    check(ph_graph_set_input_shape(g, "x", 3, (int64_t[]){1, 128, 64}, &e), &e);
    t0 = now();
    check(ph_graph_update_shapes(g, &e), &e);
    double t_all = now() - t0;
    ph_model_infer_stats(m, &st);
    printf("update after input shape:  %8.2f ms  (%zu nodes re-inferred, %zu values changed)\n", t_all * 1e3,
           st.nodes_inferred, st.values_changed);
    printf("output: [%lld,%lld,%lld]\n", (long long)ph_value_dim(v, 0), (long long)ph_value_dim(v, 1),
           (long long)ph_value_dim(v, 2));
    ph_model_free(m);
    return 0;
}
