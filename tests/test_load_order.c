/* tests/test_load_order.c - a file whose node list is out of order: the
 * loader sorts it (stably), says how many nodes read a value listed after
 * them (ph_model_load_reordered), in the main graph and in bodies, and the
 * model saves in order; a real cycle is refused naming two of its nodes.
 * The files are written as protobuf wire bytes (pbwire.h): the builder
 * cannot make a list out of order. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pbwire.h"
#include "testkit.h"

static const int64_t D23[2] = {2, 3};

/* The op types of g's nodes in list order into buf. */
static const char *ops_of(const ph_graph *g, char *buf, size_t size) { return tk_ops(g, buf, size); }

/* A model around graph (its nodes already in it): x float[2,3] in, y out. */
static void finish_model(pb *model, pb *graph)
{
    pb_str(graph, 2, "g");
    pb_value_info(graph, 11, "x", PH_DT_FLOAT, 2, D23);
    pb_value_info(graph, 12, "y", PH_DT_FLOAT, 2, D23);
    pb_model(model, graph);
}

/* Write the bytes and load them; rc and the model (or the error). */
static int load_bytes(const pb *model, ph_model **m, ph_error *err)
{
    char path[] = "/tmp/ph_load_order_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq((int)write(fd, model->data, model->len), (int)model->len);
    close(fd);
    int rc = ph_model_load(path, m, err);
    unlink(path);
    return rc;
}

/* Neg(Relu(Exp(x))) listed as Relu, Neg, Exp, Tanh(x) -> t, Add(y0, t):
 * Relu reads Exp's output listed after it. */
static void write_unordered(pb *model)
{
    pb graph = {0};
    pb_node(&graph, "Relu", "e", NULL, "r", NULL);
    pb_node(&graph, "Neg", "r", NULL, "n", NULL);
    pb_node(&graph, "Exp", "x", NULL, "e", NULL);
    pb_node(&graph, "Tanh", "x", NULL, "t", NULL);
    pb_node(&graph, "Add", "n", "t", "y", NULL);
    finish_model(model, &graph);
}

START_TEST(main_graph_sorted_stably)
{
    pb model = {0};
    write_unordered(&model);
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_msg(load_bytes(&model, &m, &err) == 0, "%s", err.message);
    ck_assert_uint_eq(ph_model_load_reordered(m), 1); /* Relu reads e, listed after it */
    char ops[256];
    /* Exp moves before its reader; the others keep their order */
    ck_assert_str_eq(ops_of(ph_model_graph(m), ops, sizeof ops), "Exp,Relu,Neg,Tanh,Add");
    ck_assert_int_eq(ph_graph_verify(ph_model_graph(m), &err), 0);
    /* saved in order: it loads as a file in order */
    char path[] = "/tmp/ph_load_order_saved_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    ck_assert_msg(ph_model_save(m, path, &err) == 0, "%s", err.message);
    ph_model *back = NULL;
    ck_assert_msg(ph_model_load(path, &back, &err) == 0, "%s", err.message);
    unlink(path);
    ck_assert_uint_eq(ph_model_load_reordered(back), 0);
    ck_assert_str_eq(ops_of(ph_model_graph(back), ops, sizeof ops), "Exp,Relu,Neg,Tanh,Add");
    /* and computes what the sorted model computes */
    tk_assert_same_outputs(back, m, 3);
    ph_model_free(back);
    ph_model_free(m);
}
END_TEST

START_TEST(in_order_file_says_zero)
{
    pb model = {0}, graph = {0};
    pb_node(&graph, "Exp", "x", NULL, "e", NULL);
    pb_node(&graph, "Relu", "e", NULL, "y", NULL);
    finish_model(&model, &graph);
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_msg(load_bytes(&model, &m, &err) == 0, "%s", err.message);
    ck_assert_uint_eq(ph_model_load_reordered(m), 0);
    ph_model_free(m);
}
END_TEST

/* An If listed before the node its branch reads (an outer-scope value), and
 * a branch whose own list is out of order: both sorted. */
