/* tests/test_pass_transpose_large_input_conv.c - transpose_large_input_conv
 * (adapt, off by default: loaded by name): a chain of Convs on an input much
 * wider than high runs transposed (H and W swapped), between two Transposes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("transpose_large_input_conv")

static const char *const narrow[] = {"min_width=32", NULL};
static const ph_test_options opts = {.max_iterations = 4, .params = narrow};

/* x [1,2,3,64] -> Relu -> Conv(3x5, strides [1,2], pads [1,2,0,1],
 * dilations [1,2], bias) [1,4,2,30] -> Mul(constant [4,1,30]) ->
 * Conv(1x3, group 2) [1,4,2,28] -> Sigmoid */
#define WIDE                                                                                       \
    "x: float[1,2,3,64]; w: const float[4,2,3,5]; b: const float[4]; k: const float[4,1,30]; w2: const float[4,2,1,3]\n" \
    "r = Relu(x); c1 = Conv(r, w, b) {kernel_shape=[3,5], strides=[1,2], pads=[1,2,0,1], dilations=[1,2]}\n"            \
    "m = Mul(c1, k); c2 = Conv(m, w2) {group=2}; y = Sigmoid(c2)\nreturn y"
/* the chain transposed: H now the long axis; idempotent (H >= W everywhere) */
#define WIDE_SWAPPED                                                                               \
    "t = Transpose(x) {perm=[0,1,3,2]}\nr = Relu(t)\n"                                           \
    "c1 = Conv(r, _:const:shape=[4,2,5,3], b) {kernel_shape=[5,3], strides=[2,1], pads=[2,1,1,0], dilations=[2,1]}\n" \
    "m = Mul(c1:shape=[1,4,30,2], _:const)\nc2 = Conv(m, _:const) {group=2}\ns = Sigmoid(c2)\ny = Transpose(s)"

START_TEST(chain_swapped)
{
    PC_CASE_OPTS(&opts, WIDE, 1, WIDE_SWAPPED);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(WIDE, &err);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, &opts, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_ptr_null(ph_graph_find_value(g, "w")); /* the old weight is gone */
    free(name);
    ph_model_free(m);
}
END_TEST

/* The default threshold is 20000: a [1,1,2,20000] input is swapped, one
 * column narrower is not. */
START_TEST(default_min_width)
{
    PC_CASE("x: float[1,1,2,20000]; w: const float[1,1,1,3]; b: const float[1]\ny = Conv(x, w, b)\nreturn y", 1,
            "t = Transpose(x)\nc = Conv(t, _:const, b)\ny = Transpose(c)");
    PC_UNTOUCHED("x: float[1,1,2,19999]; w: const float[1,1,1,3]; b: const float[1]\ny = Conv(x, w, b)\nreturn y");
}
END_TEST

/* The chain stops at a value with another reader and at a graph output:
 * the Transposes go there. */
#define CUT "x: float[1,2,3,64]; w: const float[2,2,3,3]\nr = Relu(x); y = Conv(r, w); t = Tanh(y)\n"
#define CUT_SWAPPED "r = Relu(x)\n--\na = Transpose(r)\nc = Conv(a, _:const)\nh = Tanh(c)\nt = Transpose(h)"
START_TEST(chain_cut_at_shared_values)
{
    PC_CASE_OPTS(&opts, CUT "n = Neg(r)\nreturn t, n", 1, CUT_SWAPPED "\n--\nn = Neg(r)");
    PC_CASE_OPTS(&opts, CUT "return t, r", 1, CUT_SWAPPED);
}
END_TEST

