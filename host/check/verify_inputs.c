/* host/check/verify_inputs.c - random and real input sets for verification
 * (verify_inputs.h). */
#include "verify_inputs.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/exit.h"
#include "base/util.h"

#define MAX_RANK 64
#define MAX_FIXED 64 /* longest shape/axes list a rule writes */

/* ------------------------------------------------------------ random numbers */

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13; /* xorshift64 */
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double unit(uint64_t *s) { return (double)(next_random(s) >> 11) / 9007199254740992.0; }

/* ------------------------------------------------------------ rules */

enum { RULE_NONE, RULE_RANGE, RULE_FIXED, RULE_POSITIONS };

/* What values one graph input gets. */
typedef struct input_rule {
    int kind;
    double lo, hi;            /* RULE_RANGE: [lo, hi) */
    int64_t vals[MAX_FIXED];  /* RULE_FIXED: the values, repeated; RULE_POSITIONS: element i is
                                 in [0, vals[i % n_vals]) */
    size_t n_vals;
    int user;                 /* from --verify-range */
    char why[240];
} input_rule;

static void why_add(input_rule *r, const char *fmt, va_list ap)
{
    size_t len = strlen(r->why);
    if (len && len + 2 < sizeof r->why)
        len += (size_t)snprintf(r->why + len, sizeof r->why - len, "; ");
    if (len < sizeof r->why)
        vsnprintf(r->why + len, sizeof r->why - len, fmt, ap);
}

/* A range from one more consumer: ranges intersect; a list wins. */
static void offer_range(input_rule *r, double lo, double hi, const char *fmt, ...) HOST_PRINTF(4, 5);
static void offer_range(input_rule *r, double lo, double hi, const char *fmt, ...)
{
    if (r->kind == RULE_NONE) {
        r->kind = RULE_RANGE;
        r->lo = lo;
        r->hi = hi;
    } else if (r->kind == RULE_RANGE && fmax(lo, r->lo) < fmin(hi, r->hi)) {
        r->lo = fmax(lo, r->lo);
        r->hi = fmin(hi, r->hi);
    } else {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    why_add(r, fmt, ap);
    va_end(ap);
}

/* A list of values (kind RULE_FIXED or RULE_POSITIONS), if none was set. */
static void offer_list(input_rule *r, int kind, const int64_t *vals, size_t n, const char *fmt, ...)
    HOST_PRINTF(5, 6);
static void offer_list(input_rule *r, int kind, const int64_t *vals, size_t n, const char *fmt, ...)
{
    if (r->kind != RULE_NONE || n == 0 || n > MAX_FIXED)
        return;
    r->kind = kind;
    memcpy(r->vals, vals, n * sizeof *vals);
    r->n_vals = n;
    va_list ap;
    va_start(ap, fmt);
    why_add(r, fmt, ap);
    va_end(ap);
}

/* Static dim `axis` of v (negative: from the end), or -1. */
static int64_t static_dim(const ph_value *v, int64_t axis)
{
    int rank = v ? ph_value_rank(v) : -1;
    if (rank < 0)
        return -1;
    if (axis < 0)
        axis += rank;
    return axis >= 0 && axis < rank ? ph_value_dim(v, (int)axis) : -1;
}

/* The constant tensor of v: an initializer or a Constant node's value. */
static const ph_tensor *const_of(const ph_value *v)
{
    const ph_tensor *t = v ? ph_value_const(v) : NULL;
    ph_node *p = v && !t ? ph_value_producer(v) : NULL;
    if (p && ph_node_op(p) == PH_OP_Constant)
        t = ph_node_attr_tensor(p, "value");
    return t;
}

/* A one-element integer constant, or -1. */
static int64_t const_scalar(const ph_value *v)
{
    const ph_tensor *t = const_of(v);
    int64_t x;
    if (!t || ph_tensor_numel(t) != 1 ||
        ph_tensor_read_i64(t, ph_tensor_rank(t), ph_tensor_dims(t), &x) != 0)
        return -1;
    return x;
}

/* 1 when v is a constant whose values are all whole numbers. */
static int const_whole(const ph_value *v)
{
    const ph_tensor *t = const_of(v);
    int64_t n = t ? ph_tensor_numel(t) : -1;
    if (n < 1 || n > 4096)
        return 0;
    double *d = host_xmalloc((size_t)n * sizeof *d);
    int whole = ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), d) == 0;
    for (int64_t i = 0; whole && i < n; i++)
        whole = d[i] == floor(d[i]);
    free(d);
    return whole;
}

static int is_int_dtype(int dt)
{
    return dt == PH_DT_INT8 || dt == PH_DT_INT16 || dt == PH_DT_INT32 || dt == PH_DT_INT64 ||
           dt == PH_DT_UINT8 || dt == PH_DT_UINT16 || dt == PH_DT_UINT32 || dt == PH_DT_UINT64;
}

static int is_reduce(ph_op op)
{
    return op == PH_OP_ReduceSum || op == PH_OP_ReduceMean || op == PH_OP_ReduceMax ||
           op == PH_OP_ReduceMin || op == PH_OP_ReduceProd || op == PH_OP_ReduceL1 ||
           op == PH_OP_ReduceL2 || op == PH_OP_ReduceSumSquare || op == PH_OP_ReduceLogSum ||
           op == PH_OP_ReduceLogSumExp;
}

