/* tests/test_pass_fuse_mul_into_matmul.c - fuse_mul_into_matmul: a constant
 * scale before or after MatMul/Gemm folded into the constant weight. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"
#include <passhost/constant.h>

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("fuse_mul_into_matmul");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* A float initializer with values 0.5 + k / 4 (never 0). */
static ph_value *scale(ph_graph *g, const char *name, int rank, const int64_t *dims)
{
    float v[64];
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    ck_assert_int_le(n, 64);
    for (int64_t k = 0; k < n; k++)
        v[k] = 0.5f + (float)k / 4;
    ph_value *s = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, (size_t)rank, dims, v));
    ck_assert_ptr_nonnull(s);
    return s;
}

static ph_value *relu_in(ph_graph *g, const char *name, int rank, const int64_t *dims)
{
    return tk_op1(g, "Relu", tk_input(g, name, rank, dims));
}

static ph_node *gemm(ph_graph *g, ph_value *a, ph_value *w, ph_value *c, int ta, int tb)
{
    ph_value *in[3] = {a, w, c};
    ph_node *n = tk_node(g, "Gemm", c ? 3 : 2, in);
    if (ta)
        ph_node_set_attr_int(n, "transA", 1);
    if (tb)
        ph_node_set_attr_int(n, "transB", 1);
    return n;
}

/* Run the pass with a numeric check, expect one rewrite leaving `ops`, then
 * idempotence. */
