/* sdk/src/eval/eval_ops_unary.c - elementwise unary kernels: math functions and
 * activations (float, double; halves via the core), plus integer forms of
 * Neg Abs Relu Sign Clip, and Not IsNaN IsInf.
 *
 * Each op accepts the dtypes its opset-17 schema allows (uops[].types;
 * bfloat16 wherever float16 is, uint64 nowhere), judged on the dtype input 0
 * had before the core converted halves; integer Erf and Shrink are not
 * supported.
 *
 * One loop per (op, float type) is generated from an expression by the
 * UNARY macro; <tgmath.h> picks the float or double libm function from the
 * element type, so float32 is computed in float32 like ONNX Runtime does. */
#include <string.h>
#include <tgmath.h>

#include "eval_ops_util.h"

typedef struct uprm {
    double alpha, beta; /* op-specific attributes (see prm_of) */
    int64_t lo, hi;     /* Clip on integers: the bounds, exactly */
    int approx;         /* Gelu: 1 = tanh approximation */
} uprm;

typedef void (*ufn)(void *o, const void *x, size_t n, const uprm *p);

#define UNARY(NAME, EXPR)                                                                 \
    static void NAME##_f(void *o_, const void *x_, size_t n, const uprm *p)              \
    {                                                                                     \
        float *o = o_;                                                                    \
        const float *x = x_;                                                              \
        for (size_t i = 0; i < n; i++) {                                                  \
            float v = x[i];                                                               \
            o[i] = (float)(EXPR);                                                         \
        }                                                                                 \
    }                                                                                     \
    static void NAME##_d(void *o_, const void *x_, size_t n, const uprm *p)              \
    {                                                                                     \
        double *o = o_;                                                                   \
        const double *x = x_;                                                             \
        for (size_t i = 0; i < n; i++) {                                                  \
            double v = x[i];                                                              \
            o[i] = (EXPR);                                                                \
        }                                                                                 \
    }

#define SOFTPLUS(v) ((v) > 0 ? (v) + log1p(exp(-(v))) : log1p(exp(v)))

UNARY(neg, -v)
UNARY(abs, fabs(v))
UNARY(sqrt, sqrt(v))
UNARY(exp, exp(v))
UNARY(log, log(v))
UNARY(erf, erf(v))
UNARY(recip, 1 / v)
UNARY(floor, floor(v))
UNARY(ceil, ceil(v))
UNARY(round, nearbyint(v))
UNARY(relu, v > 0 ? v : 0 * v)
UNARY(leaky, v >= 0 ? v : p->alpha * v)
UNARY(sigmoid, v >= 0 ? 1 / (1 + exp(-v)) : exp(v) / (1 + exp(v)))
UNARY(hsig, fmax(0.0, fmin(1.0, p->alpha * v + p->beta)))
UNARY(hswish, v * fmax(0.0, fmin(1.0, v / 6.0 + 0.5)))
UNARY(tanh, tanh(v))
UNARY(selu, v > 0 ? p->beta * v : p->beta * (p->alpha * exp(v) - p->alpha))
UNARY(elu, v >= 0 ? (double)v : p->alpha * (exp(v) - 1))
UNARY(gelu, p->approx ? 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
                      : 0.5 * v * (1 + erf(v * 0.7071067811865476)))
UNARY(sin, sin(v))
UNARY(cos, cos(v))
UNARY(tan, tan(v))
UNARY(asin, asin(v))
UNARY(acos, acos(v))
UNARY(atan, atan(v))
UNARY(sinh, sinh(v))
UNARY(cosh, cosh(v))
UNARY(asinh, asinh(v))
UNARY(acosh, acosh(v))
UNARY(atanh, atanh(v))
UNARY(sign, v > 0 ? 1 : v < 0 ? -1 : v)
UNARY(softplus, SOFTPLUS(v))
UNARY(softsign, v / (1 + fabs(v)))
UNARY(celu, fmax(0.0, (double)v) + fmin(0.0, p->alpha * (exp(v / p->alpha) - 1)))
UNARY(thrrelu, v > p->alpha ? v : 0)
UNARY(mish, v * tanh(SOFTPLUS(v)))
UNARY(shrink, v < -p->beta ? v + p->alpha : v > p->beta ? v - p->alpha : 0)
/* Min(max, Max(x, min)): every value is max when min > max */
UNARY(clip, (v < p->alpha ? p->alpha : v) > p->beta ? p->beta : (v < p->alpha ? p->alpha : v))

