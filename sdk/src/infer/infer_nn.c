/* sdk/src/infer/infer_nn.c - shape inference of neural-network operators.
 *
 * MatMul (numpy batch broadcasting, 1-D promotion), Gemm, Einsum, Conv and
 * ConvTranspose (pads, strides, dilations, group, auto_pad, output_shape),
 * pools (MaxPool, AveragePool, LpPool with ceil_mode; global pools),
 * normalizations, Resize/Upsample (sizes or scales, axes from opset 18),
 * quantization ops, RNN/GRU/LSTM, NonMaxSuppression, RoiAlign, GridSample.
 * Contradicting static dims (a MatMul's inner dims, a Conv's channels) are
 * errors naming the node.
 */
#include <math.h>
#include <string.h>

#include "infer.h"


/* ------------------------------------------------------------- MatMul */

static int matmul_shape(infer_ictx *c, const infer_shape *a0, const infer_shape *b0, infer_shape *o)
{
    o->rank = -1;
    if (a0->rank < 0 || b0->rank < 0)
        return 0;
    if (a0->rank == 0 || b0->rank == 0)
        return infer_fail(c, "MatMul inputs must have rank >= 1");
    infer_shape a = *a0, b = *b0;
    int a1 = a.rank == 1, b1 = b.rank == 1;
    if (a1) {
        a.rank = 2;
        a.d[1] = a.d[0];
        a.d[0] = 1;
    }
    if (b1) {
        b.rank = 2;
        b.d[1] = 1;
    }
    int clash = 0;
    infer_dim ka = a.d[a.rank - 1], kb = b.d[b.rank - 2];
    infer_dim_merge(ka, kb, &clash);
    if (clash)
        return infer_fail(c, "inner dims differ: %lld vs %lld", (long long)ka, (long long)kb);
    infer_shape ba = a, bb = b, bo;
    ba.rank -= 2;
    bb.rank -= 2;
    int rc = infer_broadcast(c, &ba, &bb, &bo);
    if (rc)
        return rc;
    int r = bo.rank;
    if (!a1)
        bo.d[r++] = a.d[a.rank - 2];
    if (!b1)
        bo.d[r++] = b.d[b.rank - 1];
    bo.rank = r;
    o->rank = r;
    memcpy(o->d, bo.d, (size_t)r * sizeof *o->d);
    return 0;
}

static int infer_matmul(infer_ictx *c)
{
    c->out[0].dtype = infer_in(c, 0)->dtype;
    return matmul_shape(c, infer_in(c, 0), infer_in(c, 1), &c->out[0]);
}

static int infer_matmul_integer(infer_ictx *c)
{
    int rc = infer_matmul(c);
    c->out[0].dtype = PH_DT_INT32;
    return rc;
}

static int infer_qlinear_matmul(infer_ictx *c)
{
    c->out[0].dtype = infer_in(c, 7)->dtype ? infer_in(c, 7)->dtype : PH_DT_UINT8;
    return matmul_shape(c, infer_in(c, 0), infer_in(c, 3), &c->out[0]);
}

