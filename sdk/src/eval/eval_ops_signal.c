/* sdk/src/eval/eval_ops_signal.c - signal processing (opset 17): DFT, STFT,
 * HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix.
 *
 * Complex values are a trailing dim of 2 (real, imaginary); a trailing dim
 * of 1 is a real signal.  Transforms are computed directly in double
 * (O(n^2) per signal with one table of twiddle factors per length: a
 * reference, not a fast path).  DFT: along `axis`,
 * zero-padded or cut to dft_length, inverse divides by n, onesided keeps
 * the floor(n/2) + 1 first bins.  STFT: frames of frame_length (or the
 * window's length) every frame_step samples, times the window, each
 * transformed.  The windows are periodic (denominator N) unless periodic =
 * 0 (N - 1); Hamming uses 25/46 and 21/46.  MelWeightMatrix follows the
 * ONNX reference: triangles between mel-spaced points mapped to integer
 * bins.  Outputs of the window ops and MelWeightMatrix take
 * output_datatype, any float type (registered native_half).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_more.h"

/* One integer scalar input (required when req). */
static int scalar_int(eval_kargs *a, size_t i, int req, int64_t dflt, int64_t *v)
{
    const ph_tensor *t = eval_in(a, i);
    const void *d;
    *v = dflt;
    if (!t && !req)
        return 0;
    int rc = eval_need(a, i, &t, &d);
    if (rc)
        return rc;
    if (ph_tensor_numel(t) != 1 || !eval_dt_int(ph_tensor_dtype(t)))
        return eval_kfail(a, PH_EINVAL, "input %zu must be one integer", i);
    *v = eval_load_i64(d, ph_tensor_dtype(t), 0);
    return 0;
}

static double scalar_f64(const ph_tensor *t)
{
    return eval_load_f64(ph_tensor_data(t), ph_tensor_dtype(t), 0);
}

/* The twiddle factors cos and sin of 2 pi m / n, m < n (2n values; NULL
 * when out of memory): one table per transform length. */
static double *twiddles(int64_t n)
{
    double *tw = malloc((size_t)n * 2 * sizeof *tw);
    for (int64_t m = 0; tw && m < n; m++) {
        double ang = 2 * M_PI * (double)m / (double)n;
        tw[2 * m] = cos(ang);
        tw[2 * m + 1] = sin(ang);
    }
    return tw;
}

/* The buffers of a transform: len complex inputs, bins complex outputs and
 * the twiddles of length n (freed by the caller).  0 or PH_ENOMEM. */
static int dft_buffers(eval_kargs *a, int64_t len, int64_t bins, int64_t n, double **sig, double **res, double **tw)
{
    *sig = malloc((size_t)(len ? len : 1) * 2 * sizeof **sig);
    *res = malloc((size_t)(bins ? bins : 1) * 2 * sizeof **res);
    *tw = twiddles(n);
    if (*sig && *res && *tw)
        return 0;
    free(*sig);
    free(*res);
    free(*tw);
    return eval_kfail(a, PH_ENOMEM, "out of memory");
}

/* X[k] = sum_j x[j] e^(-+2 pi i j k / n), k < bins; x has len values
 * (re, im interleaved), zero beyond; tw from twiddles(n). */
static void dft(const double *x, int64_t len, int64_t n, int64_t bins, int inverse, const double *tw, double *out)
{
    double sign = inverse ? 1 : -1;
    for (int64_t k = 0; k < bins; k++) {
        double re = 0, im = 0;
        for (int64_t j = 0; j < len && j < n; j++) {
            int64_t m = (j * k) % n;
            double c = tw[2 * m], s = sign * tw[2 * m + 1];
            re += x[2 * j] * c - x[2 * j + 1] * s;
            im += x[2 * j] * s + x[2 * j + 1] * c;
        }
        out[2 * k] = inverse ? re / (double)n : re;
        out[2 * k + 1] = inverse ? im / (double)n : im;
    }
}

