/* tests/test_pass_fuse_mul_into_matmul.c - fuse_mul_into_matmul: a constant
 * scale before or after MatMul/Gemm folded into the constant weight. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"
#include <passhost/constant.h>

PASS_FIXTURE("fuse_mul_into_matmul")

/* Scales 0.5 + k / 4 (never 0). */
#define S1 "[0.5]"
#define S3 "[0.5, 0.75, 1]"
#define S4 "[0.5, 0.75, 1, 1.25]"
#define S5 "[0.5, 0.75, 1, 1.25, 1.5]"

/* A case that folds, and the old weight and scale are gone: `inits`
 * initializers remain. */
static void fold(const char *graph, const char *expect, size_t inits)
{
    PC_CASE(graph, 1, expect);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), inits);
    ph_model_free(m);
}

static const struct {
    const char *graph;
} after_matmul_graphs[] = {
    {"x: float[3,4]; w: const float[4,5]; s: float[5] = " S5 "\nm = MatMul(x, w); y = Mul(m, s)\nreturn y"},
    {"x: float[3,4]; w: const float[4,5]; s: float[1,5] = " S5 "\nm = MatMul(x, w); y = Mul(s, m)\nreturn y"},
    {"x: float[3,4]; w: const float[4,5]; s: float[] = " S1 "\nm = MatMul(x, w); y = Div(m, s)\nreturn y"},
    {"x: float[2,3,4]; w: const float[4,5]; s: float[1,1,5] = " S5 "\nm = MatMul(x, w); y = Div(m, s)\nreturn y"},
    {"x: float[3,4]; w: const float[4,5]; s: float[1] = " S1 "\nm = MatMul(x, w); y = Mul(m, s)\nreturn y"},
};

START_TEST(after_matmul)
{
    fold(after_matmul_graphs[_i].graph, "y = MatMul(x, _:const)", 1);
}
END_TEST

/* Gemm with transB, alpha, beta and a bias C of several shapes. */
static const struct {
    const char *graph, *expect;
} after_gemm_cases[] = {
    {"x: float[3,4]; w: const float[4,5]; c: const float[5]; s: float[5] = " S5 "\n"
     "g = Gemm(x, w, c) {alpha=0.5, beta=2.0}; y = Mul(s, g)\nreturn y",
     "y = Gemm(x, _:const, c) {transB(0)=0, alpha=0.5}"},
    {"x: float[3,4]; w: const float[5,4]; c: const float[3,1]; s: float[5] = " S5 "\n"
     "g = Gemm(x, w, c) {alpha=0.5, beta=2.0, transB=1}; y = Mul(s, g)\nreturn y",
     "y = Gemm(x, _:const, _:const) {transB=1, alpha=0.5}"},
    {"x: float[3,4]; w: const float[4,5]; c: const float[]; s: float[5] = " S5 "\n"
     "g = Gemm(x, w, c) {alpha=0.5, beta=2.0}; y = Div(g, s)\nreturn y",
     "y = Gemm(x, _:const, _:const) {transB(0)=0, alpha=0.5}"},
    {"x: float[3,4]; w: const float[5,4]; c: const float[3,5]; s: float[5] = " S5 "\n"
     "g = Gemm(x, w, c) {alpha=0.5, beta=2.0, transB=1}; y = Mul(s, g)\nreturn y",
     "y = Gemm(x, _:const, _:const) {transB=1, alpha=0.5}"},
    {"x: float[3,4]; w: const float[4,5]; s: float[5] = " S5 "\n"
     "g = Gemm(x, w) {alpha=0.5, beta=2.0}; y = Mul(s, g)\nreturn y",
     "y = Gemm(x, _:const) {transB(0)=0, alpha=0.5}"},
};

START_TEST(after_gemm)
{
    PC_CASE(after_gemm_cases[_i].graph, 1, after_gemm_cases[_i].expect);
}
END_TEST

static const struct {
    const char *graph, *expect;
} before_cases[] = {
    /* x * s[K] @ W */
    {"x: float[3,4]; w: const float[4,5]; s: float[4] = " S4 "\nm = Mul(x, s); y = MatMul(m, w)\nreturn y",
     "y = MatMul(x, _:const)"},
    /* s * x (scalar) @ W, N-D x and batched W */
    {"x: float[2,3,4]; w: const float[2,4,5]; s: float[] = " S1 "\nm = Mul(s, x); y = MatMul(m, w)\nreturn y",
     "y = MatMul(x, _:const)"},
    /* x / s[1, 1, K] @ W[2, K, N] */
    {"x: float[2,3,4]; w: const float[2,4,5]; s: float[1,1,4] = " S4 "\nm = Div(x, s); y = MatMul(m, w)\nreturn y",
     "y = MatMul(x, _:const)"},
    /* Gemm transA: A [K, M] scaled per row by s [K, 1] */
    {"x: float[4,3]; w: const float[4,5]; c: const float[5]; s: float[4,1] = " S4 "\n"
     "m = Mul(x, s); y = Gemm(m, w, c) {transA=1}\nreturn y",
     "y = Gemm(x, _:const, c) {transA=1}"},
    /* Gemm transB: W [N, K], s [K], a bias from a node */
    {"x: float[3,4]; w: const float[5,4]; ci: float[3,5]; s: float[1,4] = " S4 "\n"
     "m = Div(x, s); c = Relu(ci); y = Gemm(m, w, c) {transB=1}\nreturn y",
     "c = Relu(ci)\ny = Gemm(x, _:const, c) {transB=1}"},
    /* 1-D x */
    {"x: float[4]; w: const float[4,5]; s: float[4] = " S4 "\nm = Mul(x, s); y = MatMul(m, w)\nreturn y",
     "y = MatMul(x, _:const)"},
};

