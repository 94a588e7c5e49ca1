/* tests/test_pass_insert_copy_between_noop_ops.c - insert_copy_between_noop_ops:
 * an Identity (a copy) between two ops of the noop_ops list that follow
 * each other. */
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("insert_copy_between_noop_ops")

static const char *const views[] = {"noop_ops=Reshape, Flatten, Split, Concat", NULL};
static const ph_test_options with_views = {.max_iterations = 4, .params = views};

START_TEST(copy_between_two_views)
{
    /* another reader of the Reshape keeps it; Identity is no view: done */
    PC_CASE_OPTS(&with_views,
                 "xi: float[2,3,4]; s: int64[2] = [6, 4]\nx = Relu(xi); r = Reshape(x, s); f = Flatten(r); n = Neg(r)\n"
                 "return f, n",
                 1, "x = Relu(xi)\nr = Reshape(x, s)\n--\ni = Identity(r)\nf = Flatten(i)\n--\nn = Neg(r)");
}
END_TEST

START_TEST(split_after_concat)
{
    PC_CASE_OPTS(&with_views,
                 "opset 18\nai: float[2,3]\na = Relu(ai); c = Concat(a, a) {axis=0}; p, q = Split(c) {num_outputs=2}\n"
                 "return p, q",
                 1, "a = Relu(ai)\nc = Concat(a, a)\ni = Identity(c)\np, q = Split(i)");
}
END_TEST

/* a Split of any number of outputs (5 here) with its split input, rebuilt
 * under its own name (before, the pattern named at most 4 outputs) */
START_TEST(split_of_five_after_reshape)
{
    PC_CASE_OPTS(&with_views,
                 "opset 13\nxi: float[2,10]; s: int64[2] = [10, 2]; sp: int64[5] = [1, 2, 3, 2, 2]\nx = Relu(xi)\n"
                 "r = Reshape(x, s); a, b, c, d, e = Split(r, sp) {axis=0}; n = Neg(e)\nreturn a, b, c, d, n",
                 1, "x = Relu(xi)\nr = Reshape(x, s)\ni = Identity(r)\na:shared, b:shared, c:shared, d:shared, e = Split(i, sp)\n"
                 "n = Neg(e)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text("opset 13\nx: float[4,2]; s: int64[2] = [2, 4]\nr = Reshape(x, s)\n"
                                     "a, b, c, d, e = Split(r) {axis=1}\nreturn a, b, c, d, e", &err);
    ck_assert_ptr_nonnull(m);
    ph_node *split = ph_value_producer(ph_graph_output(ph_model_graph(m), 0));
    ph_node_set_name(split, "/blocks/Split");
    ck_assert_int_eq(ph_test_run(pass, m, &with_views, NULL, &err), 1);
    split = ph_value_producer(ph_graph_output(ph_model_graph(m), 4));
    ck_assert_str_eq(ph_node_name(split), "/blocks/Split");
    ck_assert_str_eq(ph_node_op_type(ph_value_producer(ph_node_input(split, 0))), "Identity");
    ck_assert_int_eq(ph_node_attr_int(split, "axis", 0), 1);
    ph_model_free(m);
}
END_TEST

/* Reshape after Relu (an instruction), Squeeze after Reshape (not listed);
 * and with an empty list nothing at all */
#define ALONE "xi: float[2,3,4]; s: int64[4] = [1, 2, 3, 4]; ax: int64[1] = [0]\n" \
              "x = Relu(xi); r = Reshape(x, s); y = Squeeze(r, ax)\nreturn y"
START_TEST(left_alone)
{
    PC_CASE_OPTS(&with_views, ALONE, 0, NULL);
    static const char *const none[] = {"noop_ops=", NULL};
    ph_test_options o = {.max_iterations = 4, .params = none};
    PC_CASE_OPTS(&o, ALONE, 0, NULL);
    PC_CASE_OPTS(&o, "xi: float[2,3,4]; s: int64[2] = [6, 4]\nr = Reshape(xi, s); f = Flatten(r)\nreturn f", 0, NULL);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_if_branches)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[2,3,4]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(body[0], tk_op1(body[0], "Flatten", tk_op2(body[0], "Reshape", x, tk_ints(body[0], "s", 2, TK_I64(6, 4)))));
    tk_output(body[1], tk_op1(body[1], "Flatten", x));
    ph_error err = {0};
    ph_test_options o = {.max_iterations = 4, .params = views};
    int rc = ph_test_run_checked(pass, m, &o, NULL, &err); /* the evaluator runs If: the numeric check too */
    ck_assert_msg(rc == 1, "%d: %s", rc, err.message);
    PC_GRAPH_IS(body[0], "r = Reshape(x, s)\ni = Identity(r)\ny = Flatten(i)");
    PC_GRAPH_IS(body[1], "y = Flatten(x)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_insert_copy_between_noop_ops");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, copy_between_two_views);
    tcase_add_test(tc, split_after_concat);
    tcase_add_test(tc, split_of_five_after_reshape);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
