/* sdk/src/eval/eval_ops_reduce.c - kernels that reduce along axes: Reduce* (Sum
 * Mean Max Min Prod L1 L2 SumSquare LogSum LogSumExp), ArgMax ArgMin, and
 * the row normalizers Softmax LogSoftmax Hardmax.
 *
 * Reductions read the input once in memory order and accumulate into one
 * accumulator per output element (double for floats, wrapping int64 for
 * integers), so any set of axes costs one pass.  They take the dtypes of
 * their opset-17 schemas (floats, int32, int64, uint32; ReduceMax/Min also
 * int8, uint8).  Over an empty set, Sum gives 0, Prod 1, Max the lowest
 * value of the dtype (-inf for floats) and Min the highest (onnx#5568). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_ops_util.h"

/* Which axes to reduce: input 1 when given (ReduceSum from opset 13, all
 * from 18), else the attribute.  *noop: leave the tensor as it is. */
static int reduce_axes(eval_kargs *a, size_t r, int *red, int *noop)
{
    int64_t ax[EVAL_MAX_RANK];
    size_t n = 0;
    int rc;
    const ph_tensor *t = eval_in(a, 1);
    if (t) {
        if ((rc = eval_small_ints(a, t, "axes", ax, EVAL_MAX_RANK, &n)) != 0)
            return rc;
    } else {
        const int64_t *v;
        ptrdiff_t c = ph_node_attr_ints(a->node, "axes", &v);
        if (c > EVAL_MAX_RANK)
            return eval_kfail(a, PH_EUNSUPPORTED, "too many axes");
        if (c > 0)
            memcpy(ax, v, (size_t)c * sizeof *v);
        n = c > 0 ? (size_t)c : 0;
    }
    *noop = n == 0 && ph_node_attr_int(a->node, "noop_with_empty_axes", 0);
    for (size_t i = 0; i < r; i++)
        red[i] = n == 0;
    for (size_t i = 0; i < n; i++) {
        size_t k;
        if ((rc = eval_axis(a, ax[i], r, &k)) != 0)
            return rc;
        red[k] = 1;
    }
    return 0;
}

typedef struct racc {
    ph_op op;
    double *f;  /* float accumulators */
    int64_t *i; /* integer accumulators */
    const double *shift; /* LogSumExp: per-output maximum */
} racc;

static void acc_f(const racc *r, int64_t o, double v)
{
    double *p = &r->f[o];
    switch (r->op) {
    case PH_OP_ReduceMax: if (v > *p || v != v) *p = v; break;
    case PH_OP_ReduceMin: if (v < *p || v != v) *p = v; break;
    case PH_OP_ReduceProd: *p *= v; break;
    case PH_OP_ReduceL1: *p += fabs(v); break;
    case PH_OP_ReduceL2: case PH_OP_ReduceSumSquare: *p += v * v; break;
    case PH_OP_ReduceLogSumExp: *p += exp(v - r->shift[o]); break;
    default: *p += v; break;
    }
}

static void acc_i(const racc *r, int64_t o, int64_t v)
{
    int64_t *p = &r->i[o];
    switch (r->op) {
    case PH_OP_ReduceMax: if (v > *p) *p = v; break;
    case PH_OP_ReduceMin: if (v < *p) *p = v; break;
    case PH_OP_ReduceProd: *p = (int64_t)((uint64_t)*p * (uint64_t)v); break;
    case PH_OP_ReduceL1: *p = (int64_t)((uint64_t)*p + (uint64_t)(v < 0 ? 0 - (uint64_t)v : (uint64_t)v)); break;
    case PH_OP_ReduceSumSquare: *p = (int64_t)((uint64_t)*p + (uint64_t)v * (uint64_t)v); break;
    default: *p = (int64_t)((uint64_t)*p + (uint64_t)v); break;
    }
}

/* The lowest and highest value of integer dtype dt. */
static void int_range(int dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case PH_DT_INT8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case PH_DT_UINT8: *lo = 0; *hi = UINT8_MAX; break;
    case PH_DT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case PH_DT_UINT32: *lo = 0; *hi = UINT32_MAX; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
    }
}

/* One pass over x (dims d, rank r) accumulating element e into output
 * offset sum(idx[k] * os[k]). */