static int infer_gemm(infer_ictx *c)
{
    const infer_shape *a = infer_in(c, 0), *b = infer_in(c, 1);
    c->out[0].dtype = a->dtype;
    if (a->rank < 0 || b->rank < 0)
        return 0;
    if (a->rank != 2 || b->rank != 2)
        return infer_fail(c, "inputs must have rank 2 (have %d and %d)", a->rank, b->rank);
    int ta = ph_node_attr_int(c->n, "transA", 0) != 0, tb = ph_node_attr_int(c->n, "transB", 0) != 0;
    infer_dim m = a->d[ta ? 1 : 0], ka = a->d[ta ? 0 : 1], kb = b->d[tb ? 1 : 0], n = b->d[tb ? 0 : 1];
    int clash = 0;
    infer_dim_merge(ka, kb, &clash);
    if (clash)
        return infer_fail(c, "inner dims differ: %lld vs %lld", (long long)ka, (long long)kb);
    infer_dim d[2] = {m, n};
    infer_shape_set(&c->out[0], a->dtype, 2, d);
    if (infer_has_in(c, 2)) {
        infer_shape tmp;
        int rc = infer_broadcast(c, &c->out[0], infer_in(c, 2), &tmp);
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------ conv and pools */

/* Largest kernel dim, stride, dilation, pad and spatial dim the window
 * formulas take (larger spatial dims give an unknown output dim): with
 * every operand within 2^30 no product or sum below overflows. */
#define WIN_MAX ((int64_t)1 << 30)

typedef struct winattrs {
    int nsp;
    int64_t k[INFER_MAXRANK], s[INFER_MAXRANK], dl[INFER_MAXRANK], pads[2 * INFER_MAXRANK];
    const char *auto_pad;
    int ceil_mode;
} winattrs;

static int read_win(infer_ictx *c, int nsp, const infer_shape *w, winattrs *wa)
{
    const int64_t *v;
    ptrdiff_t n;
    wa->nsp = nsp;
    n = ph_node_attr_ints(c->n, "kernel_shape", &v);
    for (int i = 0; i < nsp; i++)
        wa->k[i] = n == nsp ? v[i] : (w && w->rank == nsp + 2 ? w->d[i + 2] : -1);
    if (n >= 0 && n != nsp)
        return infer_fail(c, "kernel_shape has %td entries for %d spatial dims", n, nsp);
    n = ph_node_attr_ints(c->n, "strides", &v);
    for (int i = 0; i < nsp; i++)
        wa->s[i] = n == nsp ? v[i] : 1;
    n = ph_node_attr_ints(c->n, "dilations", &v);
    for (int i = 0; i < nsp; i++)
        wa->dl[i] = n == nsp ? v[i] : 1;
    n = ph_node_attr_ints(c->n, "pads", &v);
    if (n >= 0 && n != 2 * nsp)
        return infer_fail(c, "pads has %td entries for %d spatial dims", n, nsp);
    for (int i = 0; i < 2 * nsp; i++)
        wa->pads[i] = n == 2 * nsp ? v[i] : 0;
    wa->auto_pad = ph_node_attr_string(c->n, "auto_pad", "NOTSET");
    wa->ceil_mode = (int)ph_node_attr_int(c->n, "ceil_mode", 0);
    for (int i = 0; i < nsp; i++)
        if (wa->s[i] <= 0 || wa->dl[i] <= 0)
            return infer_fail(c, "strides and dilations must be positive");
    for (int i = 0; i < nsp; i++) /* bounded, so the output-size formulas cannot overflow */
        if (wa->k[i] > WIN_MAX || wa->s[i] > WIN_MAX || wa->dl[i] > WIN_MAX || wa->pads[i] > WIN_MAX ||
            wa->pads[i + nsp] > WIN_MAX || wa->pads[i] < -WIN_MAX || wa->pads[i + nsp] < -WIN_MAX)
            return infer_fail(c, "a kernel dim, stride, dilation or pad beyond 2^30");
    return 0;
}

static infer_dim win_out(const winattrs *wa, int i, infer_dim d)
{
    int same = strcmp(wa->auto_pad, "SAME_UPPER") == 0 || strcmp(wa->auto_pad, "SAME_LOWER") == 0;
    int valid = strcmp(wa->auto_pad, "VALID") == 0;
    int64_t pb = valid || same ? 0 : wa->pads[i], pe = valid || same ? 0 : wa->pads[i + wa->nsp];
    int64_t k = wa->k[i], s = wa->s[i], ek = k >= 0 ? (k - 1) * wa->dl[i] + 1 : -1;
    if (d < 0)
        return (s == 1 && (same || (ek >= 1 && pb + pe == ek - 1))) ? d : INFER_DIM_UNK;
    if (same)
        return (d + s - 1) / s;
    if (ek < 0)
        return INFER_DIM_UNK;
    int64_t span = d + pb + pe - ek;
    if (span < 0)
        return -2; /* invalid: caller reports */
    int64_t o = wa->ceil_mode ? (span + s - 1) / s + 1 : span / s + 1;
    if (wa->ceil_mode && (o - 1) * s >= d + pb)
        o--;
    return o;
}

static int conv_like(infer_ictx *c, int pool, int transpose)
{
    const infer_shape *x = infer_in(c, 0), *w = pool ? NULL : infer_in(c, 1);
    infer_shape *o = &c->out[0];
    o->dtype = x->dtype;
    if (x->rank < 0)
        return 0;
    if (x->rank < 3)
        return infer_fail(c, "input must have rank >= 3, has %d", x->rank);
    if (w && w->rank >= 0 && w->rank != x->rank)
        return infer_fail(c, "weight rank %d differs from input rank %d", w->rank, x->rank);
    int nsp = x->rank - 2;
    winattrs wa;
    int rc = read_win(c, nsp, w, &wa);
    if (rc)
        return rc;
    int64_t group = ph_node_attr_int(c->n, "group", 1);
    o->rank = x->rank;
    o->d[0] = x->d[0];
    if (pool) {
        o->d[1] = x->d[1];
    } else if (!transpose) {
        o->d[1] = w->rank >= 0 ? w->d[0] : INFER_DIM_UNK;
        int64_t wc;
        if (w->rank >= 0 && w->d[1] >= 0 && x->d[1] >= 0 && (ir_mul_ovf(w->d[1], group, &wc) || wc != x->d[1]))
            return infer_fail(c, "input has %lld channels, weight expects %lld x group %lld", (long long)x->d[1],
                            (long long)w->d[1], (long long)group);
    } else {
        o->d[1] = w->rank >= 0 ? infer_dim_mul(w->d[1], group) : INFER_DIM_UNK;
        if (w->rank >= 0 && w->d[0] >= 0 && x->d[1] >= 0 && w->d[0] != x->d[1])
            return infer_fail(c, "input has %lld channels, weight has %lld", (long long)x->d[1], (long long)w->d[0]);
    }
    const int64_t *os, *op;
    ptrdiff_t nos = transpose ? ph_node_attr_ints(c->n, "output_shape", &os) : -1;
    ptrdiff_t nop = transpose ? ph_node_attr_ints(c->n, "output_padding", &op) : -1;
    for (int i = 0; i < nsp; i++) {
        infer_dim d = x->d[i + 2], r;
        if (d > WIN_MAX) {
            r = INFER_DIM_UNK;
        } else if (transpose) {
            int same = strncmp(wa.auto_pad, "SAME", 4) == 0;
            if (nos >= nsp)
                r = os[nos - nsp + i];
            else if (d < 0 || wa.k[i] < 0 || (nop == nsp && (op[i] < 0 || op[i] > WIN_MAX)))
                r = INFER_DIM_UNK;
            else if (same)
                r = d * wa.s[i];
            else
                r = wa.s[i] * (d - 1) + (nop == nsp ? op[i] : 0) + (wa.k[i] - 1) * wa.dl[i] + 1 - wa.pads[i] -
                    wa.pads[i + nsp];
        } else {
            r = win_out(&wa, i, d);
            if (r == -2)
                return infer_fail(c, "window larger than padded input on spatial dim %d", i);
        }
        o->d[i + 2] = r;
    }
    if (pool && c->nout > 1) {
        c->out[1] = *o;
        c->out[1].dtype = PH_DT_INT64;
    }
    return 0;
}

static int infer_conv(infer_ictx *c) { return conv_like(c, 0, 0); }
static int infer_conv_transpose(infer_ictx *c) { return conv_like(c, 0, 1); }
static int infer_pool(infer_ictx *c) { return conv_like(c, 1, 0); }

static int infer_conv_integer(infer_ictx *c)
{
    int rc = conv_like(c, 0, 0);
    c->out[0].dtype = PH_DT_INT32;
    return rc;
}

static int infer_qlinear_conv(infer_ictx *c)
{
    /* x, x_scale, x_zp, w, ...: view it as Conv(x, w) */
    infer_shape w = *infer_in(c, 3);
    infer_shape save = c->in[1];
    c->in[1] = w;
    int rc = conv_like(c, 0, 0);
    c->in[1] = save;
    c->out[0].dtype = infer_in(c, 7)->dtype ? infer_in(c, 7)->dtype : PH_DT_UINT8;
    return rc;
}

static int infer_global_pool(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0] = *x;
    if (x->rank < 0)
        return 0;
    if (x->rank < 2)
        return infer_fail(c, "input must have rank >= 2");
    for (int i = 2; i < x->rank; i++)
        c->out[0].d[i] = 1;
    return 0;
}

/* ------------------------------------------------------ normalizations */

static int infer_batchnorm(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0] = *x;
    infer_dim ch = x->rank >= 2 ? x->d[1] : INFER_DIM_UNK;
    for (size_t i = 1; i < c->nout; i++) {
        infer_shape_set(&c->out[i], infer_in(c, 3)->dtype ? infer_in(c, 3)->dtype : x->dtype, 1, &ch);
    }
    for (size_t i = 1; i < 5 && i < c->nin; i++) {
        const infer_shape *p = infer_in(c, i);
        if (p->rank == 1 && p->d[0] >= 0 && ch >= 0 && p->d[0] != ch)
            return infer_fail(c, "input %zu has %lld entries for %lld channels", i, (long long)p->d[0],
                            (long long)ch);
    }
    return 0;
}

