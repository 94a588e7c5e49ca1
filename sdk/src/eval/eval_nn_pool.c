/* sdk/src/eval/eval_nn_pool.c - AveragePool, MaxPool (with the optional Indices
 * output), GlobalAveragePool and GlobalMaxPool, any spatial rank.
 *
 * Output sizes follow the ONNX formulas: floor((in + pads - dk) / s) + 1,
 * or ceil(...) + 1 with ceil_mode, where dk = (k - 1) * dilation + 1; with
 * ceil_mode a last window that would start past the input and the leading
 * pad is dropped (as PyTorch and ONNX Runtime do).  auto_pad SAME_UPPER /
 * SAME_LOWER / VALID are honoured.  AveragePool divides by the number of
 * taps inside the input, or with count_include_pad by the taps inside the
 * input plus explicit pads (never beyond them).  MaxPool Indices are
 * flat indices into X (row major spatial order, or column major with
 * storage_order = 1).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_nn.h"

#define R EVAL_NN_MAX_RANK

typedef struct pgeom {
    size_t nd;
    int64_t N, C;
    int64_t in[R], out[R], k[R], s[R], d[R], pb[R], pe[R];
    int64_t in_sp, out_sp, k_sp;
} pgeom;

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

static int ints_attr(eval_kargs *a, const char *op, const char *name, size_t n, int64_t dflt,
                     int64_t *dst, int required)
{
    const int64_t *v;
    ptrdiff_t cnt = ph_node_attr_ints(a->node, name, &v);
    if (cnt < 0) {
        if (required)
            return ph_error_set(a->err, PH_EINVAL, "%s: attribute %s is required", op, name);
        for (size_t i = 0; i < n; i++)
            dst[i] = dflt;
        return 0;
    }
    if ((size_t)cnt != n)
        return ph_error_set(a->err, PH_EINVAL, "%s: attribute %s has %td values, expected %zu", op,
                            name, cnt, n);
    memcpy(dst, v, n * sizeof *dst);
    return 0;
}

static int pool_geom(eval_kargs *a, const char *op, const ph_tensor *x, pgeom *g)
{
    size_t rank = ph_tensor_rank(x);
    if (rank < 3 || rank - 2 > R)
        return ph_error_set(a->err, rank < 3 ? PH_EINVAL : PH_EUNSUPPORTED,
                            "%s: X has rank %zu", op, rank);
    g->nd = rank - 2;
    const int64_t *xd = ph_tensor_dims(x);
    g->N = xd[0];
    g->C = xd[1];
    int64_t pads[2 * R];
    int rc;
    if ((rc = ints_attr(a, op, "kernel_shape", g->nd, 1, g->k, 1)) ||
        (rc = ints_attr(a, op, "strides", g->nd, 1, g->s, 0)) ||
        (rc = ints_attr(a, op, "dilations", g->nd, 1, g->d, 0)) ||
        (rc = ints_attr(a, op, "pads", 2 * g->nd, 0, pads, 0)))
        return rc;
    int ceil_mode = ph_node_attr_int(a->node, "ceil_mode", 0) != 0;
    const char *ap = ph_node_attr_string(a->node, "auto_pad", "NOTSET");
    int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    if (!same && strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: auto_pad %s not supported", op, ap);
    for (size_t i = 0; i < g->nd; i++) {
        g->in[i] = xd[2 + i];
        if (g->k[i] < 1 || g->s[i] < 1 || g->d[i] < 1 || pads[i] < 0 || pads[g->nd + i] < 0)
            return ph_error_set(a->err, PH_EINVAL, "%s: bad kernel_shape, strides, dilations or pads", op);
        /* bounded, so no output-size formula below can overflow */
        if (g->in[i] > EVAL_NN_DIM_MAX || g->k[i] > EVAL_NN_DIM_MAX || g->s[i] > EVAL_NN_DIM_MAX ||
            g->d[i] > EVAL_NN_DIM_MAX || pads[i] > EVAL_NN_DIM_MAX || pads[g->nd + i] > EVAL_NN_DIM_MAX)
            return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: a spatial dim, kernel, stride, dilation or pad above 2^30", op);
        int64_t dk = (g->k[i] - 1) * g->d[i] + 1;
        if (same) {
            g->out[i] = ceil_div(g->in[i], g->s[i]);
            int64_t tot = (g->out[i] - 1) * g->s[i] + dk - g->in[i];
            if (tot < 0)
                tot = 0;
            g->pb[i] = ap[5] == 'U' ? tot / 2 : tot - tot / 2;
            g->pe[i] = tot - g->pb[i];
            continue;
        }
        if (!strcmp(ap, "VALID")) {
            g->pb[i] = g->pe[i] = 0;
        } else {
            g->pb[i] = pads[i];
            g->pe[i] = pads[g->nd + i];
        }
        int64_t span = g->in[i] + g->pb[i] + g->pe[i] - dk;
        if (span < 0)
            return ph_error_set(a->err, PH_EINVAL, "%s: kernel larger than padded input", op);
        g->out[i] = (ceil_mode ? ceil_div(span, g->s[i]) : span / g->s[i]) + 1;
        if (ceil_mode && (g->out[i] - 1) * g->s[i] >= g->in[i] + g->pb[i])
            g->out[i]--;
    }
    g->in_sp = eval_nn_prod(g->in, g->nd);
    g->out_sp = eval_nn_prod(g->out, g->nd);
    g->k_sp = eval_nn_prod(g->k, g->nd);
    return 0;
}

