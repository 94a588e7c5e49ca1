/* tests/test_eval_nn.c - the heavy evaluator kernels (MatMul, Gemm, Conv,
 * ConvTranspose, pooling, normalizations, Resize, Einsum) through
 * ph_eval_node.
 *
 * Fixed cases are ONNX spec examples or hand computed; the blocked GEMM and
 * the im2col/depthwise/col2im convolutions are also checked on odd sizes
 * against naive loops in this file, within 1e-4 relative.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/eval.h"
#include "passhost/host.h"
#include "passhost/passhost.h"

#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define F32(...) ((const float[]){__VA_ARGS__})

/* ------------------------------------------------------------ helpers */

typedef struct tnode {
    ph_model *m;
    ph_node *n;
} tnode;

/* A node of op with n_in inputs (bit i of omit: input i omitted) and n_out
 * outputs, in a model of the given opset. */
static tnode mk(const char *op, int64_t opset, size_t n_in, unsigned omit, size_t n_out)
{
    tnode t;
    t.m = ph_model_new(opset);
    ck_assert_ptr_nonnull(t.m);
    ph_graph *g = ph_model_graph(t.m);
    ph_value *ins[8] = {0};
    for (size_t i = 0; i < n_in; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%zu", i);
        if (!(omit & (1u << i)))
            ins[i] = ph_graph_add_input(g, name, PH_DT_UNDEFINED, -1, NULL);
    }
    t.n = ph_node_create(g, NULL, op, n_in, ins, n_out);
    ck_assert_ptr_nonnull(t.n);
    return t;
}

static ph_tensor *tf(size_t rank, const int64_t *dims, const float *data)
{
    ph_tensor *t = ph_tensor_new(PH_DT_FLOAT, rank, dims, data);
    ck_assert_ptr_nonnull(t);
    return t;
}

static ph_tensor *ti64(size_t rank, const int64_t *dims, const int64_t *data)
{
    ph_tensor *t = ph_tensor_new(PH_DT_INT64, rank, dims, data);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* Evaluate; returns the rc and fills outs (caller frees). */
static int run(tnode t, const ph_tensor **ins, ph_tensor **outs, ph_error *e)
{
    memset(e, 0, sizeof *e);
    return ph_eval_node(t.n, ph_model_opset(t.m, ""), (const ph_tensor *const *)ins, outs, e);
}

/* Evaluate a one-output node that must succeed; frees the node's model and
 * the inputs. */
static ph_tensor *run1(tnode t, size_t n_in, const ph_tensor **ins)
{
    ph_tensor *outs[4] = {0};
    ph_error e;
    int rc = run(t, ins, outs, &e);
    ck_assert_msg(rc == 0, "%s failed: %s", ph_node_op_type(t.n), e.message);
    for (size_t i = 0; i < n_in; i++)
        ph_tensor_free((ph_tensor *)ins[i]);
    ph_model_free(t.m);
    return outs[0];
}

static void expect_f(const ph_tensor *y, size_t rank, const int64_t *dims, const float *want, double tol)
{
    ck_assert_ptr_nonnull(y);
    ck_assert_int_eq(ph_tensor_dtype(y), PH_DT_FLOAT);
    ck_assert_uint_eq(ph_tensor_rank(y), rank);
    for (size_t i = 0; i < rank; i++)
        ck_assert_msg(ph_tensor_dim(y, i) == dims[i], "dim %zu: got %lld want %lld", i,
                      (long long)ph_tensor_dim(y, i), (long long)dims[i]);
    const float *got = ph_tensor_data(y);
    for (int64_t i = 0; i < ph_tensor_numel(y); i++)
        ck_assert_msg(fabs((double)got[i] - want[i]) <= tol * (1 + fabs(want[i])),
                      "element %lld: got %.7g want %.7g", (long long)i, got[i], want[i]);
}

/* Compare to a double reference within 1e-4 relative (to the largest value). */
static void expect_close_ref(const ph_tensor *y, const double *ref, int64_t n)
{
    ck_assert_int_eq(ph_tensor_numel(y), n);
    const float *got = ph_tensor_data(y);
    double scale = 1e-6;
    for (int64_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(ref[i]));
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(got[i] - ref[i]) <= 1e-4 * scale, "element %lld: got %.7g want %.7g",
                      (long long)i, got[i], ref[i]);
}

static void set_ints(ph_node *n, const char *name, size_t cnt, const int64_t *v)
{
    ck_assert_int_eq(ph_node_set_attr_ints(n, name, cnt, v), 0);
}

/* Deterministic values in [-1, 1). */
static float *rnd(int64_t n, uint64_t *s)
{
    float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (int64_t i = 0; i < n; i++) {
        *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (float)((double)(*s >> 40) / (double)(1ULL << 24) * 2.0 - 1.0);
    }
    return v;
}

