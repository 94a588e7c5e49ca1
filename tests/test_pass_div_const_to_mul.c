/* tests/test_pass_div_const_to_mul.c - div_const_to_mul: Div by a float
 * constant becomes Mul by its reciprocal. */
#include <math.h>
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("div_const_to_mul")

/* Element k of the constant the first Mul of g reads. */
static double mul_const(const ph_graph *g, size_t k)
{
    const ph_tensor *t = ph_value_const(ph_node_input(tk_find_op(g, PH_OP_Mul), 1));
    ck_assert_ptr_nonnull(t);
    double *v = malloc((size_t)ph_tensor_numel(t) * sizeof *v);
    ck_assert_int_eq(ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), v), 0);
    double r = v[k];
    free(v);
    return r;
}

/* the divisors are pruned, the output keeps its name, the reciprocals are
 * those of float */
START_TEST(float_vector_and_scalar)
{
    const char *graph = "x: float[2,3,4]; a: float[4] = [3, 0.5, -7, 1e-3]; b: float[] = [10]\n"
                        "p = Div(x, a); y = Div(p, b)\nreturn y";
    PC_CASE(graph, 2, "p = Mul(x, _:const)\ny = Mul(p, _:const)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 2);
    ck_assert(mul_const(ph_model_graph(m), 1) == 2.0);
    ck_assert(mul_const(ph_model_graph(m), 2) == (double)(float)(-1.0 / 7));
    ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(m)), 2);
    ck_assert_str_eq(ph_value_name(ph_graph_output(ph_model_graph(m), 0)), "Div__1_out0");
    ph_model_free(m);
}
END_TEST

/* double through Casts, float16 with an exact reciprocal; a divisor another
 * node reads stays for it */
START_TEST(double_float16_and_shared_divisor)
{
    PC_CASE("x: float[3,5]; c: double[5] = [3, 0.1, -9, 1e5, 0.25]; e: float16[] = [-4]\n"
            "d = Cast(x) {to=11}; q = Div(d, c); y1 = Cast(q) {to=1}\n"
            "s = Add(d, c); y2 = Cast(s) {to=1}\n"
            "h = Cast(x) {to=10}; r = Div(h, e); y3 = Cast(r) {to=1}\n"
            "return y1, y2, y3",
            2, "d = Cast(x) {to=11}\n--\nq = Mul(d, _:const)\ny1 = Cast(q)\n--\ns = Add(d, c)\ny2 = Cast(s)\n--\n"
               "h = Cast(x) {to=10}\nr = Mul(h, _:const)\ny3 = Cast(r)");
}
END_TEST

START_TEST(divisor_not_constant_left_alone)
{
    PC_UNTOUCHED("x: float[2,3]; c: float[3]\ny = Div(x, c)\nreturn y");
}
END_TEST

START_TEST(integer_division_left_alone)
{
    PC_UNTOUCHED("x: float[2,3]; c: int32[] = [2]\nd = Cast(x) {to=6}\ny = Div(d, c)\nreturn y");
}
END_TEST

START_TEST(zero_divisor_left_alone)
{
    PC_UNTOUCHED("x: float[2,3]; c: float[3] = [1, 0, 2]\ny = Div(x, c)\nreturn y");
}
END_TEST

START_TEST(infinite_divisor_left_alone)
{
    PC_UNTOUCHED("x: float[2,3]; c: float[] = [inf]\ny = Div(x, c)\nreturn y");
}
END_TEST

START_TEST(nan_divisor_left_alone)
{
    PC_UNTOUCHED("x: float[2,3]; c: float[] = [nan]\ny = Div(x, c)\nreturn y");
}
END_TEST

/* the reciprocal would be subnormal in float */
START_TEST(subnormal_reciprocal_left_alone)
{
    PC_UNTOUCHED("x: float[2,3]; c: float[] = [3e38]\ny = Div(x, c)\nreturn y");
}
END_TEST

/* the reciprocal overflows float16 */
START_TEST(float16_overflow_left_alone)
{
    PC_UNTOUCHED("x: float[2,3]; c: float16[] = [1e-7]\nh = Cast(x) {to=10}\ny = Div(h, c)\nreturn y");
}
END_TEST

/* the constant is the dividend: c / x is no product */
START_TEST(constant_dividend_left_alone)
{
    PC_UNTOUCHED("x: float[2,3]; c: float[] = [2]\ny = Div(c, x)\nreturn y");
}
END_TEST

/* x of another dtype than the constant (an invalid model) */
START_TEST(dtype_mismatch_left_alone)
{
    PC_UNTOUCHED_UNCHECKED("x: double[2,3]; c: float[] = [2]\ny = Div(x, c)\nreturn y");
}
END_TEST

/* The text has no subgraphs: the If is built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[2,3]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_find_value(g, "x");
    float eight = 8, zero = 0;
    tk_output(then_g, tk_op2(then_g, "Div", x,
                             ph_graph_add_initializer(then_g, "c", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &eight))));
    tk_output(else_g, tk_op2(else_g, "Div", x,
                             ph_graph_add_initializer(else_g, "c", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &zero))));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Mul(x, _:const)");
    ck_assert(mul_const(then_g, 0) == 0.125);
    PC_GRAPH_IS(else_g, "y = Div(x, c)"); /* division by zero stays */
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("div_const_to_mul");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, float_vector_and_scalar);
    tcase_add_test(tc, double_float16_and_shared_divisor);
    tcase_add_test(tc, divisor_not_constant_left_alone);
    tcase_add_test(tc, integer_division_left_alone);
    tcase_add_test(tc, zero_divisor_left_alone);
    tcase_add_test(tc, infinite_divisor_left_alone);
    tcase_add_test(tc, nan_divisor_left_alone);
    tcase_add_test(tc, subnormal_reciprocal_left_alone);
    tcase_add_test(tc, float16_overflow_left_alone);
    tcase_add_test(tc, constant_dividend_left_alone);
    tcase_add_test(tc, dtype_mismatch_left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
