/* tests/test_pass_split_qkv_matmul.c - split_qkv_matmul: the QKV MatMul cut
 * by Gathers (or a Split) after Reshape/Transpose becomes one MatMul per
 * part.  The pass is off by default: it is loaded and run by name. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("split_qkv_matmul")

/* one part: x @ W [8, 8] + bias, reshaped and transposed into `out` */
#define PART(n, out) "m" n " = MatMul(x, _:const:shape=[8,8])\na" n " = Add(_:const, m" n ")\nr" n " = Reshape(a" n ", _:const)\n" \
                     out " = Transpose(r" n ")\n"

/* Gathers with scalar indices (one on axis -5, one of -1) become three
 * MatMuls; k's two Transposes merged into one; q keeps its name; 3 x (w,
 * bias, shape) left */
START_TEST(gathers_become_matmuls)
{
    const char *graph = "x: float[2,5,8]; w: const float[8,24]; bias: const float[24]; shape: int64[5] = [0, -1, 3, 2, 4]\n"
                        "i0: int64[] = [0]; i1: int64[] = [1]; im: int64[] = [-1]\n"
                        "m = MatMul(x, w); a = Add(bias, m); r = Reshape(a, shape); t = Transpose(r) {perm=[2,0,3,1,4]}\n"
                        "q = Gather(t, i0) {axis=0}; k = Gather(t, i1) {axis=-5}; v = Gather(t, im) {axis=0}\n"
                        "kt = Transpose(k) {perm=[0,1,3,2]}; vr = Relu(v)\nreturn q, kt, vr";
    PC_CASE(graph, 3, PART("2", "t2") "vr = Relu(t2)\n--\n" PART("0", "q") "--\n" PART("1", "kt"));
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *qname = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 3);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), qname);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 9);
    free(qname);
    ph_model_free(m);
}
END_TEST

/* The part axis in the middle of the reshaped columns (interleaved
 * columns), a Split with and without sizes, scalar and per-column
 * elementwise ops on either side. */
#define INTERLEAVED                                                                                \
    "x: float[2,5,6]; w: const float[6,12]; scale: const float[]; c: const float[1,1,12]; d: const float[1]\n" \
    "shape: int64[5] = [0, 0, 2, 3, 2]\n"                                                          \
    "m = MatMul(x, w); p = Mul(m, scale); s = Sub(c, p); q = Div(s, d); r = Reshape(q, shape)\n"   \
    "t = Transpose(r) {perm=[3,0,2,1,4]}\n"
#define IPART(n, out) "m" n " = MatMul(x, _:const)\np" n " = Mul(m" n ", scale)\ns" n " = Sub(_:const, p" n ")\n" \
                      "q" n " = Div(s" n ", d)\nr" n " = Reshape(q" n ", _:const)\n" out " = Transpose(r" n ")\n"
static const struct {
    const char *graph, *expect;
} interleaved[] = {
    {INTERLEAVED "a, b, e = Split(t)\nreturn a, b, e", IPART("0", "a") "--\n" IPART("1", "b") "--\n" IPART("2", "e")},
    {INTERLEAVED "sizes: int64[3] = [1, 1, 1]\na, b, e = Split(t, sizes)\nreturn a, b, e",
     IPART("0", "a") "--\n" IPART("1", "b") "--\n" IPART("2", "e")},
    /* the middle piece is not read */
    {INTERLEAVED "sizes: int64[3] = [1, 1, 1]\na, b, e = Split(t, sizes)\nreturn a, e", IPART("0", "a") "--\n" IPART("2", "e")},
};

START_TEST(split_of_interleaved_columns)
{
    PC_CASE(interleaved[_i].graph, 1, interleaved[_i].expect);
}
END_TEST

/* Parameters: two parts only with parts=2 (or 0); min_hidden refuses. */
#define TWO_PARTS "x: float[5,8]; w: const float[8,16]; shape: int64[3] = [5, 2, 8]; i0: int64[1] = [0]; i1: int64[] = [1]\n" \
                  "m = MatMul(x, w); r = Reshape(m, shape); t = Transpose(r) {perm=[1,0,2]}\n"                       \
                  "a = Gather(t, i0) {axis=0}; b = Gather(t, i1) {axis=0}\nreturn a, b"
/* the scalar index leaves [5, 8] in order: no Transpose for it */
#define SPLIT_TWO "m0 = MatMul(x, _:const)\nr0 = Reshape(m0, _:const)\na = Transpose(r0)\n--\n" \
                  "m1 = MatMul(x, _:const)\nb = Reshape(m1, _:const)"
static const struct {
    const char *params[3];
    int rewrites;
} parameters[] = {
    {{NULL}, 0},
    {{"parts=2", NULL}, 2},
    {{"parts=0", NULL}, 2},
    {{"parts=0", "min_hidden=9", NULL}, 0},
};

START_TEST(parameter)
{
    ph_test_options o = {.max_iterations = 4, .params = parameters[_i].params[0] ? parameters[_i].params : NULL};
    PC_CASE_OPTS(&o, TWO_PARTS, parameters[_i].rewrites, parameters[_i].rewrites ? SPLIT_TWO : NULL);
}
END_TEST

/* x [3,5,8] @ W [8,24] + bias, Reshape(R) and Transpose(T), three Gathers */
#define QKV(x, r, t, more, i2, outs)                                                               \
    "x: " x "; w: const float[8,24]; bias: const float[24]; shape: int64[" r "]\n"                 \
    "i0: int64[] = [0]; i1: int64[] = [1]; i2: int64[] = [" i2 "]\n"                              \
    "m = MatMul(x, w); a = Add(bias, m); rs = Reshape(a, shape); t = Transpose(rs) {perm=[" t "]}\n" \
    "g0 = Gather(t, i0) {axis=0}; g1 = Gather(t, i1) {axis=0}; g2 = Gather(t, i2) {axis=0}\n" more \
    "return g0, g1, g2" outs
