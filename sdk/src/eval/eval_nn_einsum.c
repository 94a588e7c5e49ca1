/* sdk/src/eval/eval_nn_einsum.c - Einsum, float32 and float64.
 *
 * Supports what model exporters emit: any number of operands, explicit
 * ("ij,jk->ik") or implicit ("ij,jk") output, '...' broadcasting, size-1
 * broadcasting, transposes, sums over indices absent from the output, and
 * contractions.  Operands are contracted left to right: each pair is reduced
 * to the batch / free / contracted index classes, permuted into contiguous
 * [batch, M, K] and [batch, K, N] blocks, and multiplied with the blocked
 * GEMM.  An index repeated within one operand ("ii->i", "...ii->...i", a
 * trace "ii") first takes that operand's diagonal.
 */
#include <stdlib.h>
#include <string.h>

#include "eval_nn.h"

#define MAXD 16          /* rank of any operand or intermediate */
#define NLAB (52 + MAXD) /* letters A-Z a-z, then ellipsis dims */

typedef struct eop {
    size_t n;
    int lab[MAXD];
    int64_t dim[MAXD];
    void *data; /* contiguous row major */
    int owned;
} eop;

typedef struct ectx {
    eval_kargs *a;
    int dt;
    size_t es;
    int64_t size[NLAB]; /* broadcast size of each label, -1 unused */
} ectx;

static void eop_free(eop *o)
{
    if (o->owned)
        free(o->data);
    o->data = NULL;
    o->owned = 0;
}

static int64_t eop_numel(const eop *o)
{
    return eval_nn_prod(o->dim, o->n);
}

static int find_lab(const eop *o, int lab)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->lab[i] == lab)
            return (int)i;
    return -1;
}

static void *alloc_elems(const ectx *c, int64_t n)
{
    int64_t bytes;
    if (n < 0 || ir_mul_ovf(n > 0 ? n : 1, (int64_t)c->es, &bytes))
        return NULL; /* a shape too large to count: reported as out of memory */
    return malloc((size_t)bytes);
}

/* An operand with an index repeated ("ii"): replace it by its diagonal,
 * each label once (in the order of first occurrence).  0 or PH_ENOMEM. */
static int take_diagonal(const ectx *c, eop *o)
{
    int lab[MAXD], pos[MAXD];
    int64_t dim[MAXD], st[MAXD], acc = 1;
    size_t n = 0;
    for (size_t k = o->n; k-- > 0;) {
        st[k] = acc;
        acc *= o->dim[k];
    }
    for (size_t k = 0; k < o->n; k++) {
        size_t q = 0;
        while (q < n && lab[q] != o->lab[k])
            q++;
        if (q == n) {
            lab[n] = o->lab[k];
            dim[n++] = o->dim[k];
        }
        pos[k] = (int)q;
    }
    if (n == o->n)
        return 0;
    int64_t ust[MAXD] = {0}, total = eval_nn_prod(dim, n), idx[MAXD] = {0};
    for (size_t k = 0; k < o->n; k++)
        ust[pos[k]] += st[k]; /* a repeated label steps along every dim it names */
    char *d = alloc_elems(c, total);
    if (!d)
        return PH_ENOMEM;
    for (int64_t e = 0; e < total; e++) {
        int64_t off = 0;
        for (size_t q = 0; q < n; q++)
            off += idx[q] * ust[q];
        memcpy(d + (size_t)e * c->es, (const char *)o->data + (size_t)off * c->es, c->es);
        for (size_t q = n; q-- > 0;) {
            if (++idx[q] < dim[q])
                break;
            idx[q] = 0;
        }
    }
    eop_free(o);
    memcpy(o->lab, lab, n * sizeof *lab);
    memcpy(o->dim, dim, n * sizeof *dim);
    o->n = n;
    o->data = d;
    o->owned = 1;
    return 0;
}

