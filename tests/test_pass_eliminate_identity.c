/* tests/test_pass_eliminate_identity.c - the eliminate_identity pass. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pbwire.h"
#include "passcase.h"
#include "testkit.h"


static void setup(void)
{
    pc_load("eliminate_identity");
}
static void teardown(void)
{
    pc_unload();
}

/* Identity nodes in g and its subgraphs. */
/* Write the bytes of a model made with pbwire to path. */
static void write_pb_file(const char *path, const pb *model)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(model->data, 1, model->len, f), model->len);
    ck_assert_int_eq(fclose(f), 0);
}

static size_t count_identity(const ph_graph *g)
{
    size_t count = 0;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        if (ph_node_is_removed(n))
            continue;
        count += ph_node_op(n) == PH_OP_Identity;
        for (size_t i = 0; i < ph_node_subgraph_count(n); i++)
            count += count_identity(ph_node_subgraph(n, i));
    }
    return count;
}

START_TEST(removes_identity_before_relu)
{
    PC_CASE("x: float[2,3]\ni = Identity(x); y = Relu(i)\nreturn y", 1, "y = Relu(x)");
}
END_TEST

START_TEST(removes_chain_and_fans_out)
{
    PC_CASE("x: float[3,4]\na = Identity(x); b = Identity(a)\np = Relu(b); q = Neg(b); r = Add(b, x)\nreturn p, q, r",
            2, "p = Relu(x)\n--\nq = Neg(x)\n--\nr = Add(x, x)");
}
END_TEST

/* The Identity's output is a graph output and its input comes from a node:
 * the producer's value takes over the output's name. */
START_TEST(graph_output_keeps_its_name)
{
    const char *graph = "x: float[2,2]\nr = Relu(x); y = Identity(r)\nreturn y";
    PC_CASE(graph, 1, "y = Relu(x)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_input_to_graph_output_is_kept)
{
    PC_UNTOUCHED("x: float[2,2]\ny = Identity(x)\nreturn y");
}
END_TEST

/* In the main graph an initializer can take over the output's name. */
START_TEST(initializer_to_graph_output_takes_the_name)
{
    const char *graph = "w: const float[2,2]\ny = Identity(w)\nreturn y";
    PC_CASE(graph, 1, "");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ph_value *w = ph_graph_output(g, 0);
    ck_assert_str_eq(ph_value_name(w), name);
    ck_assert(ph_value_is_initializer(w));
    free(name);
    ph_model_free(m);
}
END_TEST

/* The Identity's input is itself a graph output: both names must stay. */
START_TEST(graph_output_to_graph_output_is_kept)
{
    PC_UNTOUCHED("x: float[2,2]\nr = Relu(x); y = Identity(r)\nreturn r, y");
}
END_TEST

START_TEST(other_domain_is_kept)
{
    PC_UNTOUCHED_UNCHECKED("x: float[2,2]\ni = Identity@com.example(x); y = Relu(i)\nreturn y");
}
END_TEST

/* ---- subgraphs: a model written as protobuf wire bytes (the builder API has
 * no way to make If bodies), loaded with ph_model_load. */








/* NodeProto with one input and one output (input NULL: none). */
static void pb_named_node(pb *b, const char *op, const char *name, const char *in, const char *out,
                    const pb *attrs)
{
    pb n = {0};
    if (in)
        pb_str(&n, 1, in);
    pb_str(&n, 2, out);
    pb_str(&n, 3, name);
    pb_str(&n, 4, op);
    for (size_t i = 0; attrs && i < attrs->len; i++) /* whole field-5 records */
        pb_byte(&n, attrs->data[i]);
    pb_msg(b, 1, &n);
}


/* x float[2,3], flag bool[] -> If(flag) -> y float[2,3].
 *   then: Identity(x) -> t_id (outer-scope input); Relu(t_id) -> then_out
 *   else: Neg(x) -> e_neg; Identity(e_neg) -> else_out (a subgraph output)
 *   main: Identity(y_if) -> y */
static void write_if_model(const char *path)
{
    const int64_t d[2] = {2, 3};
    pb then_g = {0}, else_g = {0}, attrs = {0}, graph = {0}, model = {0};
    pb_named_node(&then_g, "Identity", "then_id", "x", "t_id", NULL);
    pb_named_node(&then_g, "Relu", "then_relu", "t_id", "then_out", NULL);
    pb_str(&then_g, 2, "then_branch");
    pb_value_info(&then_g, 12, "then_out", PH_DT_FLOAT, 2, d);
    pb_named_node(&else_g, "Neg", "else_neg", "x", "e_neg", NULL);
    pb_named_node(&else_g, "Identity", "else_id", "e_neg", "else_out", NULL);
    pb_str(&else_g, 2, "else_branch");
    pb_value_info(&else_g, 12, "else_out", PH_DT_FLOAT, 2, d);

    pb_graph_attr(&attrs, "then_branch", &then_g);
    pb_graph_attr(&attrs, "else_branch", &else_g);
    pb_named_node(&graph, "If", "branch", "flag", "y_if", &attrs);
    pb_named_node(&graph, "Relu", "after", "y_if", "y", NULL);
    pb_str(&graph, 2, "main");
    pb_value_info(&graph, 11, "x", PH_DT_FLOAT, 2, d);
    pb_value_info(&graph, 11, "flag", PH_DT_BOOL, 0, NULL);
    pb_value_info(&graph, 12, "y", PH_DT_FLOAT, 2, d);

    pb_model(&model, &graph);

    write_pb_file(path, &model);
}

static ph_graph *subgraph_named(ph_graph *g, const char *name)
{
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        for (size_t i = 0; i < ph_node_subgraph_count(n); i++)
            if (!strcmp(ph_graph_name(ph_node_subgraph(n, i)), name))
                return ph_node_subgraph(n, i);
    return NULL;
}

/* The model `write` puts in a temporary file, loaded (the file removed). */
static ph_model *load_written(void (*write)(const char *path))
{
    char path[] = "/tmp/ph_identity_body_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    write(path);
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(path, &m, &err);
    unlink(path);
    ck_assert_msg(rc == 0, "loading %s: %s", path, err.message);
    return m;
}

START_TEST(removes_identity_inside_if_branches)
{
    char ops[256];
    ph_model *m = load_written(write_if_model);
    ph_graph *g = ph_model_graph(m);
    ck_assert_uint_eq(count_identity(g), 2);

    pc_run_checked(m, 2);
    ck_assert_uint_eq(count_identity(g), 0);
    ph_graph *then_g = subgraph_named(g, "then_branch");
    ph_graph *else_g = subgraph_named(g, "else_branch");
    ck_assert_ptr_nonnull(then_g);
    ck_assert_ptr_nonnull(else_g);
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Relu");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Neg");
    /* then: Relu reads the outer x; else: the branch output keeps its name */
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(then_g), 0), ph_graph_input(g, 0));
    ck_assert_str_eq(ph_value_name(ph_graph_output(else_g, 0)), "else_out");
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(else_g, 0)), ph_graph_first_node(else_g));
    ph_model_free(m);
}
END_TEST