/* A node's name for a note, or its op when it has none. */
static const char *label(const ph_node *n)
{
    return ph_node_name(n)[0] ? ph_node_name(n) : "(unnamed)";
}

/* indices into dim d of data (the axis-th): [0, d), or 0 when d is not static. */
static void offer_index(input_rule *r, const ph_node *n, const ph_value *data, int64_t axis)
{
    int64_t d = static_dim(data, axis);
    if (d > 0)
        offer_range(r, 0, (double)d, "indices of %s '%s' (dim %lld)", ph_node_op_type(n),
                    label(n), (long long)d);
    else
        offer_range(r, 0, 1, "indices of %s '%s' (dim not static: 0)", ph_node_op_type(n),
                    label(n));
}

/* 0, 1, ..., n-1 */
static void offer_axes(input_rule *r, const ph_node *n, int64_t count, const char *what)
{
    int64_t vals[MAX_FIXED];
    for (int64_t i = 0; i < count && i < MAX_FIXED; i++)
        vals[i] = i;
    offer_list(r, RULE_FIXED, vals, count > 0 ? (size_t)count : 0, "%s of %s '%s'", what,
               ph_node_op_type(n), label(n));
}

/* GatherND / ScatterND indices: position j of the last dim indexes data dim
 * batch + j. */
static void offer_nd(input_rule *r, const ph_node *n, const ph_value *data, const ph_value *idx,
                     int64_t batch)
{
    int64_t k = static_dim(idx, -1), bounds[MAX_FIXED];
    if (k < 1 || k > MAX_FIXED)
        return;
    for (int64_t j = 0; j < k; j++) {
        int64_t d = static_dim(data, batch + j);
        bounds[j] = d > 0 ? d : 1;
    }
    offer_list(r, RULE_POSITIONS, bounds, (size_t)k, "indices of %s '%s'", ph_node_op_type(n),
               label(n));
}

/* The rule input `in` (the graph input, of length len along dim 0) gets from
 * use (n, k).  shaped: reached through an op that moves elements, so lists
 * (which depend on positions) do not apply. */
