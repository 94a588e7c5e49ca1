/* tests/test_pass_fuse_add_into_conv.c - fuse_add_into_conv: a per-channel
 * constant added to a Conv's output becomes the Conv's bias. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("fuse_add_into_conv")

/* x[1,4,5,5] -> Conv(w[6,4,3,3], b) then an operand a. */
#define X "x: float[1,4,5,5]; w: const float[6,4,3,3]; b: const float[6]\n"
#define CONV "c = Conv(x, w, b) {group=1, pads=[1,1,1,1], dilations=[1,1]}\n"
#define TAIL "s = Add(c, a); y = Relu(s)\nreturn y"
#define FOLDED "c = Conv(x, _:const, _:const) {group=1, dilations=[1,1]}\ny = Relu(c)"

static const struct {
    const char *graph, *expect;
} folds[] = {
    {X "a: const float[6,1,1]\n" CONV TAIL, FOLDED},
    /* no bias yet; a [1,M,1,1] */
    {"x: float[1,4,5,5]; w: const float[6,4,3,3]; a: const float[1,6,1,1]\n"
     "c = Conv(x, w) {group=1, pads=[1,1,1,1], dilations=[1,1]}\n" TAIL, FOLDED},
    /* a scalar, a [1], a [1,1,1,1] */
    {X "a: const float[]\n" CONV TAIL, FOLDED},
    {X "a: const float[1]\n" CONV TAIL, FOLDED},
    {X "a: const float[1,1,1,1]\n" CONV TAIL, FOLDED},
    /* grouped and dilated */
    {"x: float[1,4,5,5]; w: const float[6,2,3,3]; b: const float[6]; a: const float[6,1,1]\n"
     "c = Conv(x, w, b) {group=2, pads=[2,2,2,2], dilations=[2,2]}\n" TAIL,
     "c = Conv(x, _:const, _:const) {group=2, dilations=[2,2]}\ny = Relu(c)"},
    /* Sub; the constant first */
    {X "a: const float[6,1,1]\n" CONV "s = Sub(c, a); y = Relu(s)\nreturn y", FOLDED},
    {X "a: const float[6,1,1]\n" CONV "s = Add(a, c); y = Relu(s)\nreturn y", FOLDED},
    /* 1-D convolution, a [M,1] */
    {"x: float[1,4,7]; w: const float[6,4,3]; b: const float[6]; a: const float[6,1]\n"
     "c = Conv(x, w, b)\n" TAIL, "c = Conv(x, _:const, _:const)\ny = Relu(c)"},
};

/* the Conv has the new bias; W and that bias are the only initializers */
START_TEST(folds_per_channel_constants)
{
    PC_CASE(folds[_i].graph, 1, folds[_i].expect);
    PC_INITIALIZERS_AFTER(folds[_i].graph, 1, 2);
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    const char *graph = X "a: const float[6,1,1]\n" CONV "y = Add(c, a)\nreturn y";
    PC_CASE(graph, 1, "y = Conv(x, _:const, _:const)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

#define ADD "y = Add(c, a)\n"
static const struct {
    const char *graph;
    int mode; /* PC_CHECKED, PC_UNCHECKED, PC_NO_SHAPES */
} alone[] = {
    /* the Conv output has another consumer; is a graph output */
    {X "a: const float[6,1,1]\n" CONV ADD "r = Relu(c)\nreturn y, r", 0},
    {X "a: const float[6,1,1]\n" CONV ADD "return y, c", 0},
    /* the operand is not constant */
    {X "a: float[6,1,1]\n" CONV ADD "return y", 0},
    /* varies along W; widens N; widens the rank; varies along H */
    {X "a: const float[1,1,1,5]\n" CONV ADD "return y", 0},
    {X "a: const float[2,6,1,1]\n" CONV ADD "return y", 0},
    {X "a: const float[1,1,6,1,1]\n" CONV ADD "return y", 0},
    {X "a: const float[5,1]\n" CONV ADD "return y", 0},
    /* an integer constant; a float16 one (another dtype than W: invalid) */
    {X "a: int64[6,1,1] = [1]\n" CONV ADD "return y", 1},
    {X "a: float16[6,1,1] = [1]\n" CONV ADD "return y", 1},
    /* the bias is not constant; the weights are not */
    {"x: float[1,4,5,5]; w: const float[6,4,3,3]; b: float[6]; a: const float[6,1,1]\n" CONV ADD "return y", 0},
    {"x: float[1,4,5,5]; w: float[6,4,3,3]; b: const float[6]; a: const float[6,1,1]\n" CONV ADD "return y", 0},
    /* legacy broadcasting (opset < 7) aligns at an axis */
    {X "a: const float[6,1,1]\n" CONV "y = Add(c, a) {broadcast=1, axis=1}\nreturn y", 1},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].mode, alone[_i].graph);
}
END_TEST

/* x -> Conv(w[3,2,3,3], b?) {pads 1} in body g. */
static ph_value *body_conv(ph_graph *g, ph_value *x, int bias)
{
    ph_value *in[3] = {x, tk_init(g, "w", 4, TK_I64(3, 2, 3, 3), 7), bias ? tk_init(g, "b", 1, TK_I64(3), 8) : NULL};
    ph_node *n = tk_node(g, "Conv", bias ? 3 : 2, in);
    ph_node_set_attr_ints(n, "pads", 4, TK_I64(1, 1, 1, 1));
    return ph_node_output(n, 0);
}

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,2,5,5]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    tk_output(then_g, tk_op2(then_g, "Add", body_conv(then_g, x, 1), tk_init(then_g, "ta", 3, TK_I64(3, 1, 1), 21)));
    tk_output(else_g, tk_op2(else_g, "Sub", body_conv(else_g, x, 0), tk_init(else_g, "ea", 0, NULL, 21)));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Conv(x, _:const, _:const)");
    PC_GRAPH_IS(else_g, "y = Conv(x, _:const, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_add_into_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, folds_per_channel_constants, 0, (int)(sizeof folds / sizeof *folds));
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
