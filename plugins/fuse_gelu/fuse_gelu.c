/* fuse_gelu - the GELU subgraphs exporters write become one Gelu node
 * (adapt stage, target ort).
 *
 * Requires: x known to be float32 (ORT's CPU Gelu/FastGelu kernels), and
 *   - the Erf form x * 0.5 * (1 + Erf(x / sqrt(2))) (or x * 1/sqrt(2)), or
 *   - the Tanh form x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
 *     with x^3 as Pow(x, 3) (exactly 3) or x * (x * x);
 *   the 0.5 multiplied last, into x first, or into (1 + ...); or no 0.5 at
 *   all, x * (1 + ...): what remains when the optimize stage folded the 0.5
 *   into the next MatMul, unless a Mul by 0.5 reads it (then the form with
 *   the 0.5 matches there, or nothing does).
 *   Every constant is within 1e-4 (relative) and does not widen x (fits).
 * Changes: the subgraph becomes, at default opset >= 20, the default-domain
 *   Gelu (approximate "none" or "tanh"); below, com.microsoft Gelu (Erf form)
 *   or FastGelu (Tanh form), and the model imports com.microsoft version 1.
 *   Without the 0.5: Mul(Gelu(x), 2).  The Gelu keeps the root Mul's name.
 * Exact: fp (one kernel evaluates the same formula; the constants exporters
 *   write are the float roundings of the exact ones; scaling by 2 is exact).
 */
#include <passhost/passhost.h>

static int fuse(ph_rewriter *rw, const ph_match *m)
{
    int onnx = ph_rw_opset(rw) >= 20, tanh_form = !ph_match_node(m, "e");
    ph_value *x = ph_match_value(m, "x");
    ph_node *n = ph_rw_node(rw, onnx ? "Gelu" : tanh_form ? "FastGelu@com.microsoft" : "Gelu@com.microsoft", 1, &x, 1);
    if (onnx)
        ph_node_set_attr_string(n, "approximate", tanh_form ? "tanh" : "none");
    ph_node_set_name(n, ph_node_name(ph_match_root(m)));
    ph_value *out = ph_node_output(n, 0);
    if (!ph_match_value(m, "h")) { /* x * (1 + ...) is twice the GELU */
        ph_value_copy_type(out, ph_match_value(m, "y"));
        ph_value *in[2] = {out, ph_rw_constant(rw, "gelu_two", NULL, PH_DT_FLOAT, 0, NULL, 2.0)};
        out = ph_rw_op(rw, "Mul", 2, in);
    }
    return ph_rw_replace_root(rw, out);
}

static const ph_rule rules[] = {
    {"gelu",
     "( ( d = Div(x:float32, k:scalar~1.41421356:fits(x)) | d = Mul(x:float32, k:scalar~0.70710678:fits(x)) )\n"
     "  e = Erf(d); a = Add(e, one:scalar~1:fits(x))\n"
     "| ( c = Pow(x:float32, three:scalar=3:fits(x)) | xx = Mul(x:float32, x); c = Mul(x, xx) )\n"
     "  q = Mul(c, kappa:scalar~0.044715:fits(x)); s = Add(x, q); u = Mul(s, beta:scalar~0.79788456:fits(x))\n"
     "  t = Tanh(u); a = Add(t, one:scalar~1:fits(x)) )\n"
     "( xa = Mul(x, a); y = Mul(xa, h:scalar~0.5:fits(x))\n"
     "| hx = Mul(x, h:scalar~0.5:fits(x)); y = Mul(hx, a)\n"
     "| ha = Mul(a, h:scalar~0.5:fits(x)); y = Mul(x, ha)\n"
     "| y = Mul(x, a); !Mul(y, _:scalar~0.5) )",
     NULL, fuse},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_gelu",
    .summary = "Erf-form and Tanh-form GELU subgraphs -> Gelu (opset >= 20), else com.microsoft Gelu/FastGelu",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 1,
    .exactness = PH_FP,
    .targets = "ort",
    .rules = rules)
