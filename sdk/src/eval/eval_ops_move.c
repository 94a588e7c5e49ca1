/* sdk/src/eval/eval_ops_move.c - data movement kernels: Transpose Expand Tile
 * DepthToSpace SpaceToDepth Slice (strided copies), Concat Split Gather
 * GatherElements (block copies) and Pad.
 *
 * All are registered native_half: they move elements by size and never
 * look at their values. */
#include <string.h>

#include "eval_ops_util.h"
#include "passhost/shape.h"

static int need_x(eval_kargs *a, const ph_tensor **x, const char **xd)
{
    int rc = eval_need(a, 0, x, (const void **)xd);
    if (rc)
        return rc;
    if (ph_tensor_rank(*x) > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EUNSUPPORTED, "rank %zu is above the supported %d", ph_tensor_rank(*x),
                         EVAL_MAX_RANK);
    if (!ph_dtype_size(ph_tensor_dtype(*x)))
        return eval_kbad_dtype(a, "input", ph_tensor_dtype(*x));
    return 0;
}

/* View x as dims vd (row major), permute by perm, write output 0 of shape od. */
static int permute(eval_kargs *a, const ph_tensor *x, const char *xd, size_t r, const int64_t *vd,
                   const int *perm, size_t orank, const int64_t *od)
{
    int64_t vs[EVAL_MAX_RANK], pd[EVAL_MAX_RANK], ps[EVAL_MAX_RANK];
    eval_strides(r, vd, vs);
    for (size_t i = 0; i < r; i++) {
        pd[i] = vd[perm[i]];
        ps[i] = vs[perm[i]];
    }
    void *o;
    int rc = eval_out(a, 0, ph_tensor_dtype(x), orank, od, &o);
    if (!rc && o && ph_tensor_numel(x) > 0)
        eval_copy_strided(o, xd, ph_dtype_size(ph_tensor_dtype(x)), r, pd, ps);
    return rc;
}

int eval_k_transpose(eval_kargs *a)
{
    const ph_tensor *x;
    const char *xd;
    int rc = need_x(a, &x, &xd);
    if (rc)
        return rc;
    size_t r = ph_tensor_rank(x);
    const int64_t *pv;
    ptrdiff_t np = ph_node_attr_ints(a->node, "perm", &pv);
    int perm[EVAL_MAX_RANK], seen[EVAL_MAX_RANK] = {0};
    int64_t od[EVAL_MAX_RANK];
    if (np >= 0 && (size_t)np != r)
        return eval_kfail(a, PH_EINVAL, "perm has %td entries for rank %zu", np, r);
    for (size_t i = 0; i < r; i++) {
        int64_t p = np >= 0 ? pv[i] : (int64_t)(r - 1 - i);
        if (p < 0 || p >= (int64_t)r || seen[p]++)
            return eval_kfail(a, PH_EINVAL, "perm is not a permutation of 0..%zu", r - 1);
        perm[i] = (int)p;
        od[i] = ph_tensor_dim(x, (size_t)p);
    }
    return permute(a, x, xd, r, ph_tensor_dims(x), perm, r, od);
}

