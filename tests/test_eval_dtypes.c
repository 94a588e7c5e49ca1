/* tests/test_eval_dtypes.c - a sweep of the reference evaluator (ph_eval_node)
 * over operators x dtypes: float32, float64, float16, int8, int16, int32,
 * int64, uint8 and bool.
 *
 * Every (op, dtype) pair is one of three kinds:
 *  - allowed by the type constraints of the ONNX opset-17 schema (the `spec`
 *    masks below, copied from onnx.defs.get_schema(op, 17)): the evaluator
 *    must compute it, and every element must match a reference computed here
 *    in double precision from the same inputs and rounded to the dtype with
 *    ONNX semantics: exact for integers (wrapping, Div truncating toward
 *    zero, Mod with fmod=0 taking the divisor's sign) and bool, 8 ulp for
 *    float and double, 1 ulp of half for float16 (computed in float);
 *  - allowed by the schema but documented as unsupported (the `unsup`
 *    masks, each with its reason): PH_EUNSUPPORTED, the message naming the
 *    op and the dtype;
 *  - not allowed by the schema: PH_EUNSUPPORTED or PH_EINVAL (the message
 *    naming the op, and the dtype for PH_EUNSUPPORTED), never a value.
 * Shapes: broadcasting ([2,3] with [3], with a scalar, [3] with [2,3], [2,1]
 * with [3]), scalars, empty tensors ([0,3] with [3]) and negative axes.
 * Data-movement ops only move bytes, so every dtype must work; their
 * expected outputs are hand-computed lists of input element ids.
 *
 * Problems are collected and reported together at the end of each test (one
 * line each, also on stderr), so one run shows every wrong (op, dtype).
 */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/host.h"
#include "passhost/passhost.h"

/* ------------------------------------------------------------ dtypes */

enum { F32, F64, F16, I8, I16, I32, I64, U8, BOOL, NDT };
static const int dts[NDT] = {PH_DT_FLOAT, PH_DT_DOUBLE, PH_DT_FLOAT16, PH_DT_INT8, PH_DT_INT16,
                             PH_DT_INT32, PH_DT_INT64, PH_DT_UINT8, PH_DT_BOOL};

#define B(k) (1u << (k))
#define M_FLOAT (B(F32) | B(F64) | B(F16))
#define M_SINT (B(I8) | B(I16) | B(I32) | B(I64))
#define M_INT (M_SINT | B(U8))
#define M_NUM (M_FLOAT | M_INT)
#define M_ALL (M_NUM | B(BOOL))
/* Pow's base, PRelu; ReduceSum/Mean/Prod/L1/L2/...; ReduceMax/Min */
#define M_F_I32_I64 (M_FLOAT | B(I32) | B(I64))
#define M_RMAX (M_F_I32_I64 | B(I8) | B(U8))

static int is_sint(int k) { return k == I8 || k == I16 || k == I32 || k == I64; }
static int is_int(int k) { return is_sint(k) || k == U8; }
static const char *dname(int k) { return ph_dtype_name(dts[k]); }

static int kof(int dt)
{
    for (int k = 0; k < NDT; k++)
        if (dts[k] == dt)
            return k;
    return -1;
}

static int bits_of(int k) { return k == I8 || k == U8 ? 8 : k == I16 ? 16 : k == I32 ? 32 : 64; }

/* The smallest and largest value of an integer dtype (int64: +-2^62, which
 * double holds exactly). */
static double int_min(int k) { return k == U8 ? 0 : k == I64 ? -0x1p62 : -ldexp(1, bits_of(k) - 1); }
static double int_max(int k) { return k == U8 ? 255 : k == I64 ? 0x1p62 : ldexp(1, bits_of(k) - 1) - 1; }
/* The true limits, for empty reductions. */
static double true_min(int k) { return k == I64 ? -0x1p63 : int_min(k); }
static double true_max(int k) { return k == I64 ? 0x1p63 : int_max(k); } /* INT64_MAX as read back */

/* r truncated and wrapped into integer dtype k (two's complement). */
static double wrap(int k, double r)
{
    double m = ldexp(1, bits_of(k));
    r = trunc(r);
    if (k == U8 ? r >= 0 && r < m : r >= -m / 2 && r < m / 2)
        return r; /* in range (int64: r + m would lose the low bits) */
    r = fmod(r, m);
    if (r < 0)
        r += m;
    if (k != U8 && r >= m / 2)
        r -= m;
    return r;
}

/* IEEE half, round to nearest even, straight from double. */
static uint16_t half_of(double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    if (isnan(v))
        return 0x7e00;
    v = fabs(v);
    if (v >= 65520.0)
        return sign | 0x7c00;
    if (v < 0x1p-14)
        return (uint16_t)(sign | (uint16_t)nearbyint(v * 0x1p24)); /* 1024 carries into the exponent */
    int e;
    double q = nearbyint(frexp(v, &e) * 2048.0); /* v = q * 2^(e-11), q in [1024, 2048] */
    if (q == 2048) {
        q = 1024;
        e++;
    }
    if (e + 14 >= 31)
        return sign | 0x7c00;
    return (uint16_t)(sign | (uint16_t)((e + 14) << 10) | (uint16_t)((int)q - 1024));
}

static double half_val(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

static void put(void *p, int k, size_t i, double v)
{
    switch (k) {
    case F32: ((float *)p)[i] = (float)v; break;
    case F64: ((double *)p)[i] = v; break;
    case F16: ((uint16_t *)p)[i] = half_of(v); break;
    case I8: ((int8_t *)p)[i] = (int8_t)(int64_t)v; break;
    case I16: ((int16_t *)p)[i] = (int16_t)(int64_t)v; break;
    case I32: ((int32_t *)p)[i] = (int32_t)(int64_t)v; break;
    case I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case U8: ((uint8_t *)p)[i] = (uint8_t)(int64_t)v; break;
    default: ((uint8_t *)p)[i] = v != 0; break;
    }
}

static double get(const ph_tensor *t, size_t i)
{
    const void *p = ph_tensor_data(t);
    switch (kof(ph_tensor_dtype(t))) {
    case F32: return ((const float *)p)[i];
    case F64: return ((const double *)p)[i];
    case F16: return half_val(((const uint16_t *)p)[i]);
    case I8: return ((const int8_t *)p)[i];
    case I16: return ((const int16_t *)p)[i];
    case I32: return ((const int32_t *)p)[i];
    case I64: return (double)((const int64_t *)p)[i];
    case U8: return ((const uint8_t *)p)[i];
    case BOOL: return ((const uint8_t *)p)[i];
    default: ck_abort_msg("dtype %d", ph_tensor_dtype(t)); return 0;
    }
}

/* A tensor of dtype index k from doubles (the first numel of vals). */
static ph_tensor *mk(int k, size_t rank, const int64_t *dims, const double *vals)
{
    int64_t n = 1;
    for (size_t i = 0; i < rank; i++)
        n *= dims[i];
    void *buf = calloc((size_t)n + 1, 8);
    ck_assert_ptr_nonnull(buf);
    for (int64_t i = 0; i < n; i++)
        put(buf, k, (size_t)i, vals[i]);
    ph_tensor *t = ph_tensor_new(dts[k], rank, dims, buf);
    free(buf);
    ck_assert_ptr_nonnull(t);
    return t;
}

static ph_tensor *ints64(size_t n, const int64_t *v)
{
    int64_t d = (int64_t)n;
    ph_tensor *t = ph_tensor_new(PH_DT_INT64, 1, &d, v);
    ck_assert_ptr_nonnull(t);
    return t;
}

static ph_tensor *ints32(size_t n, const int32_t *v)
{
    int64_t d = (int64_t)n;
    ph_tensor *t = ph_tensor_new(PH_DT_INT32, 1, &d, v);
    ck_assert_ptr_nonnull(t);
    return t;
}

#define L(...) ((const int64_t[]){__VA_ARGS__})
#define NL(...) (sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define I64S(...) ints64(NL(__VA_ARGS__), L(__VA_ARGS__))

static void shape_str(char *buf, size_t cap, const ph_tensor *t)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (size_t i = 0; i < ph_tensor_rank(t) && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)ph_tensor_dim(t, i));
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

/* ------------------------------------------------------------ problems */

static char g_log[3000];
static size_t g_len;
static int g_fails;

static void note(const char *fmt, ...) PH_PRINTF(1, 2);
static void note(const char *fmt, ...)
{
    char line[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "  %s\n", line);
    size_t n = strlen(line);
    if (g_len + n + 2 < sizeof g_log) {
        memcpy(g_log + g_len, line, n);
        g_len += n;
        g_log[g_len++] = '\n';
        g_log[g_len] = 0;
    }
    g_fails++;
}

static void sweep_done(const char *what, int cases)
{
    fprintf(stderr, "%s: %d cases, %d problems\n", what, cases, g_fails);
    ck_assert_msg(g_fails == 0, "%d problem(s):\n%s", g_fails, g_log);
}

/* ------------------------------------------------------------ one node */

enum { A_END, A_INT, A_FLOAT, A_INTS, A_STR };
typedef struct attr {
    const char *name;
    int kind;
    int64_t i;
    float f;
    const int64_t *ints;
    size_t n;
    const char *s;
} attr;
#define AI(nm, v) {nm, A_INT, v, 0, NULL, 0, NULL}
#define AF(nm, v) {nm, A_FLOAT, 0, v, NULL, 0, NULL}
#define AS(nm, v) {nm, A_STR, 0, 0, NULL, 0, v}
#define AIS(nm, ...) {nm, A_INTS, 0, 0, L(__VA_ARGS__), NL(__VA_ARGS__), NULL}

/* Build a one-node model (inputs are graph inputs typed like the tensors;
 * NULL tensors are omitted inputs), run ph_eval_node, free the model. */
