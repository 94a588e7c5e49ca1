/* sdk/src/eval/eval_ops_shape.c - kernels that only look at or change shapes, or
 * make constants: Identity Dropout Shape Size Reshape Flatten Squeeze
 * Unsqueeze Constant ConstantOfShape Range Cast CastLike.
 *
 * Except Range, these are registered native_half: they copy bytes (or, for
 * Cast, convert them) whatever the dtype. */
#include <math.h>
#include <string.h>

#include "eval_ops_util.h"

/* Output 0: x's bytes with a new shape. */
static int out_copy(eval_kargs *a, const ph_tensor *x, size_t rank, const int64_t *dims)
{
    const void *xd = ph_tensor_data(x);
    void *o;
    int rc = eval_out(a, 0, ph_tensor_dtype(x), rank, dims, &o);
    if (!rc && o)
        memcpy(o, xd, ph_tensor_nbytes(x));
    return rc;
}

static int need_data(eval_kargs *a, const ph_tensor **x)
{
    int rc = eval_need(a, 0, x, NULL);
    if (!rc && ph_tensor_rank(*x) > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EUNSUPPORTED, "rank %zu is above the supported %d", ph_tensor_rank(*x),
                         EVAL_MAX_RANK);
    return rc;
}

int eval_k_identity(eval_kargs *a)
{
    const ph_tensor *x = eval_in(a, 0);
    if (x && ph_tensor_kind(x) != PH_KIND_TENSOR) /* a sequence or optional (opset 14+) */
        return (a->out[0] = ph_tensor_clone(x)) ? 0 : eval_kfail(a, PH_ENOMEM, "out of memory");
    int rc = need_data(a, &x);
    return rc ? rc : out_copy(a, x, ph_tensor_rank(x), ph_tensor_dims(x));
}

/* Dropout at inference: identity; the optional mask is all true. */
int eval_k_dropout(eval_kargs *a)
{
    const ph_tensor *x, *t = eval_in(a, 2);
    int rc = need_data(a, &x);
    if (rc)
        return rc;
    if (t) {
        const void *td;
        if ((rc = eval_need(a, 2, &t, &td)) != 0)
            return rc;
        if (ph_tensor_dtype(t) != PH_DT_BOOL || ph_tensor_numel(t) != 1)
            return eval_kfail(a, PH_EINVAL, "training_mode must be a bool scalar");
        if (*(const uint8_t *)td)
            return eval_k_dropout_training(a); /* random: eval_ops_random.c */
    }
    if ((rc = out_copy(a, x, ph_tensor_rank(x), ph_tensor_dims(x))) != 0)
        return rc;
    void *m;
    if ((rc = eval_out(a, 1, PH_DT_BOOL, ph_tensor_rank(x), ph_tensor_dims(x), &m)) != 0 || !m)
        return rc;
    memset(m, 1, (size_t)ph_tensor_numel(x));
    return 0;
}

int eval_k_shape(eval_kargs *a)
{
    const ph_tensor *x = eval_in(a, 0);
    if (!x)
        return eval_kfail(a, PH_EINVAL, "input 0 is required");
    int64_t r = (int64_t)ph_tensor_rank(x);
    int64_t s = ph_node_attr_int(a->node, "start", 0), e = ph_node_attr_int(a->node, "end", r);
    s = s < 0 ? s + r : s;
    e = e < 0 ? e + r : e;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < 0 ? 0 : e > r ? r : e;
    int64_t n = e > s ? e - s : 0;
    int64_t *o;
    int rc = eval_out(a, 0, PH_DT_INT64, 1, &n, (void **)&o);
    if (!rc && o)
        for (int64_t i = 0; i < n; i++)
            o[i] = ph_tensor_dim(x, (size_t)(s + i));
    return rc;
}

int eval_k_size(eval_kargs *a)
{
    const ph_tensor *x = eval_in(a, 0);
    if (!x)
        return eval_kfail(a, PH_EINVAL, "input 0 is required");
    int64_t *o;
    int rc = eval_out(a, 0, PH_DT_INT64, 0, NULL, (void **)&o);
    if (!rc && o)
        *o = ph_tensor_numel(x);
    return rc;
}

