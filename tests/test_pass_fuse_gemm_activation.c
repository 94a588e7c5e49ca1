/* tests/test_pass_fuse_gemm_activation.c - fuse_gemm_activation: Gemm +
 * activation -> com.microsoft FusedGemm, MatMul of a last-two-dims Transpose
 * -> com.microsoft FusedMatMul.  The evaluator has no com.microsoft
 * operators, so these check structure; scripts/test_ort.sh checks the
 * numbers in ONNX Runtime. */
#include <stdio.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("fuse_gemm_activation")

/* Gemm(a[2,4], B[3,4]^T, C[3]) {alpha 0.5, beta 2, transB 1} -> ACT -> Neg */
#define GEMM "a: float[2,4]; bm: const float[3,4]; c: const float[3]\ng = Gemm(a, bm, c) {alpha=0.5, beta=2.0, transB=1}\n"
#define NEG "y = Neg(r)\nreturn y"
#define NONE "!activation_alpha, !activation_beta, !activation_gamma"

static const struct {
    const char *graph, *activation, *params; /* params: activation_alpha, _beta, _gamma */
} fused[] = {
    {GEMM "r = Relu(g)\n" NEG, "Relu", NONE},
    {GEMM "r = Sigmoid(g)\n" NEG, "Sigmoid", NONE},
    {GEMM "r = Tanh(g)\n" NEG, "Tanh", NONE},
    {GEMM "r = Softsign(g)\n" NEG, "Softsign", NONE},
    {GEMM "r = Softplus(g)\n" NEG, "Softplus", NONE},
    {GEMM "r = LeakyRelu(g) {alpha=0.3}\n" NEG, "LeakyRelu", "activation_alpha=0.3, !activation_beta, !activation_gamma"},
    /* the ONNX default, explicit */
    {GEMM "r = LeakyRelu(g)\n" NEG, "LeakyRelu", "activation_alpha=0.01, !activation_beta, !activation_gamma"},
    {GEMM "r = Elu(g) {alpha=0.7}\n" NEG, "Elu", "activation_alpha=0.7, !activation_beta, !activation_gamma"},
    {GEMM "r = ThresholdedRelu(g)\n" NEG, "ThresholdedRelu", "activation_alpha=1.0, !activation_beta, !activation_gamma"},
    {GEMM "r = HardSigmoid(g) {beta=0.25}\n" NEG, "HardSigmoid",
     "activation_alpha=0.2, activation_beta=0.25, !activation_gamma"},
    {GEMM "r = Selu(g) {gamma=1.5}\n" NEG, "Selu",
     "activation_alpha=1.67326319217681884765625, !activation_beta, activation_gamma=1.5"},
};

/* one FusedGemm with the Gemm's attributes and inputs, com.microsoft
 * imported, the output's shape known */
START_TEST(gemm_activations)
{
    char expect[512];
    snprintf(expect, sizeof expect,
             "opset@com.microsoft == 1\n"
             "f = FusedGemm@com.microsoft(a, bm, c) {activation=\"%s\", alpha=0.5, beta=2.0, transA=0, transB=1, %s}\n"
             "y = Neg(f:shape=[2,3])",
             fused[_i].activation, fused[_i].params);
    PC_CASE_OPTS(&pc_unchecked, fused[_i].graph, 1, expect);
}
END_TEST

static const struct {
    const char *graph;
    int mode;
} gemm_alone[] = {
    /* the Gemm output has another consumer; is a graph output */
    {GEMM "r = Relu(g); z = Neg(g)\ny = Neg(r)\nreturn y, z", PC_CHECKED},
    {GEMM "r = Relu(g)\ny = Neg(r)\nreturn y, g", PC_CHECKED},
    /* no C */
    {"a: float[2,4]; bm: const float[3,4]\ng = Gemm(a, bm) {alpha=0.5, beta=2.0, transB=1}\nr = Relu(g)\n" NEG, PC_CHECKED},
    /* Clip: FusedGemm has none */
    {GEMM "r = Clip(g)\n" NEG, PC_CHECKED},
    /* opset 6: Gemm may carry `broadcast` (no inference) */
    {"opset 6\n" GEMM "r = Relu(g)\n" NEG, PC_NO_SHAPES},
    /* a Gemm of another domain (one the model imports) */
    {"a: float[2,4]; bm: const float[3,4]; c: const float[3]\ng = Gemm@com.example(a, bm, c) {alpha=0.5, beta=2.0, transB=1}\n"
     "r = Relu(g)\n" NEG, PC_UNCHECKED},
};