static int eval(const char *op, int64_t opset, const attr *at, size_t n_in, ph_tensor *const *in,
                size_t n_out, ph_tensor **out, ph_error *err)
{
    ph_model *m = ph_model_new(opset);
    ck_assert_ptr_nonnull(m);
    ph_graph *g = ph_model_graph(m);
    ph_value *v[8] = {0};
    ck_assert(n_in <= 8);
    for (size_t i = 0; i < n_in; i++) {
        if (!in[i])
            continue;
        char name[16];
        snprintf(name, sizeof name, "x%zu", i);
        v[i] = ph_graph_add_input(g, name, ph_tensor_dtype(in[i]), (int)ph_tensor_rank(in[i]),
                                  ph_tensor_dims(in[i]));
        ck_assert_ptr_nonnull(v[i]);
    }
    ph_node *n = ph_node_create(g, NULL, op, n_in, v, n_out);
    ck_assert_ptr_nonnull(n);
    for (; at && at->name; at++) {
        int rc = at->kind == A_INT     ? ph_node_set_attr_int(n, at->name, at->i)
                 : at->kind == A_FLOAT ? ph_node_set_attr_float(n, at->name, at->f)
                 : at->kind == A_STR   ? ph_node_set_attr_string(n, at->name, at->s)
                                       : ph_node_set_attr_ints(n, at->name, at->n, at->ints);
        ck_assert_int_eq(rc, 0);
    }
    for (size_t i = 0; i < n_out; i++)
        out[i] = (ph_tensor *)0x1; /* must be overwritten */
    err->code = 0;
    err->message[0] = 0;
    int rc = ph_eval_node(n, opset, (const ph_tensor *const *)in, out, err);
    ph_model_free(m);
    for (size_t i = 0; i < n_out; i++)
        if (out[i] == (ph_tensor *)0x1) {
            note("%s: output %zu was never set (rc %d)", op, i, rc);
            out[i] = NULL;
        }
    return rc;
}

static void free_all(ph_tensor **t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ph_tensor_free(t[i]);
        t[i] = NULL;
    }
}

enum { MUST, UNSUP, REJECT };

static int want_of(unsigned spec, unsigned unsup, int k)
{
    return !(spec & B(k)) ? REJECT : (unsup & B(k)) ? UNSUP : MUST;
}

/* Check rc against what is wanted.  Returns 1 when outputs are there to be
 * compared (MUST and success); frees outputs otherwise. */
static int outcome(const char *what, const char *op, int k, int want, int rc, const ph_error *err,
                   ph_tensor **out, size_t n_out)
{
    if (want == MUST) {
        if (rc != 0) {
            note("%s: failed (%d): %s", what, rc, err->message);
            free_all(out, n_out);
            return 0;
        }
        for (size_t i = 0; i < n_out; i++)
            if (!out[i]) {
                note("%s: output %zu missing", what, i);
                free_all(out, n_out);
                return 0;
            }
        return 1;
    }
    if (rc == 0) {
        note("%s: gave a value; expected %s", what,
             want == UNSUP ? "PH_EUNSUPPORTED" : "an error (the spec does not allow it)");
        free_all(out, n_out);
        return 0;
    }
    if (want == UNSUP && rc != PH_EUNSUPPORTED)
        note("%s: rc %d, expected PH_EUNSUPPORTED: %s", what, rc, err->message);
    if (want == REJECT && rc != PH_EUNSUPPORTED && rc != PH_EINVAL)
        note("%s: rc %d, expected PH_EUNSUPPORTED or PH_EINVAL: %s", what, rc, err->message);
    if (!strstr(err->message, op))
        note("%s: message does not name the op: %s", what, err->message);
    if (rc == PH_EUNSUPPORTED && k >= 0 && !strstr(err->message, dname(k)))
        note("%s: message does not name dtype %s: %s", what, dname(k), err->message);
    for (size_t i = 0; i < n_out; i++)
        if (out[i]) {
            note("%s: output %zu left after an error", what, i);
            ph_tensor_free(out[i]);
            out[i] = NULL;
        }
    return 0;
}

/* Is got what dtype k should hold for the exact result r?  NaN or infinite
 * r for an integer dtype is undefined and not checked. */
static int close_to(int k, double got, double r)
{
    if (k == BOOL)
        return isnan(r) || got == (r != 0);
    if (is_int(k) && (isnan(r) || isinf(r)))
        return 1;
    if (k == I64 && fabs(r) >= 0x1p62) /* int64 extremes as doubles: no wrapping */
        return got == r;
    if (is_int(k))
        return got == wrap(k, r);
    if (isnan(r))
        return isnan(got);
    double w = k == F16 ? half_val(half_of(r)) : k == F32 ? (double)(float)r : r;
    if (isinf(w))
        return got == w;
    if (isnan(got) || isinf(got))
        return 0;
    int e = r == 0 ? -10000 : ilogb(r);
    double tol = k == F16 ? ldexp(1, (e < -14 ? -14 : e) - 10)
                 : k == F32 ? 8 * ldexp(1, (e < -126 ? -126 : e) - 23)
                            : 8 * ldexp(1, (e < -1022 ? -1022 : e) - 52);
    return fabs(got - r) <= tol;
}

/* Compare t (dtype index k, shape rank/dims) against exact results r. */
static void compare(const char *what, const ph_tensor *t, int k, size_t rank, const int64_t *dims,
                    const double *r)
{
    if (ph_tensor_dtype(t) != dts[k]) {
        note("%s: dtype %s, expected %s", what, ph_dtype_name(ph_tensor_dtype(t)), dname(k));
        return;
    }
    int shape_ok = ph_tensor_rank(t) == rank;
    for (size_t i = 0; shape_ok && i < rank; i++)
        shape_ok = ph_tensor_dim(t, i) == dims[i];
    if (!shape_ok) {
        char s[80];
        shape_str(s, sizeof s, t);
        note("%s: shape %s, expected rank %zu", what, s, rank);
        return;
    }
    for (int64_t i = 0; i < ph_tensor_numel(t); i++) {
        double g = get(t, (size_t)i);
        if (!close_to(k, g, r[i])) {
            note("%s: element %lld is %.10g, expected %.10g", what, (long long)i, g,
                 is_int(k) && !isnan(r[i]) && !isinf(r[i]) ? wrap(k, r[i]) : r[i]);
            return;
        }
    }
}

/* ------------------------------------------------------------ broadcasting reference */

typedef struct bshape {
    size_t rank;
    int64_t dims[8];
    int64_t numel;
} bshape;

static int bcast(size_t n, ph_tensor *const *ts, bshape *b)
{
    b->rank = 0;
    for (size_t j = 0; j < n; j++)
        if (ph_tensor_rank(ts[j]) > b->rank)
            b->rank = ph_tensor_rank(ts[j]);
    b->numel = 1;
    for (size_t i = 0; i < b->rank; i++) {
        int64_t d = 1;
        for (size_t j = 0; j < n; j++) {
            size_t rj = ph_tensor_rank(ts[j]);
            int64_t dj = i + rj >= b->rank ? ph_tensor_dim(ts[j], i + rj - b->rank) : 1;
            if (dj == 1 || dj == d)
                continue;
            if (d != 1)
                return -1;
            d = dj;
        }
        b->dims[i] = d;
        b->numel *= d;
    }
    return 0;
}

/* Element index in t of output element e of broadcast shape b. */
static size_t bidx(const ph_tensor *t, const bshape *b, int64_t e)
{
    size_t rt = ph_tensor_rank(t);
    int64_t off = 0, st = 1;
    for (size_t i = b->rank; i-- > 0;) {
        int64_t c = e % b->dims[i];
        e /= b->dims[i];
        if (i + rt >= b->rank) {
            int64_t d = ph_tensor_dim(t, i + rt - b->rank);
            off += (d == 1 ? 0 : c) * st;
            st *= d;
        }
    }
    return (size_t)off;
}

/* ------------------------------------------------------------ data */

/* Operand data per dtype: X (6 values, for [2,3], [2,1], [3], [0,3]), Y (6
 * values, no zeros: divisors and exponents), S (a scalar), and U (unary
 * data with the dtype's extremes). */
static const double XF[6] = {-2.5, -1, 0, 0.5, 1.5, 3}, YF[6] = {2, -0.5, 1.5, -3, 0.25, 4};
static const double XS[6] = {-3, -1, 0, 1, 2, 5}, YS[6] = {2, -1, 3, -3, 1, 4};
static const double XU[6] = {0, 1, 2, 3, 5, 200}, YU[6] = {2, 7, 3, 5, 1, 4};
static const double XB[6] = {0, 0, 1, 1, 0, 1}, YB[6] = {0, 1, 1, 0, 1, 0};

static const double *xdata(int k) { return k == BOOL ? XB : k == U8 ? XU : is_sint(k) ? XS : XF; }
static const double *ydata(int k) { return k == BOOL ? YB : k == U8 ? YU : is_sint(k) ? YS : YF; }
static double sdata(int k) { return k == BOOL ? 1 : k == U8 ? 3 : is_sint(k) ? 2 : -1.5; }

static void udata(int k, double *u)
{
    static const double fl[6] = {-2.5, -1, 0, 0.5, 1.5, 3}, b[6] = {0, 1, 1, 0, 1, 0};
    if (k == BOOL || !is_int(k)) {
        memcpy(u, k == BOOL ? b : fl, sizeof fl);
        return;
    }
    double v[6] = {int_min(k), -3, -1, 0, 2, int_max(k)};
    if (k == U8) {
        v[1] = 3;
        v[2] = 1;
    }
    memcpy(u, v, sizeof v);
}

/* ------------------------------------------------------------ elementwise ops */

typedef double (*efn)(const double *v, size_t n, int k);