static ph_tensor *alloc_out(int dt, const pgeom *g)
{
    int64_t od[R + 2] = {g->N, g->C};
    memcpy(od + 2, g->out, g->nd * sizeof *od);
    return ir_tensor_alloc(dt, g->nd + 2, od);
}

/* Walk every (output position, kernel tap) of one plane: calls BODY with
 * `src` the flat spatial input index (valid taps only) and `cnt_pad` counting
 * taps inside input + explicit pads.  o and kk are multi-indices. */
#define POOL_LOOP(g, INIT, BODY, FINISH)                                                        \
    do {                                                                                        \
        int64_t o_[R] = {0};                                                                    \
        for (int64_t q_ = 0; q_ < (g)->out_sp; q_++) {                                          \
            INIT;                                                                               \
            int64_t kk_[R] = {0};                                                               \
            for (int64_t t_ = 0; t_ < (g)->k_sp; t_++) {                                        \
                int64_t src = 0, ok_ = 1, inpad_ = 1;                                           \
                for (size_t j_ = 0; j_ < (g)->nd; j_++) {                                       \
                    int64_t i_ = o_[j_] * (g)->s[j_] - (g)->pb[j_] + kk_[j_] * (g)->d[j_];      \
                    if (i_ < 0 || i_ >= (g)->in[j_]) ok_ = 0;                                   \
                    if (i_ >= (g)->in[j_] + (g)->pe[j_]) inpad_ = 0;                            \
                    src = src * (g)->in[j_] + i_;                                               \
                }                                                                               \
                cnt_pad += inpad_;                                                              \
                if (ok_) { BODY; }                                                              \
                for (size_t j_ = (g)->nd; j_-- > 0;) {                                          \
                    if (++kk_[j_] < (g)->k[j_]) break;                                          \
                    kk_[j_] = 0;                                                                \
                }                                                                               \
            }                                                                                   \
            FINISH;                                                                             \
            for (size_t j_ = (g)->nd; j_-- > 0;) {                                              \
                if (++o_[j_] < (g)->out[j_]) break;                                             \
                o_[j_] = 0;                                                                     \
            }                                                                                   \
        }                                                                                       \
    } while (0)

#define DEF_AVG(NAME, T)                                                                        \
    static void NAME(const T *x, T *y, const pgeom *g, int include_pad)                        \
    {                                                                                           \
        for (int64_t p = 0; p < g->N * g->C; p++, x += g->in_sp, y += g->out_sp) {              \
            double sum = -0.0; /* the identity of +: a window of -0 averages to -0 */           \
            int64_t cnt = 0, cnt_pad = 0;                                                       \
            POOL_LOOP(g, (sum = -0.0, cnt = 0, cnt_pad = 0), (sum += x[src], cnt++),            \
                      y[q_] = (T)(sum / (double)(include_pad ? cnt_pad : cnt)));                \
        }                                                                                       \
    }
