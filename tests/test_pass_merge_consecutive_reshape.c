/* tests/test_pass_merge_consecutive_reshape.c - merge_consecutive_reshape: a
 * chain of Reshape/Flatten/Squeeze/Unsqueeze becomes one Reshape (or none). */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("merge_consecutive_reshape")

/* x's unknown dims take 1 and 3 */
static const ph_test_options sizes13 = {.max_iterations = 4, .sizes = (const int64_t[]){1, 3}, .n_sizes = 2};

/* The result is Relu(x), one Reshape of it, Neg; the Reshape's constant
 * shape is want[0..n) and its allowzero as given. */
static const struct {
    const char *graph;
    int rewrites;
    size_t n;
    int64_t want[4];
    int allowzero;
} merges[] = {
    /* Flatten then Reshape; idempotent */
    {"x: float[2,3,4]; s: int64[2] = [4, -1]\nr = Relu(x); f = Flatten(r) {axis=1}; y = Reshape(f, s); n = Neg(y)\n"
     "return n", 1, 2, {4, 6}, 0},
    /* Reshape -> Squeeze -> Unsqueeze -> Flatten: one Reshape */
    {"x: float[6,4]; s: int64[4] = [2, 1, 3, 4]; a1: int64[1] = [1]; a2: int64[2] = [0, -1]\n"
     "r = Relu(x); v = Reshape(r, s); q = Squeeze(v, a1); u = Unsqueeze(q, a2); f = Flatten(u) {axis=2}; n = Neg(f)\n"
     "return n", 3, 2, {2, 12}, 0},
    /* [N,3,4,5] -> Unsqueeze(1) -> Flatten(1) = [N,60]: one unknown dim, -1 */
    {"x: float[N,3,4,5]; a: int64[1] = [1]\nr = Relu(x); u = Unsqueeze(r, a); f = Flatten(u) {axis=1}; n = Neg(f)\n"
     "return n", 1, 2, {-1, 60}, 0},
    /* opset 11: Squeeze/Unsqueeze axes are attributes */
    {"opset 11\nx: float[2,1,5]\nr = Relu(x); q = Squeeze(r) {axes=[1]}; u = Unsqueeze(q) {axes=[0,3]}; n = Neg(u)\n"
     "return n", 1, 4, {1, 2, 5, 1}, 0},
    /* a 0 dim of x at the same index is copied (no allowzero needed, opset 13) */
    {"opset 13\nx: float[0,3]; a: int64[1] = [2]\nr = Relu(x); f = Flatten(r) {axis=1}; u = Unsqueeze(f, a); n = Neg(u)\n"
     "return n", 1, 3, {0, 3, 1}, 0},
    /* a 0 dim at an index where x has 3: allowzero=1 from opset 14 */
    {"x: float[2,0,3]; a: int64[1] = [0]\nr = Relu(x); f = Flatten(r) {axis=1}; u = Unsqueeze(f, a); n = Neg(u)\n"
     "return n", 1, 3, {1, 2, 0}, 1},
};

