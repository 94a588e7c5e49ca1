/* tests/test_pass_eliminate_common_subexpression.c - the
 * eliminate_common_subexpression pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("eliminate_common_subexpression"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

static ph_value *leaky(ph_graph *g, ph_value *x, float alpha)
{
    ph_value *y = tk_op1(g, "LeakyRelu", x);
    ck_assert_int_eq(ph_node_set_attr_float(ph_value_producer(y), "alpha", alpha), 0);
    return y;
}

/* A Constant node holding n floats. */
static ph_value *constant(ph_graph *g, size_t n, const double *vals)
{
    ph_node *k = tk_node(g, "Constant", 0, NULL);
    ck_assert_int_eq(ph_node_set_attr_tensor(k, "value", ph_tensor_from_f64(PH_DT_FLOAT, 1, TK_I64((int64_t)n), vals)),
                     0);
    return ph_node_output(k, 0);
}

/* Two copies of the same computation, added: each pair merges. */
START_TEST(twins_merged)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    /* Relu, Transpose [1,0], LeakyRelu 0.1, Constant [3], Dropout (inference) */
    tk_output(g, tk_op2(g, "Add", tk_op1(g, "Relu", x), tk_op1(g, "Relu", x)));
    tk_output(g, tk_op2(g, "Sub", tk_transpose(g, x, 2, TK_I64(1, 0)), tk_transpose(g, x, 2, TK_I64(1, 0))));
    tk_output(g, tk_op2(g, "Mul", leaky(g, x, 0.1f), leaky(g, x, 0.1f)));
    ph_value *c1 = constant(g, 3, (const double[]){1, 2, 3}), *c2 = constant(g, 3, (const double[]){1, 2, 3});
    tk_output(g, tk_op2(g, "Div", tk_op2(g, "Add", x, c1), tk_op2(g, "Add", x, c2)));
    tk_output(g, tk_op2(g, "Max", tk_op1(g, "Dropout", x), tk_op1(g, "Dropout", x)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 6); /* Relu, Transpose, LeakyRelu, Constant, Add, Dropout */
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Add,Transpose,Sub,LeakyRelu,Mul,Constant,Add,Div,Dropout,Max");
    ph_node *add = tk_find_op(g, PH_OP_Add);
    ck_assert_ptr_eq(ph_node_input(add, 0), ph_node_input(add, 1));
    tk_assert_untouched(pass, m); /* idempotent */
    ph_model_free(m);
}
END_TEST

/* Two chains Relu -> Sigmoid -> Mul(c) -> Neg collapse in one run: each
 * merge makes the next pair's inputs the same. */
START_TEST(chain_collapses_in_one_run)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *c = tk_init(g, "c", 1, TK_I64(3), 1);
    ph_value *a = x, *b = x;
    const char *chain[] = {"Relu", "Sigmoid", "Mul", "Neg"};
    for (int i = 0; i < 4; i++) {
        a = i == 2 ? tk_op2(g, chain[i], a, c) : tk_op1(g, chain[i], a);
        b = i == 2 ? tk_op2(g, chain[i], b, c) : tk_op1(g, chain[i], b);
    }
    tk_output(g, tk_op2(g, "Add", a, b));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 4);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Sigmoid,Mul,Neg,Add");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The later twin's output is a graph output: the kept node's output takes
 * its name.  When both are graph outputs they stay. */
START_TEST(graph_outputs)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *a = tk_op1(g, "Relu", x), *b = tk_op1(g, "Relu", x);
    tk_output(g, tk_op1(g, "Neg", a));
    tk_output(g, b);
    char *name = strdup(ph_value_name(b));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 1)), name);
    free(name);
    ph_model_free(m);

    m = tk_model();
    g = ph_model_graph(m);
    x = tk_input(g, "x", 2, TK_I64(2, 3));
    tk_output(g, tk_op1(g, "Relu", x));
    tk_output(g, tk_op1(g, "Relu", x));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Near twins that differ: attributes (by bits: 0.0 and -0.0 differ), input
 * order, constants, op, domain; and ops that must never merge. */