int eval_k_reshape(eval_kargs *a)
{
    const ph_tensor *x, *s;
    int rc = need_data(a, &x);
    if (rc || (rc = eval_need(a, 1, &s, NULL)) != 0)
        return rc;
    int64_t d[EVAL_MAX_RANK];
    size_t n;
    if ((rc = eval_small_ints(a, s, "shape", d, EVAL_MAX_RANK, &n)) != 0)
        return rc;
    int allowzero = (int)ph_node_attr_int(a->node, "allowzero", 0);
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < n; i++) {
        if (d[i] == 0 && !allowzero) {
            if (i >= ph_tensor_rank(x))
                return eval_kfail(a, PH_EINVAL, "shape[%zu] is 0 but the input has rank %zu", i,
                                 ph_tensor_rank(x));
            d[i] = ph_tensor_dim(x, i);
        }
        if (d[i] == -1) {
            if (infer >= 0)
                return eval_kfail(a, PH_EINVAL, "shape has more than one -1");
            infer = (int64_t)i;
        } else if (d[i] < 0) {
            return eval_kfail(a, PH_EINVAL, "shape[%zu] is %lld", i, (long long)d[i]);
        } else if (ir_mul_ovf(known, d[i], &known)) {
            return eval_kfail(a, PH_EINVAL, "shape has more elements than int64 counts");
        }
    }
    int64_t total = ph_tensor_numel(x);
    if (infer >= 0) {
        if (known == 0 || total % known)
            return eval_kfail(a, PH_EINVAL, "cannot infer -1: %lld elements into blocks of %lld",
                             (long long)total, (long long)known);
        d[infer] = total / known;
        known *= d[infer];
    }
    if (known != total)
        return eval_kfail(a, PH_EINVAL, "cannot reshape %lld elements into %lld", (long long)total,
                         (long long)known);
    return out_copy(a, x, n, d);
}

int eval_k_flatten(eval_kargs *a)
{
    const ph_tensor *x;
    int rc = need_data(a, &x);
    if (rc)
        return rc;
    int64_t r = (int64_t)ph_tensor_rank(x), axis = ph_node_attr_int(a->node, "axis", 1);
    if (axis < -r || axis > r)
        return eval_kfail(a, PH_EINVAL, "axis %lld is out of range for rank %lld", (long long)axis,
                         (long long)r);
    if (axis < 0)
        axis += r;
    int64_t d[2] = {eval_numel((size_t)axis, ph_tensor_dims(x)), 1};
    for (int64_t i = axis; i < r; i++)
        d[1] *= ph_tensor_dim(x, (size_t)i);
    return out_copy(a, x, 2, d);
}

/* Axes of Squeeze/Unsqueeze: attribute before opset 13, input after.
 * *present is 0 when neither is given. */
static int get_axes(eval_kargs *a, int64_t *axes, size_t *n, int *present)
{
    *n = 0;
    *present = 0;
    if (a->opset < 13) {
        const int64_t *v;
        ptrdiff_t c = ph_node_attr_ints(a->node, "axes", &v);
        if (c < 0)
            return 0;
        if (c > EVAL_MAX_RANK)
            return eval_kfail(a, PH_EUNSUPPORTED, "too many axes");
        if (c)
            memcpy(axes, v, (size_t)c * sizeof *v);
        *n = (size_t)c;
        *present = 1;
        return 0;
    }
    const ph_tensor *t = eval_in(a, 1);
    if (!t)
        return 0;
    *present = 1;
    return eval_small_ints(a, t, "axes", axes, EVAL_MAX_RANK, n);
}

int eval_k_squeeze(eval_kargs *a)
{
    const ph_tensor *x;
    int64_t axes[EVAL_MAX_RANK], d[EVAL_MAX_RANK];
    size_t na, r, m = 0;
    int present, drop[EVAL_MAX_RANK] = {0};
    int rc = need_data(a, &x);
    if (rc || (rc = get_axes(a, axes, &na, &present)) != 0)
        return rc;
    r = ph_tensor_rank(x);
    for (size_t i = 0; i < na; i++) {
        size_t ax;
        if ((rc = eval_axis(a, axes[i], r, &ax)) != 0)
            return rc;
        if (ph_tensor_dim(x, ax) != 1)
            return eval_kfail(a, PH_EINVAL, "cannot squeeze axis %lld of size %lld", (long long)axes[i],
                             (long long)ph_tensor_dim(x, ax));
        drop[ax] = 1;
    }
    for (size_t i = 0; i < r; i++)
        if (!(present && na ? drop[i] : ph_tensor_dim(x, i) == 1))
            d[m++] = ph_tensor_dim(x, i);
    return out_copy(a, x, m, d);
}

