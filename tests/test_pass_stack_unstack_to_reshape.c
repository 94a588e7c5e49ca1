/* tests/test_pass_stack_unstack_to_reshape.c - stack_unstack_to_reshape:
 * Unsqueeze*N -> Concat becomes Concat + Reshape; Split -> Squeeze becomes
 * Split + Reshape. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("stack_unstack_to_reshape")

#define ABC(d) "a: float[" d "]; b: float[" d "]; c: float[" d "]\n"
/* a, b, c [2,3] unsqueezed at u and concatenated at k: opset 11 (axes
 * attributes) and 17 (axes inputs) */
#define STACK11(u, k)                                                                              \
    "opset 11\n" ABC("2,3") "ua = Unsqueeze(a) {axes=[" u "]}; ub = Unsqueeze(b) {axes=[" u "]}\n"  \
    "uc = Unsqueeze(c) {axes=[" u "]}; y = Concat(ua, ub, uc) {axis=" k "}\nreturn y"
#define STACK17(u, k)                                                                              \
    "opset 17\n" ABC("2,3") "x1: int64[1] = [" u "]; x2: int64[1] = [" u "]; x3: int64[1] = [" u "]\n" \
    "ua = Unsqueeze(a, x1); ub = Unsqueeze(b, x2); uc = Unsqueeze(c, x3); y = Concat(ua, ub, uc) {axis=" k "}\nreturn y"
#define STACKED(k) "j = Concat(a, b, c) {axis=" k "}\ny = Reshape(j, _:const)"

static const struct {
    const char *graph, *expect;
} stacks[] = {
    {STACK11("1", "1"), STACKED("1")},  {STACK11("0", "-3"), STACKED("0")}, {STACK11("-2", "1"), STACKED("1")},
    {STACK17("1", "1"), STACKED("1")},  {STACK17("0", "-3"), STACKED("0")}, {STACK17("-2", "1"), STACKED("1")},
};

/* the output keeps its name; only the shape is left of the initializers */
START_TEST(stack_becomes_concat_and_reshape)
{
    PC_CASE(stacks[_i].graph, 1, stacks[_i].expect);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(stacks[_i].graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *ny = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), ny);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    free(ny);
    ph_model_free(m);
}
END_TEST

/* x [2,3,4] split in three on axis -2, each squeezed (at 1 or -2) */
static const char *const unstacks[] = {
    "opset 11\nx: float[2,3,4]\np, q, r = Split(x) {axis=-2, split=[1,1,1]}\n"
    "y0 = Squeeze(p) {axes=[1]}; y1 = Squeeze(q) {axes=[-2]}; y2 = Squeeze(r) {axes=[1]}\nreturn y0, y1, y2",
    "opset 17\nx: float[2,3,4]; ones: int64[3] = [1, 1, 1]; s1: int64[1] = [1]; s2: int64[1] = [-2]; s3: int64[1] = [1]\n"
    "p, q, r = Split(x, ones) {axis=-2}\ny0 = Squeeze(p, s1); y1 = Squeeze(q, s2); y2 = Squeeze(r, s3)\nreturn y0, y1, y2",
};

