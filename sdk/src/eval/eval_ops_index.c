/* sdk/src/eval/eval_ops_index.c - ops that address elements by index or
 * position: ScatterND, ScatterElements (and the older Scatter), GatherND,
 * OneHot, Compress, ReverseSequence, Trilu, EyeLike, CumSum, Unique.
 *
 * Indices are int32 or int64; a negative index counts from the end of its
 * dim and one outside [-dim, dim) is PH_EINVAL (never a read or write out
 * of bounds).  Elements move by size, so every fixed-size dtype works
 * (registered native_half); the reductions of the scatters and CumSum
 * compute on floats through double (exact for one add or mul of floats)
 * and on integers in int64 (wrapping like the integer type).
 */
#include <stdlib.h>
#include <string.h>

#include "eval_more.h"

static int need_index(eval_kargs *a, size_t i, const ph_tensor **t, const void **d)
{
    int rc = eval_need(a, i, t, d);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(*t);
    if (dt != PH_DT_INT32 && dt != PH_DT_INT64)
        return eval_kbad_dtype(a, "indices", dt);
    return 0;
}

static int need_data(eval_kargs *a, size_t i, const ph_tensor **t, const char **d)
{
    int rc = eval_need(a, i, t, (const void **)d);
    if (rc)
        return rc;
    if (!ph_dtype_size(ph_tensor_dtype(*t)))
        return eval_kbad_dtype(a, "data", ph_tensor_dtype(*t));
    if (ph_tensor_rank(*t) > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EUNSUPPORTED, "rank %zu is above the supported %d", ph_tensor_rank(*t), EVAL_MAX_RANK);
    return 0;
}

/* ------------------------------------------------------------ scatter reductions */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static int reduction(eval_kargs *a, int *red)
{
    const char *r = ph_node_attr_string(a->node, "reduction", "none");
    *red = !strcmp(r, "none") ? RED_NONE : !strcmp(r, "add") ? RED_ADD : !strcmp(r, "mul") ? RED_MUL
         : !strcmp(r, "max") ? RED_MAX : !strcmp(r, "min") ? RED_MIN : -1;
    return *red < 0 ? eval_kfail(a, PH_EUNSUPPORTED, "reduction '%s' is not supported", r) : 0;
}

/* dst[di] = reduce(dst[di], src[si]) for element size es of dtype dt. */
static void scatter_one(char *dst, size_t di, const char *src, size_t si, int dt, size_t es, int red)
{
    if (red == RED_NONE) {
        memcpy(dst + di * es, src + si * es, es);
    } else if (eval_dt_float(dt) || dt == PH_DT_FLOAT16 || dt == PH_DT_BFLOAT16) {
        double x = eval_load_f64(dst, dt, di), y = eval_load_f64(src, dt, si);
        double r = red == RED_ADD ? x + y : red == RED_MUL ? x * y : red == RED_MAX ? (y > x ? y : x)
                 : (y < x ? y : x);
        eval_store_f64(dst, dt, di, r);
    } else if (dt == PH_DT_UINT64) {
        uint64_t x = (uint64_t)eval_load_i64(dst, dt, di), y = (uint64_t)eval_load_i64(src, dt, si);
        uint64_t r = red == RED_ADD ? x + y : red == RED_MUL ? x * y : red == RED_MAX ? (y > x ? y : x)
                   : (y < x ? y : x);
        eval_store_i64(dst, dt, di, (int64_t)r);
    } else {
        int64_t x = eval_load_i64(dst, dt, di), y = eval_load_i64(src, dt, si);
        int64_t r = red == RED_ADD ? (int64_t)((uint64_t)x + (uint64_t)y)
                  : red == RED_MUL ? (int64_t)((uint64_t)x * (uint64_t)y)
                  : red == RED_MAX ? (y > x ? y : x) : (y < x ? y : x);
        eval_store_i64(dst, dt, di, r);
    }
}

/* ------------------------------------------------------------ ScatterND / GatherND */

