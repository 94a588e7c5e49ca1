/* fuse_conv_activation - Conv followed by an activation becomes one ONNX
 * Runtime com.microsoft FusedConv (adapt stage, target ort).
 *
 * Requires: x known to be float (ORT's CPU FusedConv kernel is float only);
 *   the activation Relu, Sigmoid, Tanh, LeakyRelu(alpha), HardSigmoid(alpha,
 *   beta) (ONNX defaults), or Clip with constant bounds: the attributes
 *   min/max before opset 11, one-element float inputs from 11; an omitted
 *   bound is the lowest/highest finite float, as ONNX Runtime's Clip kernels
 *   take it; min <= max (not NaN: ONNX Runtime refuses that Clip).
 * Changes: y = FusedConv(x, W[, B]) with the Conv's name and attributes,
 *   activation = the activation's op name and activation_params = [alpha] |
 *   [alpha, beta] | [min, max]; the model imports com.microsoft version 1.
 * Exact: fp (ORT applies the same activation inside its Conv kernel).
 */
#include <float.h>

#include <passhost/passhost.h>

static int fuse(ph_rewriter *rw, const ph_match *m)
{
    int clip = ph_node_op(ph_match_root(m)) == PH_OP_Clip;
    float p[2] = {(float)ph_match_float(m, "p0", -FLT_MAX), (float)ph_match_float(m, "p1", FLT_MAX)};
    for (int i = 0; i < 2; i++) { /* Clip's bounds as inputs (opset >= 11) */
        const ph_tensor *t = ph_match_const(m, i ? "hi" : "lo");
        double v;
        if (t && ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), &v))
            return 0;
        p[i] = t ? (float)v : p[i];
    }
    if (clip && !(p[0] <= p[1]))
        return 0;
    size_t np = clip || ph_match_has(m, "p1") ? 2 : ph_match_has(m, "p0");
    if (np)
        ph_rw_bind_floats(rw, "params", np, p);
    ph_rw_bind_string(rw, "act", ph_node_op_type(ph_match_root(m)));
    return ph_rw_done(rw);
}

static const ph_rule rules[] = {
    {"conv_act",
     "c = Conv(x:float32, w, b?)\n"
     "( y = Relu|Sigmoid|Tanh(c) | y = LeakyRelu(c) {alpha(0.01)=$p0}\n"
     "| y = HardSigmoid(c) {alpha(0.2)=$p0, beta(0.5)=$p1}\n"
     "| y = Clip(c, lo?:scalar:float32, hi?:scalar:float32) {min?=$p0, max?=$p1} )\n"
     "=>\n"
     "y = FusedConv@com.microsoft(x, w, b?) like c {activation=$act, activation_params=$params}",
     NULL, fuse},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_conv_activation",
    .summary = "Conv + Relu/LeakyRelu/Sigmoid/Tanh/Clip/HardSigmoid -> com.microsoft FusedConv (float)",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 1,
    .exactness = PH_FP,
    .targets = "ort",
    .rules = rules)