/* left alone, and com.microsoft not imported */
START_TEST(gemm_left_alone)
{
    pc_untouched_without_import(gemm_alone[_i].mode, gemm_alone[_i].graph, "com.microsoft");
}
END_TEST

/* MatMul(Transpose?(a), Transpose?(b)) of rank-4 operands: A as seen by
 * MatMul [2,3,5,4], B [2,3,4,6] */
static const struct {
    const char *graph;
    int ta, tb;
} transposes[] = {
    {"a: float[2,3,5,4]; b: float[2,3,4,6]\ny = MatMul(a, b)\nreturn y", 0, 0},
    {"a: float[2,3,4,5]; b: float[2,3,4,6]\nt = Transpose(a) {perm=[0,1,3,2]}; y = MatMul(t, b)\nreturn y", 1, 0},
    {"a: float[2,3,5,4]; b: float[2,3,6,4]\nt = Transpose(b) {perm=[0,1,3,2]}; y = MatMul(a, t)\nreturn y", 0, 1},
    {"a: float[2,3,4,5]; b: float[2,3,6,4]\nt = Transpose(a) {perm=[0,1,3,2]}; u = Transpose(b) {perm=[0,1,3,2]}\n"
     "y = MatMul(t, u)\nreturn y", 1, 1},
};

/* one FusedMatMul of a and b (none without a Transpose), the output
 * [2,3,5,6] */
START_TEST(matmul_transposes)
{
    if (!transposes[_i].ta && !transposes[_i].tb) {
        PC_UNTOUCHED(transposes[_i].graph);
        return;
    }
    char expect[256];
    snprintf(expect, sizeof expect,
             "opset@com.microsoft == 1\ny = FusedMatMul@com.microsoft(a, b) {transA=%d, transB=%d, alpha=1.0}",
             transposes[_i].ta, transposes[_i].tb);
    PC_CASE_OPTS(&pc_unchecked, transposes[_i].graph, 1, expect);
    ph_model *m = pc_run_text(transposes[_i].graph, 1);
    ck_assert_int_eq(ph_value_dim(ph_graph_output(ph_model_graph(m), 0), 3), 6);
    ph_model_free(m);
}
END_TEST

START_TEST(matmul_2d_without_perm)
{
    PC_CASE_OPTS(&pc_unchecked, "a: float[2,5,4]; b: float[6,4]\nt = Transpose(b); y = MatMul(a, t)\nreturn y", 1,
                 "y = FusedMatMul@com.microsoft(a, b) {transA=0, transB=1}");
}
END_TEST

static const struct {
    const char *graph;
    int mode;
} matmul_alone[] = {
    /* the Transpose has another consumer; is a graph output */
    {"a: float[2,5,4]; b: float[2,6,4]\nt = Transpose(b) {perm=[0,2,1]}; y = MatMul(a, t); z = Neg(t)\nreturn z, y", PC_CHECKED},
    {"a: float[2,5,4]; b: float[2,6,4]\nt = Transpose(b) {perm=[0,2,1]}; y = MatMul(a, t)\nreturn t, y", PC_CHECKED},
    /* perm [1,0,2] is not a swap of the last two dims: b' is [6,2,4] */
    {"a: float[6,5,2]; b: float[2,6,4]\nt = Transpose(b) {perm=[1,0,2]}; y = MatMul(a, t)\nreturn y", PC_CHECKED},
    /* no perm at rank 3: reverses all dims, no swap */
    {"a: float[2,5,6]; b: float[4,6,2]\nt = Transpose(b); y = MatMul(a, t)\nreturn y", PC_CHECKED},
    /* int32 */
    {"a: int32[2,5,4]; b: int32[2,6,4]\nt = Transpose(b) {perm=[0,2,1]}; y = MatMul(a, t)\nreturn y", PC_CHECKED},
    /* a Transpose of another domain (one the model imports) */
    {"a: float[2,5,4]; b: float[2,6,4]\nt = Transpose@com.example(b) {perm=[0,2,1]}; y = MatMul(a, t)\nreturn y",
     PC_UNCHECKED},
    /* the other operand is 1-D: ORT gets FusedMatMul {transA} of that wrong */
    {"a: float[2,6,4]; v: float[6]\nt = Transpose(a) {perm=[0,2,1]}; y = MatMul(t, v)\nreturn y", PC_CHECKED},
};

