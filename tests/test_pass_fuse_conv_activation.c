/* tests/test_pass_fuse_conv_activation.c - fuse_conv_activation: Conv +
 * activation -> com.microsoft FusedConv.  The evaluator has no com.microsoft
 * operators, so these check structure; scripts/test_ort.sh checks the
 * numbers in ONNX Runtime. */
#include <stdio.h>

#include "passcase.h"

PASS_FIXTURE("fuse_conv_activation")

/* Conv(x[1,3,6,6], W[4,3,3,3], b[4]) {pads 1, strides 2} -> ACT -> Neg */
#define CONV "x: float[1,3,6,6]; w: const float[4,3,3,3]; b: const float[4]\n" \
             "c = Conv(x, w, b) {pads=[1,1,1,1], strides=[2,2]}\n"
#define NEG "y = Neg(a)\nreturn y"
#define FLT_MAX_TEXT "3.4028234663852886e38"

static const struct {
    const char *graph, *activation, *params; /* params: the attribute test */
} fused[] = {
    {CONV "a = Relu(c)\n" NEG, "Relu", "!activation_params"},
    {CONV "a = Sigmoid(c)\n" NEG, "Sigmoid", "!activation_params"},
    {CONV "a = Tanh(c)\n" NEG, "Tanh", "!activation_params"},
    {CONV "a = LeakyRelu(c) {alpha=0.25}\n" NEG, "LeakyRelu", "activation_params=[0.25]"},
    {CONV "a = HardSigmoid(c) {alpha=0.125, beta=0.375}\n" NEG, "HardSigmoid", "activation_params=[0.125, 0.375]"},
    /* ReLU6, bounds as inputs; max omitted; min omitted ("") */
    {"opset 13\n" CONV "lo: float[] = [0.0]; hi: float[] = [6.0]; a = Clip(c, lo, hi)\n" NEG, "Clip",
     "activation_params=[0.0, 6.0]"},
    {"opset 13\n" CONV "lo: float[] = [-1.5]; a = Clip(c, lo)\n" NEG, "Clip", "activation_params=[-1.5, " FLT_MAX_TEXT "]"},
    {"opset 13\n" CONV "hi: float[] = [6.0]; a = Clip(c, _, hi)\n" NEG, "Clip",
     "activation_params=[-" FLT_MAX_TEXT ", 6.0]"},
    /* bounds as attributes; min left at its default */
    {"opset 10\n" CONV "a = Clip(c) {min=0.0, max=6.0}\n" NEG, "Clip", "activation_params=[0.0, 6.0]"},
    {"opset 10\n" CONV "a = Clip(c) {max=2.0}\n" NEG, "Clip", "activation_params=[-" FLT_MAX_TEXT ", 2.0]"},
};

/* one FusedConv with the Conv's attributes and inputs, in the imported
 * com.microsoft domain; its output keeps its known type (the next passes
 * still see shapes) */
START_TEST(fuses_each_activation)
{
    char expect[512];
    snprintf(expect, sizeof expect,
             "opset@com.microsoft == 1\n"
             "f = FusedConv@com.microsoft(x, w, b) {activation=\"%s\", %s, pads=[1,1,1,1], strides=[2,2]}\n"
             "y = Neg(f:float32:shape=[1,4,3,3])",
             fused[_i].activation, fused[_i].params);
    PC_CASE_OPTS(&pc_unchecked, fused[_i].graph, 1, expect);
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    const char *graph = CONV "y = Relu(c)\nreturn y";
    PC_CASE_OPTS(&pc_unchecked, graph, 1, "y = FusedConv@com.microsoft(x, w, b) {activation=\"Relu\"}");
    PC_OUTPUT_NAME_KEPT(graph, 1);
}
END_TEST