static int infer_same_norm(infer_ictx *c)
{
    c->out[0] = *infer_in(c, 0);
    return 0;
}

static int infer_layernorm(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    c->out[0] = *x;
    if (c->nout < 2)
        return 0;
    int stash = (int)ph_node_attr_int(c->n, "stash_type", PH_DT_FLOAT);
    for (size_t i = 1; i < c->nout; i++) {
        c->out[i] = *x;
        c->out[i].dtype = stash;
        if (x->rank < 0)
            continue;
        int axis = infer_inf_axis(ph_node_attr_int(c->n, "axis", -1), x->rank);
        if (axis < 0)
            return infer_fail(c, "axis out of range");
        for (int k = axis; k < x->rank; k++)
            c->out[i].d[k] = 1;
    }
    return 0;
}

/* -------------------------------------------------------------- Resize */

static int infer_resize(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    infer_shape *o = &c->out[0];
    *o = *x;
    if (x->rank < 0)
        return 0;
    int r = x->rank;
    size_t scales_in, sizes_in = (size_t)-1;
    if (c->n->op == PH_OP_Upsample || c->opset < 11)
        scales_in = 1;
    else
        scales_in = 2, sizes_in = 3;
    int64_t axes[INFER_MAXRANK];
    const int64_t *av;
    ptrdiff_t na = ph_node_attr_ints(c->n, "axes", &av);
    if (na < 0) {
        na = r;
        for (int k = 0; k < r; k++)
            axes[k] = k;
    } else {
        if (na > r)
            return infer_fail(c, "too many axes");
        for (ptrdiff_t k = 0; k < na; k++)
            if ((axes[k] = infer_inf_axis(av[k], r)) < 0)
                return infer_fail(c, "axis out of range");
    }
    const char *policy = ph_node_attr_string(c->n, "keep_aspect_ratio_policy", "stretch");
    /* sizes (a shape constant, possibly symbolic) */
    if (sizes_in != (size_t)-1 && infer_has_in(c, sizes_in)) {
        infer_shape sz;
        infer_dims_from_shape_input(c, sizes_in, &sz);
        if (sz.rank >= 0 && sz.rank != na)
            return infer_fail(c, "sizes has %d entries for %td axes", sz.rank, na);
        int stretch = strcmp(policy, "stretch") == 0;
        for (ptrdiff_t k = 0; k < na; k++)
            o->d[axes[k]] = sz.rank >= 0 && stretch ? sz.d[k] : INFER_DIM_UNK;
        if (sz.rank >= 0 || infer_in(c, sizes_in)->rank != 1 || infer_in(c, sizes_in)->d[0] != 0)
            return 0;
    }
    double sc[INFER_MAXRANK];
    int ns;
    if (c->n->op == PH_OP_Upsample && c->opset < 9) {
        const float *fv;
        ptrdiff_t nf = ph_node_attr_floats(c->n, "scales", &fv);
        ns = nf >= 0 && nf <= INFER_MAXRANK ? (int)nf : -1;
        for (int k = 0; k < ns; k++)
            sc[k] = fv[k];
    } else {
        ns = infer_has_in(c, scales_in) ? infer_in_doubles(c, scales_in, sc, INFER_MAXRANK) : -1;
    }
    if (ns < 0 || (ns != na && ns != 0)) {
        if (ns > 0)
            return infer_fail(c, "scales has %d entries for %td axes", ns, na);
        for (ptrdiff_t k = 0; k < na; k++)
            o->d[axes[k]] = INFER_DIM_UNK;
        return 0;
    }
    for (int k = 0; k < ns; k++) {
        infer_dim d = x->d[axes[k]];
        if (sc[k] == 1.0)
            o->d[axes[k]] = d;
        else {
            double v = d >= 0 ? floor((double)d * sc[k] + 1e-9) : -1;
            o->d[axes[k]] = v >= 0 && v < 4.6e18 ? (infer_dim)v : INFER_DIM_UNK; /* no out-of-range conversion */
        }
    }
    return 0;
}

