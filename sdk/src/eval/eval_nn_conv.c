/* sdk/src/eval/eval_nn_conv.c - Conv and ConvTranspose, any spatial rank (1-D,
 * 2-D, 3-D, ...), float32 and float64.
 *
 * Conv: per image and group, im2col builds the (C/g * prod(k)) x
 * prod(out) patch matrix row by row (each row one input channel and kernel
 * offset; interior spans are straight copies, padding is zeros) and the
 * blocked GEMM multiplies the group's weights by it.  A 1x1 kernel with unit
 * strides and no padding skips im2col.  Depthwise 2-D convolution (one input
 * channel per group, as in MobileNet/EfficientNet) runs a direct loop
 * instead, which is far cheaper than a GEMM with K = 9.
 *
 * ConvTranspose: per image and group, the GEMM computes W_g^T * X_g into a
 * (M/g * prod(k)) x prod(in) column matrix, which col2im scatters (adds)
 * into the output.  Pads come from pads/auto_pad/output_shape as the ONNX
 * spec states (SAME_UPPER puts the smaller half at the start).
 */
#include <stdlib.h>
#include <string.h>

#include "eval_nn.h"

#define R EVAL_NN_MAX_RANK

typedef struct geom {
    size_t nd;
    int64_t N, C, M, group, Cg, Mg;
    int64_t in[R], out[R], k[R], s[R], d[R], pb[R], pe[R];
    int64_t in_sp, out_sp, k_sp;
} geom;

