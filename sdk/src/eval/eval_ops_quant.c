/* sdk/src/eval/eval_ops_quant.c - quantized ops: QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, ConvInteger,
 * QLinearMatMul, QLinearConv.
 *
 * Scales and zero points are per tensor (one element) or per axis (a 1-D
 * tensor along `axis`; for MatMulInteger/QLinearMatMul the rows of A and
 * the columns of B, for the convolutions W's output channels); blocked
 * quantization is not supported.  Quantizing rounds half to even and
 * saturates to the integer type (uint8, int8, uint16, int16); on float
 * inputs the division is done in float, as the runtimes do.
 *
 * The integer products reuse the MatMul and Conv kernels: the operands
 * minus their zero points become int64 (MatMul) or double (Conv, exact for
 * integer sums below 2^53) tensors.  Registered native_half: float16 and
 * bfloat16 scales and inputs are read and written through double.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_more.h"
#include "eval_nn.h"

/* ------------------------------------------------------------ scales and zero points */

/* A scale or zero point: one element, or one per index of dim `axis` of a
 * tensor of rank `rank` and dims `dims`.  *stride / *count give the element
 * of flat position e: (e / stride) % count (count 1: per tensor). */
typedef struct qparam {
    const void *d;
    int dt;
    int64_t stride, count;
} qparam;

static int qparam_of(eval_kargs *a, const ph_tensor *t, const char *what, size_t rank, const int64_t *dims,
                     int64_t axis, qparam *q)
{
    q->d = NULL;
    q->dt = 0;
    q->stride = 1;
    q->count = 1;
    if (!t)
        return 0;
    q->d = ph_tensor_data(t);
    q->dt = ph_tensor_dtype(t);
    if (!q->d)
        return eval_kfail(a, PH_EINVAL, "%s has no data", what);
    int64_t n = ph_tensor_numel(t);
    if (n == 1)
        return 0;
    size_t ax;
    int rc;
    if (ph_tensor_rank(t) != 1 || (rc = eval_axis(a, axis, rank, &ax)) != 0)
        return eval_kfail(a, PH_EUNSUPPORTED, "%s must be one element or 1-D along the axis (blocked quantization is not supported)", what);
    if (n != dims[ax])
        return eval_kfail(a, PH_EINVAL, "%s has %lld elements, the axis %lld", what, (long long)n, (long long)dims[ax]);
    q->count = n;
    q->stride = eval_numel(rank - ax - 1, dims + ax + 1);
    return 0;
}

static double qget(const qparam *q, int64_t e)
{
    if (!q->d)
        return 0;
    return eval_load_f64(q->d, q->dt, (size_t)((e / q->stride) % q->count));
}

static int quant_range(int dt, double *lo, double *hi)
{
    switch (dt) {
    case PH_DT_UINT8: *lo = 0, *hi = 255; return 0;
    case PH_DT_INT8: *lo = -128, *hi = 127; return 0;
    case PH_DT_UINT16: *lo = 0, *hi = 65535; return 0;
    case PH_DT_INT16: *lo = -32768, *hi = 32767; return 0;
    case PH_DT_INT32: *lo = -2147483648.0, *hi = 2147483647.0; return 0;
    default: return -1;
    }
}

/* v bounded to [lo, hi]; NaN gives lo. */
static double saturate(double v, double lo, double hi)
{
    return v != v || v < lo ? lo : v > hi ? hi : v;
}

/* ------------------------------------------------------------ Quantize / Dequantize */

/* QuantizeLinear's and DequantizeLinear's common part: their scale and
 * zero point (names sname, zname) along the node's axis of x, and the
 * output of dtype odt with x's shape (*o NULL when only shapes are asked). */
