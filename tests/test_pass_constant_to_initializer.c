/* tests/test_pass_constant_to_initializer.c - the constant_to_initializer
 * pass: a Constant node becomes an initializer.
 *
 * The cases are text graphs on the public harness (passhost/testing.h),
 * checked bit for bit (the pass is exact).  The text has no tensor
 * attribute and no subgraphs: the Constant with a `value` tensor gets it
 * through the IR after the text is read, and the If models are written as
 * protobuf wire bytes (the builder API cannot make If bodies with their own
 * initializers), run with ph_test_run / ph_test_run_checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passcase.h"
#include "passrun.h"
#include "pbwire.h"
#include "testkit.h"

PASS_FIXTURE("constant_to_initializer")

/* Run the pass on m (checked: outputs bit for bit the same); the rewrites. */
static int run(ph_model *m, int checked)
{
    ph_error err = {0};
    ph_test_options o = {.max_iterations = 4};
    int rc = checked ? ph_test_run_checked(pass, m, &o, NULL, &err) : ph_test_run(pass, m, &o, NULL, &err);
    ck_assert_msg(rc >= 0, "%s", err.message);
    return rc;
}

/* `graph` after the pass (its case has checked it); caller frees. */
static ph_model *rewritten(const char *graph, int rewrites)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ck_assert_int_eq(run(m, 0), rewrites);
    return m;
}

/* The initializer a node input reads, asserting it is one. */
static const ph_tensor *init_of(const ph_node *n, size_t i)
{
    const ph_value *v = ph_node_input(n, i);
    ck_assert_ptr_nonnull(v);
    ck_assert_msg(ph_value_is_initializer(v) && ph_value_const(v), "input %zu of '%s' is no initializer", i,
                  ph_node_name(n));
    return ph_value_const(v);
}

/* value = float[2,3] tensor feeding an Add. */
START_TEST(value_tensor_becomes_initializer)
{
    const float vals[6] = {1, -2, 3.5f, 4, 0.25f, -6};
    ph_error err = {0};
    ph_model *m = ph_test_model_text("x: float[2,3]\nc = Constant(); y = Add(x, c)\nreturn y", &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ph_node *c = tk_find_op(g, PH_OP_Constant);
    ck_assert_int_eq(ph_node_set_attr_tensor(c, "value", ph_tensor_new(PH_DT_FLOAT, 2, TK_I64(2, 3), vals)), 0);
    ck_assert_int_eq(run(m, 1), 1); /* once: at a fixpoint after */
    PC_GRAPH_IS(g, "y = Add(x, _:const:shape=[2,3])");
    const ph_tensor *t = init_of(tk_find_op(g, PH_OP_Add), 1);
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_FLOAT);
    ck_assert_mem_eq(ph_tensor_data(t), vals, sizeof vals);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    ph_model_free(m);
}
END_TEST

/* value_float, value_floats, value_int, value_ints: dtype and shape as the
 * Constant op defines them (scalars for the singular forms). */
START_TEST(every_value_attribute)
{
    const char *graph = "x: float[2,3]\n"
                        "cf = Constant() {value_float=2.5}; cfs = Constant() {value_floats=[1.0, 2, 3]}\n"
                        "ci = Constant() {value_int=1}; cis = Constant() {value_ints=[3, 2]}\n"
                        "m = Mul(x, cf); a = Add(m, cfs); r = Reshape(a, cis); y = Gather(r, ci)\nreturn y";
    PC_CASE(graph, 4, "m = Mul(x, _:const:float32:shape=[]); a = Add(m, _:const:float32:shape=[3])\n"
                      "r = Reshape(a, _:const:int64:shape=[2]); y = Gather(r, _:const:int64:shape=[])");
    ph_model *m = rewritten(graph, 4);
    ph_graph *g = ph_model_graph(m);
    ck_assert_float_eq(*(const float *)ph_tensor_data(init_of(tk_find_op(g, PH_OP_Mul), 1)), 2.5f);
    ck_assert_float_eq(((const float *)ph_tensor_data(init_of(tk_find_op(g, PH_OP_Add), 1)))[2], 3.0f);
    ck_assert_int_eq(*(const int64_t *)ph_tensor_data(init_of(tk_find_op(g, PH_OP_Gather), 1)), 1);
    ck_assert_int_eq(((const int64_t *)ph_tensor_data(init_of(tk_find_op(g, PH_OP_Reshape), 1)))[0], 3);
    ph_model_free(m);
}
END_TEST

