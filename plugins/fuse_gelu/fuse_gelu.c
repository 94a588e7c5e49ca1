/* fuse_gelu - the GELU subgraphs exporters write become one Gelu node
 * (adapt stage, target ort).
 *
 * Requires: x known to be float (ORT's CPU Gelu/FastGelu kernels are float
 *   only) and one of
 *   - the Erf form  x * 0.5 * (1 + Erf(x / sqrt(2))): Div by sqrt(2) or Mul by
 *     1/sqrt(2); the 0.5 multiplied last, into x first, or into (1 + Erf);
 *   - the Tanh form x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))):
 *     x^3 as Pow(x, 3) (exactly 3) or x * (x * x); the 0.5 as above;
 *   - either form without the 0.5, x * (1 + ...), which is what remains when
 *     the optimize stage folded the 0.5 into the next MatMul's weight
 *     (fuse_mul_into_matmul), unless its only reader multiplies it by 0.5
 *     (then the form with the 0.5 matches there).
 *   Every constant is a one-element float initializer within 1e-4 (relative)
 *   of its value and of rank at most x's (so it broadcasts nothing); every
 *   intermediate value is read only inside the subgraph and is no graph
 *   output (the engine checks that).
 * Changes: the subgraph becomes, at default opset >= 20, the default-domain
 *   Gelu (approximate "none" or "tanh"); below, com.microsoft Gelu (Erf form)
 *   or FastGelu (Tanh form), and the model imports com.microsoft version 1.
 *   Without the 0.5: Mul(Gelu(x), 2).  Main graph and every If/Loop/Scan body.
 * Exact: fp (one kernel evaluates the same formula; the constants exporters
 *   write are the float roundings of the exact ones; scaling by 2 is exact).
 */
#include <math.h>
#include <passhost/passhost.h>

/* Constant `name` of the match is a float within 1e-4 of want (when exact:
 * of any numeric dtype and exactly want) and of rank <= x's. */
static int near(const ph_match *m, const char *name, double want, int exact)
{
    const ph_tensor *t = ph_match_const(m, name);
    double v;
    if (!t || (!exact && ph_tensor_dtype(t) != PH_DT_FLOAT) ||
        (ph_tensor_rank(t) > 0 && (int)ph_tensor_rank(t) > ph_value_rank(ph_match_value(m, "x"))) ||
        ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), &v))
        return 0;
    return exact ? v == want : fabs(v - want) <= 1e-4 * fabs(want);
}

/* The result's only reader multiplies it by a one-element float 0.5. */
static int half_follows(const ph_match *m)
{
    ph_value *y = ph_match_value(m, "y");
    ph_node *c = ph_value_sole_consumer(y);
    if (!c || ph_node_op(c) != PH_OP_Mul || ph_node_input_count(c) != 2)
        return 0;
    const ph_tensor *t = ph_value_const(ph_node_input(c, ph_node_input(c, 0) == y));
    double v;
    return t && ph_tensor_numel(t) == 1 && ph_tensor_dtype(t) == PH_DT_FLOAT &&
           !ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), &v) && fabs(v - 0.5) <= 5e-5;
}

/* The 0.5 is there and right, or the rule has none and none follows. */
static int half_ok(const ph_match *m)
{
    return ph_match_value(m, "h") ? near(m, "h", 0.5, 0) : !half_follows(m);
}

static int erf_ok(const ph_match *m, const ph_params *p)
{
    int div = ph_node_op(ph_match_node(m, "d")) == PH_OP_Div;
    return near(m, "k", div ? sqrt(2.0) : sqrt(0.5), 0) && near(m, "one", 1.0, 0) && half_ok(m);
}

static int tanh_ok(const ph_match *m, const ph_params *p)
{
    return (!ph_match_value(m, "three") || near(m, "three", 3.0, 1)) && near(m, "kappa", 0.044715, 0) &&
           near(m, "beta", sqrt(2.0 / M_PI), 0) && near(m, "one", 1.0, 0) && half_ok(m);
}

