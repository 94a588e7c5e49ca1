/* sdk/src/eval/eval_nn_norm.c - BatchNormalization, InstanceNormalization,
 * LayerNormalization, LRN and MeanVarianceNormalization, float32 and float64.
 *
 * Statistics are accumulated in double whatever the dtype, so results are
 * at least as accurate as the usual single-precision kernels.
 * BatchNormalization with training_mode = 1 (opset 14+) normalizes with the
 * batch's own mean and (biased) variance per channel and gives the running
 * mean and variance, input * momentum + batch statistic * (1 - momentum);
 * the training outputs of older opsets are refused.
 * LayerNormalization: axis may be negative; Scale and B broadcast to
 * X.shape[axis:] (numpy rules, unidirectional); the optional Mean and
 * InvStdDev outputs have shape X.shape[:axis] + [1] * (rank - axis).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_nn.h"

/* Element i of a float/double tensor as double. */
static double getd(const ph_tensor *t, int64_t i)
{
    if (ph_tensor_dtype(t) == PH_DT_FLOAT)
        return ((const float *)ph_tensor_data(t))[i];
    return ((const double *)ph_tensor_data(t))[i];
}

static void putd(ph_tensor *t, int64_t i, double v)
{
    if (ph_tensor_dtype(t) == PH_DT_FLOAT)
        ((float *)ir_tensor_mut(t))[i] = (float)v;
    else
        ((double *)ir_tensor_mut(t))[i] = v;
}

static int is_fp(int dt)
{
    return dt == PH_DT_FLOAT || dt == PH_DT_DOUBLE;
}

/* Check that t (may be NULL when optional) is a 1-D vector of n elements of
 * a float type. */
static int check_vec(eval_kargs *a, const char *op, const char *what, const ph_tensor *t, int64_t n,
                     int optional)
{
    if (!t)
        return optional ? 0 : ph_error_set(a->err, PH_EINVAL, "%s: missing input %s", op, what);
    if (!is_fp(ph_tensor_dtype(t)))
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: %s has dtype %s", op, what,
                            ph_dtype_name(ph_tensor_dtype(t)));
    if (ph_tensor_rank(t) != 1 || ph_tensor_dim(t, 0) != n)
        return ph_error_set(a->err, PH_EINVAL, "%s: %s must have shape [%lld]", op, what, (long long)n);
    return 0;
}