static const struct {
    const char *graph;
} alone[] = {
    /* narrow */
    {"x: float[1,2,3,31]; w: const float[2,2,3,3]\ny = Conv(x, w)\nreturn y"},
    /* higher than wide */
    {"x: float[1,2,64,3]; w: const float[2,2,3,3]\ny = Conv(x, w)\nreturn y"},
    /* as high as wide: swapping gains nothing */
    {"x: float[1,1,40,40]; w: const float[1,1,3,3]\ny = Conv(x, w)\nreturn y"},
    /* the weight is not constant */
    {"x: float[1,2,3,64]; w: float[2,2,3,3]\ny = Conv(x, w)\nreturn y"},
    /* unknown batch */
    {"x: float[?,2,3,64]; w: const float[2,2,3,3]\ny = Conv(x, w)\nreturn y"},
    /* 1-D convolution */
    {"x: float[1,2,64]; w: const float[2,2,3]\ny = Conv(x, w)\nreturn y"},
    /* a later Conv of the chain is higher than wide: swapping it would undo itself */
    {"x: float[1,1,40,64]; w: const float[1,1,1,1]; v: const float[1,1,3,3]\nc = Conv(x, w) {strides=[1,8]}; y = Conv(c, v)\n"
     "return y"},
};

START_TEST(left_alone)
{
    PC_CASE_OPTS(&opts, alone[_i].graph, 0, NULL);
}
END_TEST

/* For the If's bodies (the text has no subgraphs): the chain above with the
 * IR calls. */
/* Conv of x with weight [M, C/group, kh, kw] (seeded) and optional bias. */
static ph_node *conv(ph_graph *g, ph_value *x, const int64_t *wdims, int bias, const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "%s_w", tag);
    ph_value *in[3] = {x, tk_init(g, name, 4, wdims, 11), NULL};
    if (bias) {
        snprintf(name, sizeof name, "%s_b", tag);
        in[2] = tk_init(g, name, 1, TK_I64(wdims[0]), 12);
    }
    return tk_node(g, "Conv", bias ? 3 : 2, in);
}

static ph_value *wide_chain(ph_graph *g, ph_value *x, const char *tag)
{
    char name[32];
    ph_node *c1 = conv(g, tk_op1(g, "Relu", x), TK_I64(4, 2, 3, 5), 1, tag);
    ph_node_set_attr_ints(c1, "kernel_shape", 2, TK_I64(3, 5));
    ph_node_set_attr_ints(c1, "strides", 2, TK_I64(1, 2));
    ph_node_set_attr_ints(c1, "pads", 4, TK_I64(1, 2, 0, 1));
    ph_node_set_attr_ints(c1, "dilations", 2, TK_I64(1, 2));
    snprintf(name, sizeof name, "%s_k", tag);
    ph_value *mul = tk_op2(g, "Mul", ph_node_output(c1, 0), tk_init(g, name, 3, TK_I64(4, 1, 30), 13));
    snprintf(name, sizeof name, "%s2", tag);
    ph_node *c2 = conv(g, mul, TK_I64(4, 2, 1, 3), 0, name);
    ph_node_set_attr_int(c2, "group", 2);
    return tk_op1(g, "Sigmoid", ph_node_output(c2, 0));
}

START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[1,2,3,64]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(body[0], wide_chain(body[0], x, "t"));
    tk_output(body[1], wide_chain(body[1], x, "e"));
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run_checked(pass, m, &opts, NULL, &err), 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "t = Transpose(x)\nr = Relu(t)\nc1 = Conv(r, _:const, _:const)\nm = Mul(c1, _:const)\n"
                         "c2 = Conv(m, _:const)\ns = Sigmoid(c2)\ny = Transpose(s)");
    PC_GRAPH_IS(body[1], "t = Transpose(x)\nr = Relu(t)\nc1 = Conv(r, _:const, _:const)\nm = Mul(c1, _:const)\n"
                         "c2 = Conv(m, _:const)\ns = Sigmoid(c2)\ny = Transpose(s)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("transpose_large_input_conv");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, chain_swapped);
    tcase_add_test(tc, default_min_width);
    tcase_add_test(tc, chain_cut_at_shared_values);
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