int eval_k_unsqueeze(eval_kargs *a)
{
    const ph_tensor *x;
    int64_t axes[EVAL_MAX_RANK], d[EVAL_MAX_RANK];
    size_t na;
    int present, ins[EVAL_MAX_RANK] = {0};
    int rc = need_data(a, &x);
    if (rc || (rc = get_axes(a, axes, &na, &present)) != 0)
        return rc;
    if (!present)
        return eval_kfail(a, PH_EINVAL, "axes are required");
    size_t r = ph_tensor_rank(x) + na, k = 0;
    if (r > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EUNSUPPORTED, "output rank %zu is above %d", r, EVAL_MAX_RANK);
    for (size_t i = 0; i < na; i++) {
        size_t ax;
        if ((rc = eval_axis(a, axes[i], r, &ax)) != 0)
            return rc;
        if (ins[ax])
            return eval_kfail(a, PH_EINVAL, "axis %lld is repeated", (long long)axes[i]);
        ins[ax] = 1;
    }
    for (size_t i = 0; i < r; i++)
        d[i] = ins[i] ? 1 : ph_tensor_dim(x, k++);
    return out_copy(a, x, r, d);
}

/* A tensor attribute or one of value_float(s)/value_int(s). */
int eval_k_constant(eval_kargs *a)
{
    const ph_node *n = a->node;
    const ph_tensor *t = ph_node_attr_tensor(n, "value");
    const int64_t *iv;
    const float *fv;
    ptrdiff_t c;
    void *o;
    int rc;
    if (t) {
        if (!ph_tensor_data(t))
            return eval_kbad_dtype(a, "value", ph_tensor_dtype(t));
        return out_copy(a, t, ph_tensor_rank(t), ph_tensor_dims(t));
    }
    if (ph_node_attr_type(n, "value_float") == PH_ATTR_FLOAT) {
        if ((rc = eval_out(a, 0, PH_DT_FLOAT, 0, NULL, &o)) == 0 && o)
            *(float *)o = ph_node_attr_float(n, "value_float", 0);
        return rc;
    }
    if (ph_node_attr_type(n, "value_int") == PH_ATTR_INT) {
        if ((rc = eval_out(a, 0, PH_DT_INT64, 0, NULL, &o)) == 0 && o)
            *(int64_t *)o = ph_node_attr_int(n, "value_int", 0);
        return rc;
    }
    if ((c = ph_node_attr_floats(n, "value_floats", &fv)) >= 0) {
        int64_t d = c;
        if ((rc = eval_out(a, 0, PH_DT_FLOAT, 1, &d, &o)) == 0 && o && c)
            memcpy(o, fv, (size_t)c * sizeof *fv);
        return rc;
    }
    if ((c = ph_node_attr_ints(n, "value_ints", &iv)) >= 0) {
        int64_t d = c;
        if ((rc = eval_out(a, 0, PH_DT_INT64, 1, &d, &o)) == 0 && o && c)
            memcpy(o, iv, (size_t)c * sizeof *iv);
        return rc;
    }
    return eval_kfail(a, PH_EUNSUPPORTED, "only value, value_float(s) and value_int(s) are supported");
}