/* One Constant read by several nodes: one initializer for all of them. */
START_TEST(constant_with_several_consumers)
{
    PC_CASE("x: float[3]\nc = Constant() {value_floats=[1.0, 2, 3]}\na = Add(x, c); s = Sub(c, a); y = Mul(s, c)\n"
            "return y",
            1, "a = Add(x, k:const); s = Sub(k, a); y = Mul(s, k)");
}
END_TEST

/* A Constant that is a main-graph output becomes an initializer under the
 * output's name, with or without other users; the outputs compute the same. */
START_TEST(graph_output_constant_becomes_named_initializer)
{
    const char *graph = "x: float[3]\nc = Constant() {value_floats=[1.0, 2, 3]}; y = Add(x, c)\nreturn c, y";
    PC_CASE(graph, 1, "y = Add(x, _:const)");
    ph_error e = {0};
    ph_model *m = ph_test_model_text(graph, &e);
    ph_graph *g = ph_model_graph(m);
    char name[128];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(run(m, 0), 1);
    ph_value *o = ph_graph_output(g, 0);
    ck_assert_str_eq(ph_value_name(o), name);
    ck_assert(ph_value_is_initializer(o));
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(g), 1), o);
    ck_assert_float_eq(((const float *)ph_tensor_data(ph_value_const(o)))[2], 3.0f);
    /* saved and loaded back, the output is still that initializer */
    char path[] = "/tmp/ph_c2i_outinit_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(ph_model_save(m, path, &e), 0);
    ph_model *m2;
    ck_assert_msg(ph_model_load(path, &m2, &e) == 0, "%s", e.message);
    unlink(path);
    ck_assert_str_eq(ph_value_name(ph_graph_output(ph_model_graph(m2), 0)), name);
    ck_assert(ph_value_is_initializer(ph_graph_output(ph_model_graph(m2), 0)));
    ck_assert_int_eq(ph_graph_verify(ph_model_graph(m2), &e), 0);
    ph_model_free(m2);
    ph_model_free(m);
}
END_TEST

/* String constants, malformed ones (two values, or none) and other domains
 * are left alone (unchecked: these models do not evaluate). */
static const char *const unconvertible[] = {
    "x: float[3]\ns = Constant() {value_string=\"hello\"}; i = Identity(s); y = Add(x, i)\nreturn y",
    "x: float[3]\nt = Constant() {value_float=1.0, value_int=1}; i = Identity(t); y = Add(x, i)\nreturn y",
    "x: float[3]\nn = Constant(); i = Identity(n); y = Add(x, i)\nreturn y",
    "x: float[3]\no = Constant@com.example() {value_float=1.0}; i = Identity(o); y = Add(x, i)\nreturn y",
};

START_TEST(unconvertible_constants_are_kept)
{
    for (size_t i = 0; i < sizeof unconvertible / sizeof *unconvertible; i++)
        PC_UNTOUCHED_UNCHECKED(unconvertible[i]);
}
END_TEST

/* A Constant nobody reads is removed: its initializer would be dead. */
START_TEST(unused_constant_is_removed)
{
    const char *graph = "x: float[3]\nk = Constant() {value_int=7}; y = Relu(x)\nreturn y";
    PC_CASE(graph, 1, "y = Relu(x)");
    ph_model *m = rewritten(graph, 1);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 0);
    ph_model_free(m);
}
END_TEST

/* The If model of the tests below, as pb bytes, at the given ir_version
 * and opset:
 *   main:  Constant k = [10,20,30]; If(flag) -> y
 *   then:  Constant c = [1,2,3]; Add(x, c) -> t; Add(t, k) -> then_out
 *   else:  Constant -> else_out
 * body_init: c is an initializer of the then branch instead. */