int eval_k_scatter_nd(eval_kargs *a)
{
    const ph_tensor *x, *it, *ut;
    const char *xd, *ud;
    const void *id;
    int rc, red;
    if ((rc = need_data(a, 0, &x, &xd)) != 0 || (rc = need_index(a, 1, &it, &id)) != 0 ||
        (rc = need_data(a, 2, &ut, &ud)) != 0 || (rc = reduction(a, &red)) != 0)
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t r = ph_tensor_rank(x), ir = ph_tensor_rank(it), es = ph_dtype_size(dt);
    int64_t k = ir ? ph_tensor_dim(it, ir - 1) : -1;
    if (ph_tensor_dtype(ut) != dt)
        return eval_kfail(a, PH_EINVAL, "updates must have the dtype of data");
    if (ir < 1 || k < 1 || (size_t)k > r)
        return eval_kfail(a, PH_EINVAL, "the last dim of indices must be in [1, rank of data]");
    /* updates: indices.shape[:-1] + data.shape[k:] */
    size_t ur = ir - 1 + r - (size_t)k;
    if (ph_tensor_rank(ut) != ur)
        return eval_kfail(a, PH_EINVAL, "updates have rank %zu, expected %zu", ph_tensor_rank(ut), ur);
    for (size_t i = 0; i < ur; i++) {
        int64_t want = i < ir - 1 ? ph_tensor_dim(it, i) : ph_tensor_dim(x, (size_t)k + i - (ir - 1));
        if (ph_tensor_dim(ut, i) != want)
            return eval_kfail(a, PH_EINVAL, "updates dim %zu is %lld, expected %lld", i,
                             (long long)ph_tensor_dim(ut, i), (long long)want);
    }
    char *o;
    if ((rc = eval_out(a, 0, dt, r, ph_tensor_dims(x), (void **)&o)) != 0 || !o)
        return rc;
    memcpy(o, xd, ph_tensor_nbytes(x));
    int64_t xs[EVAL_MAX_RANK];
    eval_strides(r, ph_tensor_dims(x), xs);
    int64_t n = eval_numel(ir - 1, ph_tensor_dims(it)), slice = eval_numel(r - (size_t)k, ph_tensor_dims(x) + k);
    for (int64_t j = 0; j < n; j++) {
        int64_t off = 0;
        for (int64_t c = 0; c < k; c++) {
            int64_t v;
            if ((rc = eval_index_at(a, id, ph_tensor_dtype(it), (size_t)(j * k + c), ph_tensor_dim(x, (size_t)c), &v)) != 0)
                return rc;
            off += v * xs[c];
        }
        for (int64_t e = 0; e < slice; e++)
            scatter_one(o, (size_t)(off + e), ud, (size_t)(j * slice + e), dt, es, red);
    }
    return 0;
}

int eval_k_gather_nd(eval_kargs *a)
{
    const ph_tensor *x, *it;
    const char *xd;
    const void *id;
    int rc;
    if ((rc = need_data(a, 0, &x, &xd)) != 0 || (rc = need_index(a, 1, &it, &id)) != 0)
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t r = ph_tensor_rank(x), ir = ph_tensor_rank(it), es = ph_dtype_size(dt);
    int64_t b = ph_node_attr_int(a->node, "batch_dims", 0);
    if (ir < 1 || b < 0 || (size_t)b >= ir || (size_t)b >= r)
        return eval_kfail(a, PH_EINVAL, "batch_dims %lld does not fit ranks %zu and %zu", (long long)b, r, ir);
    int64_t k = ph_tensor_dim(it, ir - 1);
    if (k < 1 || (size_t)(b + k) > r)
        return eval_kfail(a, PH_EINVAL, "the last dim of indices (%lld) is out of range", (long long)k);
    for (int64_t i = 0; i < b; i++)
        if (ph_tensor_dim(x, (size_t)i) != ph_tensor_dim(it, (size_t)i))
            return eval_kfail(a, PH_EINVAL, "batch dim %lld differs between data and indices", (long long)i);
    int64_t od[EVAL_MAX_RANK];
    size_t orank = 0;
    for (size_t i = 0; i + 1 < ir; i++)
        od[orank++] = ph_tensor_dim(it, i);
    for (size_t i = (size_t)(b + k); i < r; i++) {
        if (orank == EVAL_MAX_RANK)
            return eval_kfail(a, PH_EUNSUPPORTED, "output rank above %d", EVAL_MAX_RANK);
        od[orank++] = ph_tensor_dim(x, i);
    }
    char *o;
    if ((rc = eval_out(a, 0, dt, orank, od, (void **)&o)) != 0 || !o)
        return rc;
    int64_t xs[EVAL_MAX_RANK];
    eval_strides(r, ph_tensor_dims(x), xs);
    int64_t batches = eval_numel((size_t)b, ph_tensor_dims(x));
    int64_t per = eval_numel(ir - 1 - (size_t)b, ph_tensor_dims(it) + b); /* index tuples per batch entry */
    int64_t slice = eval_numel(r - (size_t)(b + k), ph_tensor_dims(x) + b + k);
    int64_t bstride = b ? xs[b - 1] : 0;
    for (int64_t bi = 0; bi < batches; bi++)
        for (int64_t j = 0; j < per; j++) {
            int64_t off = bi * bstride, t = bi * per + j;
            for (int64_t c = 0; c < k; c++) {
                int64_t v;
                if ((rc = eval_index_at(a, id, ph_tensor_dtype(it), (size_t)(t * k + c), ph_tensor_dim(x, (size_t)(b + c)),
                                       &v)) != 0)
                    return rc;
                off += v * xs[b + c];
            }
            memcpy(o, xd + (size_t)off * es, (size_t)slice * es);
            o += (size_t)slice * es;
        }
    return 0;
}