int eval_k_batch_norm(eval_kargs *a)
{
    const char *op = "BatchNormalization";
    const ph_tensor *x = a->in[0];
    if (!x || a->n_in < 5)
        return ph_error_set(a->err, PH_EINVAL, "%s: needs X, scale, B, mean, var", op);
    int dt = ph_tensor_dtype(x);
    if (!is_fp(dt))
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: dtype %s not supported", op, ph_dtype_name(dt));
    int training = a->opset >= 14 && ph_node_attr_int(a->node, "training_mode", 0) != 0;
    for (size_t i = 1; i < a->n_out && !training; i++)
        if (!a->out_wanted || a->out_wanted[i])
            return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: training outputs not supported", op);
    size_t rank = ph_tensor_rank(x);
    if (rank < 1)
        return ph_error_set(a->err, PH_EINVAL, "%s: X must have rank >= 1", op);
    const int64_t *xd = ph_tensor_dims(x);
    int64_t C = rank > 1 ? xd[1] : 1, N = xd[0], sp = rank > 2 ? eval_nn_prod(xd + 2, rank - 2) : 1;
    static const char *const names[] = {"", "scale", "B", "input_mean", "input_var"};
    for (int i = 1; i < 5; i++) {
        int rc = check_vec(a, op, names[i], a->in[i], C, 0);
        if (rc)
            return rc;
    }
    double eps = ph_node_attr_float(a->node, "epsilon", 1e-5f);
    double *mul = malloc((size_t)(C ? C : 1) * 2 * sizeof *mul);
    ph_tensor *y = mul ? ir_tensor_alloc(dt, rank, xd) : NULL;
    if (!y) {
        free(mul);
        return ph_error_set(a->err, PH_ENOMEM, "%s: out of memory", op);
    }
    double *add = mul + C;
    if (training) {
        double mom = ph_node_attr_float(a->node, "momentum", 0.9f);
        ph_tensor *rm = NULL, *rv = NULL;
        if ((a->n_out > 1 && a->out_wanted[1] && !(rm = ir_tensor_alloc(ph_tensor_dtype(a->in[3]), 1, &C))) ||
            (a->n_out > 2 && a->out_wanted[2] && !(rv = ir_tensor_alloc(ph_tensor_dtype(a->in[4]), 1, &C)))) {
            ph_tensor_free(rm);
            ph_tensor_free(y);
            free(mul);
            return ph_error_set(a->err, PH_ENOMEM, "%s: out of memory", op);
        }
        for (int64_t c = 0; c < C; c++) {
            double s = 0, s2 = 0, cnt = (double)(N * sp);
            for (int64_t n = 0; n < N; n++)
                for (int64_t i = 0; i < sp; i++)
                    s += getd(x, (n * C + c) * sp + i);
            double m = cnt > 0 ? s / cnt : 0;
            for (int64_t n = 0; n < N; n++)
                for (int64_t i = 0; i < sp; i++) {
                    double d = getd(x, (n * C + c) * sp + i) - m;
                    s2 += d * d;
                }
            double v = cnt > 0 ? s2 / cnt : 0;
            mul[c] = getd(a->in[1], c) / sqrt(v + eps);
            add[c] = getd(a->in[2], c) - m * mul[c];
            if (rm)
                putd(rm, c, getd(a->in[3], c) * mom + m * (1 - mom));
            if (rv)
                putd(rv, c, getd(a->in[4], c) * mom + v * (1 - mom));
        }
        if (a->n_out > 1) /* rm and rv exist only when wanted */
            a->out[1] = rm;
        if (a->n_out > 2)
            a->out[2] = rv;
    } else {
        for (int64_t c = 0; c < C; c++) {
            mul[c] = getd(a->in[1], c) / sqrt(getd(a->in[4], c) + eps);
            add[c] = getd(a->in[2], c) - getd(a->in[3], c) * mul[c];
        }
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            int64_t base = (n * C + c) * sp;
            if (dt == PH_DT_FLOAT) {
                const float *xp = (const float *)ph_tensor_data(x) + base;
                float *yp = (float *)ir_tensor_mut(y) + base;
                float m = (float)mul[c], b = (float)add[c];
                for (int64_t i = 0; i < sp; i++)
                    yp[i] = xp[i] * m + b;
            } else {
                const double *xp = (const double *)ph_tensor_data(x) + base;
                double *yp = (double *)ir_tensor_mut(y) + base;
                for (int64_t i = 0; i < sp; i++)
                    yp[i] = xp[i] * mul[c] + add[c];
            }
        }
    free(mul);
    a->out[0] = y;
    return 0;
}

/* Mean and 1/sqrt(var + eps) of n values at x (stride 1), in double. */
static void stats(const ph_tensor *x, int64_t off, int64_t n, double eps, double *mean, double *inv)
{
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++)
        s += getd(x, off + i);
    double m = n ? s / (double)n : 0;
    for (int64_t i = 0; i < n; i++) {
        double d = getd(x, off + i) - m;
        s2 += d * d;
    }
    *mean = m;
    *inv = 1.0 / sqrt((n ? s2 / (double)n : 0) + eps);
}