static void if_model(pb *model, int64_t ir_version, int64_t opset_version, int body_init)
{
    const int64_t d[1] = {3};
    pb then_g = {0}, else_g = {0}, attrs = {0}, graph = {0}, opset = {0}, ca = {0}, cb = {0}, ck = {0}, t = {0};
    if (!body_init) {
        pb_ints_attr(&ca, "value_ints", 3, (const int64_t[]){1, 2, 3});
        pb_node(&then_g, "Constant", NULL, NULL, "c", &ca);
    }
    pb_node(&then_g, "Add", "x", "c", "t", NULL);
    pb_node(&then_g, "Add", "t", "k", "then_out", NULL);
    pb_str(&then_g, 2, "then_branch");
    if (body_init) { /* TensorProto: dims 1, data_type 2, int64_data 7, name 8 */
        pb_int(&t, 1, 3);
        pb_int(&t, 2, PH_DT_INT64);
        for (int i = 1; i <= 3; i++)
            pb_int(&t, 7, (uint64_t)i);
        pb_str(&t, 8, "c");
        pb_msg(&then_g, 5, &t);
    }
    pb_value_info(&then_g, 12, "then_out", PH_DT_INT64, 1, d);
    pb_ints_attr(&cb, "value_ints", 3, (const int64_t[]){4, 5, 6});
    pb_node(&else_g, "Constant", NULL, NULL, "else_out", &cb);
    pb_str(&else_g, 2, "else_branch");
    pb_value_info(&else_g, 12, "else_out", PH_DT_INT64, 1, d);
    pb_graph_attr(&attrs, "then_branch", &then_g);
    pb_graph_attr(&attrs, "else_branch", &else_g);
    pb_ints_attr(&ck, "value_ints", 3, (const int64_t[]){10, 20, 30});
    pb_node(&graph, "Constant", NULL, NULL, "k", &ck);
    pb_node(&graph, "If", "flag", NULL, "y", &attrs);
    pb_str(&graph, 2, "main");
    pb_value_info(&graph, 11, "x", PH_DT_INT64, 1, d);
    pb_value_info(&graph, 11, "flag", PH_DT_BOOL, 0, NULL);
    pb_value_info(&graph, 12, "y", PH_DT_INT64, 1, d);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, (uint64_t)opset_version);
    pb_int(model, 1, (uint64_t)ir_version);
    pb_msg(model, 7, &graph);
    pb_msg(model, 8, &opset);
}

/* Constants inside If bodies become initializers of their body; a main
 * graph Constant read from inside a body becomes a main-graph initializer
 * (outer scope); a Constant that is a body output stays. */
START_TEST(constants_in_if_bodies)
{
    pb model = {0};
    if_model(&model, 8, 17, 0);
    ph_model *m = pb_load(&model);

    char ops[256];
    ph_graph *g = ph_model_graph(m);
    ph_node *iff = tk_find_op(g, PH_OP_If);
    ck_assert_ptr_nonnull(iff);
    ph_graph *then_b = ph_node_attr_graph(iff, "then_branch"), *else_b = ph_node_attr_graph(iff, "else_branch");
    ck_assert(then_b && else_b);

    ck_assert_int_eq(run(m, 0), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "If");
    ck_assert_str_eq(tk_ops(then_b, ops, sizeof ops), "Add,Add");
    ck_assert_str_eq(tk_ops(else_b, ops, sizeof ops), "Constant");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(then_b), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(else_b), 0);
    ph_node *a1 = ph_graph_first_node(then_b), *a2 = ph_node_next(a1);
    ck_assert_ptr_eq(ph_value_graph(ph_node_input(a1, 1)), then_b);
    ck_assert_int_eq(((const int64_t *)ph_tensor_data(init_of(a1, 1)))[1], 2);
    ck_assert_ptr_eq(ph_value_graph(ph_node_input(a2, 1)), g);
    ck_assert_int_eq(((const int64_t *)ph_tensor_data(init_of(a2, 1)))[2], 30);
    ck_assert_str_eq(ph_value_name(ph_graph_output(else_b, 0)), "else_out");

    /* the rewritten model saves and loads back with the same structure */
    ph_model *back = tk_reload(m);
    ph_node *iff2 = tk_find_op(ph_model_graph(back), PH_OP_If);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_node_attr_graph(iff2, "then_branch")), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(back)), 1);
    ph_model_free(back);
    ph_model_free(m);
}
END_TEST

/* ir_version 3: the initializers the pass adds are listed as graph inputs
 * in the written file, a body's constant goes to the main graph (a body
 * cannot list it), and the outputs stay bit-identical. */
