/* tests/test_pass_transpose_to_depth_to_space.c - transpose_to_depth_to_space:
 * the Reshape + Transpose + Reshape pixel shuffle (DCR, CRD) and its inverse
 * become DepthToSpace and SpaceToDepth; any other permutation or shape
 * stays. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("transpose_to_depth_to_space")

#define DCR "0, 3, 4, 1, 5, 2"
#define CRD "0, 1, 4, 2, 5, 3"
#define S2D "0, 3, 5, 1, 2, 4"
/* Relu(x) -> Reshape(view) -> Transpose(perm) -> Reshape(out) */
#define SHUF(opset, dims, view, perm, out)                                                         \
    "opset " opset "\nx: float[" dims "]; view: int64[6] = [" view "]; out: int64[4] = [" out "]\n"   \
    "r = Relu(x); v = Reshape(r, view); t = Transpose(v) {perm=[" perm "]}; y = Reshape(t, out)\nreturn y"
#define D2S(b, mode) "r = Relu(x)\ny = DepthToSpace(r) {blocksize=" b ", mode=\"" mode "\"}"

static const struct {
    const char *graph, *expect;
} shuffles[] = {
    {SHUF("17", "2,12,3,4", "2, 2, 2, 3, 3, 4", DCR, "2, 3, 6, 8"), D2S("2", "DCR")},
    {SHUF("17", "2,12,3,4", "0, 2, 2, 3, 3, 4", DCR, "0, -1, 6, 8"), D2S("2", "DCR")},
    {SHUF("17", "2,12,3,4", "2, 3, 2, 2, 3, 4", CRD, "2, 3, 6, 8"), D2S("2", "CRD")},
    {SHUF("13", "1,18,2,3", "1, 2, 3, 3, 2, 3", CRD, "1, 2, 6, 9"), D2S("3", "CRD")},
    {SHUF("9", "1,8,3,4", "1, 2, 2, 2, 3, 4", DCR, "1, 2, 6, 8"), "r = Relu(x)\ny = DepthToSpace(r) {blocksize=2, !mode}"},
    {SHUF("17", "2,3,4,6", "2, 3, 2, 2, 3, 2", S2D, "2, 12, 2, 3"), "r = Relu(x)\ny = SpaceToDepth(r) {blocksize=2, !mode}"},
    {SHUF("17", "1,2,6,3", "1, 2, 2, 3, 1, 3", S2D, "1, 18, 2, 1"), "r = Relu(x)\ny = SpaceToDepth(r) {blocksize=3, !mode}"},
};

/* the output keeps its name; the shapes went too */
START_TEST(becomes_depth_to_space)
{
    PC_CASE(shuffles[_i].graph, 1, shuffles[_i].expect);
    ph_error err = {0};
    ph_model *m = ph_test_model_text(shuffles[_i].graph, &err);
    ph_graph *g = ph_model_graph(m);
    char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(ph_test_run(pass, m, NULL, NULL, &err), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    free(name);
    ph_model_free(m);
}
END_TEST

START_TEST(symbolic_batch)
{
    PC_CASE("x: float[batch,12,3,4]; view: int64[6] = [0, 3, 2, 2, 3, 4]; out: int64[4] = [0, 3, 6, 8]\n"
            "v = Reshape(x, view); t = Transpose(v) {perm=[" CRD "]}; y = Reshape(t, out); n = Neg(y)\nreturn n",
            1, "y = DepthToSpace(x) {blocksize=2, mode=\"CRD\"}\nn = Neg(y)");
}
END_TEST

/* x [2,12,3,4] shuffled with view, perm and out, then `more` */
#define OTHER(dims, view, perm, out, more)                                                         \
    "x: float[" dims "]; view: int64[6] = [" view "]; out: int64[4] = [" out "]\n"                 \
    "v = Reshape(x, view); t = Transpose(v) {perm=[" perm "]}; y = Reshape(t, out)\n" more
#define DCR_VIEW "2, 2, 2, 3, 3, 4"
#define CRD_VIEW "2, 3, 2, 2, 3, 4"
static const struct {
    const char *graph;
    int unchecked;
} alone[] = {
    /* the view has another reader */
    {OTHER("2,12,3,4", DCR_VIEW, DCR, "2, 3, 6, 8", "n = Neg(v)\nreturn y, n"), 0},
    /* the transposed value has another reader */
    {OTHER("2,12,3,4", DCR_VIEW, DCR, "2, 3, 6, 8", "n = Neg(t)\nreturn y, n"), 0},
    /* the transposed value is a graph output */
    {OTHER("2,12,3,4", DCR_VIEW, DCR, "2, 3, 6, 8", "return y, t"), 0},
    /* another permutation: another operator */
    {OTHER("2,12,3,4", DCR_VIEW, "0, 3, 4, 1, 2, 5", "2, 3, 12, 4", "return y"), 0},
    /* H unknown: Reshapes with -1 */
    {OTHER("2,12,H,4", "2, 2, 2, 3, -1, 4", DCR, "2, 3, -1, 8", "return y"), 0},
    /* the right permutation, but another final shape */
    {OTHER("2,12,3,4", DCR_VIEW, DCR, "2, 3, 4, 12", "return y"), 0},
    /* CRD before opset 11 */
    {"opset 10\n" OTHER("2,12,3,4", CRD_VIEW, CRD, "2, 3, 6, 8", "return y"), 0},
    /* DCR permutation on a CRD view */
    {OTHER("2,12,3,4", CRD_VIEW, DCR, "2, 3, 6, 8", "return y"), 0},
    /* blocks of two sizes */
    {OTHER("2,12,3,4", "2, 2, 3, 2, 3, 4", DCR, "2, 2, 9, 8", "return y"), 0},
    /* the view's shape is computed at run time */
    {"x: float[2,12,3,4]; view: int64[6]; out: int64[4] = [2, 3, 6, 8]\n"
     "v = Reshape(x, view); t = Transpose(v) {perm=[" DCR "]}; y = Reshape(t, out)\nreturn y", 1},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].unchecked, alone[_i].graph);
}
END_TEST

/* Reshape(x, view) -> Transpose(perm) -> Reshape(out) in g */
static ph_value *shuffle(ph_graph *g, ph_value *x, const int64_t *view, const int64_t *perm, const int64_t *out)
{
    ph_value *in[2] = {x, tk_ints(g, "view", 6, view)};
    ph_value *tv = tk_transpose(g, ph_node_output(tk_node(g, "Reshape", 2, in), 0), 6, perm);
    ph_value *in2[2] = {tv, tk_ints(g, "out", 4, out)};
    return ph_node_output(tk_node(g, "Reshape", 2, in2), 0);
}

/* The text has no subgraphs: the If's bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[1,8,2,2]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(body[0], shuffle(body[0], x, TK_I64(1, 2, 2, 2, 2, 2), TK_I64(0, 3, 4, 1, 5, 2), TK_I64(1, 2, 4, 4)));
    tk_output(body[1], tk_op1(body[1], "Neg", shuffle(body[1], x, TK_I64(1, 8, 1, 2, 1, 2), TK_I64(0, 3, 5, 1, 2, 4),
                                                      TK_I64(1, 32, 1, 1))));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(body[0], "y = DepthToSpace(x)");
    PC_GRAPH_IS(body[1], "s = SpaceToDepth(x)\ny = Neg(s)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("transpose_to_depth_to_space");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, becomes_depth_to_space, 0, (int)(sizeof shuffles / sizeof *shuffles));
    tcase_add_test(tc, symbolic_batch);
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
