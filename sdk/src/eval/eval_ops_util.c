/* sdk/src/eval/eval_ops_util.c - helpers shared by the light kernels: errors,
 * input/output access, dtype conversion, broadcasting and strided copies
 * (see eval_ops_util.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "eval_ops_util.h"

/* ------------------------------------------------------------ errors */

int eval_kfail(eval_kargs *a, int code, const char *fmt, ...)
{
    if (a->err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->err->message, sizeof a->err->message, fmt, ap);
        va_end(ap);
        a->err->code = code;
    }
    return code;
}

int eval_kbad_dtype(eval_kargs *a, const char *what, int dtype)
{
    if (dtype == PH_DT_FLOAT && a->half)
        dtype = a->half;
    return eval_kfail(a, PH_EUNSUPPORTED, "%s dtype %s is not supported", what, ph_dtype_name(dtype));
}

/* ------------------------------------------------------------ inputs/outputs */

int eval_need(eval_kargs *a, size_t i, const ph_tensor **t, const void **data)
{
    const ph_tensor *x = eval_in(a, i);
    if (!x)
        return eval_kfail(a, PH_EINVAL, "input %zu is required", i);
    const void *d = ph_tensor_data(x);
    if (!d)
        return eval_kfail(a, PH_EUNSUPPORTED, "input %zu has no readable data (dtype %s)", i,
                         ph_dtype_name(ph_tensor_dtype(x)));
    *t = x;
    if (data)
        *data = d;
    return 0;
}

int eval_need_float(eval_kargs *a, size_t i, const char *what, const ph_tensor **t, const void **data)
{
    int rc = eval_need(a, i, t, data);
    if (rc)
        return rc;
    return eval_dt_float(ph_tensor_dtype(*t)) ? 0 : eval_kbad_dtype(a, what, ph_tensor_dtype(*t));
}

int eval_out(eval_kargs *a, size_t i, int dtype, size_t rank, const int64_t *dims, void **data)
{
    *data = NULL;
    if (!eval_wanted(a, i))
        return 0;
    int64_t bytes, numel = ir_dims_numel(dims, rank);
    if (numel < 0 || ir_mul_ovf(numel, (int64_t)ph_dtype_size(dtype), &bytes))
        return eval_kfail(a, PH_EUNSUPPORTED, "output %zu: its shape has a negative dim or too many elements", i);
    ph_tensor *t = ir_tensor_alloc(dtype, rank, dims);
    if (!t)
        return eval_kfail(a, PH_ENOMEM, "out of memory allocating output %zu", i);
    a->out[i] = t;
    *data = ir_tensor_mut(t);
    return 0;
}

int eval_k_call(eval_kargs *a, eval_kernel_fn fn, const ph_tensor *const *in, size_t n_in, ph_tensor **out)
{
    ph_tensor *o[1] = {NULL};
    int wanted = 1;
    eval_kargs k = *a;
    k.in = in;
    k.n_in = n_in;
    k.out = o;
    k.n_out = 1;
    k.out_wanted = &wanted;
    int rc = fn(&k);
    *out = o[0];
    if (rc) {
        ph_tensor_free(o[0]);
        *out = NULL;
    }
    return rc;
}

/* ------------------------------------------------------------ dtypes */