DEF_AVG(avg_f, float)
DEF_AVG(avg_d, double)

int eval_k_average_pool(eval_kargs *a)
{
    const ph_tensor *x = a->in[0];
    if (!x)
        return ph_error_set(a->err, PH_EINVAL, "AveragePool: needs X");
    int dt = ph_tensor_dtype(x);
    if (dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "AveragePool: dtype %s not supported",
                            ph_dtype_name(dt));
    pgeom g;
    int rc = pool_geom(a, "AveragePool", x, &g);
    if (rc)
        return rc;
    ph_tensor *y = alloc_out(dt, &g);
    if (!y)
        return ph_error_set(a->err, PH_ENOMEM, "AveragePool: out of memory");
    int inc = ph_node_attr_int(a->node, "count_include_pad", 0) != 0;
    if (ph_tensor_numel(y) > 0) {
        if (dt == PH_DT_FLOAT)
            avg_f(ph_tensor_data(x), ir_tensor_mut(y), &g, inc);
        else
            avg_d(ph_tensor_data(x), ir_tensor_mut(y), &g, inc);
    }
    a->out[0] = y;
    return 0;
}

/* Column-major spatial index of a row-major one (storage_order = 1). */
static int64_t col_major(int64_t src, const pgeom *g)
{
    int64_t r = 0, mul = 1, idx[R];
    for (size_t j = g->nd; j-- > 0;) {
        idx[j] = src % g->in[j];
        src /= g->in[j];
    }
    for (size_t j = 0; j < g->nd; j++) {
        r += idx[j] * mul;
        mul *= g->in[j];
    }
    return r;
}

#define DEF_MAX(NAME, T, LOWEST)                                                                \
    static void NAME(const T *x, T *y, int64_t *ind, const pgeom *g, int order)                \
    {                                                                                           \
        for (int64_t p = 0; p < g->N * g->C; p++, y += g->out_sp) {                             \
            const T *xp = x + p * g->in_sp;                                                     \
            T best = LOWEST;                                                                    \
            int64_t arg = -1, cnt_pad = 0;                                                      \
            POOL_LOOP(g, (best = LOWEST, arg = -1),                                             \
                      if (arg < 0 || xp[src] > best) { best = xp[src]; arg = src; },            \
                      y[q_] = best;                                                             \
                      if (ind) ind[p * g->out_sp + q_] =                                        \
                          p * g->in_sp + (arg < 0 ? 0 : order ? col_major(arg, g) : arg));      \
            (void)cnt_pad;                                                                      \
        }                                                                                       \
    }
DEF_MAX(max_f, float, -INFINITY)
DEF_MAX(max_d, double, -INFINITY)
DEF_MAX(max_i8, int8_t, INT8_MIN)
DEF_MAX(max_u8, uint8_t, 0)

int eval_k_max_pool(eval_kargs *a)
{
    const ph_tensor *x = a->in[0];
    if (!x)
        return ph_error_set(a->err, PH_EINVAL, "MaxPool: needs X");
    int dt = ph_tensor_dtype(x);
    if (dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE && dt != PH_DT_INT8 && dt != PH_DT_UINT8)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "MaxPool: dtype %s not supported",
                            ph_dtype_name(dt));
    int64_t order = ph_node_attr_int(a->node, "storage_order", 0);
    if (order != 0 && order != 1)
        return ph_error_set(a->err, PH_EINVAL, "MaxPool: storage_order %lld", (long long)order);
    pgeom g;
    int rc = pool_geom(a, "MaxPool", x, &g);
    if (rc)
        return rc;
    int want_ind = a->n_out > 1 && (!a->out_wanted || a->out_wanted[1]);
    ph_tensor *y = alloc_out(dt, &g), *ind = NULL;
    if (y && want_ind) {
        ind = alloc_out(PH_DT_INT64, &g);
        if (!ind) {
            ph_tensor_free(y);
            y = NULL;
        }
    }
    if (!y)
        return ph_error_set(a->err, PH_ENOMEM, "MaxPool: out of memory");
    int64_t *ip = ind ? ir_tensor_mut(ind) : NULL;
    if (ph_tensor_numel(y) > 0) {
        const void *xp = ph_tensor_data(x);
        void *yp = ir_tensor_mut(y);
        switch (dt) {
        case PH_DT_FLOAT: max_f(xp, yp, ip, &g, (int)order); break;
        case PH_DT_DOUBLE: max_d(xp, yp, ip, &g, (int)order); break;
        case PH_DT_INT8: max_i8(xp, yp, ip, &g, (int)order); break;
        default: max_u8(xp, yp, ip, &g, (int)order); break;
        }
    }
    a->out[0] = y;
    if (want_ind)
        a->out[1] = ind;
    return 0;
}