START_TEST(merges_into_one_reshape)
{
    PC_CASE_OPTS(&sizes13, merges[_i].graph, merges[_i].rewrites, "r = Relu(x)\ny = Reshape(r, _:const)\nn = Neg(y)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(merges[_i].graph, &err);
    ck_assert_int_eq(ph_test_run(pass, m, &sizes13, NULL, &err), merges[_i].rewrites);
    ph_node *r = ph_value_producer(ph_node_input(ph_value_producer(ph_graph_output(ph_model_graph(m), 0)), 0));
    int64_t got[16];
    ck_assert_int_eq(ph_value_const_ints(ph_node_input(r, 1), got, NULL, 16), (ptrdiff_t)merges[_i].n);
    for (size_t k = 0; k < merges[_i].n; k++)
        ck_assert_msg(got[k] == merges[_i].want[k], "shape[%zu] = %lld, want %lld", k, (long long)got[k],
                      (long long)merges[_i].want[k]);
    ck_assert_int_eq(ph_node_attr_int(r, "allowzero", 0), merges[_i].allowzero);
    ph_model_free(m);
}
END_TEST

/* Squeeze then Unsqueeze of the same axis: x's own shape, no node. */
START_TEST(identity_chain_bypassed)
{
    PC_CASE_OPTS(&sizes13, "x: float[N,1,5]; a: int64[1] = [1]\nr = Relu(x); q = Squeeze(r, a); u = Unsqueeze(q, a); n = Neg(u)\n"
                           "return n",
                 1, "r = Relu(x)\nn = Neg(r)");
}
END_TEST

/* The last output is a graph output: it keeps its name. */
START_TEST(graph_output_keeps_name)
{
    const char *graph = "x: float[4,6]; s1: int64[1] = [24]; s2: int64[3] = [2, 3, 4]\na = Reshape(x, s1); y = Reshape(a, s2)\n"
                        "return y";
    PC_CASE(graph, 1, "y = Reshape(x, _:const)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

/* ---- negative cases */

#define R "r = Relu(x); "
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* [N,H,4] -> Reshape [0,-1] = [N,?] -> Unsqueeze(2) = [N,?,1]: the only
     * constant shape would be [0,-1,1], whose -1 is undefined when N is 0 at
     * run time */
    {"x: float[N,H,4]; s: int64[2] = [0, -1]; a: int64[1] = [2]\n" R "v = Reshape(r, s); u = Unsqueeze(v, a); n = Neg(u)\n"
     "return n", 0},
    /* the middle value has another consumer */
    {"x: float[4,6]; s: int64[2] = [3, 8]\n" R "t = Flatten(r) {axis=0}; y = Reshape(t, s); n = Neg(y); m = Neg(t)\n"
     "return n, m", 0},
    /* the middle value is a graph output */
    {"x: float[4,6]; s: int64[2] = [3, 8]\n" R "t = Flatten(r) {axis=0}; y = Reshape(t, s); n = Neg(y)\nreturn n, t", 0},
    /* the final shape is unknown (the shape operand is computed at run time) */
    {"x: float[4,6]; s: int64[3]\n" R "t = Flatten(r) {axis=1}; y = Reshape(t, s); n = Neg(y)\nreturn n", 1},
    /* two unknown dims that are no copies of x's dims at the same index
     * cannot be written: [N,H,4] -> Unsqueeze(0) = [1,N,H,4] -> Reshape
     * [0,0,-1] = [1,N,?], where N sits at index 1 of y but at index 0 of x */
    {"x: float[N,H,4]; a: int64[1] = [0]; s: int64[3] = [0, 0, -1]\n" R "u = Unsqueeze(r, a); v = Reshape(u, s); n = Neg(v)\n"
     "return n", 0},
    /* a literal 0 dim below opset 14 (no allowzero) cannot be written */
    {"opset 13\nx: float[2,0,3]; a: int64[1] = [0]\n" R "f = Flatten(r) {axis=1}; u = Unsqueeze(f, a); n = Neg(u)\n"
     "return n", 0},
    /* a 0 dim next to an unknown one: -1 would divide by 0 */
    {"x: float[N,0,3]; a: int64[1] = [0]\n" R "f = Flatten(r) {axis=1}; u = Unsqueeze(f, a); n = Neg(u)\nreturn n", 0},
    /* a copied 0 dim next to an unknown one that is no copy: -1 of numel 0
     * is undefined.  [0,H,W] -> Flatten(1) = [0,?] -> Unsqueeze(2) = [0,?,1] */
    {"x: float[0,H,W]; a: int64[1] = [2]\n" R "f = Flatten(r) {axis=1}; u = Unsqueeze(f, a); n = Neg(u)\nreturn n", 0},
    /* Reshape-1 (opset 4) has its shape as an attribute */
    {"opset 4\nx: float[4,6]\n" R "s = Reshape(r) {shape=[24]}; f = Flatten(s) {axis=1}; n = Neg(f)\nreturn n", 1},
};

START_TEST(left_alone)
{
    ph_test_options o = sizes13;
    o.unchecked = alone[_i].unchecked;
    PC_CASE_OPTS(&o, alone[_i].graph, 0, NULL);
}
END_TEST

/* An op of another domain in the middle, its output's shape given (the
 * inference does not know it). */
START_TEST(other_domain_kept)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text("x: float[4,6]; s: int64[2] = [3, 8]\n"
                                     "r = Relu(x); t = Flatten@com.example(r) {axis=0}; y = Reshape(t, s); n = Neg(y)\n"
                                     "return n",
                                     &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ph_value *t = ph_node_input(ph_value_producer(ph_node_input(ph_value_producer(ph_graph_output(ph_model_graph(m), 0)), 0)), 0);
    tk_set_shape(t, 2, TK_I64(1, 24));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 0);
    PC_GRAPH_IS(ph_model_graph(m), "r = Relu(x)\nt = Flatten@com.example(r)\ny = Reshape(t, s)\nn = Neg(y)");
    ph_model_free(m);
}
END_TEST

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[4,6]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    ph_node *f = tk_node(body[0], "Flatten", 1, &x);
    ph_node_set_attr_int(f, "axis", 0);
    tk_output(body[0], tk_op1(body[0], "Neg", tk_op2(body[0], "Reshape", ph_node_output(f, 0),
                                                     tk_ints(body[0], "shape", 2, TK_I64(12, 2)))));
    tk_output(body[1], tk_op1(body[1], "Neg", x));
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "r = Reshape(x, _:const)\ny = Neg(r)");
    PC_GRAPH_IS(body[1], "y = Neg(x)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_merge_consecutive_reshape");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, merges_into_one_reshape, 0, (int)(sizeof merges / sizeof *merges));
    tcase_add_test(tc, identity_chain_bypassed);
    tcase_add_test(tc, graph_output_keeps_name);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, other_domain_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