static float *iota(int64_t n, float start)
{
    float *v = malloc((size_t)n * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = start + (float)i;
    return v;
}

/* ------------------------------------------------------------- MatMul */

START_TEST(test_matmul_2d_and_1d)
{
    const ph_tensor *in[2] = {tf(2, I64(2, 3), F32(1, 2, 3, 4, 5, 6)),
                              tf(2, I64(3, 2), F32(7, 8, 9, 10, 11, 12))};
    ph_tensor *y = run1(mk("MatMul", 13, 2, 0, 1), 2, in);
    expect_f(y, 2, I64(2, 2), F32(58, 64, 139, 154), 0);
    ph_tensor_free(y);
    /* 1-D x 2-D: (3) x (3,2) -> (2) */
    in[0] = tf(1, I64(3), F32(1, 2, 3));
    in[1] = tf(2, I64(3, 2), F32(7, 8, 9, 10, 11, 12));
    y = run1(mk("MatMul", 13, 2, 0, 1), 2, in);
    expect_f(y, 1, I64(2), F32(58, 64), 0);
    ph_tensor_free(y);
    /* 2-D x 1-D: (2,3) x (3) -> (2) */
    in[0] = tf(2, I64(2, 3), F32(1, 2, 3, 4, 5, 6));
    in[1] = tf(1, I64(3), F32(1, 0, -1));
    y = run1(mk("MatMul", 13, 2, 0, 1), 2, in);
    expect_f(y, 1, I64(2), F32(-2, -2), 0);
    ph_tensor_free(y);
    /* 1-D x 1-D -> scalar */
    in[0] = tf(1, I64(3), F32(1, 2, 3));
    in[1] = tf(1, I64(3), F32(4, 5, 6));
    y = run1(mk("MatMul", 13, 2, 0, 1), 2, in);
    expect_f(y, 0, NULL, F32(32), 0);
    ph_tensor_free(y);
}
END_TEST

START_TEST(test_matmul_batch_broadcast)
{
    /* A (2,1,2,3) x B (3,3,2) -> (2,3,2,2) */
    uint64_t s = 1;
    float *a = rnd(12, &s), *b = rnd(18, &s);
    const ph_tensor *in[2] = {tf(4, I64(2, 1, 2, 3), a), tf(3, I64(3, 3, 2), b)};
    ph_tensor *y = run1(mk("MatMul", 13, 2, 0, 1), 2, in);
    double ref[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int m = 0; m < 2; m++)
                for (int n = 0; n < 2; n++) {
                    double acc = 0;
                    for (int k = 0; k < 3; k++)
                        acc += (double)a[i * 6 + m * 3 + k] * b[j * 6 + k * 2 + n];
                    ref[((i * 3 + j) * 2 + m) * 2 + n] = acc;
                }
    ck_assert_uint_eq(ph_tensor_rank(y), 4);
    ck_assert_int_eq(ph_tensor_dim(y, 0), 2);
    ck_assert_int_eq(ph_tensor_dim(y, 1), 3);
    expect_close_ref(y, ref, 24);
    ph_tensor_free(y);
    /* batched A with a shared 2-D B (the folded fast path): (3,4,5) x (5,2) */
    float *a2 = rnd(60, &s), *b2 = rnd(10, &s);
    in[0] = tf(3, I64(3, 4, 5), a2);
    in[1] = tf(2, I64(5, 2), b2);
    y = run1(mk("MatMul", 13, 2, 0, 1), 2, in);
    double ref2[24];
    for (int i = 0; i < 12; i++)
        for (int n = 0; n < 2; n++) {
            double acc = 0;
            for (int k = 0; k < 5; k++)
                acc += (double)a2[i * 5 + k] * b2[k * 2 + n];
            ref2[i * 2 + n] = acc;
        }
    expect_close_ref(y, ref2, 24);
    ph_tensor_free(y);
    /* mismatched batch dims are an error */
    tnode t = mk("MatMul", 13, 2, 0, 1);
    in[0] = tf(3, I64(2, 2, 3), a);
    in[1] = tf(3, I64(3, 3, 2), b);
    ph_tensor *outs[1] = {0};
    ph_error e;
    ck_assert_int_eq(run(t, in, outs, &e), PH_EINVAL);
    ph_tensor_free((ph_tensor *)in[0]);
    ph_tensor_free((ph_tensor *)in[1]);
    ph_model_free(t.m);
    free(a);
    free(b);
    free(a2);
    free(b2);
}
END_TEST

START_TEST(test_matmul_int64)
{
    const ph_tensor *in[2] = {ti64(2, I64(2, 2), I64(1, 2, 3, 4)), ti64(2, I64(2, 2), I64(5, 6, 7, 8))};
    ph_tensor *y = run1(mk("MatMul", 13, 2, 0, 1), 2, in);
    ck_assert_int_eq(ph_tensor_dtype(y), PH_DT_INT64);
    const int64_t *d = ph_tensor_data(y);
    ck_assert(d[0] == 19 && d[1] == 22 && d[2] == 43 && d[3] == 50);
    ph_tensor_free(y);
}
END_TEST

/* The blocked GEMM through MatMul on every combination of odd sizes. */
START_TEST(test_matmul_random_odd_sizes)
{
    static const int64_t sz[] = {1, 7, 33, 65, 130};
    uint64_t s = 42;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            for (int k = 0; k < 5; k++) {
                int64_t M = sz[i], N = sz[j], K = sz[k];
                float *a = rnd(M * K, &s), *b = rnd(K * N, &s);
                double *ref = malloc((size_t)(M * N) * sizeof *ref);
                ck_assert_ptr_nonnull(ref);
                for (int64_t m = 0; m < M; m++)
                    for (int64_t n = 0; n < N; n++) {
                        double acc = 0;
                        for (int64_t p = 0; p < K; p++)
                            acc += (double)a[m * K + p] * b[p * N + n];
                        ref[m * N + n] = acc;
                    }
                const ph_tensor *in[2] = {tf(2, I64(M, K), a), tf(2, I64(K, N), b)};
                ph_tensor *y = run1(mk("MatMul", 13, 2, 0, 1), 2, in);
                expect_close_ref(y, ref, M * N);
                ph_tensor_free(y);
                free(a);
                free(b);
                free(ref);
            }
}
END_TEST

/* --------------------------------------------------------------- Gemm */

START_TEST(test_gemm_flags_and_broadcast)
{
    static const int64_t sz[] = {1, 7, 33, 65, 130};
    uint64_t s = 7;
    for (int trial = 0; trial < 20; trial++) {
        int64_t M = sz[trial % 5], N = sz[(trial * 3 + 1) % 5], K = sz[(trial * 2 + 2) % 5];
        int ta = trial & 1, tb = (trial >> 1) & 1, cform = trial % 4;
        float alpha = 0.5f + (float)(trial % 3), beta = trial % 5 == 4 ? 0.0f : -1.5f;
        float *a = rnd(M * K, &s), *b = rnd(K * N, &s), *c = rnd(M * N, &s);
        /* C shapes: none, (N), (M,1), (M,N) */
        int64_t cd[2];
        size_t cr = 0;
        if (cform == 1)
            cd[0] = N, cr = 1;
        else if (cform == 2)
            cd[0] = M, cd[1] = 1, cr = 2;
        else if (cform == 3)
            cd[0] = M, cd[1] = N, cr = 2;
        tnode t = mk("Gemm", 13, cform ? 3 : 2, 0, 1);
        ph_node_set_attr_int(t.n, "transA", ta);
        ph_node_set_attr_int(t.n, "transB", tb);
        ph_node_set_attr_float(t.n, "alpha", alpha);
        ph_node_set_attr_float(t.n, "beta", beta);
        const ph_tensor *in[3] = {tf(2, ta ? I64(K, M) : I64(M, K), a),
                                  tf(2, tb ? I64(N, K) : I64(K, N), b),
                                  cform ? tf(cr, cd, c) : NULL};
        double *ref = malloc((size_t)(M * N) * sizeof *ref);
        ck_assert_ptr_nonnull(ref);
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double acc = 0;
                for (int64_t p = 0; p < K; p++)
                    acc += (double)a[ta ? p * M + m : m * K + p] * b[tb ? n * K + p : p * N + n];
                double cv = cform == 0 ? 0 : cform == 1 ? c[n] : cform == 2 ? c[m] : c[m * N + n];
                ref[m * N + n] = alpha * acc + beta * cv;
            }
        ph_tensor *y = run1(t, cform ? 3 : 2, in);
        expect_close_ref(y, ref, M * N);
        ph_tensor_free(y);
        free(a);
        free(b);
        free(c);
        free(ref);
    }
}
END_TEST

/* --------------------------------------------------------------- Conv */

/* Spatial geometry padded to 3-D for the naive references. */
typedef struct cfg {
    int nd;
    int64_t N, C, M, group;
    int64_t in[3], k[3], s[3], d[3], pads[6], opad[3];
} cfg;

static int64_t cv_out(const cfg *c, int i)
{
    return (c->in[i] + c->pads[i] + c->pads[c->nd + i] - ((c->k[i] - 1) * c->d[i] + 1)) / c->s[i] + 1;
}

/* dims of a 3-D view: leading spatial dims are 1 */
static void view3(const cfg *c, const int64_t *v, int64_t *o3, int64_t fill)
{
    for (int i = 0; i < 3; i++)
        o3[i] = i < 3 - c->nd ? fill : v[i - (3 - c->nd)];
}