/* DepthToSpace / SpaceToDepth: a 6-D view and a permutation. */
int eval_k_depth_space(eval_kargs *a)
{
    const ph_tensor *x;
    const char *xd;
    int rc = need_x(a, &x, &xd);
    if (rc)
        return rc;
    int64_t b = ph_node_attr_int(a->node, "blocksize", 0);
    if (ph_tensor_rank(x) != 4 || b <= 0)
        return eval_kfail(a, PH_EINVAL, "needs a 4-D input and a positive blocksize");
    const int64_t *d = ph_tensor_dims(x);
    int64_t n = d[0], c = d[1], h = d[2], w = d[3], bb, t;
    if (ir_mul_ovf(b, b, &bb) || ir_mul_ovf(c, bb, &t) || ir_mul_ovf(h, b, &t) || ir_mul_ovf(w, b, &t))
        return eval_kfail(a, PH_EUNSUPPORTED, "blocksize %lld makes a dim too large", (long long)b);
    if (ph_node_op(a->node) == PH_OP_SpaceToDepth) {
        if (h % b || w % b)
            return eval_kfail(a, PH_EINVAL, "H and W must be multiples of blocksize %lld", (long long)b);
        int64_t vd[6] = {n, c, h / b, b, w / b, b}, od[4] = {n, c * b * b, h / b, w / b};
        static const int perm[6] = {0, 3, 5, 1, 2, 4};
        return permute(a, x, xd, 6, vd, perm, 4, od);
    }
    if (c % (b * b))
        return eval_kfail(a, PH_EINVAL, "C must be a multiple of blocksize^2");
    const char *mode = ph_node_attr_string(a->node, "mode", "DCR");
    int64_t od[4] = {n, c / (b * b), h * b, w * b};
    if (!strcmp(mode, "DCR")) {
        int64_t vd[6] = {n, b, b, c / (b * b), h, w};
        static const int perm[6] = {0, 3, 4, 1, 5, 2};
        return permute(a, x, xd, 6, vd, perm, 4, od);
    }
    if (!strcmp(mode, "CRD")) {
        int64_t vd[6] = {n, c / (b * b), b, b, h, w};
        static const int perm[6] = {0, 1, 4, 2, 5, 3};
        return permute(a, x, xd, 6, vd, perm, 4, od);
    }
    return eval_kfail(a, PH_EUNSUPPORTED, "mode '%s' is not supported", mode);
}

int eval_k_expand(eval_kargs *a)
{
    const ph_tensor *x, *s;
    const char *xd;
    int64_t sh[EVAL_MAX_RANK], od[EVAL_MAX_RANK], st[EVAL_MAX_RANK], xs[EVAL_MAX_RANK];
    size_t ns;
    int rc = need_x(a, &x, &xd);
    if (rc || (rc = eval_need(a, 1, &s, NULL)) != 0 ||
        (rc = eval_small_ints(a, s, "shape", sh, EVAL_MAX_RANK, &ns)) != 0)
        return rc;
    size_t xr = ph_tensor_rank(x), r = xr > ns ? xr : ns;
    eval_strides(xr, ph_tensor_dims(x), xs);
    for (size_t i = 0; i < r; i++) {
        int64_t dx = i + xr >= r ? ph_tensor_dim(x, i + xr - r) : 1;
        int64_t ds = i + ns >= r ? sh[i + ns - r] : 1;
        if (dx != ds && dx != 1 && ds != 1)
            return eval_kfail(a, PH_EINVAL, "cannot expand dim %lld to %lld", (long long)dx, (long long)ds);
        od[i] = dx == 1 ? ds : dx;
        st[i] = dx == 1 ? 0 : xs[i + xr - r];
    }
    void *o;
    if ((rc = eval_out(a, 0, ph_tensor_dtype(x), r, od, &o)) != 0 || !o)
        return rc;
    if (eval_numel(r, od) > 0)
        eval_copy_strided(o, xd, ph_dtype_size(ph_tensor_dtype(x)), r, od, st);
    return 0;
}

int eval_k_tile(eval_kargs *a)
{
    const ph_tensor *x, *rt;
    const char *xd;
    int64_t rep[EVAL_MAX_RANK], xs[EVAL_MAX_RANK], od[EVAL_MAX_RANK], vd[2 * EVAL_MAX_RANK], vs[2 * EVAL_MAX_RANK];
    size_t nr;
    int rc = need_x(a, &x, &xd);
    if (rc || (rc = eval_need(a, 1, &rt, NULL)) != 0 ||
        (rc = eval_small_ints(a, rt, "repeats", rep, EVAL_MAX_RANK, &nr)) != 0)
        return rc;
    size_t r = ph_tensor_rank(x);
    if (nr != r)
        return eval_kfail(a, PH_EINVAL, "repeats has %zu entries for rank %zu", nr, r);
    eval_strides(r, ph_tensor_dims(x), xs);
    for (size_t i = 0; i < r; i++) {
        if (rep[i] < 0)
            return eval_kfail(a, PH_EINVAL, "repeats[%zu] is negative", i);
        if (ir_mul_ovf(ph_tensor_dim(x, i), rep[i], &od[i]))
            return eval_kfail(a, PH_EUNSUPPORTED, "repeats[%zu] makes the output too large", i);
        vd[2 * i] = rep[i];
        vs[2 * i] = 0;
        vd[2 * i + 1] = ph_tensor_dim(x, i);
        vs[2 * i + 1] = xs[i];
    }
    void *o;
    if ((rc = eval_out(a, 0, ph_tensor_dtype(x), r, od, &o)) != 0 || !o)
        return rc;
    if (eval_numel(r, od) > 0)
        eval_copy_strided(o, xd, ph_dtype_size(ph_tensor_dtype(x)), 2 * r, vd, vs);
    return 0;
}