int eval_k_instance_norm(eval_kargs *a)
{
    const char *op = "InstanceNormalization";
    const ph_tensor *x = a->in[0];
    if (!x || a->n_in < 3)
        return ph_error_set(a->err, PH_EINVAL, "%s: needs input, scale, B", op);
    int dt = ph_tensor_dtype(x);
    if (!is_fp(dt))
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: dtype %s not supported", op, ph_dtype_name(dt));
    size_t rank = ph_tensor_rank(x);
    if (rank < 3)
        return ph_error_set(a->err, PH_EINVAL, "%s: input must have rank >= 3", op);
    const int64_t *xd = ph_tensor_dims(x);
    int64_t N = xd[0], C = xd[1], sp = eval_nn_prod(xd + 2, rank - 2);
    int rc;
    if ((rc = check_vec(a, op, "scale", a->in[1], C, 0)) || (rc = check_vec(a, op, "B", a->in[2], C, 0)))
        return rc;
    double eps = ph_node_attr_float(a->node, "epsilon", 1e-5f);
    ph_tensor *y = ir_tensor_alloc(dt, rank, xd);
    if (!y)
        return ph_error_set(a->err, PH_ENOMEM, "%s: out of memory", op);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            int64_t base = (n * C + c) * sp;
            double mean, inv;
            stats(x, base, sp, eps, &mean, &inv);
            double m = getd(a->in[1], c) * inv, b = getd(a->in[2], c) - mean * m;
            for (int64_t i = 0; i < sp; i++)
                putd(y, base + i, getd(x, base + i) * m + b);
        }
    a->out[0] = y;
    return 0;
}

/* Offset into a tensor of shape d (rank r, right-aligned against the
 * normalized shape of rank nr) for flat index i of the normalized shape. */
static int64_t bcast_index(int64_t i, const int64_t *nshape, size_t nr, const int64_t *d, size_t r)
{
    int64_t off = 0, mul = 1;
    for (size_t k = 0; k < nr; k++) {
        size_t j = nr - 1 - k;
        int64_t idx = i % nshape[j];
        i /= nshape[j];
        if (k < r) {
            int64_t dim = d[r - 1 - k];
            off += (dim == 1 ? 0 : idx) * mul;
            mul *= dim;
        }
    }
    return off;
}