int eval_k_dft(eval_kargs *a)
{
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need_float(a, 0, "input", &x, &xd);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t r = ph_tensor_rank(x), ax;
    int64_t comp = r ? ph_tensor_dim(x, r - 1) : 0;
    if (r < 3 || (comp != 1 && comp != 2) || r > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EINVAL, "the input must be [batch, ..., n, 1 or 2]");
    if ((rc = eval_axis(a, ph_node_attr_int(a->node, "axis", 1), r, &ax)) != 0)
        return rc;
    if (ax == 0 || ax == r - 1)
        return eval_kfail(a, PH_EINVAL, "axis must be a signal dim (not the batch or the last)");
    int64_t len = ph_tensor_dim(x, ax), n;
    if ((rc = scalar_int(a, 1, 0, len, &n)) != 0)
        return rc;
    if (n < 1)
        return eval_kfail(a, PH_EINVAL, "dft_length must be positive");
    int inverse = ph_node_attr_int(a->node, "inverse", 0) != 0, onesided = ph_node_attr_int(a->node, "onesided", 0) != 0;
    int64_t bins = onesided ? n / 2 + 1 : n, od[EVAL_MAX_RANK];
    memcpy(od, ph_tensor_dims(x), r * sizeof *od);
    od[ax] = bins;
    od[r - 1] = 2;
    void *o;
    if ((rc = eval_out(a, 0, dt, r, od, &o)) != 0 || !o)
        return rc;
    int64_t outer = eval_numel(ax, ph_tensor_dims(x)), inner = eval_numel(r - 1 - ax - 1, ph_tensor_dims(x) + ax + 1);
    double *sig, *res, *tw;
    if ((rc = dft_buffers(a, len, bins, n, &sig, &res, &tw)) != 0)
        return rc;
    for (int64_t i = 0; i < outer; i++)
        for (int64_t j = 0; j < inner; j++) {
            for (int64_t t = 0; t < len; t++) {
                size_t e = (size_t)(((i * len + t) * inner + j) * comp);
                sig[2 * t] = eval_load_f64(xd, dt, e);
                sig[2 * t + 1] = comp == 2 ? eval_load_f64(xd, dt, e + 1) : 0;
            }
            dft(sig, len, n, bins, inverse, tw, res);
            for (int64_t k = 0; k < bins; k++) {
                size_t e = (size_t)(((i * bins + k) * inner + j) * 2);
                eval_store_f64(o, dt, e, res[2 * k]);
                eval_store_f64(o, dt, e + 1, res[2 * k + 1]);
            }
        }
    free(sig);
    free(res);
    free(tw);
    return 0;
}

int eval_k_stft(eval_kargs *a)
{
    const ph_tensor *x, *wt = eval_in(a, 2);
    const void *xd, *wd = NULL;
    int rc = eval_need_float(a, 0, "signal", &x, &xd);
    if (rc || (wt && (rc = eval_need(a, 2, &wt, &wd)) != 0))
        return rc;
    int dt = ph_tensor_dtype(x);
    if (ph_tensor_rank(x) != 3 || (ph_tensor_dim(x, 2) != 1 && ph_tensor_dim(x, 2) != 2))
        return eval_kfail(a, PH_EINVAL, "the signal must be [batch, length, 1 or 2]");
    int64_t step, flen, B = ph_tensor_dim(x, 0), L = ph_tensor_dim(x, 1), comp = ph_tensor_dim(x, 2);
    int64_t wlen = wt ? ph_tensor_numel(wt) : -1;
    if ((rc = scalar_int(a, 1, 1, 0, &step)) != 0 || (rc = scalar_int(a, 3, 0, wlen, &flen)) != 0)
        return rc;
    if (wt && (ph_tensor_rank(wt) != 1 || wlen != flen))
        return eval_kfail(a, PH_EINVAL, "the window must be 1-D of frame_length values");
    if (step < 1 || flen < 1 || flen > L)
        return eval_kfail(a, PH_EINVAL, "frame_step and frame_length must be positive, frame_length at most the signal");
    int onesided = ph_node_attr_int(a->node, "onesided", 1) != 0 && comp == 1;
    int64_t frames = (L - flen) / step + 1, bins = onesided ? flen / 2 + 1 : flen, od[4] = {B, frames, bins, 2};
    void *o;
    if ((rc = eval_out(a, 0, dt, 4, od, &o)) != 0 || !o)
        return rc;
    double *sig, *res, *tw;
    if ((rc = dft_buffers(a, flen, bins, flen, &sig, &res, &tw)) != 0)
        return rc;
    for (int64_t b = 0; b < B; b++)
        for (int64_t f = 0; f < frames; f++) {
            for (int64_t j = 0; j < flen; j++) {
                double w = wd ? eval_load_f64(wd, ph_tensor_dtype(wt), (size_t)j) : 1;
                size_t e = (size_t)((b * L + f * step + j) * comp);
                sig[2 * j] = eval_load_f64(xd, dt, e) * w;
                sig[2 * j + 1] = comp == 2 ? eval_load_f64(xd, dt, e + 1) * w : 0;
            }
            dft(sig, flen, flen, bins, 0, tw, res);
            for (int64_t k = 0; k < bins; k++) {
                size_t e = (size_t)(((b * frames + f) * bins + k) * 2);
                eval_store_f64(o, dt, e, res[2 * k]);
                eval_store_f64(o, dt, e + 1, res[2 * k + 1]);
            }
        }
    free(sig);
    free(res);
    free(tw);
    return 0;
}