int eval_k_constant_of_shape(eval_kargs *a)
{
    const ph_tensor *s, *v = ph_node_attr_tensor(a->node, "value");
    int64_t d[EVAL_MAX_RANK];
    size_t n;
    int rc = eval_need(a, 0, &s, NULL);
    if (rc || (rc = eval_small_ints(a, s, "shape", d, EVAL_MAX_RANK, &n)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (d[i] < 0)
            return eval_kfail(a, PH_EINVAL, "shape[%zu] is negative", i);
    int dt = v ? ph_tensor_dtype(v) : PH_DT_FLOAT;
    const void *vd = v ? ph_tensor_data(v) : NULL;
    size_t es = ph_dtype_size(dt);
    if (v && (!vd || !es || ph_tensor_numel(v) != 1))
        return eval_kfail(a, PH_EUNSUPPORTED, "value must be a one-element tensor of a numeric dtype");
    char *o;
    if ((rc = eval_out(a, 0, dt, n, d, (void **)&o)) != 0 || !o)
        return rc;
    int64_t cnt = eval_numel(n, d);
    if (!vd)
        memset(o, 0, (size_t)cnt * es);
    else
        for (int64_t i = 0; i < cnt; i++)
            memcpy(o + (size_t)i * es, vd, es);
    return 0;
}

int eval_k_range(eval_kargs *a)
{
    const ph_tensor *t[3];
    const void *d[3];
    for (size_t k = 0; k < 3; k++) {
        int rc = eval_need(a, k, &t[k], &d[k]);
        if (rc)
            return rc;
        if (ph_tensor_numel(t[k]) != 1)
            return eval_kfail(a, PH_EINVAL, "input %zu must be a scalar", k);
    }
    int dt = ph_tensor_dtype(t[0]);
    if ((!eval_dt_float(dt) && dt != PH_DT_INT16 && dt != PH_DT_INT32 && dt != PH_DT_INT64) || a->half)
        return eval_kbad_dtype(a, "input", dt); /* no halves in the schema */
    if (ph_tensor_dtype(t[1]) != dt || ph_tensor_dtype(t[2]) != dt)
        return eval_kfail(a, PH_EINVAL, "start, limit and delta must have one dtype");
    int64_t n;
    void *o;
    if (eval_dt_float(dt)) {
        double s = eval_load_f64(d[0], dt, 0), l = eval_load_f64(d[1], dt, 0), dl = eval_load_f64(d[2], dt, 0);
        double c = ceil((l - s) / dl);
        if (dl == 0 || c != c || c > 1e10)
            return eval_kfail(a, PH_EINVAL, "delta %g gives no finite range", dl);
        n = c > 0 ? (int64_t)c : 0;
        int rc = eval_out(a, 0, dt, 1, &n, &o);
        for (int64_t i = 0; !rc && o && i < n; i++)
            eval_store_f64(o, dt, (size_t)i, s + (double)i * dl);
        return rc;
    }
    int64_t s = eval_load_i64(d[0], dt, 0), l = eval_load_i64(d[1], dt, 0), dl = eval_load_i64(d[2], dt, 0);
    if (dl == 0)
        return eval_kfail(a, PH_EINVAL, "delta is 0");
    double c = ceil(((double)l - (double)s) / (double)dl);
    if (c > 1e10)
        return eval_kfail(a, PH_EINVAL, "range is too long");
    n = c > 0 ? (int64_t)c : 0;
    int rc = eval_out(a, 0, dt, 1, &n, &o);
    for (int64_t i = 0; !rc && o && i < n; i++)
        eval_store_i64(o, dt, (size_t)i, (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)dl)); /* wraps, never UB */
    return rc;
}

static int cast_to(eval_kargs *a, int to)
{
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need(a, 0, &x, &xd);
    if (rc)
        return rc;
    int from = ph_tensor_dtype(x);
    int ok_from = eval_dt_numeric(from) || from == PH_DT_BOOL || from == PH_DT_FLOAT16 || from == PH_DT_BFLOAT16;
    int ok_to = eval_dt_numeric(to) || to == PH_DT_BOOL || to == PH_DT_FLOAT16 || to == PH_DT_BFLOAT16;
    if (!ok_from)
        return eval_kbad_dtype(a, "input", from);
    if (!ok_to)
        return eval_kbad_dtype(a, "target", to);
    void *o;
    if ((rc = eval_out(a, 0, to, ph_tensor_rank(x), ph_tensor_dims(x), &o)) != 0 || !o)
        return rc;
    eval_convert(o, to, xd, from, (size_t)ph_tensor_numel(x));
    return 0;
}

int eval_k_cast(eval_kargs *a)
{
    return cast_to(a, (int)ph_node_attr_int(a->node, "to", PH_DT_UNDEFINED));
}

int eval_k_cast_like(eval_kargs *a)
{
    const ph_tensor *t = eval_in(a, 1);
    if (!t)
        return eval_kfail(a, PH_EINVAL, "input 1 is required");
    return cast_to(a, ph_tensor_dtype(t));
}