/* dst (labels lab[0..n), dims from c->size) = src broadcast/permuted. */
static int permute_copy(const ectx *c, const eop *src, const int *lab, size_t n, eop *dst)
{
    int64_t sst[MAXD], st[MAXD], acc = 1;
    for (size_t i = src->n; i-- > 0;) {
        sst[i] = acc;
        acc *= src->dim[i];
    }
    dst->n = n;
    dst->owned = 1;
    for (size_t i = 0; i < n; i++) {
        int k = find_lab(src, lab[i]);
        dst->lab[i] = lab[i];
        dst->dim[i] = c->size[lab[i]];
        st[i] = k < 0 || src->dim[k] == 1 ? 0 : sst[k];
    }
    int64_t total = eop_numel(dst);
    dst->data = alloc_elems(c, total);
    if (!dst->data)
        return PH_ENOMEM;
    int64_t idx[MAXD] = {0}, off = 0;
    for (int64_t q = 0; q < total; q++) {
        if (c->es == 4)
            ((float *)dst->data)[q] = ((const float *)src->data)[off];
        else
            ((double *)dst->data)[q] = ((const double *)src->data)[off];
        for (size_t j = n; j-- > 0;) {
            off += st[j];
            if (++idx[j] < dst->dim[j])
                break;
            off -= st[j] * idx[j];
            idx[j] = 0;
        }
    }
    return 0;
}

/* dst = src summed over the labels not in keep (order of the rest kept). */
static int reduce(const ectx *c, const eop *src, const unsigned char *keep, eop *dst)
{
    int64_t acc = 1;
    dst->n = 0;
    dst->owned = 1;
    for (size_t i = 0; i < src->n; i++)
        if (keep[src->lab[i]]) {
            dst->lab[dst->n] = src->lab[i];
            dst->dim[dst->n++] = src->dim[i];
        }
    int64_t st[MAXD];
    for (size_t i = src->n; i-- > 0;) {
        st[i] = keep[src->lab[i]] ? acc : 0;
        if (keep[src->lab[i]])
            acc *= src->dim[i];
    }
    int64_t total = eop_numel(dst), stotal = eop_numel(src);
    dst->data = alloc_elems(c, total);
    if (!dst->data)
        return PH_ENOMEM;
    memset(dst->data, 0, (size_t)(total > 0 ? total : 1) * c->es);
    int64_t idx[MAXD] = {0}, off = 0;
    for (int64_t q = 0; q < stotal; q++) {
        if (c->es == 4)
            ((float *)dst->data)[off] += ((const float *)src->data)[q];
        else
            ((double *)dst->data)[off] += ((const double *)src->data)[q];
        for (size_t j = src->n; j-- > 0;) {
            off += st[j];
            if (++idx[j] < src->dim[j])
                break;
            off -= st[j] * idx[j];
            idx[j] = 0;
        }
    }
    return 0;
}