/* Slice: starts/ends/axes/steps inputs (attributes before opset 10). */
int eval_k_slice(eval_kargs *a)
{
    const ph_tensor *x;
    const char *xd;
    int64_t v[4][EVAL_MAX_RANK], xs[EVAL_MAX_RANK], od[EVAL_MAX_RANK], st[EVAL_MAX_RANK];
    size_t nv[4] = {0, 0, 0, 0};
    int have[4] = {0, 0, 0, 0};
    static const char *const names[4] = {"starts", "ends", "axes", "steps"};
    int rc = need_x(a, &x, &xd);
    if (rc)
        return rc;
    for (size_t k = 0; k < 4; k++) {
        if (a->opset < 10) {
            const int64_t *p;
            ptrdiff_t c = k < 3 ? ph_node_attr_ints(a->node, names[k], &p) : -1;
            if (c > EVAL_MAX_RANK)
                return eval_kfail(a, PH_EUNSUPPORTED, "too many %s", names[k]);
            if (c > 0)
                memcpy(v[k], p, (size_t)c * sizeof *p);
            have[k] = c >= 0;
            nv[k] = c > 0 ? (size_t)c : 0;
        } else if (eval_in(a, k + 1)) {
            have[k] = 1;
            if ((rc = eval_small_ints(a, eval_in(a, k + 1), names[k], v[k], EVAL_MAX_RANK, &nv[k])) != 0)
                return rc;
        }
    }
    size_t r = ph_tensor_rank(x), n = nv[0];
    if (!have[0] || !have[1] || nv[1] != n || (have[2] && nv[2] != n) || (have[3] && nv[3] != n))
        return eval_kfail(a, PH_EINVAL, "starts, ends, axes and steps must have equal lengths");
    eval_strides(r, ph_tensor_dims(x), xs);
    int64_t off = 0;
    int seen[EVAL_MAX_RANK] = {0};
    for (size_t i = 0; i < r; i++) {
        od[i] = ph_tensor_dim(x, i);
        st[i] = xs[i];
    }
    for (size_t k = 0; k < n; k++) {
        size_t ax = k;
        if (have[2] && (rc = eval_axis(a, v[2][k], r, &ax)) != 0)
            return rc;
        if (ax >= r || seen[ax]++)
            return eval_kfail(a, PH_EINVAL, "axis %zu is out of range or repeated", ax);
        int64_t d = od[ax], step = have[3] ? v[3][k] : 1, s;
        if (step == 0)
            return eval_kfail(a, PH_EINVAL, "step is 0");
        int64_t cnt = ph_slice_length(d, v[0][k], v[1][k], step, &s); /* the shared Slice rules */
        od[ax] = cnt;
        if (cnt > 0)
            off += s * xs[ax];
        st[ax] = cnt > 1 ? xs[ax] * step : 0; /* with 2+ elements |step| < d: no overflow */
    }
    void *o;
    if ((rc = eval_out(a, 0, ph_tensor_dtype(x), r, od, &o)) != 0 || !o)
        return rc;
    size_t es = ph_dtype_size(ph_tensor_dtype(x));
    if (eval_numel(r, od) > 0)
        eval_copy_strided(o, xd + off * (int64_t)es, es, r, od, st);
    return 0;
}