int eval_k_layer_norm(eval_kargs *a)
{
    const char *op = "LayerNormalization";
    const ph_tensor *x = a->in[0], *sc = a->n_in > 1 ? a->in[1] : NULL;
    const ph_tensor *bt = a->n_in > 2 ? a->in[2] : NULL;
    if (!x || !sc)
        return ph_error_set(a->err, PH_EINVAL, "%s: needs X and Scale", op);
    int dt = ph_tensor_dtype(x);
    if (!is_fp(dt) || ph_tensor_dtype(sc) != dt || (bt && ph_tensor_dtype(bt) != dt))
        return ph_error_set(a->err, is_fp(dt) ? PH_EINVAL : PH_EUNSUPPORTED,
                            "%s: dtypes not supported or mixed (X is %s)", op, ph_dtype_name(dt));
    int64_t rank = (int64_t)ph_tensor_rank(x);
    int64_t axis = ph_node_attr_int(a->node, "axis", -1);
    if (axis < 0)
        axis += rank;
    if (axis < 0 || axis >= rank)
        return ph_error_set(a->err, PH_EINVAL, "%s: axis out of range", op);
    int64_t stash = ph_node_attr_int(a->node, "stash_type", 1);
    if (stash != 1 && stash != 11)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: stash_type %lld", op, (long long)stash);
    const int64_t *xd = ph_tensor_dims(x);
    size_t nr = (size_t)(rank - axis);
    const int64_t *nshape = xd + axis;
    int64_t outer = eval_nn_prod(xd, (size_t)axis), inner = eval_nn_prod(nshape, nr);
    const ph_tensor *par[2] = {sc, bt};
    for (int p = 0; p < 2; p++) {
        if (!par[p])
            continue;
        size_t r = ph_tensor_rank(par[p]);
        const int64_t *d = ph_tensor_dims(par[p]);
        if (r > nr)
            return ph_error_set(a->err, PH_EINVAL, "%s: %s has too many dims", op, p ? "B" : "Scale");
        for (size_t k = 0; k < r; k++)
            if (d[r - 1 - k] != 1 && d[r - 1 - k] != nshape[nr - 1 - k])
                return ph_error_set(a->err, PH_EINVAL, "%s: %s does not broadcast to X[axis:]", op,
                                    p ? "B" : "Scale");
    }
    double eps = ph_node_attr_float(a->node, "epsilon", 1e-5f);
    int64_t sdims[EVAL_NN_MAX_RANK * 4];
    if (rank > EVAL_NN_MAX_RANK * 4)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: rank too large", op);
    for (int64_t i = 0; i < rank; i++)
        sdims[i] = i < axis ? xd[i] : 1;
    int stat_dt = stash == 11 || dt == PH_DT_DOUBLE ? PH_DT_DOUBLE : PH_DT_FLOAT;
    ph_tensor *y = ir_tensor_alloc(dt, (size_t)rank, xd), *mt = NULL, *it = NULL;
    int want_m = a->n_out > 1 && (!a->out_wanted || a->out_wanted[1]);
    int want_i = a->n_out > 2 && (!a->out_wanted || a->out_wanted[2]);
    if (y && want_m && !(mt = ir_tensor_alloc(stat_dt, (size_t)rank, sdims)))
        goto oom;
    if (y && want_i && !(it = ir_tensor_alloc(stat_dt, (size_t)rank, sdims)))
        goto oom;
    if (!y)
        goto oom;
    /* per-element scale/bias offsets along the normalized block */
    int64_t *so = malloc((size_t)(inner ? inner : 1) * 2 * sizeof *so);
    if (!so)
        goto oom;
    int64_t *bo = so + inner;
    for (int64_t i = 0; i < inner; i++) {
        so[i] = bcast_index(i, nshape, nr, ph_tensor_dims(sc), ph_tensor_rank(sc));
        bo[i] = bt ? bcast_index(i, nshape, nr, ph_tensor_dims(bt), ph_tensor_rank(bt)) : 0;
    }
    for (int64_t o = 0; o < outer; o++) {
        double mean, inv;
        stats(x, o * inner, inner, eps, &mean, &inv);
        for (int64_t i = 0; i < inner; i++) {
            double v = (getd(x, o * inner + i) - mean) * inv * getd(sc, so[i]);
            if (bt)
                v += getd(bt, bo[i]);
            putd(y, o * inner + i, v);
        }
        if (mt)
            putd(mt, o, mean);
        if (it)
            putd(it, o, inv);
    }
    free(so);
    a->out[0] = y;
    if (want_m)
        a->out[1] = mt;
    if (want_i)
        a->out[2] = it;
    return 0;
oom:
    ph_tensor_free(y);
    ph_tensor_free(mt);
    ph_tensor_free(it);
    return ph_error_set(a->err, PH_ENOMEM, "%s: out of memory", op);
}

/* Input 0, X, float32 or float64 with readable data. */
static int need_x(eval_kargs *a, const char *op, const ph_tensor **x)
{
    *x = a->n_in ? a->in[0] : NULL;
    if (!*x || !ph_tensor_data(*x))
        return ph_error_set(a->err, PH_EINVAL, "%s: needs X", op);
    if (!is_fp(ph_tensor_dtype(*x)))
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: dtype %s not supported", op,
                            ph_dtype_name(ph_tensor_dtype(*x)));
    return 0;
}

/* LRN: y = x / (bias + alpha / size * sum of x^2 over the size channels
 * around c)^beta (the window [c - floor((size-1)/2), c + ceil((size-1)/2)]). */