typedef struct eop {
    const char *op, *label; /* label: the op and its attributes, for messages */
    int arity;              /* 1, 2, 3 (Where) or 0 (variadic) */
    unsigned spec, unsup;
    int out_bool;
    efn f;
    int64_t opset;
    attr at[3];
} eop;

#define X0 (v[0])
#define X1 (v[1])
#define FN(NAME, EXPR)                                                                           \
    static double NAME(const double *v, size_t n, int k)                                         \
    {                                                                                            \
        (void)n;                                                                                 \
        (void)k;                                                                                 \
        return (EXPR);                                                                           \
    }

static const double SELU_A = (double)1.67326319217681884765625f, SELU_G = (double)1.05070102214813232421875f;

FN(r_neg, -X0)
FN(r_abs, fabs(X0))
FN(r_sqrt, sqrt(X0))
FN(r_exp, exp(X0))
FN(r_log, log(X0))
FN(r_erf, erf(X0))
FN(r_recip, 1 / X0)
FN(r_floor, floor(X0))
FN(r_ceil, ceil(X0))
FN(r_round, nearbyint(X0))
FN(r_relu, X0 > 0 ? X0 : 0)
FN(r_leaky, X0 >= 0 ? X0 : (double)0.1f * X0)
FN(r_sigmoid, 1 / (1 + exp(-X0)))
FN(r_hsig, fmax(0, fmin(1, (double)0.25f * X0 + (double)0.4f)))
FN(r_hswish, X0 * fmax(0, fmin(1, X0 / 6 + 0.5)))
FN(r_tanh, tanh(X0))
FN(r_selu, X0 > 0 ? SELU_G * X0 : SELU_G * SELU_A * (exp(X0) - 1))
FN(r_elu, X0 >= 0 ? X0 : 0.5 * (exp(X0) - 1))
FN(r_softplus, log1p(exp(X0)))
FN(r_softsign, X0 / (1 + fabs(X0)))
FN(r_sign, X0 > 0 ? 1 : X0 < 0 ? -1 : 0)
FN(r_sin, sin(X0))
FN(r_cos, cos(X0))
FN(r_tan, tan(X0))
FN(r_asin, asin(X0))
FN(r_acos, acos(X0))
FN(r_atan, atan(X0))
FN(r_sinh, sinh(X0))
FN(r_cosh, cosh(X0))
FN(r_asinh, asinh(X0))
FN(r_acosh, acosh(X0))
FN(r_atanh, atanh(X0))
FN(r_celu, fmax(0, X0) + fmin(0, 2 * (exp(X0 / 2) - 1)))
FN(r_thr, X0 > 0.75 ? X0 : 0)
FN(r_shrink, X0 < -0.75 ? X0 + 0.25 : X0 > 0.75 ? X0 - 0.25 : 0)
FN(r_gelu, 0.5 * X0 * (1 + erf(X0 / sqrt(2))))
FN(r_mish, X0 * tanh(log1p(exp(X0))))
FN(r_not, X0 == 0)
FN(r_isnan, isnan(X0))
FN(r_isinf, isinf(X0))
FN(r_ident, X0)
FN(r_add, X0 + X1)
FN(r_sub, X0 - X1)
FN(r_mul, X0 * X1)
FN(r_div, is_int(k) ? trunc(X0 / X1) : X0 / X1)
FN(r_pow, is_int(k) ? trunc(pow(X0, X1)) : pow(X0, X1))
FN(r_fmod, fmod(X0, X1))
FN(r_eq, X0 == X1)
FN(r_lt, X0 < X1)
FN(r_gt, X0 > X1)
FN(r_le, X0 <= X1)
FN(r_ge, X0 >= X1)
FN(r_and, X0 != 0 && X1 != 0)
FN(r_or, X0 != 0 || X1 != 0)
FN(r_xor, (X0 != 0) != (X1 != 0))
FN(r_prelu, X0 < 0 ? X0 * X1 : X0)
FN(r_where, X0 != 0 ? X1 : v[2])
FN(r_band, (double)((int64_t)X0 & (int64_t)X1))
FN(r_bor, (double)((int64_t)X0 | (int64_t)X1))
FN(r_bxor, (double)((int64_t)X0 ^ (int64_t)X1))
FN(r_shl, X0 * ldexp(1, (int)X1))
FN(r_shr, floor(X0 / ldexp(1, (int)X1)))

static double r_mod(const double *v, size_t n, int k)
{
    (void)n;
    (void)k;
    double r = fmod(X0, X1);
    return r != 0 && (r < 0) != (X1 < 0) ? r + X1 : r; /* the sign of the divisor */
}

static double r_max(const double *v, size_t n, int k)
{
    double r = v[0];
    for (size_t i = 1; i < n; i++)
        r = v[i] > r ? v[i] : r;
    return r;
}

static double r_min(const double *v, size_t n, int k)
{
    double r = v[0];
    for (size_t i = 1; i < n; i++)
        r = v[i] < r ? v[i] : r;
    return r;
}

static double r_sum(const double *v, size_t n, int k)
{
    double r = 0;
    for (size_t i = 0; i < n; i++)
        r += v[i];
    return r;
}

static double r_mean(const double *v, size_t n, int k) { return r_sum(v, n, k) / (double)n; }

/* Reasons for the `unsup` masks:
 *  Erf, Shrink on integers: the schema allows them, but ONNX Runtime has no
 *  integer kernels either and the result (erf truncated to an integer) is
 *  meaningless; documented as unsupported. */
static const eop eops[] = {
    {"Neg", "Neg", 1, M_FLOAT | M_SINT, 0, 0, r_neg, 17, {{0}}},
    {"Abs", "Abs", 1, M_NUM, 0, 0, r_abs, 17, {{0}}},
    {"Sqrt", "Sqrt", 1, M_FLOAT, 0, 0, r_sqrt, 17, {{0}}},
    {"Exp", "Exp", 1, M_FLOAT, 0, 0, r_exp, 17, {{0}}},
    {"Log", "Log", 1, M_FLOAT, 0, 0, r_log, 17, {{0}}},
    {"Erf", "Erf", 1, M_NUM, M_INT, 0, r_erf, 17, {{0}}},
    {"Reciprocal", "Reciprocal", 1, M_FLOAT, 0, 0, r_recip, 17, {{0}}},
    {"Floor", "Floor", 1, M_FLOAT, 0, 0, r_floor, 17, {{0}}},
    {"Ceil", "Ceil", 1, M_FLOAT, 0, 0, r_ceil, 17, {{0}}},
    {"Round", "Round", 1, M_FLOAT, 0, 0, r_round, 17, {{0}}},
    {"Relu", "Relu", 1, M_FLOAT | M_SINT, 0, 0, r_relu, 17, {{0}}},
    {"LeakyRelu", "LeakyRelu(alpha=0.1)", 1, M_FLOAT, 0, 0, r_leaky, 17, {AF("alpha", 0.1f)}},
    {"Sigmoid", "Sigmoid", 1, M_FLOAT, 0, 0, r_sigmoid, 17, {{0}}},
    {"HardSigmoid", "HardSigmoid(0.25,0.4)", 1, M_FLOAT, 0, 0, r_hsig, 17,
     {AF("alpha", 0.25f), AF("beta", 0.4f)}},
    {"HardSwish", "HardSwish", 1, M_FLOAT, 0, 0, r_hswish, 17, {{0}}},
    {"Tanh", "Tanh", 1, M_FLOAT, 0, 0, r_tanh, 17, {{0}}},
    {"Selu", "Selu", 1, M_FLOAT, 0, 0, r_selu, 17, {{0}}},
    {"Elu", "Elu(alpha=0.5)", 1, M_FLOAT, 0, 0, r_elu, 17, {AF("alpha", 0.5f)}},
    {"Softplus", "Softplus", 1, M_FLOAT, 0, 0, r_softplus, 17, {{0}}},
    {"Softsign", "Softsign", 1, M_FLOAT, 0, 0, r_softsign, 17, {{0}}},
    {"Sign", "Sign", 1, M_NUM, 0, 0, r_sign, 17, {{0}}},
    {"Sin", "Sin", 1, M_FLOAT, 0, 0, r_sin, 17, {{0}}},
    {"Cos", "Cos", 1, M_FLOAT, 0, 0, r_cos, 17, {{0}}},
    {"Tan", "Tan", 1, M_FLOAT, 0, 0, r_tan, 17, {{0}}},
    {"Asin", "Asin", 1, M_FLOAT, 0, 0, r_asin, 17, {{0}}},
    {"Acos", "Acos", 1, M_FLOAT, 0, 0, r_acos, 17, {{0}}},
    {"Atan", "Atan", 1, M_FLOAT, 0, 0, r_atan, 17, {{0}}},
    {"Sinh", "Sinh", 1, M_FLOAT, 0, 0, r_sinh, 17, {{0}}},
    {"Cosh", "Cosh", 1, M_FLOAT, 0, 0, r_cosh, 17, {{0}}},
    {"Asinh", "Asinh", 1, M_FLOAT, 0, 0, r_asinh, 17, {{0}}},
    {"Acosh", "Acosh", 1, M_FLOAT, 0, 0, r_acosh, 17, {{0}}},
    {"Atanh", "Atanh", 1, M_FLOAT, 0, 0, r_atanh, 17, {{0}}},
    {"Celu", "Celu(alpha=2)", 1, B(F32), 0, 0, r_celu, 17, {AF("alpha", 2.0f)}},
    {"ThresholdedRelu", "ThresholdedRelu(alpha=0.75)", 1, M_FLOAT, 0, 0, r_thr, 17, {AF("alpha", 0.75f)}},
    {"Shrink", "Shrink(0.25,0.75)", 1, M_NUM, M_INT, 0, r_shrink, 17, {AF("bias", 0.25f), AF("lambd", 0.75f)}},
    {"Gelu", "Gelu (opset 20)", 1, M_FLOAT, 0, 0, r_gelu, 20, {{0}}},
    {"Mish", "Mish (opset 18)", 1, M_FLOAT, 0, 0, r_mish, 18, {{0}}},
    {"Not", "Not", 1, B(BOOL), 0, 1, r_not, 17, {{0}}},
    {"IsNaN", "IsNaN", 1, M_FLOAT, 0, 1, r_isnan, 17, {{0}}},
    {"IsInf", "IsInf", 1, B(F32) | B(F64), 0, 1, r_isinf, 17, {{0}}},
    {"IsInf", "IsInf (opset 20)", 1, M_FLOAT, 0, 1, r_isinf, 20, {{0}}},
    {"Identity", "Identity", 1, M_ALL, 0, 0, r_ident, 17, {{0}}},
    {"Add", "Add", 2, M_NUM, 0, 0, r_add, 17, {{0}}},
    {"Sub", "Sub", 2, M_NUM, 0, 0, r_sub, 17, {{0}}},
    {"Mul", "Mul", 2, M_NUM, 0, 0, r_mul, 17, {{0}}},
    {"Div", "Div", 2, M_NUM, 0, 0, r_div, 17, {{0}}},
    {"Pow", "Pow", 2, M_F_I32_I64, 0, 0, r_pow, 17, {{0}}},
    /* "If the input type is floating point, then fmod attribute must be set to 1." */
    {"Mod", "Mod(fmod=0)", 2, M_INT, 0, 0, r_mod, 17, {{0}}},
    {"Mod", "Mod(fmod=1)", 2, M_NUM, 0, 0, r_fmod, 17, {AI("fmod", 1)}},
    {"Max", "Max", 0, M_NUM, 0, 0, r_max, 17, {{0}}},
    {"Min", "Min", 0, M_NUM, 0, 0, r_min, 17, {{0}}},
    {"Sum", "Sum", 0, M_FLOAT, 0, 0, r_sum, 17, {{0}}},
    {"Mean", "Mean", 0, M_FLOAT, 0, 0, r_mean, 17, {{0}}},
    {"Equal", "Equal", 2, M_ALL, 0, 1, r_eq, 17, {{0}}},
    {"Less", "Less", 2, M_NUM, 0, 1, r_lt, 17, {{0}}},
    {"Greater", "Greater", 2, M_NUM, 0, 1, r_gt, 17, {{0}}},
    {"LessOrEqual", "LessOrEqual", 2, M_NUM, 0, 1, r_le, 17, {{0}}},
    {"GreaterOrEqual", "GreaterOrEqual", 2, M_NUM, 0, 1, r_ge, 17, {{0}}},
    {"And", "And", 2, B(BOOL), 0, 1, r_and, 17, {{0}}},
    {"Or", "Or", 2, B(BOOL), 0, 1, r_or, 17, {{0}}},
    {"Xor", "Xor", 2, B(BOOL), 0, 1, r_xor, 17, {{0}}},
    {"PRelu", "PRelu", 2, M_F_I32_I64, 0, 0, r_prelu, 17, {{0}}},
    {"BitwiseAnd", "BitwiseAnd (opset 18)", 2, M_INT, 0, 0, r_band, 18, {{0}}},
    {"BitwiseOr", "BitwiseOr (opset 18)", 2, M_INT, 0, 0, r_bor, 18, {{0}}},
    {"BitwiseXor", "BitwiseXor (opset 18)", 2, M_INT, 0, 0, r_bxor, 18, {{0}}},
    {"BitShift", "BitShift(LEFT)", 2, B(U8), 0, 0, r_shl, 17, {AS("direction", "LEFT")}},
    {"BitShift", "BitShift(RIGHT)", 2, B(U8), 0, 0, r_shr, 17, {AS("direction", "RIGHT")}},
    {"Where", "Where", 3, M_ALL, 0, 0, r_where, 17, {{0}}},
};
#define N_EOPS (sizeof eops / sizeof eops[0])

