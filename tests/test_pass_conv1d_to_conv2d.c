/* tests/test_pass_conv1d_to_conv2d.c - conv1d_to_conv2d: connected Conv1d
 * and elementwise regions lifted to 2-D with H = 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("conv1d_to_conv2d")

/* `graph` after the pass (run to its fixpoint, no numeric check: the case
 * has made it); caller frees. */
static ph_model *rewritten(const char *graph)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ph_test_options o = {.max_iterations = 10};
    ck_assert_msg(ph_test_run(pass, m, &o, NULL, &err) > 0, "%s", err.message);
    return m;
}

static const struct {
    const char *graph, *expect;
} singles[] = {
    {"x: float[2,4,11]; w: const float[6,2,3]; b: const float[6]\n"
     "y = Conv(x, w, b) {group=2, strides=[2], dilations=[2], kernel_shape=[3], pads=[1,2]}\nreturn y",
     "u = Unsqueeze(x, _:const)\n"
     "c = Conv(u, _:const:rank=4, _:const) {group=2, strides=[1,2], kernel_shape=[1,3], pads=[0,1,0,2]}\n"
     "y = Squeeze(c, _:const)"},
    /* axes as attributes */
    {"opset 11\nx: float[2,4,11]; w: const float[6,2,3]; b: const float[6]\n"
     "y = Conv(x, w, b) {group=2, strides=[2], dilations=[2], kernel_shape=[3], pads=[1,2]}\nreturn y",
     "u = Unsqueeze(x)\n"
     "c = Conv(u, _:const:rank=4, _:const) {group=2, strides=[1,2], kernel_shape=[1,3], pads=[0,1,0,2]}\n"
     "y = Squeeze(c)"},
    /* SAME_UPPER pads nothing on H = 1 */
    {"x: float[2,4,11]; w: const float[6,2,3]; b: const float[6]\n"
     "y = Conv(x, w, b) {group=2, strides=[2], kernel_shape=[3], auto_pad=\"SAME_UPPER\"}\nreturn y",
     "u = Unsqueeze(x, _:const)\n"
     "c = Conv(u, _:const:rank=4, _:const) {group=2, strides=[1,2], kernel_shape=[1,3], auto_pad=\"SAME_UPPER\"}\n"
     "y = Squeeze(c, _:const)"},
};

/* One Conv1d; the output keeps its name. */
START_TEST(single_conv1d)
{
    PC_CASE(singles[_i].graph, 1, singles[_i].expect);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(singles[_i].graph, &err);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(ph_model_graph(m), 0)));
    ph_model_free(m);
    m = rewritten(singles[_i].graph);
    ck_assert_str_eq(ph_value_name(ph_graph_output(ph_model_graph(m), 0)), name);
    ph_model_free(m);
}
END_TEST

/* The seed's example: P -> C1 -> LeakyRelu -> C2; P -> C3; C2 + C3; one
 * Unsqueeze per Conv reading P, one Squeeze at the end. */
START_TEST(region_of_the_seed)
{
    ph_test_options o = {.max_iterations = 10, .seed = 5, .sizes = (const int64_t[]){1, 2}, .n_sizes = 2};
    const char *graph = "x: float[N,4,9]; p = Relu(x)\n"
                        "w1: const float[6,4,3]; b1: const float[6]; c1 = Conv(p, w1, b1) {pads=[1,1]}\n"
                        "l = LeakyRelu(c1)\n"
                        "w2: const float[5,6,3]; b2: const float[5]; c2 = Conv(l, w2, b2) {pads=[1,1]}\n"
                        "w3: const float[5,4,1]; b3: const float[5]; c3 = Conv(p, w3, b3) {pads=[0,0]}\n"
                        "y = Add(c2, c3)\nreturn y";
    PC_CASE_OPTS(&o, graph, -1,
                 "p = Relu(x)\n--\n"
                 "u1 = Unsqueeze(p, _:const); c1 = Conv(u1, _:const:rank=4, _:const); l = LeakyRelu(c1)\n"
                 "c2 = Conv(l, _:const:rank=4, _:const)\n"
                 "u3 = Unsqueeze(p, _:const); c3 = Conv(u3, _:const:rank=4, _:const)\n"
                 "a = Add(c2, c3); y = Squeeze(a, _:const)");
    ph_model *m = rewritten(graph);
    ck_assert_str_eq(ph_value_dim_param(ph_graph_output(ph_model_graph(m), 0), 0), "N");
    ph_model_free(m);
}
END_TEST

/* Constants and other operands at the region's border: per channel, along
 * L, scalars, the region on the right, a computed operand (lifted by an
 * Unsqueeze of its own). */
START_TEST(operands_at_the_border)
{
    ph_test_options o = {.max_iterations = 10, .seed = 6};
    PC_CASE_OPTS(&o,
                 "x: float[2,3,8]; z: float[2,1,8]; w: const float[4,3,3]; b: const float[4]\n"
                 "c = Conv(x, w, b) {pads=[1,1]}\n"
                 "scale: const float[4,1]; m = Mul(scale, c)\n"
                 "row: const float[8]; a = Add(m, row)\n"
                 "lo: float[] = [-0.5]; hi: float[] = [0.75]; cl = Clip(a, lo, hi)\n"
                 "full: const float[1,4,8]; s = Sub(full, cl)\n"
                 "e = Exp(z); y = Div(s, e)\nreturn y",
                 -1,
                 "ux = Unsqueeze(x, _:const); c = Conv(ux, _:const:rank=4, _:const)\n"
                 "m = Mul(_:const, c); a = Add(m, _:const); cl = Clip(a, lo, hi)\n"
                 "s = Sub(_:const, cl)\n"
                 "e = Exp(z); ue = Unsqueeze(e, _:const); d = Div(s, ue); y = Squeeze(d, _:const)");
}
END_TEST