/* ------------------------------------------------------------ ScatterElements */

int eval_k_scatter_elements(eval_kargs *a)
{
    const ph_tensor *x, *it, *ut;
    const char *xd, *ud;
    const void *id;
    int rc, red = RED_NONE;
    if ((rc = need_data(a, 0, &x, &xd)) != 0 || (rc = need_index(a, 1, &it, &id)) != 0 ||
        (rc = need_data(a, 2, &ut, &ud)) != 0)
        return rc;
    if (ph_node_op(a->node) == PH_OP_ScatterElements && (rc = reduction(a, &red)) != 0)
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t r = ph_tensor_rank(x), ax, es = ph_dtype_size(dt);
    if (ph_tensor_dtype(ut) != dt || ph_tensor_rank(it) != r || ph_tensor_rank(ut) != r)
        return eval_kfail(a, PH_EINVAL, "data, indices and updates must have one rank (and updates data's dtype)");
    for (size_t i = 0; i < r; i++)
        if (ph_tensor_dim(it, i) != ph_tensor_dim(ut, i))
            return eval_kfail(a, PH_EINVAL, "indices and updates differ in dim %zu", i);
    if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", 0), r, &ax)) != 0)
        return rc;
    for (size_t i = 0; i < r; i++)
        if (i != ax && ph_tensor_dim(it, i) > ph_tensor_dim(x, i))
            return eval_kfail(a, PH_EINVAL, "indices dim %zu exceeds data", i);
    char *o;
    if ((rc = eval_out(a, 0, dt, r, ph_tensor_dims(x), (void **)&o)) != 0 || !o)
        return rc;
    memcpy(o, xd, ph_tensor_nbytes(x));
    int64_t xs[EVAL_MAX_RANK], idx[EVAL_MAX_RANK] = {0}, n = ph_tensor_numel(it);
    eval_strides(r, ph_tensor_dims(x), xs);
    for (int64_t e = 0; e < n; e++) {
        int64_t v, off = 0;
        if ((rc = eval_index_at(a, id, ph_tensor_dtype(it), (size_t)e, ph_tensor_dim(x, ax), &v)) != 0)
            return rc;
        for (size_t i = 0; i < r; i++)
            off += (i == ax ? v : idx[i]) * xs[i];
        scatter_one(o, (size_t)off, ud, (size_t)e, dt, es, red);
        for (size_t i = r; i-- > 0;) {
            if (++idx[i] < ph_tensor_dim(it, i))
                break;
            idx[i] = 0;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ OneHot */

int eval_k_one_hot(eval_kargs *a)
{
    const ph_tensor *it, *dt_, *vt;
    const void *id, *dd;
    const char *vd;
    int rc;
    if ((rc = eval_need(a, 0, &it, &id)) != 0 || (rc = eval_need(a, 1, &dt_, &dd)) != 0 ||
        (rc = need_data(a, 2, &vt, &vd)) != 0)
        return rc;
    if (ph_tensor_numel(dt_) != 1 || ph_tensor_numel(vt) != 2)
        return eval_kfail(a, PH_EINVAL, "depth must be one value and values two");
    if (!ph_dtype_size(ph_tensor_dtype(it)) || ph_tensor_dtype(it) == PH_DT_BOOL)
        return eval_kbad_dtype(a, "indices", ph_tensor_dtype(it));
    double depth_f = eval_load_f64(dd, ph_tensor_dtype(dt_), 0);
    int64_t depth = eval_f64_to_i64(depth_f);
    if (depth < 1)
        return eval_kfail(a, PH_EINVAL, "depth must be positive");
    size_t r = ph_tensor_rank(it), ax;
    if (r + 1 > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EUNSUPPORTED, "output rank above %d", EVAL_MAX_RANK);
    if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", -1), r + 1, &ax)) != 0)
        return rc;
    int64_t od[EVAL_MAX_RANK];
    for (size_t i = 0, k = 0; i <= r; i++)
        od[i] = i == ax ? depth : ph_tensor_dim(it, k++);
    int vdt = ph_tensor_dtype(vt);
    size_t es = ph_dtype_size(vdt);
    char *o;
    if ((rc = eval_out(a, 0, vdt, r + 1, od, (void **)&o)) != 0 || !o)
        return rc;
    int64_t outer = eval_numel(ax, od), inner = eval_numel(r - ax, od + ax + 1);
    for (int64_t i = 0; i < outer; i++)
        for (int64_t d = 0; d < depth; d++)
            for (int64_t j = 0; j < inner; j++) {
                int64_t v = eval_f64_to_i64(eval_load_f64(id, ph_tensor_dtype(it), (size_t)(i * inner + j)));
                if (v < 0)
                    v += depth;
                memcpy(o + (size_t)((i * depth + d) * inner + j) * es, vd + (v == d ? es : 0), es);
            }
    return 0;
}

/* ------------------------------------------------------------ Compress */

int eval_k_compress(eval_kargs *a)
{
    const ph_tensor *x, *ct;
    const char *xd;
    const uint8_t *cd;
    int rc;
    if ((rc = need_data(a, 0, &x, &xd)) != 0 || (rc = eval_need(a, 1, &ct, (const void **)&cd)) != 0)
        return rc;
    if (ph_tensor_dtype(ct) != PH_DT_BOOL || ph_tensor_rank(ct) != 1)
        return eval_kfail(a, PH_EINVAL, "condition must be a 1-D bool tensor");
    int dt = ph_tensor_dtype(x);
    size_t es = ph_dtype_size(dt), r = ph_tensor_rank(x), ax = 0;
    int flat = ph_node_attr_type(a->node, "axis") == PH_ATTR_NONE;
    int64_t outer = 1, len, inner = 1, nc = ph_tensor_dim(ct, 0);
    if (flat) {
        len = ph_tensor_numel(x);
    } else {
        if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", 0), r, &ax)) != 0)
            return rc;
        len = ph_tensor_dim(x, ax);
        outer = eval_numel(ax, ph_tensor_dims(x));
        inner = eval_numel(r - ax - 1, ph_tensor_dims(x) + ax + 1);
    }
    if (nc > len)
        return eval_kfail(a, PH_EINVAL, "condition has %lld entries, the axis %lld", (long long)nc, (long long)len);
    int64_t kept = 0;
    for (int64_t i = 0; i < nc; i++)
        kept += cd[i] != 0;
    int64_t od[EVAL_MAX_RANK];
    size_t orank = flat ? 1 : r;
    if (flat)
        od[0] = kept;
    else {
        memcpy(od, ph_tensor_dims(x), r * sizeof *od);
        od[ax] = kept;
    }
    char *o;
    if ((rc = eval_out(a, 0, dt, orank, od, (void **)&o)) != 0 || !o)
        return rc;
    size_t blk = (size_t)inner * es;
    for (int64_t i = 0; i < outer; i++)
        for (int64_t c = 0; c < nc; c++)
            if (cd[c]) {
                memcpy(o, xd + (size_t)(i * len + c) * blk, blk);
                o += blk;
            }
    return 0;
}

/* ------------------------------------------------------------ ReverseSequence */

int eval_k_reverse_sequence(eval_kargs *a)
{
    const ph_tensor *x, *lt;
    const char *xd;
    const void *ld;
    int rc;
    if ((rc = need_data(a, 0, &x, &xd)) != 0 || (rc = need_index(a, 1, &lt, &ld)) != 0)
        return rc;
    size_t r = ph_tensor_rank(x), es = ph_dtype_size(ph_tensor_dtype(x));
    int64_t ba = ph_node_attr_int(a->node, "batch_axis", 1), ta = ph_node_attr_int(a->node, "time_axis", 0);
    if (r < 2 || (ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
        return eval_kfail(a, PH_EINVAL, "batch_axis and time_axis must be 0 and 1 (in some order) of a rank >= 2 input");
    int64_t nb = ph_tensor_dim(x, (size_t)ba), nt = ph_tensor_dim(x, (size_t)ta);
    if (ph_tensor_numel(lt) != nb)
        return eval_kfail(a, PH_EINVAL, "sequence_lens must have one entry per batch entry");
    char *o;
    if ((rc = eval_out(a, 0, ph_tensor_dtype(x), r, ph_tensor_dims(x), (void **)&o)) != 0 || !o)
        return rc;
    int64_t xs[EVAL_MAX_RANK];
    eval_strides(r, ph_tensor_dims(x), xs);
    size_t blk = (size_t)xs[1] * es; /* the dims after the first two */
    for (int64_t b = 0; b < nb; b++) {
        int64_t len = eval_load_i64(ld, ph_tensor_dtype(lt), (size_t)b);
        if (len < 0 || len > nt)
            return eval_kfail(a, PH_EINVAL, "sequence length %lld is out of range", (long long)len);
        for (int64_t t = 0; t < nt; t++) {
            int64_t src = t < len ? len - 1 - t : t;
            size_t doff = (size_t)(b * xs[ba] + t * xs[ta]) * es, soff = (size_t)(b * xs[ba] + src * xs[ta]) * es;
            memcpy(o + doff, xd + soff, blk);
        }
    }
    return 0;
}

/* ------------------------------------------------------------ Trilu, EyeLike */

int eval_k_trilu(eval_kargs *a)
{
    const ph_tensor *x, *kt = eval_in(a, 1);
    const char *xd;
    int rc;
    if ((rc = need_data(a, 0, &x, &xd)) != 0)
        return rc;
    int64_t k = 0;
    if (kt) {
        const void *kd;
        if ((rc = eval_need(a, 1, &kt, &kd)) != 0)
            return rc;
        if (ph_tensor_numel(kt) != 1 || !eval_dt_int(ph_tensor_dtype(kt)))
            return eval_kfail(a, PH_EINVAL, "k must be one integer");
        k = eval_load_i64(kd, ph_tensor_dtype(kt), 0);
    }
    size_t r = ph_tensor_rank(x), es = ph_dtype_size(ph_tensor_dtype(x));
    if (r < 2)
        return eval_kfail(a, PH_EINVAL, "the input must have rank >= 2");
    int upper = ph_node_attr_int(a->node, "upper", 1) != 0;
    char *o;
    if ((rc = eval_out(a, 0, ph_tensor_dtype(x), r, ph_tensor_dims(x), (void **)&o)) != 0 || !o)
        return rc;
    int64_t n = ph_tensor_dim(x, r - 2), m = ph_tensor_dim(x, r - 1), mats = eval_numel(r - 2, ph_tensor_dims(x));
    for (int64_t b = 0; b < mats; b++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < m; j++) {
                size_t off = (size_t)((b * n + i) * m + j) * es;
                int keep = upper ? j - i >= k : j - i <= k;
                if (keep)
                    memcpy(o + off, xd + off, es);
                else
                    memset(o + off, 0, es);
            }
    return 0;
}

int eval_k_eye_like(eval_kargs *a)
{
    const ph_tensor *x;
    const char *xd;
    int rc;
    if ((rc = need_data(a, 0, &x, &xd)) != 0)
        return rc;
    if (ph_tensor_rank(x) != 2)
        return eval_kfail(a, PH_EINVAL, "the input must be 2-D");
    int dt = (int)ph_node_attr_int(a->node, "dtype", ph_tensor_dtype(x));
    if (!ph_dtype_size(dt) || dt == PH_DT_STRING)
        return eval_kbad_dtype(a, "output", dt);
    int64_t k = ph_node_attr_int(a->node, "k", 0), n = ph_tensor_dim(x, 0), m = ph_tensor_dim(x, 1);
    char *o;
    if ((rc = eval_out(a, 0, dt, 2, ph_tensor_dims(x), (void **)&o)) != 0 || !o)
        return rc;
    memset(o, 0, (size_t)(n * m) * ph_dtype_size(dt));
    for (int64_t i = 0; i < n; i++)
        if (i + k >= 0 && i + k < m)
            eval_store_f64(o, dt, (size_t)(i * m + i + k), 1.0);
    return 0;
}

/* ------------------------------------------------------------ CumSum */

int eval_k_cumsum(eval_kargs *a)
{
    const ph_tensor *x, *at;
    const char *xd;
    const void *ad;
    int rc;
    if ((rc = need_data(a, 0, &x, &xd)) != 0 || (rc = need_index(a, 1, &at, &ad)) != 0)
        return rc;
    int dt = ph_tensor_dtype(x);
    if (!eval_dt_numeric(dt))
        return eval_kbad_dtype(a, "input", dt);
    if (ph_tensor_numel(at) != 1)
        return eval_kfail(a, PH_EINVAL, "axis must be one integer");
    size_t r = ph_tensor_rank(x), ax;
    if (r == 0)
        return eval_kfail(a, PH_EINVAL, "the input must have rank >= 1");
    if ((rc = eval_axis(a, eval_load_i64(ad, ph_tensor_dtype(at), 0), r, &ax)) != 0)
        return rc;
    int excl = ph_node_attr_int(a->node, "exclusive", 0) != 0, rev = ph_node_attr_int(a->node, "reverse", 0) != 0;
    char *o;
    if ((rc = eval_out(a, 0, dt, r, ph_tensor_dims(x), (void **)&o)) != 0 || !o)
        return rc;
    int64_t len = ph_tensor_dim(x, ax), outer = eval_numel(ax, ph_tensor_dims(x)),
            inner = eval_numel(r - ax - 1, ph_tensor_dims(x) + ax + 1);
    for (int64_t i = 0; i < outer; i++)
        for (int64_t j = 0; j < inner; j++) {
            double sf = 0;
            int64_t si = 0;
            for (int64_t t = 0; t < len; t++) {
                int64_t p = rev ? len - 1 - t : t;
                size_t e = (size_t)((i * len + p) * inner + j);
                if (eval_dt_float(dt)) {
                    double v = eval_load_f64(xd, dt, e);
                    eval_store_f64(o, dt, e, excl ? sf : sf + v);
                    sf = dt == PH_DT_FLOAT ? (double)(float)(sf + v) : sf + v; /* float accumulates in float */
                } else {
                    int64_t v = eval_load_i64(xd, dt, e);
                    int64_t next = (int64_t)((uint64_t)si + (uint64_t)v);
                    eval_store_i64(o, dt, e, excl ? si : next);
                    si = next;
                }
            }
        }
    return 0;
}

/* ------------------------------------------------------------ Unique */

typedef struct uq_ctx {
    const char *d;
    int dt;
    size_t es;
    int64_t outer, len, inner; /* slices along the axis: outer x [len] x inner */
} uq_ctx;

/* Compare slices i and j (along the axis) element by element as numbers. */
static int uq_cmp(const uq_ctx *c, int64_t i, int64_t j)
{
    for (int64_t o = 0; o < c->outer; o++)
        for (int64_t k = 0; k < c->inner; k++) {
            size_t ei = (size_t)((o * c->len + i) * c->inner + k), ej = (size_t)((o * c->len + j) * c->inner + k);
            if (eval_dt_int(c->dt) || c->dt == PH_DT_BOOL) {
                int64_t x = eval_load_i64(c->d, c->dt, ei), y = eval_load_i64(c->d, c->dt, ej);
                if (c->dt == PH_DT_UINT64 ? (uint64_t)x != (uint64_t)y : x != y)
                    return c->dt == PH_DT_UINT64 ? ((uint64_t)x < (uint64_t)y ? -1 : 1) : (x < y ? -1 : 1);
            } else {
                double x = eval_load_f64(c->d, c->dt, ei), y = eval_load_f64(c->d, c->dt, ej);
                if (x != y && !(x != x && y != y))
                    return x < y || (y != y) ? -1 : 1; /* NaN sorts last */
            }
        }
    return 0;
}

/* Merge sort of slice indices (stable: equal slices keep input order). */
static void uq_sort(const uq_ctx *c, int64_t *v, int64_t *tmp, int64_t n)
{
    if (n < 2)
        return;
    int64_t h = n / 2;
    uq_sort(c, v, tmp, h);
    uq_sort(c, v + h, tmp, n - h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = uq_cmp(c, v[j], v[i]) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, (size_t)n * sizeof *v);
}

int eval_k_unique(eval_kargs *a)
{
    const ph_tensor *x;
    const char *xd;
    int rc;
    if ((rc = need_data(a, 0, &x, &xd)) != 0)
        return rc;
    uq_ctx c = {xd, ph_tensor_dtype(x), ph_dtype_size(ph_tensor_dtype(x)), 1, ph_tensor_numel(x), 1};
    size_t r = ph_tensor_rank(x), ax = 0;
    int has_axis = ph_node_attr_type(a->node, "axis") != PH_ATTR_NONE;
    if (!eval_dt_numeric(c.dt) && c.dt != PH_DT_BOOL && c.dt != PH_DT_FLOAT16 && c.dt != PH_DT_BFLOAT16)
        return eval_kbad_dtype(a, "input", c.dt);
    if (has_axis) {
        if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", 0), r, &ax)) != 0)
            return rc;
        c.len = ph_tensor_dim(x, ax);
        c.outer = eval_numel(ax, ph_tensor_dims(x));
        c.inner = eval_numel(r - ax - 1, ph_tensor_dims(x) + ax + 1);
    }
    int sorted = ph_node_attr_int(a->node, "sorted", 1) != 0;
    int64_t n = c.len;
    int64_t *order = malloc((size_t)(n ? n : 1) * sizeof *order), *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    int64_t *first = malloc((size_t)(n ? n : 1) * sizeof *first), *inv = malloc((size_t)(n ? n : 1) * sizeof *inv);
    int64_t *count = calloc((size_t)(n ? n : 1), sizeof *count);
    int64_t *uniq = malloc((size_t)(n ? n : 1) * sizeof *uniq); /* unique slot -> input slice */
    if (!order || !tmp || !first || !inv || !count || !uniq) {
        rc = eval_kfail(a, PH_ENOMEM, "out of memory");
        goto done;
    }
    for (int64_t i = 0; i < n; i++)
        order[i] = i;
    uq_sort(&c, order, tmp, n);
    /* groups of equal slices in sorted order; tmp[slice] = group */
    int64_t groups = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || uq_cmp(&c, order[i - 1], order[i]) != 0)
            first[groups++] = order[i]; /* stable: the first in input order */
        tmp[order[i]] = groups - 1;
    }
    /* output order of the groups: sorted, or by first occurrence */
    int64_t *rank_of = order; /* reuse: group -> output position */
    if (sorted) {
        for (int64_t g = 0; g < groups; g++)
            rank_of[g] = g;
    } else {
        int64_t pos = 0;
        for (int64_t g = 0; g < groups; g++)
            rank_of[g] = -1;
        for (int64_t i = 0; i < n; i++)
            if (rank_of[tmp[i]] < 0)
                rank_of[tmp[i]] = pos++;
    }
    for (int64_t g = 0; g < groups; g++)
        uniq[rank_of[g]] = first[g];
    for (int64_t i = 0; i < n; i++) {
        inv[i] = rank_of[tmp[i]];
        count[inv[i]]++;
    }
    int64_t od[EVAL_MAX_RANK];
    size_t orank = has_axis ? r : 1;
    if (has_axis) {
        memcpy(od, ph_tensor_dims(x), r * sizeof *od);
        od[ax] = groups;
    } else
        od[0] = groups;
    char *y;
    if ((rc = eval_out(a, 0, c.dt, orank, od, (void **)&y)) != 0)
        goto done;
    if (y) {
        size_t blk = (size_t)c.inner * c.es;
        for (int64_t o = 0; o < c.outer; o++)
            for (int64_t g = 0; g < groups; g++)
                memcpy(y + (size_t)(o * groups + g) * blk, xd + (size_t)(o * c.len + uniq[g]) * blk, blk);
    }
    int64_t *p;
    if ((rc = eval_out(a, 1, PH_DT_INT64, 1, &groups, (void **)&p)) != 0)
        goto done;
    if (p)
        memcpy(p, uniq, (size_t)groups * sizeof *p);
    if ((rc = eval_out(a, 2, PH_DT_INT64, 1, &n, (void **)&p)) != 0)
        goto done;
    if (p)
        memcpy(p, inv, (size_t)n * sizeof *p);
    if ((rc = eval_out(a, 3, PH_DT_INT64, 1, &groups, (void **)&p)) != 0)
        goto done;
    if (p)
        memcpy(p, count, (size_t)groups * sizeof *p);
done:
    free(order);
    free(tmp);
    free(first);
    free(inv);
    free(count);
    free(uniq);
    return rc;
}