/* Read an ints attribute of exactly n values into dst, or fill dflt. */
static int get_ints(eval_kargs *a, const char *op, const char *name, size_t n, int64_t dflt,
                    int64_t *dst)
{
    const int64_t *v;
    ptrdiff_t cnt = ph_node_attr_ints(a->node, name, &v);
    if (cnt < 0) {
        for (size_t i = 0; i < n; i++)
            dst[i] = dflt;
        return 0;
    }
    if ((size_t)cnt != n)
        return ph_error_set(a->err, PH_EINVAL, "%s: attribute %s has %td values, expected %zu", op,
                            name, cnt, n);
    memcpy(dst, v, n * sizeof *dst);
    return 0;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* Common attribute reading for Conv/ConvTranspose: nd, strides, dilations,
 * explicit pads and kernel shape from W (dims from index 2). */
static int read_common(eval_kargs *a, const char *op, const ph_tensor *x, const ph_tensor *w, geom *g)
{
    size_t rank = ph_tensor_rank(x);
    if (rank < 3 || rank - 2 > R || ph_tensor_rank(w) != rank)
        return ph_error_set(a->err, rank < 3 || ph_tensor_rank(w) != rank ? PH_EINVAL : PH_EUNSUPPORTED,
                            "%s: X has rank %zu and W rank %zu", op, rank, ph_tensor_rank(w));
    g->nd = rank - 2;
    const int64_t *xd = ph_tensor_dims(x), *wd = ph_tensor_dims(w);
    g->N = xd[0];
    g->C = xd[1];
    g->group = ph_node_attr_int(a->node, "group", 1);
    if (g->group < 1 || g->C % g->group)
        return ph_error_set(a->err, PH_EINVAL, "%s: group %lld does not divide %lld channels", op,
                            (long long)g->group, (long long)g->C);
    int64_t ks[R];
    int rc;
    if ((rc = get_ints(a, op, "kernel_shape", g->nd, -1, ks)) ||
        (rc = get_ints(a, op, "strides", g->nd, 1, g->s)) ||
        (rc = get_ints(a, op, "dilations", g->nd, 1, g->d)))
        return rc;
    int64_t pads[2 * R];
    if ((rc = get_ints(a, op, "pads", 2 * g->nd, 0, pads)))
        return rc;
    for (size_t i = 0; i < g->nd; i++) {
        g->in[i] = xd[2 + i];
        g->k[i] = wd[2 + i];
        if (ks[i] != -1 && ks[i] != g->k[i])
            return ph_error_set(a->err, PH_EINVAL, "%s: kernel_shape disagrees with W", op);
        if (g->s[i] < 1 || g->d[i] < 1 || pads[i] < 0 || pads[g->nd + i] < 0 || g->k[i] < 1)
            return ph_error_set(a->err, PH_EINVAL, "%s: bad strides, dilations, pads or kernel", op);
        /* bounded, so no output-size formula below can overflow */
        if (g->in[i] > EVAL_NN_DIM_MAX || g->k[i] > EVAL_NN_DIM_MAX || g->s[i] > EVAL_NN_DIM_MAX ||
            g->d[i] > EVAL_NN_DIM_MAX || pads[i] > EVAL_NN_DIM_MAX || pads[g->nd + i] > EVAL_NN_DIM_MAX)
            return ph_error_set(a->err, PH_EUNSUPPORTED, "%s: a spatial dim, stride, dilation or pad above 2^30", op);
        g->pb[i] = pads[i];
        g->pe[i] = pads[g->nd + i];
    }
    g->k_sp = eval_nn_prod(g->k, g->nd);
    g->in_sp = eval_nn_prod(g->in, g->nd);
    return 0;
}

/* im2col of one channel and one kernel offset kk into dst (out_sp values). */
#define DEF_IM2COL(NAME, T)                                                                   \
    static void NAME(const T *x, T *dst, const geom *g, const int64_t *kk)                   \
    {                                                                                         \
        size_t L = g->nd - 1;                                                                 \
        int64_t ol = g->out[L], s = g->s[L], off = kk[L] * g->d[L] - g->pb[L];                \
        int64_t lo = off < 0 ? ceil_div(-off, s) : 0, hi = ceil_div(g->in[L] - off, s);       \
        if (lo > ol) lo = ol;                                                                 \
        if (hi > ol) hi = ol;                                                                 \
        if (hi < lo) hi = lo;                                                                 \
        int64_t rows = eval_nn_prod(g->out, L), o[R] = {0};                                   \
        for (int64_t r = 0; r < rows; r++, dst += ol) {                                       \
            int64_t base = 0, ok = 1;                                                         \
            for (size_t j = 0; j < L; j++) {                                                  \
                int64_t i = o[j] * g->s[j] - g->pb[j] + kk[j] * g->d[j];                      \
                if (i < 0 || i >= g->in[j]) ok = 0;                                           \
                base = base * g->in[j] + i;                                                   \
            }                                                                                 \
            if (!ok) {                                                                        \
                memset(dst, 0, (size_t)ol * sizeof *dst);                                     \
            } else {                                                                          \
                int64_t sb = base * g->in[L] + off;                                           \
                for (int64_t q = 0; q < lo; q++) dst[q] = 0;                                  \
                if (s == 1 && hi > lo)                                                        \
                    memcpy(dst + lo, x + sb + lo, (size_t)(hi - lo) * sizeof *dst);           \
                else                                                                          \
                    for (int64_t q = lo; q < hi; q++) dst[q] = x[sb + q * s];                 \
                for (int64_t q = hi; q < ol; q++) dst[q] = 0;                                 \
            }                                                                                 \
            for (size_t j = L; j-- > 0;) {                                                    \
                if (++o[j] < g->out[j]) break;                                                \
                o[j] = 0;                                                                     \
            }                                                                                 \
        }                                                                                     \
    }
DEF_IM2COL(im2col_f, float)
DEF_IM2COL(im2col_d, double)

/* col2im of one output channel and kernel offset kk: y += scatter(src), where
 * src holds one value per input position (ConvTranspose). */
#define DEF_COL2IM(NAME, T)                                                                   \
    static void NAME(const T *src, T *y, const geom *g, const int64_t *kk)                   \
    {                                                                                         \
        size_t L = g->nd - 1;                                                                 \
        int64_t il = g->in[L], s = g->s[L], off = kk[L] * g->d[L] - g->pb[L];                 \
        int64_t lo = off < 0 ? ceil_div(-off, s) : 0, hi = ceil_div(g->out[L] - off, s);      \
        if (lo > il) lo = il;                                                                 \
        if (hi > il) hi = il;                                                                 \
        if (hi < lo) hi = lo;                                                                 \
        int64_t rows = eval_nn_prod(g->in, L), i[R] = {0};                                    \
        for (int64_t r = 0; r < rows; r++, src += il) {                                       \
            int64_t base = 0, ok = 1;                                                         \
            for (size_t j = 0; j < L; j++) {                                                  \
                int64_t o = i[j] * g->s[j] - g->pb[j] + kk[j] * g->d[j];                      \
                if (o < 0 || o >= g->out[j]) ok = 0;                                          \
                base = base * g->out[j] + o;                                                  \
            }                                                                                 \
            if (ok) {                                                                         \
                int64_t db = base * g->out[L] + off;                                          \
                for (int64_t q = lo; q < hi; q++) y[db + q * s] += src[q];                    \
            }                                                                                 \
            for (size_t j = L; j-- > 0;) {                                                    \
                if (++i[j] < g->in[j]) break;                                                 \
                i[j] = 0;                                                                     \
            }                                                                                 \
        }                                                                                     \
    }
DEF_COL2IM(col2im_f, float)
DEF_COL2IM(col2im_d, double)

static void next_index(int64_t *kk, const int64_t *lim, size_t n)
{
    for (size_t j = n; j-- > 0;) {
        if (++kk[j] < lim[j])
            return;
        kk[j] = 0;
    }
}

/* Direct depthwise 2-D convolution of one channel: y (oh x ow) = bias + x * w. */
static void depthwise2d(const float *x, const float *w, float bias, float *y, const geom *g)
{
    int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1];
    int64_t sh = g->s[0], sw = g->s[1], dh = g->d[0], dw = g->d[1];
    for (int64_t oh = 0; oh < OH; oh++) {
        float *yr = y + oh * OW;
        for (int64_t q = 0; q < OW; q++)
            yr[q] = bias;
        for (int64_t kh = 0; kh < g->k[0]; kh++) {
            int64_t ih = oh * sh - g->pb[0] + kh * dh;
            if (ih < 0 || ih >= IH)
                continue;
            const float *xr = x + ih * IW;
            for (int64_t kw = 0; kw < g->k[1]; kw++) {
                float wv = w[kh * g->k[1] + kw];
                int64_t off = kw * dw - g->pb[1];
                int64_t lo = off < 0 ? ceil_div(-off, sw) : 0, hi = ceil_div(IW - off, sw);
                if (hi > OW)
                    hi = OW;
                if (sw == 1 && lo < hi) {
                    eval_saxpy((size_t)(hi - lo), wv, xr + (off + lo), yr + lo);
                } else {
                    for (int64_t q = lo; q < hi; q++)
                        yr[q] += wv * xr[off + q * sw];
                }
            }
        }
    }
}