/* Evaluate o on inputs in (tc owns them, frees them) and check against the
 * broadcasting reference.  want: MUST/UNSUP/REJECT. */
static void check_elem(const eop *o, int k, const char *shapes, size_t n_in, ph_tensor **in, int want)
{
    char what[200];
    snprintf(what, sizeof what, "%s %s %s", o->label, dname(k), shapes);
    ph_tensor *out[1];
    ph_error err;
    int rc = eval(o->op, o->opset, o->at, n_in, in, 1, out, &err);
    if (outcome(what, o->op, k, want, rc, &err, out, 1)) {
        bshape b;
        ck_assert_int_eq(bcast(n_in, in, &b), 0);
        double *r = malloc(((size_t)b.numel + 1) * sizeof *r);
        ck_assert_ptr_nonnull(r);
        for (int64_t e = 0; e < b.numel; e++) {
            double v[4];
            for (size_t j = 0; j < n_in; j++)
                v[j] = get(in[j], bidx(in[j], &b, e));
            r[e] = o->f(v, n_in, k);
        }
        compare(what, out[0], o->out_bool ? BOOL : k, b.rank, b.dims, r);
        free(r);
        ph_tensor_free(out[0]);
    }
    free_all(in, n_in);
}

typedef struct shp {
    size_t r;
    int64_t d[3];
} shp;

static ph_tensor *xt(int k, shp s) { return mk(k, s.r, s.d, xdata(k)); }
static ph_tensor *yt(int k, shp s)
{
    double sv = sdata(k);
    return mk(k, s.r, s.d, s.r ? ydata(k) : &sv);
}

static const struct bcase {
    const char *name;
    shp a, b;
    int uni; /* b broadcasts to a's shape (PRelu's slope) */
} bcases[] = {
    {"[2,3]x[3]", {2, {2, 3}}, {1, {3}}, 1},
    {"[2,3]x[]", {2, {2, 3}}, {0, {0}}, 1},
    {"[2,3]x[2,3]", {2, {2, 3}}, {2, {2, 3}}, 1},
    {"[3]x[2,3]", {1, {3}}, {2, {2, 3}}, 0},
    {"[2,1]x[3]", {2, {2, 1}}, {1, {3}}, 0},
    {"[]x[]", {0, {0}}, {0, {0}}, 1},
    {"[0,3]x[3]", {2, {0, 3}}, {1, {3}}, 1},
    {"[2,0]x[1]", {2, {2, 0}}, {1, {1}}, 1},
};
#define N_BCASES (sizeof bcases / sizeof bcases[0])

static const shp ushapes[] = {{2, {2, 3}}, {0, {0}}, {0 + 2, {0, 3}}};
static const char *const unames[] = {"[2,3]", "[]", "[0,3]"};

static int sweep_elem(int k)
{
    int cases = 0;
    double u[6];
    udata(k, u);
    for (size_t oi = 0; oi < N_EOPS; oi++) {
        const eop *o = &eops[oi];
        int want = want_of(o->spec, o->unsup, k);
        if (o->arity == 1) {
            for (size_t s = 0; s < 3; s++) {
                ph_tensor *in[1] = {mk(k, ushapes[s].r, ushapes[s].d, ushapes[s].r ? u : &u[4])};
                check_elem(o, k, unames[s], 1, in, want);
                cases++;
            }
            continue;
        }
        if (o->arity == 3) { /* Where: cond [3] (or [2,1]), x and y of dtype k */
            for (size_t c = 0; c < N_BCASES; c++) {
                if (bcases[c].a.r == 2 && bcases[c].a.d[1] == 0)
                    continue; /* [3] does not broadcast with [2,0] */
                ph_tensor *in[3] = {mk(BOOL, 1, L(3), (const double[]){1, 0, 1}), xt(k, bcases[c].a),
                                    yt(k, bcases[c].b)};
                check_elem(o, k, bcases[c].name, 3, in, want);
                cases++;
            }
            ph_tensor *in[3] = {mk(BOOL, 2, L(2, 1), (const double[]){0, 1}), mk(k, 1, L(3), xdata(k)),
                                yt(k, (shp){0, {0}})};
            check_elem(o, k, "cond [2,1], [3]x[]", 3, in, want);
            cases++;
            continue;
        }
        for (size_t c = 0; c < N_BCASES; c++) {
            int w = want;
            if (!strcmp(o->op, "PRelu") && !bcases[c].uni && w == MUST)
                w = REJECT; /* the slope must broadcast to X's shape */
            ph_tensor *in[2] = {xt(k, bcases[c].a), yt(k, bcases[c].b)};
            check_elem(o, k, bcases[c].name, 2, in, w);
            cases++;
        }
        if (o->arity == 0) { /* variadic: one input, three inputs */
            ph_tensor *one[1] = {xt(k, (shp){2, {2, 3}})};
            check_elem(o, k, "[2,3] alone", 1, one, want);
            ph_tensor *three[3] = {xt(k, (shp){2, {2, 3}}), yt(k, (shp){1, {3}}), yt(k, (shp){0, {0}})};
            check_elem(o, k, "[2,3]x[3]x[]", 3, three, want);
            ph_tensor *empty[3] = {xt(k, (shp){2, {0, 3}}), yt(k, (shp){1, {3}}), yt(k, (shp){0, {0}})};
            check_elem(o, k, "[0,3]x[3]x[]", 3, empty, want);
            cases += 3;
        }
    }
    return cases;
}

START_TEST(test_elementwise)
{
    int k = _i, cases = sweep_elem(k);
    char what[64];
    snprintf(what, sizeof what, "elementwise %s", dname(k));
    sweep_done(what, cases);
}
END_TEST

