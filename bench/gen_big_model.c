/* bench/gen_big_model.c - generate large ONNX models for the benchmark.
 *
 *   gen_big_model weights OUT.onnx MB   a MatMul/Add/Relu chain whose float
 *                                       initializers total about MB MiB
 *   gen_big_model nodes   OUT.onnx N    a graph of about N nodes with small
 *                                       initializers that the passes rewrite
 *
 * Uses only the public SDK builder API (passhost/passhost.h).  The output is
 * deterministic: the same arguments give the same bytes.  The models are made
 * at benchmark time and never committed.
 *
 * "nodes" repeats one block of 10 nodes on a [1,1,4,4] float tensor x:
 *
 *     a  = Identity(x)                         eliminate_identity
 *     b  = Transpose(a, perm 0,1,3,2)          \ merge_consecutive_transpose:
 *     c  = Transpose(b, perm 0,1,3,2)          / the pair is an identity
 *     wt = Transpose(W_k, perm 1,0)            fuse_transpose_into_matmul
 *     d  = MatMul(c, wt)
 *     e  = Add(d, B_k)
 *     f  = Relu(e)                             \ two branches from e
 *     g  = MaxPool(e, kernel 1x1, stride 1)    / eliminate_nop_pool
 *     h  = Identity(g)                         eliminate_identity
 *     y  = Add(f, h)                           next block's x
 *
 * with W_k a [4,4] and B_k a [4] float initializer of the block.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

static const char *prog = "gen_big_model";

static void die(const char *msg, const char *detail)
{
    fprintf(stderr, "%s: %s%s%s\n", prog, msg, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

/* splitmix64, for deterministic weights */
static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void fill(float *d, size_t n, uint64_t *s, float scale)
{
    for (size_t i = 0; i < n; i++)
        d[i] = ((float)(rnd(s) >> 40) * (1.0f / 8388608.0f) - 1.0f) * scale;
}

static ph_value *add_init(ph_graph *g, const char *name, size_t rank, const int64_t *dims,
                          const float *data)
{
    ph_tensor *t = ph_tensor_new(PH_DT_FLOAT, rank, dims, data);
    if (!t)
        die("out of memory", NULL);
    ph_value *v = ph_graph_add_initializer(g, name, t);
    if (!v)
        die("cannot add initializer", name);
    return v;
}

static ph_value *op(ph_graph *g, const char *type, size_t n_in, ph_value *a, ph_value *b)
{
    ph_value *ins[2] = {a, b};
    ph_node *n = ph_node_create(g, NULL, type, n_in, ins, 1);
    if (!n)
        die("cannot create node", type);
    return ph_node_output(n, 0);
}

static ph_node *op_node(ph_graph *g, const char *type, ph_value *a)
{
    ph_node *n = ph_node_create(g, NULL, type, 1, &a, 1);
    if (!n)
        die("cannot create node", type);
    return n;
}

static void set_float_type(ph_value *v, int rank, const int64_t *dims)
{
    if (ph_value_set_type(v, PH_DT_FLOAT, rank, dims) != 0)
        die("cannot set a value type", ph_value_name(v));
}

/* ------------------------------------------------------------- weights */

static void gen_weights(ph_model *m, double mb)
{
    const int64_t H = 1024;
    double per_layer = (double)(H * H * 4 + H * 4) / (1024.0 * 1024.0);
    long layers = (long)(mb / per_layer + 0.5);
    if (layers < 1)
        layers = 1;
    ph_graph *g = ph_model_graph(m);
    int64_t in_dims[2] = {1, H};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 2, in_dims);
    if (!x)
        die("cannot add input", "x");
    float *w = malloc((size_t)(H * H) * sizeof *w);
    float *b = malloc((size_t)H * sizeof *b);
    if (!w || !b)
        die("out of memory", NULL);
    uint64_t seed = 42;
    for (long l = 0; l < layers; l++) {
        char name[64];
        int64_t wd[2] = {H, H}, bd[1] = {H};
        fill(w, (size_t)(H * H), &seed, 0.03f);
        fill(b, (size_t)H, &seed, 0.01f);
        snprintf(name, sizeof name, "layer%ld.weight", l);
        ph_value *W = add_init(g, name, 2, wd, w);
        snprintf(name, sizeof name, "layer%ld.bias", l);
        ph_value *B = add_init(g, name, 1, bd, b);
        x = op(g, "MatMul", 2, x, W);
        x = op(g, "Add", 2, x, B);
        x = op(g, "Relu", 1, x, NULL);
        set_float_type(x, 2, in_dims);
    }
    free(w);
    free(b);
    if (ph_graph_add_output(g, x) != 0)
        die("cannot add the graph output", NULL);
    fprintf(stderr, "%s: %ld layers of %lldx%lld float weights\n", prog, layers, (long long)H,
            (long long)H);
}