int eval_k_conv(eval_kargs *a)
{
    const char *op = "Conv";
    const ph_tensor *x = a->in[0], *w = a->n_in > 1 ? a->in[1] : NULL;
    const ph_tensor *b = a->n_in > 2 ? a->in[2] : NULL;
    if (!x || !w)
        return ph_error_set(a->err, PH_EINVAL, "Conv: needs X and W");
    int dt = ph_tensor_dtype(x);
    if (dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "Conv: dtype %s not supported", ph_dtype_name(dt));
    if (ph_tensor_dtype(w) != dt || (b && ph_tensor_dtype(b) != dt))
        return ph_error_set(a->err, PH_EINVAL, "Conv: inputs of different dtypes");
    geom g;
    int rc = read_common(a, op, x, w, &g);
    if (rc)
        return rc;
    const int64_t *wd = ph_tensor_dims(w);
    g.M = wd[0];
    g.Cg = g.C / g.group;
    if (wd[1] != g.Cg || g.M % g.group)
        return ph_error_set(a->err, PH_EINVAL, "Conv: W shape does not match channels and group");
    g.Mg = g.M / g.group;
    if (b && (ph_tensor_rank(b) != 1 || ph_tensor_dim(b, 0) != g.M))
        return ph_error_set(a->err, PH_EINVAL, "Conv: B must have shape [%lld]", (long long)g.M);
    const char *ap = ph_node_attr_string(a->node, "auto_pad", "NOTSET");
    for (size_t i = 0; i < g.nd; i++) {
        int64_t dk = (g.k[i] - 1) * g.d[i] + 1;
        if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
            g.out[i] = ceil_div(g.in[i], g.s[i]);
            int64_t tot = (g.out[i] - 1) * g.s[i] + dk - g.in[i];
            if (tot < 0)
                tot = 0;
            g.pb[i] = ap[5] == 'U' ? tot / 2 : tot - tot / 2;
            g.pe[i] = tot - g.pb[i];
        } else if (!strcmp(ap, "VALID")) {
            g.pb[i] = g.pe[i] = 0;
            g.out[i] = (g.in[i] - dk) / g.s[i] + 1;
            if (g.in[i] < dk)
                g.out[i] = 0;
        } else if (!strcmp(ap, "NOTSET")) {
            int64_t span = g.in[i] + g.pb[i] + g.pe[i] - dk;
            g.out[i] = span < 0 ? 0 : span / g.s[i] + 1;
        } else {
            return ph_error_set(a->err, PH_EUNSUPPORTED, "Conv: auto_pad %s not supported", ap);
        }
        if (g.out[i] < 1 && g.in[i] > 0)
            return ph_error_set(a->err, PH_EINVAL, "Conv: kernel larger than padded input");
    }
    g.out_sp = eval_nn_prod(g.out, g.nd);
    int64_t odims[R + 2] = {g.N, g.M};
    memcpy(odims + 2, g.out, g.nd * sizeof *odims);
    ph_tensor *out = ir_tensor_alloc(dt, g.nd + 2, odims);
    if (!out)
        return ph_error_set(a->err, PH_ENOMEM, "Conv: out of memory");
    a->out[0] = out;
    if (ph_tensor_numel(out) == 0)
        return 0;
    size_t es = ph_dtype_size(dt);
    const char *xp = ph_tensor_data(x), *wp = ph_tensor_data(w), *bp = b ? ph_tensor_data(b) : NULL;
    char *yp = ir_tensor_mut(out);
    int64_t Kg = g.Cg * g.k_sp;
    int pointwise = 1;
    for (size_t i = 0; i < g.nd; i++)
        if (g.k[i] != 1 || g.s[i] != 1 || g.pb[i] || g.pe[i])
            pointwise = 0;
    int depthwise = dt == PH_DT_FLOAT && g.nd == 2 && g.Cg == 1 && !pointwise;
    void *col = NULL;
    if (!pointwise && !depthwise) {
        col = malloc((size_t)(Kg ? Kg : 1) * (size_t)g.out_sp * es);
        if (!col) {
            ph_tensor_free(out);
            a->out[0] = NULL;
            return ph_error_set(a->err, PH_ENOMEM, "Conv: out of memory for im2col");
        }
    }
    for (int64_t n = 0; n < g.N && rc == 0; n++) {
        for (int64_t gi = 0; gi < g.group && rc == 0; gi++) {
            const char *xg = xp + (size_t)((n * g.C + gi * g.Cg) * g.in_sp) * es;
            const char *wg = wp + (size_t)(gi * g.Mg * Kg) * es;
            char *yg = yp + (size_t)((n * g.M + gi * g.Mg) * g.out_sp) * es;
            if (depthwise) {
                for (int64_t m = 0; m < g.Mg; m++) {
                    int64_t oc = gi * g.Mg + m;
                    depthwise2d((const float *)xg, (const float *)wg + m * g.k_sp,
                                bp ? ((const float *)bp)[oc] : 0.0f, (float *)yg + m * g.out_sp, &g);
                }
                continue;
            }
            const void *B = xg;
            if (col) {
                int64_t kk[R] = {0};
                for (int64_t c = 0; c < g.Cg; c++) {
                    for (int64_t ki = 0; ki < g.k_sp; ki++) {
                        size_t row = (size_t)(c * g.k_sp + ki) * (size_t)g.out_sp;
                        if (dt == PH_DT_FLOAT)
                            im2col_f((const float *)xg + c * g.in_sp, (float *)col + row, &g, kk);
                        else
                            im2col_d((const double *)xg + c * g.in_sp, (double *)col + row, &g, kk);
                        next_index(kk, g.k, g.nd);
                    }
                }
                B = col;
            }
            for (int64_t m = 0; bp && m < g.Mg; m++)
                for (int64_t q = 0; q < g.out_sp; q++) {
                    if (dt == PH_DT_FLOAT)
                        ((float *)yg)[m * g.out_sp + q] = ((const float *)bp)[gi * g.Mg + m];
                    else
                        ((double *)yg)[m * g.out_sp + q] = ((const double *)bp)[gi * g.Mg + m];
                }
            if (dt == PH_DT_FLOAT)
                rc = eval_sgemm((size_t)g.Mg, (size_t)g.out_sp, (size_t)Kg, 1.0f, (const float *)wg,
                               (ptrdiff_t)Kg, 1, B, (ptrdiff_t)g.out_sp, 1, bp ? 1.0f : 0.0f,
                               (float *)yg, (ptrdiff_t)g.out_sp);
            else
                eval_dgemm((size_t)g.Mg, (size_t)g.out_sp, (size_t)Kg, 1.0, (const double *)wg,
                          (ptrdiff_t)Kg, 1, B, (ptrdiff_t)g.out_sp, 1, bp ? 1.0 : 0.0,
                          (double *)yg, (ptrdiff_t)g.out_sp);
        }
    }
    free(col);
    if (rc) {
        ph_tensor_free(out);
        a->out[0] = NULL;
        return ph_error_set(a->err, rc, "Conv: out of memory");
    }
    return 0;
}

