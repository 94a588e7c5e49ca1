/* tests/test_pass_inline_constant_if.c - the inline_constant_if pass.
 *
 * The models are built with the SDK's builder (ph_node_add_subgraph makes
 * the branches).  The numeric check compares the inlined model with the
 * same computation written without an If (the evaluator of the tests runs
 * no If), bit for bit, on random inputs; tests/inline_constant_if_ort.sh
 * checks If models before and after in ONNX Runtime. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("inline_constant_if"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

enum cond_kind {
    COND_TRUE,          /* a bool initializer */
    COND_FALSE,
    COND_CONSTANT_NODE, /* a Constant node's value (true) */
    COND_INPUT,         /* a graph input: not a constant */
    COND_INT,           /* an int64 initializer: not a bool */
    COND_TWO,           /* a bool initializer of two elements */
};

static const int64_t D23[2] = {2, 3};

static ph_value *bool_init(ph_graph *g, const char *name, size_t n, int value)
{
    uint8_t b[2] = {(uint8_t)value, (uint8_t)value};
    int64_t dim = (int64_t)n;
    ph_value *v = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_BOOL, n == 1 ? 0 : 1, &dim, b));
    ck_assert_ptr_nonnull(v);
    return v;
}

static ph_value *condition(ph_graph *g, enum cond_kind kind)
{
    switch (kind) {
    case COND_TRUE: return bool_init(g, "cond", 1, 1);
    case COND_FALSE: return bool_init(g, "cond", 1, 0);
    case COND_TWO: return bool_init(g, "cond", 2, 1);
    case COND_CONSTANT_NODE: {
        uint8_t one = 1;
        ph_node *c = ph_node_create(g, NULL, "Constant", 0, NULL, 1);
        ck_assert_int_eq(ph_node_set_attr_tensor(c, "value", ph_tensor_new(PH_DT_BOOL, 0, NULL, &one)), 0);
        ck_assert_int_eq(ph_value_set_type(ph_node_output(c, 0), PH_DT_BOOL, 0, NULL), 0);
        return ph_node_output(c, 0);
    }
    case COND_INT: {
        int64_t one = 1;
        return ph_graph_add_initializer(g, "cond", ph_tensor_new(PH_DT_INT64, 0, NULL, &one));
    }
    case COND_INPUT: return ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    }
    return NULL;
}

/* then: Relu(Add(p, w_then)) with w_then an initializer of the branch;
 * else: Neg(Mul(p, x)).  p and x are values of the enclosing graphs. */
static ph_value *then_part(ph_graph *b, ph_value *p)
{
    ph_value *w = tk_init(b, "w_then", 2, D23, 5);
    return tk_op1(b, "Relu", tk_op2(b, "Add", p, w));
}
static ph_value *else_part(ph_graph *b, ph_value *p, ph_value *x)
{
    return tk_op1(b, "Neg", tk_op2(b, "Mul", p, x));
}

/* An If on g's cond whose branches are then_part / else_part; its output. */
static ph_value *add_if(ph_graph *g, ph_value *cond, ph_value *p, ph_value *x)
{
    ph_node *n = ph_node_create(g, NULL, "If", 1, &cond, 1);
    ck_assert_ptr_nonnull(n);
    ph_graph *t = ph_node_add_subgraph(n, "then_branch");
    ph_graph *e = ph_node_add_subgraph(n, "else_branch");
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(ph_graph_add_output(t, then_part(t, p)), 0);
    ck_assert_int_eq(ph_graph_add_output(e, else_part(e, p, x)), 0);
    ph_value *y = ph_node_output(n, 0);
    tk_set_shape(y, 2, D23);
    return y;
}

/* x -> Abs -> p; y = If(cond){...}; out = Sigmoid(y).  flat: the branch
 * `taken` written straight into the main graph instead (the reference). */
static ph_model *build(enum cond_kind kind, int flat, int taken)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, D23);
    ph_value *p = tk_op1(g, "Abs", x);
    ph_value *y;
    if (flat)
        y = taken ? then_part(g, p) : else_part(g, p, x);
    else
        y = add_if(g, condition(g, kind), p, x);
    tk_output(g, tk_op1(g, "Sigmoid", y));
    return m;
}

static size_t count_if(const ph_graph *g)
{
    size_t n = 0;
    for (ph_node *k = ph_graph_first_node(g); k; k = ph_node_next(k)) {
        n += ph_node_op(k) == PH_OP_If;
        for (size_t s = 0; s < ph_node_subgraph_count(k); s++)
            n += count_if(ph_node_subgraph(k, s));
    }
    return n;
}

