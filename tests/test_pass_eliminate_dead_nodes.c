/* tests/test_pass_eliminate_dead_nodes.c - the eliminate_dead_nodes pass. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"


static void setup(void)
{
    pc_load("eliminate_dead_nodes");
}
static void teardown(void)
{
    pc_unload();
}

/* x -> Relu -> Neg -> y; x -> Sin -> Cos (nobody reads it); x + w -> Add
 * (nobody reads it: w goes too); u an initializer nobody reads. */
START_TEST(dead_chain_and_initializers_removed)
{
    PC_CASE("x: float[2,3]; w: const float[2,3]; u: const float[4]\n"
            "r = Relu(x); y = Neg(r)\ns = Sin(x); c = Cos(s)\na = Add(x, w)\nreturn y",
            5, "r = Relu(x)\ny = Neg(r)"); /* Cos, Sin, Add, w, u */
}
END_TEST

/* A long dead chain goes in one run, from its end backwards. */
START_TEST(long_chain_removed_in_one_run)
{
    static char graph[4096];
    int len = snprintf(graph, sizeof graph, "x: float[4]\ny = Neg(x)\nv0 = Identity(x)\n");
    for (int i = 0; i < 100; i++)
        len += snprintf(graph + len, sizeof graph - (size_t)len, "v%d = %s(v%d)\n", i + 1, i % 2 ? "Relu" : "Abs", i);
    snprintf(graph + len, sizeof graph - (size_t)len, "return y");
    PC_CASE_OPTS(NULL, graph, 101, "y = Neg(x)");
}
END_TEST

/* What stays: graph outputs and their producers, a node with one output
 * read out of two, graph inputs nobody reads, initializers something reads. */
START_TEST(live_nodes_left_alone)
{
    PC_UNTOUCHED("x: float[2,4]; unused_input: float[3]; w: const float[2,4]\n"
                 "s0, s1 = Split(x) {axis=1}; n = Neg(s1)     # s0 unused\n"
                 "a = Add(x, w); r = Relu(x)\nreturn n, a, r");
}
END_TEST

/* p = Sin(x) is read only inside the then-branch: it stays.  q = Abs(x) is
 * read only by a dead node of the branch: both go.  r = Tanh(x) is read
 * only by the body of an If whose output nobody reads: the If and r go. */
START_TEST(outer_values_read_by_bodies)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_value *p = tk_op1(g, "Sin", x), *q = tk_op1(g, "Abs", x), *r = tk_op1(g, "Tanh", x);

    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op1(then_g, "Neg", p));
    tk_op1(then_g, "Exp", tk_op1(then_g, "Cos", q)); /* dead inside the body */
    tk_init(then_g, "body_unused", 1, TK_I64(2), 4);
    tk_output(else_g, tk_op1(else_g, "Relu", x));
    tk_output(g, ph_node_output(iff, 0));

    ph_node *dead_if = tk_node(g, "If", 1, &cond);
    ph_graph *d_then = ph_node_add_subgraph(dead_if, "then_branch");
    ph_graph *d_else = ph_node_add_subgraph(dead_if, "else_branch");
    tk_output(d_then, tk_op1(d_then, "Neg", r));
    tk_output(d_else, tk_op1(d_else, "Neg", x));

    pc_run_checked(m, 6); /* Exp, Cos, body_unused, q, the dead If, r */
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Sin,If");
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(then_g), 0);
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(then_g), 0), p);
    pc_run_structure(m, 0); /* a second run changes nothing */
    ph_model_free(m);
}
END_TEST

/* A body's output keeps its producer even when the If's output is also a
 * graph output only. */
START_TEST(body_outputs_left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op1(then_g, "Neg", tk_op1(then_g, "Sin", x)));
    tk_output(else_g, tk_op1(else_g, "Relu", x));
    tk_output(g, ph_node_output(iff, 0));
    pc_run_structure(m, 0); /* a second run changes nothing */
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_dead_nodes");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, dead_chain_and_initializers_removed);
    tcase_add_test(tc, long_chain_removed_in_one_run);
    tcase_add_test(tc, live_nodes_left_alone);
    tcase_add_test(tc, outer_values_read_by_bodies);
    tcase_add_test(tc, body_outputs_left_alone);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