static double *ref_conv(const cfg *c, const float *x, const float *w, const float *b, int64_t *out)
{
    int64_t in3[3], k3[3], s3[3], d3[3], pb3[3], o3[3], pb[3];
    for (int i = 0; i < c->nd; i++) {
        out[i] = cv_out(c, i);
        pb[i] = c->pads[i];
    }
    view3(c, c->in, in3, 1);
    view3(c, c->k, k3, 1);
    view3(c, c->s, s3, 1);
    view3(c, c->d, d3, 1);
    view3(c, pb, pb3, 0);
    view3(c, out, o3, 1);
    int64_t Cg = c->C / c->group, Mg = c->M / c->group, osp = o3[0] * o3[1] * o3[2];
    int64_t isp = in3[0] * in3[1] * in3[2], ksp = k3[0] * k3[1] * k3[2];
    double *y = malloc((size_t)(c->N * c->M * osp) * sizeof *y);
    ck_assert_ptr_nonnull(y);
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t m = 0; m < c->M; m++)
            for (int64_t z = 0; z < o3[0]; z++)
                for (int64_t h = 0; h < o3[1]; h++)
                    for (int64_t q = 0; q < o3[2]; q++) {
                        double acc = b ? b[m] : 0;
                        int64_t g = m / Mg;
                        for (int64_t ci = 0; ci < Cg; ci++)
                            for (int64_t kz = 0; kz < k3[0]; kz++)
                                for (int64_t kh = 0; kh < k3[1]; kh++)
                                    for (int64_t kw = 0; kw < k3[2]; kw++) {
                                        int64_t iz = z * s3[0] - pb3[0] + kz * d3[0];
                                        int64_t ih = h * s3[1] - pb3[1] + kh * d3[1];
                                        int64_t iw = q * s3[2] - pb3[2] + kw * d3[2];
                                        if (iz < 0 || iz >= in3[0] || ih < 0 || ih >= in3[1] ||
                                            iw < 0 || iw >= in3[2])
                                            continue;
                                        acc += (double)x[(n * c->C + g * Cg + ci) * isp +
                                                         (iz * in3[1] + ih) * in3[2] + iw] *
                                               w[(m * Cg + ci) * ksp + (kz * k3[1] + kh) * k3[2] + kw];
                                    }
                        y[(n * c->M + m) * osp + (z * o3[1] + h) * o3[2] + q] = acc;
                    }
    return y;
}

static void check_conv(const cfg *c, uint64_t seed)
{
    uint64_t s = seed;
    int64_t xd[5] = {c->N, c->C}, wd[5] = {c->M, c->C / c->group};
    for (int i = 0; i < c->nd; i++) {
        xd[2 + i] = c->in[i];
        wd[2 + i] = c->k[i];
    }
    int64_t xn = 1, wn = 1;
    for (int i = 0; i < c->nd + 2; i++) {
        xn *= xd[i];
        wn *= wd[i];
    }
    float *x = rnd(xn, &s), *w = rnd(wn, &s), *b = rnd(c->M, &s);
    int64_t out[3];
    double *ref = ref_conv(c, x, w, b, out);
    tnode t = mk("Conv", 13, 3, 0, 1);
    ph_node_set_attr_int(t.n, "group", c->group);
    set_ints(t.n, "strides", (size_t)c->nd, c->s);
    set_ints(t.n, "dilations", (size_t)c->nd, c->d);
    set_ints(t.n, "pads", 2 * (size_t)c->nd, c->pads);
    set_ints(t.n, "kernel_shape", (size_t)c->nd, c->k);
    const ph_tensor *in[3] = {tf((size_t)c->nd + 2, xd, x), tf((size_t)c->nd + 2, wd, w),
                              tf(1, I64(c->M), b)};
    ph_tensor *y = run1(t, 3, in);
    for (int i = 0; i < c->nd; i++)
        ck_assert_int_eq(ph_tensor_dim(y, 2 + (size_t)i), out[i]);
    int64_t on = c->N * c->M;
    for (int i = 0; i < c->nd; i++)
        on *= out[i];
    expect_close_ref(y, ref, on);
    ph_tensor_free(y);
    free(x);
    free(w);
    free(b);
    free(ref);
}

START_TEST(test_conv_spec_examples)
{
    /* 5x5 input 0..24, 3x3 ones: with pads 1 and without */
    float *x = iota(25, 0);
    float ones[9];
    for (int i = 0; i < 9; i++)
        ones[i] = 1;
    tnode t = mk("Conv", 11, 2, 0, 1);
    set_ints(t.n, "kernel_shape", 2, I64(3, 3));
    set_ints(t.n, "pads", 4, I64(1, 1, 1, 1));
    const ph_tensor *in[2] = {tf(4, I64(1, 1, 5, 5), x), tf(4, I64(1, 1, 3, 3), ones)};
    ph_tensor *y = run1(t, 2, in);
    expect_f(y, 4, I64(1, 1, 5, 5),
             F32(12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81, 93, 144, 153, 162,
                 111, 72, 111, 117, 123, 84), 0);
    ph_tensor_free(y);
    t = mk("Conv", 11, 2, 0, 1);
    in[0] = tf(4, I64(1, 1, 5, 5), x);
    in[1] = tf(4, I64(1, 1, 3, 3), ones);
    y = run1(t, 2, in);
    expect_f(y, 4, I64(1, 1, 3, 3), F32(54, 63, 72, 99, 108, 117, 144, 153, 162), 0);
    ph_tensor_free(y);
    /* auto_pad SAME_LOWER, strides 2 */
    t = mk("Conv", 11, 2, 0, 1);
    ph_node_set_attr_string(t.n, "auto_pad", "SAME_LOWER");
    set_ints(t.n, "strides", 2, I64(2, 2));
    in[0] = tf(4, I64(1, 1, 5, 5), x);
    in[1] = tf(4, I64(1, 1, 3, 3), ones);
    y = run1(t, 2, in);
    expect_f(y, 4, I64(1, 1, 3, 3), F32(12, 27, 24, 63, 108, 81, 72, 117, 84), 0);
    ph_tensor_free(y);
    free(x);
    /* 7x5 input, strides 2: pads 1 / asymmetric pads (1,0,1,0) */
    x = iota(35, 0);
    t = mk("Conv", 11, 2, 0, 1);
    set_ints(t.n, "strides", 2, I64(2, 2));
    set_ints(t.n, "pads", 4, I64(1, 1, 1, 1));
    in[0] = tf(4, I64(1, 1, 7, 5), x);
    in[1] = tf(4, I64(1, 1, 3, 3), ones);
    y = run1(t, 2, in);
    expect_f(y, 4, I64(1, 1, 4, 3), F32(12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124), 0);
    ph_tensor_free(y);
    t = mk("Conv", 11, 2, 0, 1);
    set_ints(t.n, "strides", 2, I64(2, 2));
    set_ints(t.n, "pads", 4, I64(1, 0, 1, 0));
    in[0] = tf(4, I64(1, 1, 7, 5), x);
    in[1] = tf(4, I64(1, 1, 3, 3), ones);
    y = run1(t, 2, in);
    expect_f(y, 4, I64(1, 1, 4, 2), F32(21, 33, 99, 117, 189, 207, 171, 183), 0);
    ph_tensor_free(y);
    free(x);
}
END_TEST

