/* tests/test_pass_split_to_slices.c - split_to_slices: a Split on an axis
 * the axes parameter does not allow becomes one Slice per output. */
#include <stdlib.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("split_to_slices")

static const char *const axes01[] = {"axes=0, 1", NULL};
static const char *const axes0[] = {"axes=0", NULL};
static const ph_test_options allow01 = {.max_iterations = 4, .params = axes01};
static const ph_test_options allow0 = {.max_iterations = 4, .params = axes0};

/* x [2,4,6] -> Relu -> Split -> Neg each */
#define X "x: float[2,4,6]\nr = Relu(x); "
#define S(n) "s" n " = Slice(r, _:const, _:const, _:const)\nn" n " = Neg(s" n ")\n"

static const struct {
    const char *graph, *expect;
} slices[] = {
    /* equal parts of 6 */
    {X "a, b, c = Split(r) {axis=2}; na = Neg(a); nb = Neg(b); nc = Neg(c)\nreturn na, nb, nc",
     "r = Relu(x)\n--\n" S("a") "--\n" S("b") "--\n" S("c")},
    /* sizes as an input, negative axis */
    {"x: float[2,4,6]; sizes: int64[2] = [1, 5]\nr = Relu(x); a, b = Split(r, sizes) {axis=-1}; na = Neg(a); nb = Neg(b)\n"
     "return na, nb",
     "r = Relu(x)\n--\n" S("a") "--\n" S("b")},
    /* opset 18: num_outputs with a smaller last part (4, 3) */
    {"opset 18\nx: float[2,4,7]\nr = Relu(x); a, b = Split(r) {axis=2, num_outputs=2}; na = Neg(a); nb = Neg(b)\n"
     "return na, nb",
     "r = Relu(x)\n--\n" S("a") "--\n" S("b")},
};

START_TEST(inner_axis_to_slices)
{
    PC_CASE_OPTS(&allow01, slices[_i].graph, 1, slices[_i].expect);
}
END_TEST

/* an allowed axis; the same axis, negative; an unknown dim without sizes */
START_TEST(left_alone)
{
    PC_CASE_OPTS(&allow01, X "a, b = Split(r) {axis=1}; na = Neg(a); nb = Neg(b)\nreturn na, nb", 0, NULL);
    PC_CASE_OPTS(&allow01, X "a, b = Split(r) {axis=-2}; na = Neg(a); nb = Neg(b)\nreturn na, nb", 0, NULL);
    ph_test_options o = allow0;
    o.sizes = (const int64_t[]){4};
    o.n_sizes = 1;
    PC_CASE_OPTS(&o, "u: float[3,?]\na, b = Split(u) {axis=1}\nreturn a, b", 0, NULL);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_if_branches)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[3,4]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    ph_node *sp = ph_node_create(body[0], NULL, "Split", 1, &x, 2);
    ck_assert_int_eq(ph_node_set_attr_int(sp, "axis", 1), 0);
    tk_output(body[0], tk_op2(body[0], "Add", ph_node_output(sp, 0), ph_node_output(sp, 1)));
    tk_output(body[1], tk_op1(body[1], "Neg", tk_slice(body[1], x, 1, TK_I64(0), TK_I64(2), TK_I64(1), NULL)));
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run_checked(pass, m, &allow0, NULL, &err), 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "a = Slice(x, _:const, _:const, _:const)\nb = Slice(x, _:const, _:const, _:const)\ny = Add(a, b)");
    PC_GRAPH_IS(body[1], "s = Slice(x, _, _, _)\ny = Neg(s)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_split_to_slices");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, inner_axis_to_slices, 0, (int)(sizeof slices / sizeof *slices));
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