/* A region value that is also a graph output (it keeps its name and rank),
 * or read outside the region (a MatMul is not elementwise). */
START_TEST(shared_values)
{
    ph_test_options o = {.max_iterations = 10, .seed = 7};
    const char *graph = "x: float[1,2,6]; w: const float[3,2,3]; b: const float[3]\n"
                        "c = Conv(x, w, b) {pads=[1,1]}; r = Relu(c); s = Sigmoid(r)\n"
                        "wm: const float[6,2]; mm = MatMul(r, wm)\nreturn c, s, mm";
    PC_CASE_OPTS(&o, graph, -1,
                 "ux = Unsqueeze(x, _:const); c4 = Conv(ux, _:const:rank=4, _:const)\n--\n"
                 "c = Squeeze(c4, _:const)\n--\n"
                 "r4 = Relu(c4)\n--\n"
                 "s4 = Sigmoid(r4); s = Squeeze(s4, _:const)\n--\n"
                 "r = Squeeze(r4, _:const); mm = MatMul(r:rank=3, wm)");
    ph_model *m = ph_test_model_text(graph, &(ph_error){0});
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(ph_model_graph(m), 0)));
    ph_model_free(m);
    m = rewritten(graph);
    ck_assert_str_eq(ph_value_name(ph_graph_output(ph_model_graph(m), 0)), name);
    ck_assert_int_eq(ph_value_rank(ph_graph_output(ph_model_graph(m), 0)), 3);
    ph_model_free(m);
}
END_TEST

static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* a 2-D Conv */
    {"x4: float[1,2,3,3]; w: const float[2,2,1,1]\ny = Conv(x4, w)\nreturn y", 0},
    /* the weight is not constant */
    {"x: float[1,2,6]; w: float[3,2,3]\ny = Conv(x, w)\nreturn y", 0},
    /* unknown rank */
    {"xu: float[*]; w: const float[3,2,3]\ny = Conv(xu, w)\nreturn y", 1},
    /* a Squeeze of axis 1 before an elementwise op */
    {"x4: float[1,1,2,6]; axes: int64[1] = [1]\nt = Relu(x4); s = Squeeze(t, axes); y = Neg(s)\nreturn y", 0},
    /* a Squeeze of axis 2 of a graph input: no region there */
    {"x4: float[1,2,1,6]; axes: int64[1] = [2]\ns = Squeeze(x4, axes); y = Neg(s)\nreturn y", 0},
    /* a Squeeze without axes (drops every dim of 1) */
    {"x4: float[1,2,1,6]\nt = Relu(x4); s = Squeeze(t); y = Neg(s)\nreturn y", 0},
};

START_TEST(left_alone)
{
    if (alone[_i].unchecked)
        PC_UNTOUCHED_UNCHECKED(alone[_i].graph);
    else
        PC_UNTOUCHED(alone[_i].graph);
}
END_TEST

/* An operand that widens the result (rank 4) stops the region. */
START_TEST(broadcast_to_higher_rank_stops)
{
    ph_test_options o = {.max_iterations = 10, .seed = 9};
    PC_CASE_OPTS(&o,
                 "x: float[1,2,6]; w: const float[3,2,3]; b: const float[3]; wide: const float[2,1,3,6]\n"
                 "c = Conv(x, w, b) {pads=[1,1]}; y = Add(c, wide)\nreturn y",
                 1,
                 "u = Unsqueeze(x, _:const); c4 = Conv(u, _:const:rank=4, _:const); c = Squeeze(c4, _:const)\n"
                 "y = Add(c, wide)");
}
END_TEST

/* Conv(x, w [3,2,3], b) {pads [1, 1]} in the body g. */
static ph_value *conv1d(ph_graph *g, ph_value *x)
{
    ph_value *in[3] = {x, tk_init(g, "w", 3, TK_I64(3, 2, 3), 3), tk_init(g, "b", 1, TK_I64(3), 4)};
    ph_node *n = tk_node(g, "Conv", 3, in);
    ck_assert_int_eq(ph_node_set_attr_ints(n, "pads", 2, TK_I64(1, 1)), 0);
    return ph_node_output(n, 0);
}

/* The text has no subgraphs: the If bodies are built with the IR calls.
 * Two Convs, and the Relu (visited after the Convs) in the same run. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,2,6]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_input(ph_model_graph(m), 0);
    tk_output(then_g, conv1d(then_g, x));
    tk_output(else_g, tk_op1(else_g, "Relu", conv1d(else_g, x)));
    pc_run_checked(m, 3); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "u = Unsqueeze(x, _:const); c = Conv(u, _:const:rank=4, _:const); y = Squeeze(c, _:const)");
    PC_GRAPH_IS(else_g, "u = Unsqueeze(x, _:const); c = Conv(u, _:const:rank=4, _:const); r = Relu(c)\n"
                        "y = Squeeze(r, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("conv1d_to_conv2d");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, single_conv1d, 0, (int)(sizeof singles / sizeof *singles));
    tcase_add_test(tc, region_of_the_seed);
    tcase_add_test(tc, operands_at_the_border);
    tcase_add_test(tc, shared_values);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, broadcast_to_higher_rank_stops);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