START_TEST(test_conv_random_vs_naive)
{
    cfg cases[] = {
        /* groups, strides, dilations, asymmetric pads */
        {2, 2, 4, 6, 2, {9, 7}, {3, 2}, {2, 1}, {1, 2}, {1, 0, 2, 1}, {0}},
        /* depthwise 3x3 stride 2 (direct path) */
        {2, 1, 8, 8, 8, {13, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {0}},
        /* depthwise with channel multiplier 2, 5x5, dilation 2 */
        {2, 2, 6, 12, 6, {12, 9}, {5, 5}, {1, 1}, {2, 1}, {4, 2, 4, 2}, {0}},
        /* 1-D */
        {1, 2, 3, 5, 1, {17}, {4}, {3}, {2}, {2, 1}, {0}},
        /* 3-D */
        {3, 1, 2, 3, 1, {5, 6, 4}, {2, 3, 2}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1, 0, 1, 1}, {0}},
        /* pointwise (no im2col), odd channel counts */
        {2, 2, 33, 65, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {0}},
        /* odd GEMM sizes: M=65, K=7*9, N=130 */
        {2, 1, 7, 65, 1, {13, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, {0}},
        /* 1x1 stride 2 (im2col of a pointwise kernel) */
        {2, 1, 5, 7, 1, {9, 8}, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}, {0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_conv(&cases[i], 100 + i);
}
END_TEST

START_TEST(test_conv_errors)
{
    tnode t = mk("Conv", 13, 2, 0, 1);
    ph_node_set_attr_int(t.n, "group", 3);
    float z[64] = {0};
    const ph_tensor *in[2] = {tf(4, I64(1, 4, 2, 2), z), tf(4, I64(2, 2, 1, 1), z)};
    ph_tensor *outs[1] = {0};
    ph_error e;
    ck_assert_int_eq(run(t, in, outs, &e), PH_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "Conv"));
    ph_tensor_free((ph_tensor *)in[0]);
    ph_tensor_free((ph_tensor *)in[1]);
    ph_model_free(t.m);
}
END_TEST

/* ------------------------------------------------------- ConvTranspose */

static double *ref_convt(const cfg *c, const float *x, const float *w, const float *b, int64_t *out)
{
    int64_t in3[3], k3[3], s3[3], d3[3], pb3[3], o3[3], pb[3];
    for (int i = 0; i < c->nd; i++) {
        out[i] = c->s[i] * (c->in[i] - 1) + c->opad[i] + (c->k[i] - 1) * c->d[i] + 1 - c->pads[i] -
                 c->pads[c->nd + i];
        pb[i] = c->pads[i];
    }
    view3(c, c->in, in3, 1);
    view3(c, c->k, k3, 1);
    view3(c, c->s, s3, 1);
    view3(c, c->d, d3, 1);
    view3(c, pb, pb3, 0);
    view3(c, out, o3, 1);
    int64_t Cg = c->C / c->group, Mg = c->M / c->group, osp = o3[0] * o3[1] * o3[2];
    int64_t isp = in3[0] * in3[1] * in3[2], ksp = k3[0] * k3[1] * k3[2];
    double *y = malloc((size_t)(c->N * c->M * osp) * sizeof *y);
    ck_assert_ptr_nonnull(y);
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t m = 0; m < c->M; m++)
            for (int64_t q = 0; q < osp; q++)
                y[(n * c->M + m) * osp + q] = b ? b[m] : 0;
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t ci = 0; ci < c->C; ci++) {
            int64_t g = ci / Cg;
            for (int64_t mo = 0; mo < Mg; mo++)
                for (int64_t z = 0; z < in3[0]; z++)
                    for (int64_t h = 0; h < in3[1]; h++)
                        for (int64_t q = 0; q < in3[2]; q++)
                            for (int64_t kz = 0; kz < k3[0]; kz++)
                                for (int64_t kh = 0; kh < k3[1]; kh++)
                                    for (int64_t kw = 0; kw < k3[2]; kw++) {
                                        int64_t oz = z * s3[0] - pb3[0] + kz * d3[0];
                                        int64_t oh = h * s3[1] - pb3[1] + kh * d3[1];
                                        int64_t ow = q * s3[2] - pb3[2] + kw * d3[2];
                                        if (oz < 0 || oz >= o3[0] || oh < 0 || oh >= o3[1] ||
                                            ow < 0 || ow >= o3[2])
                                            continue;
                                        y[(n * c->M + g * Mg + mo) * osp + (oz * o3[1] + oh) * o3[2] + ow] +=
                                            (double)x[(n * c->C + ci) * isp + (z * in3[1] + h) * in3[2] + q] *
                                            w[(ci * Mg + mo) * ksp + (kz * k3[1] + kh) * k3[2] + kw];
                                    }
        }
    return y;
}