typedef struct uop {
    ph_op op;
    ufn f, d;
    unsigned types; /* accepted dtypes: bit 1 << PH_DT_* */
} uop;

#define DT(T) (1u << PH_DT_##T)
#define FL (DT(FLOAT) | DT(DOUBLE) | DT(FLOAT16) | DT(BFLOAT16))
#define SI (DT(INT8) | DT(INT16) | DT(INT32) | DT(INT64))
#define UI (DT(UINT8) | DT(UINT16) | DT(UINT32))
#define U(OP, NAME, TYPES) {PH_OP_##OP, NAME##_f, NAME##_d, TYPES}
static const uop uops[] = {
    U(Neg, neg, FL | SI), U(Abs, abs, FL | SI | UI), U(Sqrt, sqrt, FL), U(Exp, exp, FL),
    U(Log, log, FL), U(Erf, erf, FL), U(Reciprocal, recip, FL), U(Floor, floor, FL),
    U(Ceil, ceil, FL), U(Round, round, FL), U(Relu, relu, FL | SI), U(LeakyRelu, leaky, FL),
    U(Sigmoid, sigmoid, FL), U(HardSigmoid, hsig, FL), U(HardSwish, hswish, FL), U(Tanh, tanh, FL),
    U(Selu, selu, FL), U(Elu, elu, FL), U(Gelu, gelu, FL), U(Sin, sin, FL), U(Cos, cos, FL),
    U(Tan, tan, FL), U(Asin, asin, FL), U(Acos, acos, FL), U(Atan, atan, FL), U(Sinh, sinh, FL),
    U(Cosh, cosh, FL), U(Asinh, asinh, FL), U(Acosh, acosh, FL), U(Atanh, atanh, FL),
    U(Sign, sign, FL | SI | UI), U(Softplus, softplus, FL), U(Softsign, softsign, FL),
    U(Celu, celu, DT(FLOAT)), U(ThresholdedRelu, thrrelu, FL), U(Mish, mish, FL),
    U(Shrink, shrink, FL), U(Clip, clip, FL | SI | UI),
};

/* Clip bounds: attributes before opset 11, optional scalar inputs after. */
static int clip_bounds(eval_kargs *a, int dt, uprm *p)
{
    p->alpha = -INFINITY;
    p->beta = INFINITY;
    p->lo = INT64_MIN;
    p->hi = INT64_MAX;
    if (a->opset < 11) {
        p->alpha = ph_node_attr_float(a->node, "min", -INFINITY);
        p->beta = ph_node_attr_float(a->node, "max", INFINITY);
        p->lo = eval_f64_to_i64(p->alpha);
        p->hi = eval_f64_to_i64(p->beta);
        return 0;
    }
    for (size_t k = 1; k <= 2; k++) {
        const ph_tensor *t = eval_in(a, k);
        if (!t)
            continue;
        const void *d;
        int rc = eval_need(a, k, &t, &d);
        if (rc)
            return rc;
        if (ph_tensor_numel(t) != 1)
            return eval_kfail(a, PH_EINVAL, "%s must be a scalar", k == 1 ? "min" : "max");
        if (ph_tensor_dtype(t) != dt)
            return eval_kfail(a, PH_EINVAL, "%s has dtype %s, input has %s", k == 1 ? "min" : "max",
                             ph_dtype_name(ph_tensor_dtype(t)), ph_dtype_name(dt));
        *(k == 1 ? &p->alpha : &p->beta) = eval_load_f64(d, dt, 0);
        *(k == 1 ? &p->lo : &p->hi) = eval_load_i64(d, dt, 0);
    }
    return 0;
}

static int prm_of(eval_kargs *a, int dt, uprm *p)
{
    const ph_node *n = a->node;
    p->alpha = p->beta = 0;
    p->lo = p->hi = 0;
    p->approx = 0;
    switch (ph_node_op(n)) {
    case PH_OP_LeakyRelu: p->alpha = ph_node_attr_float(n, "alpha", 0.01f); break;
    case PH_OP_HardSigmoid:
        p->alpha = ph_node_attr_float(n, "alpha", 0.2f);
        p->beta = ph_node_attr_float(n, "beta", 0.5f);
        break;
    case PH_OP_Selu:
        p->alpha = ph_node_attr_float(n, "alpha", 1.67326319217681884765625f);
        p->beta = ph_node_attr_float(n, "gamma", 1.05070102214813232421875f);
        break;
    case PH_OP_Elu: case PH_OP_Celu: p->alpha = ph_node_attr_float(n, "alpha", 1.0f); break;
    case PH_OP_ThresholdedRelu: p->alpha = ph_node_attr_float(n, "alpha", 1.0f); break;
    case PH_OP_Shrink:
        p->alpha = ph_node_attr_float(n, "bias", 0.0f);
        p->beta = ph_node_attr_float(n, "lambd", 0.5f);
        break;
    case PH_OP_Gelu: {
        const char *m = ph_node_attr_string(n, "approximate", "none");
        if (strcmp(m, "none") && strcmp(m, "tanh"))
            return eval_kfail(a, PH_EUNSUPPORTED, "approximate='%s' is not supported", m);
        p->approx = m[0] == 't';
        break;
    }
    case PH_OP_Clip: return clip_bounds(a, dt, p);
    default: break;
    }
    return 0;
}

