/* sdk/src/const/constant.c - reading constant tensors as numbers with
 * broadcasting, making tensors from doubles with one correct rounding,
 * replacing an initializer's data, and per-channel checks (constant.h).
 *
 * Tensor data may sit at any address (raw_data mapped from the file), so
 * every element is copied out with memcpy: no typed load of tensor bytes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "passhost/constant.h"

/* ------------------------------------------------------------- dtypes */

PH_API int ph_dtype_is_float(int dtype)
{
    return dtype == PH_DT_FLOAT || dtype == PH_DT_DOUBLE || dtype == PH_DT_FLOAT16 ||
           dtype == PH_DT_BFLOAT16;
}

static int dtype_is_int(int dtype)
{
    switch (dtype) {
    case PH_DT_INT8: case PH_DT_INT16: case PH_DT_INT32: case PH_DT_INT64:
    case PH_DT_UINT8: case PH_DT_UINT16: case PH_DT_UINT32: case PH_DT_UINT64: case PH_DT_BOOL:
        return 1;
    default:
        return 0;
    }
}

PH_API int ph_dtype_is_numeric(int dtype) { return ph_dtype_is_float(dtype) || dtype_is_int(dtype); }

/* ------------------------------------------------------ half precision */

/* Round the finite, nonzero double |d| (given by its bits) once to a binary
 * format with ebits exponent bits and mbits fraction bits; round to nearest,
 * ties to even.  Returns the magnitude bits (no sign); overflow is infinity. */
static uint32_t round_magnitude(uint64_t x, int ebits, int mbits)
{
    int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias, emax = bias;
    int64_t e = (int64_t)((x >> 52) & 0x7ff);
    uint64_t m = x & ((1ull << 52) - 1);
    if (e == 0) { /* double subnormal: normalize so m has its bit 52 set */
        e = 1;
        while (!(m & (1ull << 52))) {
            m <<= 1;
            e--;
        }
    } else {
        m |= 1ull << 52;
    }
    int64_t E = e - 1023; /* value = m * 2^(E - 52), m in [2^52, 2^53) */
    uint32_t inf = ((1u << ebits) - 1) << mbits;
    if (E > emax)
        return inf;
    /* the result's unit in the last place is 2^(max(E, emin) - mbits) */
    int64_t shift = 52 - mbits + (E < emin ? emin - E : 0);
    if (shift >= 64)
        return 0; /* m < 2^53 < 2^(shift-1): below half the smallest subnormal */
    uint64_t q = m >> shift, rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    if (E < emin) /* subnormal; a carry into 2^mbits is the smallest normal */
        return (uint32_t)q;
    if (q == (1ull << (mbits + 1))) { /* carried into the next binade */
        q >>= 1;
        E++;
        if (E > emax)
            return inf;
    }
    return ((uint32_t)(E + bias) << mbits) | (uint32_t)(q & ((1ull << mbits) - 1));
}

/* d rounded to (ebits, mbits) as sign | magnitude bits of a total width of
 * 1 + ebits + mbits. */
static uint32_t round_to_format(double d, int ebits, int mbits)
{
    uint64_t x;
    memcpy(&x, &d, sizeof x);
    uint32_t sign = (uint32_t)(x >> 63) << (ebits + mbits);
    uint64_t exp = (x >> 52) & 0x7ff, man = x & ((1ull << 52) - 1);
    uint32_t inf = ((1u << ebits) - 1) << mbits;
    if (exp == 0x7ff) {
        if (!man)
            return sign | inf;
        /* NaN: keep the top payload bits, and make it quiet */
        uint32_t payload = (uint32_t)(man >> (52 - mbits));
        return sign | inf | payload | (1u << (mbits - 1));
    }
    if (exp == 0 && man == 0)
        return sign;
    return sign | round_magnitude(x & ~(1ull << 63), ebits, mbits);
}

PH_API uint16_t ph_f64_to_f16_bits(double d) { return (uint16_t)round_to_format(d, 5, 10); }
PH_API uint16_t ph_f64_to_bf16_bits(double d) { return (uint16_t)round_to_format(d, 8, 7); }
PH_API double ph_f16_bits_to_f64(uint16_t h) { return ir_half_to_float(h); }
PH_API double ph_bf16_bits_to_f64(uint16_t h) { return ir_bf16_to_float(h); }