int eval_k_concat(eval_kargs *a)
{
    const ph_tensor *x0;
    const char *xd;
    int rc = need_x(a, &x0, &xd);
    if (rc)
        return rc;
    size_t r = ph_tensor_rank(x0), ax, es = ph_dtype_size(ph_tensor_dtype(x0));
    if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", 0), r, &ax)) != 0)
        return rc;
    int64_t od[EVAL_MAX_RANK];
    memcpy(od, ph_tensor_dims(x0), r * sizeof *od);
    od[ax] = 0;
    for (size_t k = 0; k < a->n_in; k++) {
        const ph_tensor *t;
        if ((rc = eval_need(a, k, &t, NULL)) != 0)
            return rc;
        if (ph_tensor_dtype(t) != ph_tensor_dtype(x0) || ph_tensor_rank(t) != r)
            return eval_kfail(a, PH_EINVAL, "input %zu differs from input 0 in dtype or rank", k);
        for (size_t i = 0; i < r; i++)
            if (i != ax && ph_tensor_dim(t, i) != od[i])
                return eval_kfail(a, PH_EINVAL, "input %zu has dim %zu = %lld, expected %lld", k, i,
                                 (long long)ph_tensor_dim(t, i), (long long)od[i]);
        od[ax] += ph_tensor_dim(t, ax);
    }
    char *o;
    if ((rc = eval_out(a, 0, ph_tensor_dtype(x0), r, od, (void **)&o)) != 0 || !o)
        return rc;
    int64_t outer = eval_numel(ax, od), inner = eval_numel(r - ax - 1, od + ax + 1);
    for (int64_t i = 0; i < outer; i++)
        for (size_t k = 0; k < a->n_in; k++) {
            size_t blk = (size_t)(ph_tensor_dim(a->in[k], ax) * inner) * es;
            if (blk)
                memcpy(o, (const char *)ph_tensor_data(a->in[k]) + (size_t)i * blk, blk);
            o += blk;
        }
    return 0;
}

int eval_k_split(eval_kargs *a)
{
    const ph_tensor *x;
    const char *xd;
    int rc = need_x(a, &x, &xd);
    if (rc)
        return rc;
    size_t r = ph_tensor_rank(x), ax, no = a->n_out, es = ph_dtype_size(ph_tensor_dtype(x));
    if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", 0), r, &ax)) != 0)
        return rc;
    int64_t d = ph_tensor_dim(x, ax), sz[64], total = 0;
    size_t ns = 0;
    if (no == 0 || no > 64)
        return eval_kfail(a, PH_EUNSUPPORTED, "%zu outputs (1 to 64 supported)", no);
    if (a->opset < 13) {
        const int64_t *p;
        ptrdiff_t c = ph_node_attr_ints(a->node, "split", &p);
        if (c > 64)
            return eval_kfail(a, PH_EUNSUPPORTED, "too many splits");
        if (c > 0)
            memcpy(sz, p, (size_t)c * sizeof *p);
        ns = c > 0 ? (size_t)c : 0;
    } else if (eval_in(a, 1) && (rc = eval_small_ints(a, eval_in(a, 1), "split", sz, 64, &ns)) != 0) {
        return rc;
    }
    if (ns == 0) { /* equal parts; the last smaller (num_outputs, opset 18) */
        int64_t part = (d + (int64_t)no - 1) / (int64_t)no;
        if (ph_node_attr_type(a->node, "num_outputs") != PH_ATTR_INT && d % (int64_t)no)
            return eval_kfail(a, PH_EINVAL, "dim %lld does not split evenly into %zu", (long long)d, no);
        for (size_t i = 0; i < no; i++) {
            sz[i] = d - total < part ? d - total : part;
            total += sz[i];
        }
        ns = no;
    }
    total = 0;
    for (size_t i = 0; i < ns; i++)
        total += sz[i] >= 0 ? sz[i] : -1;
    if (ns != no || total != d)
        return eval_kfail(a, PH_EINVAL, "split sizes do not match %zu outputs of dim %lld", no, (long long)d);
    int64_t od[EVAL_MAX_RANK];
    memcpy(od, ph_tensor_dims(x), r * sizeof *od);
    int64_t outer = eval_numel(ax, od), inner = eval_numel(r - ax - 1, od + ax + 1), start = 0;
    for (size_t k = 0; k < no; k++) {
        od[ax] = sz[k];
        char *o;
        if ((rc = eval_out(a, k, ph_tensor_dtype(x), r, od, (void **)&o)) != 0)
            return rc;
        size_t blk = (size_t)(sz[k] * inner) * es, row = (size_t)(d * inner) * es;
        for (int64_t i = 0; o && blk && i < outer; i++)
            memcpy(o + (size_t)i * blk, xd + (size_t)i * row + (size_t)(start * inner) * es, blk);
        start += sz[k];
    }
    return 0;
}