int eval_k_lrn(eval_kargs *a)
{
    const char *op = "LRN";
    const ph_tensor *x;
    int rc = need_x(a, op, &x);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t rank = ph_tensor_rank(x);
    int64_t size = ph_node_attr_int(a->node, "size", 0);
    if (rank < 2 || size < 1)
        return ph_error_set(a->err, PH_EINVAL, "%s: X must have rank >= 2 and size be positive", op);
    double alpha = ph_node_attr_float(a->node, "alpha", 1e-4f), beta = ph_node_attr_float(a->node, "beta", 0.75f);
    double bias = ph_node_attr_float(a->node, "bias", 1.0f);
    const int64_t *xd = ph_tensor_dims(x);
    int64_t N = xd[0], C = xd[1], sp = eval_nn_prod(xd + 2, rank - 2), lo = (size - 1) / 2, hi = size - 1 - lo;
    ph_tensor *y = ir_tensor_alloc(dt, rank, xd);
    if (!y)
        return ph_error_set(a->err, PH_ENOMEM, "%s: out of memory", op);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < sp; i++) {
                double s = 0;
                for (int64_t k = c - lo; k <= c + hi; k++)
                    if (k >= 0 && k < C) {
                        double v = getd(x, (n * C + k) * sp + i);
                        s += v * v;
                    }
                int64_t e = (n * C + c) * sp + i;
                putd(y, e, getd(x, e) / pow(bias + alpha / (double)size * s, beta));
            }
    a->out[0] = y;
    return 0;
}

/* MeanVarianceNormalization: (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9)
 * over `axes` (default 0, 2, 3), as the op's function body computes it. */
int eval_k_mean_variance_norm(eval_kargs *a)
{
    const char *op = "MeanVarianceNormalization";
    const ph_tensor *x;
    int rc = need_x(a, op, &x);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t rank = ph_tensor_rank(x);
    if (rank > 16)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: rank %zu", op, rank);
    unsigned char red[16] = {0};
    const int64_t *ax;
    ptrdiff_t nax = ph_node_attr_ints(a->node, "axes", &ax);
    static const int64_t dflt[] = {0, 2, 3};
    if (nax < 0) {
        ax = dflt;
        nax = 3;
    }
    for (ptrdiff_t i = 0; i < nax; i++) {
        int64_t k = ax[i] < 0 ? ax[i] + (int64_t)rank : ax[i];
        if (k < 0 || k >= (int64_t)rank)
            return ph_error_set(a->err, PH_EINVAL, "%s: axis %lld is out of range", op, (long long)ax[i]);
        red[k] = 1;
    }
    const int64_t *xd = ph_tensor_dims(x);
    int64_t n = eval_nn_prod(xd, rank), kept = 1, st[16], acc = 1;
    for (size_t i = rank; i-- > 0;) {
        st[i] = acc;
        acc *= xd[i];
        if (!red[i])
            kept *= xd[i];
    }
    double *sum = calloc((size_t)(kept ? kept : 1) * 2, sizeof *sum);
    ph_tensor *y = sum ? ir_tensor_alloc(dt, rank, xd) : NULL;
    if (!y) {
        free(sum);
        return ph_error_set(a->err, PH_ENOMEM, "%s: out of memory", op);
    }
    double *sq = sum + kept, cnt = kept ? (double)n / (double)kept : 0;
    /* the group of element e: its index over the kept dims */
    for (int pass = 0; pass < 2; pass++)
        for (int64_t e = 0; e < n; e++) {
            int64_t g = 0;
            for (size_t i = 0; i < rank; i++)
                if (!red[i])
                    g = g * xd[i] + (e / st[i]) % xd[i];
            double v = getd(x, e);
            if (pass == 0) {
                sum[g] += v;
                sq[g] += v * v;
            } else {
                double m = sum[g] / cnt;
                putd(y, e, (v - m) / (sqrt(sq[g] / cnt - m * m) + 1e-9));
            }
        }
    free(sum);
    a->out[0] = y;
    return 0;
}

/* LpNormalization: x / ||x||_p along axis (p 1 or 2); a zero norm leaves
 * the (zero) values as they are. */