/* r = contraction of x and y keeping the labels in keep. */
static int contract(const ectx *c, const eop *x, const eop *y, const unsigned char *keep, eop *r)
{
    unsigned char kx[NLAB], ky[NLAB];
    for (int l = 0; l < NLAB; l++) {
        kx[l] = keep[l] || find_lab(y, l) >= 0;
        ky[l] = keep[l] || find_lab(x, l) >= 0;
    }
    eop xr = *x, yr = *y, xp = {0}, yp = {0};
    xr.owned = yr.owned = 0;
    int rc = 0;
    int need_x = 0, need_y = 0;
    for (size_t i = 0; i < x->n; i++)
        need_x |= !kx[x->lab[i]];
    for (size_t i = 0; i < y->n; i++)
        need_y |= !ky[y->lab[i]];
    if (need_x && (rc = reduce(c, x, kx, &xr)))
        goto done;
    if (need_y && (rc = reduce(c, y, ky, &yr)))
        goto done;
    int bl[MAXD], cl[MAXD], xl[MAXD], yl[MAXD];
    size_t nb = 0, nc = 0, nx = 0, ny = 0;
    for (size_t i = 0; i < xr.n; i++) {
        int l = xr.lab[i];
        if (find_lab(&yr, l) < 0)
            xl[nx++] = l;
        else if (keep[l])
            bl[nb++] = l;
        else
            cl[nc++] = l;
    }
    for (size_t i = 0; i < yr.n; i++)
        if (find_lab(&xr, yr.lab[i]) < 0)
            yl[ny++] = yr.lab[i];
    if (nb + nx + ny > MAXD) {
        rc = ph_error_set(c->a->err, PH_EUNSUPPORTED, "Einsum: intermediate rank too large");
        goto done;
    }
    int lx[MAXD], ly[MAXD];
    size_t n = 0;
    int64_t B = 1, M = 1, N = 1, K = 1;
    for (size_t i = 0; i < nb; i++)
        lx[n++] = bl[i], B *= c->size[bl[i]];
    for (size_t i = 0; i < nx; i++)
        lx[n++] = xl[i], M *= c->size[xl[i]];
    for (size_t i = 0; i < nc; i++)
        lx[n++] = cl[i], K *= c->size[cl[i]];
    if ((rc = permute_copy(c, &xr, lx, n, &xp)))
        goto done;
    n = 0;
    for (size_t i = 0; i < nb; i++)
        ly[n++] = bl[i];
    for (size_t i = 0; i < nc; i++)
        ly[n++] = cl[i];
    for (size_t i = 0; i < ny; i++)
        ly[n++] = yl[i], N *= c->size[yl[i]];
    if ((rc = permute_copy(c, &yr, ly, n, &yp)))
        goto done;
    r->n = 0;
    r->owned = 1;
    for (size_t i = 0; i < nb; i++)
        r->lab[r->n++] = bl[i];
    for (size_t i = 0; i < nx; i++)
        r->lab[r->n++] = xl[i];
    for (size_t i = 0; i < ny; i++)
        r->lab[r->n++] = yl[i];
    for (size_t i = 0; i < r->n; i++)
        r->dim[i] = c->size[r->lab[i]];
    int64_t bm, bmn;
    r->data = ir_mul_ovf(B, M, &bm) || ir_mul_ovf(bm, N, &bmn) ? NULL : alloc_elems(c, bmn);
    if (!r->data) {
        rc = PH_ENOMEM;
        goto done;
    }
    for (int64_t b = 0; b < B && rc == 0; b++) {
        size_t xo = (size_t)(b * M * K), yo = (size_t)(b * K * N), ro = (size_t)(b * M * N);
        if (c->es == 4)
            rc = eval_sgemm((size_t)M, (size_t)N, (size_t)K, 1.0f, (float *)xp.data + xo, (ptrdiff_t)K, 1,
                           (float *)yp.data + yo, (ptrdiff_t)N, 1, 0.0f, (float *)r->data + ro,
                           (ptrdiff_t)N);
        else
            eval_dgemm((size_t)M, (size_t)N, (size_t)K, 1.0, (double *)xp.data + xo, (ptrdiff_t)K, 1,
                      (double *)yp.data + yo, (ptrdiff_t)N, 1, 0.0, (double *)r->data + ro,
                      (ptrdiff_t)N);
    }
    if (rc)
        eop_free(r);
done:
    eop_free(&xr);
    eop_free(&yr);
    eop_free(&xp);
    eop_free(&yp);
    return rc;
}

/* Parse one term into labels; *ell gets the position of '...' or -1. */
static int parse_term(const char *s, size_t len, int *lab, size_t *n, int *ell)
{
    *n = 0;
    *ell = -1;
    for (size_t i = 0; i < len;) {
        if (s[i] == '.') {
            if (*ell >= 0 || i + 3 > len || s[i + 1] != '.' || s[i + 2] != '.')
                return -1;
            *ell = (int)*n;
            i += 3;
            continue;
        }
        char ch = s[i++];
        if (*n >= MAXD)
            return -1;
        if (ch >= 'A' && ch <= 'Z')
            lab[(*n)++] = ch - 'A';
        else if (ch >= 'a' && ch <= 'z')
            lab[(*n)++] = 26 + (ch - 'a');
        else
            return -1;
    }
    return 0;
}