/* The inlined model computes what the flat reference computes, bit for bit. */
static void assert_same_as_flat(ph_model *m, int taken, uint64_t seed)
{
    ph_model *ref = build(COND_TRUE, 1, taken);
    tk_assert_same_outputs(ref, m, seed);
    ph_model_free(ref);
}

START_TEST(true_condition_inlines_then_branch)
{
    char ops[256];
    ph_model *m = build(COND_TRUE, 0, 1);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Abs,Add,Relu,Sigmoid");
    ck_assert_uint_eq(count_if(g), 0);
    /* the branch's initializer moved into the main graph, the condition went */
    ck_assert_ptr_nonnull(ph_graph_find_value(g, "w_then"));
    ck_assert_ptr_null(ph_graph_find_value(g, "cond"));
    assert_same_as_flat(m, 1, 11);
    assert_same_as_flat(m, 1, 12);
    ck_assert_int_eq(tk_pass_run(pass, m), 0); /* fixpoint */
    ph_model_free(m);
}
END_TEST

START_TEST(false_condition_inlines_else_branch)
{
    char ops[256];
    ph_model *m = build(COND_FALSE, 0, 0);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Abs,Mul,Neg,Sigmoid");
    ck_assert_ptr_null(ph_graph_find_value(g, "w_then")); /* went with the then branch */
    assert_same_as_flat(m, 0, 21);
    ph_model_free(m);
}
END_TEST

START_TEST(constant_node_condition)
{
    char ops[256];
    ph_model *m = build(COND_CONSTANT_NODE, 0, 1);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Abs,Add,Relu,Sigmoid"); /* the Constant went too */
    assert_same_as_flat(m, 1, 31);
    ph_model_free(m);
}
END_TEST

START_TEST(non_constant_conditions_are_kept)
{
    static const enum cond_kind kinds[] = {COND_INPUT, COND_INT, COND_TWO};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        ph_model *m = build(kinds[i], 0, 1);
        tk_assert_untouched(pass, m);
        ck_assert_uint_eq(count_if(ph_model_graph(m)), 1);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(other_domain_if_is_kept)
{
    ph_model *m = build(COND_TRUE, 0, 1);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_node *n = tk_find_op(ph_model_graph(m), PH_OP_If);
    ck_assert_int_eq(ph_node_set_domain(n, "com.example"), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The condition has another consumer: it stays for it. */
START_TEST(condition_with_other_consumers_stays)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, D23);
    ph_value *p = tk_op1(g, "Abs", x);
    ph_value *cond = condition(g, COND_TRUE);
    tk_output(g, tk_op1(g, "Not", cond));
    tk_output(g, tk_op1(g, "Sigmoid", add_if(g, cond, p, x)));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(count_if(g), 0);
    ck_assert_ptr_eq(ph_graph_find_value(g, "cond"), cond);
    ck_assert_uint_eq(ph_value_use_count(cond), 1);
    ph_model_free(m);
}
END_TEST

/* The If's output is a graph output read by another node too: the name of
 * the output stays, the reader reads the branch's value. */
START_TEST(if_output_is_a_graph_output_in_the_middle)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, D23);
    ph_value *p = tk_op1(g, "Abs", x);
    ph_value *y = add_if(g, condition(g, COND_TRUE), p, x);
    char name[128];
    snprintf(name, sizeof name, "%s", ph_value_name(y));
    tk_output(g, y);
    tk_output(g, tk_op1(g, "Sigmoid", y));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ph_value *out = ph_graph_output(g, 0);
    ck_assert_str_eq(ph_value_name(out), name);
    ck_assert_int_eq(ph_node_op(ph_value_producer(out)), PH_OP_Relu);
    ck_assert_ptr_eq(ph_node_input(ph_value_producer(ph_graph_output(g, 1)), 0), out);
    ph_model_free(m);
}
END_TEST

/* A branch that returns a graph input as is, where the If's output is a
 * graph output: an Identity keeps the two names apart. */