static void sweep(const racc *ra, const void *x, int dt, size_t r, const int64_t *d, const int64_t *os,
                  int ints)
{
    int64_t idx[EVAL_MAX_RANK] = {0}, o = 0, n = eval_numel(r, d), e = 0;
    if (n == 0)
        return;
    if (r == 0) {
        if (ints) acc_i(ra, 0, eval_load_i64(x, dt, 0));
        else acc_f(ra, 0, eval_load_f64(x, dt, 0));
        return;
    }
    int64_t row = d[r - 1], ros = os[r - 1];
    for (;;) {
        for (int64_t j = 0; j < row; j++, e++) {
            if (ints) acc_i(ra, o + j * ros, eval_load_i64(x, dt, (size_t)e));
            else acc_f(ra, o + j * ros, eval_load_f64(x, dt, (size_t)e));
        }
        size_t k = r - 1;
        for (;;) {
            if (k == 0)
                return;
            k--;
            o += os[k];
            if (++idx[k] < d[k])
                break;
            o -= os[k] * d[k];
            idx[k] = 0;
        }
    }
}

int eval_k_reduce(eval_kargs *a)
{
    ph_op op = ph_node_op(a->node);
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need(a, 0, &x, &xd);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x), is_max = op == PH_OP_ReduceMax, is_min = op == PH_OP_ReduceMin;
    if (!eval_dt_float(dt) && dt != PH_DT_INT32 && dt != PH_DT_INT64 && dt != PH_DT_UINT32 &&
        !((is_max || is_min) && (dt == PH_DT_INT8 || dt == PH_DT_UINT8)))
        return eval_kbad_dtype(a, "input", dt);
    size_t r = ph_tensor_rank(x), orank = 0;
    if (r > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EUNSUPPORTED, "rank %zu is above %d", r, EVAL_MAX_RANK);
    int red[EVAL_MAX_RANK], noop = 0, keep = (int)ph_node_attr_int(a->node, "keepdims", 1);
    if ((rc = reduce_axes(a, r, red, &noop)) != 0)
        return rc;
    const int64_t *d = ph_tensor_dims(x);
    int64_t od[EVAL_MAX_RANK], kd[EVAL_MAX_RANK], os[EVAL_MAX_RANK], cnt = 1;
    for (size_t i = 0; i < r; i++) {
        int rd = red[i] && !noop;
        kd[i] = rd ? 1 : d[i];
        cnt *= rd ? d[i] : 1;
        if (!rd || keep)
            od[orank++] = kd[i];
    }
    eval_strides(r, kd, os);
    for (size_t i = 0; i < r; i++)
        if (red[i] && !noop)
            os[i] = 0;
    int64_t on = eval_numel(r, kd);
    void *o;
    if ((rc = eval_out(a, 0, dt, orank, od, &o)) != 0 || !o)
        return rc;
    int ints = eval_dt_int(dt) && op != PH_OP_ReduceL2 && op != PH_OP_ReduceLogSum &&
               op != PH_OP_ReduceLogSumExp;
    racc ra = {op, NULL, NULL, NULL};
    double *shift = NULL;
    if (ints ? !(ra.i = malloc((size_t)(on ? on : 1) * sizeof *ra.i))
             : !(ra.f = malloc((size_t)(on ? on : 1) * sizeof *ra.f)))
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    int64_t lo, hi;
    int_range(dt, &lo, &hi);
    for (int64_t i = 0; i < on; i++) {
        if (ints)
            ra.i[i] = is_max ? lo : is_min ? hi : op == PH_OP_ReduceProd;
        else
            ra.f[i] = is_max ? -INFINITY : is_min ? INFINITY : op == PH_OP_ReduceProd;
    }
    if (op == PH_OP_ReduceLogSumExp) { /* first pass: the maxima, for stability */
        racc mx = {PH_OP_ReduceMax, NULL, NULL, NULL};
        if (!(shift = malloc((size_t)(on ? on : 1) * sizeof *shift))) {
            free(ra.f);
            return eval_kfail(a, PH_ENOMEM, "out of memory");
        }
        for (int64_t i = 0; i < on; i++)
            shift[i] = -INFINITY;
        mx.f = shift;
        sweep(&mx, xd, dt, r, d, os, 0);
        for (int64_t i = 0; i < on; i++)
            if (isinf(shift[i]))
                shift[i] = 0;
        ra.shift = shift;
    }
    sweep(&ra, xd, dt, r, d, os, ints);
    for (int64_t i = 0; i < on; i++) {
        if (ints) {
            int64_t v = ra.i[i];
            if (op == PH_OP_ReduceMean)
                v = cnt ? v / cnt : 0;
            eval_store_i64(o, dt, (size_t)i, v);
            continue;
        }
        double v = ra.f[i];
        switch (op) {
        case PH_OP_ReduceMean: v = v / (double)cnt; break;
        case PH_OP_ReduceL2: v = sqrt(v); break;
        case PH_OP_ReduceLogSum: v = log(v); break;
        case PH_OP_ReduceLogSumExp: v = log(v) + shift[i]; break;
        default: break;
        }
        eval_store_f64(o, dt, (size_t)i, v);
    }
    free(ra.f);
    free(ra.i);
    free(shift);
    return 0;
}

