/* sdk/src/eval/eval_nn_resize.c - Resize (opsets 11-19), any rank.
 *
 * Every output coordinate is mapped back to the input with the
 * coordinate_transformation_mode (half_pixel, half_pixel_symmetric,
 * pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn,
 * tf_crop_and_resize), computed in float as ONNX Runtime does.  Each axis
 * then gets a small table of taps (input index and weight): one for nearest
 * (all four nearest_mode values), two for linear (coordinate clamped to the
 * input), four for cubic (cubic_coeff_a, exclude_outside, edge-clamped
 * neighbours).  An axis whose mapping is the identity gets a single tap, so
 * resizing the last two axes of an NCHW tensor costs 4 taps per output for
 * linear.  tf_crop_and_resize writes extrapolation_value outside the input.
 * Nearest works for every fixed-size dtype; linear and cubic need float32
 * or float64.  antialias = 1 and opset < 11 are refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_nn.h"

#define MAXR (EVAL_NN_MAX_RANK + 2)

enum { NEAREST, LINEAR, CUBIC };

typedef struct axis_taps {
    int T;           /* taps per output coordinate */
    int64_t *off;    /* out * T element offsets (index * stride) */
    double *w;       /* out * T weights */
    unsigned char *oob; /* out flags: outside the input (tf_crop_and_resize) */
} axis_taps;

static float to_original(const char *ctm, int64_t x, float scale, int64_t in, int64_t out,
                         float roi_s, float roi_e)
{
    float xf = (float)x, len_in = (float)in, len_out = (float)out;
    if (!strcmp(ctm, "half_pixel"))
        return (xf + 0.5f) / scale - 0.5f;
    if (!strcmp(ctm, "half_pixel_symmetric")) {
        float adj = len_out / (scale * len_in), center = len_in / 2;
        return center * (1 - adj) + (xf + 0.5f) / scale - 0.5f;
    }
    if (!strcmp(ctm, "pytorch_half_pixel"))
        return out > 1 ? (xf + 0.5f) / scale - 0.5f : 0.0f;
    if (!strcmp(ctm, "align_corners"))
        return out == 1 ? 0.0f : xf * (len_in - 1) / (len_out - 1);
    if (!strcmp(ctm, "asymmetric"))
        return xf / scale;
    if (!strcmp(ctm, "tf_half_pixel_for_nn"))
        return (xf + 0.5f) / scale;
    /* tf_crop_and_resize */
    return out > 1 ? roi_s * (len_in - 1) + xf * (roi_e - roi_s) * (len_in - 1) / (len_out - 1)
                   : 0.5f * (roi_s + roi_e) * (len_in - 1);
}