/* A value_info of a sequence of float tensors (TypeProto.sequence_type). */
static void pb_seq_info(pb *graph, unsigned field, const char *name)
{
    pb tensor = {0}, elem = {0}, seq = {0}, type = {0}, vi = {0};
    pb_int(&tensor, 1, PH_DT_FLOAT);
    pb_msg(&elem, 1, &tensor);
    pb_msg(&seq, 1, &elem);
    pb_msg(&type, 4, &seq);
    pb_str(&vi, 1, name);
    pb_msg(&vi, 2, &type);
    pb_msg(graph, field, &vi);
}

/* SequenceMap(xs) -> ys at opset 17, body: a = Identity(in); out = Relu(a). */
static void write_sequence_map_model(const char *path)
{
    const int64_t d[1] = {3};
    pb body = {0}, attrs = {0}, graph = {0}, model = {0};
    pb_node(&body, "Identity", "in", NULL, "a", NULL);
    pb_node(&body, "Relu", "a", NULL, "out", NULL);
    pb_str(&body, 2, "body");
    pb_value_info(&body, 11, "in", PH_DT_FLOAT, 1, d);
    pb_value_info(&body, 12, "out", PH_DT_FLOAT, 1, d);
    pb_graph_attr(&attrs, "body", &body);
    pb_node(&graph, "SequenceMap", "xs", NULL, "ys", &attrs);
    pb_str(&graph, 2, "main");
    pb_seq_info(&graph, 11, "xs");
    pb_seq_info(&graph, 12, "ys");
    pb_model(&model, &graph);
    write_pb_file(path, &model);
}

/* A SequenceMap's body is reached like an If's: the rule passes find their
 * nodes there through the op-type index too. */
START_TEST(removes_identity_inside_sequence_map_body)
{
    char ops[256];
    ph_model *m = load_written(write_sequence_map_model);
    ph_graph *g = ph_model_graph(m);
    ck_assert_uint_eq(count_identity(g), 1);
    pc_run_structure(m, 1);
    ck_assert_uint_eq(count_identity(g), 0);
    ph_graph *body = subgraph_named(g, "body");
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(tk_ops(body, ops, sizeof ops), "Relu");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(body), 0), ph_graph_input(body, 0));
    ph_model_free(m);
}
END_TEST

/* The bundled control-flow model's Loop body has Identity(cond_in) ->
 * cond_out: a body input to a body output, which must stay. */
START_TEST(loop_condition_identity_is_kept)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/tests/models/control_flow.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ck_assert_uint_eq(count_identity(ph_model_graph(m)), 1);
    pc_run_structure(m, 0); /* a second run changes nothing */
    ph_model_free(m);
}
END_TEST

/* The demo CNN has two Identity nodes between ordinary nodes. */
START_TEST(cnn_identities_removed)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/tests/models/cnn_small.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    size_t nodes = ph_model_node_count(m);
    ck_assert_uint_eq(count_identity(ph_model_graph(m)), 2);
    pc_run_checked(m, 2);
    ck_assert_uint_eq(count_identity(ph_model_graph(m)), 0);
    ck_assert_uint_eq(ph_model_node_count(m), nodes - 2);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_identity");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, removes_identity_before_relu);
    tcase_add_test(tc, removes_chain_and_fans_out);
    tcase_add_test(tc, graph_output_keeps_its_name);
    tcase_add_test(tc, graph_input_to_graph_output_is_kept);
    tcase_add_test(tc, initializer_to_graph_output_takes_the_name);
    tcase_add_test(tc, graph_output_to_graph_output_is_kept);
    tcase_add_test(tc, other_domain_is_kept);
    tcase_add_test(tc, removes_identity_inside_if_branches);
    tcase_add_test(tc, removes_identity_inside_sequence_map_body);
    tcase_add_test(tc, loop_condition_identity_is_kept);
    tcase_add_test(tc, cnn_identities_removed);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