static float f64_to_f32(double d)
{
    uint32_t b = round_to_format(d, 8, 23);
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* ----------------------------------------------------------- elements */

/* Element k of data (any alignment) as a double. */
static double elem_f64(const unsigned char *data, int dt, size_t k)
{
    switch (dt) {
    case PH_DT_FLOAT: { float v; memcpy(&v, data + 4 * k, 4); return v; }
    case PH_DT_DOUBLE: { double v; memcpy(&v, data + 8 * k, 8); return v; }
    case PH_DT_FLOAT16: { uint16_t v; memcpy(&v, data + 2 * k, 2); return ir_half_to_float(v); }
    case PH_DT_BFLOAT16: { uint16_t v; memcpy(&v, data + 2 * k, 2); return ir_bf16_to_float(v); }
    case PH_DT_INT8: { int8_t v; memcpy(&v, data + k, 1); return v; }
    case PH_DT_UINT8: return data[k];
    case PH_DT_BOOL: return data[k] != 0;
    case PH_DT_INT16: { int16_t v; memcpy(&v, data + 2 * k, 2); return v; }
    case PH_DT_UINT16: { uint16_t v; memcpy(&v, data + 2 * k, 2); return v; }
    case PH_DT_INT32: { int32_t v; memcpy(&v, data + 4 * k, 4); return v; }
    case PH_DT_UINT32: { uint32_t v; memcpy(&v, data + 4 * k, 4); return v; }
    case PH_DT_INT64: { int64_t v; memcpy(&v, data + 8 * k, 8); return (double)v; }
    case PH_DT_UINT64: { uint64_t v; memcpy(&v, data + 8 * k, 8); return (double)v; }
    default: return 0;
    }
}

/* Element k as an int64: 0, or PH_ERANGE when it has no exact int64 value. */
static int elem_i64(const unsigned char *data, int dt, size_t k, int64_t *out)
{
    switch (dt) {
    case PH_DT_INT8: { int8_t v; memcpy(&v, data + k, 1); *out = v; return 0; }
    case PH_DT_UINT8: *out = data[k]; return 0;
    case PH_DT_BOOL: *out = data[k] != 0; return 0;
    case PH_DT_INT16: { int16_t v; memcpy(&v, data + 2 * k, 2); *out = v; return 0; }
    case PH_DT_UINT16: { uint16_t v; memcpy(&v, data + 2 * k, 2); *out = v; return 0; }
    case PH_DT_INT32: { int32_t v; memcpy(&v, data + 4 * k, 4); *out = v; return 0; }
    case PH_DT_UINT32: { uint32_t v; memcpy(&v, data + 4 * k, 4); *out = v; return 0; }
    case PH_DT_INT64: memcpy(out, data + 8 * k, 8); return 0;
    case PH_DT_UINT64: {
        uint64_t v;
        memcpy(&v, data + 8 * k, 8);
        if (v > (uint64_t)INT64_MAX)
            return PH_ERANGE;
        *out = (int64_t)v;
        return 0;
    }
    default: {
        double d = elem_f64(data, dt, k);
        /* [-2^63, 2^63): NaN fails both comparisons */
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d))
            return PH_ERANGE;
        *out = (int64_t)d;
        return 0;
    }
    }
}

/* ---------------------------------------------------------- broadcasting */

PH_API int ph_shape_broadcasts_to(size_t t_rank, const int64_t *t_dims, size_t rank, const int64_t *dims)
{
    if (t_rank > rank || (t_rank && !t_dims) || (rank && !dims))
        return 0;
    for (size_t i = 0; i < rank; i++)
        if (dims[i] < 0)
            return 0;
    for (size_t i = 0; i < t_rank; i++) {
        int64_t s = t_dims[i], d = dims[rank - t_rank + i];
        if (s < 0 || (s != 1 && s != d))
            return 0;
    }
    return 1;
}

/* Element count of a shape: 0, or PH_EINVAL when it overflows. */
static int shape_numel(size_t rank, const int64_t *dims, size_t *out)
{
    int64_t n = ir_dims_numel(dims, rank);
    if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(double))
        return PH_EINVAL;
    *out = (size_t)n;
    return 0;
}

typedef enum { READ_F64, READ_I64 } read_mode;

/* Read the elements of data (dtype dt, shape s_rank/s_dims) broadcast to
 * (rank, dims) into out (doubles or int64s by mode).  Shapes checked. */
