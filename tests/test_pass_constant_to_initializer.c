/* tests/test_pass_constant_to_initializer.c - the constant_to_initializer pass.
 *
 * Numeric checks use the SDK evaluator (ph_eval_run) before and after the
 * pass on the same seeded inputs and require bit-identical outputs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passrun.h"
#include "pbwire.h"
#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("constant_to_initializer"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}


/* ---- models written as protobuf wire bytes (the builder API cannot make
 * If bodies) */












/* ------------------------------------------------------------ tests */

static ph_node *constant(ph_graph *g)
{
    ph_node *c = ph_node_create(g, NULL, "Constant", 0, NULL, 1);
    ck_assert_ptr_nonnull(c);
    return c;
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
    char ops[256];
    const float vals[6] = {1, -2, 3.5f, 4, 0.25f, -6};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_node *c = constant(g);
    ck_assert_int_eq(ph_node_set_attr_tensor(c, "value", ph_tensor_new(PH_DT_FLOAT, 2, TK_I64(2, 3), vals)), 0);
    ph_node *add = tk_node(g, "Add", 2, (ph_value *[]){x, ph_node_output(c, 0)});
    tk_output(g, ph_node_output(add, 0));

    ck_assert_int_eq(tk_run_checked(pass, m, 1, NULL, NULL, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Add");
    const ph_tensor *t = init_of(add, 1);
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_FLOAT);
    ck_assert_uint_eq(ph_tensor_rank(t), 2);
    ck_assert_int_eq(ph_tensor_dim(t, 0), 2);
    ck_assert_int_eq(ph_tensor_dim(t, 1), 3);
    ck_assert_mem_eq(ph_tensor_data(t), vals, sizeof vals);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 0); /* fixpoint */
    ph_model_free(m);
}
END_TEST

/* value_float, value_floats, value_int, value_ints: dtype and shape as the
 * Constant op defines them (scalars for the singular forms). */
START_TEST(every_value_attribute)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_node *cf = constant(g), *cfs = constant(g), *ci = constant(g), *cis = constant(g);
    ck_assert_int_eq(ph_node_set_attr_float(cf, "value_float", 2.5f), 0);
    ck_assert_int_eq(ph_node_set_attr_floats(cfs, "value_floats", 3, (const float[]){1, 2, 3}), 0);
    ck_assert_int_eq(ph_node_set_attr_int(ci, "value_int", 1), 0);
    ck_assert_int_eq(ph_node_set_attr_ints(cis, "value_ints", 2, TK_I64(3, 2)), 0);
    ph_node *mul = tk_node(g, "Mul", 2, (ph_value *[]){x, ph_node_output(cf, 0)});
    ph_node *add = tk_node(g, "Add", 2, (ph_value *[]){ph_node_output(mul, 0), ph_node_output(cfs, 0)});
    ph_node *rs = tk_node(g, "Reshape", 2, (ph_value *[]){ph_node_output(add, 0), ph_node_output(cis, 0)});
    ph_node *ga = tk_node(g, "Gather", 2, (ph_value *[]){ph_node_output(rs, 0), ph_node_output(ci, 0)});
    tk_output(g, ph_node_output(ga, 0));

    ck_assert_int_eq(tk_run_checked(pass, m, 2, NULL, NULL, NULL), 4);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Mul,Add,Reshape,Gather");
    const ph_tensor *t = init_of(mul, 1);
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_FLOAT);
    ck_assert_uint_eq(ph_tensor_rank(t), 0);
    ck_assert_float_eq(*(const float *)ph_tensor_data(t), 2.5f);
    t = init_of(add, 1);
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_FLOAT);
    ck_assert_uint_eq(ph_tensor_rank(t), 1);
    ck_assert_int_eq(ph_tensor_dim(t, 0), 3);
    ck_assert_float_eq(((const float *)ph_tensor_data(t))[2], 3.0f);
    t = init_of(ga, 1);
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_INT64);
    ck_assert_uint_eq(ph_tensor_rank(t), 0);
    ck_assert_int_eq(*(const int64_t *)ph_tensor_data(t), 1);
    t = init_of(rs, 1);
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_INT64);
    ck_assert_int_eq(ph_tensor_dim(t, 0), 2);
    ck_assert_int_eq(((const int64_t *)ph_tensor_data(t))[0], 3);
    ph_model_free(m);
}
END_TEST