int eval_k_lp_norm(eval_kargs *a)
{
    const char *op = "LpNormalization";
    const ph_tensor *x;
    int rc = need_x(a, op, &x);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x);
    int64_t r = (int64_t)ph_tensor_rank(x), axis = ph_node_attr_int(a->node, "axis", -1),
            p = ph_node_attr_int(a->node, "p", 2);
    if (axis < -r || axis >= r || (p != 1 && p != 2))
        return ph_error_set(a->err, PH_EINVAL, "%s: axis %lld or p %lld is out of range", op, (long long)axis,
                            (long long)p);
    if (axis < 0)
        axis += r;
    const int64_t *xd = ph_tensor_dims(x);
    int64_t outer = eval_nn_prod(xd, (size_t)axis), len = xd[axis], inner = eval_nn_prod(xd + axis + 1, (size_t)(r - axis - 1));
    ph_tensor *y = ir_tensor_alloc(dt, (size_t)r, xd);
    if (!y)
        return ph_error_set(a->err, PH_ENOMEM, "%s: out of memory", op);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double s = 0;
            for (int64_t k = 0; k < len; k++) {
                double v = getd(x, (o * len + k) * inner + i);
                s += p == 1 ? fabs(v) : v * v;
            }
            double n = p == 1 ? s : sqrt(s);
            for (int64_t k = 0; k < len; k++) {
                int64_t e = (o * len + k) * inner + i;
                putd(y, e, n != 0 ? getd(x, e) / n : getd(x, e));
            }
        }
    a->out[0] = y;
    return 0;
}

/* GroupNormalization (opset 18): mean and variance over each group of
 * C / num_groups channels and the spatial dims; scale and bias per group
 * (opset 18) or per channel (their size says which). */
int eval_k_group_norm(eval_kargs *a)
{
    const char *op = "GroupNormalization";
    const ph_tensor *x = a->n_in ? a->in[0] : NULL, *sc = a->n_in > 1 ? a->in[1] : NULL,
                    *bi = a->n_in > 2 ? a->in[2] : NULL;
    if (!x || !sc || !bi || !ph_tensor_data(x) || !ph_tensor_data(sc) || !ph_tensor_data(bi))
        return ph_error_set(a->err, PH_EINVAL, "%s: needs X, scale and bias", op);
    int dt = ph_tensor_dtype(x);
    if (!is_fp(dt) || !is_fp(ph_tensor_dtype(sc)) || !is_fp(ph_tensor_dtype(bi)))
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: dtype %s not supported", op, ph_dtype_name(dt));
    size_t rank = ph_tensor_rank(x);
    int64_t G = ph_node_attr_int(a->node, "num_groups", 0);
    if (rank < 2 || G < 1 || ph_tensor_dim(x, 1) % G)
        return ph_error_set(a->err, PH_EINVAL, "%s: num_groups must divide the channels", op);
    const int64_t *xd = ph_tensor_dims(x);
    int64_t N = xd[0], C = xd[1], sp = eval_nn_prod(xd + 2, rank - 2), cg = C / G;
    int64_t ns = ph_tensor_numel(sc), nb = ph_tensor_numel(bi);
    if ((ns != G && ns != C) || ns != nb)
        return ph_error_set(a->err, PH_EINVAL, "%s: scale and bias need num_groups or C values", op);
    double eps = ph_node_attr_float(a->node, "epsilon", 1e-5f);
    ph_tensor *y = ir_tensor_alloc(dt, rank, xd);
    if (!y)
        return ph_error_set(a->err, PH_ENOMEM, "%s: out of memory", op);
    for (int64_t n = 0; n < N; n++)
        for (int64_t g = 0; g < G; g++) {
            double mean, inv;
            int64_t off = (n * C + g * cg) * sp;
            stats(x, off, cg * sp, eps, &mean, &inv);
            for (int64_t c = 0; c < cg; c++) {
                int64_t k = ns == G ? g : g * cg + c;
                for (int64_t i = 0; i < sp; i++) {
                    int64_t e = off + c * sp + i;
                    putd(y, e, (getd(x, e) - mean) * inv * getd(sc, k) + getd(bi, k));
                }
            }
        }
    a->out[0] = y;
    return 0;
}
