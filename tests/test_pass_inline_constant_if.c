/* tests/test_pass_inline_constant_if.c - the inline_constant_if pass.
 *
 * Every case is about an If, and the graph text has no subgraphs: the
 * models are built with the IR calls (ph_node_add_subgraph makes the
 * branches), the pass runs through the public harness (ph_test_run) and the
 * results are checked as patterns (ph_test_graph_is).  The evaluator runs no
 * If, so the numeric check compares the inlined model with the same
 * computation written without an If (as text), bit for bit, on random
 * inputs; tests/inline_constant_if_ort.sh checks If models before and after
 * in ONNX Runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("inline_constant_if")

/* Run the pass once on m (shapes updated, the result verified). */
static int run(ph_model *m)
{
    ph_error err = {0};
    int rc = ph_test_run(pass, m, NULL, NULL, &err);
    ck_assert_msg(rc >= 0, "%s", err.message);
    return rc;
}

/* The values of w_then, the then branch's initializer. */
static const float W_THEN[6] = {0.5f, -1, 2, 0.25f, 3, -0.75f};
#define W_THEN_TEXT "[0.5, -1, 2, 0.25, 3, -0.75]"

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
    ph_value *w = ph_graph_add_initializer(b, "w_then", ph_tensor_new(PH_DT_FLOAT, 2, D23, W_THEN));
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

/* x -> Abs -> p; y = If(cond){...}; out = Sigmoid(y), the condition as
 * text (the Constant node's bool tensor has no text form). */
static ph_model *build(enum cond_kind kind)
{
    static const char *const cond[] = {
        [COND_TRUE] = "cond: bool[] = [1]", [COND_FALSE] = "cond: bool[] = [0]",
        [COND_CONSTANT_NODE] = "cond: bool[]", [COND_INPUT] = "cond: bool[]",
        [COND_INT] = "cond: int64[] = [1]", [COND_TWO] = "cond: bool[2] = [1]",
    };
    char text[256];
    snprintf(text, sizeof text, "x: float[2,3]; %s\np = Abs(x); y = If(cond); o = Sigmoid(y)\nreturn o", cond[kind]);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(text, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ph_node *n = ph_value_producer(ph_node_input(ph_value_producer(ph_graph_output(g, 0)), 0));
    if (kind == COND_CONSTANT_NODE)
        ck_assert_int_eq(ph_node_set_input(n, 0, condition(g, kind)), 0);
    ph_graph *t = ph_node_add_subgraph(n, "then_branch");
    ph_graph *e = ph_node_add_subgraph(n, "else_branch");
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(e);
    ph_value *x = ph_graph_find_value(g, "x"), *p = ph_node_output(ph_value_use(x, 0, NULL), 0); /* Abs */
    ck_assert_int_eq(ph_graph_add_output(t, then_part(t, p)), 0);
    ck_assert_int_eq(ph_graph_add_output(e, else_part(e, p, x)), 0);
    return m;
}

/* The branch taken, written without an If: the reference. */
static const char *const flat[2] = {
    "x: float[2,3]\np = Abs(x); m = Mul(p, x); n = Neg(m); y = Sigmoid(n)\nreturn y",
    "x: float[2,3]; w_then: float[2,3] = " W_THEN_TEXT "\np = Abs(x); a = Add(p, w_then); r = Relu(a); y = Sigmoid(r)\nreturn y",
};

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
    ph_error err = {0};
    ph_model *ref = ph_test_model_text(flat[taken], &err);
    ck_assert_msg(ref != NULL, "%s", err.message);
    tk_assert_same_outputs(ref, m, seed);
    ph_model_free(ref);
}

START_TEST(true_condition_inlines_then_branch)
{
    ph_model *m = build(COND_TRUE);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(run(m), 1);
    PC_GRAPH_IS(g, "p = Abs(x)\na = Add(p, w_then)\nr = Relu(a)\ny = Sigmoid(r)");
    ck_assert_uint_eq(count_if(g), 0);
    /* the branch's initializer moved into the main graph, the condition went */
    ck_assert_ptr_nonnull(ph_graph_find_value(g, "w_then"));
    ck_assert_ptr_null(ph_graph_find_value(g, "cond"));
    assert_same_as_flat(m, 1, 11);
    assert_same_as_flat(m, 1, 12);
    ck_assert_int_eq(run(m), 0); /* fixpoint */
    ph_model_free(m);
}
END_TEST

