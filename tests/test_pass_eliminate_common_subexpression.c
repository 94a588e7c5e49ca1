/* tests/test_pass_eliminate_common_subexpression.c - the
 * eliminate_common_subexpression pass: twin nodes (same op, domain, inputs
 * and attributes) merge into the first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("eliminate_common_subexpression")

/* Run the pass once on `graph` (its case has checked it) and assert the
 * order of g's nodes afterwards. */
static void assert_order(const char *graph, int rewrites, const char *ops)
{
    char buf[256];
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), rewrites);
    ck_assert_str_eq(tk_ops(ph_model_graph(m), buf, sizeof buf), ops);
    ph_model_free(m);
}

/* Two copies of the same computation, added: each pair merges (Relu,
 * Transpose, LeakyRelu, Constant, then the Adds reading the Constants,
 * Dropout in inference). */
START_TEST(twins_merged)
{
    const char *graph = "x: float[2,3]\n"
                        "r1 = Relu(x); r2 = Relu(x); a = Add(r1, r2)\n"
                        "t1 = Transpose(x) {perm=[1,0]}; t2 = Transpose(x) {perm=[1,0]}; s = Sub(t1, t2)\n"
                        "l1 = LeakyRelu(x) {alpha=0.1}; l2 = LeakyRelu(x) {alpha=0.1}; m = Mul(l1, l2)\n"
                        "c1 = Constant() {value_floats=[1.0, 2, 3]}; c2 = Constant() {value_floats=[1.0, 2, 3]}\n"
                        "p1 = Add(x, c1); p2 = Add(x, c2); d = Div(p1, p2)\n"
                        "o1 = Dropout(x); o2 = Dropout(x); mx = Max(o1, o2)\n"
                        "return a, s, m, d, mx";
    PC_CASE(graph, 6,
            "r = Relu(x); a = Add(r, r)\n--\nt = Transpose(x); s = Sub(t, t)\n--\nl = LeakyRelu(x); m = Mul(l, l)\n--\n"
            "c = Constant(); p = Add(x, c); d = Div(p, p)\n--\no = Dropout(x); mx = Max(o, o)");
    assert_order(graph, 6, "Relu,Add,Transpose,Sub,LeakyRelu,Mul,Constant,Add,Div,Dropout,Max");
}
END_TEST

/* Two chains Relu -> Sigmoid -> Mul(c) -> Neg collapse in one run (a
 * single run here): each merge makes the next pair's inputs the same. */
START_TEST(chain_collapses_in_one_run)
{
    const char *graph = "x: float[2,3]; c: const float[3]\n"
                        "a1 = Relu(x); a2 = Sigmoid(a1); a3 = Mul(a2, c); a4 = Neg(a3)\n"
                        "b1 = Relu(x); b2 = Sigmoid(b1); b3 = Mul(b2, c); b4 = Neg(b3)\n"
                        "y = Add(a4, b4)\nreturn y";
    PC_CASE_OPTS(NULL, graph, 4, "r = Relu(x); s = Sigmoid(r); m = Mul(s, c); n = Neg(m); y = Add(n, n)");
    assert_order(graph, 4, "Relu,Sigmoid,Mul,Neg,Add");
}
END_TEST

/* The later twin's output is a graph output: the kept node's output takes
 * its name. */