/* Pow: the exponent may have any numeric dtype; the output has the base's. */
START_TEST(test_pow_exponent_dtypes)
{
    int cases = 0;
    for (int kb = 0; kb < NDT; kb++)
        for (int ke = 0; ke < NDT; ke++) {
            ph_tensor *in[2] = {xt(kb, (shp){2, {2, 3}}), yt(ke, (shp){1, {3}})};
            ph_tensor *out[1];
            ph_error err;
            char what[120];
            snprintf(what, sizeof what, "Pow base %s exponent %s [2,3]x[3]", dname(kb), dname(ke));
            int want = (M_F_I32_I64 & B(kb)) && (M_NUM & B(ke)) ? MUST : REJECT;
            int rc = eval("Pow", 17, NULL, 2, in, 1, out, &err);
            if (outcome(what, "Pow", (M_F_I32_I64 & B(kb)) ? ke : kb, want, rc, &err, out, 1)) {
                double r[6];
                for (int e = 0; e < 6; e++) {
                    double v[2] = {get(in[0], (size_t)e), get(in[1], (size_t)(e % 3))};
                    r[e] = r_pow(v, 2, kb);
                }
                compare(what, out[0], kb, 2, L(2, 3), r);
                ph_tensor_free(out[0]);
            }
            free_all(in, 2);
            cases++;
        }
    sweep_done("Pow exponents", cases);
}
END_TEST

/* Clip(x, min, max) with omitted bounds, min > max (then every value is
 * max: "Min(max, Max(input, min))"), empty x. */
START_TEST(test_clip)
{
    int cases = 0;
    for (int k = 0; k < NDT; k++) {
        double u[6];
        udata(k, u);
        double lo = k == U8 ? 1 : -1, hi = 2;
        static const struct {
            const char *name;
            int has_lo, has_hi, swap;
            size_t r;
            int64_t d[2];
        } cs[] = {{"min,max", 1, 1, 0, 2, {2, 3}}, {"max only", 0, 1, 0, 2, {2, 3}},
                  {"min only", 1, 0, 0, 2, {2, 3}}, {"neither", 0, 0, 0, 2, {2, 3}},
                  {"min>max", 1, 1, 1, 2, {2, 3}},  {"empty", 1, 1, 0, 2, {0, 3}},
                  {"scalar", 1, 1, 0, 0, {0}}};
        for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
            double mn = cs[c].swap ? hi + 1 : lo, mx = hi;
            ph_tensor *in[3] = {mk(k, cs[c].r, cs[c].d, cs[c].r ? u : &u[1]),
                                cs[c].has_lo ? mk(k, 0, NULL, &mn) : NULL,
                                cs[c].has_hi ? mk(k, 0, NULL, &mx) : NULL};
            ph_tensor *out[1];
            ph_error err;
            char what[120];
            snprintf(what, sizeof what, "Clip %s %s", dname(k), cs[c].name);
            int rc = eval("Clip", 17, NULL, 3, in, 1, out, &err);
            if (outcome(what, "Clip", k, want_of(M_NUM, 0, k), rc, &err, out, 1)) {
                double r[6];
                for (int64_t e = 0; e < ph_tensor_numel(in[0]); e++) {
                    double v = get(in[0], (size_t)e);
                    if (cs[c].has_lo && v < mn)
                        v = mn;
                    if (cs[c].has_hi && v > mx)
                        v = mx;
                    r[e] = v;
                }
                compare(what, out[0], k, cs[c].r, cs[c].d, r);
                ph_tensor_free(out[0]);
            }
            free_all(in, 3);
            cases++;
        }
    }
    sweep_done("Clip", cases);
}
END_TEST

/* Clip on int64 with bounds beyond 2^53: exact, not through double. */
START_TEST(test_clip_int64_exact)
{
    const int64_t big = ((int64_t)1 << 60) + 1;
    ph_tensor *in[3] = {ph_tensor_new(PH_DT_INT64, 1, L(3), L(big - 2, big + 1, big + 7)),
                        ph_tensor_new(PH_DT_INT64, 0, NULL, L(big)),
                        ph_tensor_new(PH_DT_INT64, 0, NULL, L(big + 3))};
    ph_tensor *out[1];
    ph_error err;
    ck_assert_int_eq(eval("Clip", 17, NULL, 3, in, 1, out, &err), 0);
    const int64_t *o = ph_tensor_data(out[0]);
    ck_assert(o[0] == big && o[1] == big + 1 && o[2] == big + 3);
    free_all(out, 1);
    free_all(in, 3);
}
END_TEST

/* Range(start, limit, delta): float, double, int16, int32, int64. */
START_TEST(test_range)
{
    static const struct {
        const char *name;
        double s, l, d;
        int64_t n;
        double want[3];
        int ints; /* also for integer dtypes */
    } cs[] = {{"1..7 by 2", 1, 7, 2, 3, {1, 3, 5}, 1},
              {"5..-1 by -2", 5, -1, -2, 3, {5, 3, 1}, 1},
              {"3..3 (empty)", 3, 3, 1, 0, {0}, 1},
              {"0.5..2 by 0.5", 0.5, 2, 0.5, 3, {0.5, 1, 1.5}, 0}};
    int cases = 0;
    for (int k = 0; k < NDT; k++)
        for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
            if (!cs[c].ints && is_int(k))
                continue;
            ph_tensor *in[3] = {mk(k, 0, NULL, &cs[c].s), mk(k, 0, NULL, &cs[c].l), mk(k, 0, NULL, &cs[c].d)};
            ph_tensor *out[1];
            ph_error err;
            char what[120];
            snprintf(what, sizeof what, "Range %s %s", dname(k), cs[c].name);
            int rc = eval("Range", 17, NULL, 3, in, 1, out, &err);
            int want = want_of(B(F32) | B(F64) | B(I16) | B(I32) | B(I64), 0, k);
            if (outcome(what, "Range", k, want, rc, &err, out, 1)) {
                compare(what, out[0], k, 1, &cs[c].n, cs[c].want);
                ph_tensor_free(out[0]);
            }
            free_all(in, 3);
            cases++;
        }
    sweep_done("Range", cases);
}
END_TEST

/* Cast between every pair: to bool is != 0, float to int truncates (values
 * out of the target's range are undefined and not checked), int to int
 * wraps, to float16 rounds to nearest even. */
START_TEST(test_cast)
{
    static const double cf[6] = {0, 1.5, -2.75, 100, 0.1, -1}, ci[6] = {0, 1, -3, 100, 7, -1},
                        cu[6] = {0, 1, 3, 200, 7, 255}, cb[6] = {0, 1, 1, 0, 1, 0};
    int cases = 0;
    for (int kf = 0; kf < NDT; kf++)
        for (int kt = 0; kt < NDT; kt++)
            for (size_t s = 0; s < 3; s++) {
                const double *src = kf == BOOL ? cb : kf == U8 ? cu : is_sint(kf) ? ci : cf;
                ph_tensor *in[1] = {mk(kf, ushapes[s].r, ushapes[s].d, ushapes[s].r ? src : &src[1])};
                ph_tensor *out[1];
                ph_error err;
                char what[120];
                snprintf(what, sizeof what, "Cast %s -> %s %s", dname(kf), dname(kt), unames[s]);
                attr at[2] = {AI("to", dts[kt]), {0}};
                int rc = eval("Cast", 17, at, 1, in, 1, out, &err);
                if (outcome(what, "Cast", kt, MUST, rc, &err, out, 1)) {
                    double r[6];
                    for (int64_t e = 0; e < ph_tensor_numel(in[0]); e++) {
                        double v = get(in[0], (size_t)e);
                        if (is_int(kt) && !is_int(kf) && kf != BOOL) {
                            v = trunc(v);
                            if (v < int_min(kt) || v > int_max(kt))
                                v = NAN; /* undefined */
                        }
                        r[e] = v;
                    }
                    compare(what, out[0], kt, ushapes[s].r, ushapes[s].d, r);
                    ph_tensor_free(out[0]);
                }
                free_all(in, 1);
                cases++;
            }
    sweep_done("Cast", cases);
}
END_TEST

/* ------------------------------------------------------------ reductions */

typedef struct rop {
    const char *op;
    unsigned spec;
    int arg; /* ArgMax/ArgMin */
} rop;

static const rop rops[] = {
    {"ReduceSum", M_F_I32_I64, 0},       {"ReduceMean", M_F_I32_I64, 0},   {"ReduceMax", M_RMAX, 0},
    {"ReduceMin", M_RMAX, 0},            {"ReduceProd", M_F_I32_I64, 0},   {"ReduceL1", M_F_I32_I64, 0},
    {"ReduceL2", M_F_I32_I64, 0},        {"ReduceSumSquare", M_F_I32_I64, 0},
    {"ReduceLogSum", M_F_I32_I64, 0},    {"ReduceLogSumExp", M_F_I32_I64, 0},
    {"ArgMax", M_NUM, 1},                {"ArgMin", M_NUM, 1},
};
#define N_ROPS (sizeof rops / sizeof rops[0])

/* [2,3,2] with ties along every axis. */
static const double RI[12] = {1, -2, 3, 1, 3, -1, 2, 2, -1, 3, 2, 2};
static const double RF[12] = {1.5, -2, 3, 1, 3, -1, 2, 2, -1, 3, 2.5, 2.5};
static const double RU[12] = {1, 2, 3, 1, 3, 0, 2, 2, 1, 3, 2, 2};

/* Reference reduction of x over the axes flagged in red: out[] per output
 * element (row-major over the kept dims), NaN where undefined. */