static void rule_of_use(input_rule *r, const ph_node *n, size_t k, int64_t len, int shaped, int dtype)
{
    ph_op op = ph_node_op(n);
    const ph_value *x = ph_node_input_count(n) ? ph_node_input(n, 0) : NULL;
    int64_t list_len = shaped ? -1 : len; /* lists only where positions are the input's own */
    if (k == 1 && (op == PH_OP_Gather || op == PH_OP_GatherElements || op == PH_OP_ScatterElements ||
                   op == PH_OP_Scatter))
        offer_index(r, n, x, ph_node_attr_int(n, "axis", 0));
    else if (k == 1 && op == PH_OP_GatherND && !shaped)
        offer_nd(r, n, x, ph_node_input(n, 1), ph_node_attr_int(n, "batch_dims", 0));
    else if (k == 1 && op == PH_OP_ScatterND && !shaped)
        offer_nd(r, n, x, ph_node_input(n, 1), 0);
    else if (k == 0 && op == PH_OP_OneHot) {
        int64_t depth = ph_node_input_count(n) > 1 ? const_scalar(ph_node_input(n, 1)) : -1;
        if (depth > 0)
            offer_range(r, 0, (double)depth, "indices of OneHot '%s' (depth %lld)", label(n),
                        (long long)depth);
        else
            offer_range(r, 0, 1, "indices of OneHot '%s' (depth not constant: 0)", label(n));
    } else if (k == 1 && op == PH_OP_OneHot)
        offer_range(r, 1, 10, "depth of OneHot '%s'", label(n));
    else if (k == 1 && (op == PH_OP_Div || op == PH_OP_Mod) && is_int_dtype(dtype))
        offer_range(r, 1, 10, "integer divisor of %s '%s'", ph_node_op_type(n), label(n));
    else if (k == 0 && (op == PH_OP_Log || op == PH_OP_Sqrt))
        offer_range(r, 0.1, 1, "input of %s '%s'", ph_node_op_type(n), label(n));
    else if (k == 0 && op == PH_OP_Pow && ph_node_input_count(n) > 1 && !const_whole(ph_node_input(n, 1)))
        offer_range(r, 0.1, 1, "base of Pow '%s' (exponent not whole)", label(n));
    else if (k == 0 && op == PH_OP_Acosh)
        offer_range(r, 1, 2, "input of Acosh '%s'", label(n));
    else if ((k == 2 && op == PH_OP_Resize) || (k == 1 && op == PH_OP_Upsample))
        offer_range(r, 1, 2, "scales of %s '%s'", ph_node_op_type(n), label(n));
    else if (k == 3 && op == PH_OP_Resize)
        offer_range(r, 1, 10, "sizes of Resize '%s'", label(n));
    else if ((k == 1 && op == PH_OP_Tile) || (k == 4 && op == PH_OP_Slice) || (k == 2 && op == PH_OP_Range))
        offer_range(r, 1, 3, "%s of %s '%s'", op == PH_OP_Tile ? "repeats" : op == PH_OP_Slice ? "steps" : "delta",
                    ph_node_op_type(n), label(n));
    else if (k == 0 && op == PH_OP_ConstantOfShape)
        offer_range(r, 1, 4, "shape of ConstantOfShape '%s'", label(n));
    else if (k == 1 && op == PH_OP_Pad)
        offer_range(r, 0, 3, "pads of Pad '%s'", label(n));
    else if (k == 1 && op == PH_OP_TopK) {
        int64_t d = static_dim(x, ph_node_attr_int(n, "axis", -1));
        offer_range(r, 1, d > 0 ? (double)d + 1 : 2, "k of TopK '%s'", label(n));
    } else if (list_len > 0 && k == 1 && op == PH_OP_Reshape) {
        int64_t vals[MAX_FIXED];
        for (int64_t i = 0; i < list_len && i < MAX_FIXED; i++)
            vals[i] = i ? 1 : -1;
        offer_list(r, RULE_FIXED, vals, (size_t)list_len, "shape of Reshape '%s'", label(n));
    } else if (list_len > 0 && k == 1 && op == PH_OP_Expand) {
        int64_t vals[MAX_FIXED];
        for (int64_t i = 0; i < list_len && i < MAX_FIXED; i++)
            vals[i] = 1;
        offer_list(r, RULE_FIXED, vals, (size_t)list_len, "shape of Expand '%s'", label(n));
    } else if (list_len > 0 && ((k == 1 && (op == PH_OP_Unsqueeze || is_reduce(op))) ||
                                (k == 3 && (op == PH_OP_Slice || op == PH_OP_Pad)))) {
        offer_axes(r, n, list_len, "axes");
    } else if (list_len > 0 && k == 1 && op == PH_OP_Squeeze) {
        int64_t vals[MAX_FIXED];
        size_t found = 0;
        for (int i = 0; x && i < ph_value_rank(x) && found < (size_t)list_len && found < MAX_FIXED; i++)
            if (ph_value_dim(x, i) == 1)
                vals[found++] = i;
        if (found == (size_t)list_len)
            offer_list(r, RULE_FIXED, vals, found, "axes of Squeeze '%s' (its dims of size 1)",
                       label(n));
    } else if (list_len > 0 && k == 1 && op == PH_OP_Split) {
        int64_t d = static_dim(x, ph_node_attr_int(n, "axis", 0)), vals[MAX_FIXED];
        for (int64_t i = 0; d >= 0 && i < list_len && i < MAX_FIXED; i++)
            vals[i] = d / list_len + (i < d % list_len);
        if (d >= 0)
            offer_list(r, RULE_FIXED, vals, (size_t)list_len, "split of Split '%s' (dim %lld)",
                       label(n), (long long)d);
    } else if (k == 1 && (op == PH_OP_SoftmaxCrossEntropyLoss ||
                          !strcmp(ph_node_op_type(n), "NegativeLogLikelihoodLoss"))) {
        int64_t c = static_dim(x, 1);
        offer_range(r, 0, c > 0 ? (double)c : 1, "target of %s '%s' (classes %lld)", ph_node_op_type(n),
                    label(n), (long long)c);
    } else if (k == 1 && op == PH_OP_Dropout) {
        offer_range(r, 0, 0.9, "ratio of Dropout '%s'", label(n));
    } else if ((k == 4 && (op == PH_OP_RNN || op == PH_OP_GRU || op == PH_OP_LSTM)) ||
               (k == 1 && op == PH_OP_ReverseSequence)) {
        int64_t axis = op == PH_OP_ReverseSequence ? ph_node_attr_int(n, "time_axis", 0)
                                                   : ph_node_attr_int(n, "layout", 0) != 0;
        int64_t t = static_dim(x, axis);
        offer_range(r, 1, t > 0 ? (double)t + 1 : 2, "sequence lengths of %s '%s' (time dim %lld)",
                    ph_node_op_type(n), label(n), (long long)t);
    } else if (k == 0 && op == PH_OP_Loop) {
        offer_range(r, 1, 4, "trip count of Loop '%s'", label(n));
    } else if (k == 2 && op == PH_OP_RoiAlign) {
        offer_index(r, n, x, 0);
    } else if (k == 1 && op == PH_OP_CumSum && !shaped) {
        int64_t zero = 0;
        offer_list(r, RULE_FIXED, &zero, 1, "axis of CumSum '%s'", label(n));
    }
}

/* Walk the uses of v (and, through value-keeping ops, of what they make),
 * at most *budget of them. */
static void derive(const ph_value *v, int depth, int shaped, int64_t len, int dtype, size_t *budget,
                   input_rule *r)
{
    for (size_t u = 0; u < ph_value_use_count(v) && *budget; u++, --*budget) {
        size_t k;
        const ph_node *n = ph_value_use(v, u, &k);
        if (!n || ph_node_domain(n)[0])
            continue;
        ph_op op = ph_node_op(n);
        const ph_value *out = ph_node_output_count(n) ? ph_node_output(n, 0) : NULL;
        if (depth < 8 && out && k == 0 && (op == PH_OP_Identity || op == PH_OP_Cast))
            derive(out, depth + 1, shaped, len, dtype, budget, r);
        else if (depth < 8 && out &&
                 ((k == 0 && (op == PH_OP_Reshape || op == PH_OP_Flatten || op == PH_OP_Squeeze ||
                              op == PH_OP_Unsqueeze || op == PH_OP_Transpose || op == PH_OP_Expand)) ||
                  (k > 0 && op == PH_OP_Where)))
            derive(out, depth + 1, 1, len, dtype, budget, r);
        else
            rule_of_use(r, n, k, len, shaped, dtype);
    }
}

/* "name=lo:hi; ..." for input `name`: 1 and the range, 0 when not named,
 * or HOST_EXIT_CONFIG for a malformed entry. */
