/* fuse_conv_activation - Conv followed by an activation becomes one ONNX
 * Runtime com.microsoft FusedConv (adapt stage, target ort).
 *
 * Requires: a default-domain Conv whose input is known to be float (ORT's
 *   CPU FusedConv kernel is float only), feeding only one of
 *     Relu, Sigmoid, Tanh                       (no parameters),
 *     LeakyRelu(alpha), HardSigmoid(alpha, beta) (attributes, ONNX defaults),
 *     Clip with constant bounds: the attributes min/max before opset 11, one-
 *       element float constant inputs from opset 11; an omitted bound is the
 *       lowest/highest finite float, as ONNX Runtime's Clip kernels take it;
 *       min <= max (not NaN).
 *   The Conv output must not be a graph output (the engine checks both).
 * Changes: y = Act(Conv(x, W[, B])) becomes y = FusedConv(x, W[, B]) with the
 *   Conv's name and attributes, activation = the activation's op name and
 *   activation_params = [alpha] | [alpha, beta] | [min, max]; the model imports
 *   com.microsoft version 1.  Main graph and every If/Loop/Scan body.
 * Exact: fp (ORT applies the same activation inside its Conv kernel).
 */
#include <float.h>

#include <passhost/passhost.h>

/* Clip's bounds into p[0], p[1]; 0 when they are not constants we can read,
 * or min > max (ONNX Runtime refuses that Clip; the fused node would not). */
static int clip_bounds(const ph_match *m, const ph_node *clip, float p[2])
{
    if (ph_node_opset(clip) < 11) {
        p[0] = ph_node_attr_float(clip, "min", -FLT_MAX);
        p[1] = ph_node_attr_float(clip, "max", FLT_MAX);
        return p[0] <= p[1];
    }
    static const char *const names[2] = {"lo", "hi"};
    for (int i = 0; i < 2; i++) {
        const ph_tensor *t = ph_match_const(m, names[i]);
        double v;
        if (ph_match_value(m, names[i]) && (!t || ph_tensor_dtype(t) != PH_DT_FLOAT ||
                                            ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), &v)))
            return 0;
        p[i] = t ? (float)v : i ? FLT_MAX : -FLT_MAX;
    }
    return p[0] <= p[1];
}

static int fuse(ph_rewriter *rw, const ph_match *m)
{
    ph_node *act = ph_match_root(m);
    float p[2];
    size_t np = 0;
    switch (ph_node_op(act)) {
    case PH_OP_LeakyRelu:
        p[np++] = ph_node_attr_float(act, "alpha", 0.01f);
        break;
    case PH_OP_HardSigmoid:
        p[np++] = ph_node_attr_float(act, "alpha", 0.2f);
        p[np++] = ph_node_attr_float(act, "beta", 0.5f);
        break;
    case PH_OP_Clip:
        if (!clip_bounds(m, act, p))
            return 0;
        np = 2;
        break;
    default:
        break;
    }
    ph_value *b = ph_match_value(m, "b"), *in[3] = {ph_match_value(m, "x"), ph_match_value(m, "w"), b};
    ph_node *fc = ph_rw_clone(rw, ph_match_node(m, "c"), "FusedConv@com.microsoft", b ? 3 : 2, in);
    if (!fc || ph_node_set_attr_string(fc, "activation", ph_node_op_type(act)) < 0 ||
        (np && ph_node_set_attr_floats(fc, "activation_params", np, p) < 0) ||
        ph_value_copy_type(ph_node_output(fc, 0), ph_match_value(m, "y")) < 0 ||
        ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(fc, 0)) < 0)
        return PH_ENOMEM;
    return ph_model_require_opset(ph_graph_model(ph_rw_graph(rw)), "com.microsoft", 1) < 0 ? PH_ENOMEM : 1;
}

#define CONV "c = Conv(x:float32, w, b?)\n"
static const ph_rule rules[] = {
    {"conv_act", CONV "y = Relu|LeakyRelu|Sigmoid|Tanh|HardSigmoid(c)", NULL, fuse},
    {"conv_clip", CONV "y = Clip(c, lo?:scalar, hi?:scalar)", NULL, fuse},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_conv_activation",
    .summary = "Conv + Relu/LeakyRelu/Sigmoid/Tanh/Clip/HardSigmoid -> com.microsoft FusedConv (float)",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 1,
    .exactness = PH_FP,
    .targets = "ort",
    .rules = rules)
