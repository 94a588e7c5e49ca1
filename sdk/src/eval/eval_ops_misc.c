/* sdk/src/eval/eval_ops_misc.c - Pad, TopK and NonZero.
 *
 * All three are registered native_half: Pad and TopK move elements by size
 * (TopK compares through eval_load_f64, which reads halves), NonZero only
 * tests elements against zero. */
#include <stdlib.h>
#include <string.h>

#include "eval_ops_util.h"

/* Source coordinate for output coordinate c (already shifted by the
 * leading pad) along a dim of size d; -1 for a constant-padded position. */
static int64_t pad_src(int64_t c, int64_t d, int mode)
{
    if (c >= 0 && c < d)
        return c;
    switch (mode) {
    case 1: /* reflect */
        if (d == 1)
            return 0;
        c = c < 0 ? -c : c;
        c %= 2 * (d - 1);
        return c < d ? c : 2 * (d - 1) - c;
    case 2: return c < 0 ? 0 : d - 1; /* edge */
    case 3: c %= d; return c < 0 ? c + d : c; /* wrap */
    default: return -1;
    }
}

int eval_k_pad(eval_kargs *a)
{
    const ph_tensor *x;
    const char *xd;
    int rc = eval_need(a, 0, &x, (const void **)&xd);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t r = ph_tensor_rank(x), es = ph_dtype_size(dt), np = 0, na = 0;
    if (r > EVAL_MAX_RANK || !es)
        return eval_kfail(a, PH_EUNSUPPORTED, "rank %zu or dtype %s is not supported", r, ph_dtype_name(dt));
    const char *ms = ph_node_attr_string(a->node, "mode", "constant");
    int mode = !strcmp(ms, "constant") ? 0 : !strcmp(ms, "reflect") ? 1 : !strcmp(ms, "edge") ? 2
             : !strcmp(ms, "wrap") ? 3 : -1;
    if (mode < 0)
        return eval_kfail(a, PH_EUNSUPPORTED, "mode '%s' is not supported", ms);
    int64_t pads[2 * EVAL_MAX_RANK], pv[2 * EVAL_MAX_RANK], axes[EVAL_MAX_RANK];
    unsigned char cval[16] = {0};
    if (a->opset < 11) {
        const int64_t *p;
        ptrdiff_t c = ph_node_attr_ints(a->node, "pads", &p);
        if (c < 0 || (size_t)c != 2 * r)
            return eval_kfail(a, PH_EINVAL, "pads must have 2 * rank entries");
        if (c)
            memcpy(pv, p, (size_t)c * sizeof *p);
        np = (size_t)c;
        eval_store_f64(cval, dt, 0, ph_node_attr_float(a->node, "value", 0));
    } else {
        const ph_tensor *pt, *ct = eval_in(a, 2), *at = eval_in(a, 3);
        if ((rc = eval_need(a, 1, &pt, NULL)) != 0 ||
            (rc = eval_small_ints(a, pt, "pads", pv, 2 * EVAL_MAX_RANK, &np)) != 0)
            return rc;
        if (ct) {
            const void *cd;
            if ((rc = eval_need(a, 2, &ct, &cd)) != 0)
                return rc;
            if (ph_tensor_dtype(ct) != dt || ph_tensor_numel(ct) != 1)
                return eval_kfail(a, PH_EINVAL, "constant_value must be one element of the input dtype");
            memcpy(cval, cd, es);
        }
        if (at && (rc = eval_small_ints(a, at, "axes", axes, EVAL_MAX_RANK, &na)) != 0)
            return rc;
    }
    if (!eval_in(a, 3) || a->opset < 11) {
        na = r;
        for (size_t i = 0; i < r; i++)
            axes[i] = (int64_t)i;
    }
    if (np != 2 * na)
        return eval_kfail(a, PH_EINVAL, "pads has %zu entries, expected %zu", np, 2 * na);
    memset(pads, 0, sizeof pads);
    for (size_t i = 0; i < na; i++) {
        size_t ax;
        if ((rc = eval_axis(a, axes[i], r, &ax)) != 0)
            return rc;
        pads[ax] = pv[i];
        pads[ax + r] = pv[i + na];
    }
    int64_t od[EVAL_MAX_RANK], xs[EVAL_MAX_RANK], idx[EVAL_MAX_RANK] = {0};
    const int64_t *d = ph_tensor_dims(x);
    for (size_t i = 0; i < r; i++) {
        if (__builtin_add_overflow(d[i], pads[i], &od[i]) || __builtin_add_overflow(od[i], pads[i + r], &od[i]))
            return eval_kfail(a, PH_EINVAL, "pads of dim %zu overflow", i);
        if (od[i] < 0)
            return eval_kfail(a, PH_EINVAL, "pads make dim %zu negative", i);
        if (mode && d[i] == 0 && od[i] > 0)
            return eval_kfail(a, PH_EINVAL, "cannot %s-pad an empty dim", ms);
    }
    char *o;
    if ((rc = eval_out(a, 0, dt, r, od, (void **)&o)) != 0 || !o)
        return rc;
    int64_t n = eval_numel(r, od);
    eval_strides(r, d, xs);
    for (int64_t e = 0; e < n; e++) {
        int64_t off = 0;
        for (size_t i = 0; i < r && off >= 0; i++) {
            int64_t s = pad_src(idx[i] - pads[i], d[i], mode);
            off = s < 0 ? -1 : off + s * xs[i];
        }
        memcpy(o + (size_t)e * es, off < 0 ? (const char *)cval : xd + (size_t)off * es, es);
        for (size_t i = r; i-- > 0;) {
            if (++idx[i] < od[i])
                break;
            idx[i] = 0;
        }
    }
    return 0;
}

