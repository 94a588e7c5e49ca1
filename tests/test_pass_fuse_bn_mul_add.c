/* tests/test_pass_fuse_bn_mul_add.c - fuse_bn_mul_add: per-channel constant
 * Mul/Div/Add/Sub after an inference BatchNormalization folded into its
 * scale and bias. */
#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("fuse_bn_mul_add")

/* BN of x over 6 channels (variance positive); k constants well away from
 * 0 for the divisions */
#define X "x: float[1,6,3,4]\n"
#define P "s: const float[6]; bb: const float[6]; mean: const float[6]; var: float[6] = [1.1, 1.8, 1.3, 1.6, 1.05, 1.9]\n"
#define BN "n = BatchNormalization(x, s, bb, mean, var) {epsilon=0.001}\n"
#define K6 "[0.7, -1.3, 1.9, 0.85, -0.6, 1.1]"
#define FOLDED "n = BatchNormalization(x, _, _, _, _) {epsilon=0.001}\ny = Relu(n)"

static const struct {
    const char *graph, *expect;
    int rewrites;
} folds[] = {
    {X P "k: float[6,1,1] = " K6 "\n" BN "z = Mul(n, k); y = Relu(z)\nreturn y", FOLDED, 1},
    {X P "k: float[1,6,1,1] = " K6 "\n" BN "z = Add(n, k); y = Relu(z)\nreturn y", FOLDED, 1},
    {X P "k: float[] = [0.7]\n" BN "z = Sub(n, k); y = Relu(z)\nreturn y", FOLDED, 1},
    {X P "k: float[6,1,1] = " K6 "\n" BN "z = Div(n, k); y = Relu(z)\nreturn y", FOLDED, 1},
    {X P "k: float[1] = [0.7]\n" BN "z = Mul(k, n); y = Relu(z)\nreturn y", FOLDED, 1},
    /* [N, C] */
    {"x: float[2,6]\n" P "k: float[6] = " K6 "\n" BN "z = Add(k, n); y = Relu(z)\nreturn y", FOLDED, 1},
    /* a chain: Mul, then Add */
    {X P "k: float[6,1,1] = " K6 "; k2: float[6,1,1] = [0.3]\n" BN "z = Mul(n, k); a = Add(z, k2); y = Relu(a)\nreturn y",
     FOLDED, 2},
    /* mean and var computed at run time: only scale and bias need be constant */
    {X "s: const float[6]; bb: const float[6]; mean: float[6]; v: float[6]; fl: float[] = [0.7]\n"
     "k: float[6,1,1] = " K6 "\nav = Abs(v); var = Add(av, fl)\n" BN "z = Mul(n, k); y = Relu(z)\nreturn y",
     "av = Abs(v)\nvar = Add(av, fl)\nn = BatchNormalization(x, _, _, mean, var) {epsilon=0.001}\ny = Relu(n)", 1},
};

