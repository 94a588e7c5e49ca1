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

/* ------------------------------------------- calls after the first one */

/* x -> 40 nodes -> y, and x -> Sin -> Tanh -> Exp -> z = Add(e, w): a
 * model where a change near z is far from most nodes. */
static ph_model *far_model(void)
{
    static char text[4096];
    int len = snprintf(text, sizeof text, "x: float[4]; w: const float[4]\nv0 = Neg(x)\n");
    for (int i = 0; i < 40; i++)
        len += snprintf(text + len, sizeof text - (size_t)len, "v%d = %s(v%d)\n", i + 1, i % 2 ? "Relu" : "Abs", i);
    snprintf(text + len, sizeof text - (size_t)len,
             "k1 = Sin(x); k2 = Tanh(k1); k3 = Exp(k2); z = Add(k3, w)\nreturn v40, z");
    return pc_model(text);
}

static int run_in(ph_ctx *ctx, const char *name, ph_model *m)
{
    ph_ctx_begin_pass(ctx, name, "");
    int r = ph_ctx_run(ctx, ph_model_graph(m), pass->run, NULL);
    ph_ctx_end_pass(ctx);
    return r;
}

/* far_model's nodes by the name of their output */
static ph_node *producer_of(ph_model *m, const char *name)
{
    size_t k = name[0] == 'z' ? 44 : 40 + (size_t)(name[1] - '0');
    return ph_value_producer(pc_node_output(m, k));
}

static ph_value *input_x(ph_model *m) { return ph_graph_input(ph_model_graph(m), 0); }

/* What ph_ctx_changed_nodes lists, and when it says "everything". */
START_TEST(changed_nodes_since_the_last_call)
{
    ph_model *m = far_model(), *m2 = far_model();
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ph_node **nodes;
    size_t n;
    ph_ctx_begin_pass(ctx, "p", "");
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 0); /* first call: everything */
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 1);
    ck_assert_uint_eq(n, 0);
    /* z reads x instead of k3: z changed, Exp lost its reader */
    ph_node *add = producer_of(m, "z"), *exp = producer_of(m, "k3");
    ck_assert_int_eq(ph_node_set_input(add, 0, input_x(m)), 0);
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 1);
    ck_assert_uint_eq(n, 2);
    ck_assert((nodes[0] == add && nodes[1] == exp) || (nodes[0] == exp && nodes[1] == add));
    ph_ctx_end_pass(ctx);
    /* another pass has its own reader: its first call is everything */
    ph_ctx_begin_pass(ctx, "q", "");
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 0);
    ph_ctx_end_pass(ctx);
    /* another model, then back: everything both times */
    ph_ctx_begin_pass(ctx, "p", "");
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m2, &nodes, &n), 0);
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 0);
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 1);
    ck_assert_uint_eq(n, 0);
    /* a removed node is not listed; the producers it leaves are */
    ck_assert_int_eq(ph_node_remove(exp), 0);
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 1);
    ck_assert_uint_eq(n, 1);
    ck_assert_ptr_eq(nodes[0], producer_of(m, "k2"));
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, NULL, &nodes, &n), PH_EINVAL);
    ph_ctx_end_pass(ctx);
    ph_ctx_free(ctx);
    ph_model_free(m);
    ph_model_free(m2);
}
END_TEST

/* The log keeps what a reader can still use: a reader that fell a
 * quarter of the graph (at least 4096 entries) behind the end is told
 * "everything"; one that keeps up is told what changed, as before. */
START_TEST(a_reader_far_behind_is_told_everything)
{
    ph_model *m = far_model();
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ph_node **nodes;
    size_t n;
    ph_ctx_begin_pass(ctx, "behind", "");
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 0);
    ph_ctx_end_pass(ctx);
    ph_ctx_begin_pass(ctx, "near", "");
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 0);
    ph_ctx_end_pass(ctx);
    ph_node *add = producer_of(m, "z"), *exp = producer_of(m, "k3");
    ph_value *k3 = pc_node_output(m, 43);
    /* z reads x, then k3 again: Add and Exp are logged each time, as new
     * entries once the "near" reader took the old ones */
    for (int i = 0; i < 6000; i++) {
        ck_assert_int_eq(ph_node_set_input(add, 0, i % 2 ? k3 : input_x(m)), 0);
        ph_ctx_begin_pass(ctx, "near", "");
        ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 1);
        ck_assert_uint_eq(n, 2);
        ck_assert((nodes[0] == add && nodes[1] == exp) || (nodes[0] == exp && nodes[1] == add));
        ph_ctx_end_pass(ctx);
    }
    ph_ctx_begin_pass(ctx, "behind", "");
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 0); /* its position fell off */
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 1); /* and from here it is told again */
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(ph_node_set_input(add, 1, input_x(m)), 0);
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 1);
    ck_assert_uint_eq(n, 1); /* Add (w, an initializer, and x have no producer) */
    ck_assert_ptr_eq(nodes[0], add);
    ph_ctx_end_pass(ctx);
    ph_ctx_free(ctx);
    ph_model_free(m);
}
END_TEST

/* A second call finds what a change far from the rest left dead: the
 * chain behind it, transitively, and the initializer it read. */
START_TEST(second_call_finds_a_far_change)
{
    ph_model *m = far_model();
    ph_graph *g = ph_model_graph(m);
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ck_assert_int_eq(run_in(ctx, "eliminate_dead_nodes", m), 0);
    ph_node *add = producer_of(m, "z");
    ph_value *x = input_x(m);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    ck_assert_int_eq(ph_node_set_input(add, 0, x), 0);
    ck_assert_int_eq(ph_node_set_input(add, 1, x), 0);
    ck_assert_int_eq(run_in(ctx, "eliminate_dead_nodes", m), 4); /* Exp, Tanh, Sin, w */
    ck_assert_uint_eq(ph_graph_node_count(g), 42);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ck_assert_int_eq(run_in(ctx, "eliminate_dead_nodes", m), 0);
    ph_ctx_free(ctx);
    ph_model_free(m);
}
END_TEST