/* -------------------------------------------------------------- Einsum */

static int infer_einsum(infer_ictx *c)
{
    const char *eq = ph_node_attr_string(c->n, "equation", NULL);
    c->out[0].dtype = infer_in(c, 0)->dtype;
    if (!eq)
        return infer_fail(c, "missing equation");
    infer_dim letter[128];
    int count[128] = {0};
    for (int i = 0; i < 128; i++)
        letter[i] = INFER_DIM_UNK;
    infer_shape ell = {0, 0, {0}};
    int have_ell = 0;
    const char *p = eq;
    size_t term = 0;
    int all_known = 1;
    while (*p && !(p[0] == '-' && p[1] == '>')) {
        char labels[64];
        int nl = 0, ell_at = -1;
        while (*p && *p != ',' && !(p[0] == '-' && p[1] == '>')) {
            if (*p == '.') {
                if (strncmp(p, "...", 3))
                    return infer_fail(c, "bad equation '%s'", eq);
                ell_at = nl;
                p += 3;
                continue;
            }
            if ((unsigned char)*p >= 128)
                return infer_fail(c, "bad label");
            if (*p != ' ' && nl < 64)
                labels[nl++] = *p;
            p++;
        }
        if (term >= c->nin)
            return infer_fail(c, "equation has more terms than inputs");
        const infer_shape *s = infer_in(c, term);
        if (s->rank < 0) {
            all_known = 0;
        } else {
            int ne = s->rank - nl;
            if (ne < 0 || (ell_at < 0 && ne))
                return infer_fail(c, "term %zu has %d labels for rank %d", term, nl, s->rank);
            int k = 0;
            for (int i = 0; i < nl; i++) {
                if (i == ell_at)
                    k += ne;
                unsigned char l = (unsigned char)labels[i];
                if (l >= 128)
                    return infer_fail(c, "bad label");
                int clash = 0;
                letter[l] = count[l] ? infer_dim_merge(letter[l], s->d[k], &clash) : s->d[k];
                if (clash)
                    return infer_fail(c, "label '%c' has dims %lld and %lld", l, (long long)letter[l],
                                    (long long)s->d[k]);
                k++;
            }
            if (ell_at >= 0) {
                infer_shape e = {0, ne, {0}};
                for (int i = 0; i < ne; i++)
                    e.d[i] = s->d[ell_at + i];
                int rc = infer_broadcast(c, have_ell ? &ell : &e, &e, &ell);
                if (rc)
                    return rc;
                have_ell = 1;
            }
        }
        for (int i = 0; i < nl; i++)
            count[(unsigned char)labels[i]]++;
        term++;
        if (*p == ',')
            p++;
    }
    infer_shape *o = &c->out[0];
    o->rank = 0;
    if (p[0] == '-') {
        p += 2;
        for (; *p; p++) {
            if (*p == ' ')
                continue;
            if (*p == '.') {
                if (strncmp(p, "...", 3))
                    return infer_fail(c, "bad equation '%s'", eq);
                if (!all_known)
                    return o->rank = -1, 0;
                for (int i = 0; i < ell.rank && o->rank < INFER_MAXRANK; i++)
                    o->d[o->rank++] = ell.d[i];
                p += 2;
                continue;
            }
            if (o->rank >= INFER_MAXRANK)
                return o->rank = -1, 0;
            o->d[o->rank++] = letter[(unsigned char)*p & 127];
        }
    } else {
        if (!all_known)
            return o->rank = -1, 0;
        for (int i = 0; i < ell.rank; i++)
            o->d[o->rank++] = ell.d[i];
        for (int l = 0; l < 128; l++)
            if (count[l] == 1 && o->rank < INFER_MAXRANK)
                o->d[o->rank++] = letter[l];
    }
    return 0;
}