static int bcast_read(const unsigned char *data, int dt, size_t s_rank, const int64_t *s_dims,
                      size_t rank, const int64_t *dims, read_mode mode, void *out)
{
    size_t total;
    int rc = shape_numel(rank, dims, &total);
    if (rc)
        return rc;
    if (!total)
        return 0;
    if (!data)
        return PH_EIO;
    double *of = out;
    int64_t *oi = out;
    size_t s_total;
    if (shape_numel(s_rank, s_dims, &s_total))
        return PH_EINVAL;
    if (s_total == total || s_total == 1) { /* same layout, or one value for all */
        for (size_t k = 0; k < total; k++) {
            size_t src = s_total == 1 ? 0 : k;
            if (mode == READ_F64)
                of[k] = elem_f64(data, dt, src);
            else if ((rc = elem_i64(data, dt, src, &oi[k])))
                return rc;
        }
        return 0;
    }
    /* general case: an odometer over the target, with the source's strides
     * (0 on broadcast axes) */
    size_t *stride = calloc(rank, sizeof *stride), *idx = calloc(rank, sizeof *idx);
    if (!stride || !idx) {
        free(stride);
        free(idx);
        return PH_ENOMEM;
    }
    size_t st = 1;
    for (size_t i = s_rank; i-- > 0;) {
        size_t j = rank - s_rank + i;
        stride[j] = s_dims[i] == 1 ? 0 : st;
        st *= (size_t)s_dims[i];
    }
    size_t src = 0;
    for (size_t k = 0; k < total && !rc; k++) {
        if (mode == READ_F64)
            of[k] = elem_f64(data, dt, src);
        else
            rc = elem_i64(data, dt, src, &oi[k]);
        for (size_t j = rank; j-- > 0;) {
            src += stride[j];
            if (++idx[j] < (size_t)dims[j])
                break;
            src -= stride[j] * idx[j];
            idx[j] = 0;
        }
    }
    free(stride);
    free(idx);
    return rc;
}

static int tensor_read(const ph_tensor *t, size_t rank, const int64_t *dims, read_mode mode, void *out)
{
    if (!t || !out || (rank && !dims))
        return PH_EINVAL;
    int dt = ph_tensor_dtype(t);
    if (!ph_dtype_is_numeric(dt))
        return PH_EUNSUPPORTED;
    size_t s_rank = ph_tensor_rank(t);
    const int64_t *s_dims = ph_tensor_dims(t);
    if (!ph_shape_broadcasts_to(s_rank, s_dims, rank, dims))
        return PH_EINVAL;
    return bcast_read(ph_tensor_data(t), dt, s_rank, s_dims, rank, dims, mode, out);
}

PH_API int ph_tensor_read_f64(const ph_tensor *t, size_t rank, const int64_t *dims, double *out)
{
    return tensor_read(t, rank, dims, READ_F64, out);
}

PH_API int ph_tensor_read_i64(const ph_tensor *t, size_t rank, const int64_t *dims, int64_t *out)
{
    return tensor_read(t, rank, dims, READ_I64, out);
}

/* ---------------------------------------------------------------- making */

/* Store v as element k of buf in dtype dt: 0, or -1 when an integer dtype
 * cannot hold it exactly. */
