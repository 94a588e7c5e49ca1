/* tests/test_pass_reducemean_to_pool.c - reducemean_to_pool: a ReduceMean
 * over every spatial axis becomes GlobalAveragePool (rank 4 and up) or
 * AveragePool (rank 3), with a Squeeze when keepdims is 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("reducemean_to_pool")

/* "y = ReduceMean(...)" with axes as the opset has them (an input from
 * opset 18, an attribute before) and keepdims (< 0: absent); x is the
 * graph input. */
static const char *mean_graph(const char *x_decl, int64_t opset, const char *axes, int keep)
{
    static char buf[512];
    char keepattr[32] = "";
    int n_axes = 1;
    for (const char *c = axes; *c; c++)
        n_axes += *c == ',';
    if (keep >= 0)
        snprintf(keepattr, sizeof keepattr, "%skeepdims=%d", opset >= 18 ? "" : ", ", keep);
    if (opset >= 18)
        snprintf(buf, sizeof buf, "opset %lld\n%s; ax: int64[%d] = [%s]\ny = ReduceMean(x, ax) {%s}\nn = Neg(y)\n"
                 "return n", (long long)opset, x_decl, n_axes, axes, keepattr);
    else
        snprintf(buf, sizeof buf, "opset %lld\n%s\ny = ReduceMean(x) {axes=[%s]%s}\nn = Neg(y)\nreturn n",
                 (long long)opset, x_decl, axes, keepattr);
    return buf;
}

static const struct {
    const char *x;
    int keep;
    int64_t opset;
    const char *axes, *want;
} means[] = {
    {"x: float[2,3,7,5]", -1, 17, "2, 3", "y = GlobalAveragePool(x)\nn = Neg(y)"},
    {"x: float[2,3,7,5]", 1, 13, "-1, -2", "y = GlobalAveragePool(x)\nn = Neg(y)"},
    {"x: float[2,3,7,5]", 0, 17, "3, 2", "p = GlobalAveragePool(x)\ny = Squeeze(p, _:const)\nn = Neg(y)"},
    {"x: float[2,3,7,5]", 0, 11, "2, 3", "p = GlobalAveragePool(x)\ny = Squeeze(p) {axes=[2,3]}\nn = Neg(y)"},
    {"x: float[2,3,7]", 1, 17, "2", "y = AveragePool(x) {kernel_shape=[7]}\nn = Neg(y)"},
    {"x: float[2,3,7]", 0, 17, "-1", "p = AveragePool(x) {kernel_shape=[7]}\ny = Squeeze(p, _:const)\nn = Neg(y)"},
    {"x: float[2,3,7,5,2]", 1, 17, "2, 3, 4", "y = GlobalAveragePool(x)\nn = Neg(y)"},
    {"x: float[2,3,7,5]", 1, 18, "2, 3", "y = GlobalAveragePool(x)\nn = Neg(y)"},
    {"x: float[2,3,7,5]", 0, 18, "2, 3", "p = GlobalAveragePool(x)\ny = Squeeze(p, _:const)\nn = Neg(y)"},
};

START_TEST(spatial_means_become_pools)
{
    PC_CASE(mean_graph(means[_i].x, means[_i].opset, means[_i].axes, means[_i].keep), 1, means[_i].want);
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    const char *graph = "x: float[1,2,3,3]\ny = ReduceMean(x) {axes=[2,3], keepdims=0}\nreturn y";
    PC_CASE(graph, 1, "p = GlobalAveragePool(x)\ny = Squeeze(p, _:const)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

static const struct {
    const char *why, *graph;
    int unchecked;
} alone[] = {
    {"the channel axis too", "x: float[1,2,3,3]\ny = ReduceMean(x) {axes=[1,2,3]}\nn = Neg(y)\nreturn n", 0},
    {"the channel axis and W (as many axes as spatial ones)",
     "x: float[1,2,3,3]\ny = ReduceMean(x) {axes=[1,3]}\nn = Neg(y)\nreturn n", 0},
    {"W only", "x: float[1,2,3,3]\ny = ReduceMean(x) {axes=[3]}\nn = Neg(y)\nreturn n", 0},
    {"rank unknown", "x: float[*]\ny = ReduceMean(x) {axes=[2,3]}\nn = Neg(y)\nreturn n", 1},
    {"3-D with D unknown", "x: float[1,2,?]\ny = ReduceMean(x) {axes=[2]}\nn = Neg(y)\nreturn n", 0},
    {"an integer dtype", "x: int32[1,2,3,3]\ny = ReduceMean(x) {axes=[2,3]}\nn = Neg(y)\nreturn n", 0},
    {"no axes: every axis", "x: float[1,2,3,3]\ny = ReduceMean(x)\nn = Neg(y)\nreturn n", 0},
    {"opset 18, axes not constant",
     "opset 18\nx: float[1,2,3,3]; ax: int64[2]\ny = ReduceMean(x, ax)\nn = Neg(y)\nreturn n", 1},
    {"a 2-D mean", "x: float[2,3]\ny = ReduceMean(x) {axes=[1]}\nn = Neg(y)\nreturn n", 0},
};

START_TEST(left_alone)
{
    if (alone[_i].unchecked)
        PC_UNTOUCHED_UNCHECKED(alone[_i].graph);
    else
        PC_UNTOUCHED(alone[_i].graph);
}
END_TEST

/* The text has no subgraphs: the If is built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,2,3,3]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_find_value(g, "x");
    ph_node *a = tk_node(then_g, "ReduceMean", 1, &x), *b = tk_node(else_g, "ReduceMean", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_ints(a, "axes", 2, TK_I64(2, 3)), 0);
    ck_assert_int_eq(ph_node_set_attr_ints(b, "axes", 2, TK_I64(-2, -1)), 0);
    tk_output(then_g, ph_node_output(a, 0));
    tk_output(else_g, tk_op1(else_g, "Neg", ph_node_output(b, 0)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = GlobalAveragePool(x)");
    PC_GRAPH_IS(else_g, "p = GlobalAveragePool(x)\ny = Neg(p)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reducemean_to_pool");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, spatial_means_become_pools, 0, (int)(sizeof means / sizeof *means));
    tcase_add_test(tc, graph_output_keeps_its_name);
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
