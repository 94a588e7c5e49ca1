/* bench/eval_kernels_bench.c - speed of the evaluator's heavy kernels.
 *
 * Times, through the public ph_eval_node API: a 512x512x512 MatMul, the 53
 * convolutions of ResNet-50 at 224x224 (batch 1, float32, each layer with
 * its real shape, stride and padding), and a MobileNet-style depthwise 3x3
 * stack.  Prints milliseconds (best of a few runs) and GFLOP/s, counting a
 * multiply-add as two flops.
 *
 *   make build/lib/libpasshost.so
 *   cc -std=c11 -D_GNU_SOURCE -O2 -Isdk/include bench/eval_kernels_bench.c \
 *      -Lbuild/lib -lpasshost -lm -Wl,-rpath,$PWD/build/lib -o /tmp/ekb && /tmp/ekb
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "passhost/eval.h"
#include "passhost/host.h"
#include "passhost/passhost.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static ph_tensor *filled(size_t rank, const int64_t *dims, uint64_t seed)
{
    ph_tensor *t = ph_tensor_new(PH_DT_FLOAT, rank, dims, NULL);
    if (!t)
        return NULL;
    int64_t n = ph_tensor_numel(t);
    float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) {
        ph_tensor_free(t);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (float)((double)(seed >> 40) / (double)(1ULL << 24)) - 0.5f;
    }
    ph_tensor *r = ph_tensor_new(PH_DT_FLOAT, rank, dims, v);
    free(v);
    ph_tensor_free(t);
    return r;
}

typedef struct layer {
    int64_t cin, cout, hw, k, s, p, group, count;
} layer;

/* One node of op with two/three inputs; returns seconds for one run or -1. */
static double run_node(ph_node *n, const ph_tensor **in)
{
    ph_tensor *out[2] = {0};
    ph_error e = {0};
    double t0 = now();
    int rc = ph_eval_node(n, 17, (const ph_tensor *const *)in, out, &e);
    double t = now() - t0;
    if (rc) {
        fprintf(stderr, "%s failed: %s\n", ph_node_op_type(n), e.message);
        return -1;
    }
    ph_tensor_free(out[0]);
    return t;
}

static ph_node *conv_node(ph_model *m, const layer *l)
{
    ph_graph *g = ph_model_graph(m);
    ph_value *in[3];
    for (int i = 0; i < 3; i++)
        in[i] = ph_graph_add_input(g, ph_graph_unique_name(g, "in"), PH_DT_FLOAT, -1, NULL);
    ph_node *n = ph_node_create(g, NULL, "Conv", 3, in, 1);
    if (!n)
        return NULL;
    int64_t k2[2] = {l->k, l->k}, s2[2] = {l->s, l->s}, p4[4] = {l->p, l->p, l->p, l->p};
    ph_node_set_attr_ints(n, "kernel_shape", 2, k2);
    ph_node_set_attr_ints(n, "strides", 2, s2);
    ph_node_set_attr_ints(n, "pads", 4, p4);
    ph_node_set_attr_int(n, "group", l->group);
    return n;
}

/* Time a list of conv layers (each repeated count times); returns seconds
 * for the whole stack (best of reps) and adds its flops to *flops. */
static double conv_stack(const layer *ls, size_t nl, int reps, double *flops)
{
    ph_model *m = ph_model_new(17);
    double best = -1, fl = 0;
    for (int r = 0; r < reps && m; r++) {
        double total = 0;
        fl = 0;
        for (size_t i = 0; i < nl; i++) {
            const layer *l = &ls[i];
            ph_node *n = conv_node(m, l);
            int64_t xd[4] = {1, l->cin, l->hw, l->hw}, wd[4] = {l->cout, l->cin / l->group, l->k, l->k};
            int64_t bd[1] = {l->cout};
            const ph_tensor *in[3] = {filled(4, xd, 1 + i), filled(4, wd, 100 + i), filled(1, bd, 200 + i)};
            int64_t oh = (l->hw + 2 * l->p - l->k) / l->s + 1;
            for (int64_t c = 0; c < l->count; c++) {
                double t = n && in[0] && in[1] && in[2] ? run_node(n, in) : -1;
                if (t < 0) {
                    best = -1;
                    goto out;
                }
                total += t;
            }
            fl += 2.0 * (double)(l->cout * oh * oh) * (double)(l->cin / l->group * l->k * l->k) *
                  (double)l->count;
            for (int q = 0; q < 3; q++)
                ph_tensor_free((ph_tensor *)in[q]);
        }
        if (best < 0 || total < best)
            best = total;
    }
out:
    ph_model_free(m);
    *flops = fl;
    return best;
}

