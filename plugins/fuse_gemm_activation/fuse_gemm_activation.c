/* fuse_gemm_activation - Gemm + activation becomes ONNX Runtime's
 * com.microsoft FusedGemm; a MatMul reading a last-two-dims Transpose becomes
 * com.microsoft FusedMatMul (adapt stage, target ort).
 *
 * Requires, FusedGemm: a default-domain Gemm (opset >= 7, so no `broadcast`
 *   attribute) with all three inputs (FusedGemm's C is not optional), its A
 *   known to be float (ORT's CPU kernel is float only), feeding only one of
 *   the activations ORT's FusedGemm implements: Relu, Sigmoid, Tanh, Softsign,
 *   Softplus, LeakyRelu(alpha), Elu(alpha), ThresholdedRelu(alpha),
 *   HardSigmoid(alpha, beta), Selu(alpha, gamma).
 * Requires, FusedMatMul: a default-domain MatMul of float or double (ORT's CPU
 *   kernels) whose A and/or B is a Transpose that swaps the last two dims
 *   and keeps the others (ph_node_transpose_swap_rank), read only by that
 *   MatMul; both operands fold at once when both are swaps.  Both operands
 *   must be known to have rank >= 2: ORT 1.30 gives wrong results for
 *   FusedMatMul {transA} of a 1-D B (batch broadcasting is fine).
 * Changes: y = Act(Gemm(A, B, C)) becomes y = FusedGemm(A, B, C) with the
 *   Gemm's alpha, beta, transA, transB, activation = the op name and
 *   activation_alpha/beta/gamma set explicitly (ONNX defaults when the
 *   activation leaves them out; ORT's functors read them by those names).
 *   y = MatMul(Transpose(a), b) becomes y = FusedMatMul(a, b) {transA=1,
 *   alpha=1} (transB likewise).  The model imports com.microsoft version 1.
 *   Main graph and every If/Loop/Scan body.
 * Exact: fp (ORT applies the activation inside its Gemm kernel; FusedMatMul
 *   reads the operand transposed instead of copying it first).
 */
#include <string.h>

#include <passhost/passhost.h>

typedef struct act_param {
    ph_op op;
    const char *name[2]; /* ONNX attribute -> activation_<name> */
    float dflt[2];
} act_param;

static const act_param params[] = {
    {PH_OP_LeakyRelu, {"alpha"}, {0.01f}},
    {PH_OP_Elu, {"alpha"}, {1.0f}},
    {PH_OP_ThresholdedRelu, {"alpha"}, {1.0f}},
    {PH_OP_HardSigmoid, {"alpha", "beta"}, {0.2f, 0.5f}},
    {PH_OP_Selu, {"alpha", "gamma"}, {1.67326319217681884765625f, 1.05070102214813232421875f}},
};

static int ms_opset(ph_rewriter *rw)
{
    return ph_model_require_opset(ph_graph_model(ph_rw_graph(rw)), "com.microsoft", 1) < 0 ? PH_ENOMEM : 1;
}

static int gemm_ok(const ph_match *m, const ph_params *p)
{
    return ph_node_opset(ph_match_root(m)) >= 7;
}

static int fuse_gemm(ph_rewriter *rw, const ph_match *m)
{
    ph_node *act = ph_match_root(m), *gemm = ph_match_node(m, "g");
    ph_value *in[3] = {ph_match_value(m, "a"), ph_match_value(m, "b"), ph_match_value(m, "c")};
    ph_node *fg = ph_rw_node(rw, "FusedGemm@com.microsoft", 3, in, 1);
    if (!fg || ph_node_set_name(fg, ph_node_name(gemm)) < 0 ||
        ph_node_set_attr_float(fg, "alpha", ph_node_attr_float(gemm, "alpha", 1.0f)) < 0 ||
        ph_node_set_attr_float(fg, "beta", ph_node_attr_float(gemm, "beta", 1.0f)) < 0 ||
        ph_node_set_attr_int(fg, "transA", ph_node_attr_int(gemm, "transA", 0)) < 0 ||
        ph_node_set_attr_int(fg, "transB", ph_node_attr_int(gemm, "transB", 0)) < 0 ||
        ph_node_set_attr_string(fg, "activation", ph_node_op_type(act)) < 0)
        return PH_ENOMEM;
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++)
        for (int k = 0; k < 2 && params[i].op == ph_node_op(act) && params[i].name[k]; k++) {
            char key[32] = "activation_";
            strcat(key, params[i].name[k]);
            if (ph_node_set_attr_float(fg, key, ph_node_attr_float(act, params[i].name[k], params[i].dflt[k])) < 0)
                return PH_ENOMEM;
        }
    if (ph_value_copy_type(ph_node_output(fg, 0), ph_match_value(m, "y")) < 0 ||
        ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(fg, 0)) < 0)
        return PH_ENOMEM;
    return ms_opset(rw);
}