static void ref_reduce(const char *op, int k, const ph_tensor *x, const int *red, double *out, int64_t *on)
{
    size_t r = ph_tensor_rank(x);
    int64_t od[8], n = ph_tensor_numel(x), cnt = 1;
    *on = 1;
    for (size_t i = 0; i < r; i++) {
        od[i] = red[i] ? 1 : ph_tensor_dim(x, i);
        *on *= od[i];
        cnt *= red[i] ? ph_tensor_dim(x, i) : 1;
    }
    double acc[64];
    int is_max = !strcmp(op, "ReduceMax"), is_min = !strcmp(op, "ReduceMin"), prod = !strcmp(op, "ReduceProd");
    int lse = !strcmp(op, "ReduceLogSumExp");
    for (int64_t o = 0; o < *on; o++)
        acc[o] = is_max ? (is_int(k) ? true_min(k) : -INFINITY)
                 : is_min ? (is_int(k) ? true_max(k) : INFINITY)
                 : prod ? 1 : 0;
    for (int64_t e = 0; e < n; e++) {
        int64_t rem = e, o = 0, st = 1;
        for (size_t i = r; i-- > 0;) {
            int64_t c = rem % ph_tensor_dim(x, i);
            rem /= ph_tensor_dim(x, i);
            o += (red[i] ? 0 : c) * st;
            st *= od[i];
        }
        double v = get(x, (size_t)e);
        if (is_max)
            acc[o] = v > acc[o] ? v : acc[o];
        else if (is_min)
            acc[o] = v < acc[o] ? v : acc[o];
        else if (prod)
            acc[o] *= v;
        else if (!strcmp(op, "ReduceL1"))
            acc[o] += fabs(v);
        else if (!strcmp(op, "ReduceL2") || !strcmp(op, "ReduceSumSquare"))
            acc[o] += v * v;
        else if (lse)
            acc[o] += exp(v);
        else
            acc[o] += v;
    }
    for (int64_t o = 0; o < *on; o++) {
        double v = acc[o];
        if (!strcmp(op, "ReduceMean"))
            v = cnt ? (is_int(k) ? trunc(v / (double)cnt) : v / (double)cnt) : NAN; /* undefined */
        else if (!strcmp(op, "ReduceL2"))
            v = sqrt(v);
        else if (!strcmp(op, "ReduceLogSum") || lse)
            v = log(v);
        out[o] = v;
    }
}

static void ref_arg(int is_max, int last, const ph_tensor *x, size_t ax, double *out)
{
    size_t r = ph_tensor_rank(x);
    int64_t outer = 1, inner = 1, n = ph_tensor_dim(x, ax);
    for (size_t i = 0; i < ax; i++)
        outer *= ph_tensor_dim(x, i);
    for (size_t i = ax + 1; i < r; i++)
        inner *= ph_tensor_dim(x, i);
    for (int64_t a = 0; a < outer; a++)
        for (int64_t b = 0; b < inner; b++) {
            int64_t best = 0;
            double bv = get(x, (size_t)(a * n * inner + b));
            for (int64_t j = 1; j < n; j++) {
                double v = get(x, (size_t)((a * n + j) * inner + b));
                if (is_max ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv))) {
                    best = j;
                    bv = v;
                }
            }
            out[a * inner + b] = (double)best;
        }
}

/* One reduction: x of dtype k and shape xs; axes (NULL: none given);
 * via_input: axes as input 1 (else the attribute). */
static void check_reduce(const rop *o, int k, shp xs, const int64_t *axes, size_t na, int keep, int noop,
                         int64_t opset, int via_input)
{
    const double *data = k == U8 ? RU : is_int(k) ? RI : k == BOOL ? RU : RF;
    ph_tensor *in[2] = {mk(k, xs.r, xs.d, data), NULL};
    attr at[4] = {AI("keepdims", keep), {0}, {0}, {0}};
    size_t nat = 1;
    if (noop)
        at[nat++] = (attr)AI("noop_with_empty_axes", 1);
    if (axes && via_input)
        in[1] = ints64(na, axes);
    else if (axes)
        at[nat++] = (attr){"axes", A_INTS, 0, 0, axes, na, NULL};
    char what[200], s[40], ax[60] = "none";
    shape_str(s, sizeof s, in[0]);
    for (size_t i = 0, n = 0; axes && i < na; i++)
        n += (size_t)snprintf(ax + n, sizeof ax - n, "%s%lld", i ? "," : "", (long long)axes[i]);
    snprintf(what, sizeof what, "%s %s x%s axes{%s}%s keepdims=%d%s opset %lld", o->op, dname(k), s, ax,
             axes && via_input ? " (input)" : "", keep, noop ? " noop_with_empty_axes" : "", (long long)opset);
    ph_tensor *out[1];
    ph_error err;
    int rc = eval(o->op, opset, at, 2, in, 1, out, &err);
    int want = want_of(o->spec, 0, k);
    int red[8], empty_axis = 0;
    for (size_t i = 0; i < xs.r; i++)
        red[i] = !axes || na == 0 ? !noop : 0;
    for (size_t i = 0; axes && i < na; i++)
        red[axes[i] < 0 ? axes[i] + (int64_t)xs.r : axes[i]] = 1;
    for (size_t i = 0; i < xs.r; i++)
        empty_axis |= red[i] && xs.d[i] == 0;
    /* ReduceMean of an empty set of integers has no value: 0 or an error */
    if (want == MUST && empty_axis && is_int(k) && !strcmp(o->op, "ReduceMean") && rc) {
        outcome(what, o->op, k, REJECT, rc, &err, out, 1);
        free_all(in, 2);
        return;
    }
    if (outcome(what, o->op, k, want, rc, &err, out, 1)) {
        double ref[64];
        int64_t on, od[8];
        size_t orank = 0;
        ref_reduce(o->op, k, in[0], red, ref, &on);
        for (size_t i = 0; i < xs.r; i++)
            if (!red[i] || keep)
                od[orank++] = red[i] ? 1 : xs.d[i];
        if (empty_axis && is_int(k) && !strcmp(o->op, "ReduceMean"))
            for (int64_t i = 0; i < on; i++)
                ref[i] = 0;
        compare(what, out[0], k, orank, od, ref);
        ph_tensor_free(out[0]);
    }
    free_all(in, 2);
}

static void check_arg(const rop *o, int k, shp xs, int64_t axis, int keep, int last)
{
    const double *data = k == U8 ? RU : is_int(k) ? RI : k == BOOL ? RU : RF;
    ph_tensor *in[1] = {mk(k, xs.r, xs.d, data)};
    attr at[4] = {AI("axis", axis), AI("keepdims", keep), AI("select_last_index", last), {0}};
    char what[200], s[40];
    shape_str(s, sizeof s, in[0]);
    snprintf(what, sizeof what, "%s %s x%s axis=%lld keepdims=%d select_last_index=%d", o->op, dname(k), s,
             (long long)axis, keep, last);
    ph_tensor *out[1];
    ph_error err;
    int rc = eval(o->op, 17, at, 1, in, 1, out, &err);
    size_t ax = (size_t)(axis < 0 ? axis + (int64_t)xs.r : axis);
    int want = want_of(o->spec, 0, k);
    if (want == MUST && xs.d[ax] == 0) { /* no extremum of nothing: an error */
        if (rc != PH_EINVAL)
            note("%s: rc %d, expected PH_EINVAL: %s", what, rc, err.message);
        free_all(in, 1);
        free_all(out, 1);
        return;
    }
    if (outcome(what, o->op, k, want, rc, &err, out, 1)) {
        double ref[64];
        int64_t od[8];
        size_t orank = 0;
        ref_arg(!strcmp(o->op, "ArgMax"), last, in[0], ax, ref);
        for (size_t i = 0; i < xs.r; i++)
            if (i != ax || keep)
                od[orank++] = i == ax ? 1 : xs.d[i];
        compare(what, out[0], I64, orank, od, ref);
        ph_tensor_free(out[0]);
    }
    free_all(in, 1);
}

START_TEST(test_reductions)
{
    int k = _i, cases = 0;
    static const shp x3 = {3, {2, 3, 2}}, xe = {3, {2, 0, 3}};
    static const struct {
        int64_t ax[3];
        size_t n;
    } axs[] = {{{-1}, 1}, {{-3}, 1}, {{1}, 1}, {{0, -1}, 2}, {{-1, 0, 1}, 3}};
    for (size_t oi = 0; oi < N_ROPS; oi++) {
        const rop *o = &rops[oi];
        if (o->arg) {
            static const int64_t axes[] = {-1, -2, -3, 0, 2};
            for (size_t a = 0; a < 5; a++)
                for (int keep = 0; keep < 2; keep++)
                    for (int last = 0; last < 2; last++, cases++)
                        check_arg(o, k, x3, axes[a], keep, last);
            for (int keep = 0; keep < 2; keep++, cases += 2) {
                check_arg(o, k, xe, -1, keep, 0); /* [2,0,3] along 3: empty output */
                check_arg(o, k, xe, 1, keep, 0);  /* along the empty axis */
            }
            continue;
        }
        int sum13 = !strcmp(o->op, "ReduceSum");
        for (int keep = 0; keep < 2; keep++) {
            for (size_t a = 0; a < sizeof axs / sizeof axs[0]; a++, cases += 2) {
                check_reduce(o, k, x3, axs[a].ax, axs[a].n, keep, 0, 17, sum13);
                check_reduce(o, k, x3, axs[a].ax, axs[a].n, keep, 0, 18, 1);
            }
            check_reduce(o, k, x3, NULL, 0, keep, 0, 17, 0); /* all axes */
            check_reduce(o, k, x3, NULL, 0, keep, 0, 18, 1);
            /* an empty reduced axis: the identity of the reduction */
            check_reduce(o, k, xe, L(-2), 1, keep, 0, 17, sum13);
            check_reduce(o, k, xe, L(0), 1, keep, 0, 17, sum13); /* empty output */
            check_reduce(o, k, xe, NULL, 0, keep, 0, 18, 1);     /* all of nothing */
            check_reduce(o, k, (shp){1, {0}}, L(0), 1, keep, 0, 18, 1);
            cases += 6;
        }
        /* noop_with_empty_axes: no axes leaves the tensor as it is */
        check_reduce(o, k, x3, NULL, 0, 1, 1, 18, 1);
        check_reduce(o, k, x3, L(0), 0, 1, 1, 18, 1); /* an empty axes input */
        cases += 2;
    }
    char what[64];
    snprintf(what, sizeof what, "reductions %s", dname(k));
    sweep_done(what, cases);
}
END_TEST