START_TEST(folds_into_scale_and_bias)
{
    PC_CASE(folds[_i].graph, folds[_i].rewrites, folds[_i].expect);
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    const char *graph = "x: float[1,6,3,3]\n" P "k: float[6,1,1] = " K6 "\n" BN "z = Mul(n, k)\nreturn z";
    PC_CASE(graph, 1, "z = BatchNormalization(x, _, _, _, _)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

static const struct {
    const char *graph;
    int mode;
} alone[] = {
    /* the BN output has another consumer; is a graph output */
    {X P "k: float[6,1,1] = " K6 "\n" BN "y = Mul(n, k); r = Relu(n)\nreturn y, r", PC_CHECKED},
    {X P "k: float[6,1,1] = " K6 "\n" BN "y = Mul(n, k)\nreturn y, n", PC_CHECKED},
    /* k not constant; varies along W; widens N; widens the rank */
    {X P "k: float[6,1,1]\n" BN "y = Mul(n, k)\nreturn y", PC_CHECKED},
    {X P "k: float[1,1,1,4] = [0.7, -1.3, 1.9, 0.85]\n" BN "y = Mul(n, k)\nreturn y", PC_CHECKED},
    {X P "k: const float[2,6,1,1]\n" BN "y = Mul(n, k)\nreturn y", PC_CHECKED},
    {X P "k: float[1,1,6,1,1] = " K6 "\n" BN "y = Mul(n, k)\nreturn y", PC_CHECKED},
    /* the rank of x unknown; training mode */
    {"x: float[*]\n" P "k: float[6,1,1] = " K6 "\n" BN "y = Mul(n, k)\nreturn y", PC_UNCHECKED},
    {X P "k: float[6,1,1] = " K6 "\nn = BatchNormalization(x, s, bb, mean, var) {epsilon=0.001, training_mode=1}\n"
     "y = Mul(n, k)\nreturn y", PC_UNCHECKED},
    /* the scale is not constant */
    {X "s: float[6]; bb: const float[6]; mean: const float[6]; var: float[6] = [1.5]\nk: float[6,1,1] = " K6 "\n" BN
     "y = Mul(n, k)\nreturn y", PC_CHECKED},
    /* a zero divisor; an infinite factor */
    {X P "k: float[6,1,1] = [1, 2, 3, 4, 5, 0]\n" BN "y = Div(n, k)\nreturn y", PC_CHECKED},
    {X P "k: float[6,1,1] = [1, 2, 3, 4, 5, inf]\n" BN "y = Mul(n, k)\nreturn y", PC_CHECKED},
    /* constant first: k / y and k - y are not folds of y */
    {X P "k: float[6,1,1] = " K6 "\n" BN "y = Div(k, n)\nreturn y", PC_CHECKED},
    {X P "k: float[6,1,1] = " K6 "\n" BN "y = Sub(k, n)\nreturn y", PC_CHECKED},
    /* legacy broadcasting (opset < 7) aligns at an axis */
    {X P "k: float[6,1,1] = " K6 "\n" BN "y = Mul(n, k) {broadcast=1, axis=1}\nreturn y", PC_UNCHECKED},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].mode, alone[_i].graph);
}
END_TEST

/* A constant of another dtype than the BN's (an integer, a double): such a
 * model does not pass shape inference, so the BN output's shape is declared
 * and the pass runs without inference (the text cannot declare it). */
static const struct {
    const char *graph;
} other_dtype[] = {
    {X P "k: int64[6,1,1] = [1, 2, 3, 4, 5, 6]\n" BN "y = Mul(n, k)\nreturn y"},
    {X P "k: double[6,1,1] = [1, 2, 3, 4, 5, 6]\n" BN "y = Mul(n, k)\nreturn y"},
};

START_TEST(other_dtype_kept)
{
    ph_model *m = pc_model(other_dtype[_i].graph);
    tk_set_shape(pc_node_output(m, 0), 4, TK_I64(1, 6, 3, 4));
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run(pass, m, &pc_no_shapes, NULL, &err), 0);
    PC_GRAPH_IS(ph_model_graph(m), "n = BatchNormalization(x, s, bb, mean, var)\ny = Mul(n, k)");
    ph_model_free(m);
}
END_TEST

/* The text has no subgraphs: the If bodies are built with the IR calls.
 * The else branch's constant varies along H: left alone. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,6,3,3]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(then_g, tk_op2(then_g, "Mul", pc_body_bn(then_g, x, 6), tk_init(then_g, "k", 3, TK_I64(6, 1, 1), 3)));
    tk_output(else_g, tk_op2(else_g, "Add", pc_body_bn(else_g, x, 6), tk_init(else_g, "k", 4, TK_I64(1, 1, 3, 1), 3)));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = BatchNormalization(x, _, _, _, _)");
    PC_GRAPH_IS(else_g, "n = BatchNormalization(x, _, _, _, _)\ny = Add(n, k)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_bn_mul_add");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, folds_into_scale_and_bias, 0, (int)(sizeof folds / sizeof *folds));
    tcase_add_test(tc, graph_output_keeps_its_name);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_loop_test(tc, other_dtype_kept, 0, (int)(sizeof other_dtype / sizeof *other_dtype));
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