static int linear_qparams_and_out(eval_kargs *a, const ph_tensor *x, const ph_tensor *st, const ph_tensor *zt,
                                  const char *sname, const char *zname, int odt, qparam *qs, qparam *qz, void **o)
{
    size_t r = ph_tensor_rank(x);
    int64_t axis = ph_node_attr_int(a->node, "axis", 1);
    int rc;
    if ((rc = qparam_of(a, st, sname, r, ph_tensor_dims(x), axis, qs)) != 0 ||
        (rc = qparam_of(a, zt, zname, r, ph_tensor_dims(x), axis, qz)) != 0)
        return rc;
    return eval_out(a, 0, odt, r, ph_tensor_dims(x), o);
}

int eval_k_quantize_linear(eval_kargs *a)
{
    const ph_tensor *x, *st, *zt = eval_in(a, 2);
    const void *xd;
    int rc;
    if ((rc = eval_need(a, 0, &x, &xd)) != 0 || (rc = eval_need(a, 1, &st, NULL)) != 0 ||
        (zt && (rc = eval_need(a, 2, &zt, NULL)) != 0))
        return rc;
    int xdt = ph_tensor_dtype(x), odt = zt ? ph_tensor_dtype(zt) : PH_DT_UINT8;
    if (!eval_dt_float(xdt) && xdt != PH_DT_FLOAT16 && xdt != PH_DT_BFLOAT16 && xdt != PH_DT_INT32)
        return eval_kbad_dtype(a, "x", xdt);
    double lo, hi;
    if (quant_range(odt, &lo, &hi) || odt == PH_DT_INT32)
        return eval_kbad_dtype(a, "y", odt);
    qparam qs, qz;
    void *o;
    if ((rc = linear_qparams_and_out(a, x, st, zt, "y_scale", "y_zero_point", odt, &qs, &qz, &o)) != 0 || !o)
        return rc;
    int in_float = xdt != PH_DT_DOUBLE;
    int64_t n = ph_tensor_numel(x);
    for (int64_t e = 0; e < n; e++) {
        double v = eval_load_f64(xd, xdt, (size_t)e), s = qget(&qs, e);
        double q = in_float ? (double)((float)v / (float)s) : v / s;
        eval_store_f64(o, odt, (size_t)e, saturate(nearbyint(q) + qget(&qz, e), lo, hi));
    }
    return 0;
}

int eval_k_dequantize_linear(eval_kargs *a)
{
    const ph_tensor *x, *st, *zt = eval_in(a, 2);
    const void *xd;
    int rc;
    if ((rc = eval_need(a, 0, &x, &xd)) != 0 || (rc = eval_need(a, 1, &st, NULL)) != 0 ||
        (zt && (rc = eval_need(a, 2, &zt, NULL)) != 0))
        return rc;
    int xdt = ph_tensor_dtype(x), odt = ph_tensor_dtype(st);
    double lo, hi;
    if (quant_range(xdt, &lo, &hi))
        return eval_kbad_dtype(a, "x", xdt);
    if (!eval_dt_float(odt) && odt != PH_DT_FLOAT16 && odt != PH_DT_BFLOAT16)
        return eval_kbad_dtype(a, "x_scale", odt);
    if (zt && ph_tensor_dtype(zt) != xdt)
        return eval_kfail(a, PH_EINVAL, "x_zero_point must have x's dtype");
    qparam qs, qz;
    void *o;
    if ((rc = linear_qparams_and_out(a, x, st, zt, "x_scale", "x_zero_point", odt, &qs, &qz, &o)) != 0 || !o)
        return rc;
    int64_t n = ph_tensor_numel(x);
    for (int64_t e = 0; e < n; e++) {
        double v = (double)eval_load_i64(xd, xdt, (size_t)e) - qget(&qz, e), s = qget(&qs, e);
        eval_store_f64(o, odt, (size_t)e, odt == PH_DT_DOUBLE ? v * s : (double)((float)v * (float)s));
    }
    return 0;
}

/* x float32 (computed in float32, as ONNX's reference) or float64 (the
 * float64 reference mode: in double, y_scale double). */