START_TEST(branch_returning_a_graph_input)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, D23);
    ph_value *cond = condition(g, COND_TRUE);
    ph_node *n = ph_node_create(g, NULL, "If", 1, &cond, 2);
    ph_graph *t = ph_node_add_subgraph(n, "then_branch");
    ph_graph *e = ph_node_add_subgraph(n, "else_branch");
    ph_value *r = tk_op1(t, "Relu", x);
    ck_assert_int_eq(ph_graph_add_output(t, x), 0);
    ck_assert_int_eq(ph_graph_add_output(t, r), 0);
    ph_value *ne = tk_op1(e, "Neg", x);
    ck_assert_int_eq(ph_graph_add_output(e, ne), 0);
    ck_assert_int_eq(ph_graph_add_output(e, ne), 0);
    tk_output(g, ph_node_output(n, 0));
    tk_output(g, ph_node_output(n, 1));
    char name0[128];
    snprintf(name0, sizeof name0, "%s", ph_value_name(ph_node_output(n, 0)));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Identity");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name0);
    ck_assert_ptr_eq(ph_node_input(ph_value_producer(ph_graph_output(g, 0)), 0), x);
    ph_model_free(m);
}
END_TEST

/* The taken branch holds an If on a constant (inlined first: bodies are
 * walked first) and an If on a graph input (moved up as it is, its
 * branches now reading values that moved with it). */
START_TEST(nested_ifs)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, D23);
    ph_value *flag = ph_graph_add_input(g, "flag", PH_DT_BOOL, 0, NULL);
    ph_value *cond = condition(g, COND_TRUE);
    ph_node *outer = ph_node_create(g, NULL, "If", 1, &cond, 1);
    ph_graph *t = ph_node_add_subgraph(outer, "then_branch");
    ph_graph *e = ph_node_add_subgraph(outer, "else_branch");
    ck_assert_int_eq(ph_graph_add_output(e, tk_op1(e, "Neg", x)), 0);
    /* then: a = Abs(x); b = If(true){Relu(a)}{Neg(a)}; c = If(flag){Exp(b)}{Tanh(a)} */
    ph_value *a = tk_op1(t, "Abs", x);
    ph_value *inner_cond = bool_init(t, "inner_cond", 1, 1);
    ph_node *inner = ph_node_create(t, NULL, "If", 1, &inner_cond, 1);
    ph_graph *it = ph_node_add_subgraph(inner, "then_branch");
    ph_graph *ie = ph_node_add_subgraph(inner, "else_branch");
    ck_assert_int_eq(ph_graph_add_output(it, tk_op1(it, "Relu", a)), 0);
    ck_assert_int_eq(ph_graph_add_output(ie, tk_op1(ie, "Neg", a)), 0);
    ph_value *b = ph_node_output(inner, 0);
    ph_node *dyn = ph_node_create(t, NULL, "If", 1, &flag, 1);
    ph_graph *dt = ph_node_add_subgraph(dyn, "then_branch");
    ph_graph *de = ph_node_add_subgraph(dyn, "else_branch");
    ck_assert_int_eq(ph_graph_add_output(dt, tk_op1(dt, "Exp", b)), 0);
    ck_assert_int_eq(ph_graph_add_output(de, tk_op1(de, "Tanh", a)), 0);
    ck_assert_int_eq(ph_graph_add_output(t, ph_node_output(dyn, 0)), 0);
    tk_output(g, tk_op1(g, "Sigmoid", ph_node_output(outer, 0)));

    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    char ops[256];
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Abs,Relu,If,Sigmoid");
    ph_node *kept = tk_find_op(g, PH_OP_If);
    ck_assert_ptr_eq(ph_node_input(kept, 0), flag);
    /* its branches read the moved values */
    ph_graph *kt = ph_node_attr_graph(kept, "then_branch");
    ph_node *relu = tk_find_op(g, PH_OP_Relu);
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(kt), 0), ph_node_output(relu, 0));
    ck_assert_ptr_eq(ph_value_graph(ph_node_output(relu, 0)), g);
    ck_assert_uint_eq(count_if(g), 1);
    ph_model_free(m);
}
END_TEST