static const struct {
    const char *graph;
    int mode;
} alone[] = {
    /* the Conv output has another consumer; is a graph output */
    {CONV "a = Relu(c); z = Neg(c)\ny = Neg(a)\nreturn y, z", PC_CHECKED},
    {CONV "a = Relu(c)\ny = Neg(a)\nreturn y, c", PC_CHECKED},
    /* a double Conv: ORT's FusedConv CPU kernel is float only */
    {"x: double[1,3,6,6]; w: double[4,3,3,3] = [0]; b: double[4] = [0]\n"
     "c = Conv(x, w, b) {pads=[1,1,1,1], strides=[2,2]}\na = Relu(c)\n" NEG, PC_CHECKED},
    /* a Clip bound not constant */
    {CONV "lo: float[]; a = Clip(c, lo)\n" NEG, PC_CHECKED},
    /* an activation FusedConv does not take */
    {CONV "a = Elu(c)\n" NEG, PC_CHECKED},
    /* a Clip bound of another dtype than float (an invalid model) */
    {CONV "lo: double[] = [0]; a = Clip(c, lo)\n" NEG, PC_NO_SHAPES},
    /* a Conv of another domain (one the model imports) */
    {"x: float[1,3,6,6]; w: const float[4,3,3,3]; b: const float[4]\n"
     "c = Conv@com.example(x, w, b) {pads=[1,1,1,1], strides=[2,2]}\na = Relu(c)\n" NEG, PC_UNCHECKED},
    /* Clip with min > max (ORT refuses it); the same at opset 10 */
    {CONV "lo: float[] = [6.0]; hi: float[] = [0.0]; a = Clip(c, lo, hi)\n" NEG, PC_CHECKED},
    {"opset 10\n" CONV "a = Clip(c) {min=6.0, max=0.0}\n" NEG, PC_CHECKED},
};

/* left alone, and com.microsoft not imported */
START_TEST(left_alone)
{
    pc_untouched_without_import(alone[_i].mode, alone[_i].graph, "com.microsoft");
}
END_TEST

/* x of unknown dtype and rank (the text always gives a dtype) */
START_TEST(unknown_dtype_left_alone)
{
    ph_model *m = pc_model(CONV "a = Relu(c)\n" NEG);
    ck_assert_int_eq(ph_value_set_type(ph_graph_input(ph_model_graph(m), 0), PH_DT_UNDEFINED, -1, NULL), 0);
    pc_run_structure(m, 0);
    PC_GRAPH_IS(ph_model_graph(m), "c = Conv(x, w, b)\na = Relu(c)\ny = Neg(a)");
    ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), -1);
    ph_model_free(m);
}
END_TEST

/* Conv(x, W[4,3,3,3], b) {pads 1, strides 2} -> op {alpha?} in body g. */
static ph_value *body_conv_act(ph_graph *g, ph_value *x, const char *op, float alpha)
{
    static const float w[108] = {0.5f, -0.25f}, b[4] = {0.1f};
    ph_value *in[3] = {x, ph_graph_add_initializer(g, "w", ph_tensor_new(PH_DT_FLOAT, 4, (const int64_t[]){4, 3, 3, 3}, w)),
                       ph_graph_add_initializer(g, "b", ph_tensor_new(PH_DT_FLOAT, 1, (const int64_t[]){4}, b))};
    ph_node *c = ph_node_create(g, NULL, "Conv", 3, in, 1);
    ck_assert_int_eq(ph_node_set_attr_ints(c, "pads", 4, (const int64_t[]){1, 1, 1, 1}), 0);
    ck_assert_int_eq(ph_node_set_attr_ints(c, "strides", 2, (const int64_t[]){2, 2}), 0);
    ph_value *cv = ph_node_output(c, 0);
    ph_node *a = ph_node_create(g, NULL, op, 1, &cv, 1);
    if (alpha)
        ck_assert_int_eq(ph_node_set_attr_float(a, "alpha", alpha), 0);
    return ph_node_output(a, 0);
}

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("x: float[1,3,6,6]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_value *x = ph_graph_find_value(ph_model_graph(m), "x");
    ck_assert_int_eq(ph_graph_add_output(then_g, body_conv_act(then_g, x, "Relu", 0)), 0);
    ck_assert_int_eq(ph_graph_add_output(else_g, body_conv_act(else_g, x, "LeakyRelu", 0.5f)), 0);
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = FusedConv@com.microsoft(x, w, b) {activation=\"Relu\"}");
    PC_GRAPH_IS(else_g, "y = FusedConv@com.microsoft(x, w, b) {activation=\"LeakyRelu\", activation_params=[0.5]}");
    ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), 1);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_conv_activation");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, fuses_each_activation, 0, (int)(sizeof fused / sizeof *fused));
    tcase_add_test(tc, graph_output_keeps_its_name);
    tcase_add_loop_test(tc, left_alone, 0, (int)(sizeof alone / sizeof *alone));
    tcase_add_test(tc, unknown_dtype_left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