int main(void)
{
    /* 512^3 MatMul */
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    ph_value *mi[2] = {ph_graph_add_input(g, "a", PH_DT_FLOAT, -1, NULL),
                       ph_graph_add_input(g, "b", PH_DT_FLOAT, -1, NULL)};
    ph_node *mm = ph_node_create(g, NULL, "MatMul", 2, mi, 1);
    int64_t d512[2] = {512, 512};
    const ph_tensor *min[2] = {filled(2, d512, 1), filled(2, d512, 2)};
    double best = -1;
    for (int r = 0; r < 10 && mm && min[0] && min[1]; r++) {
        double t = run_node(mm, min);
        if (t < 0)
            return 1;
        if (best < 0 || t < best)
            best = t;
    }
    printf("MatMul 512x512x512      %8.2f ms  %6.1f GFLOP/s\n", best * 1e3,
           2.0 * 512 * 512 * 512 / best / 1e9);
    ph_tensor_free((ph_tensor *)min[0]);
    ph_tensor_free((ph_tensor *)min[1]);
    ph_model_free(m);

    /* ResNet-50 v1.5 convolutions, 224x224, batch 1 */
    static const layer resnet[] = {
        {3, 64, 224, 7, 2, 3, 1, 1},
        /* layer1, 56x56 */
        {64, 64, 56, 1, 1, 0, 1, 1}, {256, 64, 56, 1, 1, 0, 1, 2}, {64, 64, 56, 3, 1, 1, 1, 3},
        {64, 256, 56, 1, 1, 0, 1, 4},
        /* layer2, 28x28 (stride in the first 3x3 and the downsample) */
        {256, 128, 56, 1, 1, 0, 1, 1}, {128, 128, 56, 3, 2, 1, 1, 1}, {256, 512, 56, 1, 2, 0, 1, 1},
        {512, 128, 28, 1, 1, 0, 1, 3}, {128, 128, 28, 3, 1, 1, 1, 3}, {128, 512, 28, 1, 1, 0, 1, 4},
        /* layer3, 14x14 */
        {512, 256, 28, 1, 1, 0, 1, 1}, {256, 256, 28, 3, 2, 1, 1, 1}, {512, 1024, 28, 1, 2, 0, 1, 1},
        {1024, 256, 14, 1, 1, 0, 1, 5}, {256, 256, 14, 3, 1, 1, 1, 5}, {256, 1024, 14, 1, 1, 0, 1, 6},
        /* layer4, 7x7 */
        {1024, 512, 14, 1, 1, 0, 1, 1}, {512, 512, 14, 3, 2, 1, 1, 1}, {1024, 2048, 14, 1, 2, 0, 1, 1},
        {2048, 512, 7, 1, 1, 0, 1, 2}, {512, 512, 7, 3, 1, 1, 1, 2}, {512, 2048, 7, 1, 1, 0, 1, 3},
    };
    double fl;
    double t = conv_stack(resnet, sizeof resnet / sizeof *resnet, 3, &fl);
    if (t < 0)
        return 1;
    printf("ResNet-50 convs (53)    %8.2f ms  %6.1f GFLOP/s  (%.2f GFLOP)\n", t * 1e3, fl / t / 1e9,
           fl / 1e9);

    /* MobileNetV2-style depthwise 3x3 layers */
    static const layer dw[] = {
        {32, 32, 112, 3, 1, 1, 32, 1}, {96, 96, 112, 3, 2, 1, 96, 1}, {144, 144, 56, 3, 1, 1, 144, 2},
        {192, 192, 28, 3, 1, 1, 192, 3}, {384, 384, 14, 3, 1, 1, 384, 4}, {960, 960, 7, 3, 1, 1, 960, 3},
    };
    t = conv_stack(dw, sizeof dw / sizeof *dw, 3, &fl);
    if (t < 0)
        return 1;
    printf("Depthwise 3x3 stack     %8.2f ms  %6.1f GFLOP/s  (%.3f GFLOP)\n", t * 1e3, fl / t / 1e9,
           fl / 1e9);
    return 0;
}
