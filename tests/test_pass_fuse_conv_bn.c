/* tests/test_pass_fuse_conv_bn.c - fuse_conv_bn: the pattern pass folding
 * BatchNormalization into the Conv before it. */
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("fuse_conv_bn")

/* BatchNormalization parameters of 6 and 3 channels (variance positive). */
#define BN6 "s: const float[6]; bb: const float[6]; mean: const float[6]; var: float[6] = [1.1, 1.9, 1.5, 1.3, 1.7, 1.2]\n"
#define BN3 "s: const float[3]; bb: const float[3]; mean: const float[3]; var: float[3] = [1.1, 1.9, 1.5]\n"
#define BN "n = BatchNormalization(c, s, bb, mean, var) {epsilon=0.001}\n"

static const struct {
    const char *graph;
    int group;
} folds[] = {
    {"x: float[1,4,5,5]; w: const float[6,4,3,3]; b: const float[6]\n" BN6
     "c = Conv(x, w, b) {pads=[1,1,1,1]}\n" BN "y = Relu(n)\nreturn y", 1},
    {"x: float[1,4,5,5]; w: const float[6,4,3,3]\n" BN6
     "c = Conv(x, w) {pads=[1,1,1,1], group=1}\n" BN "y = Relu(n)\nreturn y", 1},
    {"x: float[1,4,5,5]; w: const float[6,2,3,3]; b: const float[6]\n" BN6
     "c = Conv(x, w, b) {pads=[1,1,1,1], group=2}\n" BN "y = Relu(n)\nreturn y", 2},
};

/* with and without bias, grouped: one Conv with a new bias; the old
 * weights, bias and BN parameters are gone */
START_TEST(folds_with_and_without_bias_and_groups)
{
    char expect[128];
    snprintf(expect, sizeof expect, "c = Conv(x, _:const, _:const) {group(1)=%d}\ny = Relu(c)", folds[_i].group);
    PC_CASE(folds[_i].graph, 1, expect);
    PC_INITIALIZERS_AFTER(folds[_i].graph, 1, 2);
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    const char *graph = "x: float[1,2,5,5]; w: const float[3,2,3,3]; b: const float[3]\n" BN3
                        "c = Conv(x, w, b) {pads=[1,1,1,1]}\n" BN "return n";
    PC_CASE(graph, 1, "n = Conv(x, _:const, _:const)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

#define CONV_X "x: float[1,2,5,5]; b: const float[3]\n"
static const struct {
    const char *graph;
} alone[] = {
    /* the Conv output has another consumer */
    {CONV_X "w: const float[3,2,3,3]\n" BN3 "c = Conv(x, w, b) {pads=[1,1,1,1]}\n" BN "r = Relu(c)\nreturn n, r"},
    /* the Conv output is a graph output */
    {CONV_X "w: const float[3,2,3,3]\n" BN3 "c = Conv(x, w, b) {pads=[1,1,1,1]}\n" BN "return n, c"},
    /* the scale is not constant */
    {CONV_X "w: const float[3,2,3,3]; s: float[3]; bb: const float[3]; mean: const float[3]; var: float[3] = [1.5]\n"
     "c = Conv(x, w, b) {pads=[1,1,1,1]}\n" BN "return n"},
    /* training mode */
    {CONV_X "w: const float[3,2,3,3]\n" BN3 "c = Conv(x, w, b) {pads=[1,1,1,1]}\n"
     "n = BatchNormalization(c, s, bb, mean, var) {epsilon=0.001, training_mode=1}\nreturn n"},
    /* the weights are a graph input */
    {CONV_X "w: float[3,2,3,3]\n" BN3 "c = Conv(x, w, b) {pads=[1,1,1,1]}\n" BN "return n"},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED(alone[_i].graph);
}
END_TEST

/* Conv(x, w, b?) -> BatchNormalization in body g (3 channels), its output
 * the body's output. */
static void body_conv_bn(ph_graph *g, ph_value *x, int bias)
{
    ph_value *in[3] = {x, tk_init(g, "w", 4, TK_I64(3, 2, 3, 3), 7), bias ? tk_init(g, "b", 1, TK_I64(3), 8) : NULL};
    ph_node *conv = tk_node(g, "Conv", bias ? 3 : 2, in);
    ph_node_set_attr_ints(conv, "pads", 4, TK_I64(1, 1, 1, 1));
    tk_output(g, pc_body_bn(g, ph_node_output(conv, 0), 3));
}

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,2,5,5]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    body_conv_bn(then_g, x, 1);
    body_conv_bn(else_g, x, 0);
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Conv(x, _:const, _:const)");
    PC_GRAPH_IS(else_g, "y = Conv(x, _:const, _:const)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_conv_bn");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, folds_with_and_without_bias_and_groups, 0, (int)(sizeof folds / sizeof *folds));
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