/* Integer Neg Abs Relu Sign Clip (wrapping like two's complement). */
static void int_unary(ph_op op, void *o, const void *x, int dt, size_t n, const uprm *p)
{
    for (size_t i = 0; i < n; i++) {
        int64_t v = eval_load_i64(x, dt, i), r;
        switch (op) {
        case PH_OP_Neg: r = (int64_t)(0 - (uint64_t)v); break;
        case PH_OP_Abs: r = v < 0 ? (int64_t)(0 - (uint64_t)v) : v; break;
        case PH_OP_Relu: r = v > 0 ? v : 0; break;
        case PH_OP_Sign: r = (v > 0) - (v < 0); break;
        default: r = v < p->lo ? p->lo : v; r = r > p->hi ? p->hi : r; break; /* Clip */
        }
        eval_store_i64(o, dt, i, r);
    }
}

int eval_k_unary(eval_kargs *a)
{
    ph_op op = ph_node_op(a->node);
    const uop *u = NULL;
    for (size_t i = 0; i < sizeof uops / sizeof uops[0]; i++)
        if (uops[i].op == op)
            u = &uops[i];
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need(a, 0, &x, &xd);
    if (rc || !u)
        return rc ? rc : eval_kfail(a, PH_EUNSUPPORTED, "no unary kernel");
    int dt = ph_tensor_dtype(x), odt = dt == PH_DT_FLOAT && a->half ? a->half : dt;
    /* the float64 reference mode computes in double what the spec allows in float */
    int promoted = a->float64 && dt == PH_DT_DOUBLE && (u->types & (1u << PH_DT_FLOAT));
    if (odt < 0 || odt > PH_DT_BFLOAT16 || (!(u->types & (1u << odt)) && !promoted))
        return eval_kbad_dtype(a, "input", dt);
    uprm p;
    if ((rc = prm_of(a, dt, &p)) != 0)
        return rc;
    void *o;
    if ((rc = eval_out(a, 0, dt, ph_tensor_rank(x), ph_tensor_dims(x), &o)) != 0 || !o)
        return rc;
    size_t n = (size_t)ph_tensor_numel(x);
    if (dt == PH_DT_FLOAT)
        u->f(o, xd, n, &p);
    else if (dt == PH_DT_DOUBLE)
        u->d(o, xd, n, &p);
    else
        int_unary(op, o, xd, dt, n, &p);
    return 0;
}

/* Not (bool), IsNaN and IsInf (float -> bool). */
int eval_k_predicate(eval_kargs *a)
{
    ph_op op = ph_node_op(a->node);
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need(a, 0, &x, &xd);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x);
    if (op == PH_OP_Not ? dt != PH_DT_BOOL : !eval_dt_float(dt))
        return eval_kbad_dtype(a, "input", dt);
    if (op == PH_OP_IsInf && a->half && a->opset < 20) /* halves from opset 20 */
        return eval_kbad_dtype(a, "input", dt);
    uint8_t *o;
    if ((rc = eval_out(a, 0, PH_DT_BOOL, ph_tensor_rank(x), ph_tensor_dims(x), (void **)&o)) != 0 || !o)
        return rc;
    size_t n = (size_t)ph_tensor_numel(x);
    int neg = (int)ph_node_attr_int(a->node, "detect_negative", 1);
    int pos = (int)ph_node_attr_int(a->node, "detect_positive", 1);
    for (size_t i = 0; i < n; i++) {
        if (op == PH_OP_Not) {
            o[i] = !((const uint8_t *)xd)[i];
            continue;
        }
        double v = eval_load_f64(xd, dt, i);
        o[i] = op == PH_OP_IsNaN ? v != v : (isinf(v) && (v > 0 ? pos : neg));
    }
    return 0;
}