START_TEST(later_twin_graph_output)
{
    const char *graph = "x: float[2,3]\na = Relu(x); b = Relu(x); n = Neg(a)\nreturn n, b";
    PC_CASE(graph, 1, "r = Relu(x)\n--\nn = Neg(r)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 1)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 1)), name);
    ph_model_free(m);
}
END_TEST

/* When both are graph outputs they stay. */
START_TEST(both_graph_outputs_kept)
{
    PC_UNTOUCHED("x: float[2,3]\na = Relu(x); b = Relu(x)\nreturn a, b");
}
END_TEST

/* Near twins that differ: attributes (by bits: 0.0 and -0.0 differ), input
 * order, constants, op, domain; and ops that must never merge (random:
 * the evaluator cannot compare them). */
static const struct {
    const char *graph;
    int unchecked;
} differ[] = {
    {"x: float[2,3]\nt1 = Transpose(x) {perm=[1,0]}; t2 = Transpose(x); y = Add(t1, t2)\nreturn y", 0},
    {"x: float[2,3]\nl1 = LeakyRelu(x) {alpha=0.0}; l2 = LeakyRelu(x) {alpha=-0.0}; y = Add(l1, l2)\nreturn y", 0},
    {"x: float[2,3]; z: float[2,3]\ns1 = Sub(x, z); s2 = Sub(z, x); y = Add(s1, s2)\nreturn y", 0},
    {"c1 = Constant() {value_floats=[1.0, 2]}; c2 = Constant() {value_floats=[1.0, 3]}; x: float[2]\n"
     "a = Add(c1, c2); y = Add(a, x)\nreturn y", 0},
    {"x: float[2,3]\nr = Relu(x); b = Abs(x); y = Add(r, b)\nreturn y", 0},
    {"z: float[2,3]\ne1 = Relu@com.example(z); e2 = Relu@com.example(z); y = Add(e1, e2)\nreturn y", 1},
    {"x: float[2,3]\nr1 = RandomNormal() {shape=[2,3]}; r2 = RandomNormal() {shape=[2,3]}\nreturn r1, r2", 1},
    {"x: float[2,3]\nu1 = RandomUniformLike(x); n1 = Neg(u1); u2 = RandomUniformLike(x); n2 = Neg(u2)\nreturn n1, n2", 1},
    {"x: float[2,3]\nb1 = Bernoulli(x); n1 = Neg(b1); b2 = Bernoulli(x); n2 = Neg(b2)\nreturn n1, n2", 1},
    /* Dropout in training mode */
    {"x: float[2,3]; t: bool[] = [1]\nd1 = Dropout(x, _, t); n = Neg(d1); d2 = Dropout(x, _, t); y = Add(n, d2)\n"
     "return y", 1},
};

START_TEST(different_or_random_left_alone)
{
    if (differ[_i].unchecked)
        PC_UNTOUCHED_UNCHECKED(differ[_i].graph);
    else
        PC_UNTOUCHED(differ[_i].graph);
}
END_TEST

/* Twins inside a branch merge there; a node of the branch never merges
 * with one of the main graph, nor If nodes with each other. */
START_TEST(inside_an_if_branch)
{
    char ops[256];
    ph_error err = {0};
    ph_model *m = ph_test_model_text("x: float[2,3]; cond: bool[]\nouter = Relu(x); i1 = If(cond); i2 = If(cond)\n"
                                     "s = Add(i1, i2); y = Add(outer, s)\nreturn y",
                                     &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_input(g, 0);
    ph_graph *then_g = NULL;
    int i = 0;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        if (ph_node_op(n) != PH_OP_If)
            continue;
        ph_graph *t = ph_node_add_subgraph(n, "then_branch"), *e = ph_node_add_subgraph(n, "else_branch");
        if (i++ == 0) {
            then_g = t;
            tk_output(t, tk_op2(t, "Add", tk_op1(t, "Relu", x), tk_op1(t, "Relu", x)));
        } else {
            tk_output(t, tk_op1(t, "Neg", x));
        }
        tk_output(e, tk_op1(e, "Neg", x));
    }
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "r = Relu(x); y = Add(r, r)");
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Relu,Add");
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,If,If,Add,Add");
    ph_model_free(m);
}
END_TEST

/* The SDK's attribute comparison the pass relies on (IR calls: the text
 * form has no tensor attribute). */