START_TEST(ir3_initializers_are_listed_as_inputs)
{
    pb model = {0};
    if_model(&model, 3, 11, 0); /* ONNX then requires every initializer to be a graph input */
    ph_model *m = pb_load(&model);
    ph_graph *g = ph_model_graph(m);
    ph_node *iff = tk_find_op(g, PH_OP_If);
    ph_graph *then_b = ph_node_attr_graph(iff, "then_branch");
    ck_assert_int_eq(run(m, 1), 2);
    ck_assert_uint_eq(ph_graph_initializer_count(then_b), 0);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 2);
    ck_assert_uint_eq(ph_graph_input_count(g), 2); /* in memory: constants, not inputs */
    ck_assert_ptr_nonnull(ph_value_const(ph_graph_initializer(g, 0)));

    ph_model *back = tk_reload(m);
    ph_graph *bg = ph_model_graph(back);
    ck_assert_int_eq(ph_model_ir_version(back), 3);
    ck_assert_uint_eq(ph_graph_initializer_count(bg), 2);
    ck_assert_uint_eq(ph_graph_input_count(bg), 4); /* x, flag, then both initializers */
    for (size_t i = 0; i < ph_graph_initializer_count(bg); i++)
        ck_assert_msg(ph_value_is_graph_input(ph_graph_initializer(bg, i)), "initializer '%s' is no input",
                      ph_value_name(ph_graph_initializer(bg, i)));
    /* the file computes what the original did (the listed inputs default
       to their initializers) */
    ph_model *orig = pb_load(&model);
    ph_tensor **a, **b;
    size_t na = tk_eval_model(orig, 11, &a), nb = tk_eval_model(back, 11, &b);
    tk_assert_same(a, na, b, nb);
    tk_free_outs(a, na);
    tk_free_outs(b, nb);
    ph_model_free(orig);
    ph_model_free(back);
    ph_model_free(m);
}
END_TEST

/* The verifier refuses a body initializer in a model of ir_version 3 (a
 * body cannot list it as an input; the SDK never makes one). */
START_TEST(ir3_body_initializer_is_refused)
{
    pb model = {0};
    if_model(&model, 3, 11, 0);
    ph_model *m = pb_load(&model);
    ph_graph *then_b = ph_node_attr_graph(tk_find_op(ph_model_graph(m), PH_OP_If), "then_branch");
    ph_error err = {0};
    ck_assert_int_eq(ph_graph_verify(ph_model_graph(m), &err), 0);
    const int64_t v = 5;
    ck_assert_ptr_nonnull(ph_graph_add_initializer(then_b, "five", ph_tensor_new(PH_DT_INT64, 0, NULL, &v)));
    /* the SDK put it in the main graph */
    ck_assert_uint_eq(ph_graph_initializer_count(then_b), 0);
    ck_assert_int_eq(ph_graph_verify(ph_model_graph(m), &err), 0);
    ph_model_free(m);

    /* a file with a body initializer at ir_version 3 is refused on load */
    pb bad = {0};
    if_model(&bad, 3, 11, 1);
    ph_model *bm = NULL;
    int rc = ph_model_load_memory(bad.data, bad.len, "bad.onnx", &bm, &err);
    ck_assert_msg(rc != 0 && strstr(err.message, "ir_version < 4"), "rc %d: %s", rc, err.message);
    ck_assert_ptr_null(bm);
}
END_TEST

/* The bundled transformer block: all 29 Constants become initializers and
 * the outputs stay bit-identical (evaluated at batch 2, seq 5). */
START_TEST(transformer_block_constants)
{
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_int_eq(ph_model_load(PH_SOURCE_DIR "/models/transformer_block.onnx", &m, &err), 0);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_graph_set_input_shape(g, "tokens", 3, TK_I64(2, 5, 64), &err), 0);
    size_t constants = tk_count_op(g, PH_OP_Constant), nodes = ph_model_node_count(m);
    ck_assert_uint_eq(constants, 29);
    ck_assert_int_eq(run(m, 1), 29);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Constant), 0);
    ck_assert_uint_eq(ph_model_node_count(m), nodes - constants);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_constant_to_initializer");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, value_tensor_becomes_initializer);
    tcase_add_test(tc, every_value_attribute);
    tcase_add_test(tc, constant_with_several_consumers);
    tcase_add_test(tc, graph_output_constant_becomes_named_initializer);
    tcase_add_test(tc, unconvertible_constants_are_kept);
    tcase_add_test(tc, unused_constant_is_removed);
    tcase_add_test(tc, constants_in_if_bodies);
    tcase_add_test(tc, ir3_initializers_are_listed_as_inputs);
    tcase_add_test(tc, ir3_body_initializer_is_refused);
    tcase_add_test(tc, transformer_block_constants);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