#define STD_R "5] = [0, 0, 3, 2, 4"
#define STD_T "2,0,3,1,4"
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* t has another reader */
    {QKV("float[3,5,8]", STD_R, STD_T, "n = Relu(t)\n", "2", ", n"), 0},
    /* the product has another reader */
    {QKV("float[3,5,8]", STD_R, STD_T, "n = Relu(m)\n", "2", ", n"), 0},
    /* the biased product is a graph output */
    {QKV("float[3,5,8]", STD_R, STD_T, "", "2", ", a"), 0},
    /* W is no constant */
    {"x: float[3,5,8]; w: float[8,24]; bias: const float[24]; shape: int64[5] = [0, 0, 3, 2, 4]\n"
     "i0: int64[] = [0]; i1: int64[] = [1]; i2: int64[] = [2]\n"
     "m = MatMul(x, w); a = Add(bias, m); rs = Reshape(a, shape); t = Transpose(rs) {perm=[2,0,3,1,4]}\n"
     "g0 = Gather(t, i0) {axis=0}; g1 = Gather(t, i1) {axis=0}; g2 = Gather(t, i2) {axis=0}\nreturn g0, g1, g2", 0},
    /* x's rank unknown */
    {QKV("float[*]", STD_R, STD_T, "", "2", ""), 1},
    /* the product's columns mixed with its rows */
    {QKV("float[3,5,8]", "4] = [3, 15, 2, 4", "1,0,2,3", "", "2", ""), 0},
    /* the axis cut is a row axis (the batch) */
    {QKV("float[3,5,8]", "5] = [3, 5, 3, 2, 4", "0,2,3,1,4", "", "2", ""), 0},
    /* index 1 twice */
    {QKV("float[3,5,8]", STD_R, STD_T, "", "1", ""), 0},
    /* four parts while the parameter wants three */
    {QKV("float[3,5,8]", "5] = [0, 0, 4, 2, 3", STD_T, "", "2", ""), 0},
    /* an integer MatMul */
    {"x: int32[3,5,8]; w: int32[8,24] = [0]; shape: int64[5] = [0, 0, 3, 2, 4]\n"
     "i0: int64[] = [0]; i1: int64[] = [1]; i2: int64[] = [2]\n"
     "m = MatMul(x, w); rs = Reshape(m, shape); t = Transpose(rs) {perm=[2,0,3,1,4]}\n"
     "g0 = Gather(t, i0) {axis=0}; g1 = Gather(t, i1) {axis=0}; g2 = Gather(t, i2) {axis=0}\nreturn g0, g1, g2", 0},
    /* t is a graph output */
    {QKV("float[3,5,8]", STD_R, STD_T, "", "2", ", t"), 0},
    /* a Gather index that is not constant */
    {"x: float[3,5,8]; w: const float[8,24]; bias: const float[24]; shape: int64[5] = [0, 0, 3, 2, 4]\n"
     "i0: int64[]; i1: int64[] = [1]; i2: int64[] = [2]\n"
     "m = MatMul(x, w); a = Add(bias, m); rs = Reshape(a, shape); t = Transpose(rs) {perm=[2,0,3,1,4]}\n"
     "g0 = Gather(t, i0) {axis=0}; g1 = Gather(t, i1) {axis=0}; g2 = Gather(t, i2) {axis=0}\nreturn g0, g1, g2", 1},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
}
END_TEST

/* Gather(t, i) on axis 0 with a scalar index. */
static ph_value *gather(ph_graph *g, ph_value *t, int64_t i)
{
    ph_value *in[2] = {t, ph_graph_add_initializer(g, "i", ph_tensor_new(PH_DT_INT64, 0, NULL, &i))};
    ph_node *n = tk_node(g, "Gather", 2, in);
    ph_node_set_attr_int(n, "axis", 0);
    return ph_node_output(n, 0);
}

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[2,5,8]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_graph *b = body[0];
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    ph_value *v = tk_op2(b, "Add", tk_init(b, "bias", 1, TK_I64(24), 6), tk_op2(b, "MatMul", x, tk_init(b, "w", 2, TK_I64(8, 24), 5)));
    ph_value *in[2] = {v, tk_ints(b, "shape", 5, TK_I64(0, 0, 3, 2, 4))};
    ph_value *t = tk_transpose(b, ph_node_output(tk_node(b, "Reshape", 2, in), 0), 5, TK_I64(2, 0, 3, 1, 4));
    tk_output(b, tk_op2(b, "Add", tk_op2(b, "Add", gather(b, t, 0), gather(b, t, 1)), gather(b, t, 2)));
    tk_output(body[1], tk_init(body[1], "k", 4, TK_I64(2, 2, 5, 4), 3));
    pc_run_checked(m, 3); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(b, PART("0", "t0") PART("1", "t1") "s = Add(t0, t1)\n" PART("2", "t2") "y = Add(s, t2)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("split_qkv_matmul");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, gathers_become_matmuls);
    tcase_add_loop_test(tc, split_of_interleaved_columns, 0, (int)(sizeof interleaved / sizeof *interleaved));
    tcase_add_loop_test(tc, parameter, 0, (int)(sizeof parameters / sizeof *parameters));
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