START_TEST(attribute_comparison)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_node *a = tk_node(g, "Foo", 1, &x), *b = tk_node(g, "Foo", 1, &x);
    double v[2] = {1, 2};
    /* the same attributes in another order */
    ph_node_set_attr_int(a, "i", 3);
    ph_node_set_attr_float(a, "f", 0.5f);
    ph_node_set_attr_string(a, "s", "abc");
    ph_node_set_attr_ints(a, "is", 2, TK_I64(4, 5));
    ph_node_set_attr_floats(a, "fs", 2, (const float[]){1.5f, -0.0f});
    ph_node_set_attr_tensor(a, "t", ph_tensor_from_f64(PH_DT_FLOAT, 1, TK_I64(2), v));
    ph_node_set_attr_tensor(b, "t", ph_tensor_from_f64(PH_DT_FLOAT, 1, TK_I64(2), v));
    ph_node_set_attr_floats(b, "fs", 2, (const float[]){1.5f, -0.0f});
    ph_node_set_attr_ints(b, "is", 2, TK_I64(4, 5));
    ph_node_set_attr_string(b, "s", "abc");
    ph_node_set_attr_float(b, "f", 0.5f);
    ph_node_set_attr_int(b, "i", 3);
    ck_assert_int_eq(ph_node_attrs_equal(a, b), 1);
    ck_assert_uint_eq(ph_node_attrs_hash(a), ph_node_attrs_hash(b));
    /* one difference each */
    ph_node_set_attr_floats(b, "fs", 2, (const float[]){1.5f, 0.0f});
    ck_assert_int_eq(ph_node_attrs_equal(a, b), 0);
    ph_node_set_attr_floats(b, "fs", 2, (const float[]){1.5f, -0.0f});
    ph_node_set_attr_string(b, "s", "abd");
    ck_assert_int_eq(ph_node_attrs_equal(a, b), 0);
    ph_node_set_attr_string(b, "s", "abc");
    v[1] = 3;
    ph_node_set_attr_tensor(b, "t", ph_tensor_from_f64(PH_DT_FLOAT, 1, TK_I64(2), v));
    ck_assert_int_eq(ph_node_attrs_equal(a, b), 0);
    ph_node_set_attr_tensor(b, "t", ph_tensor_from_f64(PH_DT_DOUBLE, 1, TK_I64(2), (const double[]){1, 2}));
    ck_assert_int_eq(ph_node_attrs_equal(a, b), 0);
    ph_node_remove_attr(b, "t");
    ck_assert_int_eq(ph_node_attrs_equal(a, b), 0);
    ph_node_set_attr_int(b, "t", 1); /* as many attributes, one of another type */
    ck_assert_int_eq(ph_node_attrs_equal(a, b), 0);
    /* a GRAPH attribute equals nothing, not even its own node */
    ph_node *c = tk_node(g, "Foo", 1, &x);
    ck_assert_int_eq(ph_node_attrs_equal(c, c), 1);
    ck_assert_ptr_nonnull(ph_node_add_subgraph(c, "body"));
    ck_assert_int_eq(ph_node_attrs_equal(c, c), 0);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------- calls after the first one */

/* x -> 41 nodes -> v40; j = Abs(x), k = Sin(x), p = Neg(k), q = Neg(j),
 * r1 = Relu(p), r2 = Relu(q), z = Add(r1, r2): no two nodes equal. */
static ph_model *far_model(void)
{
    static char text[4096];
    int len = snprintf(text, sizeof text, "x: float[4]\nv0 = Neg(x)\n");
    for (int i = 0; i < 40; i++)
        len += snprintf(text + len, sizeof text - (size_t)len, "v%d = %s(v%d)\n", i + 1, i % 2 ? "Relu" : "Abs", i);
    snprintf(text + len, sizeof text - (size_t)len,
             "j = Abs(x); k = Sin(x); p = Neg(k); q = Neg(j); r1 = Relu(p); r2 = Relu(q); z = Add(r1, r2)\n"
             "return v40, z");
    return pc_model(text);
}

/* far_model's nodes: 41 j, 42 k, 43 p, 44 q, 45 r1, 46 r2, 47 z */
static ph_node *far_node(ph_model *m, size_t k) { return ph_value_producer(pc_node_output(m, k)); }

static int run_in(ph_ctx *ctx, ph_model *m)
{
    ph_ctx_begin_pass(ctx, "eliminate_common_subexpression", "");
    int r = ph_ctx_run(ctx, ph_model_graph(m), pass->run, NULL);
    ph_ctx_end_pass(ctx);
    return r;
}

/* z's inputs are both r1's output, and r1 reads p's */
static void check_merged(ph_model *m, ph_node *p, ph_node *r1, ph_node *z)
{
    ck_assert_ptr_eq(ph_node_input(z, 0), ph_node_input(z, 1));
    ck_assert_ptr_eq(ph_value_producer(ph_node_input(z, 0)), r1);
    ck_assert_ptr_eq(ph_value_producer(ph_node_input(r1, 0)), p);
    ck_assert_uint_eq(ph_graph_node_count(ph_model_graph(m)), 46);
}