/* Global pools: reduce every (n, c) plane to one value. */
static int global_pool(eval_kargs *a, const char *op, int is_max)
{
    const ph_tensor *x = a->in[0];
    if (!x)
        return ph_error_set(a->err, PH_EINVAL, "%s: needs X", op);
    int dt = ph_tensor_dtype(x);
    if (dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: dtype %s not supported", op,
                            ph_dtype_name(dt));
    size_t rank = ph_tensor_rank(x);
    if (rank < 2 || rank > R + 2)
        return ph_error_set(a->err, PH_EINVAL, "%s: X has rank %zu", op, rank);
    const int64_t *xd = ph_tensor_dims(x);
    int64_t od[R + 2];
    for (size_t i = 0; i < rank; i++)
        od[i] = i < 2 ? xd[i] : 1;
    int64_t planes = xd[0] * xd[1], sp = eval_nn_prod(xd + 2, rank - 2);
    if (sp == 0 && planes > 0)
        return ph_error_set(a->err, PH_EINVAL, "%s: empty spatial extent", op);
    ph_tensor *y = ir_tensor_alloc(dt, rank, od);
    if (!y)
        return ph_error_set(a->err, PH_ENOMEM, "%s: out of memory", op);
    for (int64_t p = 0; p < planes; p++) {
        if (dt == PH_DT_FLOAT) {
            const float *xp = (const float *)ph_tensor_data(x) + p * sp;
            float m = xp[0];
            double s = 0;
            for (int64_t i = 0; i < sp; i++) {
                if (xp[i] > m)
                    m = xp[i];
                s += xp[i];
            }
            ((float *)ir_tensor_mut(y))[p] = is_max ? m : (float)(s / (double)sp);
        } else {
            const double *xp = (const double *)ph_tensor_data(x) + p * sp;
            double m = xp[0], s = 0;
            for (int64_t i = 0; i < sp; i++) {
                if (xp[i] > m)
                    m = xp[i];
                s += xp[i];
            }
            ((double *)ir_tensor_mut(y))[p] = is_max ? m : s / (double)sp;
        }
    }
    a->out[0] = y;
    return 0;
}

int eval_k_global_average_pool(eval_kargs *a)
{
    return global_pool(a, "GlobalAveragePool", 0);
}

int eval_k_global_max_pool(eval_kargs *a)
{
    return global_pool(a, "GlobalMaxPool", 1);
}

/* LpPool: (sum over the window of |x|^p)^(1/p), p = 2 by default; taps in
 * the padding add nothing. */
#define DEF_LP(NAME, T)                                                                         \
    static void NAME(const T *x, T *y, const pgeom *g, double pw)                              \
    {                                                                                           \
        for (int64_t p = 0; p < g->N * g->C; p++, x += g->in_sp, y += g->out_sp) {              \
            double sum = 0;                                                                     \
            int64_t cnt_pad = 0;                                                                \
            POOL_LOOP(g, (sum = 0), (sum += pow(fabs((double)x[src]), pw)),                     \
                      y[q_] = (T)pow(sum, 1 / pw));                                             \
            (void)cnt_pad;                                                                      \
        }                                                                                       \
    }
DEF_LP(lp_f, float)
DEF_LP(lp_d, double)