/* ------------------------------------------------------------ data movement */

/* Element ids: input j element i has id 20*j + i (j = 0 for the only data
 * input); PADV is Pad's constant_value input, ZERO the default 0. */
enum { PADV = 1000, ZERO = 1001 };

static double id_val(int k, int64_t id)
{
    if (id == ZERO)
        return 0;
    if (id == PADV)
        return k == BOOL ? 1 : is_sint(k) || k == F32 || k == F64 || k == F16 ? -100 : 100;
    if (k == BOOL)
        return id % 3 != 1;
    double v = (double)(id + 1);
    return (id % 2 && k != U8) ? -v : v;
}

static ph_tensor *ids(int k, size_t rank, const int64_t *dims, int64_t base)
{
    double v[64];
    for (int i = 0; i < 64; i++)
        v[i] = id_val(k, base + i);
    return mk(k, rank, dims, v);
}

/* Expected output: shape and ids (NULL ids: 0, 1, 2, ... sequential). */
typedef struct mout {
    size_t r;
    const int64_t *d;
    const int64_t *ids;
} mout;

#define OUT(r, dims, ...) ((mout){r, dims, (const int64_t[]){__VA_ARGS__}})
#define SEQ(r, ...) ((mout){r, L(__VA_ARGS__), NULL})

static void check_move(int k, const char *name, const char *op, int64_t opset, const attr *at, size_t n_in,
                       ph_tensor **in, size_t n_out, const mout *want)
{
    char what[200];
    snprintf(what, sizeof what, "%s %s %s", op, dname(k), name);
    ph_tensor *out[4];
    ph_error err;
    int rc = eval(op, opset, at, n_in, in, n_out, out, &err);
    if (outcome(what, op, k, MUST, rc, &err, out, n_out)) {
        for (size_t j = 0; j < n_out; j++) {
            double r[64];
            int64_t n = 1;
            for (size_t i = 0; i < want[j].r; i++)
                n *= want[j].d[i];
            ck_assert(n <= 64);
            for (int64_t i = 0; i < n; i++)
                r[i] = id_val(k, want[j].ids ? want[j].ids[i] : i);
            char w2[220];
            snprintf(w2, sizeof w2, "%s output %zu", what, j);
            compare(w2, out[j], k, want[j].r, want[j].d, r);
        }
        free_all(out, n_out);
    }
    free_all(in, n_in);
}

#define DIMS(...) L(__VA_ARGS__)
#define X(k, ...) ids(k, NL(__VA_ARGS__), L(__VA_ARGS__), 0)
#define XI(k, base, ...) ids(k, NL(__VA_ARGS__), L(__VA_ARGS__), base)
#define MOVE(name, op, opset, at, n_out, outs, ...)                                             \
    do {                                                                                        \
        ph_tensor *in_[] = {__VA_ARGS__};                                                       \
        check_move(k, name, op, opset, at, sizeof in_ / sizeof in_[0], in_, n_out, outs);       \
        cases++;                                                                                \
    } while (0)
#define ATTRS(...) ((const attr[]){__VA_ARGS__, {0}})
#define O1(o) ((const mout[]){o})

static ph_tensor *scalar_x(int k)
{
    double v = id_val(k, 0);
    return mk(k, 0, NULL, &v);
}

static ph_tensor *padv(int k)
{
    double v = id_val(k, PADV);
    return mk(k, 0, NULL, &v);
}

