/* tests/test_pass_mul_add_to_batchnorm.c - mul_add_to_batchnorm (adapt, off
 * by default, loaded explicitly): per-channel Mul then Add on 4-D becomes
 * BatchNormalization. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("mul_add_to_batchnorm")

/* Relu(x) * a + b with a and b random constants; the result: one
 * BatchNormalization of mean 0, variance 1 and epsilon 0, a and b pruned. */
#define BN "r = Relu(x)\ny = BatchNormalization(r, _:const, _:const, _:all=0, _:all=1) {epsilon=0.0}"
static const struct {
    const char *graph;
} folds[] = {
    {"x: float[2,3,4,5]; a: const float[3,1,1]; b: const float[1,3,1,1]\nr = Relu(x); m = Mul(r, a); y = Add(m, b)\nreturn y"},
    {"x: float[2,3,4,5]; a: const float[]; b: const float[3,1,1]\nr = Relu(x); m = Mul(a, r); y = Add(b, m)\nreturn y"},
    {"x: float[2,3,4,5]; a: const float[1,1,1,1]; b: const float[]\nr = Relu(x); m = Mul(r, a); y = Add(m, b)\nreturn y"},
};

START_TEST(per_channel_and_scalar_constants)
{
    PC_CASE(folds[_i].graph, 1, BN);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(folds[_i].graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name); /* the output keeps its name */
    ck_assert_uint_eq(ph_graph_initializer_count(g), 4);          /* a and b pruned */
    free(name);
    ph_model_free(m);
}
END_TEST

#define SMALL "x: float[1,3,3,3]; a: const float[3,1,1]; b: const float[3,1,1]\nr = Relu(x); m = Mul(r, a); y = Add(m, b)\nreturn y"

/* with a positive epsilon the scale is compensated */
START_TEST(epsilon_parameter)
{
    ph_test_options o = {.max_iterations = 4, .params = (const char *const[]){"epsilon=0.001", NULL}};
    PC_CASE_OPTS(&o, SMALL, 1, "r = Relu(x)\ny = BatchNormalization(r, _:const, _:const, _:all=0, _:const) {epsilon=0.001}");
}
END_TEST

static void quiet(void *user, ph_log_level level, const char *pass_name, const char *message) {}

START_TEST(bad_epsilon_fails)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(SMALL, &err);
    ph_test_options o = {.params = (const char *const[]){"epsilon=-1", NULL}, .log = quiet};
    ck_assert_int_eq(ph_test_run(pass, m, &o, NULL, &err), PH_EINVAL);
    ck_assert_msg(strstr(err.message, "parameter epsilon is -1") != NULL, "error: %s", err.message);
    PC_GRAPH_IS(ph_model_graph(m), "r = Relu(x)\nm = Mul(r, a)\ny = Add(m, b)"); /* nothing changed */
    ph_model_free(m);
}
END_TEST

#define X "x: float[2,3,4,4]; a: const float[3,1,1]; b: const float[3,1,1]\n"
static const struct {
    const char *graph;
} alone[] = {
    /* the Mul output has another consumer */
    {X "r = Relu(x); m = Mul(r, a); y = Add(m, b); n = Neg(m)\nreturn y, n"},
    /* the Mul output is a graph output */
    {X "r = Relu(x); m = Mul(r, a); y = Add(m, b)\nreturn y, m"},
    /* the scale is not constant */
    {"x: float[2,3,4,4]; a: float[3,1,1]; b: const float[3,1,1]\nr = Relu(x); m = Mul(r, a); y = Add(m, b)\nreturn y"},
    /* rank 3 */
    {"u: float[3,4,4]; a: const float[4,1]; b: const float[4,1]\nr = Relu(u); m = Mul(r, a); y = Add(m, b)\nreturn y"},
    /* the channel dim unknown */
    {"u: float[2,C,4,4]; a: const float[3,1,1]; b: const float[]\nr = Relu(u); m = Mul(r, a); y = Add(m, b)\nreturn y"},
    /* the constant varies along another axis */
    {"x: float[2,3,4,4]; a: const float[4,1]; b: const float[]\nr = Relu(x); m = Mul(r, a); y = Add(m, b)\nreturn y"},
    /* the Mul would widen a channel dim of 1 to 3 */
    {"u: float[2,1,4,4]; a: const float[3,1,1]; b: const float[]\nr = Relu(u); m = Mul(r, a); y = Add(m, b)\nreturn y"},
    /* Add then Mul is another pattern */
    {"x: float[2,3,4,4]; a: const float[]; b: const float[]\nt = Add(x, b); y = Mul(t, a)\nreturn y"},
    /* integers */
    {"x: float[2,3,4,4]; one: int32[] = [2]\nc = Cast(x) {to=6}; m = Mul(c, one); y = Add(m, one)\nreturn y"},
    /* opset 6 */
    {"opset 6\n" X "r = Relu(x); m = Mul(r, a); y = Add(m, b)\nreturn y"},
};

START_TEST(left_alone)
{
    /* the channel dim C is 3 when evaluated */
    ph_test_options o = {.max_iterations = 4, .sizes = (const int64_t[]){3}, .n_sizes = 1};
    PC_CASE_OPTS(&o, alone[_i].graph, 0, NULL);
}
END_TEST

/* Relu(x) * a + b in g, a and b of the given shapes (rank 0: a scalar). */
static ph_value *mul_add(ph_graph *g, ph_value *x, int rank, const int64_t *dims, int swap)
{
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *a = tk_init(g, "a", rank, dims, 11), *b = tk_init(g, "b", rank, dims, 12);
    ph_value *m = swap ? tk_op2(g, "Mul", a, r) : tk_op2(g, "Mul", r, a);
    return swap ? tk_op2(g, "Add", b, m) : tk_op2(g, "Add", m, b);
}

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[1,3,2,2]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(body[0], mul_add(body[0], x, 3, TK_I64(3, 1, 1), 0));
    tk_output(body[1], mul_add(body[1], x, 0, NULL, 1));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "r = Relu(x)\ny = BatchNormalization(r, _:const, _:const, _:const, _:const)");
    PC_GRAPH_IS(body[1], "r = Relu(x)\ny = BatchNormalization(r, _:const, _:const, _:const, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mul_add_to_batchnorm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, per_channel_and_scalar_constants, 0, (int)(sizeof folds / sizeof *folds));
    tcase_add_test(tc, epsilon_parameter);
    tcase_add_test(tc, bad_epsilon_fails);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
