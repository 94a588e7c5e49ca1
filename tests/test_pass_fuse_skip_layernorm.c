/* tests/test_pass_fuse_skip_layernorm.c - fuse_skip_layernorm: residual Add
 * (+ bias) + LayerNormalization, or its decomposed form, -> com.microsoft
 * SkipLayerNormalization.  The evaluator has no com.microsoft operators, so
 * the fusions are checked for structure (unchecked runs); scripts/test_ort.sh
 * checks the numbers in ONNX Runtime.  The cases left alone are checked
 * numerically. */
#include <stdio.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("fuse_skip_layernorm")

/* a, r [2,4,8] (Relu outputs), gamma g and beta b [8]; s = r + a, or
 * r + (a + bias) with t = a + bias. */
#define IN "ai: float[2,4,8]; ri: float[2,4,8]; g: const float[8]; b: const float[8]\na = Relu(ai); r = Relu(ri)\n"
#define SUM IN "s = Add(r, a)\n"
#define BSUM IN "bias: const float[8]\nt = Add(a, bias); s = Add(r, t)\n"
#define LN "y = LayerNormalization(s, g, b) {epsilon=0.001}; o = Neg(y)\nreturn o"
/* the decomposed layer norm of s over `axis` (opset 13: axes attributes),
 * exponent `pw`, ending at n = (s - mean) / sqrt(var + eps) */
#define NORM(axis, pw)                                                                             \
    "two: float[] = [" pw "]; eps: float[] = [0.001]\n"                                           \
    "mu = ReduceMean(s) {axes=[" axis "]}; d = Sub(s, mu); p = Pow(d, two)\n"                      \
    "v = ReduceMean(p) {axes=[" axis "]}; e = Add(v, eps); sd = Sqrt(e); n = Div(d, sd)\n"
/* opset 18: ReduceMean's axes as an input */
#define NORM18(axis)                                                                               \
    "opset 18\ntwo: float[] = [2]; eps: float[] = [0.001]; axes: int64[1] = [" axis "]\n"        \
    "mu = ReduceMean(s, axes); d = Sub(s, mu); p = Pow(d, two)\n"                                  \
    "v = ReduceMean(p, axes); e = Add(v, eps); sd = Sqrt(e); n = Div(d, sd)\n"
#define AFFINE "m = Mul(n, g); y = Add(m, b); o = Neg(y)\nreturn o"

#define RELUS "a = Relu(ai)\nr = Relu(ri)\n"
#define SLN "y = SkipLayerNormalization@com.microsoft"
#define NEG "o = Neg(y:shape=[2,4,8])"

/* A fusion: unchecked (no com.microsoft kernels), one rewrite, the result
 * `expect`, the domain imported at version 1; beta: 1 the SLN's input 3 is
 * there, 0 it is not, -1 either. */
static void fused(const char *graph, const char *expect, int beta)
{
    PC_CASE_OPTS(&pc_unchecked, graph, 1, expect);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), 1);
    ph_graph *gr = ph_model_graph(m);
    for (ph_node *n = ph_graph_first_node(gr); n; n = ph_node_next(n))
        if (!strcmp(ph_node_op_type(n), "SkipLayerNormalization") && beta >= 0)
            ck_assert_int_eq(ph_node_input_count(n) > 3 && ph_node_input(n, 3) != NULL, beta);
    ph_model_free(m);
}