START_TEST(matmul_left_alone)
{
    PC_UNTOUCHED_AS(matmul_alone[_i].mode, matmul_alone[_i].graph);
}
END_TEST

/* An input of unknown dtype and rank (the text always gives a dtype). */
static const struct {
    const char *graph, *expect;
    size_t input;
} unknown_dtype[] = {
    {GEMM "r = Relu(g)\n" NEG, "g = Gemm(a, bm, c)\nr = Relu(g)\ny = Neg(r)", 0},
    {"a: float[2,5,4]; b: float[2,6,4]\nt = Transpose(b) {perm=[0,2,1]}; y = MatMul(a, t)\nreturn y",
     "t = Transpose(b)\ny = MatMul(a, t)", 1},
};

START_TEST(unknown_dtype_left_alone)
{
    ph_model *m = pc_model(unknown_dtype[_i].graph);
    ph_value *in = ph_graph_input(ph_model_graph(m), unknown_dtype[_i].input);
    ck_assert_int_eq(ph_value_set_type(in, PH_DT_UNDEFINED, -1, NULL), 0);
    pc_run_structure(m, 0);
    PC_GRAPH_IS(ph_model_graph(m), unknown_dtype[_i].expect);
    ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), -1);
    ph_model_free(m);
}
END_TEST

/* The text has no subgraphs: the If bodies are built with the IR calls. */
START_TEST(inside_an_if_branch)
{
    ph_graph *then_g, *else_g;
    ph_model *m = pc_if_model("a: float[2,4]; b: float[2,3,4]; cond: bool[]\ny = If(cond)\nreturn y", &then_g, &else_g);
    ph_graph *g = ph_model_graph(m);
    ph_value *a = ph_graph_find_value(g, "a"), *b = ph_graph_find_value(g, "b");
    ph_value *in[3] = {a, tk_init(then_g, "bm", 2, TK_I64(3, 4), 5), tk_init(then_g, "c", 1, TK_I64(3), 6)};
    ph_node *gemm = tk_node(then_g, "Gemm", 3, in);
    ck_assert_int_eq(ph_node_set_attr_int(gemm, "transB", 1), 0);
    tk_output(then_g, tk_op1(then_g, "Relu", ph_node_output(gemm, 0)));
    tk_output(else_g, tk_op2(else_g, "MatMul", a, tk_transpose(else_g, b, 3, TK_I64(0, 2, 1))));
    pc_run_checked(m, 2); /* the evaluator runs If: the numeric check too */
    PC_GRAPH_IS(then_g, "y = FusedGemm@com.microsoft(a, bm, c) {activation=\"Relu\"}");
    PC_GRAPH_IS(else_g, "y = FusedMatMul@com.microsoft(a, b) {transB=1}");
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_gemm_activation");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, gemm_activations, 0, (int)(sizeof fused / sizeof *fused));
    tcase_add_loop_test(tc, gemm_left_alone, 0, (int)(sizeof gemm_alone / sizeof *gemm_alone));
    tcase_add_loop_test(tc, matmul_transposes, 0, (int)(sizeof transposes / sizeof *transposes));
    tcase_add_test(tc, matmul_2d_without_perm);
    tcase_add_loop_test(tc, matmul_left_alone, 0, (int)(sizeof matmul_alone / sizeof *matmul_alone));
    tcase_add_loop_test(tc, unknown_dtype_left_alone, 0, (int)(sizeof unknown_dtype / sizeof *unknown_dtype));
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