/* 1 if the Transpose bound to output `t` (when the pattern has it) swaps. */
static int swaps(const ph_match *m, const char *t)
{
    ph_node *n = ph_match_node(m, t);
    return !n || ph_node_transpose_swap_rank(n) >= 2;
}

/* Both operands of rank >= 2 (ORT's FusedMatMul computes a transposed
 * operand times a 1-D one wrongly), each Transpose a swap. */
static int matmul_ok(const ph_match *m, const ph_params *p)
{
    return ph_value_rank(ph_match_value(m, "a")) >= 2 && ph_value_rank(ph_match_value(m, "b")) >= 2 &&
           swaps(m, "ta") && swaps(m, "tb");
}

static int fuse_matmul(ph_rewriter *rw, const ph_match *m)
{
    ph_node *ta = ph_match_node(m, "ta"), *tb = ph_match_node(m, "tb");
    ph_value *in[2] = {ph_match_value(m, "a"), ph_match_value(m, "b")};
    ph_node *fm = ph_rw_clone(rw, ph_match_root(m), "FusedMatMul@com.microsoft", 2, in);
    if (!fm || ph_node_set_attr_float(fm, "alpha", 1.0f) < 0 ||
        ph_node_set_attr_int(fm, "transA", ta != NULL) < 0 || ph_node_set_attr_int(fm, "transB", tb != NULL) < 0 ||
        ph_value_copy_type(ph_node_output(fm, 0), ph_match_value(m, "y")) < 0 ||
        ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(fm, 0)) < 0)
        return PH_ENOMEM;
    return ms_opset(rw);
}

#define MM_T "float32|double"
static const ph_rule rules[] = {
    {"gemm_act",
     "g = Gemm(a:float32, b, c)\n"
     "y = Relu|Sigmoid|Tanh|Softsign|Softplus|LeakyRelu|Elu|ThresholdedRelu|HardSigmoid|Selu(g)",
     gemm_ok, fuse_gemm},
    {"matmul_ta_tb", "ta = Transpose(a:" MM_T ")\ntb = Transpose(b)\ny = MatMul(ta, tb)", matmul_ok, fuse_matmul},
    {"matmul_ta", "ta = Transpose(a:" MM_T ")\ny = MatMul(ta, b)", matmul_ok, fuse_matmul},
    {"matmul_tb", "tb = Transpose(b:" MM_T ")\ny = MatMul(a, tb)", matmul_ok, fuse_matmul},
    {0}};

/* Examples for the rule checker: transposed MatMul operands. */
static const ph_rule_example examples[] = {
    {"matmul_tb", "a: <T=float|double>[<R=2,|>3,4]\nb: <T>[<R>5,4]\n"
                  "tb = Transpose(b) {perm=[<R~0,2,1|1,0>]}\ny = MatMul(a, tb)\nreturn y", NULL},
    {"matmul_ta_tb", "a: <T=float|double>[<R=2,|>4,3]\nb: <T>[<R>5,4]\nta = Transpose(a) {perm=[<R~0,2,1|1,0>]}\n"
                     "tb = Transpose(b) {perm=[<R~0,2,1|1,0>]}\ny = MatMul(ta, tb)\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_gemm_activation",
    .summary = "Gemm + activation -> com.microsoft FusedGemm; MatMul of a last-two-dims Transpose -> FusedMatMul",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 1,
    .exactness = PH_FP,
    .targets = "ort",
    .rules = rules,
    .rule_examples = examples)