/* -------------------------------------------------------- quantization */

static int infer_quantize(infer_ictx *c)
{
    c->out[0] = *infer_in(c, 0);
    int dt = (int)ph_node_attr_int(c->n, "output_dtype", 0);
    if (!dt)
        dt = infer_has_in(c, 2) ? infer_in(c, 2)->dtype : PH_DT_UINT8;
    c->out[0].dtype = dt;
    return 0;
}

static int infer_dequantize(infer_ictx *c)
{
    c->out[0] = *infer_in(c, 0);
    c->out[0].dtype = c->opset >= 19 && infer_in(c, 1)->dtype ? infer_in(c, 1)->dtype : PH_DT_FLOAT;
    return 0;
}

static int infer_dynamic_quantize(infer_ictx *c)
{
    c->out[0] = *infer_in(c, 0);
    c->out[0].dtype = PH_DT_UINT8;
    if (c->nout > 1)
        infer_shape_set(&c->out[1], PH_DT_FLOAT, 0, NULL);
    if (c->nout > 2)
        infer_shape_set(&c->out[2], PH_DT_UINT8, 0, NULL);
    return 0;
}

/* --------------------------------------------------------- recurrent */

static int infer_rnn(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0);
    int dt = x->dtype;
    const char *dir = ph_node_attr_string(c->n, "direction", "forward");
    infer_dim nd = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    infer_dim h = ph_node_attr_int(c->n, "hidden_size", -1);
    int layout = (int)ph_node_attr_int(c->n, "layout", 0);
    infer_dim seq = INFER_DIM_UNK, batch = INFER_DIM_UNK;
    if (x->rank == 3) {
        seq = x->d[layout ? 1 : 0];
        batch = x->d[layout ? 0 : 1];
    }
    if (h < 0 && infer_in(c, 2)->rank == 3)
        h = infer_in(c, 2)->d[2];
    if (h < 0)
        h = INFER_DIM_UNK;
    infer_dim y[4], yh[3];
    if (!layout) {
        y[0] = seq, y[1] = nd, y[2] = batch, y[3] = h;
        yh[0] = nd, yh[1] = batch, yh[2] = h;
    } else {
        y[0] = batch, y[1] = seq, y[2] = nd, y[3] = h;
        yh[0] = batch, yh[1] = nd, yh[2] = h;
    }
    if (c->nout > 0)
        infer_shape_set(&c->out[0], dt, 4, y);
    for (size_t i = 1; i < c->nout && i < 3; i++)
        infer_shape_set(&c->out[i], dt, 3, yh);
    return 0;
}

