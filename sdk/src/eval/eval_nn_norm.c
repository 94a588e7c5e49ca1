/* sdk/src/eval/eval_nn_norm.c - BatchNormalization (inference), InstanceNormalization
 * and LayerNormalization, float32 and float64.
 *
 * Statistics are accumulated in double whatever the dtype, so results are
 * at least as accurate as the usual single-precision kernels.
 * BatchNormalization with training_mode = 1 (or the training outputs of
 * older opsets) is refused: the evaluator only does inference.
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
    if (ph_node_attr_int(a->node, "training_mode", 0) != 0)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: training_mode=1 not supported", op);
    for (size_t i = 1; i < a->n_out; i++)
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
    for (int64_t c = 0; c < C; c++) {
        mul[c] = getd(a->in[1], c) / sqrt(getd(a->in[4], c) + eps);
        add[c] = getd(a->in[2], c) - getd(a->in[3], c) * mul[c];
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
