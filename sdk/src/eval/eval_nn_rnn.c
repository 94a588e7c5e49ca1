/* sdk/src/eval/eval_nn_rnn.c - RNN, GRU and LSTM (float, double; halves
 * through float), computed in double.
 *
 * Every direction (forward, reverse, bidirectional), the activations
 * attribute with activation_alpha / activation_beta (Relu, Tanh, Sigmoid,
 * Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu,
 * Softsign, Softplus), clip, sequence_lens (steps past a batch entry's
 * length give zeros in Y, and Y_h / Y_c keep the state of its last step),
 * initial_h / initial_c, LSTM peepholes P and input_forget, GRU
 * linear_before_reset, and layout 1 (batch first, opset 14).
 *
 * Gate layouts as the spec gives them: W [dirs, G*H, I], R [dirs, G*H, H],
 * B [dirs, 2*G*H] (the W biases then the R biases); LSTM gates i, o, f, c
 * and peepholes i, o, f; GRU gates z, r, h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval_more.h"

enum { RNN_PLAIN, RNN_GRU, RNN_LSTM };

typedef struct act {
    int kind;
    double alpha, beta;
} act;

enum { A_RELU, A_TANH, A_SIGMOID, A_AFFINE, A_LEAKY, A_THRESH, A_STANH, A_HSIG, A_ELU, A_SOFTSIGN, A_SOFTPLUS };

static double act_apply(const act *f, double x)
{
    switch (f->kind) {
    case A_RELU: return x > 0 ? x : 0;
    case A_TANH: return tanh(x);
    case A_SIGMOID: return 1 / (1 + exp(-x));
    case A_AFFINE: return f->alpha * x + f->beta;
    case A_LEAKY: return x >= 0 ? x : f->alpha * x;
    case A_THRESH: return x > f->alpha ? x : 0;
    case A_STANH: return f->alpha * tanh(f->beta * x);
    case A_HSIG: { double v = f->alpha * x + f->beta; return v < 0 ? 0 : v > 1 ? 1 : v; }
    case A_ELU: return x >= 0 ? x : f->alpha * (exp(x) - 1);
    case A_SOFTSIGN: return x / (1 + fabs(x));
    default: return log1p(exp(x)); /* Softplus */
    }
}