static int parse_ranges(const char *spec, const ph_graph *g, ph_error *err)
{
    char *copy = host_xstrdup(spec ? spec : "");
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ";", &save); tok && !rc; tok = strtok_r(NULL, ";", &save)) {
        tok = host_trim(tok);
        if (!*tok)
            continue;
        char whole[240];
        snprintf(whole, sizeof whole, "%s", tok);
        char *eq = strrchr(tok, '='), *colon = eq ? strchr(eq, ':') : NULL, *e1 = NULL, *e2 = NULL;
        double lo = 0, hi = 0;
        if (eq && colon) {
            *eq = *colon = '\0';
            lo = strtod(eq + 1, &e1);
            hi = strtod(colon + 1, &e2);
        }
        const ph_value *v = eq ? ph_graph_find_value(g, host_trim(tok)) : NULL;
        if (!eq || !colon || e1 == eq + 1 || *host_trim(e1) || e2 == colon + 1 || *host_trim(e2) ||
            !isfinite(lo) || !isfinite(hi) || !(lo < hi))
            rc = ph_error_set(err, HOST_EXIT_CONFIG,
                              "verify range '%s': want NAME=LO:HI with LO < HI (values in [LO, HI))",
                              whole);
        else if (!v || !ph_value_is_graph_input(v))
            rc = ph_error_set(err, HOST_EXIT_CONFIG, "verify range: '%.200s' is not a graph input",
                              host_trim(tok));
    }
    free(copy);
    return rc;
}

/* The user's range of input `name`, if any (spec checked by parse_ranges). */
static int user_range(const char *spec, const char *name, input_rule *r)
{
    char *copy = host_xstrdup(spec ? spec : "");
    int found = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        tok = host_trim(tok);
        char *eq = strrchr(tok, '=');
        if (!eq)
            continue;
        *eq = '\0';
        if (strcmp(host_trim(tok), name) != 0)
            continue;
        char *colon = strchr(eq + 1, ':');
        memset(r, 0, sizeof *r);
        r->kind = RULE_RANGE;
        r->user = 1;
        r->lo = strtod(eq + 1, NULL);
        r->hi = strtod(colon + 1, NULL);
        snprintf(r->why, sizeof r->why, "--verify-range");
        found = 1;
    }
    free(copy);
    return found;
}

/* ------------------------------------------------------------ filling */

/* The dtype's range as doubles (saturating what a rule asks for): values
 * in [*lo, *hi) fit the integer dtype.  Float dtypes are left as they are. */
static void clamp_to_dtype(int dtype, double *lo, double *hi)
{
    double a = 0, b = 0;
    switch (dtype) {
    case PH_DT_INT8: a = -128, b = 128; break;
    case PH_DT_UINT8: case PH_DT_BOOL: a = 0, b = dtype == PH_DT_BOOL ? 2 : 256; break;
    case PH_DT_INT16: a = -32768, b = 32768; break;
    case PH_DT_UINT16: a = 0, b = 65536; break;
    case PH_DT_INT32: a = -2147483648.0, b = 2147483648.0; break;
    case PH_DT_UINT32: a = 0, b = 4294967296.0; break;
    case PH_DT_INT64: a = -9.2e18, b = 9.2e18; break;
    case PH_DT_UINT64: a = 0, b = 1.8e19; break;
    default: return;
    }
    *lo = fmin(fmax(*lo, a), b - 1);
    *hi = fmax(fmin(*hi, b), *lo + 1);
}

/* Element i of d as x (an integer dtype saturates: a C conversion out of
 * range would be undefined). */
static void put(void *d, int dtype, int64_t i, double x)
{
    double hi = x + 1;
    clamp_to_dtype(dtype, &x, &hi);
    switch (dtype) {
    case PH_DT_FLOAT: ((float *)d)[i] = (float)x; break;
    case PH_DT_DOUBLE: ((double *)d)[i] = x; break;
    case PH_DT_FLOAT16: ((uint16_t *)d)[i] = ph_f64_to_f16_bits(x); break;
    case PH_DT_BFLOAT16: ((uint16_t *)d)[i] = ph_f64_to_bf16_bits(x); break;
    case PH_DT_BOOL: ((uint8_t *)d)[i] = x != 0; break;
    case PH_DT_INT8: ((int8_t *)d)[i] = (int8_t)x; break;
    case PH_DT_UINT8: ((uint8_t *)d)[i] = (uint8_t)x; break;
    case PH_DT_INT16: ((int16_t *)d)[i] = (int16_t)x; break;
    case PH_DT_UINT16: ((uint16_t *)d)[i] = (uint16_t)x; break;
    case PH_DT_INT32: ((int32_t *)d)[i] = (int32_t)x; break;
    case PH_DT_UINT32: ((uint32_t *)d)[i] = (uint32_t)x; break;
    case PH_DT_INT64: ((int64_t *)d)[i] = (int64_t)x; break;
    case PH_DT_UINT64: ((uint64_t *)d)[i] = (uint64_t)x; break;
    default: break;
    }
}