START_TEST(bodies_and_outer_reads_sorted)
{
    pb then_g = {0}, else_g = {0}, attrs = {0}, graph = {0}, model = {0};
    pb_node(&then_g, "Relu", "te", NULL, "then_out", NULL); /* reads te, listed after it */
    pb_node(&then_g, "Exp", "outer", NULL, "te", NULL);
    pb_str(&then_g, 2, "then_branch");
    pb_value_info(&then_g, 12, "then_out", PH_DT_FLOAT, 2, D23);
    pb_node(&else_g, "Neg", "outer", NULL, "else_out", NULL);
    pb_str(&else_g, 2, "else_branch");
    pb_value_info(&else_g, 12, "else_out", PH_DT_FLOAT, 2, D23);
    pb_graph_attr(&attrs, "then_branch", &then_g);
    pb_graph_attr(&attrs, "else_branch", &else_g);
    pb_node(&graph, "If", "flag", NULL, "y", &attrs); /* its branches read outer */
    pb_node(&graph, "Sigmoid", "x", NULL, "outer", NULL);
    pb_value_info(&graph, 11, "flag", PH_DT_BOOL, 0, NULL);
    finish_model(&model, &graph);
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_msg(load_bytes(&model, &m, &err) == 0, "%s", err.message);
    ck_assert_uint_eq(ph_model_load_reordered(m), 2); /* the If, and Relu in its branch */
    char ops[256];
    ph_graph *g = ph_model_graph(m);
    ck_assert_str_eq(ops_of(g, ops, sizeof ops), "Sigmoid,If");
    ph_node *n = tk_find_op(g, PH_OP_If);
    ck_assert_str_eq(ops_of(ph_node_attr_graph(n, "then_branch"), ops, sizeof ops), "Exp,Relu");
    ck_assert_int_eq(ph_graph_verify(g, &err), 0);
    ph_model_free(m);
}
END_TEST

START_TEST(cycle_refused_naming_its_nodes)
{
    pb model = {0}, graph = {0};
    pb_node(&graph, "Add", "x", "b", "a", NULL);
    pb_node(&graph, "Relu", "a", NULL, "b", NULL);
    pb_node(&graph, "Neg", "b", NULL, "y", NULL);
    finish_model(&model, &graph);
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_int_eq(load_bytes(&model, &m, &err), PH_EPARSE);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(err.message, "the nodes form a cycle") && strstr(err.message, "'a' (Add)") &&
                  strstr(err.message, "'b' (Relu)"), "%s", err.message);
}
END_TEST

START_TEST(cycle_in_a_body_refused)
{
    pb then_g = {0}, else_g = {0}, attrs = {0}, graph = {0}, model = {0};
    pb_node(&then_g, "Relu", "p", NULL, "q", NULL);
    pb_node(&then_g, "Neg", "q", NULL, "p", NULL);
    pb_node(&then_g, "Identity", "q", NULL, "then_out", NULL);
    pb_str(&then_g, 2, "then_branch");
    pb_value_info(&then_g, 12, "then_out", PH_DT_FLOAT, 2, D23);
    pb_node(&else_g, "Neg", "x", NULL, "else_out", NULL);
    pb_str(&else_g, 2, "else_branch");
    pb_value_info(&else_g, 12, "else_out", PH_DT_FLOAT, 2, D23);
    pb_graph_attr(&attrs, "then_branch", &then_g);
    pb_graph_attr(&attrs, "else_branch", &else_g);
    pb_node(&graph, "If", "flag", NULL, "y", &attrs);
    pb_value_info(&graph, 11, "flag", PH_DT_BOOL, 0, NULL);
    finish_model(&model, &graph);
    ph_model *m = NULL;
    ph_error err = {0};
    ck_assert_int_eq(load_bytes(&model, &m, &err), PH_EPARSE);
    ck_assert_msg(strstr(err.message, "graph 'then_branch': the nodes form a cycle"), "%s", err.message);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("load_order");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, main_graph_sorted_stably);
    tcase_add_test(tc, in_order_file_says_zero);
    tcase_add_test(tc, bodies_and_outer_reads_sorted);
    tcase_add_test(tc, cycle_refused_naming_its_nodes);
    tcase_add_test(tc, cycle_in_a_body_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