/* A change far from most nodes makes q equal to the earlier p: the second
 * call merges q into p, then r2 into r1 (its reader, equal in turn), as a
 * fresh walk of the whole graph does. */
START_TEST(second_call_merges_a_new_twin)
{
    for (int fresh = 0; fresh < 2; fresh++) {
        ph_model *m = far_model();
        ph_ctx *ctx = ph_ctx_new(NULL, NULL);
        if (!fresh)
            ck_assert_int_eq(run_in(ctx, m), 0);
        ph_node *p = far_node(m, 43), *q = far_node(m, 44), *r1 = far_node(m, 45), *z = far_node(m, 47);
        ck_assert_int_eq(ph_node_set_input(q, 0, ph_node_input(p, 0)), 0);
        ck_assert_int_eq(run_in(ctx, m), 2);
        ck_assert(ph_node_is_removed(q));
        check_merged(m, p, r1, z);
        ck_assert_int_eq(run_in(ctx, m), 0);
        ph_ctx_free(ctx);
        ph_model_free(m);
    }
}
END_TEST

/* The changed node is the earlier one: the later, unchanged q merges into
 * it (found among the readers of their input). */
START_TEST(second_call_merges_the_later_twin)
{
    ph_model *m = far_model();
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ck_assert_int_eq(run_in(ctx, m), 0);
    ph_node *p = far_node(m, 43), *q = far_node(m, 44), *r1 = far_node(m, 45), *z = far_node(m, 47);
    ck_assert_int_eq(ph_node_set_input(p, 0, ph_node_input(q, 0)), 0);
    ck_assert_int_eq(run_in(ctx, m), 2);
    ck_assert(ph_node_is_removed(q));
    check_merged(m, p, r1, z);
    ph_ctx_free(ctx);
    ph_model_free(m);
}
END_TEST

/* Nodes without inputs: a Constant made equal to another one is found
 * through the op's nodes. */
START_TEST(second_call_merges_constants)
{
    static char text[4096];
    int len = snprintf(text, sizeof text, "x: float[1]\na = Constant() {value_floats=[1.0]}\n"
                       "b = Constant() {value_floats=[2.0]}\ns = Add(x, a); t = Add(x, b); u = Mul(s, t)\n"
                       "v0 = Neg(u)\n");
    for (int i = 0; i < 40; i++) /* a graph large enough for the near path */
        len += snprintf(text + len, sizeof text - (size_t)len, "v%d = %s(v%d)\n", i + 1, i % 2 ? "Relu" : "Abs", i);
    snprintf(text + len, sizeof text - (size_t)len, "return v40");
    ph_model *m = pc_model(text);
    ph_ctx *ctx = ph_ctx_new(NULL, NULL);
    ck_assert_int_eq(run_in(ctx, m), 0);
    ph_node *a = far_node(m, 0), *b = far_node(m, 1), *u = far_node(m, 4);
    ck_assert_int_eq(ph_node_set_attr_floats(b, "value_floats", 1, (const float[]){1.0f}), 0);
    ck_assert_int_eq(run_in(ctx, m), 2); /* b into a, then t into s */
    ck_assert(ph_node_is_removed(b));
    ck_assert(!ph_node_is_removed(a));
    ck_assert_ptr_eq(ph_node_input(u, 0), ph_node_input(u, 1));
    ph_ctx_free(ctx);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_common_subexpression");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, twins_merged);
    tcase_add_test(tc, second_call_merges_a_new_twin);
    tcase_add_test(tc, second_call_merges_the_later_twin);
    tcase_add_test(tc, second_call_merges_constants);
    tcase_add_test(tc, chain_collapses_in_one_run);
    tcase_add_test(tc, later_twin_graph_output);
    tcase_add_test(tc, both_graph_outputs_kept);
    tcase_add_loop_test(tc, different_or_random_left_alone, 0, (int)(sizeof differ / sizeof *differ));
    tcase_add_test(tc, inside_an_if_branch);
    tcase_add_test(tc, attribute_comparison);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