int eval_k_einsum(eval_kargs *a)
{
    const char *eq = ph_node_attr_string(a->node, "equation", NULL);
    if (!eq)
        return ph_error_set(a->err, PH_EINVAL, "Einsum: missing equation");
    char buf[256];
    size_t bl = 0;
    for (const char *p = eq; *p; p++)
        if (*p != ' ' && bl + 1 < sizeof buf)
            buf[bl++] = *p;
    buf[bl] = 0;
    char *arrow = strstr(buf, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - buf) : bl;
    if (a->n_in < 1 || a->n_in > 32)
        return ph_error_set(a->err, PH_EINVAL, "Einsum: %zu inputs", a->n_in);
    if (!a->in[0])
        return ph_error_set(a->err, PH_EINVAL, "Einsum: input 0 missing");
    ectx c = {a, ph_tensor_dtype(a->in[0]), 0, {0}};
    if (c.dt != PH_DT_FLOAT && c.dt != PH_DT_DOUBLE)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "Einsum: dtype %s not supported",
                            ph_dtype_name(c.dt));
    c.es = ph_dtype_size(c.dt);
    for (int l = 0; l < NLAB; l++)
        c.size[l] = -1;
    eop ops[32];
    memset(ops, 0, sizeof ops);
    int count[NLAB] = {0};
    size_t start = 0, E = 0;
    int ells[32];
    for (size_t i = 0; i < a->n_in; i++) {
        const ph_tensor *t = a->in[i];
        size_t end = start;
        while (end < lhs_len && buf[end] != ',')
            end++;
        if (!t || ph_tensor_dtype(t) != c.dt)
            return ph_error_set(a->err, PH_EINVAL, "Einsum: input %zu missing or of another dtype", i);
        if ((i + 1 < a->n_in) != (end < lhs_len) ||
            parse_term(buf + start, end - start, ops[i].lab, &ops[i].n, &ells[i]))
            return ph_error_set(a->err, PH_EINVAL, "Einsum: bad equation '%s'", eq);
        size_t r = ph_tensor_rank(t);
        if (r < ops[i].n || (ells[i] < 0 && r != ops[i].n) || r > MAXD)
            return ph_error_set(a->err, PH_EINVAL, "Einsum: operand %zu rank %zu does not match '%s'",
                                i, r, eq);
        if (r - ops[i].n > E)
            E = r - ops[i].n;
        start = end + 1;
    }
    /* expand ellipses (right aligned) and record sizes */
    for (size_t i = 0; i < a->n_in; i++) {
        const ph_tensor *t = a->in[i];
        size_t r = ph_tensor_rank(t), e = r - ops[i].n;
        int lab[MAXD];
        size_t n = 0;
        for (size_t k = 0; k < ops[i].n + 1; k++) {
            if ((int)k == ells[i])
                for (size_t q = 0; q < e; q++)
                    lab[n++] = 52 + (int)(E - e + q);
            if (k < ops[i].n)
                lab[n++] = ops[i].lab[k];
        }
        memcpy(ops[i].lab, lab, n * sizeof *lab);
        ops[i].n = n;
        ops[i].data = (void *)ph_tensor_data(t);
        for (size_t k = 0; k < n; k++) {
            int l = lab[k], seen = 0;
            int64_t d = ph_tensor_dim(t, k);
            ops[i].dim[k] = d;
            for (size_t q = 0; q < k; q++)
                if (lab[q] == l) {
                    if (ph_tensor_dim(t, q) != d)
                        return ph_error_set(a->err, PH_EINVAL, "Einsum: a repeated index has sizes %lld and %lld",
                                            (long long)ph_tensor_dim(t, q), (long long)d);
                    seen = 1;
                }
            count[l]++; /* implicit output: a label repeated in one operand is summed too */
            if (seen)
                continue;
            if (c.size[l] < 0 || c.size[l] == 1)
                c.size[l] = d;
            else if (d != 1 && d != c.size[l])
                return ph_error_set(a->err, PH_EINVAL, "Einsum: index sizes %lld and %lld disagree",
                                    (long long)d, (long long)c.size[l]);
        }
    }
    for (size_t i = 0; i < a->n_in; i++)
        if (take_diagonal(&c, &ops[i])) {
            for (size_t j = 0; j < i; j++)
                eop_free(&ops[j]);
            return ph_error_set(a->err, PH_ENOMEM, "Einsum: out of memory");
        }
    /* output labels */
    int olab[MAXD];
    size_t on = 0;
    if (arrow) {
        int oell;
        if (parse_term(arrow + 2, strlen(arrow + 2), olab, &on, &oell))
            return ph_error_set(a->err, PH_EINVAL, "Einsum: bad output in '%s'", eq);
        if (oell >= 0) {
            if (on + E > MAXD)
                return ph_error_set(a->err, PH_EUNSUPPORTED, "Einsum: output rank too large");
            memmove(olab + oell + E, olab + oell, (on - (size_t)oell) * sizeof *olab);
            for (size_t q = 0; q < E; q++)
                olab[oell + (int)q] = 52 + (int)q;
            on += E;
        } else if (E > 0) {
            return ph_error_set(a->err, PH_EUNSUPPORTED, "Einsum: '...' dims summed away in '%s'", eq);
        }
        for (size_t k = 0; k < on; k++) {
            if (c.size[olab[k]] < 0)
                return ph_error_set(a->err, PH_EINVAL, "Einsum: output index not in any input");
            for (size_t q = 0; q < k; q++)
                if (olab[q] == olab[k])
                    return ph_error_set(a->err, PH_EINVAL, "Einsum: repeated output index");
        }
    } else {
        for (size_t q = 0; q < E; q++)
            olab[on++] = 52 + (int)q;
        for (int l = 0; l < 52; l++)
            if (count[l] == 1 && on < MAXD)
                olab[on++] = l;
    }
    unsigned char keep[NLAB];
    memset(keep, 0, sizeof keep);
    for (size_t k = 0; k < on; k++)
        keep[olab[k]] = 1;
    eop cur = ops[0], nxt;
    int rc = 0;
    for (size_t i = 1; i < a->n_in && rc == 0; i++) {
        unsigned char kp[NLAB];
        memcpy(kp, keep, sizeof kp);
        for (size_t j = i + 1; j < a->n_in; j++)
            for (size_t k = 0; k < ops[j].n; k++)
                kp[ops[j].lab[k]] = 1;
        rc = contract(&c, &cur, &ops[i], kp, &nxt);
        eop_free(&cur);
        if (rc == 0)
            cur = nxt;
    }
    int extra = 0;
    for (size_t k = 0; rc == 0 && k < cur.n; k++)
        extra |= !keep[cur.lab[k]];
    if (rc == 0 && extra) {
        rc = reduce(&c, &cur, keep, &nxt);
        eop_free(&cur);
        if (rc == 0)
            cur = nxt;
    }
    eop fin = {0};
    if (rc == 0)
        rc = permute_copy(&c, &cur, olab, on, &fin);
    eop_free(&cur);
    if (rc)
        return ph_error_set(a->err, rc, "Einsum: %s", rc == PH_ENOMEM ? "out of memory" : "failed");
    ph_tensor *y = ir_tensor_alloc(c.dt, on, fin.dim);
    if (!y) {
        eop_free(&fin);
        return ph_error_set(a->err, PH_ENOMEM, "Einsum: out of memory");
    }
    memcpy(ir_tensor_mut(y), fin.data, (size_t)ph_tensor_numel(y) * c.es);
    eop_free(&fin);
    a->out[0] = y;
    return 0;
}
