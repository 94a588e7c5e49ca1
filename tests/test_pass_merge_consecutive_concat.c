/* tests/test_pass_merge_consecutive_concat.c - merge_consecutive_concat:
 * Concat(Concat(X, Y), Z) on one axis -> Concat(X, Y, Z). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("merge_consecutive_concat")

static const struct {
    const char *graph, *expect;
} merges[] = {
    /* Concat(Concat(X, Y), Z) -> Concat(X, Y, Z) */
    {"x: float[2,3]; y: float[2,2]; z: float[2,1]\nc = Concat(x, y) {axis=1}; o = Concat(c, z) {axis=1}\nreturn o",
     "o = Concat(x, y, z) {axis=1}"},
    /* inner Concats at the middle and last positions, one nested in another,
     * and one read twice by the outer Concat: all spliced in place, in
     * order, in one rewrite */
    {"a: float[2,1,2]; b: float[2,2,2]; c: float[2,3,2]; d: float[2,1,2]\n"
     "ca = Concat(c, a) {axis=1}; inner = Concat(b, ca) {axis=1}; twice = Concat(d, b) {axis=-2}\n"
     "o = Concat(a, inner, twice, twice) {axis=1}; r = Relu(o)\nreturn r",
     "o = Concat(a, b, c, a, d, b, d, b) {axis=1}\nr = Relu(o)"},
    /* -1 and 1 on rank 2 are one axis */
    {"x: float[2,3]; y: float[2,2]\nc = Concat(y, x) {axis=-1}; o = Concat(x, c) {axis=1}\nreturn o",
     "o = Concat(x, y, x)"},
};

START_TEST(merges_into_one)
{
    PC_CASE(merges[_i].graph, 1, merges[_i].expect);
}
END_TEST

/* A chain of 50 Concats folds into one, in one rewrite at its top. */
START_TEST(long_chain)
{
    static char graph[4096], expect[1024];
    int n = snprintf(graph, sizeof graph, "x: float[3,2]\nc0 = Concat(x, x) {axis=0}\n");
    for (int i = 1; i < 50; i++)
        n += snprintf(graph + n, sizeof graph - (size_t)n, "c%d = Concat(c%d, x) {axis=0}\n", i, i - 1);
    snprintf(graph + n, sizeof graph - (size_t)n, "return c49");
    n = snprintf(expect, sizeof expect, "y = Concat(x");
    for (int i = 1; i < 51; i++)
        n += snprintf(expect + n, sizeof expect - (size_t)n, ", x");
    snprintf(expect + n, sizeof expect - (size_t)n, ")");
    PC_CASE(graph, 1, expect);
}
END_TEST

/* The outer Concat's output is a graph output: it keeps its name. */
START_TEST(graph_output_keeps_name)
{
    const char *graph = "x: float[3]\nc = Concat(x, x) {axis=0}; o = Concat(c, x) {axis=0}\nreturn o";
    PC_CASE(graph, 1, "o = Concat(x, x, x)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* Concat-1 (opset 3): a missing axis is 1 on both; a missing axis and an
 * explicit 1 agree once the rank is known.  (Shapes are not inferred: the
 * inference reads a missing Concat axis as 0 at every opset; no evaluator
 * below opset 11.) */
START_TEST(opset3_default_axis)
{
    ph_test_options o = {.max_iterations = 4, .no_shapes = 1, .unchecked = 1};
    PC_CASE_OPTS(&o,
                 "opset 3\nx: float[2,3]; y: float[2,2]\na = Concat(x, y); c = Concat(a, x); o = Concat(c, y) {axis=1}\n"
                 "return o",
                 1, "o = Concat(x, y, x, y)");
}
END_TEST

/* Same literal axis needs no rank. */
START_TEST(same_axis_unknown_rank_merged)
{
    PC_CASE_OPTS(&pc_unchecked, "x: float[*]\nc = Concat(x, x) {axis=-1}; o = Concat(x, c) {axis=-1}\nreturn o", 1,
                 "o = Concat(x, x, x)");
}
END_TEST

/* ---- negative cases */

static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* another axis */
    {"x: float[2,2]\na = Concat(x, x) {axis=0}; b = Concat(x, x) {axis=-2}; o = Concat(a, b) {axis=1}\nreturn o", 0},
    /* a negative axis and an unknown rank */
    {"x: float[*]\nc = Concat(x, x) {axis=-1}; o = Concat(x, c) {axis=1}\nreturn o", 1},
    /* the inner Concat has another consumer */
    {"x: float[2,2]\nc = Concat(x, x) {axis=0}; o = Concat(c, x) {axis=0}; r = Relu(c)\nreturn o, r", 0},
    /* the inner Concat is a graph output */
    {"x: float[2,2]\nc = Concat(x, x) {axis=0}; o = Concat(x, c) {axis=0}\nreturn o, c", 0},
    /* another domain, another op */
    {"x: float[2,2]\nc = Concat@com.example(x, x) {axis=0}; s = Add(x, x); o = Concat(c, s, x) {axis=0}\nreturn o", 1},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
}
END_TEST

static ph_value *concat2(ph_graph *g, int64_t axis, ph_value *a, ph_value *b)
{
    ph_node *c = tk_node(g, "Concat", 2, (ph_value *const[]){a, b});
    ck_assert_int_eq(ph_node_set_attr_int(c, "axis", axis), 0);
    return ph_node_output(c, 0);
}

/* The inner Concat is read by the bodies of an If (the text has no
 * subgraphs: the bodies are built with the IR calls). */
START_TEST(inner_read_by_a_body_kept)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[2,2]; cond: bool[]\ny = If(cond); c = Concat(x, x) {axis=0}; o = Concat(c, x) {axis=0}\n"
                              "return y, o",
                              &body[0], &body[1]);
    ph_graph *g = ph_model_graph(m);
    ph_value *c = ph_node_input(ph_value_producer(ph_graph_output(g, 1)), 0);
    tk_output(body[0], tk_op1(body[0], "Relu", c));
    tk_output(body[1], tk_op1(body[1], "Neg", c));
    pc_run_structure(m, 0);
    PC_GRAPH_IS(g, "c = Concat(x, x)\n--\no = Concat(c, x)\n--\ny = If(cond)");
    ph_model_free(m);
}
END_TEST

/* The pattern inside both branches of an If. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[2,2]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(body[0], concat2(body[0], 0, concat2(body[0], 0, x, x), x));
    tk_output(body[1], concat2(body[1], 1, x, concat2(body[1], 1, x, x)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "y = Concat(x, x, x) {axis=0}");
    PC_GRAPH_IS(body[1], "y = Concat(x, x, x) {axis=1}");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_merge_consecutive_concat");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, merges_into_one, 0, (int)(sizeof merges / sizeof *merges));
    tcase_add_test(tc, long_chain);
    tcase_add_test(tc, graph_output_keeps_name);
    tcase_add_test(tc, opset3_default_axis);
    tcase_add_test(tc, same_axis_unknown_rank_merged);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, inner_read_by_a_body_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