/* The activation functions: n per direction (RNN 1, GRU 2, LSTM 3). */
static int read_acts(eval_kargs *a, int kind, size_t dirs, act *out)
{
    static const char *const dflt[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    size_t per = kind == RNN_PLAIN ? 1 : kind == RNN_GRU ? 2 : 3, need = per * dirs;
    const Onnx__AttributeProto *at = ir_node_find_attr(a->node, "activations");
    const float *al = NULL, *be = NULL;
    ptrdiff_t nal = ph_node_attr_floats(a->node, "activation_alpha", &al);
    ptrdiff_t nbe = ph_node_attr_floats(a->node, "activation_beta", &be);
    size_t ia = 0, ib = 0;
    if (at && at->n_strings != need)
        return eval_kfail(a, PH_EINVAL, "activations has %zu entries, expected %zu", at->n_strings, need);
    for (size_t i = 0; i < need; i++) {
        char name[32];
        if (at)
            snprintf(name, sizeof name, "%.*s", (int)(at->strings[i].len < 31 ? at->strings[i].len : 31),
                     (const char *)at->strings[i].data);
        else
            snprintf(name, sizeof name, "%s", dflt[kind][i % per]);
        static const struct { const char *name; int kind, na, nb; double a, b; } tab[] = {
            {"relu", A_RELU, 0, 0, 0, 0},          {"tanh", A_TANH, 0, 0, 0, 0},
            {"sigmoid", A_SIGMOID, 0, 0, 0, 0},    {"affine", A_AFFINE, 1, 1, 1, 0},
            {"leakyrelu", A_LEAKY, 1, 0, 0.01, 0}, {"thresholdedrelu", A_THRESH, 1, 0, 1, 0},
            {"scaledtanh", A_STANH, 1, 1, 1, 1},   {"hardsigmoid", A_HSIG, 1, 1, 0.2, 0.5},
            {"elu", A_ELU, 1, 0, 1, 0},            {"softsign", A_SOFTSIGN, 0, 0, 0, 0},
            {"softplus", A_SOFTPLUS, 0, 0, 0, 0},
        };
        size_t k = 0;
        while (k < sizeof tab / sizeof tab[0] && strcasecmp(tab[k].name, name))
            k++;
        if (k == sizeof tab / sizeof tab[0])
            return eval_kfail(a, PH_EUNSUPPORTED, "activation '%s' is not supported", name);
        out[i].kind = tab[k].kind;
        out[i].alpha = tab[k].a;
        out[i].beta = tab[k].b;
        if (tab[k].na && nal > 0 && ia < (size_t)nal)
            out[i].alpha = al[ia++];
        if (tab[k].nb && nbe > 0 && ib < (size_t)nbe)
            out[i].beta = be[ib++];
    }
    return 0;
}

/* Optional input i as a double array of n elements (NULL when omitted);
 * *buf gets the allocation to free. */
static int load_opt(eval_kargs *a, size_t i, int64_t n, double **buf)
{
    const ph_tensor *t = eval_in(a, i);
    *buf = NULL;
    if (!t)
        return 0;
    const void *d;
    int rc = eval_need(a, i, &t, &d);
    if (rc)
        return rc;
    if (ph_tensor_numel(t) != n)
        return eval_kfail(a, PH_EINVAL, "input %zu has %lld elements, expected %lld", i,
                         (long long)ph_tensor_numel(t), (long long)n);
    if (!(*buf = malloc((size_t)(n ? n : 1) * sizeof **buf)))
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    for (int64_t k = 0; k < n; k++)
        (*buf)[k] = eval_load_f64(d, ph_tensor_dtype(t), (size_t)k);
    return 0;
}

static double clipv(double x, double c)
{
    return c > 0 ? (x > c ? c : x < -c ? -c : x) : x;
}

static int recurrent(eval_kargs *a, int kind)
{
    const ph_tensor *x, *w, *rt;
    const void *xd, *wd, *rd;
    int rc;
    if ((rc = eval_need_float(a, 0, "X", &x, &xd)) != 0 || (rc = eval_need(a, 1, &w, &wd)) != 0 ||
        (rc = eval_need(a, 2, &rt, &rd)) != 0)
        return rc;
    int dt = ph_tensor_dtype(x);
    const char *dir = ph_node_attr_string(a->node, "direction", "forward");
    int bidi = !strcmp(dir, "bidirectional"), rev = !strcmp(dir, "reverse");
    if (!bidi && !rev && strcmp(dir, "forward"))
        return eval_kfail(a, PH_EINVAL, "direction '%s' is not forward, reverse or bidirectional", dir);
    size_t dirs = bidi ? 2 : 1, G = kind == RNN_PLAIN ? 1 : kind == RNN_GRU ? 3 : 4;
    int layout = (int)ph_node_attr_int(a->node, "layout", 0);
    if (ph_tensor_rank(x) != 3 || ph_tensor_rank(w) != 3 || ph_tensor_rank(rt) != 3)
        return eval_kfail(a, PH_EINVAL, "X, W and R must be 3-D");
    int64_t S = ph_tensor_dim(x, layout ? 1 : 0), Bn = ph_tensor_dim(x, layout ? 0 : 1), I = ph_tensor_dim(x, 2);
    int64_t H = ph_node_attr_int(a->node, "hidden_size", ph_tensor_dim(rt, 2));
    if (ph_tensor_dim(w, 0) != (int64_t)dirs || ph_tensor_dim(w, 1) != (int64_t)G * H || ph_tensor_dim(w, 2) != I ||
        ph_tensor_dim(rt, 0) != (int64_t)dirs || ph_tensor_dim(rt, 1) != (int64_t)G * H || ph_tensor_dim(rt, 2) != H)
        return eval_kfail(a, PH_EINVAL, "W or R do not match %zu direction(s), %zu gates, hidden %lld, input %lld",
                         dirs, G, (long long)H, (long long)I);
    double clip = ph_node_attr_float(a->node, "clip", 0);
    int lbr = kind == RNN_GRU && ph_node_attr_int(a->node, "linear_before_reset", 0) != 0;
    int in_forget = kind == RNN_LSTM && ph_node_attr_int(a->node, "input_forget", 0) != 0;
    act acts[6];
    if ((rc = read_acts(a, kind, dirs, acts)) != 0)
        return rc;
    size_t per = kind == RNN_PLAIN ? 1 : kind == RNN_GRU ? 2 : 3;
    double *B = NULL, *h0 = NULL, *c0 = NULL, *P = NULL;
    int64_t *lens = NULL;
    double *h = NULL, *c = NULL, *g = NULL, *Y = NULL, *hlast = NULL, *clast = NULL;
    const ph_tensor *lt = eval_in(a, 4);
    if ((rc = load_opt(a, 3, (int64_t)dirs * 2 * (int64_t)G * H, &B)) != 0 ||
        (rc = load_opt(a, 5, (int64_t)dirs * Bn * H, &h0)) != 0 ||
        (kind == RNN_LSTM && (rc = load_opt(a, 6, (int64_t)dirs * Bn * H, &c0)) != 0) ||
        (kind == RNN_LSTM && (rc = load_opt(a, 7, (int64_t)dirs * 3 * H, &P)) != 0))
        goto done;
    if (!(lens = malloc((size_t)(Bn ? Bn : 1) * sizeof *lens))) {
        rc = eval_kfail(a, PH_ENOMEM, "out of memory");
        goto done;
    }
    for (int64_t b = 0; b < Bn; b++)
        lens[b] = S;
    if (lt) {
        const void *ld;
        if ((rc = eval_need(a, 4, &lt, &ld)) != 0)
            goto done;
        if (ph_tensor_numel(lt) != Bn) {
            rc = eval_kfail(a, PH_EINVAL, "sequence_lens must have one entry per batch entry");
            goto done;
        }
        for (int64_t b = 0; b < Bn; b++) {
            lens[b] = eval_load_i64(ld, ph_tensor_dtype(lt), (size_t)b);
            if (lens[b] < 0 || lens[b] > S) {
                rc = eval_kfail(a, PH_EINVAL, "sequence length %lld is outside [0, %lld]", (long long)lens[b],
                               (long long)S);
                goto done;
            }
        }
    }
    size_t nY = (size_t)(S * (int64_t)dirs * Bn * H), nH = (size_t)((int64_t)dirs * Bn * H);
    h = malloc((size_t)H * sizeof *h);
    c = malloc((size_t)H * sizeof *c);
    g = malloc((size_t)(G * (size_t)H) * 2 * sizeof *g);
    Y = calloc(nY ? nY : 1, sizeof *Y);
    hlast = calloc(nH ? nH : 1, sizeof *hlast);
    clast = calloc(nH ? nH : 1, sizeof *clast);
    if (!h || !c || !g || !Y || !hlast || !clast) {
        rc = eval_kfail(a, PH_ENOMEM, "out of memory");
        goto done;
    }
    double *gr = g + G * (size_t)H; /* the R part of the gates (GRU needs it apart) */
    for (size_t d = 0; d < dirs; d++) {
        int backward = rev || d == 1;
        const act *f = &acts[d * per];
        for (int64_t b = 0; b < Bn; b++) {
            for (int64_t k = 0; k < H; k++) {
                /* initial_h is [dirs, batch, H], or [batch, dirs, H] with layout 1 */
                size_t ih = layout ? (size_t)((b * (int64_t)dirs + (int64_t)d) * H + k)
                                   : (size_t)(((int64_t)d * Bn + b) * H + k);
                h[k] = h0 ? h0[ih] : 0;
                c[k] = c0 ? c0[ih] : 0;
            }
            for (int64_t step = 0; step < lens[b]; step++) {
                int64_t t = backward ? lens[b] - 1 - step : step;
                size_t xo = layout ? (size_t)((b * S + t) * I) : (size_t)((t * Bn + b) * I);
                for (size_t q = 0; q < G * (size_t)H; q++) {
                    double sw = B ? B[d * 2 * G * (size_t)H + q] : 0, sr = B ? B[(d * 2 + 1) * G * (size_t)H + q] : 0;
                    size_t wo = (d * G * (size_t)H + q) * (size_t)I, ro = (d * G * (size_t)H + q) * (size_t)H;
                    for (int64_t i = 0; i < I; i++)
                        sw += eval_load_f64(wd, dt, wo + (size_t)i) * eval_load_f64(xd, dt, xo + (size_t)i);
                    if (!(kind == RNN_GRU && q >= 2 * (size_t)H)) /* GRU's h gate reads r (.) h below */
                        for (int64_t i = 0; i < H; i++)
                            sr += eval_load_f64(rd, dt, ro + (size_t)i) * h[i];
                    g[q] = sw;
                    gr[q] = sr;
                }
                if (kind == RNN_PLAIN) {
                    for (int64_t k = 0; k < H; k++)
                        h[k] = act_apply(&f[0], clipv(g[k] + gr[k], clip));
                } else if (kind == RNN_GRU) {
                    double *z = g, *r = g + H, *hh = g + 2 * H;
                    for (int64_t k = 0; k < H; k++) {
                        z[k] = act_apply(&f[0], clipv(z[k] + gr[k], clip));
                        r[k] = act_apply(&f[0], clipv(r[k] + gr[H + k], clip));
                    }
                    for (int64_t k = 0; k < H; k++) {
                        size_t ro = (d * G * (size_t)H + 2 * (size_t)H + (size_t)k) * (size_t)H;
                        double rb = B ? B[(d * 2 + 1) * G * (size_t)H + 2 * (size_t)H + (size_t)k] : 0, s = 0;
                        for (int64_t i = 0; i < H; i++)
                            s += eval_load_f64(rd, dt, ro + (size_t)i) * (lbr ? h[i] : r[i] * h[i]);
                        gr[2 * H + k] = lbr ? r[k] * (s + rb) : s + rb;
                    }
                    for (int64_t k = 0; k < H; k++) {
                        double cand = act_apply(&f[1], clipv(hh[k] + gr[2 * H + k], clip));
                        h[k] = (1 - z[k]) * cand + z[k] * h[k];
                    }
                } else {
                    double *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
                    for (int64_t k = 0; k < H; k++) {
                        double pi = P ? P[d * 3 * (size_t)H + (size_t)k] : 0, po = P ? P[d * 3 * (size_t)H + (size_t)(H + k)] : 0,
                               pf = P ? P[d * 3 * (size_t)H + (size_t)(2 * H + k)] : 0;
                        double it = act_apply(&f[0], clipv(gi[k] + gr[k] + pi * c[k], clip));
                        double ft = in_forget ? 1 - it : act_apply(&f[0], clipv(gf[k] + gr[2 * H + k] + pf * c[k], clip));
                        double ct = act_apply(&f[1], clipv(gc[k] + gr[3 * H + k], clip));
                        c[k] = ft * c[k] + it * ct;
                        double ot = act_apply(&f[0], clipv(go[k] + gr[H + k] + po * c[k], clip));
                        h[k] = ot * act_apply(&f[2], c[k]);
                    }
                }
                for (int64_t k = 0; k < H; k++) /* Y [S, dirs, B, H] here; layout 1 written below */
                    Y[(size_t)(((t * (int64_t)dirs + (int64_t)d) * Bn + b) * H + k)] = h[k];
            }
            for (int64_t k = 0; k < H; k++) {
                hlast[(size_t)(((int64_t)d * Bn + b) * H + k)] = h[k];
                clast[(size_t)(((int64_t)d * Bn + b) * H + k)] = c[k];
            }
        }
    }
    /* outputs: Y, Y_h (and Y_c) */
    void *o;
    int64_t yd[4] = {S, (int64_t)dirs, Bn, H}, hd[3] = {(int64_t)dirs, Bn, H};
    if (layout) {
        yd[0] = Bn, yd[1] = S, yd[2] = (int64_t)dirs;
        hd[0] = Bn, hd[1] = (int64_t)dirs;
    }
    if ((rc = eval_out(a, 0, dt, 4, yd, &o)) != 0)
        goto done;
    if (o)
        for (int64_t t = 0; t < S; t++)
            for (size_t d = 0; d < dirs; d++)
                for (int64_t b = 0; b < Bn; b++)
                    for (int64_t k = 0; k < H; k++) {
                        size_t src = (size_t)(((t * (int64_t)dirs + (int64_t)d) * Bn + b) * H + k);
                        size_t dst = layout ? (size_t)(((b * S + t) * (int64_t)dirs + (int64_t)d) * H + k) : src;
                        eval_store_f64(o, dt, dst, Y[src]);
                    }
    for (size_t out = 1; out < (kind == RNN_LSTM ? 3u : 2u); out++) {
        const double *src = out == 1 ? hlast : clast;
        if ((rc = eval_out(a, out, dt, 3, hd, &o)) != 0)
            goto done;
        if (o)
            for (size_t d = 0; d < dirs; d++)
                for (int64_t b = 0; b < Bn; b++)
                    for (int64_t k = 0; k < H; k++) {
                        size_t s = (size_t)(((int64_t)d * Bn + b) * H + k);
                        size_t dst = layout ? (size_t)((b * (int64_t)dirs + (int64_t)d) * H + k) : s;
                        eval_store_f64(o, dt, dst, src[s]);
                    }
    }
done:
    free(B);
    free(h0);
    free(c0);
    free(P);
    free(lens);
    free(h);
    free(c);
    free(g);
    free(Y);
    free(hlast);
    free(clast);
    return rc;
}

int eval_k_rnn(eval_kargs *a)
{
    return recurrent(a, RNN_PLAIN);
}

int eval_k_gru(eval_kargs *a)
{
    return recurrent(a, RNN_GRU);
}

int eval_k_lstm(eval_kargs *a)
{
    return recurrent(a, RNN_LSTM);
}