typedef struct kv {
    double v;
    int64_t i;
} kv;

/* NaN sorts above every number; ties keep the lower index first. */
static int cmp_val(double x, double y)
{
    int xn = x != x, yn = y != y;
    if (xn || yn)
        return xn - yn;
    return (x > y) - (x < y);
}
static int by_desc(const void *p, const void *q)
{
    const kv *a = p, *b = q;
    int c = cmp_val(b->v, a->v);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}
static int by_asc(const void *p, const void *q)
{
    const kv *a = p, *b = q;
    int c = cmp_val(a->v, b->v);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

int eval_k_topk(eval_kargs *a)
{
    const ph_tensor *x, *kt;
    const char *xd;
    int rc = eval_need(a, 0, &x, (const void **)&xd);
    if (rc || (rc = eval_need(a, 1, &kt, NULL)) != 0)
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t r = ph_tensor_rank(x), ax, es = ph_dtype_size(dt), nk;
    if (!(eval_dt_numeric(dt) || dt == PH_DT_FLOAT16 || dt == PH_DT_BFLOAT16) || dt == PH_DT_UINT64)
        return eval_kbad_dtype(a, "input", dt);
    if (r == 0 || r > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EUNSUPPORTED, "rank %zu is not supported", r);
    int64_t k;
    if ((rc = eval_small_ints(a, kt, "K", &k, 1, &nk)) != 0)
        return rc;
    if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", -1), r, &ax)) != 0)
        return rc;
    int64_t n = ph_tensor_dim(x, ax);
    if (nk != 1 || k < 0 || k > n)
        return eval_kfail(a, PH_EINVAL, "K must be one value in [0, %lld]", (long long)n);
    int largest = (int)ph_node_attr_int(a->node, "largest", 1);
    int64_t od[EVAL_MAX_RANK];
    memcpy(od, ph_tensor_dims(x), r * sizeof *od);
    od[ax] = k;
    char *ov;
    int64_t *oi;
    if ((rc = eval_out(a, 0, dt, r, od, (void **)&ov)) != 0 ||
        (rc = eval_out(a, 1, PH_DT_INT64, r, od, (void **)&oi)) != 0)
        return rc;
    int64_t outer = eval_numel(ax, od), inner = eval_numel(r - ax - 1, od + ax + 1);
    if (!k || !outer || !inner)
        return 0;
    kv *buf = malloc((size_t)n * sizeof *buf);
    if (!buf)
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    for (int64_t i = 0; i < outer; i++)
        for (int64_t j = 0; j < inner; j++) {
            size_t base = (size_t)(i * n * inner + j), obase = (size_t)(i * k * inner + j);
            for (int64_t e = 0; e < n; e++)
                buf[e] = (kv){eval_load_f64(xd, dt, base + (size_t)(e * inner)), e};
            qsort(buf, (size_t)n, sizeof *buf, largest ? by_desc : by_asc);
            for (int64_t e = 0; e < k; e++) {
                size_t oe = obase + (size_t)(e * inner);
                if (ov)
                    memcpy(ov + oe * es, xd + (base + (size_t)(buf[e].i * inner)) * es, es);
                if (oi)
                    oi[oe] = buf[e].i;
            }
        }
    free(buf);
    return 0;
}

int eval_k_nonzero(eval_kargs *a)
{
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need(a, 0, &x, &xd);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x);
    if (!(eval_dt_numeric(dt) || dt == PH_DT_BOOL || dt == PH_DT_FLOAT16 || dt == PH_DT_BFLOAT16))
        return eval_kbad_dtype(a, "input", dt);
    size_t r = ph_tensor_rank(x), rr = r ? r : 1; /* a scalar counts as 1-D */
    if (r > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EUNSUPPORTED, "rank %zu is above %d", r, EVAL_MAX_RANK);
    int64_t n = ph_tensor_numel(x), nnz = 0, idx[EVAL_MAX_RANK] = {0};
    int fl = eval_dt_float(dt) || dt == PH_DT_FLOAT16 || dt == PH_DT_BFLOAT16;
    for (int64_t e = 0; e < n; e++)
        nnz += fl ? eval_load_f64(xd, dt, (size_t)e) != 0 : eval_load_i64(xd, dt, (size_t)e) != 0;
    int64_t od[2] = {(int64_t)rr, nnz}, *o, c = 0;
    if ((rc = eval_out(a, 0, PH_DT_INT64, 2, od, (void **)&o)) != 0 || !o)
        return rc;
    for (int64_t e = 0; e < n; e++) {
        int nz = fl ? eval_load_f64(xd, dt, (size_t)e) != 0 : eval_load_i64(xd, dt, (size_t)e) != 0;
        if (nz) {
            for (size_t i = 0; i < rr; i++)
                o[(int64_t)i * nnz + c] = r ? idx[i] : 0;
            c++;
        }
        for (size_t i = r; i-- > 0;) {
            if (++idx[i] < ph_tensor_dim(x, i))
                break;
            idx[i] = 0;
        }
    }
    return 0;
}