START_TEST(unstack_becomes_split_and_reshape)
{
    PC_CASE(unstacks[_i], 3,
            "p, q, r = Split(x, _?)\n--\ny0 = Reshape(p, _:const)\n--\ny1 = Reshape(q, _:const)\n--\ny2 = Reshape(r, _:const)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(unstacks[_i], &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 3);
    int64_t shp[4];
    ck_assert_int_eq(ph_value_const_ints(ph_node_input(ph_value_producer(ph_graph_output(ph_model_graph(m), 0)), 1), shp,
                                         NULL, 4),
                     2);
    ck_assert_int_eq(shp[0], 2);
    ck_assert_int_eq(shp[1], 4);
    ph_model_free(m);
}
END_TEST

#define UNSQ3(d, u1, u2, u3, k, more)                                                              \
    ABC(d) "x1: int64[1] = [" u1 "]; x2: int64[1] = [" u2 "]; x3: int64[1] = [" u3 "]\n"             \
    "ua = Unsqueeze(a, x1); ub = Unsqueeze(b, x2); uc = Unsqueeze(c, x3)\n" more
static const struct {
    const char *graph;
    int unchecked;
} stack_alone[] = {
    /* an Unsqueeze output has another reader */
    {UNSQ3("2,3", "1", "1", "1", "1", "y = Concat(ua, ub, uc) {axis=1}; n = Neg(y); m = Neg(ua)\nreturn n, m"), 0},
    /* an Unsqueeze output is a graph output */
    {UNSQ3("2,3", "1", "1", "1", "1", "y = Concat(ua, ub, uc) {axis=1}; n = Neg(y)\nreturn n, uc"), 0},
    /* stacked after the last axis */
    {UNSQ3("2,3", "2", "2", "2", "2", "y = Concat(ua, ub, uc) {axis=2}; n = Neg(y)\nreturn n"), 0},
    /* Unsqueeze at 1 and 2 give the same shape: another axis */
    {UNSQ3("2,1", "1", "2", "1", "1", "y = Concat(ua, ub, uc) {axis=1}; n = Neg(y)\nreturn n"), 0},
    /* axes of one Unsqueeze not constant */
    {ABC("2,3") "x1: int64[1] = [1]; ax: int64[1]; x3: int64[1] = [1]\n"
     "ua = Unsqueeze(a, x1); ub = Unsqueeze(b, ax); uc = Unsqueeze(c, x3)\ny = Concat(ua, ub, uc) {axis=1}; n = Neg(y)\n"
     "return n", 1},
    /* a dim unknown */
    {UNSQ3("?,3", "1", "1", "1", "1", "y = Concat(ua, ub, uc) {axis=1}; n = Neg(y)\nreturn n"), 0},
    /* one input is no Unsqueeze */
    {UNSQ3("2,3", "1", "1", "1", "1", "rc = Relu(uc); y = Concat(ua, ub, rc) {axis=1}; n = Neg(y)\nreturn n"), 0},
};

START_TEST(stack_left_alone)
{
    /* the unknown dim is 2 when evaluated */
    ph_test_options o = {.max_iterations = 4, .sizes = (const int64_t[]){2}, .n_sizes = 1,
                         .unchecked = stack_alone[_i].unchecked};
    PC_CASE_OPTS(&o, stack_alone[_i].graph, 0, NULL);
}
END_TEST

static const struct {
    const char *graph;
} unstack_alone[] = {
    /* split on axis 0, squeeze axis 1 */
    {"x: float[2,1,4]; ones: int64[2] = [1, 1]; ax: int64[1] = [1]\np, q = Split(x, ones) {axis=0}\n"
     "y = Squeeze(p, ax); n = Neg(y); m = Neg(q)\nreturn n, m"},
    /* not a Split */
    {"x: float[2,1,4]; ax: int64[1] = [1]\np = Relu(x); y = Squeeze(p, ax); n = Neg(y)\nreturn n"},
    /* Squeeze without axes */
    {"x: float[2,1,4]; one: int64[1] = [1]\np = Split(x, one) {axis=1}; y = Squeeze(p); n = Neg(y)\nreturn n"},
    /* a dim unknown */
    {"x: float[?,1,4]; one: int64[1] = [1]; ax: int64[1] = [1]\np = Split(x, one) {axis=1}; y = Squeeze(p, ax); n = Neg(y)\n"
     "return n"},
};

START_TEST(unstack_left_alone)
{
    PC_UNTOUCHED(unstack_alone[_i].graph);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model(ABC("2,3") "cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_graph *g = ph_model_graph(m);
    ph_value *x[3] = {ph_graph_find_value(g, "a"), ph_graph_find_value(g, "b"), ph_graph_find_value(g, "c")};
    ph_value *u[3];
    for (int i = 0; i < 3; i++)
        u[i] = tk_op2(body[0], "Unsqueeze", x[i], tk_ints(body[0], "axes", 1, TK_I64(0)));
    ph_node *cat = tk_node(body[0], "Concat", 3, u);
    ph_node_set_attr_int(cat, "axis", 0);
    tk_output(body[0], ph_node_output(cat, 0));
    ph_node *s = ph_node_create(body[1], NULL, "Split", 2, (ph_value *[]){x[0], tk_ints(body[1], "split", 2, TK_I64(1, 1))}, 2);
    ph_node_set_attr_int(s, "axis", 0);
    tk_output(body[1], tk_op2(body[1], "Add", tk_op2(body[1], "Squeeze", ph_node_output(s, 0), tk_ints(body[1], "ax", 1, TK_I64(0))),
                              tk_op2(body[1], "Squeeze", ph_node_output(s, 1), tk_ints(body[1], "ax", 1, TK_I64(0)))));
    pc_run_checked(m, 3); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "j = Concat(a, b, c)\ny = Reshape(j, _:const)");
    PC_GRAPH_IS(body[1], "p, q = Split(a, _:const)\n--\nrp = Reshape(p, _:const)\nrq = Reshape(q, _:const)\ny = Add(rp, rq)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stack_unstack_to_reshape");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, stack_becomes_concat_and_reshape, 0, (int)(sizeof stacks / sizeof *stacks));
    tcase_add_loop_test(tc, unstack_becomes_split_and_reshape, 0, 2);
    tcase_add_loop_test(tc, stack_left_alone, 0, (int)(sizeof stack_alone / sizeof *stack_alone));
    tcase_add_loop_test(tc, unstack_left_alone, 0, (int)(sizeof unstack_alone / sizeof *unstack_alone));
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