int eval_k_argmax(eval_kargs *a)
{
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need(a, 0, &x, &xd);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x), is_max = ph_node_op(a->node) == PH_OP_ArgMax;
    if (!eval_dt_numeric(dt) || dt == PH_DT_UINT64)
        return eval_kbad_dtype(a, "input", dt);
    size_t r = ph_tensor_rank(x), ax, orank = 0;
    if (r > EVAL_MAX_RANK || r == 0)
        return eval_kfail(a, PH_EUNSUPPORTED, "rank %zu is not supported", r);
    if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", 0), r, &ax)) != 0)
        return rc;
    int keep = (int)ph_node_attr_int(a->node, "keepdims", 1);
    int last = (int)ph_node_attr_int(a->node, "select_last_index", 0);
    int64_t od[EVAL_MAX_RANK];
    for (size_t i = 0; i < r; i++)
        if (i != ax || keep)
            od[orank++] = i == ax ? 1 : ph_tensor_dim(x, i);
    int64_t *o;
    if ((rc = eval_out(a, 0, PH_DT_INT64, orank, od, (void **)&o)) != 0 || !o)
        return rc;
    int64_t n = ph_tensor_dim(x, ax), outer = eval_numel(ax, ph_tensor_dims(x));
    int64_t inner = eval_numel(r - ax - 1, ph_tensor_dims(x) + ax + 1);
    if (n == 0 && outer * inner > 0)
        return eval_kfail(a, PH_EINVAL, "cannot take an arg-extremum over an empty axis");
    for (int64_t i = 0; i < outer; i++)
        for (int64_t j = 0; j < inner; j++) {
            size_t base = (size_t)(i * n * inner + j);
            int64_t best = 0;
            double bv = eval_load_f64(xd, dt, base);
            for (int64_t k = 1; k < n; k++) {
                double v = eval_load_f64(xd, dt, base + (size_t)(k * inner));
                int better = is_max ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv));
                if (better) {
                    best = k;
                    bv = v;
                }
            }
            o[i * inner + j] = best;
        }
    return 0;
}

/* Softmax, LogSoftmax, Hardmax: before opset 13 over the 2-D coercion at
 * axis (default 1), from 13 along one axis (default -1). */
int eval_k_softmax(eval_kargs *a)
{
    ph_op op = ph_node_op(a->node);
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need(a, 0, &x, &xd);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x);
    if (!eval_dt_float(dt))
        return eval_kbad_dtype(a, "input", dt);
    size_t r = ph_tensor_rank(x), ax;
    int old = a->opset < 13;
    int64_t axis = ph_node_attr_int(a->node, "axis", old ? 1 : -1);
    if ((rc = eval_axis(a, axis, r ? r : 1, &ax)) != 0)
        return rc;
    const int64_t *d = ph_tensor_dims(x);
    int64_t outer = eval_numel(ax, d), n, inner;
    if (r == 0) {
        n = 1;
        inner = 1;
    } else if (old) {
        n = eval_numel(r - ax, d + ax);
        inner = 1;
    } else {
        n = d[ax];
        inner = eval_numel(r - ax - 1, d + ax + 1);
    }
    void *o;
    if ((rc = eval_out(a, 0, dt, r, d, &o)) != 0 || !o)
        return rc;
    for (int64_t i = 0; i < outer; i++)
        for (int64_t j = 0; j < inner; j++) {
            size_t base = (size_t)(i * n * inner + j), st = (size_t)inner;
            double mx = -INFINITY, sum = 0;
            int64_t arg = 0;
            for (int64_t k = 0; k < n; k++) {
                double v = eval_load_f64(xd, dt, base + (size_t)k * st);
                if (v > mx) {
                    mx = v;
                    arg = k;
                }
            }
            for (int64_t k = 0; k < n; k++)
                sum += exp(eval_load_f64(xd, dt, base + (size_t)k * st) - mx);
            for (int64_t k = 0; k < n; k++) {
                double v = eval_load_f64(xd, dt, base + (size_t)k * st) - mx, y;
                if (op == PH_OP_Softmax)
                    y = exp(v) / sum;
                else if (op == PH_OP_LogSoftmax)
                    y = v - log(sum);
                else
                    y = k == arg;
                eval_store_f64(o, dt, base + (size_t)k * st, y);
            }
        }
    return 0;
}