START_TEST(false_condition_inlines_else_branch)
{
    ph_model *m = build(COND_FALSE);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(run(m), 1);
    PC_GRAPH_IS(g, "p = Abs(x)\nm = Mul(p, x)\nn = Neg(m)\ny = Sigmoid(n)");
    ck_assert_ptr_null(ph_graph_find_value(g, "w_then")); /* went with the then branch */
    assert_same_as_flat(m, 0, 21);
    ph_model_free(m);
}
END_TEST

START_TEST(constant_node_condition)
{
    ph_model *m = build(COND_CONSTANT_NODE);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(run(m), 1);
    PC_GRAPH_IS(g, "p = Abs(x)\na = Add(p, w_then)\nr = Relu(a)\ny = Sigmoid(r)"); /* the Constant went too */
    assert_same_as_flat(m, 1, 31);
    ph_model_free(m);
}
END_TEST

START_TEST(non_constant_conditions_are_kept)
{
    static const enum cond_kind kinds[] = {COND_INPUT, COND_INT, COND_TWO};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        ph_model *m = build(kinds[i]);
        ck_assert_int_eq(run(m), 0);
        PC_GRAPH_IS(ph_model_graph(m), "p = Abs(x)\n--\ni = If(cond)\ny = Sigmoid(i)");
        ph_model_free(m);
    }
}
END_TEST

START_TEST(other_domain_if_is_kept)
{
    ph_model *m = build(COND_TRUE);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_node *n = tk_find_op(ph_model_graph(m), PH_OP_If);
    ck_assert_int_eq(ph_node_set_domain(n, "com.example"), 0);
    ck_assert_int_eq(run(m), 0);
    PC_GRAPH_IS(ph_model_graph(m), "p = Abs(x)\n--\ni = If@com.example(cond)\ny = Sigmoid(i)");
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
    ck_assert_int_eq(run(m), 1);
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
    ck_assert_int_eq(run(m), 1);
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
    ck_assert_int_eq(run(m), 1);
    PC_GRAPH_IS(g, "r = Relu(x)\n--\ni = Identity(x)");
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

    ck_assert_int_eq(run(m), 2);
    PC_GRAPH_IS(g, "a = Abs(x)\n--\nr = Relu(a)\n--\ni = If(flag)\ny = Sigmoid(i)");
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

    ck_assert_int_eq(run(m), 1);
    PC_GRAPH_IS(g, "l = Loop(trip, go, x)");
    PC_GRAPH_IS(body, "c = Identity(c_in)\n--\nm = Mul(v, _)");
    ck_assert_ptr_eq(ph_value_graph(ph_graph_output(body, 1)), body);
    ck_assert_uint_eq(count_if(g), 0);
    ph_model_free(m);
}
END_TEST

/* A branch node named like a node of the main graph gets a unique name. */
START_TEST(node_names_made_unique)
{
    ph_model *m = build(COND_TRUE);
    ph_graph *g = ph_model_graph(m);
    ph_node *abs = tk_find_op(g, PH_OP_Abs);
    ph_node *n = tk_find_op(g, PH_OP_If);
    ph_graph *t = ph_node_attr_graph(n, "then_branch");
    ck_assert_int_eq(ph_node_set_name(abs, "same"), 0);
    ck_assert_int_eq(ph_node_set_name(ph_graph_first_node(t), "same"), 0);
    ck_assert_int_eq(run(m), 1);
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
    ck_assert_int_eq(run(m), 1);
    PC_GRAPH_IS(g, "p = Abs(x)\nm = Mul(p, x)\nn = Neg(m)\ny = Sigmoid(n)");
    ph_model_free(m);
}
END_TEST

/* A saved and reloaded inlined model is valid and has no If. */
START_TEST(round_trip_through_a_file)
{
    ph_model *m = build(COND_TRUE);
    ck_assert_int_eq(run(m), 1);
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
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
