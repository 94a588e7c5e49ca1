/* tests/test_pass_decompose_layernorm.c - decompose_layernorm:
 * LayerNormalization becomes LayerNormalization without affine + Mul + Add
 * (default), or primitive operators (primitive = true). */
#include <stdio.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("decompose_layernorm")

static const struct {
    const char *graph, *expect, *ops;
} splits[] = {
    /* constant Scale and B over the last axis */
    {"x: float[2,3,8]; s: const float[8]; b: const float[8]\n"
     "y = LayerNormalization(x, s, b) {axis=-1, epsilon=0.001}\nreturn y",
     "l = LayerNormalization(x, _:const:all=1:shape=[8]) {axis=-1, epsilon=0.001}; m = Mul(l, s); y = Add(m, b)",
     "LayerNormalization,Mul,Add"},
    /* two normalized axes, no B, Scale broadcast over one of them */
    {"x: float[2,3,8]; s: const float[1,8]\ny = LayerNormalization(x, s) {axis=1, epsilon=0.001}\nreturn y",
     "l = LayerNormalization(x, _:const:all=1:shape=[3,8]) {axis=1, epsilon=0.001}; y = Mul(l, s)",
     "LayerNormalization,Mul"},
    /* Scale and B computed at run time */
    {"x: float[2,3,8]; s0: float[8]; b: float[8]\n"
     "s = Relu(s0); y = LayerNormalization(x, s, b) {axis=-1, epsilon=0.001}\nreturn y",
     "s = Relu(s0); l = LayerNormalization(x, _:const:all=1:shape=[8]) {axis=-1, epsilon=0.001}; m = Mul(l, s)\n"
     "y = Add(m, b)",
     "Relu,LayerNormalization,Mul,Add"},
    /* Scale of ones: only the Add */
    {"x: float[2,3,8]; s: float[8] = [1]; b: const float[8]\n"
     "y = LayerNormalization(x, s, b) {axis=-1, epsilon=0.001}\nreturn y",
     "l = LayerNormalization(x, _:const:all=1:shape=[8]) {axis=-1, epsilon=0.001}; y = Add(l, b)",
     "LayerNormalization,Add"},
};

/* the nodes in the order `ops`; the output keeps its name */
START_TEST(split_scale_and_bias)
{
    PC_CASE(splits[_i].graph, 1, splits[_i].expect);
    char ops[256], name[64];
    ph_error err = {0};
    ph_model *m = ph_test_model_text(splits[_i].graph, &err);
    ph_graph *g = ph_model_graph(m);
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), splits[_i].ops);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ph_model_free(m);
}
END_TEST

#define PRIMITIVE_GRAPH(opset, b)                                                                  \
    "opset " opset "\nx: float[batch,3,8]; s: const float[8]; " b "\n"                            \
    "y = LayerNormalization(x, s, b) {axis=2, epsilon=0.001}\nreturn y"
/* The mean, centred; then the variance, the division, Scale and B (no Add
 * for a B of zeros).  Opset 18 gives the axes as an input. */
#define PRIMITIVE_MEAN17 "m = ReduceMean(x) {axes=[2], keepdims=1}; d = Sub(x, m)\n--\n"
#define PRIMITIVE_MEAN18 "m = ReduceMean(x, _:const:all=2) {keepdims=1}; d = Sub(x, m)\n--\n"
#define PRIMITIVE_VAR17 "q = Mul(d, d); v = ReduceMean(q) {axes=[2], keepdims=1}; "
#define PRIMITIVE_VAR18 "q = Mul(d, d); v = ReduceMean(q, _:const:all=2) {keepdims=1}; "
#define PRIMITIVE_REST "e = Add(v, _:const); r = Sqrt(e); n = Div(d, r); "

static const struct {
    const char *graph, *expect;
} primitives[] = {
    {PRIMITIVE_GRAPH("17", "b: const float[8]"),
     PRIMITIVE_MEAN17 PRIMITIVE_VAR17 PRIMITIVE_REST "t = Mul(n, s); y = Add(t, b)"},
    {PRIMITIVE_GRAPH("17", "b: float[8] = [0]"), PRIMITIVE_MEAN17 PRIMITIVE_VAR17 PRIMITIVE_REST "y = Mul(n, s)"},
    {PRIMITIVE_GRAPH("18", "b: const float[8]"),
     PRIMITIVE_MEAN18 PRIMITIVE_VAR18 PRIMITIVE_REST "t = Mul(n, s); y = Add(t, b)"},
    {PRIMITIVE_GRAPH("18", "b: float[8] = [0]"), PRIMITIVE_MEAN18 PRIMITIVE_VAR18 PRIMITIVE_REST "y = Mul(n, s)"},
};