START_TEST(before_matmul_and_gemm)
{
    PC_CASE(before_cases[_i].graph, 1, before_cases[_i].expect);
}
END_TEST

#define XW "x: float[3,4]; w: const float[4,5]; s: float[5] = " S5 "; sk: float[4] = " S4 "\n"
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* the product has another consumer */
    {XW "m = MatMul(x, w); y = Mul(m, s); n = Neg(m)\nreturn y, n", 0},
    /* the product is a graph output */
    {XW "m = MatMul(x, w); y = Mul(m, s)\nreturn y, m", 0},
    /* the scale is not constant */
    {XW "sv: float[5]\nm = MatMul(x, w); y = Mul(m, sv)\nreturn y", 0},
    /* the weight is not constant */
    {XW "wi: float[4,5]\nwv = Relu(wi); m = MatMul(x, wv); y = Mul(m, s)\nreturn y", 0},
    /* after: per output row, not per column */
    {XW "sr: float[3,1] = " S3 "\nm = MatMul(x, w); y = Mul(m, sr)\nreturn y", 0},
    /* after: s of rank 3 widens the rank-2 product */
    {XW "s3: float[1,1,5] = " S5 "\nm = MatMul(x, w); y = Mul(m, s3)\nreturn y", 0},
    /* after: Div by a zero */
    {XW "z: float[5] = [0]\nm = MatMul(x, w); y = Div(m, z)\nreturn y", 0},
    /* after: constant divided by the product */
    {XW "m = MatMul(x, w); y = Div(s, m)\nreturn y", 0},
    /* before: varies along x's rows */
    {XW "sr: float[3,1] = " S3 "\nm = Mul(x, sr); y = MatMul(m, w)\nreturn y", 0},
    /* before: x [3, 1] widened to [3, 4] by s */
    {"x: float[3,1]; w: const float[4,5]; sk: float[4] = " S4 "\nm = Mul(x, sk); y = MatMul(m, w)\nreturn y", 0},
    /* before: rank of x unknown */
    {"x: float[*]; w: const float[4,5]; sk: float[4] = " S4 "\nm = Mul(x, sk); y = MatMul(m, w)\nreturn y", 1},
    /* before: the scaled value has another consumer */
    {XW "m = Mul(x, sk); y = MatMul(m, w)\nreturn y, m", 0},
    /* after: Gemm bias not constant */
    {XW "ci: float[5]\nc = Relu(ci); g = Gemm(x, w, c); y = Mul(g, s)\nreturn y", 0},
    /* before: Gemm transA and s along A's axis 1 (M, not K) */
    {"x: float[4,4]; w: const float[4,5]; sk: float[4] = " S4 "\nm = Mul(x, sk); y = Gemm(m, w) {transA=1}\nreturn y", 0},
    /* before: constant divided by x */
    {XW "m = Div(sk, x); y = MatMul(m, w)\nreturn y", 0},
    /* after: varies along the batch axis of an N-D product */
    {"x: float[2,3,4]; w: const float[4,5]; sb: float[2,1,5] = [0.5]\nm = MatMul(x, w); y = Mul(m, sb)\nreturn y", 0},
    /* the weight is shared with another MatMul */
    {XW "z: float[2,4]\nm = MatMul(x, w); y = Mul(m, s); y2 = MatMul(z, w)\nreturn y, y2", 0},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
}
END_TEST

START_TEST(integers_left_alone)
{
    PC_UNTOUCHED("a: int32[2,2]; w: int32[2,3] = [1, 2, 3, 4, 5, 6]; s: int32[3] = [2, 3, 4]\n"
                 "b = Abs(a); m = MatMul(b, w); y = Div(m, s)\nreturn y");
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[3,4]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    float s[5] = {0.5f, 0.75f, 1, 1.25f, 1.5f};
    ph_value *ts = ph_graph_add_initializer(body[0], "ts", ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(5), s));
    ph_value *es = ph_graph_add_initializer(body[1], "es", ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(4), s));
    tk_output(body[0], tk_op2(body[0], "Mul", tk_op2(body[0], "MatMul", x, tk_init(body[0], "tw", 2, TK_I64(4, 5), 1)), ts));
    tk_output(body[1], tk_op2(body[1], "MatMul", tk_op2(body[1], "Mul", x, es), tk_init(body[1], "ew", 2, TK_I64(4, 5), 1)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "y = MatMul(x, _:const)");
    PC_GRAPH_IS(body[1], "y = MatMul(x, _:const)");
    ph_model_free(m);
}
END_TEST

/* Gemm {transB=1} of a and w. */
static ph_value *gemm_tb(ph_graph *g, ph_value *a, ph_value *w)
{
    ph_value *in[2] = {a, w};
    ph_node *n = tk_node(g, "Gemm", 2, in);
    ph_node_set_attr_int(n, "transB", 1);
    return ph_node_output(n, 0);
}

/* ---------------------------------- rounding of the weight (kept as C: it
 * reads every bit of the new weight, which a pattern cannot say) */

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
        y = tk_op2(g, "Div", gemm_tb(g, x, wv), s);
    else
        y = tk_op2(g, div ? "Div" : "Mul", tk_op2(g, "MatMul", x, wv), s);
    tk_output(g, y);
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
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

int main(void)
{
    Suite *s = suite_create("fuse_mul_into_matmul");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, after_matmul, 0, (int)(sizeof after_matmul_graphs / sizeof *after_matmul_graphs));
    tcase_add_loop_test(tc, after_gemm, 0, (int)(sizeof after_gemm_cases / sizeof *after_gemm_cases));
    tcase_add_loop_test(tc, before_matmul_and_gemm, 0, (int)(sizeof before_cases / sizeof *before_cases));
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, integers_left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    tcase_add_test(tc, weights_rounded_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
