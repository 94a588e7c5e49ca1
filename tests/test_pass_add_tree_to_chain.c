/* tests/test_pass_add_tree_to_chain.c - add_tree_to_chain: a tree of Adds
 * becomes a left-deep chain over the same leaves, in the same order. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("add_tree_to_chain")

/* Four Relu leaves r0..r3 of shape [2,3]. */
#define LEAVES4                                                                                    \
    "x0: float[2,3]; x1: float[2,3]; x2: float[2,3]; x3: float[2,3]\n"                             \
    "r0 = Relu(x0); r1 = Relu(x1); r2 = Relu(x2); r3 = Relu(x3)\n"

/* Run the pass on `graph` again (PC_CASE checked the result) and assert what
 * a pattern cannot say: the nodes in the order `ops`, every chain Add reading
 * the running sum first and its leaf second, the output keeping its name. */
static void assert_chain_order(const char *graph, const char *ops)
{
    char buf[256];
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(tk_ops(g, buf, sizeof buf), ops);
    ph_node *prev = NULL;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        if (ph_node_op(n) != PH_OP_Add)
            continue;
        if (prev)
            ck_assert_ptr_eq(ph_value_producer(ph_node_input(n, 0)), prev);
        ph_node *leaf = ph_value_producer(ph_node_input(n, 1));
        ck_assert(!leaf || ph_node_op(leaf) != PH_OP_Add);
        prev = n;
    }
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}

/* (a + b) + (c + d): the chain's Adds run as soon as their operand is there;
 * the chain is then left alone (PC_CASE runs the pass again). */
START_TEST(balanced_tree_becomes_chain)
{
    const char *graph = LEAVES4 "a = Add(r0, r1); b = Add(r2, r3); y = Add(a, b)\nreturn y";
    PC_CASE(graph, 1, "r0 = Relu(x0); r1 = Relu(x1); r2 = Relu(x2); r3 = Relu(x3)\n"
                      "s1 = Add(r0, r1); s2 = Add(s1, r2); y = Add(s2, r3)");
    assert_chain_order(graph, "Relu,Relu,Add,Relu,Add,Relu,Add");
}
END_TEST

/* ((a + (b + c)) + ((d + e) + (f + (g + h)))), int32 (exact), and a leaf
 * that is a graph input with no producer. */
START_TEST(deep_tree_int32)
{
    const char *graph =
        "x0: int32[2,3]; x1: int32[2,3]; x2: int32[2,3]; x3: int32[2,3]; x4: int32[2,3]\n"
        "x5: int32[2,3]; x6: int32[2,3]; raw: int32[2,3]\n"
        "n0 = Neg(x0); n1 = Neg(x1); n2 = Neg(x2); n3 = Neg(x3); n4 = Neg(x4); n5 = Neg(x5); n6 = Neg(x6)\n"
        "bc = Add(n1, n2); left = Add(n0, bc); de = Add(n3, n4); gh = Add(n6, raw); fgh = Add(n5, gh)\n"
        "right = Add(de, fgh); t = Add(left, right); y = Neg(t)\nreturn y";
    PC_CASE(graph, 1, "n0 = Neg(x0); n1 = Neg(x1); n2 = Neg(x2); n3 = Neg(x3); n4 = Neg(x4); n5 = Neg(x5)\n"
                      "n6 = Neg(x6); s1 = Add(n0, n1); s2 = Add(s1, n2); s3 = Add(s2, n3); s4 = Add(s3, n4)\n"
                      "s5 = Add(s4, n5); s6 = Add(s5, n6); s7 = Add(s6, raw); y = Neg(s7)");
    assert_chain_order(graph, "Neg,Neg,Add,Neg,Add,Neg,Add,Neg,Add,Neg,Add,Neg,Add,Add,Neg");
}
END_TEST

START_TEST(left_deep_chain_left_alone)
{
    PC_UNTOUCHED(LEAVES4 "a = Add(r0, r1); b = Add(a, r2); y = Add(b, r3)\nreturn y");
}
END_TEST

START_TEST(right_deep_chain_left_alone)
{
    PC_UNTOUCHED(LEAVES4 "a = Add(r2, r3); b = Add(r1, a); y = Add(r0, b)\nreturn y");
}
END_TEST

/* a + b has another consumer: it is a leaf, the rest a chain */
START_TEST(other_consumer_left_alone)
{
    PC_UNTOUCHED(LEAVES4 "a = Add(r0, r1); b = Add(r2, r3); y = Add(a, b); n = Neg(a)\nreturn y, n");
}
END_TEST

START_TEST(graph_output_in_the_tree_left_alone)
{
    PC_UNTOUCHED(LEAVES4 "a = Add(r0, r1); b = Add(r2, r3); y = Add(a, b)\nreturn y, a");
}
END_TEST

/* c + d broadcasts */
START_TEST(broadcast_left_alone)
{
    PC_UNTOUCHED(LEAVES4 "c: float[1,3]; rc = Relu(c)\na = Add(r0, r1); b = Add(r2, rc); y = Add(a, b)\nreturn y");
}
END_TEST

/* the evaluator cannot run a rank it does not know */
START_TEST(unknown_shapes_left_alone)
{
    PC_UNTOUCHED_UNCHECKED("x0: float[*]; x1: float[*]; x2: float[*]; x3: float[*]\n"
                           "r0 = Relu(x0); r1 = Relu(x1); r2 = Relu(x2); r3 = Relu(x3)\n"
                           "a = Add(r0, r1); b = Add(r2, r3); y = Add(a, b)\nreturn y");
}
END_TEST

START_TEST(sum_is_no_add)
{
    PC_UNTOUCHED(LEAVES4 "a = Add(r0, r1); b = Sum(r2, r3); y = Add(a, b)\nreturn y");
}
END_TEST

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model(LEAVES4 "cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *l[4];
    for (int i = 0; i < 4; i++)
        l[i] = ph_node_output(ph_value_sole_consumer(ph_graph_input(g, (size_t)i)), 0);
    tk_output(then_g, tk_op2(then_g, "Add", tk_op2(then_g, "Add", l[0], l[1]), tk_op2(then_g, "Add", l[2], l[3])));
    tk_output(else_g, tk_op2(else_g, "Add", tk_op2(else_g, "Add", l[0], l[1]), l[2]));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "s1 = Add(r0, r1); s2 = Add(s1, r2); y = Add(s2, r3)");
    ph_node *last = ph_graph_last_node(then_g);
    ck_assert_ptr_eq(ph_node_input(last, 1), l[3]);
    ck_assert_ptr_eq(ph_node_input(ph_value_producer(ph_node_input(last, 0)), 1), l[2]);
    PC_GRAPH_IS(else_g, "s1 = Add(r0, r1); y = Add(s1, r2)"); /* a chain already */
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("add_tree_to_chain");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, balanced_tree_becomes_chain);
    tcase_add_test(tc, deep_tree_int32);
    tcase_add_test(tc, left_deep_chain_left_alone);
    tcase_add_test(tc, right_deep_chain_left_alone);
    tcase_add_test(tc, other_consumer_left_alone);
    tcase_add_test(tc, graph_output_in_the_tree_left_alone);
    tcase_add_test(tc, broadcast_left_alone);
    tcase_add_test(tc, unknown_shapes_left_alone);
    tcase_add_test(tc, sum_is_no_add);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