static int64_t nearest_index(const char *nm, float x)
{
    float fl = floorf(x);
    if (!strcmp(nm, "floor"))
        return (int64_t)fl;
    if (!strcmp(nm, "ceil"))
        return (int64_t)ceilf(x);
    if (x - fl == 0.5f)
        return (int64_t)(!strcmp(nm, "round_prefer_ceil") ? fl + 1 : fl);
    return (int64_t)roundf(x);
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Fill one axis' tap table. */
static void build_axis(axis_taps *t, int mode, const char *ctm, const char *nm, double A,
                       int excl, float scale, int64_t in, int64_t out, int64_t stride,
                       float roi_s, float roi_e)
{
    int crop = !strcmp(ctm, "tf_crop_and_resize");
    for (int64_t o = 0; o < out; o++) {
        float x = to_original(ctm, o, scale, in, out, roi_s, roi_e);
        int64_t *off = t->off + o * t->T;
        double *w = t->w + o * t->T;
        t->oob[o] = crop && (x < 0 || x > (float)(in - 1));
        if (t->T == 1) {
            off[0] = clampi(mode == NEAREST ? nearest_index(nm, x) : o, 0, in - 1) * stride;
            w[0] = 1;
        } else if (t->T == 2) {
            if (x < 0)
                x = 0;
            if (x > (float)(in - 1))
                x = (float)(in - 1);
            int64_t i0 = (int64_t)floorf(x);
            off[0] = i0 * stride;
            off[1] = clampi(i0 + 1, 0, in - 1) * stride;
            w[1] = (double)(x - (float)i0);
            w[0] = 1 - w[1];
        } else {
            int64_t i0 = (int64_t)floorf(x);
            double s = x - (float)i0, sum = 0;
            double d[4] = {s + 1, s, 1 - s, 2 - s};
            for (int k = 0; k < 4; k++) {
                double v = d[k];
                double c = v <= 1 ? ((A + 2) * v - (A + 3)) * v * v + 1
                                  : ((A * v - 5 * A) * v + 8 * A) * v - 4 * A;
                int64_t idx = i0 - 1 + k;
                if (excl && (idx < 0 || idx >= in))
                    c = 0;
                w[k] = c;
                sum += c;
                off[k] = clampi(idx, 0, in - 1) * stride;
            }
            if (excl && sum != 0)
                for (int k = 0; k < 4; k++)
                    w[k] /= sum;
        }
    }
}

/* Read a 1-D float tensor (float32/float64) of n values; 0 entries -> absent. */
static int read_floats(const ph_tensor *t, size_t n, float *dst)
{
    if (!t || ph_tensor_numel(t) == 0)
        return 0;
    if ((size_t)ph_tensor_numel(t) != n)
        return -1;
    for (size_t i = 0; i < n; i++)
        dst[i] = ph_tensor_dtype(t) == PH_DT_DOUBLE ? (float)((const double *)ph_tensor_data(t))[i]
                 : ph_tensor_dtype(t) == PH_DT_FLOAT ? ((const float *)ph_tensor_data(t))[i]
                                                     : NAN;
    return 1;
}

int eval_k_resize(eval_kargs *a)
{
    const char *op = "Resize";
    const ph_tensor *x = a->in[0];
    if (!x)
        return ph_error_set(a->err, PH_EINVAL, "Resize: needs X");
    if (a->opset < 11)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "Resize: opset %lld (before 11) not supported",
                            (long long)a->opset);
    const ph_tensor *roi = a->n_in > 1 ? a->in[1] : NULL, *tsc = a->n_in > 2 ? a->in[2] : NULL;
    const ph_tensor *tsz = a->n_in > 3 ? a->in[3] : NULL;
    const char *ms = ph_node_attr_string(a->node, "mode", "nearest");
    const char *ctm = ph_node_attr_string(a->node, "coordinate_transformation_mode", "half_pixel");
    const char *nm = ph_node_attr_string(a->node, "nearest_mode", "round_prefer_floor");
    const char *kp = ph_node_attr_string(a->node, "keep_aspect_ratio_policy", "stretch");
    double A = ph_node_attr_float(a->node, "cubic_coeff_a", -0.75f);
    int excl = ph_node_attr_int(a->node, "exclude_outside", 0) != 0;
    double extra = ph_node_attr_float(a->node, "extrapolation_value", 0.0f);
    int mode = !strcmp(ms, "nearest") ? NEAREST : !strcmp(ms, "linear") ? LINEAR
               : !strcmp(ms, "cubic") ? CUBIC : -1;
    if (mode < 0)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "Resize: mode %s not supported", ms);
    static const char *const ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                       "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                                       "tf_crop_and_resize"};
    int ok = 0;
    for (size_t i = 0; i < sizeof ctms / sizeof *ctms; i++)
        ok |= !strcmp(ctm, ctms[i]);
    if (!ok)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "Resize: coordinate_transformation_mode %s", ctm);
    if (mode == NEAREST && strcmp(nm, "round_prefer_floor") && strcmp(nm, "round_prefer_ceil") &&
        strcmp(nm, "floor") && strcmp(nm, "ceil"))
        return ph_error_set(a->err, PH_EUNSUPPORTED, "Resize: nearest_mode %s", nm);
    if (ph_node_attr_int(a->node, "antialias", 0) != 0)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "Resize: antialias=1 not supported");
    int dt = ph_tensor_dtype(x);
    size_t es = ph_dtype_size(dt);
    if (es == 0 || (mode != NEAREST && dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE))
        return ph_error_set(a->err, PH_EUNSUPPORTED, "Resize: dtype %s not supported with mode %s",
                            ph_dtype_name(dt), ms);
    size_t rank = ph_tensor_rank(x);
    if (rank == 0 || rank > MAXR)
        return ph_error_set(a->err, PH_EUNSUPPORTED, "Resize: rank %zu not supported", rank);
    const int64_t *xd = ph_tensor_dims(x);
    /* axes (opset 18) */
    int64_t axes[MAXR];
    const int64_t *av;
    ptrdiff_t na = ph_node_attr_ints(a->node, "axes", &av);
    size_t nax = na < 0 ? rank : (size_t)na;
    if (nax > rank)
        return ph_error_set(a->err, PH_EINVAL, "Resize: too many axes");
    for (size_t i = 0; i < nax; i++) {
        int64_t ax = na < 0 ? (int64_t)i : av[i] < 0 ? av[i] + (int64_t)rank : av[i];
        if (ax < 0 || ax >= (int64_t)rank)
            return ph_error_set(a->err, PH_EINVAL, "Resize: axis out of range");
        axes[i] = ax;
    }
    float scales[MAXR], rs[MAXR], re[MAXR], roiv[2 * MAXR];
    for (size_t i = 0; i < rank; i++) {
        scales[i] = 1;
        rs[i] = 0;
        re[i] = 1;
    }
    int64_t odims[MAXR];
    memcpy(odims, xd, rank * sizeof *odims);
    int hr = read_floats(roi, 2 * nax, roiv);
    if (hr < 0)
        return ph_error_set(a->err, PH_EINVAL, "Resize: roi must have %zu values", 2 * nax);
    for (size_t i = 0; hr && i < nax; i++) {
        rs[axes[i]] = roiv[i];
        re[axes[i]] = roiv[nax + i];
    }
    float sv[MAXR];
    int hs = read_floats(tsc, nax, sv);
    int hz = tsz && ph_tensor_numel(tsz) > 0;
    if (hs < 0)
        return ph_error_set(a->err, PH_EINVAL, "Resize: scales must have %zu values", nax);
    if (hs == hz)
        return ph_error_set(a->err, PH_EINVAL, "Resize: exactly one of scales and sizes is needed");
    int crop = !strcmp(ctm, "tf_crop_and_resize");
    if (hs) {
        for (size_t i = 0; i < nax; i++) {
            int64_t ax = axes[i];
            if (!(sv[i] > 0))
                return ph_error_set(a->err, PH_EINVAL, "Resize: scale %g not positive", sv[i]);
            scales[ax] = sv[i];
            float len = crop ? (float)xd[ax] * (re[ax] - rs[ax]) : (float)xd[ax];
            float od = floorf(len * sv[i]);
            if (!(od >= 0 && od < 4.6e18f)) /* never an out-of-range float-to-int conversion */
                return ph_error_set(a->err, PH_EINVAL, "Resize: scale %g gives an output dim out of range", sv[i]);
            odims[ax] = (int64_t)od;
        }
    } else {
        if (ph_tensor_dtype(tsz) != PH_DT_INT64 || (size_t)ph_tensor_numel(tsz) != nax)
            return ph_error_set(a->err, PH_EINVAL, "Resize: sizes must be int64 with %zu values", nax);
        const int64_t *sz = ph_tensor_data(tsz);
        int keep = strcmp(kp, "stretch") != 0;
        if (keep && strcmp(kp, "not_larger") && strcmp(kp, "not_smaller"))
            return ph_error_set(a->err, PH_EUNSUPPORTED, "Resize: keep_aspect_ratio_policy %s", kp);
        float common = 0;
        for (size_t i = 0; keep && i < nax; i++) {
            float s = (float)sz[i] / (float)xd[axes[i]];
            if (i == 0 || (kp[4] == 'l' ? s < common : s > common))
                common = s;
        }
        for (size_t i = 0; i < nax; i++) {
            int64_t ax = axes[i];
            if (sz[i] < 0)
                return ph_error_set(a->err, PH_EINVAL, "Resize: negative size");
            float od = keep ? roundf(common * (float)xd[ax]) : 0;
            if (keep && !(od >= 0 && od < 4.6e18f))
                return ph_error_set(a->err, PH_EINVAL, "Resize: sizes give an output dim out of range");
            odims[ax] = keep ? (int64_t)od : sz[i];
            scales[ax] = keep ? common : (float)odims[ax] / (float)xd[ax];
        }
    }
    ph_tensor *y = ir_tensor_alloc(dt, rank, odims);
    if (!y)
        return ph_error_set(a->err, PH_ENOMEM, "Resize: out of memory");
    a->out[0] = y;
    int64_t total = ph_tensor_numel(y);
    if (total == 0)
        return 0;
    if (ph_tensor_numel(x) == 0) {
        ph_tensor_free(y);
        a->out[0] = NULL;
        return ph_error_set(a->err, PH_EINVAL, "Resize: empty input, non-empty output");
    }
    axis_taps ax[MAXR];
    memset(ax, 0, sizeof ax);
    int64_t stride = 1;
    int rc = 0;
    for (size_t j = rank; j-- > 0;) {
        int ident = 1;
        for (int64_t o = 0; o < odims[j] && ident; o++)
            ident = odims[j] == xd[j] &&
                    to_original(ctm, o, scales[j], xd[j], odims[j], rs[j], re[j]) == (float)o;
        ax[j].T = ident || mode == NEAREST ? 1 : mode == LINEAR ? 2 : 4;
        size_t n = (size_t)odims[j] * (size_t)ax[j].T;
        ax[j].off = malloc(n * sizeof *ax[j].off);
        ax[j].w = malloc(n * sizeof *ax[j].w);
        ax[j].oob = malloc((size_t)odims[j]);
        if (!ax[j].off || !ax[j].w || !ax[j].oob) {
            rc = PH_ENOMEM;
        } else if (ident) {
            for (int64_t o = 0; o < odims[j]; o++) {
                ax[j].off[o] = o * stride;
                ax[j].w[o] = 1;
                ax[j].oob[o] = 0;
            }
        } else {
            build_axis(&ax[j], mode, ctm, nm, A, excl, scales[j], xd[j], odims[j], stride, rs[j], re[j]);
        }
        stride *= xd[j];
    }
    if (rc == 0) {
        const char *xp = ph_tensor_data(x);
        char *yp = ir_tensor_mut(y);
        int64_t o[MAXR] = {0};
        for (int64_t q = 0; q < total; q++) {
            int out_of = 0;
            for (size_t j = 0; j < rank; j++)
                out_of |= ax[j].oob[o[j]];
            if (mode == NEAREST) {
                int64_t src = 0;
                for (size_t j = 0; j < rank; j++)
                    src += ax[j].off[o[j]];
                if (out_of && (dt == PH_DT_FLOAT || dt == PH_DT_DOUBLE)) {
                    if (dt == PH_DT_FLOAT)
                        ((float *)yp)[q] = (float)extra;
                    else
                        ((double *)yp)[q] = extra;
                } else if (out_of) {
                    memset(yp + (size_t)q * es, 0, es);
                } else {
                    memcpy(yp + (size_t)q * es, xp + (size_t)src * es, es);
                }
            } else {
                double acc = 0;
                if (out_of) {
                    acc = extra;
                } else {
                    int t[MAXR] = {0};
                    for (;;) {
                        int64_t src = 0;
                        double w = 1;
                        for (size_t j = 0; j < rank; j++) {
                            size_t k = (size_t)o[j] * (size_t)ax[j].T + (size_t)t[j];
                            src += ax[j].off[k];
                            w *= ax[j].w[k];
                        }
                        acc += w * (dt == PH_DT_FLOAT ? (double)((const float *)xp)[src]
                                                      : ((const double *)xp)[src]);
                        size_t j = rank;
                        while (j-- > 0 && ++t[j] == ax[j].T)
                            t[j] = 0;
                        if (j == (size_t)-1)
                            break;
                    }
                }
                if (dt == PH_DT_FLOAT)
                    ((float *)yp)[q] = (float)acc;
                else
                    ((double *)yp)[q] = acc;
            }
            for (size_t j = rank; j-- > 0;) {
                if (++o[j] < odims[j])
                    break;
                o[j] = 0;
            }
        }
    }
    for (size_t j = 0; j < rank; j++) {
        free(ax[j].off);
        free(ax[j].w);
        free(ax[j].oob);
    }
    if (rc) {
        ph_tensor_free(y);
        a->out[0] = NULL;
        return ph_error_set(a->err, rc, "%s: out of memory", op);
    }
    return 0;
}