static void fill(void *d, int dtype, int64_t n, const input_rule *r, uint64_t *s)
{
    int integral = is_int_dtype(dtype) || dtype == PH_DT_BOOL;
    double lo = r->lo, hi = r->hi;
    if (r->kind == RULE_RANGE && integral) { /* whole numbers lo, lo+1, ..., hi-1 */
        lo = ceil(lo);
        hi = fmax(ceil(hi), lo + 1);
        clamp_to_dtype(dtype, &lo, &hi);
    }
    for (int64_t i = 0; i < n; i++) {
        double u = unit(s);
        if (r->kind == RULE_RANGE) {
            double x = lo + u * (hi - lo);
            put(d, dtype, i, integral ? fmin(floor(x), hi - 1) : x);
        } else if (r->kind == RULE_FIXED) {
            put(d, dtype, i, (double)r->vals[(size_t)i % r->n_vals]);
        } else if (r->kind == RULE_POSITIONS) {
            put(d, dtype, i, floor(u * (double)r->vals[(size_t)i % r->n_vals]));
        } else if (dtype == PH_DT_FLOAT16) {
            /* halves in [-1, 1): sign, exponent 0..14, mantissa */
            ((uint16_t *)d)[i] = (uint16_t)(((u < 0.5) << 15) | ((uint16_t)(next_random(s) % 15) << 10) |
                                            (next_random(s) & 0x3ff));
        } else if (dtype == PH_DT_FLOAT || dtype == PH_DT_DOUBLE || dtype == PH_DT_BFLOAT16) {
            put(d, dtype, i, 2 * u - 1);
        } else if (dtype == PH_DT_BOOL) {
            put(d, dtype, i, u < 0.5);
        } else {
            put(d, dtype, i, floor(u * 10));
        }
    }
}

static void dims_text(char *buf, size_t size, size_t rank, const int64_t *dims)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < rank && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "x" : "", (long long)dims[i]);
    if (!rank)
        snprintf(buf, size, "scalar");
}

/* The dims random values of v take: static dims, else sym_dim (noted).
 * 0, or HOST_EXIT_NOVERIFY naming the input and its size. */
static int input_dims(const ph_value *v, int64_t sym_dim, uint64_t max_bytes, int64_t *dims, int *rank_out,
                      int *defaulted, ph_error *err)
{
    int dtype = ph_value_dtype(v), rank = ph_value_rank(v);
    if (!dtype)
        return ph_error_set(err, HOST_EXIT_NOVERIFY,
                            "graph input '%s' is not a tensor of a known dtype (a sequence, optional or "
                            "map?): verification evaluates tensors only", ph_value_name(v));
    if (!ph_dtype_size(dtype))
        return ph_error_set(err, HOST_EXIT_NOVERIFY,
                            "graph input '%s' is a %s tensor: verification makes numeric inputs only",
                            ph_value_name(v), ph_dtype_name(dtype));
    if (rank < 0)
        return ph_error_set(err, HOST_EXIT_NOVERIFY,
                            "graph input '%s' has no known rank: give its shape with --input-shape %s:DIMS",
                            ph_value_name(v), ph_value_name(v));
    if (rank > MAX_RANK)
        return ph_error_set(err, HOST_EXIT_NOVERIFY, "graph input '%s': rank %d is too large to verify",
                            ph_value_name(v), rank);
    *defaulted = 0;
    uint64_t bytes = ph_dtype_size(dtype);
    int overflow = 0;
    for (int i = 0; i < rank; i++) {
        int64_t d = ph_value_dim(v, i);
        if (d < 0) {
            d = sym_dim;
            *defaulted = 1;
        }
        dims[i] = d;
        overflow |= __builtin_mul_overflow(bytes, (uint64_t)d, &bytes);
    }
    *rank_out = rank;
    if (overflow || bytes > max_bytes) {
        char shape[400];
        dims_text(shape, sizeof shape, (size_t)rank, dims);
        long double elems = 1;
        for (int i = 0; i < rank; i++)
            elems *= (long double)dims[i];
        return ph_error_set(err, HOST_EXIT_NOVERIFY,
                            "cannot verify: graph input '%s' of shape %s (%s) has %.3Lg elements, "
                            "%.3Lg bytes; verification makes inputs of at most %llu bytes",
                            ph_value_name(v), shape, ph_dtype_name(dtype), elems,
                            elems * (long double)ph_dtype_size(dtype), (unsigned long long)max_bytes);
    }
    return 0;
}

/* ------------------------------------------------------------ real data */

/* v's name as a file name: '/', '\' and ':' become '_'. */
static char *file_name_of(const char *name, const char *ext)
{
    char *s = host_xasprintf("%s%s", name, ext);
    for (char *c = s; *c; c++)
        if (*c == '/' || *c == '\\' || *c == ':')
            *c = '_';
    return s;
}

/* The position of the graph input named `name` / file index k. */
static size_t find_input(const ph_graph *g, const char *name)
{
    for (size_t i = 0; name && i < ph_graph_input_count(g); i++)
        if (strcmp(ph_value_name(ph_graph_input(g, i)), name) == 0)
            return i;
    return SIZE_MAX;
}

static size_t find_output(const ph_graph *g, const char *name)
{
    for (size_t i = 0; name && i < ph_graph_output_count(g); i++)
        if (strcmp(ph_value_name(ph_graph_output(g, i)), name) == 0)
            return i;
    return SIZE_MAX;
}

/* The k-th graph input without an initializer. */
static size_t nth_fed_input(const ph_graph *g, size_t k)
{
    for (size_t i = 0; i < ph_graph_input_count(g); i++)
        if (!ph_value_is_initializer(ph_graph_input(g, i)) && k-- == 0)
            return i;
    return SIZE_MAX;
}

