/* tests/test_pass_gathers_to_split.c - gathers_to_split: Gathers of one
 * tensor with constant indices partitioning one axis become one Split (and a
 * Squeeze per scalar index). */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("gathers_to_split")

/* four scalar Gathers of x [2,4,3] along axis 1 (or -2), in any order; -1 is 3 */
#define FOUR(axis)                                                                                 \
    "i3: int64[] = [-1]; i2: int64[] = [2]; i1: int64[] = [1]; i0: int64[] = [0]\n"              \
    "g3 = Gather(x, i3) {axis=" axis "}; g2 = Gather(x, i2) {axis=" axis "}\n"                    \
    "g1 = Gather(x, i1) {axis=" axis "}; g0 = Gather(x, i0) {axis=" axis "}\n"                    \
    "n3 = Neg(g3); n2 = Neg(g2); n1 = Neg(g1); n0 = Neg(g0)\nreturn n3, n2, n1, n0"

static const struct {
    const char *graph, *expect;
} splits[] = {
    /* opset 17: Split's sizes and Squeeze's axes are inputs */
    {"x: float[2,4,3]\n" FOUR("1"),
     "a, b, c, d = Split(x, _:const) {axis=1}\n"
     "--\ns3 = Squeeze(d, _:const); n3 = Neg(s3)\n--\ns2 = Squeeze(c, _:const); n2 = Neg(s2)\n"
     "--\ns1 = Squeeze(b, _:const); n1 = Neg(s1)\n--\ns0 = Squeeze(a, _:const); n0 = Neg(s0)"},
    /* opset 11: attributes; a negative axis */
    {"opset 11\nx: float[2,4,3]\n" FOUR("-2"),
     "a, b, c, d = Split(x) {axis=1}\n"
     "--\ns3 = Squeeze(d) {axes=[1]}; n3 = Neg(s3)\n--\ns2 = Squeeze(c) {axes=[1]}; n2 = Neg(s2)\n"
     "--\ns1 = Squeeze(b) {axes=[1]}; n1 = Neg(s1)\n--\ns0 = Squeeze(a) {axes=[1]}; n0 = Neg(s0)"},
};

START_TEST(scalar_indices_split_and_squeeze)
{
    PC_CASE(splits[_i].graph, 1, splits[_i].expect);
}
END_TEST

/* Runs of indices (int32 and int64, one negative), graph outputs keep their
 * names; c is both a graph output and read by a Neg. */
START_TEST(runs_of_indices_and_graph_outputs)
{
    const char *graph = "x: float[6,2]; ia: int32[2] = [0, 1]; ib: int64[3] = [2, 3, -2]; ic: int64[] = [5]\n"
                        "a = Gather(x, ia); b = Gather(x, ib); c = Gather(x, ic)\nnb = Neg(b); nc = Neg(c)\n"
                        "return a, nb, c, nc";
    PC_CASE(graph, 1, "a, b, c3 = Split(x, _:const) {axis=0}\n--\nnb = Neg(b)\n--\nc = Squeeze(c3, _:const)\n--\nnc = Neg(c)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *na = strdup(ph_value_name(ph_graph_output(g, 0))), *nc = strdup(ph_value_name(ph_graph_output(g, 2)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), na);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 2)), nc);
    int64_t sz[4];
    ph_node *split = ph_value_producer(ph_graph_output(g, 0));
    ck_assert_int_eq(ph_value_const_ints(ph_node_input(split, 1), sz, NULL, 4), 3);
    ck_assert_int_eq(sz[0], 2);
    ck_assert_int_eq(sz[1], 3);
    ck_assert_int_eq(sz[2], 1);
    free(na);
    free(nc);
    ph_model_free(m);
}
END_TEST

#define TAIL "na = Neg(a); nb = Neg(b)\nreturn na, nb"
static const struct {
    const char *graph;
} alone[] = {
    /* a gap: 0, then 2..3 */
    {"x: float[4,3]; ia: int64[] = [0]; ib: int64[2] = [2, 3]\na = Gather(x, ia); b = Gather(x, ib)\n" TAIL},
    /* not consecutive */
    {"x: float[4,3]; ia: int64[2] = [0, 2]; ib: int64[2] = [1, 3]\na = Gather(x, ia); b = Gather(x, ib)\n" TAIL},
    /* an overlap */
    {"x: float[4,3]; ia: int64[2] = [0, 1]; ib: int64[3] = [1, 2, 3]\na = Gather(x, ia); b = Gather(x, ib)\n" TAIL},
    /* indices not constant */
    {"x: float[4,3]; ia: int64[2] = [0, 1]; ib: int64[2]\na = Gather(x, ia); b = Gather(x, ib)\n" TAIL},
    /* the axis' dim is unknown */
    {"x: float[N,3]; ia: int64[2] = [0, 1]; ib: int64[2] = [2, 3]\na = Gather(x, ia); b = Gather(x, ib)\n" TAIL},
    /* 2-D indices */
    {"x: float[4,3]; ia: int64[2] = [0, 1]; ib: int64[2,1] = [2, 3]\na = Gather(x, ia); b = Gather(x, ib)\n" TAIL},
    /* different axes */
    {"x: float[4,4]; ia: int64[2] = [0, 1]; ib: int64[2] = [2, 3]\n"
     "a = Gather(x, ia) {axis=0}; b = Gather(x, ib) {axis=1}\n" TAIL},
    /* one Gather of everything */
    {"x: float[4,3]; ia: int64[4] = [0, 1, 2, 3]\na = Gather(x, ia); b = Relu(x)\n" TAIL},
};

START_TEST(left_alone)
{
    /* x's unknown dim is 4 when evaluated */
    ph_test_options o = {.max_iterations = 4, .sizes = (const int64_t[]){4}, .n_sizes = 1};
    PC_CASE_OPTS(&o, alone[_i].graph, 0, NULL);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[2,3]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    ph_value *g[3];
    for (int i = 0; i < 3; i++) {
        ph_graph *b = body[i == 2];
        int64_t k = i == 1;
        ph_value *in[2] = {x, ph_graph_add_initializer(b, i == 1 ? "i1" : "i0", ph_tensor_new(PH_DT_INT64, 0, NULL, &k))};
        g[i] = ph_node_output(tk_node(b, "Gather", 2, in), 0);
    }
    tk_output(body[0], tk_op2(body[0], "Add", g[0], g[1])); /* x[0] + x[1] */
    tk_output(body[1], tk_op1(body[1], "Neg", g[2]));       /* one Gather alone */
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "a, b = Split(x, _:const)\n--\nsa = Squeeze(a, _:const)\nsb = Squeeze(b, _:const)\ny = Add(sa, sb)");
    PC_GRAPH_IS(body[1], "g = Gather(x, i0)\ny = Neg(g)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gathers_to_split");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, scalar_indices_split_and_squeeze, 0, (int)(sizeof splits / sizeof *splits));
    tcase_add_test(tc, runs_of_indices_and_graph_outputs);
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
