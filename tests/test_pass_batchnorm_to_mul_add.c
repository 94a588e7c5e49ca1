/* tests/test_pass_batchnorm_to_mul_add.c - batchnorm_to_mul_add (off by
 * default, loaded explicitly): inference BatchNormalization becomes Mul + Add. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("batchnorm_to_mul_add")

/* The parameters of a BatchNormalization over 3 channels, the variance
 * positive. */
#define PARAMS3 "s: const float[3]; b: const float[3]; mean: const float[3]; v: float[3] = [1.5, 1.25, 1.75]\n"

static const struct {
    const char *graph, *expect;
} ranks[] = {
    {"x: float[2,3,4,5]; " PARAMS3 "r = Relu(x); y = BatchNormalization(r, s, b, mean, v) {epsilon=0.001}\nreturn y",
     "r = Relu(x); m = Mul(r, _:const:shape=[3,1,1]); y = Add(m, _:const:shape=[3,1,1])"},
    {"x: float[2,3,6]; " PARAMS3 "r = Relu(x); y = BatchNormalization(r, s, b, mean, v) {epsilon=0.001}\nreturn y",
     "r = Relu(x); m = Mul(r, _:const:shape=[3,1]); y = Add(m, _:const:shape=[3,1])"},
    {"x: float[5,3]; " PARAMS3 "r = Relu(x); y = BatchNormalization(r, s, b, mean, v) {epsilon=0.001}\nreturn y",
     "r = Relu(x); m = Mul(r, _:const:shape=[3]); y = Add(m, _:const:shape=[3])"},
};

/* ranks 4, 3 and 2: the output keeps its name, the BN parameters are pruned */
START_TEST(ranks_four_three_and_two)
{
    PC_CASE(ranks[_i].graph, 1, ranks[_i].expect);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(ranks[_i].graph, &err);
    ph_graph *g = ph_model_graph(m);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 2);
    ph_model_free(m);
}
END_TEST

static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* the scale is not constant */
    {"x: float[2,3,4,4]; s: float[3]; b: const float[3]; mean: const float[3]; v: float[3] = [1.5, 1.25, 1.75]\n"
     "y = BatchNormalization(x, s, b, mean, v) {epsilon=0.001}\nreturn y", 0},
    /* training mode */
    {"x: float[2,3,4,4]; " PARAMS3 "y = BatchNormalization(x, s, b, mean, v) {epsilon=0.001, training_mode=1}\nreturn y", 1},
    /* x's rank unknown */
    {"x: float[*]; " PARAMS3 "y = BatchNormalization(x, s, b, mean, v) {epsilon=0.001}\nreturn y", 1},
    /* the channel dim unknown */
    {"x: float[2,?,4,4]; " PARAMS3 "y = BatchNormalization(x, s, b, mean, v) {epsilon=0.001}\nreturn y", 1},
    /* variance + epsilon < 0: no finite scale */
    {"x: float[2,3,4,4]; s: const float[3]; b: const float[3]; mean: const float[3]; v: float[3] = [-1.5, -1.25, -1.75]\n"
     "y = BatchNormalization(x, s, b, mean, v) {epsilon=0.001}\nreturn y", 0},
    /* the mean is a graph input */
    {"x: float[2,3,4,4]; s: const float[3]; b: const float[3]; mean: float[3]; v: float[3] = [1.5, 1.25, 1.75]\n"
     "y = BatchNormalization(x, s, b, mean, v) {epsilon=0.001}\nreturn y", 0},
    /* integer input: not a float dtype */
    {"x: float[2,3,4,4]; " PARAMS3 "c = Cast(x) {to=6}; y = BatchNormalization(c, s, b, mean, v) {epsilon=0.001}\n"
     "return y", 1},
    /* opset 6 without is_test: training */
    {"opset 6\nx: float[2,3,4,4]; " PARAMS3 "y = BatchNormalization(x, s, b, mean, v) {epsilon=0.001}\nreturn y", 1},
    /* a training output is used */
    {"x: float[2,3,4,4]; " PARAMS3 "y, rm, rv = BatchNormalization(x, s, b, mean, v) {epsilon=0.001}\nreturn y, rm", 1},
};

START_TEST(left_alone)
{
    if (alone[_i].unchecked)
        PC_UNTOUCHED_UNCHECKED(alone[_i].graph);
    else
        PC_UNTOUCHED(alone[_i].graph);
}
END_TEST

/* opset 6 with is_test = 1 is inference */
START_TEST(opset6_is_test)
{
    PC_CASE_OPTS(&pc_unchecked,
                 "opset 6\nx: float[1,3,2,2]; " PARAMS3
                 "y = BatchNormalization(x, s, b, mean, v) {epsilon=0.001, is_test=1}\nreturn y",
                 1, "m = Mul(x, _:const); y = Add(m, _:const)");
}
END_TEST

/* A BatchNormalization of x over 3 channels in g (an If body). */
static ph_value *bn_out(ph_graph *g, ph_value *x, const char *tag)
{
    char name[64];
    ph_value *p[5] = {x};
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%s_p%d", tag, i);
        p[i + 1] = tk_init(g, name, 1, TK_I64(3), 20 + (uint64_t)i);
    }
    snprintf(name, sizeof name, "%s_var", tag);
    p[4] = ph_graph_add_initializer(g, name, ph_tensor_from_f64(PH_DT_FLOAT, 1, TK_I64(3),
                                                                 (const double[]){1.5, 1.25, 1.75}));
    ph_node *n = tk_node(g, "BatchNormalization", 5, p);
    ph_node_set_attr_float(n, "epsilon", 1e-3f);
    return ph_node_output(n, 0);
}

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,3,2,2]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_input(ph_model_graph(m), 0);
    tk_output(then_g, bn_out(then_g, x, "t"));
    tk_output(else_g, bn_out(else_g, x, "e"));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "m = Mul(x, _:const); y = Add(m, _:const)");
    PC_GRAPH_IS(else_g, "m = Mul(x, _:const); y = Add(m, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("batchnorm_to_mul_add");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, ranks_four_three_and_two, 0, (int)(sizeof ranks / sizeof *ranks));
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, opset6_is_test);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