/* --------------------------------------------------------------- nodes */

#define BLOCK_NODES 10

static void gen_nodes(ph_model *m, long n)
{
    long blocks = (n + BLOCK_NODES / 2) / BLOCK_NODES;
    if (blocks < 1)
        blocks = 1;
    ph_graph *g = ph_model_graph(m);
    int64_t xd[4] = {1, 1, 4, 4};
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 4, xd);
    if (!x)
        die("cannot add input", "x");
    static const int64_t perm4[4] = {0, 1, 3, 2}, perm2[2] = {1, 0};
    static const int64_t k11[2] = {1, 1};
    uint64_t seed = 7;
    for (long k = 0; k < blocks; k++) {
        char name[64];
        float w[16], bias[4];
        int64_t wd[2] = {4, 4}, bd[1] = {4};
        fill(w, 16, &seed, 0.5f);
        fill(bias, 4, &seed, 0.1f);
        snprintf(name, sizeof name, "b%ld.W", k);
        ph_value *W = add_init(g, name, 2, wd, w);
        snprintf(name, sizeof name, "b%ld.B", k);
        ph_value *B = add_init(g, name, 1, bd, bias);

        ph_value *a = op(g, "Identity", 1, x, NULL);
        ph_node *t1 = op_node(g, "Transpose", a);
        ph_node *t2 = op_node(g, "Transpose", ph_node_output(t1, 0));
        ph_node *tw = op_node(g, "Transpose", W);
        if (ph_node_set_attr_ints(t1, "perm", 4, perm4) || ph_node_set_attr_ints(t2, "perm", 4, perm4) ||
            ph_node_set_attr_ints(tw, "perm", 2, perm2))
            die("cannot set perm", NULL);
        ph_value *d = op(g, "MatMul", 2, ph_node_output(t2, 0), ph_node_output(tw, 0));
        ph_value *e = op(g, "Add", 2, d, B);
        ph_value *f = op(g, "Relu", 1, e, NULL);
        ph_node *pool = op_node(g, "MaxPool", e);
        if (ph_node_set_attr_ints(pool, "kernel_shape", 2, k11) ||
            ph_node_set_attr_ints(pool, "strides", 2, k11))
            die("cannot set pool attributes", NULL);
        ph_value *h = op(g, "Identity", 1, ph_node_output(pool, 0), NULL);
        x = op(g, "Add", 2, f, h);
    }
    set_float_type(x, 4, xd);
    if (ph_graph_add_output(g, x) != 0)
        die("cannot add the graph output", NULL);
    fprintf(stderr, "%s: %ld blocks, %ld nodes\n", prog, blocks, blocks * BLOCK_NODES);
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "weights") != 0 && strcmp(argv[1], "nodes") != 0)) {
        fprintf(stderr,
                "usage: %s weights OUT.onnx MB   (MatMul/Add/Relu chain, ~MB MiB of float weights)\n"
                "       %s nodes OUT.onnx N      (~N nodes, small initializers)\n",
                prog, prog);
        return 2;
    }
    char *end;
    errno = 0;
    double amount = strtod(argv[3], &end);
    if (errno || end == argv[3] || *end || amount <= 0)
        die("bad size", argv[3]);
    ph_model *m = ph_model_new(17);
    if (!m)
        die("out of memory", NULL);
    if (strcmp(argv[1], "weights") == 0)
        gen_weights(m, amount);
    else
        gen_nodes(m, (long)amount);
    ph_error err = {0};
    if (ph_graph_verify(ph_model_graph(m), &err) != 0)
        die("generated graph does not verify", err.message);
    if (ph_model_save(m, argv[2], &err) != 0)
        die("cannot save", err.message);
    ph_model_free(m);
    return 0;
}
