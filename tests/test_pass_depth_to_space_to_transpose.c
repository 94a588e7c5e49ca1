/* tests/test_pass_depth_to_space_to_transpose.c - depth_to_space_to_transpose:
 * DepthToSpace (DCR, CRD) and SpaceToDepth become Reshape + Transpose +
 * Reshape. */
#include <stdio.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("depth_to_space_to_transpose")

#define RESULT(perm) "r = Reshape(x, _:const); t = Transpose(r) {perm=" perm "}; y = Reshape(t, _:const)"

static const struct {
    const char *graph, *expect;
} cases[] = {
    {"x: float[2,12,3,4]\ny = DepthToSpace(x) {blocksize=2, mode=\"DCR\"}\nreturn y", RESULT("[0,3,4,1,5,2]")},
    {"x: float[1,8,3,4]\ny = DepthToSpace(x) {blocksize=2}\nreturn y", RESULT("[0,3,4,1,5,2]")},
    {"x: float[2,12,3,4]\ny = DepthToSpace(x) {blocksize=2, mode=\"CRD\"}\nreturn y", RESULT("[0,1,4,2,5,3]")},
    {"opset 13\nx: float[1,18,2,3]\ny = DepthToSpace(x) {blocksize=3, mode=\"CRD\"}\nreturn y", RESULT("[0,1,4,2,5,3]")},
    {"opset 9\nx: float[1,8,3,4]\ny = DepthToSpace(x) {blocksize=2}\nreturn y", RESULT("[0,3,4,1,5,2]")},
    {"x: float[2,3,4,6]\ny = SpaceToDepth(x) {blocksize=2}\nreturn y", RESULT("[0,3,5,1,2,4]")},
    {"opset 11\nx: float[1,2,6,3]\ny = SpaceToDepth(x) {blocksize=3}\nreturn y", RESULT("[0,3,5,1,2,4]")},
    /* integer data */
    {"x: int64[1,8,2,3]\ny = DepthToSpace(x) {blocksize=2, mode=\"CRD\"}\nreturn y", RESULT("[0,1,4,2,5,3]")},
};

/* the output keeps its name */
START_TEST(becomes_transpose)
{
    PC_CASE(cases[_i].graph, 1, cases[_i].expect);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(cases[_i].graph, &err);
    ph_graph *g = ph_model_graph(m);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ph_model_free(m);
}
END_TEST

static const char *const symbolic[] = {
    "x: float[batch,8,4,6]\nd = DepthToSpace(x) {blocksize=2, mode=\"CRD\"}; y = Neg(d)\nreturn y",
    "x: float[batch,8,4,6]\nd = SpaceToDepth(x) {blocksize=2}; y = Neg(d)\nreturn y",
    /* unknown: the Reshapes copy it all the same */
    "x: float[?,8,4,6]\nd = DepthToSpace(x) {blocksize=2, mode=\"CRD\"}; y = Neg(d)\nreturn y",
};

/* the batch dim is copied (0 in the first Reshape's shape), never written */
START_TEST(symbolic_batch)
{
    ph_test_options o = {.max_iterations = 4, .seed = 4, .sizes = (const int64_t[]){1, 3}, .n_sizes = 2};
    PC_CASE_OPTS(&o, symbolic[_i], 1,
                 "r = Reshape(x, _:const); t = Transpose(r); d = Reshape(t, _:const); y = Neg(d)");
    ph_error err = {0};
    ph_model *m = ph_test_model_text(symbolic[_i], &err);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    int64_t s[8];
    ck_assert_int_eq(ph_value_const_ints(ph_node_input(tk_find_op(g, PH_OP_Reshape), 1), s, NULL, 8), 6);
    ck_assert_int_eq(s[0], 0);
    if (_i < 2)
        ck_assert_str_eq(ph_value_dim_param(ph_node_input(tk_find_op(g, PH_OP_Neg), 0), 0), "batch");
    ph_model_free(m);
}
END_TEST

static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* unknown rank */
    {"x: float[*]\ny = DepthToSpace(x) {blocksize=2}\nreturn y", 1},
    /* H unknown */
    {"x: float[1,8,?,4]\ny = DepthToSpace(x) {blocksize=2, mode=\"DCR\"}\nreturn y", 0},
    /* C symbolic */
    {"x: float[1,c,4,4]\ny = SpaceToDepth(x) {blocksize=2}\nreturn y", 0},
    /* a mode attribute before opset 11 */
    {"opset 10\nx: float[1,8,3,4]\ny = DepthToSpace(x) {blocksize=2, mode=\"CRD\"}\nreturn y", 1},
    /* opset 4: Reshape has no shape input */
    {"opset 4\nx: float[1,8,3,4]\ny = DepthToSpace(x) {blocksize=2}\nreturn y", 1},
};

START_TEST(left_alone)
{
    if (alone[_i].unchecked)
        PC_UNTOUCHED_UNCHECKED(alone[_i].graph);
    else
        PC_UNTOUCHED(alone[_i].graph);
}
END_TEST

/* op(x) {blocksize 2, mode when not NULL} in the body g. */
static ph_value *d2s(ph_graph *g, ph_value *x, const char *mode)
{
    ph_node *n = tk_node(g, "DepthToSpace", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_int(n, "blocksize", 2), 0);
    if (mode)
        ck_assert_int_eq(ph_node_set_attr_string(n, "mode", mode), 0);
    return ph_node_output(n, 0);
}

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,8,2,2]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_input(ph_model_graph(m), 0);
    tk_output(then_g, tk_op1(then_g, "Neg", d2s(then_g, x, "CRD")));
    tk_output(else_g, tk_op1(else_g, "Neg", d2s(else_g, x, NULL)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "r = Reshape(x, _:const); t = Transpose(r) {perm=[0,1,4,2,5,3]}; d = Reshape(t, _:const)\n"
                        "y = Neg(d)");
    PC_GRAPH_IS(else_g, "r = Reshape(x, _:const); t = Transpose(r) {perm=[0,3,4,1,5,2]}; d = Reshape(t, _:const)\n"
                        "y = Neg(d)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("depth_to_space_to_transpose");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, becomes_transpose, 0, (int)(sizeof cases / sizeof *cases));
    tcase_add_loop_test(tc, symbolic_batch, 0, (int)(sizeof symbolic / sizeof *symbolic));
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