/* ------------------------------------------------------------ windows */

static int out_dtype(eval_kargs *a, int *dt)
{
    *dt = (int)ph_node_attr_int(a->node, "output_datatype", PH_DT_FLOAT);
    if (!eval_dt_float(*dt) && *dt != PH_DT_FLOAT16 && *dt != PH_DT_BFLOAT16 && !eval_dt_int(*dt))
        return eval_kbad_dtype(a, "output", *dt);
    return 0;
}

static int window(eval_kargs *a, double a0, double a1, double a2)
{
    int64_t n;
    int dt, rc;
    if ((rc = scalar_int(a, 0, 1, 0, &n)) != 0 || (rc = out_dtype(a, &dt)) != 0)
        return rc;
    if (n < 0)
        return eval_kfail(a, PH_EINVAL, "size must not be negative");
    void *o;
    if ((rc = eval_out(a, 0, dt, 1, &n, &o)) != 0 || !o)
        return rc;
    double den = ph_node_attr_int(a->node, "periodic", 1) ? (double)n : (double)(n - 1);
    for (int64_t i = 0; i < n; i++) {
        double t = den > 0 ? 2 * M_PI * (double)i / den : 0;
        eval_store_f64(o, dt, (size_t)i, a0 - a1 * cos(t) + a2 * cos(2 * t));
    }
    return 0;
}

int eval_k_hann_window(eval_kargs *a)
{
    return window(a, 0.5, 0.5, 0);
}

int eval_k_hamming_window(eval_kargs *a)
{
    return window(a, 25.0 / 46.0, 21.0 / 46.0, 0);
}

int eval_k_blackman_window(eval_kargs *a)
{
    return window(a, 0.42, 0.5, 0.08);
}

int eval_k_mel_weight_matrix(eval_kargs *a)
{
    int64_t bins, dft_len, rate;
    int dt, rc;
    const ph_tensor *lo, *hi;
    if ((rc = scalar_int(a, 0, 1, 0, &bins)) != 0 || (rc = scalar_int(a, 1, 1, 0, &dft_len)) != 0 ||
        (rc = scalar_int(a, 2, 1, 0, &rate)) != 0 || (rc = eval_need(a, 3, &lo, NULL)) != 0 ||
        (rc = eval_need(a, 4, &hi, NULL)) != 0 || (rc = out_dtype(a, &dt)) != 0)
        return rc;
    if (bins < 1 || dft_len < 1 || rate < 1 || ph_tensor_numel(lo) != 1 || ph_tensor_numel(hi) != 1)
        return eval_kfail(a, PH_EINVAL, "num_mel_bins, dft_length and sample_rate must be positive");
    int64_t spec = dft_len / 2 + 1, od[2] = {spec, bins};
    double lmel = 2595 * log10(1 + scalar_f64(lo) / 700), hmel = 2595 * log10(1 + scalar_f64(hi) / 700);
    double step = (hmel - lmel) / (double)(bins + 2);
    int64_t *fb = malloc((size_t)(bins + 2) * sizeof *fb);
    double *m = calloc((size_t)(spec * bins), sizeof *m);
    if (!fb || !m) {
        free(fb);
        free(m);
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    }
    for (int64_t i = 0; i < bins + 2; i++) {
        double hz = 700 * (pow(10, ((double)i * step + lmel) / 2595) - 1);
        fb[i] = eval_coord(floor((double)(dft_len + 1) * hz / (double)rate));
    }
    rc = 0;
    for (int64_t i = 0; i < bins && !rc; i++) {
        int64_t l = fb[i], c = fb[i + 1], h = fb[i + 2];
        if (l < 0 || h >= spec + 1 || c < 0 || c >= spec) {
            rc = eval_kfail(a, PH_EINVAL, "the mel bands fall outside the spectrogram's %lld bins", (long long)spec);
            break;
        }
        if (c == l)
            m[c * bins + i] = 1;
        else
            for (int64_t j = l; j <= c; j++)
                m[j * bins + i] = (double)(j - l) / (double)(c - l);
        for (int64_t j = c; j < h && j < spec; j++)
            m[j * bins + i] = (double)(h - j) / (double)(h - c);
    }
    void *o;
    if (!rc && (rc = eval_out(a, 0, dt, 2, od, &o)) == 0 && o)
        for (int64_t e = 0; e < spec * bins; e++)
            eval_store_f64(o, dt, (size_t)e, m[e]);
    free(fb);
    free(m);
    return rc;
}