/* Indices as int64 (int32 or int64 input), checked against [-d, d). */
int eval_k_gather(eval_kargs *a)
{
    const ph_tensor *x, *it;
    const char *xd;
    const void *id;
    int rc = need_x(a, &x, &xd);
    if (rc || (rc = eval_need(a, 1, &it, &id)) != 0)
        return rc;
    int idt = ph_tensor_dtype(it);
    if (idt != PH_DT_INT32 && idt != PH_DT_INT64)
        return eval_kbad_dtype(a, "indices", idt);
    size_t r = ph_tensor_rank(x), ir = ph_tensor_rank(it), ax, es = ph_dtype_size(ph_tensor_dtype(x));
    if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", 0), r, &ax)) != 0)
        return rc;
    if (r + ir - 1 > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EUNSUPPORTED, "output rank above %d", EVAL_MAX_RANK);
    int64_t od[EVAL_MAX_RANK];
    memcpy(od, ph_tensor_dims(x), ax * sizeof *od);
    if (ir)
        memcpy(od + ax, ph_tensor_dims(it), ir * sizeof *od);
    memcpy(od + ax + ir, ph_tensor_dims(x) + ax + 1, (r - ax - 1) * sizeof *od);
    char *o;
    if ((rc = eval_out(a, 0, ph_tensor_dtype(x), r + ir - 1, od, (void **)&o)) != 0 || !o)
        return rc;
    int64_t d = ph_tensor_dim(x, ax), outer = eval_numel(ax, ph_tensor_dims(x)), ni = ph_tensor_numel(it);
    size_t blk = (size_t)eval_numel(r - ax - 1, ph_tensor_dims(x) + ax + 1) * es;
    for (int64_t i = 0; i < outer; i++)
        for (int64_t j = 0; j < ni; j++) {
            int64_t k = 0;
            if ((rc = eval_index_at(a, id, idt, (size_t)j, d, &k)) != 0)
                return rc;
            memcpy(o, xd + ((size_t)(i * d + k)) * blk, blk);
            o += blk;
        }
    return 0;
}

int eval_k_gather_elements(eval_kargs *a)
{
    const ph_tensor *x, *it;
    const char *xd;
    const void *id;
    int rc = need_x(a, &x, &xd);
    if (rc || (rc = eval_need(a, 1, &it, &id)) != 0)
        return rc;
    int idt = ph_tensor_dtype(it);
    if (idt != PH_DT_INT32 && idt != PH_DT_INT64)
        return eval_kbad_dtype(a, "indices", idt);
    size_t r = ph_tensor_rank(x), ax, es = ph_dtype_size(ph_tensor_dtype(x));
    if (ph_tensor_rank(it) != r)
        return eval_kfail(a, PH_EINVAL, "indices must have the rank of data");
    if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", 0), r, &ax)) != 0)
        return rc;
    char *o;
    if ((rc = eval_out(a, 0, ph_tensor_dtype(x), r, ph_tensor_dims(it), (void **)&o)) != 0 || !o)
        return rc;
    int64_t xs[EVAL_MAX_RANK], idx[EVAL_MAX_RANK] = {0}, n = ph_tensor_numel(it), base = 0;
    eval_strides(r, ph_tensor_dims(x), xs);
    for (size_t i = 0; i < r; i++)
        if (ph_tensor_dim(it, i) > ph_tensor_dim(x, i) && i != ax)
            return eval_kfail(a, PH_EINVAL, "indices dim %zu exceeds data", i);
    for (int64_t e = 0; e < n; e++) {
        int64_t k = 0;
        if ((rc = eval_index_at(a, id, idt, (size_t)e, ph_tensor_dim(x, ax), &k)) != 0)
            return rc;
        memcpy(o + (size_t)e * es, xd + (size_t)(base + k * xs[ax]) * es, es);
        for (size_t i = r; i-- > 0;) { /* next index; base excludes the axis */
            if (i != ax)
                base += xs[i];
            if (++idx[i] < ph_tensor_dim(it, i))
                break;
            if (i != ax)
                base -= xs[i] * idx[i];
            idx[i] = 0;
        }
    }
    return 0;
}