/* ------------------------------------------------------------- others */

static int infer_nms(infer_ictx *c)
{
    infer_dim d[2] = {INFER_DIM_UNK, 3};
    infer_shape_set(&c->out[0], PH_DT_INT64, 2, d);
    return 0;
}

static int infer_roialign(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0), *rois = infer_in(c, 1);
    infer_dim d[4] = {rois->rank == 2 ? rois->d[0] : INFER_DIM_UNK, x->rank == 4 ? x->d[1] : INFER_DIM_UNK,
                    ph_node_attr_int(c->n, "output_height", 1), ph_node_attr_int(c->n, "output_width", 1)};
    infer_shape_set(&c->out[0], x->dtype, 4, d);
    return 0;
}

static int infer_gridsample(infer_ictx *c)
{
    const infer_shape *x = infer_in(c, 0), *g = infer_in(c, 1);
    c->out[0].dtype = x->dtype;
    if (x->rank < 0 || g->rank < 0)
        return 0;
    if (g->rank != x->rank)
        return infer_fail(c, "grid rank %d differs from input rank %d", g->rank, x->rank);
    c->out[0].rank = x->rank;
    c->out[0].d[0] = x->d[0];
    c->out[0].d[1] = x->d[1];
    for (int i = 2; i < x->rank; i++)
        c->out[0].d[i] = g->d[i - 1];
    return 0;
}

infer_fn infer_nn_fn(ph_op op)
{
    switch (op) {
    case PH_OP_MatMul: return infer_matmul;
    case PH_OP_MatMulInteger: return infer_matmul_integer;
    case PH_OP_QLinearMatMul: return infer_qlinear_matmul;
    case PH_OP_Gemm: return infer_gemm;
    case PH_OP_Conv: return infer_conv;
    case PH_OP_ConvInteger: return infer_conv_integer;
    case PH_OP_QLinearConv: return infer_qlinear_conv;
    case PH_OP_ConvTranspose: return infer_conv_transpose;
    case PH_OP_MaxPool: case PH_OP_AveragePool: case PH_OP_LpPool: return infer_pool;
    case PH_OP_GlobalAveragePool: case PH_OP_GlobalMaxPool: case PH_OP_GlobalLpPool: return infer_global_pool;
    case PH_OP_BatchNormalization: return infer_batchnorm;
    case PH_OP_InstanceNormalization: case PH_OP_GroupNormalization: return infer_same_norm;
    case PH_OP_LayerNormalization: return infer_layernorm;
    case PH_OP_Resize: case PH_OP_Upsample: return infer_resize;
    case PH_OP_Einsum: return infer_einsum;
    case PH_OP_QuantizeLinear: return infer_quantize;
    case PH_OP_DequantizeLinear: return infer_dequantize;
    case PH_OP_DynamicQuantizeLinear: return infer_dynamic_quantize;
    case PH_OP_RNN: case PH_OP_GRU: case PH_OP_LSTM: return infer_rnn;
    case PH_OP_NonMaxSuppression: return infer_nms;
    case PH_OP_RoiAlign: return infer_roialign;
    case PH_OP_GridSample: return infer_gridsample;
    default: return NULL;
    }
}