static void expect_fold(ph_model *m, uint64_t seed, const char *ops)
{
    char buf[256];
    ck_assert_int_eq(tk_pass_run_eval(pass, m, seed, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(ph_model_graph(m), buf, sizeof buf), ops);
    tk_assert_untouched(pass, m);
}

START_TEST(after_matmul)
{
    for (int v = 0; v < 5; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = v == 3 ? relu_in(g, "x", 3, TK_I64(2, 3, 4)) : relu_in(g, "x", 2, TK_I64(3, 4));
        ph_value *w = tk_init(g, "w", 2, TK_I64(4, 5), 1);
        ph_value *mm = tk_op2(g, "MatMul", x, w), *y;
        switch (v) {
        case 0: y = tk_op2(g, "Mul", mm, scale(g, "s", 1, TK_I64(5))); break;
        case 1: y = tk_op2(g, "Mul", scale(g, "s", 2, TK_I64(1, 5)), mm); break;
        case 2: y = tk_op2(g, "Div", mm, scale(g, "s", 0, NULL)); break;
        case 3: y = tk_op2(g, "Div", mm, scale(g, "s", 3, TK_I64(1, 1, 5))); break;
        default: y = tk_op2(g, "Mul", mm, scale(g, "s", 1, TK_I64(1))); break;
        }
        tk_output(g, y);
        expect_fold(m, 40 + (uint64_t)v, "Relu,MatMul");
        ck_assert_ptr_ne(ph_node_input(tk_find_op(g, PH_OP_MatMul), 1), w);
        ck_assert_uint_eq(ph_graph_initializer_count(g), 1); /* old W and s are gone */
        ph_model_free(m);
    }
}
END_TEST

/* Gemm with transB, alpha, beta and a bias C of several shapes. */
START_TEST(after_gemm)
{
    static const struct {
        int rank;
        int64_t dims[2];
    } cs[] = {{1, {5}}, {2, {3, 1}}, {0, {0}}, {2, {3, 5}}, {-1, {0}}};
    for (size_t v = 0; v < sizeof cs / sizeof cs[0]; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = relu_in(g, "x", 2, TK_I64(3, 4));
        int tb = (int)v % 2;
        ph_value *w = tk_init(g, "w", 2, tb ? TK_I64(5, 4) : TK_I64(4, 5), 1);
        ph_value *c = cs[v].rank >= 0 ? tk_init(g, "c", cs[v].rank, cs[v].dims, 2) : NULL;
        ph_node *n = gemm(g, x, w, c, 0, tb);
        ph_node_set_attr_float(n, "alpha", 0.5f);
        ph_node_set_attr_float(n, "beta", 2.0f);
        ph_value *s = scale(g, "s", 1, TK_I64(5));
        tk_output(g, v == 2 ? tk_op2(g, "Div", ph_node_output(n, 0), s) : tk_op2(g, "Mul", s, ph_node_output(n, 0)));
        expect_fold(m, 50 + v, "Relu,Gemm");
        n = tk_find_op(g, PH_OP_Gemm);
        ck_assert_int_eq(ph_node_attr_int(n, "transB", 0), tb);
        ck_assert_float_eq(ph_node_attr_float(n, "alpha", 1), 0.5f);
        ck_assert_uint_eq(ph_node_input_count(n), c ? 3 : 2);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(before_matmul_and_gemm)
{
    for (int v = 0; v < 6; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *y;
        const char *ops = "Relu,MatMul";
        switch (v) {
        case 0: /* x * s[K] @ W */
            y = tk_op2(g, "MatMul", tk_op2(g, "Mul", relu_in(g, "x", 2, TK_I64(3, 4)), scale(g, "s", 1, TK_I64(4))),
                       tk_init(g, "w", 2, TK_I64(4, 5), 1));
            break;
        case 1: /* s * x (scalar) @ W, N-D x and batched W */
            y = tk_op2(g, "MatMul", tk_op2(g, "Mul", scale(g, "s", 0, NULL), relu_in(g, "x", 3, TK_I64(2, 3, 4))),
                       tk_init(g, "w", 3, TK_I64(2, 4, 5), 1));
            break;
        case 2: /* x / s[1, 1, K] @ W[2, K, N] */
            y = tk_op2(g, "MatMul", tk_op2(g, "Div", relu_in(g, "x", 3, TK_I64(2, 3, 4)), scale(g, "s", 3, TK_I64(1, 1, 4))),
                       tk_init(g, "w", 3, TK_I64(2, 4, 5), 1));
            break;
        case 3: /* Gemm transA: A [K, M] scaled per row by s [K, 1] */
            y = ph_node_output(gemm(g, tk_op2(g, "Mul", relu_in(g, "x", 2, TK_I64(4, 3)), scale(g, "s", 2, TK_I64(4, 1))),
                                    tk_init(g, "w", 2, TK_I64(4, 5), 1), tk_init(g, "c", 1, TK_I64(5), 2), 1, 0), 0);
            ops = "Relu,Gemm";
            break;
        case 4: /* Gemm transB: W [N, K], s [K] */
            y = ph_node_output(gemm(g, tk_op2(g, "Div", relu_in(g, "x", 2, TK_I64(3, 4)), scale(g, "s", 2, TK_I64(1, 4))),
                                    tk_init(g, "w", 2, TK_I64(5, 4), 1), relu_in(g, "c", 2, TK_I64(3, 5)), 0, 1), 0);
            ops = "Relu,Relu,Gemm";
            break;
        default: /* 1-D x */
            y = tk_op2(g, "MatMul", tk_op2(g, "Mul", relu_in(g, "x", 1, TK_I64(4)), scale(g, "s", 1, TK_I64(4))),
                       tk_init(g, "w", 2, TK_I64(4, 5), 1));
        }
        tk_output(g, y);
        expect_fold(m, 60 + (uint64_t)v, ops);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(left_alone)
{
    for (int v = 0; v < 17; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = relu_in(g, "x", v == 10 ? -1 : 2, v == 9 ? TK_I64(3, 1) : TK_I64(3, 4));
        ph_value *w = tk_init(g, "w", 2, TK_I64(4, 5), 1);
        ph_value *s = scale(g, "s", 1, TK_I64(5)), *sk = scale(g, "sk", 1, TK_I64(4));
        ph_value *mm, *y;
        switch (v) {
        case 0: /* the product has another consumer */
            mm = tk_op2(g, "MatMul", x, w);
            y = tk_op2(g, "Mul", mm, s);
            tk_output(g, tk_op1(g, "Neg", mm));
            break;
        case 1: /* the product is a graph output */
            mm = tk_op2(g, "MatMul", x, w);
            y = tk_op2(g, "Mul", mm, s);
            tk_output(g, mm);
            break;
        case 2: /* the scale is not constant */
            y = tk_op2(g, "Mul", tk_op2(g, "MatMul", x, w), tk_input(g, "sv", 1, TK_I64(5)));
            break;
        case 3: /* the weight is not constant */
            y = tk_op2(g, "Mul", tk_op2(g, "MatMul", x, relu_in(g, "wv", 2, TK_I64(4, 5))), s);
            break;
        case 4: /* after: per output row, not per column */
            y = tk_op2(g, "Mul", tk_op2(g, "MatMul", x, w), scale(g, "sr", 2, TK_I64(3, 1)));
            break;
        case 5: /* after: s of rank 3 widens the rank-2 product */
            y = tk_op2(g, "Mul", tk_op2(g, "MatMul", x, w), scale(g, "s3", 3, TK_I64(1, 1, 5)));
            break;
        case 6: /* after: Div by a zero */
            y = tk_op2(g, "Div", tk_op2(g, "MatMul", x, w),
                       ph_graph_add_initializer(g, "z", ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(5), NULL)));
            break;
        case 7: /* after: constant divided by the product */
            y = tk_op2(g, "Div", s, tk_op2(g, "MatMul", x, w));
            break;
        case 8: /* before: varies along x's rows */
            y = tk_op2(g, "MatMul", tk_op2(g, "Mul", x, scale(g, "sr", 2, TK_I64(3, 1))), w);
            break;
        case 9: /* before: x [3, 1] widened to [3, 4] by s */
            y = tk_op2(g, "MatMul", tk_op2(g, "Mul", x, sk), w);
            break;
        case 10: /* before: rank of x unknown */
            y = tk_op2(g, "MatMul", tk_op2(g, "Mul", x, sk), w);
            break;
        case 11: /* before: the scaled value has another consumer */
            mm = tk_op2(g, "Mul", x, sk);
            y = tk_op2(g, "MatMul", mm, w);
            tk_output(g, mm);
            break;
        case 12: /* after: Gemm bias not constant */
            y = tk_op2(g, "Mul", ph_node_output(gemm(g, x, w, relu_in(g, "c", 1, TK_I64(5)), 0, 0), 0), s);
            break;
        case 13: /* before: Gemm transA and s along A's axis 1 (M, not K) */
            x = relu_in(g, "xt", 2, TK_I64(4, 4));
            y = ph_node_output(gemm(g, tk_op2(g, "Mul", x, sk), w, NULL, 1, 0), 0);
            break;
        case 14: /* before: constant divided by x */
            y = tk_op2(g, "MatMul", tk_op2(g, "Div", sk, x), w);
            break;
        case 16: /* the weight is shared with another MatMul */
            y = tk_op2(g, "Mul", tk_op2(g, "MatMul", x, w), s);
            tk_output(g, tk_op2(g, "MatMul", relu_in(g, "z", 2, TK_I64(2, 4)), w));
            break;
        default: /* after: varies along the batch axis of an N-D product */
            y = tk_op2(g, "Mul", tk_op2(g, "MatMul", relu_in(g, "x3", 3, TK_I64(2, 3, 4)), w),
                       scale(g, "sb", 3, TK_I64(2, 1, 5)));
            break;
        }
        tk_output(g, y);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(integers_left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    int32_t wv[6] = {1, 2, 3, 4, 5, 6}, sv[3] = {2, 3, 4};
    ph_value *a = ph_graph_add_input(g, "a", PH_DT_INT32, 2, TK_I64(2, 2));
    ph_value *w = ph_graph_add_initializer(g, "w", ph_tensor_new(PH_DT_INT32, 2, TK_I64(2, 3), wv));
    ph_value *s = ph_graph_add_initializer(g, "s", ph_tensor_new(PH_DT_INT32, 1, TK_I64(3), sv));
    tk_output(g, tk_op2(g, "Div", tk_op2(g, "MatMul", tk_op1(g, "Abs", a), w), s));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_in(g, "x", 2, TK_I64(3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op2(then_g, "Mul", tk_op2(then_g, "MatMul", x, tk_init(then_g, "tw", 2, TK_I64(4, 5), 1)),
                             scale(then_g, "ts", 1, TK_I64(5))));
    tk_output(else_g, tk_op2(else_g, "MatMul", tk_op2(else_g, "Mul", x, scale(else_g, "es", 1, TK_I64(4))),
                             tk_init(else_g, "ew", 2, TK_I64(4, 5), 1)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Mul) + tk_count_op(else_g, PH_OP_Mul), 0);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_MatMul) + tk_count_op(else_g, PH_OP_MatMul), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------- rounding of the weight */

/* A weight element of dtype dt from a 64-bit random word: any float bit
 * pattern (subnormals, huge values, infinities and NaNs included). */
static void weight_elem(int dt, uint64_t r, unsigned char *out)
{
    if (dt == PH_DT_FLOAT) {
        uint32_t b = (uint32_t)(r >> 16);
        memcpy(out, &b, 4);
    } else if (dt == PH_DT_DOUBLE) {
        memcpy(out, &r, 8);
    } else {
        uint16_t b = (uint16_t)(r >> 24);
        memcpy(out, &b, 2);
    }
}

static double elem_f64(int dt, const unsigned char *p)
{
    if (dt == PH_DT_FLOAT) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    if (dt == PH_DT_DOUBLE) {
        double d;
        memcpy(&d, p, 8);
        return d;
    }
    uint16_t h;
    memcpy(&h, p, 2);
    return ph_f16_bits_to_f64(h);
}

/* The element the pass must produce: the exact product or quotient
 * rounded once to dt (what computing in double and rounding gives). */
static void expected_elem(int dt, double w, double s, int div, unsigned char *out)
{
    double v = div ? w / s : w * s;
    if (dt == PH_DT_FLOAT) {
        float f = (float)v;
        memcpy(out, &f, 4);
    } else if (dt == PH_DT_DOUBLE) {
        memcpy(out, &v, 8);
    } else {
        uint16_t h = ph_f64_to_f16_bits(v);
        memcpy(out, &h, 2);
    }
}

/* Every element of the scaled weight, bit for bit, for weights of every
 * kind of value: form 0 MatMul * s[N], 1 MatMul / s[N], 2 (x * s[K]) @ W
 * with W [2, K, N], 3 Gemm transB (W [N, K]) / s[N]. */
static void check_rounding(int dt, int form)
{
    enum { K = 6, N = 40 };
    static const double scales[] = {3.0, 0.1, 1e-3, 300.0, -2.5, 1.0 / 3};
    int div = form == 1 || form == 3, tb = form == 3;
    int64_t wdims[3] = {K, N}, sdim = form == 2 ? K : N;
    size_t wrank = 2, es = dt == PH_DT_FLOAT ? 4 : dt == PH_DT_DOUBLE ? 8 : 2;
    if (form == 2)
        wrank = 3, wdims[0] = 2, wdims[1] = K, wdims[2] = N;
    if (tb)
        wdims[0] = N, wdims[1] = K;
    int64_t nw = wdims[0] * wdims[1] * (wrank == 3 ? wdims[2] : 1);
    unsigned char *w = malloc((size_t)nw * es), *want = malloc((size_t)nw * es), sv[N * 8];
    ck_assert_ptr_nonnull(w);
    ck_assert_ptr_nonnull(want);
    uint64_t r = 0x9E3779B97F4A7C15ull * (uint64_t)(dt * 8 + form + 1);
    for (int64_t i = 0; i < nw; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        weight_elem(dt, r, w + i * (int64_t)es);
    }
    for (int64_t i = 0; i < sdim; i++) { /* scales exactly of dt */
        unsigned char tmp[8];
        expected_elem(dt, scales[i % 6], 1.0, 0, tmp);
        memcpy(sv + i * (int64_t)es, tmp, es);
    }
    for (int64_t i = 0; i < nw; i++) {
        int64_t k = form == 2 ? (i / N) % K : tb ? i / K : i % N;
        expected_elem(dt, elem_f64(dt, w + i * (int64_t)es), elem_f64(dt, sv + k * (int64_t)es), div,
                      want + i * (int64_t)es);
    }
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", ph_graph_add_input(g, "x", dt, form == 2 ? 3 : 2,
                                                       form == 2 ? TK_I64(2, 3, K) : TK_I64(3, K)));
    ph_value *wv = ph_graph_add_initializer(g, "w", ph_tensor_new(dt, wrank, wdims, w));
    ph_value *s = ph_graph_add_initializer(g, "s", ph_tensor_new(dt, 1, &sdim, sv));
    ph_value *y;
    if (form == 2)
        y = tk_op2(g, "MatMul", tk_op2(g, "Mul", x, s), wv);
    else if (form == 3)
        y = tk_op2(g, "Div", ph_node_output(gemm(g, x, wv, NULL, 0, 1), 0), s);
    else
        y = tk_op2(g, div ? "Div" : "Mul", tk_op2(g, "MatMul", x, wv), s);
    tk_output(g, y);
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ph_node *mm = tk_find_op(g, form == 3 ? PH_OP_Gemm : PH_OP_MatMul);
    const ph_tensor *got = ph_value_const(ph_node_input(mm, 1));
    ck_assert_ptr_nonnull(got);
    ck_assert_int_eq(ph_tensor_dtype(got), dt);
    ck_assert_uint_eq(ph_tensor_nbytes(got), (size_t)nw * es);
    const unsigned char *gb = ph_tensor_data(got);
    for (int64_t i = 0; i < nw; i++)
        ck_assert_msg(!memcmp(gb + i * (int64_t)es, want + i * (int64_t)es, es),
                      "dtype %d form %d: element %lld differs", dt, form, (long long)i);
    ph_model_free(m);
    free(w);
    free(want);
}

START_TEST(weights_rounded_once)
{
    static const int dts[] = {PH_DT_FLOAT, PH_DT_DOUBLE, PH_DT_FLOAT16};
    for (int d = 0; d < 3; d++)
        for (int form = 0; form < 4; form++)
            check_rounding(dts[d], form);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_mul_into_matmul");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, after_matmul);
    tcase_add_test(tc, after_gemm);
    tcase_add_test(tc, before_matmul_and_gemm);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, integers_left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    tcase_add_test(tc, weights_rounded_once);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