static int store_elem(unsigned char *buf, int dt, size_t k, double v)
{
    switch (dt) {
    case PH_DT_FLOAT: { float f = f64_to_f32(v); memcpy(buf + 4 * k, &f, 4); return 0; }
    case PH_DT_DOUBLE: memcpy(buf + 8 * k, &v, 8); return 0;
    case PH_DT_FLOAT16: { uint16_t h = ph_f64_to_f16_bits(v); memcpy(buf + 2 * k, &h, 2); return 0; }
    case PH_DT_BFLOAT16: { uint16_t h = ph_f64_to_bf16_bits(v); memcpy(buf + 2 * k, &h, 2); return 0; }
    default: break;
    }
    double lo, hi; /* inclusive range, all exactly representable as doubles */
    switch (dt) {
    case PH_DT_BOOL: lo = 0; hi = 1; break;
    case PH_DT_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
    case PH_DT_UINT8: lo = 0; hi = UINT8_MAX; break;
    case PH_DT_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
    case PH_DT_UINT16: lo = 0; hi = UINT16_MAX; break;
    case PH_DT_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    case PH_DT_UINT32: lo = 0; hi = UINT32_MAX; break;
    case PH_DT_INT64: lo = -9223372036854775808.0; hi = 9223372036854774784.0; break; /* < 2^63 */
    case PH_DT_UINT64: lo = 0; hi = 18446744073709549568.0; break;                    /* < 2^64 */
    default: return -1;
    }
    if (!(v >= lo && v <= hi) || v != floor(v))
        return -1;
    switch (dt) {
    case PH_DT_BOOL: case PH_DT_UINT8: buf[k] = (unsigned char)v; return 0;
    case PH_DT_INT8: { int8_t x = (int8_t)v; memcpy(buf + k, &x, 1); return 0; }
    case PH_DT_INT16: { int16_t x = (int16_t)v; memcpy(buf + 2 * k, &x, 2); return 0; }
    case PH_DT_UINT16: { uint16_t x = (uint16_t)v; memcpy(buf + 2 * k, &x, 2); return 0; }
    case PH_DT_INT32: { int32_t x = (int32_t)v; memcpy(buf + 4 * k, &x, 4); return 0; }
    case PH_DT_UINT32: { uint32_t x = (uint32_t)v; memcpy(buf + 4 * k, &x, 4); return 0; }
    case PH_DT_INT64: { int64_t x = (int64_t)v; memcpy(buf + 8 * k, &x, 8); return 0; }
    default: { uint64_t x = (uint64_t)v; memcpy(buf + 8 * k, &x, 8); return 0; }
    }
}

PH_API ph_tensor *ph_tensor_from_f64(int dtype, size_t rank, const int64_t *dims, const double *vals)
{
    if (!ph_dtype_is_numeric(dtype) || (rank && !dims))
        return NULL;
    size_t n;
    if (shape_numel(rank, dims, &n) || (n && !vals))
        return NULL;
    ph_tensor *t = ir_tensor_alloc(dtype, rank, dims);
    unsigned char *buf = t ? ir_tensor_mut(t) : NULL;
    if (!buf) {
        ph_tensor_free(t);
        return NULL;
    }
    for (size_t k = 0; k < n; k++)
        if (store_elem(buf, dtype, k, vals[k])) {
            ph_tensor_free(t);
            return NULL;
        }
    return t;
}

/* One element: x * f or x / f rounded once to float.  The hardware's
 * conversion rounds to nearest even as round_to_format does; infinities
 * and NaN take the one rounding routine so their bits are its bits. */
static inline float scaled_f32(float x, double f, int divide)
{
    double v = divide ? (double)x / f : (double)x * f;
    return isfinite(v) ? (float)v : f64_to_f32(v);
}

PH_API int ph_tensor_scaled(const ph_tensor *t, int64_t inner, int64_t count, const double *factor, int divide,
                            ph_tensor **out)
{
    *out = NULL;
    int dt = t ? ph_tensor_dtype(t) : 0;
    int64_t n = t ? ph_tensor_numel(t) : -1;
    const unsigned char *src = t ? ph_tensor_data(t) : NULL;
    if (!ph_dtype_is_float(dt) || inner < 1 || count < 1 || n < 0 || (n && (!src || !factor)))
        return PH_EINVAL;
    size_t rank = ph_tensor_rank(t);
    if (dt == PH_DT_FLOAT || dt == PH_DT_DOUBLE) {
        void *buf;
        ph_tensor *r = ph_tensor_new_uninit(dt, rank, ph_tensor_dims(t), &buf);
        if (!r)
            return PH_ENOMEM;
        /* src may sit at any address (mapped raw_data): elements are read
         * with memcpy, written to the new, aligned buffer */
        for (int64_t at = 0, ch = 0; at < n; at += inner, ch = ch + 1 == count ? 0 : ch + 1) {
            int64_t end = at + inner < n ? at + inner : n;
            double f = factor[ch];
            if (dt == PH_DT_FLOAT) {
                float *p = buf, x;
                for (int64_t k = at; k < end; k++) {
                    memcpy(&x, src + 4 * k, 4);
                    p[k] = scaled_f32(x, f, divide);
                }
            } else {
                double *p = buf, x;
                for (int64_t k = at; k < end; k++) {
                    memcpy(&x, src + 8 * k, 8);
                    p[k] = divide ? x / f : x * f;
                }
            }
        }
        *out = r;
        return 0;
    }
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return PH_ENOMEM;
    int rc = ph_tensor_read_f64(t, rank, ph_tensor_dims(t), v);
    if (rc) {
        free(v);
        return rc == PH_ENOMEM ? PH_ENOMEM : PH_EINVAL;
    }
    for (int64_t k = 0; k < n; k++)
        v[k] = divide ? v[k] / factor[(k / inner) % count] : v[k] * factor[(k / inner) % count];
    *out = ph_tensor_from_f64(dt, rank, ph_tensor_dims(t), v);
    free(v);
    return *out ? 0 : PH_ENOMEM;
}