static int lp_order(eval_kargs *a, const char *op, double *p)
{
    int64_t v = ph_node_attr_int(a->node, "p", 2);
    if (v < 1)
        return ph_error_set(a->err, PH_EINVAL, "%s: p must be positive", op);
    *p = (double)v;
    return 0;
}

int eval_k_lp_pool(eval_kargs *a)
{
    const ph_tensor *x = a->in[0];
    if (!x)
        return ph_error_set(a->err, PH_EINVAL, "LpPool: needs X");
    int dt = ph_tensor_dtype(x);
    if (dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "LpPool: dtype %s not supported", ph_dtype_name(dt));
    pgeom g;
    double p = 2;
    int rc = pool_geom(a, "LpPool", x, &g);
    if (rc || (rc = lp_order(a, "LpPool", &p)) != 0)
        return rc;
    ph_tensor *y = alloc_out(dt, &g);
    if (!y)
        return ph_error_set(a->err, PH_ENOMEM, "LpPool: out of memory");
    if (ph_tensor_numel(y) > 0) {
        if (dt == PH_DT_FLOAT)
            lp_f(ph_tensor_data(x), ir_tensor_mut(y), &g, p);
        else
            lp_d(ph_tensor_data(x), ir_tensor_mut(y), &g, p);
    }
    a->out[0] = y;
    return 0;
}