static int fuse(ph_rewriter *rw, const ph_match *m, int tanh_form)
{
    ph_model *model = ph_graph_model(ph_rw_graph(rw));
    int onnx = ph_model_opset(model, "") >= 20;
    ph_value *x = ph_match_value(m, "x"), *y = ph_match_value(m, "y");
    ph_node *n = ph_rw_node(rw, onnx ? "Gelu" : tanh_form ? "FastGelu@com.microsoft" : "Gelu@com.microsoft", 1,
                            &x, 1);
    ph_value *out = n ? ph_node_output(n, 0) : NULL;
    if (!n || (onnx && ph_node_set_attr_string(n, "approximate", tanh_form ? "tanh" : "none") < 0) ||
        ph_value_copy_type(out, y) < 0)
        return PH_ENOMEM;
    if (!ph_match_value(m, "h")) { /* x * (1 + ...) is twice the GELU */
        double two = 2.0;
        ph_value *in[2] = {out, ph_rw_initializer(rw, "gelu_two", ph_tensor_from_f64(PH_DT_FLOAT, 0, NULL, &two))};
        if (!in[1] || !(out = ph_rw_op(rw, "Mul", 2, in)) || ph_value_copy_type(out, y) < 0)
            return PH_ENOMEM;
    }
    if (ph_rw_replace(rw, y, out) < 0)
        return PH_ENOMEM;
    return onnx || ph_model_require_opset(model, "com.microsoft", 1) == 0 ? 1 : PH_ENOMEM;
}

static int fuse_erf(ph_rewriter *rw, const ph_match *m) { return fuse(rw, m, 0); }
static int fuse_tanh(ph_rewriter *rw, const ph_match *m) { return fuse(rw, m, 1); }

/* 1 + Erf(x / sqrt 2) or 1 + Tanh(sqrt(2/pi) * (x + 0.044715 x^3)) as `a` */
#define ERF "d = Div|Mul(x:float32, k:scalar)\ne = Erf(d)\na = Add(e, one:scalar)\n"
#define CUBE_POW "c = Pow(x:float32, three:scalar)\n"
#define CUBE_MUL "xx = Mul(x:float32, x)\nc = Mul(x, xx)\n"
#define TANH "q = Mul(c, kappa:scalar)\ns = Add(x, q)\nu = Mul(s, beta:scalar)\nt = Tanh(u)\na = Add(t, one:scalar)\n"
/* x * a * 0.5 with the 0.5 last, on x, or on a */
#define HALF_LAST "xa = Mul(x, a)\ny = Mul(xa, h:scalar)"
#define HALF_X "hx = Mul(x, h:scalar)\ny = Mul(hx, a)"
#define HALF_A "ha = Mul(a, h:scalar)\ny = Mul(x, ha)"
#define NO_HALF "y = Mul(x, a)"

static const ph_rule rules[] = {
    {"erf_half_last", ERF HALF_LAST, erf_ok, fuse_erf},
    {"erf_half_x", ERF HALF_X, erf_ok, fuse_erf},
    {"erf_half_a", ERF HALF_A, erf_ok, fuse_erf},
    {"tanh_pow_half_last", CUBE_POW TANH HALF_LAST, tanh_ok, fuse_tanh},
    {"tanh_pow_half_x", CUBE_POW TANH HALF_X, tanh_ok, fuse_tanh},
    {"tanh_pow_half_a", CUBE_POW TANH HALF_A, tanh_ok, fuse_tanh},
    {"tanh_mul_half_last", CUBE_MUL TANH HALF_LAST, tanh_ok, fuse_tanh},
    {"tanh_mul_half_x", CUBE_MUL TANH HALF_X, tanh_ok, fuse_tanh},
    {"tanh_mul_half_a", CUBE_MUL TANH HALF_A, tanh_ok, fuse_tanh},
    {"erf_no_half", ERF NO_HALF, erf_ok, fuse_erf},
    {"tanh_pow_no_half", CUBE_POW TANH NO_HALF, tanh_ok, fuse_tanh},
    {"tanh_mul_no_half", CUBE_MUL TANH NO_HALF, tanh_ok, fuse_tanh},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_gelu",
    .summary = "Erf-form and Tanh-form GELU subgraphs -> Gelu (opset >= 20), else com.microsoft Gelu/FastGelu",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 1,
    .exactness = PH_FP,
    .targets = "ort",
    .rules = rules)