int eval_k_conv_transpose(eval_kargs *a)
{
    const char *op = "ConvTranspose";
    const ph_tensor *x = a->in[0], *w = a->n_in > 1 ? a->in[1] : NULL;
    const ph_tensor *b = a->n_in > 2 ? a->in[2] : NULL;
    if (!x || !w)
        return ph_error_set(a->err, PH_EINVAL, "ConvTranspose: needs X and W");
    int dt = ph_tensor_dtype(x);
    if (dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "ConvTranspose: dtype %s not supported",
                            ph_dtype_name(dt));
    if (ph_tensor_dtype(w) != dt || (b && ph_tensor_dtype(b) != dt))
        return ph_error_set(a->err, PH_EINVAL, "ConvTranspose: inputs of different dtypes");
    geom g;
    int rc = read_common(a, op, x, w, &g);
    if (rc)
        return rc;
    const int64_t *wd = ph_tensor_dims(w);
    g.Cg = g.C / g.group;
    if (wd[0] != g.C)
        return ph_error_set(a->err, PH_EINVAL, "ConvTranspose: W must have %lld rows", (long long)g.C);
    g.Mg = wd[1];
    g.M = g.Mg * g.group;
    if (b && (ph_tensor_rank(b) != 1 || ph_tensor_dim(b, 0) != g.M))
        return ph_error_set(a->err, PH_EINVAL, "ConvTranspose: B must have shape [%lld]", (long long)g.M);
    int64_t opad[R], oshape[R + 2];
    if ((rc = get_ints(a, op, "output_padding", g.nd, 0, opad)))
        return rc;
    const int64_t *osv;
    ptrdiff_t nos = ph_node_attr_ints(a->node, "output_shape", &osv);
    if (nos >= 0 && (size_t)nos != g.nd && (size_t)nos != g.nd + 2)
        return ph_error_set(a->err, PH_EINVAL, "ConvTranspose: output_shape has %td values", nos);
    if (nos >= 0)
        memcpy(oshape, osv + ((size_t)nos - g.nd), g.nd * sizeof *oshape);
    const char *ap = ph_node_attr_string(a->node, "auto_pad", "NOTSET");
    int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    if (!same && strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
        return ph_error_set(a->err, PH_EUNSUPPORTED, "ConvTranspose: auto_pad %s not supported", ap);
    for (size_t i = 0; i < g.nd; i++) {
        if (opad[i] < 0 || opad[i] > EVAL_NN_DIM_MAX || (nos >= 0 && (oshape[i] < 0 || oshape[i] > EVAL_NN_DIM_MAX)))
            return ph_error_set(a->err, PH_EINVAL, "ConvTranspose: output_padding or output_shape negative or above 2^30");
        int64_t dk = (g.k[i] - 1) * g.d[i] + 1;
        int64_t full = g.s[i] * (g.in[i] - 1) + opad[i] + dk;
        if (nos >= 0 || same) {
            g.out[i] = nos >= 0 ? oshape[i] : g.in[i] * g.s[i];
            /* an output_shape beyond the full output pads at the end (like
             * output_padding), as ONNX Runtime does */
            int64_t tot = full - g.out[i];
            if (tot < 0)
                tot = 0;
            if (!strcmp(ap, "SAME_UPPER")) {
                g.pb[i] = tot / 2;
                g.pe[i] = tot - tot / 2;
            } else {
                g.pb[i] = tot - tot / 2;
                g.pe[i] = tot / 2;
            }
        } else {
            if (!strcmp(ap, "VALID"))
                g.pb[i] = g.pe[i] = 0;
            g.out[i] = full - g.pb[i] - g.pe[i];
        }
        if (g.out[i] < 0)
            return ph_error_set(a->err, PH_EINVAL, "ConvTranspose: negative output size");
    }
    g.out_sp = eval_nn_prod(g.out, g.nd);
    int64_t odims[R + 2] = {g.N, g.M};
    memcpy(odims + 2, g.out, g.nd * sizeof *odims);
    ph_tensor *out = ir_tensor_alloc(dt, g.nd + 2, odims);
    if (!out)
        return ph_error_set(a->err, PH_ENOMEM, "ConvTranspose: out of memory");
    a->out[0] = out;
    if (ph_tensor_numel(out) == 0)
        return 0;
    size_t es = ph_dtype_size(dt);
    const char *xp = ph_tensor_data(x), *wp = ph_tensor_data(w), *bp = b ? ph_tensor_data(b) : NULL;
    char *yp = ir_tensor_mut(out);
    int64_t rows = g.Mg * g.k_sp;
    void *col = malloc((size_t)(rows ? rows : 1) * (size_t)(g.in_sp ? g.in_sp : 1) * es);
    if (!col) {
        ph_tensor_free(out);
        a->out[0] = NULL;
        return ph_error_set(a->err, PH_ENOMEM, "ConvTranspose: out of memory");
    }
    for (int64_t n = 0; n < g.N && rc == 0; n++) {
        for (int64_t gi = 0; gi < g.group && rc == 0; gi++) {
            const char *xg = xp + (size_t)((n * g.C + gi * g.Cg) * g.in_sp) * es;
            const char *wg = wp + (size_t)(gi * g.Cg * rows) * es;
            char *yg = yp + (size_t)((n * g.M + gi * g.Mg) * g.out_sp) * es;
            for (int64_t m = 0; m < g.Mg; m++) {
                for (int64_t q = 0; q < g.out_sp; q++) {
                    if (dt == PH_DT_FLOAT)
                        ((float *)yg)[m * g.out_sp + q] = bp ? ((const float *)bp)[gi * g.Mg + m] : 0.0f;
                    else
                        ((double *)yg)[m * g.out_sp + q] = bp ? ((const double *)bp)[gi * g.Mg + m] : 0.0;
                }
            }
            if (g.in_sp == 0)
                continue;
            if (dt == PH_DT_FLOAT)
                rc = eval_sgemm((size_t)rows, (size_t)g.in_sp, (size_t)g.Cg, 1.0f, (const float *)wg, 1,
                               (ptrdiff_t)rows, (const float *)xg, (ptrdiff_t)g.in_sp, 1, 0.0f,
                               col, (ptrdiff_t)g.in_sp);
            else
                eval_dgemm((size_t)rows, (size_t)g.in_sp, (size_t)g.Cg, 1.0, (const double *)wg, 1,
                          (ptrdiff_t)rows, (const double *)xg, (ptrdiff_t)g.in_sp, 1, 0.0, col,
                          (ptrdiff_t)g.in_sp);
            int64_t kk[R] = {0};
            for (int64_t r = 0; r < rows && rc == 0; r++) {
                int64_t m = r / g.k_sp;
                size_t coff = (size_t)r * (size_t)g.in_sp;
                if (dt == PH_DT_FLOAT)
                    col2im_f((const float *)col + coff, (float *)yg + m * g.out_sp, &g, kk);
                else
                    col2im_d((const double *)col + coff, (double *)yg + m * g.out_sp, &g, kk);
                next_index(kk, g.k, g.nd);
            }
        }
    }
    free(col);
    if (rc) {
        ph_tensor_free(out);
        a->out[0] = NULL;
        return ph_error_set(a->err, rc, "ConvTranspose: out of memory");
    }
    return 0;
}