/* GlobalLpPool: the p-norm of each whole plane. */
int eval_k_global_lp_pool(eval_kargs *a)
{
    const char *op = "GlobalLpPool";
    const ph_tensor *x = a->in[0];
    if (!x || !ph_tensor_data(x))
        return ph_error_set(a->err, PH_EINVAL, "%s: needs X", op);
    int dt = ph_tensor_dtype(x);
    if (dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: dtype %s not supported", op, ph_dtype_name(dt));
    size_t rank = ph_tensor_rank(x);
    double p = 2;
    int rc;
    if (rank < 2 || rank > R + 2)
        return ph_error_set(a->err, PH_EINVAL, "%s: X has rank %zu", op, rank);
    if ((rc = lp_order(a, op, &p)) != 0)
        return rc;
    const int64_t *xd = ph_tensor_dims(x);
    int64_t od[R + 2];
    for (size_t i = 0; i < rank; i++)
        od[i] = i < 2 ? xd[i] : 1;
    int64_t planes = xd[0] * xd[1], sp = eval_nn_prod(xd + 2, rank - 2);
    ph_tensor *y = ir_tensor_alloc(dt, rank, od);
    if (!y)
        return ph_error_set(a->err, PH_ENOMEM, "%s: out of memory", op);
    for (int64_t q = 0; q < planes; q++) {
        double s = 0;
        for (int64_t i = 0; i < sp; i++) {
            double v = dt == PH_DT_FLOAT ? ((const float *)ph_tensor_data(x))[q * sp + i]
                                         : ((const double *)ph_tensor_data(x))[q * sp + i];
            s += pow(fabs(v), p);
        }
        if (dt == PH_DT_FLOAT)
            ((float *)ir_tensor_mut(y))[q] = (float)pow(s, 1 / p);
        else
            ((double *)ir_tensor_mut(y))[q] = pow(s, 1 / p);
    }
    a->out[0] = y;
    return 0;
}

/* A box coordinate rounded half away from zero, bounded to +-2^30 (NaN 0)
 * so the bin arithmetic stays defined. */
static int64_t roi_coord(double v)
{
    v = round(v);
    return v != v ? 0 : v > EVAL_NN_DIM_MAX ? EVAL_NN_DIM_MAX : v < -EVAL_NN_DIM_MAX ? -EVAL_NN_DIM_MAX : (int64_t)v;
}

/* MaxRoiPool: the max over each of pooled_shape bins of each region of
 * interest ([batch, x1, y1, x2, y2] scaled by spatial_scale and rounded,
 * as Caffe's and ONNX Runtime's RoiPool); an empty bin gives 0. */
int eval_k_max_roi_pool(eval_kargs *a)
{
    const char *op = "MaxRoiPool";
    const ph_tensor *x = a->in[0], *rois = a->n_in > 1 ? a->in[1] : NULL;
    if (!x || !rois || !ph_tensor_data(x) || !ph_tensor_data(rois))
        return ph_error_set(a->err, PH_EINVAL, "%s: needs X and rois", op);
    int dt = ph_tensor_dtype(x);
    if ((dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE) || ph_tensor_dtype(rois) != dt)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: dtype %s not supported", op, ph_dtype_name(dt));
    int64_t ps[2];
    int rc = ints_attr(a, op, "pooled_shape", 2, 1, ps, 1);
    if (rc)
        return rc;
    if (ph_tensor_rank(x) != 4 || ph_tensor_rank(rois) != 2 || ph_tensor_dim(rois, 1) != 5 || ps[0] < 1 || ps[1] < 1)
        return ph_error_set(a->err, PH_EINVAL, "%s: X must be [N, C, H, W], rois [R, 5], pooled_shape positive", op);
    double scale = ph_node_attr_float(a->node, "spatial_scale", 1.0f);
    int64_t N = ph_tensor_dim(x, 0), C = ph_tensor_dim(x, 1), H = ph_tensor_dim(x, 2), W = ph_tensor_dim(x, 3);
    int64_t nr = ph_tensor_dim(rois, 0), od[4] = {nr, C, ps[0], ps[1]};
    ph_tensor *y = ir_tensor_alloc(dt, 4, od);
    if (!y)
        return ph_error_set(a->err, PH_ENOMEM, "%s: out of memory", op);
#define RD(t, i) (dt == PH_DT_FLOAT ? (double)((const float *)ph_tensor_data(t))[i] : ((const double *)ph_tensor_data(t))[i])
    for (int64_t r = 0; r < nr; r++) {
        double bd = RD(rois, r * 5);
        int64_t b = bd >= 0 && bd < (double)N ? (int64_t)bd : -1;
        if (b < 0 || b >= N) {
            ph_tensor_free(y);
            return ph_error_set(a->err, PH_EINVAL, "%s: batch index %lld is out of range", op, (long long)b);
        }
        int64_t x1 = roi_coord(RD(rois, r * 5 + 1) * scale), y1 = roi_coord(RD(rois, r * 5 + 2) * scale);
        int64_t x2 = roi_coord(RD(rois, r * 5 + 3) * scale), y2 = roi_coord(RD(rois, r * 5 + 4) * scale);
        int64_t rh = y2 - y1 + 1 > 1 ? y2 - y1 + 1 : 1, rw = x2 - x1 + 1 > 1 ? x2 - x1 + 1 : 1;
        double bh = (double)rh / (double)ps[0], bw = (double)rw / (double)ps[1];
        for (int64_t c = 0; c < C; c++)
            for (int64_t ph = 0; ph < ps[0]; ph++)
                for (int64_t pw = 0; pw < ps[1]; pw++) {
                    int64_t hs = roi_coord(floor((double)ph * bh)) + y1, he = roi_coord(ceil((double)(ph + 1) * bh)) + y1;
                    int64_t ws = roi_coord(floor((double)pw * bw)) + x1, we = roi_coord(ceil((double)(pw + 1) * bw)) + x1;
                    hs = hs < 0 ? 0 : hs > H ? H : hs;
                    he = he < 0 ? 0 : he > H ? H : he;
                    ws = ws < 0 ? 0 : ws > W ? W : ws;
                    we = we < 0 ? 0 : we > W ? W : we;
                    double m = he <= hs || we <= ws ? 0 : -INFINITY;
                    for (int64_t h = hs; h < he; h++)
                        for (int64_t w = ws; w < we; w++) {
                            double v = RD(x, ((b * C + c) * H + h) * W + w);
                            m = v > m ? v : m;
                        }
                    int64_t e = ((r * C + c) * ps[0] + ph) * ps[1] + pw;
                    if (dt == PH_DT_FLOAT)
                        ((float *)ir_tensor_mut(y))[e] = (float)m;
                    else
                        ((double *)ir_tensor_mut(y))[e] = m;
                }
    }
#undef RD
    a->out[0] = y;
    return 0;
}