START_TEST(different_or_random_left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3)), *z = tk_input(g, "z", 2, TK_I64(2, 3));
    tk_output(g, tk_op2(g, "Add", tk_transpose(g, x, 2, TK_I64(1, 0)), tk_transpose(g, x, 2, NULL)));
    tk_output(g, tk_op2(g, "Add", leaky(g, x, 0.0f), leaky(g, x, -0.0f)));
    tk_output(g, tk_op2(g, "Add", tk_op2(g, "Sub", x, z), tk_op2(g, "Sub", z, x)));
    tk_output(g, tk_op2(g, "Add", constant(g, 2, (const double[]){1, 2}), constant(g, 2, (const double[]){1, 3})));
    tk_output(g, tk_op2(g, "Add", tk_op1(g, "Relu", x), tk_op1(g, "Abs", x)));
    ph_value *e1 = tk_op1(g, "Relu", z), *e2 = tk_op1(g, "Relu", z);
    ph_node_set_domain(ph_value_producer(e1), "com.example");
    ph_node_set_domain(ph_value_producer(e2), "com.example");
    tk_output(g, tk_op2(g, "Add", e1, e2));
    /* random ops */
    for (int i = 0; i < 2; i++) {
        ph_node *rn = tk_node(g, "RandomNormal", 0, NULL);
        ck_assert_int_eq(ph_node_set_attr_ints(rn, "shape", 2, TK_I64(2, 3)), 0);
        tk_output(g, ph_node_output(rn, 0));
        tk_output(g, tk_op1(g, "Neg", tk_op1(g, "RandomUniformLike", x)));
        tk_output(g, tk_op1(g, "Neg", tk_op1(g, "Bernoulli", x)));
    }
    /* Dropout in training mode: random */
    double one = 1;
    ph_value *t = ph_graph_add_initializer(g, "training", ph_tensor_from_f64(PH_DT_BOOL, 0, NULL, &one));
    ph_value *d_in[3] = {x, NULL, t};
    tk_output(g, tk_op2(g, "Add", tk_op1(g, "Neg", ph_node_output(tk_node(g, "Dropout", 3, d_in), 0)),
                        ph_node_output(tk_node(g, "Dropout", 3, d_in), 0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Twins inside a branch merge there; a node of the branch never merges
 * with one of the main graph, nor If nodes with each other. */
START_TEST(inside_an_if_branch)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_value *outer = tk_op1(g, "Relu", x);
    ph_graph *then_g = NULL;
    ph_value *ifs[2];
    for (int i = 0; i < 2; i++) {
        ph_node *iff = tk_node(g, "If", 1, &cond);
        ph_graph *t = ph_node_add_subgraph(iff, "then_branch");
        ph_graph *e = ph_node_add_subgraph(iff, "else_branch");
        if (i == 0) {
            then_g = t;
            tk_output(t, tk_op2(t, "Add", tk_op1(t, "Relu", x), tk_op1(t, "Relu", x)));
        } else {
            tk_output(t, tk_op1(t, "Neg", x));
        }
        tk_output(e, tk_op1(e, "Neg", x));
        ifs[i] = ph_node_output(iff, 0);
    }
    tk_output(g, tk_op2(g, "Add", outer, tk_op2(g, "Add", ifs[0], ifs[1])));
    ck_assert_int_eq(tk_pass_run(pass, m), 1); /* the evaluator has no If: structure only */
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Relu,Add");
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,If,If,Add,Add");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The SDK's attribute comparison the pass relies on. */
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

int main(void)
{
    Suite *s = suite_create("pass_eliminate_common_subexpression");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, twins_merged);
    tcase_add_test(tc, chain_collapses_in_one_run);
    tcase_add_test(tc, graph_outputs);
    tcase_add_test(tc, different_or_random_left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    tcase_add_test(tc, attribute_comparison);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