static const struct {
    const char *graph, *expect;
    int beta;
} fusions[] = {
    {"opset 17\n" SUM LN, RELUS SLN "(r, a, g, b) {epsilon=0.001}\n" NEG, 1},
    {BSUM LN, RELUS SLN "(a, r, g, b, bias) {epsilon=0.001}\n" NEG, 1},
    /* decomposed; eps comes from the Add's constant */
    {"opset 13\n" SUM NORM("-1", "2") AFFINE, RELUS SLN "(r, a, g, b) {epsilon=0.001}\n" NEG, 1},
    {"opset 13\n" BSUM NORM("2", "2") AFFINE, RELUS SLN "(a, r, g, b, bias) {epsilon=0.001}\n" NEG, 1},
    {SUM NORM18("-1") AFFINE, RELUS SLN "(r, a, g, b) {epsilon=0.001}\n" NEG, 1},
    {BSUM NORM18("2") AFFINE, RELUS SLN "(a, r, g, b, bias) {epsilon=0.001}\n" NEG, 1},
    /* decomposed without gamma and/or beta (eliminate_nop_arith drops a
     * gamma of ones and a beta of zeros): gamma of ones made when missing */
    {"opset 13\n" SUM NORM("-1", "2") "y = Mul(n, g); o = Neg(y)\nreturn o",
     RELUS SLN "(r, a, g) {epsilon=0.001}\n" NEG, 0},
    {"opset 13\n" BSUM NORM("-1", "2") "y = Mul(n, g); o = Neg(y)\nreturn o",
     RELUS SLN "(a, r, g, _?, bias) {epsilon=0.001}\n" NEG, 0},
    {"opset 13\n" SUM NORM("-1", "2") "y = Add(n, b); o = Neg(y)\nreturn o",
     RELUS SLN "(r, a, _:all=1:shape=[8], b) {epsilon=0.001}\n" NEG, 1},
    {"opset 13\n" BSUM NORM("-1", "2") "y = Add(n, b); o = Neg(y)\nreturn o",
     RELUS SLN "(a, r, _:all=1:shape=[8], b, bias) {epsilon=0.001}\n" NEG, 1},
    {"opset 13\n" SUM NORM("-1", "2") "o = Neg(n)\nreturn o",
     RELUS SLN "(r, a, _:all=1:shape=[8]) {epsilon=0.001}\n" NEG, 0},
    {"opset 13\n" BSUM NORM("-1", "2") "o = Neg(n)\nreturn o",
     RELUS SLN "(a, r, _:all=1:shape=[8], _?, bias) {epsilon=0.001}\n" NEG, 0},
    /* without beta */
    {SUM "y = LayerNormalization(s, g) {epsilon=0.001}; o = Neg(y)\nreturn o",
     RELUS SLN "(r, a, g) {epsilon=0.001}\n" NEG, 0},
    /* decomposed, the normalized value also read elsewhere: the plain form
     * fuses and the Mul gamma / Add beta stay, reading its output */
    {"opset 13\n" SUM NORM("-1", "2") "m = Mul(n, g); y = Add(m, b); o = Neg(y); o2 = Neg(n)\nreturn o, o2",
     RELUS SLN "(r, a, _:all=1) {epsilon=0.001}\n--\nm = Mul(y, g)\nad = Add(m, b)\no = Neg(ad)\n--\no2 = Neg(y)", 0},
    /* the residual sum has other readers: they read output 3 (input_skip_bias_sum) */
    {SUM "y = LayerNormalization(s, g, b) {epsilon=0.001}; o = Neg(y); o2 = Neg(s)\nreturn o, o2",
     RELUS "y, _, _, s = SkipLayerNormalization@com.microsoft(r, a, g, b) {epsilon=0.001}\n--\n" NEG "\n--\no2 = Neg(s:rank=3)", 1},
    {SUM LN ", s", RELUS "y, _, _, s:shared = SkipLayerNormalization@com.microsoft(r, a, g, b) {epsilon=0.001}\n" NEG, 1},
    {"opset 13\n" SUM NORM("-1", "2") "m = Mul(n, g); y = Add(m, b); o = Neg(y); o2 = Neg(s)\nreturn o, o2",
     RELUS "y, _, _, s = SkipLayerNormalization@com.microsoft(r, a, g, b) {epsilon=0.001}\n--\n" NEG "\n--\no2 = Neg(s)", 1},
    /* the bias Add has another reader: no bias input, the biased value is the input */
    {BSUM "y = LayerNormalization(s, g, b) {epsilon=0.001}; o = Neg(y); o2 = Neg(t)\nreturn o, o2",
     "a = Relu(ai)\nt = Add(a, bias)\n--\nr = Relu(ri)\n--\n" SLN "(r, t, g, b) {epsilon=0.001}\n--\n" NEG "\n--\no2 = Neg(t)", 1},
};

START_TEST(fuses)
{
    fused(fusions[_i].graph, fusions[_i].expect, fusions[_i].beta);
}
END_TEST

/* the residual sum kept as a graph output keeps its name */
START_TEST(sum_output_keeps_its_name)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(SUM LN ", s", &err);
    ph_graph *g = ph_model_graph(m);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 1)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ph_node *sln = ph_value_producer(ph_graph_output(g, 1));
    ck_assert_str_eq(ph_node_op_type(sln), "SkipLayerNormalization");
    ck_assert_ptr_eq(ph_node_output(sln, 3), ph_graph_output(g, 1));
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 1)), name);
    ph_model_free(m);
}
END_TEST

