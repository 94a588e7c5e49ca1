/* tests/test_pass_fuse_bn_conv.c - fuse_bn_conv: an inference
 * BatchNormalization folded into the Conv after it. */
#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("fuse_bn_conv")

/* BatchNormalization of x over 4 channels (variance positive), then Conv */
#define X4 "x: float[1,4,7,7]\n"
#define BN "s: const float[4]; bb: const float[4]; mean: const float[4]; var: float[4] = [0.6, 1.2, 0.9, 1.4]\n" \
           "n = BatchNormalization(x, s, bb, mean, var) {epsilon=0.001}\n"
#define W(shape) "w: const float" shape "; b: const float[6]\n"
#define RELU "y = Relu(c)\nreturn y"

static const struct {
    const char *graph;
    int group;
} folds[] = {
    {X4 BN W("[6,4,3,3]") "c = Conv(n, w, b) {group=1}\n" RELU, 1},
    /* no bias */
    {X4 BN "w: const float[6,4,3,3]\nc = Conv(n, w) {group=1}\n" RELU, 1},
    /* grouped, dilated, strided */
    {X4 BN W("[6,2,3,3]") "c = Conv(n, w, b) {group=2, dilations=[2,2], strides=[2,1]}\n" RELU, 2},
    /* depthwise */
    {X4 BN "w: const float[4,1,3,3]; b: const float[4]\nc = Conv(n, w, b) {group=4}\n" RELU, 4},
    /* unpadded, said three ways */
    {X4 BN W("[6,4,3,3]") "c = Conv(n, w, b) {group=1, auto_pad=\"VALID\"}\n" RELU, 1},
    {X4 BN W("[6,4,3,3]") "c = Conv(n, w, b) {group=1, pads=[0,0,0,0]}\n" RELU, 1},
    {X4 BN W("[6,4,3,3]") "c = Conv(n, w, b) {group=1, auto_pad=\"NOTSET\"}\n" RELU, 1},
    /* 1-D */
    {"x: float[1,4,9]\n" BN W("[6,4,3]") "c = Conv(n, w, b) {group=1}\n" RELU, 1},
};

/* one Conv with new weights and bias: W' and b' are the only initializers */
START_TEST(folds_into_unpadded_convs)
{
    char expect[128];
    snprintf(expect, sizeof expect, "c = Conv(x, _:const, _:const) {group=%d}\ny = Relu(c)", folds[_i].group);
    PC_CASE(folds[_i].graph, 1, expect);
    PC_INITIALIZERS_AFTER(folds[_i].graph, 1, 2);
}
END_TEST

/* Padding: the border outputs would change, so only with
 * allow_border_change (approximate: structure only). */
static const struct {
    const char *graph, *auto_pad;
} pads[] = {
    {"x: float[1,4,5,5]\n" BN W("[6,2,3,3]") "y = Conv(n, w, b) {group=2, pads=[1,0,1,1]}\nreturn y", "NOTSET"},
    {"x: float[1,4,5,5]\n" BN W("[6,2,3,3]") "y = Conv(n, w, b) {group=2, auto_pad=\"SAME_UPPER\"}\nreturn y", "SAME_UPPER"},
};

START_TEST(padding_only_when_allowed)
{
    PC_UNTOUCHED(pads[_i].graph);
    static const char *const allow[] = {"allow_border_change=true", NULL};
    const ph_test_options o = {.params = allow, .unchecked = 1};
    char expect[128];
    snprintf(expect, sizeof expect, "y = Conv(x, _:const, _:const) {auto_pad(\"NOTSET\")=\"%s\"}", pads[_i].auto_pad);
    PC_CASE_OPTS(&o, pads[_i].graph, 1, expect);
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    const char *graph = "x: float[1,4,5,5]\n" BN W("[6,4,3,3]") "y = Conv(n, w, b) {group=1}\nreturn y";
    PC_CASE(graph, 1, "y = Conv(x, _:const, _:const)");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

#define X5 "x: float[1,4,5,5]\n"
#define CONV "c = Conv(n, w, b) {group=1}\n"
static const struct {
    const char *graph;
    int mode; /* PC_CHECKED, PC_UNCHECKED, PC_NO_SHAPES */
} alone[] = {
    /* the BN output has another consumer; is a graph output */
    {X5 BN W("[6,4,3,3]") CONV "r = Relu(n)\nreturn c, r", 0},
    {X5 BN W("[6,4,3,3]") CONV "return c, n", 0},
    /* the scale is not constant */
    {X5 "s: float[4]; bb: const float[4]; mean: const float[4]; var: float[4] = [0.6, 1.2, 0.9, 1.4]\n"
     "n = BatchNormalization(x, s, bb, mean, var) {epsilon=0.001}\n" W("[6,4,3,3]") CONV "return c", 0},
    /* training mode */
    {X5 "s: const float[4]; bb: const float[4]; mean: const float[4]; var: float[4] = [0.6, 1.2, 0.9, 1.4]\n"
     "n = BatchNormalization(x, s, bb, mean, var) {epsilon=0.001, training_mode=1}\n" W("[6,4,3,3]") CONV "return c", 1},
    /* W not constant; the Conv's bias not constant */
    {X5 BN "w: float[6,4,3,3]; b: const float[6]\n" CONV "return c", 0},
    {X5 BN "w: const float[6,4,3,3]; b: float[6]\n" CONV "return c", 0},
    /* integer weights (an invalid model) */
    {X5 BN "w: int32[6,4,3,3] = [0]; b: const float[6]\n" CONV "return c", 1},
    /* a BN whose running statistics are used */
    {X5 "s: const float[4]; bb: const float[4]; mean: const float[4]; var: float[4] = [0.6, 1.2, 0.9, 1.4]\n"
     "n, rm, rv = BatchNormalization(x, s, bb, mean, var) {epsilon=0.001}\n" W("[6,4,3,3]") CONV "return c, rm", 1},
    /* the BN output is the Conv's weight, not its data */
    {X5 BN "b: const float[1]\nc = Conv(x, n, b) {group=1}\nreturn c", 0},
    /* W.dim(1) * group != C (an invalid model) */
    {X5 BN W("[6,4,3,3]") "c = Conv(n, w, b) {group=2}\nreturn c", PC_NO_SHAPES},
};

START_TEST(left_alone)
{
    PC_UNTOUCHED_AS(alone[_i].mode, alone[_i].graph);
}
END_TEST

/* BN(x) over 2 channels then Conv(W[3,2,3,3]) in body g, padded or not. */
static void body_bn_conv(ph_graph *g, ph_value *x, int padded)
{
    ph_value *in[2] = {pc_body_bn(g, x, 2), tk_init(g, "w", 4, TK_I64(3, 2, 3, 3), 7)};
    ph_node *c = tk_node(g, "Conv", 2, in);
    if (padded)
        ck_assert_int_eq(ph_node_set_attr_ints(c, "pads", 4, TK_I64(1, 1, 1, 1)), 0);
    tk_output(g, ph_node_output(c, 0));
}

/* The text has no subgraphs: the If bodies are built with the IR calls;
 * the padded one is left alone. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,2,5,5]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    body_bn_conv(then_g, x, 0);
    body_bn_conv(else_g, x, 1);
    pc_run_checked(m, 1); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = Conv(x, _:const, _:const)");
    PC_GRAPH_IS(else_g, "n = BatchNormalization(x, _, _, _, _)\ny = Conv(n, w)");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_bn_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, folds_into_unpadded_convs, 0, (int)(sizeof folds / sizeof *folds));
    tcase_add_loop_test(tc, padding_only_when_allowed, 0, (int)(sizeof pads / sizeof *pads));
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