/* -------------------------------------------------------------- replacing */

/* 1 if v's known type is exactly t's dtype and static shape. */
static int type_matches(const ph_value *v, const ph_tensor *t)
{
    size_t r = ph_tensor_rank(t);
    if (v->dtype != ph_tensor_dtype(t) || v->rank < 0 || (size_t)v->rank != r)
        return 0;
    for (size_t i = 0; i < r; i++)
        if (v->dims[i] != ph_tensor_dim(t, i) || (v->dim_params && v->dim_params[i]))
            return 0;
    return 1;
}

PH_API int ph_value_set_const(ph_value *v, ph_tensor *t)
{
    if (!t)
        return PH_EINVAL;
    if (!v || v->dead || v->producer || !v->tensor || ph_tensor_kind(t) != PH_KIND_TENSOR) {
        ph_tensor_free(t);
        return PH_EINVAL;
    }
    if (v->is_input) {
        ph_tensor_free(t);
        return PH_EBUSY;
    }
    if (t != v->tensor) {
        if (!type_matches(v, t)) {
            int rc = ph_value_set_type(v, ph_tensor_dtype(t), (int)ph_tensor_rank(t), ph_tensor_dims(t));
            if (rc) {
                ph_tensor_free(t);
                return rc;
            }
        }
        ph_tensor *old = v->tensor;
        v->tensor = t;
        v->graph->model->init_version++;
        ph_tensor_free(old);
    }
    for (size_t i = 0; i < v->n_uses; i++)
        ir_notify_node_changed(v->uses[i].node);
    return 0;
}

/* ------------------------------------------------------------ per channel */

/* The normalized axis, or -1 when out of range. */
static int norm_axis(int out_rank, int axis)
{
    if (axis < 0)
        axis += out_rank;
    return axis >= 0 && axis < out_rank ? axis : -1;
}

PH_API int ph_const_is_per_channel(const ph_tensor *t, int out_rank, int axis, int64_t channels)
{
    if (!t || out_rank < 0 || (axis = norm_axis(out_rank, axis)) < 0)
        return 0;
    size_t r = ph_tensor_rank(t);
    if (r > (size_t)out_rank)
        return 0;
    for (size_t i = 0; i < r; i++) {
        int64_t d = ph_tensor_dim(t, i);
        size_t j = (size_t)out_rank - r + i; /* the output axis dim i lines up with */
        if (d == 1)
            continue;
        if (j != (size_t)axis || d < 0 || (channels >= 0 && d != channels))
            return 0;
    }
    return 1;
}

PH_API int ph_const_channel_values(const ph_tensor *t, int out_rank, int axis, int64_t channels,
                                   double *out)
{
    if (!t || !out || channels < 0 || !ph_const_is_per_channel(t, out_rank, axis, channels))
        return PH_EINVAL;
    int dt = ph_tensor_dtype(t);
    if (!ph_dtype_is_numeric(dt))
        return PH_EUNSUPPORTED;
    /* every dim but one is 1: the elements are the channels in order */
    int64_t n = ph_tensor_numel(t), dims[1] = {channels};
    return bcast_read(ph_tensor_data(t), dt, 1, &n, 1, dims, READ_F64, out);
}

/* ------------------------------------------------------------ uniform */

PH_API int ph_tensor_all_equal(const ph_tensor *t, double v)
{
    int dt = t ? ph_tensor_dtype(t) : 0;
    const unsigned char *data = t && ph_dtype_is_numeric(dt) ? ph_tensor_data(t) : NULL;
    int64_t n = data ? ph_tensor_numel(t) : 0;
    for (int64_t k = 0; k < n; k++)
        if (!(elem_f64(data, dt, (size_t)k) == v))
            return 0;
    return n > 0;
}