static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* the residual operands differ in shape (r broadcasts) */
    {IN "r1i: float[1,4,8]\nr1 = Relu(r1i); s = Add(r1, a)\n" LN, 0},
    /* rank 2 */
    {"ai: float[4,8]; ri: float[4,8]; g: const float[8]; b: const float[8]\na = Relu(ai); r = Relu(ri); s = Add(r, a)\n" LN, 0},
    /* axis 1 */
    {SUM "y = LayerNormalization(s, g, b) {epsilon=0.001, axis=1}; o = Neg(y)\nreturn o", 0},
    /* gamma is not constant */
    {SUM "gi: float[8]\ny = LayerNormalization(s, gi, b) {epsilon=0.001}; o = Neg(y)\nreturn o", 0},
    /* the LayerNormalization's Mean output is used */
    {SUM "y, mean = LayerNormalization(s, g, b) {epsilon=0.001}; o = Neg(y); o2 = Neg(mean)\nreturn o, o2", 0},
    /* H unknown (one symbolic dim: a and r provably of one shape) */
    {"ai: float[2,4,hidden]; ri: float[2,4,hidden]; g: const float[8]; b: const float[8]\n"
     "a = Relu(ai); r = Relu(ri); s = Add(r, a)\n" LN, 1},
    /* double */
    {"a: double[2,4,8]; r: double[2,4,8]; g: double[8] = [1]; b: double[8] = [1]\ns = Add(r, a)\n" LN, 0},
    /* the residual sum is no Add but a Sub */
    {IN "s = Sub(r, a)\n" LN, 0},
    /* gamma of another length than H (broadcast [1]) */
    {SUM "g1: const float[1]\ny = LayerNormalization(s, g1, b) {epsilon=0.001}; o = Neg(y)\nreturn o", 1},
    /* decomposed: Pow 3 */
    {"opset 13\n" SUM NORM("-1", "3") AFFINE, 0},
    /* decomposed: ReduceMean over axis 1 */
    {"opset 13\n" SUM NORM("1", "2") AFFINE, 0},
    /* decomposed: s - mean read elsewhere */
    {"opset 13\n" SUM NORM("-1", "2") "m = Mul(n, g); y = Add(m, b); o = Neg(y); o2 = Neg(d)\nreturn o, o2", 0},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(alone[_i].graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 0);
    ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), -1);
    ph_model_free(m);
}
END_TEST

/* The If's bodies (text has no subgraphs): Relu(x), Relu(r) summed (with a
 * bias or not) into a LayerNormalization. */
static void body(ph_graph *b, ph_value *x, ph_value *res, int bias)
{
    ph_value *a = tk_op1(b, "Relu", x), *r = tk_op1(b, "Relu", res);
    if (bias)
        a = tk_op2(b, "Add", a, tk_init(b, "bias", 1, TK_I64(8), 9));
    ph_value *in[3] = {tk_op2(b, "Add", r, a), tk_init(b, "g", 1, TK_I64(8), 10), tk_init(b, "b", 1, TK_I64(8), 11)};
    ph_node *ln = tk_node(b, "LayerNormalization", 3, in);
    ph_node_set_attr_float(ln, "epsilon", 1e-3f);
    tk_output(b, ph_node_output(ln, 0));
}

START_TEST(inside_an_if_branch)
{
    ph_graph *bd[2];
    ph_model *m = pc_if_model("x: float[2,4,8]; res: float[2,4,8]; cond: bool[]\ny = If(cond)\nreturn y", &bd[0], &bd[1]);
    ph_graph *g = ph_model_graph(m);
    body(bd[0], ph_graph_find_value(g, "x"), ph_graph_find_value(g, "res"), 0);
    body(bd[1], ph_graph_find_value(g, "x"), ph_graph_find_value(g, "res"), 1);
    pc_run_structure(m, 2);
    PC_GRAPH_IS(bd[0], "a = Relu(x)\nr = Relu(res)\ny = SkipLayerNormalization@com.microsoft(r, a, g, b)");
    PC_GRAPH_IS(bd[1], "a = Relu(x)\nr = Relu(res)\ny = SkipLayerNormalization@com.microsoft(a, r, g, b, bias)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_skip_layernorm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, fuses, 0, (int)(sizeof fusions / sizeof *fusions));
    tcase_add_test(tc, sum_output_keeps_its_name);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