int64_t eval_f64_to_i64(double v)
{
    if (v != v)
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

static uint64_t f64_to_u64(double v)
{
    if (v != v || v <= 0)
        return v <= -1 ? (uint64_t)eval_f64_to_i64(v) : 0; /* negative: wrap like C casts via int64 */
    if (v >= 18446744073709551615.0)
        return UINT64_MAX;
    return (uint64_t)v;
}

double eval_load_f64(const void *p, int dt, size_t i)
{
    switch (dt) {
    case PH_DT_FLOAT: return ((const float *)p)[i];
    case PH_DT_DOUBLE: return ((const double *)p)[i];
    case PH_DT_FLOAT16: return ir_half_to_float(((const uint16_t *)p)[i]);
    case PH_DT_BFLOAT16: return ir_bf16_to_float(((const uint16_t *)p)[i]);
    case PH_DT_UINT64: return (double)((const uint64_t *)p)[i];
    default: return (double)eval_load_i64(p, dt, i);
    }
}

int64_t eval_load_i64(const void *p, int dt, size_t i)
{
    switch (dt) {
    case PH_DT_INT8: return ((const int8_t *)p)[i];
    case PH_DT_INT16: return ((const int16_t *)p)[i];
    case PH_DT_INT32: return ((const int32_t *)p)[i];
    case PH_DT_INT64: return ((const int64_t *)p)[i];
    case PH_DT_UINT8: return ((const uint8_t *)p)[i];
    case PH_DT_UINT16: return ((const uint16_t *)p)[i];
    case PH_DT_UINT32: return ((const uint32_t *)p)[i];
    case PH_DT_UINT64: return (int64_t)((const uint64_t *)p)[i];
    case PH_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: return eval_f64_to_i64(eval_load_f64(p, dt, i));
    }
}

void eval_store_i64(void *p, int dt, size_t i, int64_t v)
{
    switch (dt) {
    case PH_DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case PH_DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case PH_DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case PH_DT_INT64: ((int64_t *)p)[i] = v; break;
    case PH_DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case PH_DT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case PH_DT_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case PH_DT_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case PH_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: eval_store_f64(p, dt, i, (double)v); break;
    }
}

void eval_store_f64(void *p, int dt, size_t i, double v)
{
    switch (dt) {
    case PH_DT_FLOAT: ((float *)p)[i] = (float)v; break;
    case PH_DT_DOUBLE: ((double *)p)[i] = v; break;
    case PH_DT_FLOAT16: ((uint16_t *)p)[i] = ir_float_to_half((float)v); break;
    case PH_DT_BFLOAT16: ((uint16_t *)p)[i] = ir_float_to_bf16((float)v); break;
    case PH_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case PH_DT_UINT64: ((uint64_t *)p)[i] = f64_to_u64(v); break;
    default: eval_store_i64(p, dt, i, eval_f64_to_i64(v)); break;
    }
}

static int exact_int(int dt) { return eval_dt_int(dt) || dt == PH_DT_BOOL; }

void eval_convert(void *dst, int ddt, const void *src, int sdt, size_t n)
{
    if (ddt == sdt) {
        memcpy(dst, src, n * ph_dtype_size(sdt));
    } else if (sdt == PH_DT_FLOAT && ddt == PH_DT_FLOAT16) {
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = ir_float_to_half(((const float *)src)[i]);
    } else if (sdt == PH_DT_FLOAT16 && ddt == PH_DT_FLOAT) {
        for (size_t i = 0; i < n; i++)
            ((float *)dst)[i] = ir_half_to_float(((const uint16_t *)src)[i]);
    } else if (ddt == PH_DT_BOOL && !exact_int(sdt)) {
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = eval_load_f64(src, sdt, i) != 0;
    } else if (exact_int(sdt) && exact_int(ddt)) {
        for (size_t i = 0; i < n; i++)
            eval_store_i64(dst, ddt, i, eval_load_i64(src, sdt, i));
    } else {
        for (size_t i = 0; i < n; i++)
            eval_store_f64(dst, ddt, i, eval_load_f64(src, sdt, i));
    }
}

/* ------------------------------------------------------------ small int lists */

int eval_small_ints(eval_kargs *a, const ph_tensor *t, const char *what, int64_t *buf, size_t cap,
                   size_t *n)
{
    int dt = ph_tensor_dtype(t);
    if (dt != PH_DT_INT64 && dt != PH_DT_INT32)
        return eval_kbad_dtype(a, what, dt);
    int64_t cnt = ph_tensor_numel(t);
    if (cnt < 0 || (size_t)cnt > cap)
        return eval_kfail(a, PH_EUNSUPPORTED, "%s has %lld elements, at most %zu supported", what,
                         (long long)cnt, cap);
    const void *d = ph_tensor_data(t);
    if (!d && cnt)
        return eval_kfail(a, PH_EUNSUPPORTED, "%s has no readable data", what);
    for (int64_t i = 0; i < cnt; i++)
        buf[i] = eval_load_i64(d, dt, (size_t)i);
    *n = (size_t)cnt;
    return 0;
}

int eval_index_at(eval_kargs *a, const void *id, int idt, size_t i, int64_t d, int64_t *out)
{
    int64_t v = eval_load_i64(id, idt, i);
    if (v < -d || v >= d)
        return eval_kfail(a, PH_EINVAL, "index %lld is out of range for dim %lld", (long long)v, (long long)d);
    *out = v < 0 ? v + d : v;
    return 0;
}

int eval_axis(eval_kargs *a, int64_t axis, size_t rank, size_t *out)
{
    int64_t r = (int64_t)rank;
    if (axis < -r || axis >= r)
        return eval_kfail(a, PH_EINVAL, "axis %lld is out of range for rank %zu", (long long)axis, rank);
    *out = (size_t)(axis < 0 ? axis + r : axis);
    return 0;
}

void eval_strides(size_t rank, const int64_t *dims, int64_t *st)
{
    int64_t s = 1;
    for (size_t i = rank; i-- > 0;) {
        st[i] = s;
        s *= dims[i];
    }
}

int64_t eval_numel(size_t rank, const int64_t *dims)
{
    return ir_dims_numel(dims, rank);
}

/* ------------------------------------------------------------ broadcasting */

int eval_bcast_init(eval_kargs *a, eval_bcast *b, size_t n, const ph_tensor *const *ts)
{
    size_t r = 0;
    for (size_t k = 0; k < n; k++)
        if (ph_tensor_rank(ts[k]) > r)
            r = ph_tensor_rank(ts[k]);
    if (r > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EUNSUPPORTED, "rank %zu is above the supported %d", r, EVAL_MAX_RANK);
    b->out_rank = r;
    b->n_in = n;
    int64_t full_st[3][EVAL_MAX_RANK];
    for (size_t i = 0; i < r; i++) {
        int64_t d = 1;
        for (size_t k = 0; k < n; k++) {
            size_t rk = ph_tensor_rank(ts[k]);
            int64_t dk = i + rk >= r ? ph_tensor_dim(ts[k], i + rk - r) : 1;
            if (dk == d || dk == 1)
                continue;
            if (d != 1)
                return eval_kfail(a, PH_EINVAL, "shapes do not broadcast: dim %zu is %lld and %lld", i,
                                 (long long)d, (long long)dk);
            d = dk;
        }
        b->out_dims[i] = d;
    }
    for (size_t k = 0; k < n; k++) {
        size_t rk = ph_tensor_rank(ts[k]);
        int64_t s = 1;
        for (size_t i = r; i-- > 0;) {
            int64_t dk = i + rk >= r ? ph_tensor_dim(ts[k], i + rk - r) : 1;
            full_st[k][i] = dk == 1 ? 0 : s;
            s *= dk;
        }
    }
    b->numel = eval_numel(r, b->out_dims);
    if (b->numel < 0)
        return eval_kfail(a, PH_EUNSUPPORTED, "the broadcast shape has more elements than int64 counts");
    /* collapse: drop dims of size 1, merge neighbours that stay contiguous */
    size_t m = 0;
    for (size_t i = 0; i < r; i++) {
        if (b->out_dims[i] == 1)
            continue;
        if (m > 0) {
            int merge = 1;
            for (size_t k = 0; k < n; k++)
                if (b->st[k][m - 1] != full_st[k][i] * b->out_dims[i])
                    merge = 0;
            if (merge) {
                b->dims[m - 1] *= b->out_dims[i];
                for (size_t k = 0; k < n; k++)
                    b->st[k][m - 1] = full_st[k][i];
                continue;
            }
        }
        b->dims[m] = b->out_dims[i];
        for (size_t k = 0; k < n; k++)
            b->st[k][m] = full_st[k][i];
        m++;
    }
    if (m == 0) {
        b->dims[0] = 1;
        for (size_t k = 0; k < n; k++)
            b->st[k][0] = 0;
        m = 1;
    }
    b->rank = m;
    return 0;
}

void eval_bc_begin(const eval_bcast *b, eval_bc_it *it)
{
    memset(it, 0, sizeof *it);
}

int eval_bc_next(const eval_bcast *b, eval_bc_it *it)
{
    it->out += b->dims[b->rank - 1];
    for (size_t i = b->rank - 1; i-- > 0;) {
        for (size_t k = 0; k < b->n_in; k++)
            it->off[k] += b->st[k][i];
        if (++it->idx[i] < b->dims[i])
            return 1;
        for (size_t k = 0; k < b->n_in; k++)
            it->off[k] -= b->st[k][i] * b->dims[i];
        it->idx[i] = 0;
    }
    return 0;
}

/* ------------------------------------------------------------ data movement */

static void copy_row(char *d, const char *s, size_t es, int64_t n, int64_t st)
{
    if (st == 1) {
        memcpy(d, s, (size_t)n * es);
        return;
    }
    int64_t sb = st * (int64_t)es;
    switch (es) {
    case 1: for (int64_t i = 0; i < n; i++) d[i] = s[i * sb]; break;
    case 2: for (int64_t i = 0; i < n; i++) memcpy(d + 2 * i, s + i * sb, 2); break;
    case 4: for (int64_t i = 0; i < n; i++) memcpy(d + 4 * i, s + i * sb, 4); break;
    case 8: for (int64_t i = 0; i < n; i++) memcpy(d + 8 * i, s + i * sb, 8); break;
    default: for (int64_t i = 0; i < n; i++) memcpy(d + (size_t)i * es, s + i * sb, es); break;
    }
}

void eval_copy_strided(void *dst, const void *src, size_t es, size_t rank, const int64_t *dims,
                      const int64_t *st)
{
    int64_t d[2 * EVAL_MAX_RANK], s[2 * EVAL_MAX_RANK], idx[2 * EVAL_MAX_RANK] = {0};
    size_t m = 0;
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] == 0)
            return;
        if (dims[i] == 1)
            continue;
        if (m > 0 && s[m - 1] == st[i] * dims[i]) {
            d[m - 1] *= dims[i];
            s[m - 1] = st[i];
            continue;
        }
        d[m] = dims[i];
        s[m] = st[i];
        m++;
    }
    if (m == 0) {
        memcpy(dst, src, es);
        return;
    }
    char *out = dst;
    const char *in = src;
    int64_t off = 0, row = d[m - 1];
    for (;;) {
        copy_row(out, in + off * (int64_t)es, es, row, s[m - 1]);
        out += (size_t)row * es;
        size_t i = m - 1;
        for (;;) {
            if (i == 0)
                return;
            i--;
            off += s[i];
            if (++idx[i] < d[i])
                break;
            off -= s[i] * d[i];
            idx[i] = 0;
        }
    }
}