START_TEST(primitive_ops)
{
    ph_test_options o = {.max_iterations = 4, .seed = 7, .params = (const char *const[]){"primitive=true", NULL},
                         .sizes = (const int64_t[]){1, 3}, .n_sizes = 2};
    PC_CASE_OPTS(&o, primitives[_i].graph, 1, primitives[_i].expect);
}
END_TEST

#define LN_SB "y = LayerNormalization(x, s, b)\nreturn y"

static const struct {
    const char *graph;
    int unchecked, primitive;
} alone[] = {
    /* the Mean output is used */
    {"x: float[2,3,8]; s: const float[8]; b: const float[8]\n"
     "y, mean = LayerNormalization(x, s, b); n = Neg(mean)\nreturn y, n", 0, 0},
    {"x: float[2,3,8]; s: const float[8]; b: const float[8]\n"
     "y, mean = LayerNormalization(x, s, b); n = Neg(mean)\nreturn y, n", 0, 1},
    /* opset 16 (no LayerNormalization there) */
    {"opset 16\nx: float[2,3,8]; s: const float[8]; b: const float[8]\n" LN_SB, 1, 0},
    {"opset 16\nx: float[2,3,8]; s: const float[8]; b: const float[8]\n" LN_SB, 1, 1},
    /* unknown rank */
    {"x: float[*]; s: const float[8]; b: const float[8]\n" LN_SB, 1, 0},
    {"x: float[*]; s: const float[8]; b: const float[8]\n" LN_SB, 1, 1},
    /* the normalized dim is symbolic: no shape for the ones */
    {"x: float[2,3,h]; s: float[h]\ny = LayerNormalization(x, s)\nreturn y", 0, 0},
    /* already without affine: ones and zeros */
    {"x: float[2,3,8]; s: float[8] = [1]; b: float[8] = [0]\n" LN_SB, 0, 0},
    /* Scale of unknown shape */
    {"x: float[2,3,8]; s: float[*]; b: const float[8]\n" LN_SB, 1, 0},
    {"x: float[2,3,8]; s: float[*]; b: const float[8]\n" LN_SB, 1, 1},
    /* float16 has no primitive form */
    {"x: float16[2,3,8]; s: float16[8]\ny = LayerNormalization(x, s)\nreturn y", 0, 1},
    /* already without affine: ones, no B */
    {"x: float[2,3,8]; s: float[8] = [1]\ny = LayerNormalization(x, s)\nreturn y", 0, 0},
};

START_TEST(left_alone)
{
    ph_test_options o = {.max_iterations = 4, .unchecked = alone[_i].unchecked,
                         .params = (const char *const[]){alone[_i].primitive ? "primitive=true" : NULL, NULL}};
    PC_CASE_OPTS(&o, alone[_i].graph, 0, NULL);
}
END_TEST

/* LayerNormalization(x, s, b?) {axis -1, epsilon 1e-3} in the body g. */
static ph_value *ln(ph_graph *g, ph_value *x, ph_value *s, ph_value *b)
{
    ph_value *in[3] = {x, s, b};
    ph_node *n = tk_node(g, "LayerNormalization", b ? 3 : 2, in);
    ck_assert_int_eq(ph_node_set_attr_int(n, "axis", -1), 0);
    ck_assert_int_eq(ph_node_set_attr_float(n, "epsilon", 1e-3f), 0);
    return ph_node_output(n, 0);
}

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[3,8]; s: const float[8]; b: const float[8]; cond: bool[]\ny = If(cond)\n"
                              "return y",
                              &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_find_value(g, "x"), *s = ph_graph_find_value(g, "s"), *b = ph_graph_find_value(g, "b");
    tk_output(then_g, ln(then_g, x, s, b));
    tk_output(else_g, tk_op1(else_g, "Neg", ln(else_g, x, s, NULL)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "l = LayerNormalization(x, _:const:all=1); m = Mul(l, s); y = Add(m, b)");
    PC_GRAPH_IS(else_g, "l = LayerNormalization(x, _:const:all=1); m = Mul(l, s); y = Neg(m)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("decompose_layernorm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, split_scale_and_bias, 0, (int)(sizeof splits / sizeof *splits));
    tcase_add_loop_test(tc, primitive_ops, 0, (int)(sizeof primitives / sizeof *primitives));
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