int eval_k_dynamic_quantize_linear(eval_kargs *a)
{
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need(a, 0, &x, &xd);
    if (rc)
        return rc;
    int xdt = ph_tensor_dtype(x), dbl = xdt == PH_DT_DOUBLE;
    if (xdt != PH_DT_FLOAT && !dbl)
        return eval_kbad_dtype(a, "x", xdt);
    int64_t n = ph_tensor_numel(x);
    double mn = 0, mx = 0;
    for (int64_t e = 0; e < n; e++) {
        double v = eval_load_f64(xd, xdt, (size_t)e);
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    double scale = dbl ? (mx - mn) / 255.0 : (double)(((float)mx - (float)mn) / 255.0f);
    double zp = scale == 0 ? 0 : saturate(nearbyint(dbl ? 0 - mn / scale : (double)(0 - (float)mn / (float)scale)), 0, 255);
    uint8_t *y, *z;
    void *s;
    if ((rc = eval_out(a, 0, PH_DT_UINT8, ph_tensor_rank(x), ph_tensor_dims(x), (void **)&y)) != 0 ||
        (rc = eval_out(a, 1, xdt, 0, NULL, &s)) != 0 ||
        (rc = eval_out(a, 2, PH_DT_UINT8, 0, NULL, (void **)&z)) != 0)
        return rc;
    if (s)
        eval_store_f64(s, xdt, 0, scale);
    if (z)
        *z = (uint8_t)zp;
    for (int64_t e = 0; y && e < n; e++) {
        double v = eval_load_f64(xd, xdt, (size_t)e);
        double q = dbl ? v / scale : (double)((float)v / (float)scale);
        y[e] = scale == 0 ? (uint8_t)zp : (uint8_t)saturate(nearbyint(q) + zp, 0, 255);
    }
    return 0;
}

/* ------------------------------------------------------------ integer products */

/* A new tensor of dtype to (int64 or double) holding x - zero point. */
static int minus_zp(eval_kargs *a, const ph_tensor *x, const qparam *zp, int to, ph_tensor **out)
{
    const void *xd = ph_tensor_data(x);
    int xdt = ph_tensor_dtype(x);
    double lo, hi;
    if (!xd || quant_range(xdt, &lo, &hi))
        return eval_kbad_dtype(a, "input", xdt);
    if (!(*out = ir_tensor_alloc(to, ph_tensor_rank(x), ph_tensor_dims(x))))
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    void *o = ir_tensor_mut(*out);
    int64_t n = ph_tensor_numel(x);
    for (int64_t e = 0; e < n; e++) {
        int64_t v = eval_load_i64(xd, xdt, (size_t)e) - (int64_t)qget(zp, e);
        if (to == PH_DT_INT64)
            ((int64_t *)o)[e] = v;
        else
            ((double *)o)[e] = (double)v;
    }
    return 0;
}

/* (A - a_zp) x (B - b_zp) into a new int64 tensor *acc.  Zero points per
 * tensor, or per row of A / per column of B. */
static int int_matmul(eval_kargs *a, const ph_tensor *ta, const ph_tensor *za, const ph_tensor *tb, const ph_tensor *zb,
                      ph_tensor **acc)
{
    qparam qa, qb;
    size_t ra = ph_tensor_rank(ta), rb = ph_tensor_rank(tb);
    int rc;
    if (ra < 1 || rb < 1)
        return eval_kfail(a, PH_EINVAL, "scalar operand");
    if ((rc = qparam_of(a, za, "a_zero_point", ra, ph_tensor_dims(ta), ra >= 2 ? -2 : -1, &qa)) != 0 ||
        (rc = qparam_of(a, zb, "b_zero_point", rb, ph_tensor_dims(tb), -1, &qb)) != 0)
        return rc;
    ph_tensor *xa = NULL, *xb = NULL;
    if ((rc = minus_zp(a, ta, &qa, PH_DT_INT64, &xa)) == 0 && (rc = minus_zp(a, tb, &qb, PH_DT_INT64, &xb)) == 0)
        rc = eval_k_call(a, eval_k_matmul, (const ph_tensor *[]){xa, xb}, 2, acc);
    ph_tensor_free(xa);
    ph_tensor_free(xb);
    return rc;
}

/* Conv of (X - x_zp) and (W - w_zp) (per output channel) into a new double
 * tensor *acc. */
static int int_conv(eval_kargs *a, const ph_tensor *tx, const ph_tensor *zx, const ph_tensor *tw, const ph_tensor *zw,
                    ph_tensor **acc)
{
    qparam qx, qw;
    int rc;
    if (zx && ph_tensor_numel(zx) != 1)
        return eval_kfail(a, PH_EUNSUPPORTED, "x_zero_point must be one element");
    if ((rc = qparam_of(a, zx, "x_zero_point", ph_tensor_rank(tx), ph_tensor_dims(tx), 0, &qx)) != 0 ||
        (rc = qparam_of(a, zw, "w_zero_point", ph_tensor_rank(tw), ph_tensor_dims(tw), 0, &qw)) != 0)
        return rc;
    ph_tensor *xx = NULL, *xw = NULL;
    if ((rc = minus_zp(a, tx, &qx, PH_DT_DOUBLE, &xx)) == 0 && (rc = minus_zp(a, tw, &qw, PH_DT_DOUBLE, &xw)) == 0)
        rc = eval_k_call(a, eval_k_conv, (const ph_tensor *[]){xx, xw}, 2, acc);
    ph_tensor_free(xx);
    ph_tensor_free(xw);
    return rc;
}

/* Output 0 as int32 from an int64 or double accumulator. */
static int out_int32(eval_kargs *a, const ph_tensor *acc)
{
    int32_t *o;
    int rc = eval_out(a, 0, PH_DT_INT32, ph_tensor_rank(acc), ph_tensor_dims(acc), (void **)&o);
    if (rc || !o)
        return rc;
    int64_t n = ph_tensor_numel(acc);
    for (int64_t e = 0; e < n; e++)
        o[e] = (int32_t)eval_load_i64(ph_tensor_data(acc), ph_tensor_dtype(acc), (size_t)e);
    return 0;
}

/* MatMulInteger / ConvInteger: the product of inputs 0 and 1 minus their
 * zero points (inputs 2 and 3), as int32. */
typedef int (*int_product_fn)(eval_kargs *a, const ph_tensor *x, const ph_tensor *zx, const ph_tensor *y,
                              const ph_tensor *zy, ph_tensor **acc);

static int integer_product(eval_kargs *a, int_product_fn product)
{
    const ph_tensor *x, *y;
    int rc;
    if ((rc = eval_need(a, 0, &x, NULL)) != 0 || (rc = eval_need(a, 1, &y, NULL)) != 0)
        return rc;
    ph_tensor *acc = NULL;
    if ((rc = product(a, x, eval_in(a, 2), y, eval_in(a, 3), &acc)) == 0)
        rc = out_int32(a, acc);
    ph_tensor_free(acc);
    return rc;
}

int eval_k_matmul_integer(eval_kargs *a)
{
    return integer_product(a, int_matmul);
}

int eval_k_conv_integer(eval_kargs *a)
{
    return integer_product(a, int_conv);
}

/* Requantize acc (+ bias per channel of axis 1) with real scale
 * s1 * s2[c] / ys and zero point yz into output 0 of yz's dtype. */
static int requantize(eval_kargs *a, const ph_tensor *acc, const qparam *bias, const qparam *s1, const qparam *s2,
                      const qparam *ys, const qparam *yz, int odt)
{
    double lo, hi;
    if (quant_range(odt, &lo, &hi) || odt == PH_DT_INT32)
        return eval_kbad_dtype(a, "y", odt);
    void *o;
    int rc = eval_out(a, 0, odt, ph_tensor_rank(acc), ph_tensor_dims(acc), &o);
    if (rc || !o)
        return rc;
    int64_t n = ph_tensor_numel(acc);
    for (int64_t e = 0; e < n; e++) {
        double v = eval_load_f64(ph_tensor_data(acc), ph_tensor_dtype(acc), (size_t)e) + qget(bias, e);
        float m = (float)qget(s1, e) * (float)qget(s2, e) / (float)qget(ys, e);
        eval_store_f64(o, odt, (size_t)e, saturate(nearbyintf((float)v * m) + qget(yz, e), lo, hi));
    }
    return 0;
}

int eval_k_qlinear_matmul(eval_kargs *a)
{
    const ph_tensor *ta, *as, *tb, *bs, *ys, *yz;
    int rc;
    if ((rc = eval_need(a, 0, &ta, NULL)) != 0 || (rc = eval_need(a, 1, &as, NULL)) != 0 ||
        (rc = eval_need(a, 3, &tb, NULL)) != 0 || (rc = eval_need(a, 4, &bs, NULL)) != 0 ||
        (rc = eval_need(a, 6, &ys, NULL)) != 0 || (rc = eval_need(a, 7, &yz, NULL)) != 0)
        return rc;
    ph_tensor *acc = NULL;
    if ((rc = int_matmul(a, ta, eval_in(a, 2), tb, eval_in(a, 5), &acc)) != 0)
        return rc;
    size_t r = ph_tensor_rank(acc);
    qparam q1, q2, qy, qz, nob = {NULL, 0, 1, 1};
    /* a_scale per row of the output, b_scale per column */
    if ((rc = qparam_of(a, as, "a_scale", r, ph_tensor_dims(acc), r >= 2 ? -2 : -1, &q1)) == 0 &&
        (rc = qparam_of(a, bs, "b_scale", r, ph_tensor_dims(acc), -1, &q2)) == 0 &&
        (rc = qparam_of(a, ys, "y_scale", r, ph_tensor_dims(acc), -1, &qy)) == 0 &&
        (rc = qparam_of(a, yz, "y_zero_point", r, ph_tensor_dims(acc), -1, &qz)) == 0)
        rc = requantize(a, acc, &nob, &q1, &q2, &qy, &qz, ph_tensor_dtype(yz));
    ph_tensor_free(acc);
    return rc;
}

int eval_k_qlinear_conv(eval_kargs *a)
{
    const ph_tensor *tx, *xs, *tw, *ws, *ys, *yz, *tb = eval_in(a, 8);
    int rc;
    if ((rc = eval_need(a, 0, &tx, NULL)) != 0 || (rc = eval_need(a, 1, &xs, NULL)) != 0 ||
        (rc = eval_need(a, 3, &tw, NULL)) != 0 || (rc = eval_need(a, 4, &ws, NULL)) != 0 ||
        (rc = eval_need(a, 6, &ys, NULL)) != 0 || (rc = eval_need(a, 7, &yz, NULL)) != 0 ||
        (tb && (rc = eval_need(a, 8, &tb, NULL)) != 0))
        return rc;
    if (tb && ph_tensor_dtype(tb) != PH_DT_INT32)
        return eval_kbad_dtype(a, "B", ph_tensor_dtype(tb));
    ph_tensor *acc = NULL;
    if ((rc = int_conv(a, tx, eval_in(a, 2), tw, eval_in(a, 5), &acc)) != 0)
        return rc;
    size_t r = ph_tensor_rank(acc);
    qparam q1, q2, qy, qz, qb;
    /* w_scale and the bias per output channel (axis 1 of Y) */
    if ((rc = qparam_of(a, xs, "x_scale", r, ph_tensor_dims(acc), 1, &q1)) == 0 &&
        (rc = qparam_of(a, ws, "w_scale", r, ph_tensor_dims(acc), 1, &q2)) == 0 &&
        (rc = qparam_of(a, ys, "y_scale", r, ph_tensor_dims(acc), 1, &qy)) == 0 &&
        (rc = qparam_of(a, yz, "y_zero_point", r, ph_tensor_dims(acc), 1, &qz)) == 0 &&
        (rc = qparam_of(a, tb, "B", r, ph_tensor_dims(acc), 1, &qb)) == 0)
        rc = requantize(a, acc, &qb, &q1, &q2, &qy, &qz, ph_tensor_dtype(yz));
    ph_tensor_free(acc);
    return rc;
}