static void type_text(char *buf, size_t size, int dtype, int rank, const int64_t *dims,
                      const ph_value *v)
{
    size_t k = (size_t)snprintf(buf, size, "%s [", ph_dtype_name(dtype));
    for (int i = 0; i < rank && k < size; i++) {
        int64_t d = v ? ph_value_dim(v, i) : dims[i];
        const char *p = v && d < 0 ? ph_value_dim_param(v, i) : NULL;
        k += d >= 0 ? (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)d)
                    : (size_t)snprintf(buf + k, size - k, "%s%s", i ? "," : "", p && *p ? p : "?");
    }
    if (k < size)
        snprintf(buf + k, size - k, "]");
}

/* *t read from `file` must fit value v (dtype, rank, static dims).  A
 * uint16 tensor for a bfloat16 value holds its bits (NumPy has no
 * bfloat16, and ONNX's test data stores it so): *t is replaced by a
 * bfloat16 tensor of the same bytes. */
static int check_fits(const ph_value *v, ph_tensor **tp, const char *file, const char *what,
                      ph_error *err)
{
    ph_tensor *t = *tp;
    int dtype = ph_value_dtype(v), rank = ph_value_rank(v);
    if (dtype == PH_DT_BFLOAT16 && ph_tensor_dtype(t) == PH_DT_UINT16 && ph_tensor_data(t)) {
        ph_tensor *b = ph_tensor_new(PH_DT_BFLOAT16, ph_tensor_rank(t), ph_tensor_dims(t), ph_tensor_data(t));
        if (!b)
            return ph_error_set(err, HOST_EXIT_NOVERIFY, "%s: out of memory", file);
        ph_tensor_free(t);
        *tp = t = b;
    }
    int ok = (!dtype || dtype == ph_tensor_dtype(t)) && (rank < 0 || (size_t)rank == ph_tensor_rank(t));
    for (int i = 0; ok && rank > 0 && i < rank; i++)
        ok = ph_value_dim(v, i) < 0 || ph_value_dim(v, i) == ph_tensor_dim(t, (size_t)i);
    if (ok && !ph_tensor_data(t))
        return ph_error_set(err, HOST_EXIT_NOVERIFY, "%s: %s '%s': the file holds %s values, which "
                            "verification cannot evaluate or compare", file, what, ph_value_name(v),
                            ph_dtype_name(ph_tensor_dtype(t)));
    if (ok)
        return 0;
    char a[300], b[300];
    type_text(a, sizeof a, ph_tensor_dtype(t), (int)ph_tensor_rank(t), ph_tensor_dims(t), NULL);
    type_text(b, sizeof b, dtype, rank, NULL, v);
    return ph_error_set(err, HOST_EXIT_CONFIG, "%s: the file holds %s, %s '%s' is %s", file, a, what,
                        ph_value_name(v), rank < 0 ? ph_dtype_name(dtype) : b);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Store t as input or expected output slot; a slot given twice is an error. */
static int take(ph_tensor **slot, ph_tensor *t, const char *file, const char *what, const char *name,
                ph_error *err)
{
    if (*slot) {
        ph_tensor_free(t);
        return ph_error_set(err, HOST_EXIT_CONFIG, "%s: %s '%s' is given twice in the folder", file,
                            what, name);
    }
    *slot = t;
    return 0;
}

/* DIR/input_K.pb and DIR/output_K.pb. */
static int read_pb_folder(const ph_graph *g, const char *dir, host_input_set *set, ph_error *err)
{
    int rc = 0;
    for (int out = 0; out < 2 && !rc; out++) {
        for (size_t k = 0; !rc; k++) {
            char *file = host_xasprintf("%s/%s_%zu.pb", dir, out ? "output" : "input", k);
            if (!exists(file)) {
                free(file);
                break;
            }
            char *name = NULL;
            ph_error terr = {0};
            ph_tensor *t = ph_tensor_load_pb(file, &name, &terr);
            size_t at = out ? k : nth_fed_input(g, k); /* the value it stands for by position */
            const ph_value *pos = out ? (at < ph_graph_output_count(g) ? ph_graph_output(g, at) : NULL)
                                      : (at != SIZE_MAX ? ph_graph_input(g, at) : NULL);
            if (!t && pos && !ph_value_dtype(pos)) {
                rc = ph_error_set(err, HOST_EXIT_NOVERIFY,
                                  "%s: graph %s '%s' is not a tensor of a known dtype (a sequence, "
                                  "optional or map?): verification evaluates tensors only",
                                  file, out ? "output" : "input", ph_value_name(pos));
            } else if (!t) {
                rc = ph_error_set(err, HOST_EXIT_CONFIG, "--verify-data: %s", terr.message);
            } else if (!out) {
                size_t i = find_input(g, name);
                if (i == SIZE_MAX)
                    i = at;
                if (i == SIZE_MAX) {
                    rc = ph_error_set(err, HOST_EXIT_CONFIG,
                                      "%s: no graph input for it (its name '%s' is none, and the model "
                                      "has fewer than %zu inputs without an initializer)", file,
                                      name ? name : "", k + 1);
                    ph_tensor_free(t);
                } else if (!(rc = check_fits(ph_graph_input(g, i), &t, file, "input", err))) {
                    rc = take(&set->inputs[i], t, file, "input", ph_value_name(ph_graph_input(g, i)), err);
                } else {
                    ph_tensor_free(t);
                }
            } else {
                size_t o = find_output(g, name);
                if (o == SIZE_MAX && k < ph_graph_output_count(g))
                    o = k;
                if (o == SIZE_MAX) {
                    rc = ph_error_set(err, HOST_EXIT_CONFIG, "%s: the model has %zu outputs", file,
                                      ph_graph_output_count(g));
                    ph_tensor_free(t);
                } else if ((rc = check_fits(ph_graph_output(g, o), &t, file, "output", err))) {
                    ph_tensor_free(t);
                } else if (!(rc = take(&set->expected[o], t, file, "output",
                                       ph_value_name(ph_graph_output(g, o)), err))) {
                    set->expected_file[o] = host_xstrdup(file);
                    set->n_expected++;
                }
            }
            free(name);
            free(file);
        }
    }
    return rc;
}

/* DIR/NAME.npy for inputs and outputs; any other .npy file is an error. */
static int read_npy_folder(const ph_graph *g, const char *dir, host_input_set *set, ph_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return ph_error_set(err, HOST_EXIT_CONFIG, "--verify-data %s: %s", dir, strerror(errno));
    int rc = 0;
    for (struct dirent *de; !rc && (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".npy") != 0)
            continue;
        size_t in = SIZE_MAX, out = SIZE_MAX;
        for (size_t i = 0; i < ph_graph_input_count(g) && in == SIZE_MAX; i++) {
            char *f = file_name_of(ph_value_name(ph_graph_input(g, i)), ".npy");
            in = strcmp(f, de->d_name) == 0 ? i : SIZE_MAX;
            free(f);
        }
        for (size_t o = 0; in == SIZE_MAX && o < ph_graph_output_count(g) && out == SIZE_MAX; o++) {
            char *f = file_name_of(ph_value_name(ph_graph_output(g, o)), ".npy");
            out = strcmp(f, de->d_name) == 0 ? o : SIZE_MAX;
            free(f);
        }
        char *file = host_xasprintf("%s/%s", dir, de->d_name);
        if (in == SIZE_MAX && out == SIZE_MAX) {
            rc = ph_error_set(err, HOST_EXIT_CONFIG,
                              "%s: names no graph input or output (a .npy file is named after the "
                              "value, NAME.npy)", file);
            free(file);
            break;
        }
        ph_error terr = {0};
        ph_tensor *t = ph_tensor_load_npy(file, &terr);
        const ph_value *v = in != SIZE_MAX ? ph_graph_input(g, in) : ph_graph_output(g, out);
        if (!t)
            rc = ph_error_set(err, HOST_EXIT_CONFIG, "--verify-data: %s", terr.message);
        else if ((rc = check_fits(v, &t, file, in != SIZE_MAX ? "input" : "output", err)))
            ph_tensor_free(t);
        else if (in != SIZE_MAX)
            set->inputs[in] = t;
        else {
            set->expected[out] = t;
            set->expected_file[out] = host_xstrdup(file);
            set->n_expected++;
        }
        free(file);
    }
    closedir(d);
    return rc;
}