/* An If on a constant inside a Loop body is inlined into the body. */
START_TEST(if_inside_loop_body)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, D23);
    int64_t three = 3;
    ph_value *trip = ph_graph_add_initializer(g, "trip", ph_tensor_new(PH_DT_INT64, 0, NULL, &three));
    ph_value *go = bool_init(g, "go", 1, 1);
    ph_value *ins[3] = {trip, go, x};
    ph_node *loop = ph_node_create(g, NULL, "Loop", 3, ins, 1);
    ph_graph *body = ph_node_add_subgraph(loop, "body");
    ph_graph_add_input(body, "i", PH_DT_INT64, 0, NULL);
    ph_value *c_in = ph_graph_add_input(body, "c_in", PH_DT_BOOL, 0, NULL);
    ph_value *v = ph_graph_add_input(body, "v", PH_DT_FLOAT, 2, D23);
    ph_value *c_out = tk_op1(body, "Identity", c_in);
    ph_value *bc = bool_init(body, "body_cond", 1, 0);
    ph_node *n = ph_node_create(body, NULL, "If", 1, &bc, 1);
    ph_graph *t = ph_node_add_subgraph(n, "then_branch");
    ph_graph *e = ph_node_add_subgraph(n, "else_branch");
    ck_assert_int_eq(ph_graph_add_output(t, tk_op2(t, "Add", v, x)), 0);
    ck_assert_int_eq(ph_graph_add_output(e, tk_op2(e, "Mul", v, x)), 0);
    ck_assert_int_eq(ph_graph_add_output(body, c_out), 0);
    ck_assert_int_eq(ph_graph_add_output(body, ph_node_output(n, 0)), 0);
    tk_output(g, ph_node_output(loop, 0));

    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    char ops[256];
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Loop");
    ck_assert_str_eq(tk_ops(body, ops, sizeof ops), "Identity,Mul");
    ck_assert_ptr_eq(ph_value_graph(ph_graph_output(body, 1)), body);
    ck_assert_uint_eq(count_if(g), 0);
    ph_model_free(m);
}
END_TEST

/* A branch node named like a node of the main graph gets a unique name. */
START_TEST(node_names_made_unique)
{
    ph_model *m = build(COND_TRUE, 0, 1);
    ph_graph *g = ph_model_graph(m);
    ph_node *abs = tk_find_op(g, PH_OP_Abs);
    ph_node *n = tk_find_op(g, PH_OP_If);
    ph_graph *t = ph_node_attr_graph(n, "then_branch");
    ck_assert_int_eq(ph_node_set_name(abs, "same"), 0);
    ck_assert_int_eq(ph_node_set_name(ph_graph_first_node(t), "same"), 0);
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ph_node *add = tk_find_op(g, PH_OP_Add);
    ck_assert_str_eq(ph_node_name(abs), "same");
    ck_assert_str_ne(ph_node_name(add), "same");
    ck_assert_ptr_eq(strstr(ph_node_name(add), "same"), ph_node_name(add));
    ph_model_free(m);
}
END_TEST

/* Shapes unknown everywhere: nothing depends on them. */
START_TEST(unknown_shapes)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", -1, NULL);
    ph_value *p = tk_op1(g, "Abs", x);
    ph_value *cond = condition(g, COND_FALSE);
    ph_node *n = ph_node_create(g, NULL, "If", 1, &cond, 1);
    ph_graph *t = ph_node_add_subgraph(n, "then_branch");
    ph_graph *e = ph_node_add_subgraph(n, "else_branch");
    ck_assert_int_eq(ph_graph_add_output(t, tk_op1(t, "Relu", p)), 0);
    ck_assert_int_eq(ph_graph_add_output(e, else_part(e, p, x)), 0);
    tk_output(g, tk_op1(g, "Sigmoid", ph_node_output(n, 0)));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    char ops[256];
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Abs,Mul,Neg,Sigmoid");
    ph_model_free(m);
}
END_TEST

/* A saved and reloaded inlined model is valid and has no If. */
START_TEST(round_trip_through_a_file)
{
    ph_model *m = build(COND_TRUE, 0, 1);
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    char path[] = "/tmp/ph_inline_if_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ph_error err = {0};
    ck_assert_msg(ph_model_save(m, path, &err) == 0, "%s", err.message);
    ph_model *back = NULL;
    int rc = ph_model_load(path, &back, &err);
    unlink(path);
    ck_assert_msg(rc == 0, "%s", err.message);
    ck_assert_uint_eq(count_if(ph_model_graph(back)), 0);
    ck_assert_ptr_nonnull(ph_graph_find_value(ph_model_graph(back), "w_then"));
    assert_same_as_flat(back, 1, 41);
    ph_model_free(back);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_inline_constant_if");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, true_condition_inlines_then_branch);
    tcase_add_test(tc, false_condition_inlines_else_branch);
    tcase_add_test(tc, constant_node_condition);
    tcase_add_test(tc, non_constant_conditions_are_kept);
    tcase_add_test(tc, other_domain_if_is_kept);
    tcase_add_test(tc, condition_with_other_consumers_stays);
    tcase_add_test(tc, if_output_is_a_graph_output_in_the_middle);
    tcase_add_test(tc, branch_returning_a_graph_input);
    tcase_add_test(tc, nested_ifs);
    tcase_add_test(tc, if_inside_loop_body);
    tcase_add_test(tc, node_names_made_unique);
    tcase_add_test(tc, unknown_shapes);
    tcase_add_test(tc, round_trip_through_a_file);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