START_TEST(test_conv_transpose)
{
    /* spec example: 3x3 input 0..8, ones (1,2,3,3) -> (1,2,5,5) */
    float *x = iota(9, 0), ones[18];
    for (int i = 0; i < 18; i++)
        ones[i] = 1;
    const ph_tensor *in[3] = {tf(4, I64(1, 1, 3, 3), x), tf(4, I64(1, 2, 3, 3), ones), NULL};
    ph_tensor *y = run1(mk("ConvTranspose", 13, 2, 0, 1), 2, in);
    static const float one[25] = {0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15,
                                  9, 20, 33, 24, 13, 6, 13, 21, 15, 8};
    float want[50];
    memcpy(want, one, sizeof one);
    memcpy(want + 25, one, sizeof one);
    expect_f(y, 4, I64(1, 2, 5, 5), want, 0);
    ph_tensor_free(y);
    /* output_shape beyond the full size pads with zeros at the end */
    tnode t = mk("ConvTranspose", 13, 2, 0, 1);
    set_ints(t.n, "strides", 2, I64(3, 2));
    set_ints(t.n, "output_shape", 2, I64(10, 8));
    in[0] = tf(4, I64(1, 1, 3, 3), x);
    in[1] = tf(4, I64(1, 2, 3, 3), ones);
    y = run1(t, 2, in);
    ck_assert_int_eq(ph_tensor_dim(y, 2), 10);
    ck_assert_int_eq(ph_tensor_dim(y, 3), 8);
    const float *yd = ph_tensor_data(y);
    ck_assert(yd[0] == 0 && yd[2] == 1 && yd[4] == 3 && yd[7] == 0 && yd[3 * 8 + 2] == 7);
    for (int i = 0; i < 8; i++)
        ck_assert(yd[9 * 8 + i] == 0);
    ph_tensor_free(y);
    free(x);
    /* random vs the scatter definition */
    cfg cases[] = {
        {2, 2, 4, 6, 2, {5, 4}, {3, 2}, {2, 3}, {1, 2}, {1, 0, 0, 1}, {1, 0}},
        {1, 1, 3, 2, 1, {7}, {3}, {2}, {1}, {0, 0}, {0}},
        {2, 1, 33, 7, 1, {6, 5}, {4, 4}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {0, 0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cfg *c = &cases[i];
        uint64_t s = 500 + i;
        int64_t xd[5] = {c->N, c->C}, wd[5] = {c->C, c->M / c->group};
        int64_t xn = c->N * c->C, wn = c->C * (c->M / c->group);
        for (int k = 0; k < c->nd; k++) {
            xd[2 + k] = c->in[k];
            wd[2 + k] = c->k[k];
            xn *= c->in[k];
            wn *= c->k[k];
        }
        float *xr = rnd(xn, &s), *w = rnd(wn, &s), *b = rnd(c->M, &s);
        int64_t out[3];
        double *ref = ref_convt(c, xr, w, b, out);
        t = mk("ConvTranspose", 13, 3, 0, 1);
        ph_node_set_attr_int(t.n, "group", c->group);
        set_ints(t.n, "strides", (size_t)c->nd, c->s);
        set_ints(t.n, "dilations", (size_t)c->nd, c->d);
        set_ints(t.n, "pads", 2 * (size_t)c->nd, c->pads);
        set_ints(t.n, "output_padding", (size_t)c->nd, c->opad);
        in[0] = tf((size_t)c->nd + 2, xd, xr);
        in[1] = tf((size_t)c->nd + 2, wd, w);
        in[2] = tf(1, I64(c->M), b);
        y = run1(t, 3, in);
        int64_t on = c->N * c->M;
        for (int k = 0; k < c->nd; k++) {
            ck_assert_int_eq(ph_tensor_dim(y, 2 + (size_t)k), out[k]);
            on *= out[k];
        }
        expect_close_ref(y, ref, on);
        ph_tensor_free(y);
        free(xr);
        free(w);
        free(b);
        free(ref);
    }
}
END_TEST

/* ------------------------------------------------------------- pooling */

START_TEST(test_maxpool)
{
    float *x = iota(25, 1);
    /* precomputed pads: k5 pads 2, with Indices */
    tnode t = mk("MaxPool", 12, 1, 0, 2);
    set_ints(t.n, "kernel_shape", 2, I64(5, 5));
    set_ints(t.n, "pads", 4, I64(2, 2, 2, 2));
    const ph_tensor *in[1] = {tf(4, I64(1, 1, 5, 5), x)};
    ph_tensor *outs[2] = {0};
    ph_error e;
    ck_assert_int_eq(run(t, in, outs, &e), 0);
    expect_f(outs[0], 4, I64(1, 1, 5, 5),
             F32(13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25, 23,
                 24, 25, 25, 25), 0);
    ck_assert_int_eq(ph_tensor_dtype(outs[1]), PH_DT_INT64);
    const int64_t *ind = ph_tensor_data(outs[1]);
    static const int64_t want_ind[25] = {12, 13, 14, 14, 14, 17, 18, 19, 19, 19, 22, 23, 24,
                                         24, 24, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24};
    for (int i = 0; i < 25; i++)
        ck_assert_int_eq(ind[i], want_ind[i]);
    ph_tensor_free(outs[0]);
    ph_tensor_free(outs[1]);
    ph_model_free(t.m);
    /* strides 2, storage_order 1 indices */
    t = mk("MaxPool", 12, 1, 0, 2);
    set_ints(t.n, "kernel_shape", 2, I64(2, 2));
    set_ints(t.n, "strides", 2, I64(2, 2));
    ph_node_set_attr_int(t.n, "storage_order", 1);
    ck_assert_int_eq(run(t, in, outs, &e), 0);
    expect_f(outs[0], 4, I64(1, 1, 2, 2), F32(7, 9, 17, 19), 0);
    ind = ph_tensor_data(outs[1]);
    ck_assert(ind[0] == 6 && ind[1] == 16 && ind[2] == 8 && ind[3] == 18);
    ph_tensor_free(outs[0]);
    ph_tensor_free(outs[1]);
    ph_model_free(t.m);
    ph_tensor_free((ph_tensor *)in[0]);
    free(x);
    /* ceil_mode and dilations on a 4x4 input */
    x = iota(16, 1);
    t = mk("MaxPool", 12, 1, 0, 1);
    set_ints(t.n, "kernel_shape", 2, I64(3, 3));
    set_ints(t.n, "strides", 2, I64(2, 2));
    ph_node_set_attr_int(t.n, "ceil_mode", 1);
    in[0] = tf(4, I64(1, 1, 4, 4), x);
    ph_tensor *y = run1(t, 1, in);
    expect_f(y, 4, I64(1, 1, 2, 2), F32(11, 12, 15, 16), 0);
    ph_tensor_free(y);
    t = mk("MaxPool", 12, 1, 0, 1);
    set_ints(t.n, "kernel_shape", 2, I64(2, 2));
    set_ints(t.n, "dilations", 2, I64(2, 2));
    in[0] = tf(4, I64(1, 1, 4, 4), x);
    y = run1(t, 1, in);
    expect_f(y, 4, I64(1, 1, 2, 2), F32(11, 12, 15, 16), 0);
    ph_tensor_free(y);
    /* 1-D, auto_pad SAME_UPPER */
    t = mk("MaxPool", 12, 1, 0, 1);
    set_ints(t.n, "kernel_shape", 1, I64(2));
    ph_node_set_attr_string(t.n, "auto_pad", "SAME_UPPER");
    in[0] = tf(3, I64(1, 1, 5), F32(3, 1, 4, 1, 5));
    y = run1(t, 1, in);
    expect_f(y, 3, I64(1, 1, 5), F32(3, 4, 4, 5, 5), 0);
    ph_tensor_free(y);
    free(x);
}
END_TEST

START_TEST(test_averagepool)
{
    float *x = iota(25, 1);
    tnode t = mk("AveragePool", 11, 1, 0, 1);
    set_ints(t.n, "kernel_shape", 2, I64(5, 5));
    set_ints(t.n, "pads", 4, I64(2, 2, 2, 2));
    const ph_tensor *in[1] = {tf(4, I64(1, 1, 5, 5), x)};
    ph_tensor *y = run1(t, 1, in);
    expect_f(y, 4, I64(1, 1, 5, 5),
             F32(7, 7.5, 8, 8.5, 9, 9.5, 10, 10.5, 11, 11.5, 12, 12.5, 13, 13.5, 14, 14.5, 15,
                 15.5, 16, 16.5, 17, 17.5, 18, 18.5, 19), 1e-6);
    ph_tensor_free(y);
    t = mk("AveragePool", 11, 1, 0, 1);
    set_ints(t.n, "kernel_shape", 2, I64(5, 5));
    set_ints(t.n, "pads", 4, I64(2, 2, 2, 2));
    ph_node_set_attr_int(t.n, "count_include_pad", 1);
    in[0] = tf(4, I64(1, 1, 5, 5), x);
    y = run1(t, 1, in);
    expect_f(y, 4, I64(1, 1, 5, 5),
             F32(2.52, 3.6, 4.8, 4.08, 3.24, 4.56, 6.4, 8.4, 7.04, 5.52, 7.2, 10, 13, 10.8, 8.4,
                 6.96, 9.6, 12.4, 10.24, 7.92, 6.12, 8.4, 10.8, 8.88, 6.84), 1e-6);
    ph_tensor_free(y);
    free(x);
    /* ceil_mode: the partial windows divide by their valid taps */
    x = iota(16, 1);
    t = mk("AveragePool", 11, 1, 0, 1);
    set_ints(t.n, "kernel_shape", 2, I64(3, 3));
    set_ints(t.n, "strides", 2, I64(2, 2));
    ph_node_set_attr_int(t.n, "ceil_mode", 1);
    in[0] = tf(4, I64(1, 1, 4, 4), x);
    y = run1(t, 1, in);
    expect_f(y, 4, I64(1, 1, 2, 2), F32(6, 7.5, 12, 13.5), 1e-6);
    ph_tensor_free(y);
    /* global pools */
    in[0] = tf(4, I64(1, 2, 2, 4), x);
    y = run1(mk("GlobalAveragePool", 11, 1, 0, 1), 1, in);
    expect_f(y, 4, I64(1, 2, 1, 1), F32(4.5, 12.5), 1e-6);
    ph_tensor_free(y);
    in[0] = tf(3, I64(2, 2, 4), x);
    y = run1(mk("GlobalMaxPool", 11, 1, 0, 1), 1, in);
    expect_f(y, 3, I64(2, 2, 1), F32(4, 8, 12, 16), 0);
    ph_tensor_free(y);
    free(x);
}
END_TEST

/* ------------------------------------------------------ normalizations */

START_TEST(test_batchnorm)
{
    tnode t = mk("BatchNormalization", 15, 5, 0, 1);
    ph_node_set_attr_float(t.n, "epsilon", 0.0f);
    const ph_tensor *in[5] = {tf(4, I64(1, 2, 1, 3), F32(-1, 0, 1, 2, 3, 4)), tf(1, I64(2), F32(1.0f, 1.5f)),
                              tf(1, I64(2), F32(0, 1)), tf(1, I64(2), F32(0, 3)), tf(1, I64(2), F32(1, 4))};
    ph_tensor *y = run1(t, 5, in);
    /* c0: x; c1: (x - 3) / 2 * 1.5 + 1 */
    expect_f(y, 4, I64(1, 2, 1, 3), F32(-1, 0, 1, 0.25, 1, 1.75), 1e-6);
    ph_tensor_free(y);
    t = mk("BatchNormalization", 15, 5, 0, 1);
    ph_node_set_attr_int(t.n, "training_mode", 1);
    float v[2] = {1, 1};
    in[0] = tf(2, I64(1, 2), v);
    for (int i = 1; i < 5; i++)
        in[i] = tf(1, I64(2), v);
    /* training mode (opset 14+): the batch's own statistics; one value per
       channel has variance 0, so y = B */
    ph_tensor *outs[1] = {0};
    ph_error e;
    ck_assert_msg(run(t, in, outs, &e) == 0, "%s", e.message);
    expect_f(outs[0], 2, I64(1, 2), F32(1, 1), 1e-6);
    ph_tensor_free(outs[0]);
    for (int i = 0; i < 5; i++)
        ph_tensor_free((ph_tensor *)in[i]);
    ph_model_free(t.m);
}
END_TEST

START_TEST(test_instancenorm)
{
    tnode t = mk("InstanceNormalization", 11, 3, 0, 1);
    ph_node_set_attr_float(t.n, "epsilon", 0.0f);
    const ph_tensor *in[3] = {tf(3, I64(1, 2, 4), F32(1, 2, 3, 4, 2, 2, 2, 6)), tf(1, I64(2), F32(2, 1)),
                              tf(1, I64(2), F32(0, 1))};
    ph_tensor *y = run1(t, 3, in);
    /* c0: mean 2.5 var 1.25; c1: mean 3 var 3 */
    double s0 = 1 / sqrt(1.25), s1 = 1 / sqrt(3.0);
    float want[8] = {(float)(2 * -1.5 * s0), (float)(2 * -0.5 * s0), (float)(2 * 0.5 * s0),
                     (float)(2 * 1.5 * s0), (float)(1 - s1), (float)(1 - s1), (float)(1 - s1),
                     (float)(1 + 3 * s1)};
    expect_f(y, 3, I64(1, 2, 4), want, 1e-5);
    ph_tensor_free(y);
}
END_TEST

START_TEST(test_layernorm)
{
    /* X (2,3), axis -1, Scale (3), B (3), with Mean and InvStdDev */
    tnode t = mk("LayerNormalization", 17, 3, 0, 3);
    ph_node_set_attr_float(t.n, "epsilon", 0.0f);
    const ph_tensor *in[3] = {tf(2, I64(2, 3), F32(1, 2, 3, 0, 0, 6)), tf(1, I64(3), F32(1, 2, 3)),
                              tf(1, I64(3), F32(0, 0, 1))};
    ph_tensor *outs[3] = {0};
    ph_error e;
    ck_assert_msg(run(t, in, outs, &e) == 0, "%s", e.message);
    double r0 = 1 / sqrt(2.0 / 3), r1 = 1 / sqrt(8.0);
    float want[6] = {(float)-r0, 0, (float)(3 * r0 + 1), (float)(-2 * r1), (float)(2 * -2 * r1),
                     (float)(3 * 4 * r1 + 1)};
    expect_f(outs[0], 2, I64(2, 3), want, 1e-5);
    expect_f(outs[1], 2, I64(2, 1), F32(2, 2), 1e-6);
    expect_f(outs[2], 2, I64(2, 1), F32((float)r0, (float)r1), 1e-5);
    for (int i = 0; i < 3; i++) {
        ph_tensor_free(outs[i]);
        ph_tensor_free((ph_tensor *)in[i]);
    }
    ph_model_free(t.m);
    /* axis 1 of (2,2,2): normalize the last two dims together, no B */
    t = mk("LayerNormalization", 17, 2, 0, 1);
    ph_node_set_attr_int(t.n, "axis", 1);
    ph_node_set_attr_float(t.n, "epsilon", 0.0f);
    in[0] = tf(3, I64(2, 2, 2), F32(1, 1, 3, 3, 0, 2, 0, 2));
    in[1] = tf(2, I64(1, 2), F32(1, 2));
    ph_tensor *y = run1(t, 2, in);
    expect_f(y, 3, I64(2, 2, 2), F32(-1, -2, 1, 2, -1, 2, -1, 2), 1e-6);
    ph_tensor_free(y);
}
END_TEST

/* --------------------------------------------------------------- Resize */

static ph_tensor *resize(const char *mode, const char *ctm, const char *nm, size_t rank,
                         const int64_t *xd, const float *x, const float *scales, const int64_t *sizes,
                         const float *roi)
{
    tnode t = mk("Resize", 13, 4, (roi ? 0 : 2u) | (scales ? 0 : 4u) | (sizes ? 0 : 8u), 1);
    ph_node_set_attr_string(t.n, "mode", mode);
    if (ctm)
        ph_node_set_attr_string(t.n, "coordinate_transformation_mode", ctm);
    if (nm)
        ph_node_set_attr_string(t.n, "nearest_mode", nm);
    const ph_tensor *in[4] = {tf(rank, xd, x), roi ? tf(1, I64((int64_t)(2 * rank)), roi) : NULL,
                              scales ? tf(1, I64((int64_t)rank), scales) : NULL,
                              sizes ? ti64(1, I64((int64_t)rank), sizes) : NULL};
    ph_tensor *y = run1(t, 4, in);
    return y;
}

START_TEST(test_resize_nearest)
{
    ph_tensor *y = resize("nearest", NULL, NULL, 4, I64(1, 1, 2, 2), F32(1, 2, 3, 4), F32(1, 1, 2, 3),
                          NULL, NULL);
    expect_f(y, 4, I64(1, 1, 4, 6),
             F32(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4), 0);
    ph_tensor_free(y);
    y = resize("nearest", NULL, NULL, 4, I64(1, 1, 2, 4), F32(1, 2, 3, 4, 5, 6, 7, 8),
               F32(1, 1, 0.6f, 0.6f), NULL, NULL);
    expect_f(y, 4, I64(1, 1, 1, 2), F32(1, 3), 0);
    ph_tensor_free(y);
    /* sizes, asymmetric, round_prefer_ceil: 4x4 -> 8x8 */
    float *x = iota(16, 1);
    y = resize("nearest", "asymmetric", "round_prefer_ceil", 4, I64(1, 1, 4, 4), x, NULL,
               I64(1, 1, 8, 8), NULL);
    static const float row[8] = {1, 2, 2, 3, 3, 4, 4, 4};
    static const int rows[8] = {0, 1, 1, 2, 2, 3, 3, 3};
    float want[64];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            want[i * 8 + j] = row[j] + 4.0f * (float)rows[i];
    expect_f(y, 4, I64(1, 1, 8, 8), want, 0);
    ph_tensor_free(y);
    /* floor and ceil modes with half_pixel, 1-D 3 -> 5 */
    y = resize("nearest", "half_pixel", "floor", 1, I64(3), F32(10, 20, 30), NULL, I64(5), NULL);
    /* x_orig = (o + 0.5) * 0.6 - 0.5 = -0.2, 0.4, 1.0, 1.6, 2.2 */
    expect_f(y, 1, I64(5), F32(10, 10, 20, 20, 30), 0);
    ph_tensor_free(y);
    y = resize("nearest", "half_pixel", "ceil", 1, I64(3), F32(10, 20, 30), NULL, I64(5), NULL);
    expect_f(y, 1, I64(5), F32(10, 20, 20, 30, 30), 0);
    ph_tensor_free(y);
    free(x);
}
END_TEST

START_TEST(test_resize_linear_cubic)
{
    ph_tensor *y = resize("linear", NULL, NULL, 4, I64(1, 1, 2, 2), F32(1, 2, 3, 4), F32(1, 1, 2, 2),
                          NULL, NULL);
    expect_f(y, 4, I64(1, 1, 4, 4),
             F32(1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4), 1e-6);
    ph_tensor_free(y);
    y = resize("linear", "align_corners", NULL, 4, I64(1, 1, 2, 2), F32(1, 2, 3, 4), F32(1, 1, 2, 2),
               NULL, NULL);
    expect_f(y, 4, I64(1, 1, 4, 4),
             F32(1, 1.3333333f, 1.6666667f, 2, 1.6666667f, 2, 2.3333333f, 2.6666667f, 2.3333333f,
                 2.6666667f, 3, 3.3333333f, 3, 3.3333333f, 3.6666667f, 4), 1e-6);
    ph_tensor_free(y);
    y = resize("linear", NULL, NULL, 4, I64(1, 1, 2, 4), F32(1, 2, 3, 4, 5, 6, 7, 8),
               F32(1, 1, 0.6f, 0.6f), NULL, NULL);
    expect_f(y, 4, I64(1, 1, 1, 2), F32(2.6666665f, 4.3333331f), 1e-6);
    ph_tensor_free(y);
    y = resize("linear", "pytorch_half_pixel", NULL, 4, I64(1, 1, 2, 4), F32(1, 2, 3, 4, 5, 6, 7, 8),
               NULL, I64(1, 1, 1, 2), NULL);
    /* height 1: x_orig 0; width: (o + 0.5) * 2 - 0.5 = 0.5, 2.5 */
    expect_f(y, 4, I64(1, 1, 1, 2), F32(1.5, 3.5), 1e-6);
    ph_tensor_free(y);
    float *x = iota(16, 1);
    y = resize("linear", "tf_crop_and_resize", NULL, 4, I64(1, 1, 4, 4), x, NULL, I64(1, 1, 3, 3),
               F32(0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f));
    expect_f(y, 4, I64(1, 1, 3, 3), F32(7.6f, 7.9f, 8.2f, 8.8f, 9.1f, 9.4f, 10, 10.3f, 10.6f), 1e-5);
    ph_tensor_free(y);
    y = resize("cubic", NULL, NULL, 4, I64(1, 1, 4, 4), x, F32(1, 1, 2, 2), NULL, NULL);
    const float *d = ph_tensor_data(y);
    static const float row0[8] = {0.47265625f, 0.76953125f, 1.24609375f, 1.875f,
                                  2.28125f, 2.91015625f, 3.38671875f, 3.68359375f};
    for (int i = 0; i < 8; i++)
        ck_assert_msg(fabsf(d[i] - row0[i]) < 1e-5f, "cubic %d: %g", i, d[i]);
    ck_assert(fabsf(d[63] - 16.52734375f) < 1e-5f);
    ph_tensor_free(y);
    free(x);
}
END_TEST

/* --------------------------------------------------------------- Einsum */

static ph_tensor *einsum(const char *eq, size_t n, const ph_tensor **in)
{
    tnode t = mk("Einsum", 12, n, 0, 1);
    ph_node_set_attr_string(t.n, "equation", eq);
    return run1(t, n, in);
}

START_TEST(test_einsum)
{
    const ph_tensor *in[3];
    in[0] = tf(2, I64(2, 3), F32(1, 2, 3, 4, 5, 6));
    in[1] = tf(2, I64(3, 2), F32(7, 8, 9, 10, 11, 12));
    ph_tensor *y = einsum("ij,jk->ik", 2, in);
    expect_f(y, 2, I64(2, 2), F32(58, 64, 139, 154), 0);
    ph_tensor_free(y);
    in[0] = tf(2, I64(2, 3), F32(1, 2, 3, 4, 5, 6));
    y = einsum("ij->ji", 1, in);
    expect_f(y, 2, I64(3, 2), F32(1, 4, 2, 5, 3, 6), 0);
    ph_tensor_free(y);
    in[0] = tf(2, I64(2, 3), F32(1, 2, 3, 4, 5, 6));
    y = einsum("ij -> i", 1, in);
    expect_f(y, 1, I64(2), F32(6, 15), 0);
    ph_tensor_free(y);
    /* implicit output: dot product -> scalar; "ij,jk" -> ik */
    in[0] = tf(1, I64(3), F32(1, 2, 3));
    in[1] = tf(1, I64(3), F32(4, 5, 6));
    y = einsum("i,i", 2, in);
    expect_f(y, 0, NULL, F32(32), 0);
    ph_tensor_free(y);
    in[0] = tf(2, I64(2, 3), F32(1, 2, 3, 4, 5, 6));
    in[1] = tf(2, I64(3, 2), F32(7, 8, 9, 10, 11, 12));
    y = einsum("ij,jk", 2, in);
    expect_f(y, 2, I64(2, 2), F32(58, 64, 139, 154), 0);
    ph_tensor_free(y);
    /* attention-style, ellipsis, three operands: checked against loops */
    uint64_t s = 9;
    float *q = rnd(2 * 3 * 4 * 5, &s), *k = rnd(2 * 3 * 6 * 5, &s);
    in[0] = tf(4, I64(2, 3, 4, 5), q);
    in[1] = tf(4, I64(2, 3, 6, 5), k);
    y = einsum("bhqd,bhkd->bhqk", 2, in);
    double ref[144];
    for (int b = 0; b < 6; b++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 6; j++) {
                double acc = 0;
                for (int d = 0; d < 5; d++)
                    acc += (double)q[(b * 4 + i) * 5 + d] * k[(b * 6 + j) * 5 + d];
                ref[(b * 4 + i) * 6 + j] = acc;
            }
    expect_close_ref(y, ref, 144);
    ph_tensor_free(y);
    in[0] = tf(4, I64(2, 3, 4, 5), q);
    in[1] = tf(4, I64(2, 3, 6, 5), k);
    y = einsum("...qd,...kd->...qk", 2, in);
    expect_close_ref(y, ref, 144);
    ph_tensor_free(y);
    /* (i,j),(j,k),(k) -> i with a broadcast batch-free chain */
    in[0] = tf(2, I64(2, 3), F32(1, 2, 3, 4, 5, 6));
    in[1] = tf(2, I64(3, 2), F32(1, 0, 0, 1, 1, 1));
    in[2] = tf(1, I64(2), F32(1, -1));
    y = einsum("ij,jk,k->i", 3, in);
    /* A*B = [[4,5],[10,11]] -> [-1, -1] */
    expect_f(y, 1, I64(2), F32(-1, -1), 0);
    ph_tensor_free(y);
    free(q);
    free(k);
    /* a repeated index takes the diagonal */
    tnode t = mk("Einsum", 12, 1, 0, 1);
    ph_node_set_attr_string(t.n, "equation", "ii->i");
    in[0] = tf(2, I64(2, 2), F32(1, 2, 3, 4));
    ph_tensor *outs[1] = {0};
    ph_error e;
    ck_assert_msg(run(t, in, outs, &e) == 0, "%s", e.message);
    expect_f(outs[0], 1, I64(2), F32(1, 4), 0);
    ph_tensor_free(outs[0]);
    ph_tensor_free((ph_tensor *)in[0]);
    ph_model_free(t.m);
}
END_TEST

/* -------------------------------------------------------------- float64 */

static ph_tensor *td(size_t rank, const int64_t *dims, const double *data)
{
    ph_tensor *t = ph_tensor_new(PH_DT_DOUBLE, rank, dims, data);
    ck_assert_ptr_nonnull(t);
    return t;
}

static void expect_d(const ph_tensor *y, const double *want, int64_t n)
{
    ck_assert_int_eq(ph_tensor_dtype(y), PH_DT_DOUBLE);
    ck_assert_int_eq(ph_tensor_numel(y), n);
    const double *got = ph_tensor_data(y);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(got[i] - want[i]) < 1e-12, "element %lld: %g vs %g", (long long)i, got[i],
                      want[i]);
}

START_TEST(test_float64)
{
    tnode t = mk("Gemm", 13, 3, 0, 1);
    ph_node_set_attr_int(t.n, "transB", 1);
    ph_node_set_attr_float(t.n, "beta", 2.0f);
    const ph_tensor *in[3] = {td(2, I64(2, 3), (const double[]){1, 2, 3, 4, 5, 6}),
                              td(2, I64(2, 3), (const double[]){7, 9, 11, 8, 10, 12}),
                              td(1, I64(2), (const double[]){1, -1})};
    ph_tensor *y = run1(t, 3, in);
    expect_d(y, (const double[]){60, 62, 141, 152}, 4);
    ph_tensor_free(y);
    double x[25], w[9];
    for (int i = 0; i < 25; i++)
        x[i] = i;
    for (int i = 0; i < 9; i++)
        w[i] = 1;
    t = mk("Conv", 11, 2, 0, 1);
    in[0] = td(4, I64(1, 1, 5, 5), x);
    in[1] = td(4, I64(1, 1, 3, 3), w);
    y = run1(t, 2, in);
    expect_d(y, (const double[]){54, 63, 72, 99, 108, 117, 144, 153, 162}, 9);
    ph_tensor_free(y);
    t = mk("MaxPool", 12, 1, 0, 1);
    set_ints(t.n, "kernel_shape", 2, I64(2, 2));
    set_ints(t.n, "strides", 2, I64(2, 2));
    in[0] = td(4, I64(1, 1, 5, 5), x);
    y = run1(t, 1, in);
    expect_d(y, (const double[]){6, 8, 16, 18}, 4);
    ph_tensor_free(y);
    /* unsupported dtype is an error naming the op */
    t = mk("Conv", 11, 2, 0, 1);
    in[0] = ti64(4, I64(1, 1, 1, 1), I64(1));
    in[1] = ti64(4, I64(1, 1, 1, 1), I64(1));
    ph_tensor *outs[1] = {0};
    ph_error e;
    ck_assert_int_eq(run(t, in, outs, &e), PH_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(e.message, "Conv"));
    ph_tensor_free((ph_tensor *)in[0]);
    ph_tensor_free((ph_tensor *)in[1]);
    ph_model_free(t.m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("eval_nn");
    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_matmul_2d_and_1d);
    tcase_add_test(tc, test_matmul_batch_broadcast);
    tcase_add_test(tc, test_matmul_int64);
    tcase_add_test(tc, test_matmul_random_odd_sizes);
    tcase_add_test(tc, test_gemm_flags_and_broadcast);
    tcase_add_test(tc, test_conv_spec_examples);
    tcase_add_test(tc, test_conv_random_vs_naive);
    tcase_add_test(tc, test_conv_errors);
    tcase_add_test(tc, test_conv_transpose);
    tcase_add_test(tc, test_maxpool);
    tcase_add_test(tc, test_averagepool);
    tcase_add_test(tc, test_batchnorm);
    tcase_add_test(tc, test_instancenorm);
    tcase_add_test(tc, test_layernorm);
    tcase_add_test(tc, test_resize_nearest);
    tcase_add_test(tc, test_resize_linear_cubic);
    tcase_add_test(tc, test_einsum);
    tcase_add_test(tc, test_float64);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