static int read_folder(const ph_graph *g, const char *dir, host_input_set *set, ph_error *err)
{
    if (!is_dir(dir))
        return ph_error_set(err, HOST_EXIT_CONFIG, "--verify-data %s: %s", dir,
                            exists(dir) ? "not a folder" : "no such folder");
    char *first = host_xasprintf("%s/input_0.pb", dir);
    int pb = exists(first);
    free(first);
    int rc = pb ? read_pb_folder(g, dir, set, err) : read_npy_folder(g, dir, set, err);
    for (size_t i = 0; !rc && i < ph_graph_input_count(g); i++) {
        const ph_value *v = ph_graph_input(g, i);
        if (set->inputs[i] || ph_value_is_initializer(v))
            continue;
        char *f = file_name_of(ph_value_name(v), ".npy");
        rc = ph_error_set(err, HOST_EXIT_CONFIG, "--verify-data %s: no data for graph input '%s' "
                          "(want %s)", dir, ph_value_name(v), pb ? "an input_K.pb naming it" : f);
        free(f);
    }
    return rc;
}

/* ------------------------------------------------------------ the sets */

static void add_note(host_input_sets *s, char *note)
{
    s->notes = realloc(s->notes, (s->n_notes + 1) * sizeof *s->notes);
    if (!s->notes)
        abort();
    s->notes[s->n_notes++] = note;
}

static char *rule_text(const ph_value *v, const input_rule *r)
{
    int integral = is_int_dtype(ph_value_dtype(v)) || ph_value_dtype(v) == PH_DT_BOOL;
    if (r->kind == RULE_RANGE)
        return host_xasprintf("%s: %s in [%.6g, %.6g) (%s)", ph_value_name(v), integral ? "integers" : "values",
                              integral ? ceil(r->lo) : r->lo, integral ? fmax(ceil(r->hi), ceil(r->lo) + 1) : r->hi,
                              r->why);
    char list[300] = "";
    size_t k = 0;
    for (size_t i = 0; i < r->n_vals && k < sizeof list; i++)
        k += (size_t)snprintf(list + k, sizeof list - k, "%s%lld", i ? ", " : "", (long long)r->vals[i]);
    if (r->kind == RULE_FIXED)
        return host_xasprintf("%s: [%s] (%s)", ph_value_name(v), list, r->why);
    return host_xasprintf("%s: integers below [%s] along the last dim (%s)", ph_value_name(v), list, r->why);
}