/* A later call on a model with a body finds an initializer the body left
 * unused, also when the body has no node (a node of an unknown domain
 * holding an empty graph attribute: the model's node count is the main
 * graph's, as for a model without bodies). */
START_TEST(later_call_finds_a_body_initializer)
{
    ph_model *m = far_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input_x(m);
    ph_node *custom = ph_node_create(g, NULL, "Custom", 1, &x, 1);
    ck_assert_ptr_nonnull(custom);
    ck_assert_int_eq(ph_node_set_domain(custom, "my.domain"), 0);
    ck_assert_int_eq(ph_graph_add_output(g, ph_node_output(custom, 0)), 0);
    ph_graph *body = ph_node_add_subgraph(custom, "body");
    ck_assert_ptr_nonnull(body);
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ck_assert_int_eq(run_in(ctx, "eliminate_dead_nodes", m), 0);
    float zeros[4] = {0};
    int64_t dims[1] = {4};
    ck_assert_ptr_nonnull(ph_graph_add_initializer(body, "unused_w", ph_tensor_new(PH_DT_FLOAT, 1, dims, zeros)));
    ph_node *add = producer_of(m, "z");
    ck_assert_int_eq(ph_node_set_input(add, 0, x), 0);
    ck_assert_int_eq(ph_node_set_input(add, 1, x), 0);
    ck_assert_int_eq(run_in(ctx, "eliminate_dead_nodes", m), 5); /* Exp, Tanh, Sin, w, unused_w */
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ck_assert_uint_eq(ph_graph_initializer_count(body), 0);
    ph_ctx_free(ctx);
    ph_model_free(m);
}
END_TEST

/* The near sweep removes what the full one removes, in its order (the
 * latest first), and a call on another model in between looks at all. */
START_TEST(near_sweep_order_and_other_models)
{
    ph_model *m = far_model(), *m2 = far_model();
    ph_graph *g = ph_model_graph(m);
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ck_assert_int_eq(run_in(ctx, "eliminate_dead_nodes", m), 0);
    /* m2 gets a dead chain before the pass ever ran on it; m changes too */
    ph_node *add2 = producer_of(m2, "z");
    ck_assert_int_eq(ph_node_set_input(add2, 0, input_x(m2)), 0);
    ck_assert_int_eq(run_in(ctx, "eliminate_dead_nodes", m2), 3);
    ck_assert_int_eq(ph_node_set_input(producer_of(m, "z"), 0, input_x(m)), 0);
    /* by hand, with the list the pass would get: the order of removals */
    ph_node **nodes;
    size_t n;
    ph_ctx_begin_pass(ctx, "order", "");
    ck_assert_int_eq(ph_ctx_changed_nodes(ctx, m, &nodes, &n), 0);
    ph_ctx_end_pass(ctx);
    ph_node *seen[8];
    size_t n_seen = 0;
    ph_node *e = producer_of(m, "k3"), *t = producer_of(m, "k2"), *s = producer_of(m, "k1");
    ph_node *list[2] = {e, producer_of(m, "z")};
    ph_node_heap *h = ph_node_heap_new(1);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(ph_node_heap_push(h, list[i]), 0);
    ck_assert_int_eq(ph_node_heap_push(h, s), 0);
    ck_assert_int_eq(ph_node_heap_push(h, t), 0);
    ck_assert_int_eq(ph_node_heap_push(h, e), 0); /* twice: comes out once */
    for (ph_node *k; (k = ph_node_heap_pop(h)) && n_seen < 8;)
        seen[n_seen++] = k;
    ck_assert_uint_eq(n_seen, 4);
    ck_assert_ptr_eq(seen[0], list[1]);
    ck_assert_ptr_eq(seen[1], e);
    ck_assert_ptr_eq(seen[2], t);
    ck_assert_ptr_eq(seen[3], s);
    ck_assert_int_eq(ph_node_heap_push(h, list[1]), 0); /* behind the last one: not taken */
    ck_assert_ptr_null(ph_node_heap_pop(h));
    ph_node_heap_free(h);
    /* readers held before a rewrite moves them, pushed after it */
    h = ph_node_heap_new(0);
    ck_assert_int_eq(ph_node_heap_hold_readers(h, s), 0);
    ck_assert_int_eq(ph_node_heap_push_held(h), 0);
    ck_assert_ptr_eq(ph_node_heap_pop(h), t);
    ck_assert_int_eq(ph_node_heap_push_held(h), 0); /* the hold was emptied */
    ck_assert_ptr_null(ph_node_heap_pop(h));
    ph_node_heap_free(h);
    ck_assert_int_eq(ph_graph_remove_dead_near(g, list, 2, NULL, NULL), 3);
    ck_assert_uint_eq(ph_graph_node_count(g), 42);
    ck_assert_int_eq(run_in(ctx, "eliminate_dead_nodes", m), 0);
    ph_ctx_free(ctx);
    ph_model_free(m);
    ph_model_free(m2);
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
    tcase_add_test(tc, changed_nodes_since_the_last_call);
    tcase_add_test(tc, a_reader_far_behind_is_told_everything);
    tcase_add_test(tc, second_call_finds_a_far_change);
    tcase_add_test(tc, later_call_finds_a_body_initializer);
    tcase_add_test(tc, near_sweep_order_and_other_models);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
