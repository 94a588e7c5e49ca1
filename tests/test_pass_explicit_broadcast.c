/* tests/test_pass_explicit_broadcast.c - explicit_broadcast: the operands
 * of a broadcasting op get the output's rank (a constant by leading dims of
 * 1, an activation by an Unsqueeze); the outputs stay the same bit for bit. */
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("explicit_broadcast")

START_TEST(constant_and_activation_aligned)
{
    const char *graph = "x: float[2,3,4]; bias: const float[4]; v: float[3,4]\n"
                        "r = Relu(x); y = Add(r, bias); a = Abs(v); z = Mul(y, a)\nreturn z";
    PC_CASE(graph, 2,
            "r = Relu(x)\ny = Add(r, b:const:shape=[1,1,4])\n--\n"
            "a = Abs(v)\nu = Unsqueeze(a, _)\nz = Mul(y, u)");
    ph_error err = {0}; /* the old constant is pruned */
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 2);
    ck_assert_ptr_null(ph_graph_find_value(ph_model_graph(m), "bias"));
    ph_model_free(m);
}
END_TEST

/* Where with three operands, Sum with a scalar */
START_TEST(variadic_and_where)
{
    PC_CASE("x: float[2,3]; c: bool[3]; s: const float[]; t: const float[3]\n"
            "w = Where(c, x, s); y = Sum(w, x, t)\nreturn y",
            2, "cu = Unsqueeze(c, _)\nw = Where(cu, x, s2:const:shape=[1,1])\ny = Sum(w, x, t2:const:shape=[1,3])");
}
END_TEST

/* one rank already; PRelu (broadcasts one way) */
START_TEST(left_alone)
{
    PC_UNTOUCHED("a: float[2,3]; b: float[1,3]; slope: const float[3]\n"
                 "y = Add(a, b); z = PRelu(a, slope)\nreturn y, z");
}
END_TEST

START_TEST(unknown_rank_left_alone)
{
    PC_UNTOUCHED_UNCHECKED("a: float[2,3]; u: float[*]; y = Mul(a, u); return y");
}
END_TEST

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[3,4]; cond: bool[]; b: const float[4]\ny = If(cond)\nreturn y",
                              &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_find_value(g, "x");
    tk_output(then_g, tk_op2(then_g, "Add", x, ph_graph_find_value(g, "b")));
    tk_output(else_g, tk_op1(else_g, "Neg", x));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Add(x, c:const:shape=[1,4])");
    PC_GRAPH_IS(else_g, "y = Neg(x)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_explicit_broadcast");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, constant_and_activation_aligned);
    tcase_add_test(tc, variadic_and_where);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, unknown_rank_left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