static void set_alloc(host_input_set *set, size_t n_in, size_t n_out)
{
    set->inputs = host_xcalloc(n_in + 1, sizeof *set->inputs);
    set->expected = host_xcalloc(n_out + 1, sizeof *set->expected);
    set->expected_file = host_xcalloc(n_out + 1, sizeof *set->expected_file);
}

static int make_random(ph_model *m, const host_verify_config *vc, int64_t sym_dim, uint64_t max_bytes,
                       host_input_sets *s, ph_error *err)
{
    ph_graph *g = ph_model_graph(m);
    int rc = parse_ranges(vc->range, g, err);
    if (rc)
        return rc;
    size_t n_in = s->n_inputs;
    input_rule *rules = host_xcalloc(n_in + 1, sizeof *rules);
    int64_t (*dims)[MAX_RANK] = host_xcalloc(n_in + 1, sizeof *dims);
    int *ranks = host_xcalloc(n_in + 1, sizeof *ranks);
    char *defaulted = host_xstrdup("");
    for (size_t i = 0; i < n_in && !rc; i++) {
        const ph_value *v = ph_graph_input(g, i);
        if (ph_value_is_initializer(v))
            continue; /* keep the model's default */
        int dflt = 0;
        if ((rc = input_dims(v, sym_dim, max_bytes, dims[i], &ranks[i], &dflt, err)))
            break;
        if (dflt) {
            char declared[300], used[300];
            type_text(declared, sizeof declared, ph_value_dtype(v), ranks[i], NULL, v);
            dims_text(used, sizeof used, (size_t)ranks[i], dims[i]);
            char *more = host_xasprintf("%s%s'%s' %s -> %s", defaulted, *defaulted ? ", " : "",
                                        ph_value_name(v), strchr(declared, '['), used);
            free(defaulted);
            defaulted = more;
            if (!s->first_defaulted)
                s->first_defaulted = host_xstrdup(ph_value_name(v));
        }
        size_t budget = 10000; /* uses looked at: a bound for graphs of many Casts and Identities */
        if (!user_range(vc->range, ph_value_name(v), &rules[i]))
            derive(v, 0, 0, ranks[i] == 1 ? dims[i][0] : -1, ph_value_dtype(v), &budget, &rules[i]);
        if (rules[i].kind != RULE_NONE)
            add_note(s, rule_text(v, &rules[i]));
    }
    s->defaulted = defaulted;
    size_t runs = rc ? 0 : (size_t)vc->runs;
    s->sets = host_xcalloc(runs + 1, sizeof *s->sets);
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)vc->seed;
    for (size_t r = 0; r < runs && !rc; r++) {
        host_input_set *set = &s->sets[s->count++];
        set_alloc(set, n_in, s->n_outputs);
        set->label = host_xasprintf("run %zu", r + 1);
        for (size_t i = 0; i < n_in && !rc; i++) {
            const ph_value *v = ph_graph_input(g, i);
            if (ph_value_is_initializer(v))
                continue;
            void *data = NULL;
            int dtype = ph_value_dtype(v);
            ph_tensor *t = ph_tensor_new_uninit(dtype, (size_t)ranks[i], dims[i], &data);
            if (!t) {
                rc = ph_error_set(err, HOST_EXIT_NOVERIFY, "cannot verify: out of memory for graph input '%s'",
                                  ph_value_name(v));
                break;
            }
            fill(data, dtype, ph_tensor_numel(t), &rules[i], &seed);
            set->inputs[i] = t;
        }
    }
    free(rules);
    free(dims);
    free(ranks);
    return rc;
}

int host_input_sets_make(ph_model *m, const host_verify_config *vc, int64_t sym_dim, uint64_t max_bytes,
                         host_input_sets *out, ph_error *err)
{
    memset(out, 0, sizeof *out);
    ph_graph *g = ph_model_graph(m);
    out->n_inputs = ph_graph_input_count(g);
    out->n_outputs = ph_graph_output_count(g);
    if (!vc->data.count)
        return make_random(m, vc, sym_dim, max_bytes, out, err);
    out->from_data = 1;
    out->defaulted = host_xstrdup("");
    out->sets = host_xcalloc(vc->data.count + 1, sizeof *out->sets);
    int rc = 0;
    for (size_t k = 0; k < vc->data.count && !rc; k++) {
        host_input_set *set = &out->sets[out->count++];
        set_alloc(set, out->n_inputs, out->n_outputs);
        set->label = host_xstrdup(vc->data.items[k].text);
        rc = read_folder(g, set->label, set, err);
    }
    return rc;
}

void host_input_sets_free(host_input_sets *s)
{
    for (size_t r = 0; r < s->count; r++) {
        host_input_set *set = &s->sets[r];
        for (size_t i = 0; i < s->n_inputs; i++)
            ph_tensor_free(set->inputs[i]);
        for (size_t o = 0; o < s->n_outputs; o++) {
            ph_tensor_free(set->expected[o]);
            free(set->expected_file[o]);
        }
        free(set->inputs);
        free(set->expected);
        free(set->expected_file);
        free(set->label);
    }
    for (size_t i = 0; i < s->n_notes; i++)
        free(s->notes[i]);
    free(s->notes);
    free(s->sets);
    free(s->defaulted);
    free(s->first_defaulted);
    memset(s, 0, sizeof *s);
}