/* One Constant read by several nodes: one initializer for all of them. */
START_TEST(constant_with_several_consumers)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(3));
    ph_node *c = constant(g);
    ck_assert_int_eq(ph_node_set_attr_floats(c, "value_floats", 3, (const float[]){1, 2, 3}), 0);
    ph_value *cv = ph_node_output(c, 0);
    ph_node *a = tk_node(g, "Add", 2, (ph_value *[]){x, cv});
    ph_node *s = tk_node(g, "Sub", 2, (ph_value *[]){cv, ph_node_output(a, 0)});
    ph_node *mu = tk_node(g, "Mul", 2, (ph_value *[]){ph_node_output(s, 0), cv});
    tk_output(g, ph_node_output(mu, 0));

    ck_assert_int_eq(tk_run_checked(pass, m, 3, NULL, NULL, NULL), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Constant), 0);
    ph_value *init = ph_node_input(a, 1);
    ck_assert_ptr_eq(ph_node_input(s, 0), init);
    ck_assert_ptr_eq(ph_node_input(mu, 1), init);
    ck_assert_uint_eq(ph_value_use_count(init), 3);
    ph_model_free(m);
}
END_TEST

/* A Constant that is a main-graph output becomes an initializer under the
 * output's name, with or without other users; the outputs compute the same. */
START_TEST(graph_output_constant_becomes_named_initializer)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(3));
    ph_node *c = constant(g);
    ck_assert_int_eq(ph_node_set_attr_floats(c, "value_floats", 3, (const float[]){1, 2, 3}), 0);
    tk_output(g, ph_node_output(c, 0));
    tk_output(g, tk_op2(g, "Add", x, ph_node_output(c, 0))); /* also read in the middle */
    char name[128];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));

    ck_assert_int_eq(tk_run_checked(pass, m, 4, NULL, NULL, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Add");
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
    ph_error e = {0};
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

/* String constants (no SDK call builds a string tensor), malformed ones
 * (no value, or two) and other domains are left alone. */
START_TEST(unconvertible_constants_are_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(3));
    ph_node *s = constant(g);
    ck_assert_int_eq(ph_node_set_attr_string(s, "value_string", "hello"), 0);
    ph_node *two = constant(g);
    ck_assert_int_eq(ph_node_set_attr_float(two, "value_float", 1.0f), 0);
    ck_assert_int_eq(ph_node_set_attr_int(two, "value_int", 1), 0);
    ph_node *none = constant(g);
    ph_node *other = constant(g);
    ck_assert_int_eq(ph_node_set_attr_float(other, "value_float", 1.0f), 0);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ck_assert_int_eq(ph_node_set_domain(other, "com.example"), 0);
    ph_node *use[4] = {s, two, none, other};
    for (int i = 0; i < 4; i++) {
        ph_node *id = tk_node(g, "Identity", 1, (ph_value *[]){ph_node_output(use[i], 0)});
        tk_output(g, tk_op2(g, "Add", x, ph_node_output(id, 0)));
    }
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A Constant nobody reads is removed: its initializer would be dead. */
START_TEST(unused_constant_is_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(3));
    ck_assert_int_eq(ph_node_set_attr_int(constant(g), "value_int", 7), 0);
    tk_output(g, tk_op1(g, "Relu", x));
    ck_assert_int_eq(tk_run_checked(pass, m, 4, NULL, NULL, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
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

    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 2);
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
    ck_assert_int_eq(tk_run_checked(pass, m, 3, NULL, NULL, NULL), 2);
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
    ck_assert_int_eq(tk_run_checked(pass, m, 5, NULL, NULL, NULL), 29);
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
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