START_TEST(test_data_movement)
{
    int k = _i, cases = 0;
    /* Transpose */
    MOVE("[2,3] default perm", "Transpose", 17, NULL, 1, O1(OUT(2, L(3, 2), 0, 3, 1, 4, 2, 5)), X(k, 2, 3));
    MOVE("[2,3,2] perm 2,0,1", "Transpose", 17, ATTRS(AIS("perm", 2, 0, 1)), 1,
         O1(OUT(3, L(2, 2, 3), 0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11)), X(k, 2, 3, 2));
    MOVE("[0,3] default perm", "Transpose", 17, NULL, 1, O1(SEQ(2, 3, 0)), X(k, 0, 3));
    MOVE("[2,0,3] perm 1,2,0", "Transpose", 17, ATTRS(AIS("perm", 1, 2, 0)), 1, O1(SEQ(3, 0, 3, 2)),
         X(k, 2, 0, 3));
    MOVE("[] scalar", "Transpose", 17, NULL, 1, O1(SEQ(0, 0)), scalar_x(k));
    /* Concat */
    MOVE("axis -1 [2,3]+[2,1]+[2,0]", "Concat", 17, ATTRS(AI("axis", -1)), 1,
         O1(OUT(2, L(2, 4), 0, 1, 2, 20, 3, 4, 5, 21)), X(k, 2, 3), XI(k, 20, 2, 1), XI(k, 40, 2, 0));
    MOVE("axis 0 [0,3]+[2,3]", "Concat", 17, ATTRS(AI("axis", 0)), 1,
         O1(OUT(2, L(2, 3), 20, 21, 22, 23, 24, 25)), X(k, 0, 3), XI(k, 20, 2, 3));
    MOVE("axis -2 [1,3]+[2,3]", "Concat", 17, ATTRS(AI("axis", -2)), 1,
         O1(OUT(2, L(3, 3), 0, 1, 2, 20, 21, 22, 23, 24, 25)), X(k, 1, 3), XI(k, 20, 2, 3));
    MOVE("axis 1 [0,2]+[0,1]", "Concat", 17, ATTRS(AI("axis", 1)), 1, O1(SEQ(2, 0, 3)), X(k, 0, 2),
         XI(k, 20, 0, 1));
    /* Slice: starts, ends, axes, steps */
    MOVE("[3,4] axis -1 1:-1", "Slice", 17, NULL, 1, O1(OUT(2, L(3, 2), 1, 2, 5, 6, 9, 10)), X(k, 3, 4),
         I64S(1), I64S(-1), I64S(-1));
    MOVE("[3,4] axis -2 -1:-4:-2", "Slice", 17, NULL, 1, O1(OUT(2, L(2, 4), 8, 9, 10, 11, 0, 1, 2, 3)),
         X(k, 3, 4), I64S(-1), I64S(-4), I64S(-2), I64S(-2));
    MOVE("[3,4] 0:3:2, 3:0:-1", "Slice", 17, NULL, 1, O1(OUT(2, L(2, 3), 3, 2, 1, 11, 10, 9)), X(k, 3, 4),
         I64S(0, 3), I64S(3, 0), I64S(0, 1), I64S(2, -1));
    MOVE("[3,4] clamped ends", "Slice", 17, NULL, 1, O1(OUT(2, L(1, 4), 8, 9, 10, 11)), X(k, 3, 4),
         I64S(-1), I64S(INT64_MAX), I64S(0));
    MOVE("[3,4] empty result", "Slice", 17, NULL, 1, O1(SEQ(2, 3, 0)), X(k, 3, 4), I64S(2), I64S(1),
         I64S(1));
    MOVE("[0,4] axis -1 1:3", "Slice", 17, NULL, 1, O1(SEQ(2, 0, 2)), X(k, 0, 4), I64S(1), I64S(3),
         I64S(-1));
    MOVE("[3,4] int32 starts/ends", "Slice", 17, NULL, 1, O1(OUT(2, L(3, 2), 0, 1, 4, 5, 8, 9)), X(k, 3, 4),
         ints32(1, (const int32_t[]){0}), ints32(1, (const int32_t[]){2}), ints32(1, (const int32_t[]){-1}));
    /* Gather */
    MOVE("[3,2] axis 0 idx {-1,0}", "Gather", 17, ATTRS(AI("axis", 0)), 1, O1(OUT(2, L(2, 2), 4, 5, 0, 1)),
         X(k, 3, 2), I64S(-1, 0));
    MOVE("[2,3] axis -1 idx [2,2] int32", "Gather", 17, ATTRS(AI("axis", -1)), 1,
         O1(OUT(3, L(2, 2, 2), 2, 0, 1, 1, 5, 3, 4, 4)), X(k, 2, 3),
         ph_tensor_new(PH_DT_INT32, 2, L(2, 2), (const int32_t[]){2, -3, 1, 1}));
    MOVE("[2,3] axis 0 scalar idx", "Gather", 17, ATTRS(AI("axis", 0)), 1, O1(OUT(1, L(3), 3, 4, 5)),
         X(k, 2, 3), ph_tensor_new(PH_DT_INT64, 0, NULL, L(1)));
    MOVE("[2,3] axis 0 empty idx", "Gather", 17, ATTRS(AI("axis", 0)), 1, O1(SEQ(2, 0, 3)), X(k, 2, 3),
         ph_tensor_new(PH_DT_INT64, 1, L(0), NULL));
    MOVE("[0,3] axis 1 idx {0,2}", "Gather", 17, ATTRS(AI("axis", 1)), 1, O1(SEQ(2, 0, 2)), X(k, 0, 3),
         I64S(0, 2));
    /* Reshape */
    MOVE("[2,3] to {3,-1}", "Reshape", 17, NULL, 1, O1(SEQ(2, 3, 2)), X(k, 2, 3), I64S(3, -1));
    MOVE("[2,3] to {0,-1}", "Reshape", 17, NULL, 1, O1(SEQ(2, 2, 3)), X(k, 2, 3), I64S(0, -1));
    MOVE("[2,3] to {6}", "Reshape", 17, NULL, 1, O1(SEQ(1, 6)), X(k, 2, 3), I64S(6));
    MOVE("[0,3] to {-1,3}", "Reshape", 17, NULL, 1, O1(SEQ(2, 0, 3)), X(k, 0, 3), I64S(-1, 3));
    MOVE("[0,3] to {3,0} allowzero", "Reshape", 17, ATTRS(AI("allowzero", 1)), 1, O1(SEQ(2, 3, 0)),
         X(k, 0, 3), I64S(3, 0));
    MOVE("[] to {1,1}", "Reshape", 17, NULL, 1, O1(SEQ(2, 1, 1)), scalar_x(k), I64S(1, 1));
    /* Expand */
    MOVE("[3] to {2,3}", "Expand", 17, NULL, 1, O1(OUT(2, L(2, 3), 0, 1, 2, 0, 1, 2)), X(k, 3), I64S(2, 3));
    MOVE("[2,1] to {1,3}", "Expand", 17, NULL, 1, O1(OUT(2, L(2, 3), 0, 0, 0, 1, 1, 1)), X(k, 2, 1),
         I64S(1, 3));
    MOVE("[] to {2,2}", "Expand", 17, NULL, 1, O1(OUT(2, L(2, 2), 0, 0, 0, 0)), scalar_x(k), I64S(2, 2));
    MOVE("[2,1] to {2,0}", "Expand", 17, NULL, 1, O1(SEQ(2, 2, 0)), X(k, 2, 1), I64S(2, 0));
    MOVE("[0,3] to {2,1,1}", "Expand", 17, NULL, 1, O1(SEQ(3, 2, 0, 3)), X(k, 0, 3), I64S(2, 1, 1));
    /* Tile */
    MOVE("[2,3] x {2,1}", "Tile", 17, NULL, 1,
         O1(OUT(2, L(4, 3), 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5)), X(k, 2, 3), I64S(2, 1));
    MOVE("[2,2] x {1,2}", "Tile", 17, NULL, 1, O1(OUT(2, L(2, 4), 0, 1, 0, 1, 2, 3, 2, 3)), X(k, 2, 2),
         I64S(1, 2));
    MOVE("[2,2] x {0,2}", "Tile", 17, NULL, 1, O1(SEQ(2, 0, 4)), X(k, 2, 2), I64S(0, 2));
    MOVE("[0,2] x {3,1}", "Tile", 17, NULL, 1, O1(SEQ(2, 0, 2)), X(k, 0, 2), I64S(3, 1));
    /* Pad: pads are [begins..., ends...] */
    MOVE("[2,2] constant", "Pad", 17, NULL, 1,
         O1(OUT(2, L(3, 3), PADV, PADV, PADV, 0, 1, PADV, 2, 3, PADV)), X(k, 2, 2), I64S(1, 0, 0, 1), padv(k));
    MOVE("[1,2] default constant 0", "Pad", 17, NULL, 1, O1(OUT(2, L(1, 3), ZERO, 0, 1)), X(k, 1, 2),
         I64S(0, 1, 0, 0));
    MOVE("[2,3] reflect", "Pad", 17, ATTRS(AS("mode", "reflect")), 1,
         O1(OUT(2, L(2, 5), 1, 0, 1, 2, 1, 4, 3, 4, 5, 4)), X(k, 2, 3), I64S(0, 1, 0, 1));
    MOVE("[2,3] edge", "Pad", 17, ATTRS(AS("mode", "edge")), 1,
         O1(OUT(2, L(3, 3), 0, 1, 2, 0, 1, 2, 3, 4, 5)), X(k, 2, 3), I64S(1, 0, 0, 0));
    MOVE("[2,3] negative pads", "Pad", 17, NULL, 1, O1(OUT(2, L(2, 2), 1, 2, 4, 5)), X(k, 2, 3),
         I64S(0, -1, 0, 0));
    MOVE("[0,2] constant", "Pad", 17, NULL, 1, O1(OUT(2, L(2, 2), PADV, PADV, PADV, PADV)), X(k, 0, 2),
         I64S(1, 0, 1, 0), padv(k));
    MOVE("[2,3] axes {-1} (opset 18)", "Pad", 18, NULL, 1,
         O1(OUT(2, L(2, 5), PADV, 0, 1, 2, PADV, PADV, 3, 4, 5, PADV)), X(k, 2, 3), I64S(1, 1), padv(k),
         I64S(-1));
    MOVE("[2,3] wrap (opset 19)", "Pad", 19, ATTRS(AS("mode", "wrap")), 1,
         O1(OUT(2, L(2, 5), 2, 0, 1, 2, 0, 5, 3, 4, 5, 3)), X(k, 2, 3), I64S(0, 1, 0, 1));
    /* Split */
    MOVE("[2,4] axis -1 in 2", "Split", 17, ATTRS(AI("axis", -1)), 2,
         ((const mout[]){OUT(2, L(2, 2), 0, 1, 4, 5), OUT(2, L(2, 2), 2, 3, 6, 7)}), X(k, 2, 4));
    MOVE("[2,4] axis -1 split {1,3}", "Split", 17, ATTRS(AI("axis", -1)), 2,
         ((const mout[]){OUT(2, L(2, 1), 0, 4), OUT(2, L(2, 3), 1, 2, 3, 5, 6, 7)}), X(k, 2, 4), I64S(1, 3));
    MOVE("[2,4] axis 0 split {0,2}", "Split", 17, NULL, 2, ((const mout[]){SEQ(2, 0, 4), SEQ(2, 2, 4)}),
         X(k, 2, 4), I64S(0, 2));
    MOVE("[0,4] axis -1 in 2", "Split", 17, ATTRS(AI("axis", -1)), 2,
         ((const mout[]){SEQ(2, 0, 2), SEQ(2, 0, 2)}), X(k, 0, 4));
    MOVE("[5] num_outputs=3 (opset 18)", "Split", 18, ATTRS(AI("num_outputs", 3)), 3,
         ((const mout[]){OUT(1, L(2), 0, 1), OUT(1, L(2), 2, 3), OUT(1, L(1), 4)}), X(k, 5));
    /* Squeeze, Unsqueeze */
    MOVE("[1,3,1] axes {-1}", "Squeeze", 17, NULL, 1, O1(SEQ(2, 1, 3)), X(k, 1, 3, 1), I64S(-1));
    MOVE("[1,3,1] no axes", "Squeeze", 17, NULL, 1, O1(SEQ(1, 3)), X(k, 1, 3, 1));
    MOVE("[0,1] axes {-1}", "Squeeze", 17, NULL, 1, O1(SEQ(1, 0)), X(k, 0, 1), I64S(-1));
    MOVE("[1,3,1] attr axes {-3} (opset 11)", "Squeeze", 11, ATTRS(AIS("axes", -3)), 1, O1(SEQ(2, 3, 1)),
         X(k, 1, 3, 1));
    MOVE("[3] axes {-1,0}", "Unsqueeze", 17, NULL, 1, O1(SEQ(3, 1, 3, 1)), X(k, 3), I64S(-1, 0));
    MOVE("[0,2] axes {1}", "Unsqueeze", 17, NULL, 1, O1(SEQ(3, 0, 1, 2)), X(k, 0, 2), I64S(1));
    MOVE("[] axes {0}", "Unsqueeze", 17, NULL, 1, O1(SEQ(1, 1)), scalar_x(k), I64S(0));
    MOVE("[2] attr axes {-1} (opset 11)", "Unsqueeze", 11, ATTRS(AIS("axes", -1)), 1, O1(SEQ(2, 2, 1)),
         X(k, 2));
    /* Flatten */
    MOVE("[2,3,2] axis -1", "Flatten", 17, ATTRS(AI("axis", -1)), 1, O1(SEQ(2, 6, 2)), X(k, 2, 3, 2));
    MOVE("[2,3,2] axis 0", "Flatten", 17, ATTRS(AI("axis", 0)), 1, O1(SEQ(2, 1, 12)), X(k, 2, 3, 2));
    MOVE("[2,3,2] default axis", "Flatten", 17, NULL, 1, O1(SEQ(2, 2, 6)), X(k, 2, 3, 2));
    MOVE("[2,3,2] axis 3", "Flatten", 17, ATTRS(AI("axis", 3)), 1, O1(SEQ(2, 12, 1)), X(k, 2, 3, 2));
    MOVE("[2,0,3] axis 2", "Flatten", 17, ATTRS(AI("axis", 2)), 1, O1(SEQ(2, 0, 3)), X(k, 2, 0, 3));
    MOVE("[2,0,3] axis -3", "Flatten", 17, ATTRS(AI("axis", -3)), 1, O1(SEQ(2, 1, 0)), X(k, 2, 0, 3));
    /* Identity, Where-free copies of every dtype */
    MOVE("[0,3]", "Identity", 17, NULL, 1, O1(SEQ(2, 0, 3)), X(k, 0, 3));
    char what[64];
    snprintf(what, sizeof what, "data movement %s", dname(k));
    sweep_done(what, cases);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("eval_dtypes");
    TCase *t = tcase_create("sweep");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, test_elementwise, 0, NDT);
    tcase_add_test(t, test_pow_exponent_dtypes);
    tcase_add_test(t, test_clip);
    tcase_add_test(t, test_clip_int64_exact);
    tcase_add_test(t, test_range);
    tcase_add_test(t, test_cast);
    tcase_add_loop_test(t, test_reductions, 0, NDT);
    tcase_add_loop_test(t, test_data_movement, 0, NDT);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    srunner_set_fork_status(r, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
