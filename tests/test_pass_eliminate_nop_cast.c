/* tests/test_pass_eliminate_nop_cast.c - eliminate_nop_cast: a Cast (or
 * CastLike) to the dtype its input already has goes. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("eliminate_nop_cast")

START_TEST(float_to_float_removed)
{
    PC_CASE("x: float[3,4]; a = Abs(x); c = Cast(a) {to=1}; y = Neg(c); return y", 1, "a = Abs(x)\ny = Neg(a)");
}
END_TEST

START_TEST(int_to_same_int_removed)
{
    PC_CASE("a: int64[3,4]; b: int32[3,4]\n"
            "p = Abs(a); c = Cast(p) {to=7}; y1 = Neg(c)\nq = Abs(b); d = Cast(q) {to=6}; y2 = Neg(d)\nreturn y1, y2",
            2, "p = Abs(a)\ny1 = Neg(p)\n--\nq = Abs(b)\ny2 = Neg(q)");
}
END_TEST

/* int64 -> float -> float: only the second Cast does nothing. */
START_TEST(chain_keeps_the_converting_cast)
{
    PC_CASE("x: int64[3,4]; a = Abs(x); f = Cast(a) {to=1}; c = Cast(f) {to=1}; y = Neg(c); return y", 1,
            "a = Abs(x)\nf = Cast(a) {to=1}\ny = Neg(f)");
}
END_TEST

/* CastLike to a value of the same dtype; the like operand is pruned. */
START_TEST(castlike_same_dtype_removed)
{
    const char *graph = "x: float[3,4]; i: int64[3,4]; like: const float[1]\n"
                        "a = Abs(x); c = CastLike(a, like); y1 = Neg(c)\n"
                        "b = Abs(i); n = Neg(b); d = CastLike(b, n); y2 = Neg(d)\nreturn y1, y2";
    PC_CASE(graph, 2, "a = Abs(x)\ny1 = Neg(a)\n--\nb = Abs(i)\ny2 = Neg(b)");
    PC_INITIALIZERS_AFTER(graph, 2, 0);
}
END_TEST

START_TEST(graph_output_takes_the_name)
{
    const char *graph = "x: int32[3,4]; a = Abs(x); y = Cast(a) {to=6}; return y";
    PC_CASE(graph, 1, "y = Abs(x)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

START_TEST(graph_input_feeding_a_node_removed)
{
    PC_CASE("x: int64[4]; c = Cast(x) {to=7}; y = Neg(c); return y", 1, "y = Neg(x)");
}
END_TEST

/* ---- negative cases */

static const struct {
    const char *graph;
} converting[] = {
    {"x: float[3,4]; a = Abs(x); c = Cast(a) {to=7}; y = Neg(c); return y"},
    {"x: int64[3,4]; a = Abs(x); c = Cast(a) {to=1}; y = Neg(c); return y"},
    {"x: int32[3,4]; a = Abs(x); c = Cast(a) {to=7}; y = Neg(c); return y"},
    {"x: int64[3,4]; a = Abs(x); c = Cast(a) {to=6}; y = Neg(c); return y"},
};

START_TEST(converting_casts_kept)
{
    PC_UNTOUCHED(converting[_i].graph);
}
END_TEST

START_TEST(castlike_other_dtype_kept)
{
    PC_UNTOUCHED("i: int64[3,4]; like: const float[1]; b = Abs(i); d = CastLike(b, like); y = Neg(d); return y");
}
END_TEST

/* The input comes from an operator inference does not know: dtype unknown
 * (the evaluator cannot run it either). */
START_TEST(unknown_dtype_kept)
{
    const char *graph = "x: float[3,4]; u = Mystery@com.example(x); c = Cast(u) {to=1}; y = Neg(c); return y";
    PC_UNTOUCHED_UNCHECKED(graph);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 0);
    ck_assert_int_eq(ph_value_dtype(ph_node_output(ph_graph_first_node(ph_model_graph(m)), 0)), PH_DT_UNDEFINED);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_input_to_graph_output_kept)
{
    PC_UNTOUCHED("x: float[3,4]; y = Cast(x) {to=1}; return y");
}
END_TEST

/* The text has no subgraphs: the If bodies are built with the IR calls. */
static ph_value *cast(ph_graph *g, ph_value *x, int to)
{
    ph_node *n = tk_node(g, "Cast", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_int(n, "to", to), 0);
    return ph_node_output(n, 0);
}

START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: int64[3,4]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    /* then: Neg(Cast(x, int64)) loses the Cast; else: Neg(Cast(x, float)) stays */
    tk_output(then_g, cast(then_g, tk_op1(then_g, "Neg", cast(then_g, x, PH_DT_INT64)), PH_DT_FLOAT));
    tk_output(else_g, tk_op1(else_g, "Neg", cast(else_g, x, PH_DT_FLOAT)));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "n = Neg(x)\ny = Cast(n) {to=1}");
    PC_GRAPH_IS(else_g, "c = Cast(x) {to=1}\ny = Neg(c)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_cast");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, float_to_float_removed);
    tcase_add_test(tc, int_to_same_int_removed);
    tcase_add_test(tc, chain_keeps_the_converting_cast);
    tcase_add_test(tc, castlike_same_dtype_removed);
    tcase_add_test(tc, graph_output_takes_the_name);
    tcase_add_test(tc, graph_input_feeding_a_node_removed);
    tcase_add_loop_test(tc, converting_casts_kept, 0, (int)(sizeof converting / sizeof *converting));
    tcase_add_test(tc, castlike_other_dtype_kept);
    tcase_add_test(tc, unknown_dtype_kept);
    tcase_add_test(tc, graph_input_to_graph_output_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
