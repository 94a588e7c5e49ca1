/* sdk/src/eval/eval_ms_contrib.c - the ONNX Runtime com.microsoft ops that
 * passhost's adapt passes emit (target ort): FusedConv, FusedGemm,
 * FusedMatMul, Gelu, FastGelu, SkipLayerNormalization (float, double;
 * halves through float), so --verify runs on their output.
 *
 * FusedConv / FusedGemm are the default-domain Conv / Gemm kernels on the
 * same attributes, then the activation: FusedConv's activation_params
 * ([alpha] LeakyRelu, [alpha, beta] HardSigmoid, [min, max] Clip), FusedGemm's
 * activation_alpha / _beta / _gamma (ONNX's defaults when absent).
 * FusedMatMul: alpha * op(A) op(B), op swapping the last two dims when
 * transA / transB (transBatchA / transBatchB are refused).  Gelu:
 * 0.5 x (1 + erf(x / sqrt 2)); FastGelu: the tanh approximation of x +
 * bias.  SkipLayerNormalization: s = input + skip (+ bias); output =
 * LayerNorm(s) over the last dim times gamma (+ beta), epsilon default
 * 1e-12; the optional outputs are the mean and 1 / stddev ([..., 1]) and s.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_more.h"
#include "eval_nn.h"

/* ------------------------------------------------------------ activations */

typedef struct ms_act {
    int kind;
    double alpha, beta, gamma;
} ms_act;

enum { MA_NONE, MA_RELU, MA_LEAKY, MA_SIGMOID, MA_TANH, MA_CLIP, MA_HSIG, MA_SOFTSIGN, MA_SOFTPLUS, MA_ELU,
       MA_THRESH, MA_SELU };

static double ms_apply(const ms_act *f, double x)
{
    switch (f->kind) {
    case MA_RELU: return x > 0 ? x : 0;
    case MA_LEAKY: return x >= 0 ? x : f->alpha * x;
    case MA_SIGMOID: return 1 / (1 + exp(-x));
    case MA_TANH: return tanh(x);
    case MA_CLIP: return x < f->alpha ? f->alpha : x > f->beta ? f->beta : x;
    case MA_HSIG: { double v = f->alpha * x + f->beta; return v < 0 ? 0 : v > 1 ? 1 : v; }
    case MA_SOFTSIGN: return x / (1 + fabs(x));
    case MA_SOFTPLUS: return log1p(exp(x));
    case MA_ELU: return x >= 0 ? x : f->alpha * (exp(x) - 1);
    case MA_THRESH: return x > f->alpha ? x : 0;
    case MA_SELU: return x > 0 ? f->gamma * x : f->gamma * (f->alpha * exp(x) - f->alpha);
    default: return x;
    }
}

/* The activation attribute; `fused_conv`: parameters from activation_params,
 * else from activation_alpha/beta/gamma. */
static int ms_read_act(eval_kargs *a, int fused_conv, ms_act *f)
{
    static const struct { const char *name; int kind; double a, b, g; } tab[] = {
        {"Relu", MA_RELU, 0, 0, 0}, {"LeakyRelu", MA_LEAKY, 0.01, 0, 0}, {"Sigmoid", MA_SIGMOID, 0, 0, 0},
        {"Tanh", MA_TANH, 0, 0, 0}, {"Clip", MA_CLIP, -FLT_MAX, FLT_MAX, 0}, {"HardSigmoid", MA_HSIG, 0.2, 0.5, 0},
        {"Softsign", MA_SOFTSIGN, 0, 0, 0}, {"Softplus", MA_SOFTPLUS, 0, 0, 0}, {"Elu", MA_ELU, 1, 0, 0},
        {"ThresholdedRelu", MA_THRESH, 1, 0, 0},
        {"Selu", MA_SELU, 1.67326319217681884765625, 0, 1.05070102214813232421875},
    };
    const char *name = ph_node_attr_string(a->node, "activation", "");
    f->kind = MA_NONE;
    if (!name[0])
        return 0;
    size_t k = 0;
    while (k < sizeof tab / sizeof tab[0] && strcmp(tab[k].name, name))
        k++;
    if (k == sizeof tab / sizeof tab[0])
        return eval_kfail(a, PH_EUNSUPPORTED, "activation '%s' is not supported", name);
    f->kind = tab[k].kind;
    f->alpha = tab[k].a, f->beta = tab[k].b, f->gamma = tab[k].g;
    if (fused_conv) {
        const float *p;
        ptrdiff_t n = ph_node_attr_floats(a->node, "activation_params", &p);
        if (n >= 1)
            f->alpha = p[0];
        if (n >= 2)
            f->beta = p[1];
    } else {
        f->alpha = ph_node_attr_float(a->node, "activation_alpha", (float)f->alpha);
        f->beta = ph_node_attr_float(a->node, "activation_beta", (float)f->beta);
        f->gamma = ph_node_attr_float(a->node, "activation_gamma", (float)f->gamma);
    }
    return 0;
}

/* Output 0 = act(t) (t is taken over). */
static int ms_out_act(eval_kargs *a, ph_tensor *t, const ms_act *f)
{
    int dt = ph_tensor_dtype(t);
    void *d = ir_tensor_mut(t);
    int64_t n = ph_tensor_numel(t);
    for (int64_t e = 0; f->kind != MA_NONE && e < n; e++)
        eval_store_f64(d, dt, (size_t)e, ms_apply(f, eval_load_f64(d, dt, (size_t)e)));
    if (eval_wanted(a, 0))
        a->out[0] = t;
    else
        ph_tensor_free(t);
    return 0;
}

int eval_k_ms_fused_conv(eval_kargs *a)
{
    ms_act f;
    ph_tensor *t;
    int rc = ms_read_act(a, 1, &f);
    if (rc || (rc = eval_k_call(a, eval_k_conv, a->in, a->n_in < 3 ? a->n_in : 3, &t)) != 0)
        return rc;
    return ms_out_act(a, t, &f);
}

int eval_k_ms_fused_gemm(eval_kargs *a)
{
    ms_act f;
    ph_tensor *t;
    int rc = ms_read_act(a, 0, &f);
    if (rc || (rc = eval_k_call(a, eval_k_gemm, a->in, a->n_in, &t)) != 0)
        return rc;
    return ms_out_act(a, t, &f);
}

/* ------------------------------------------------------------ FusedMatMul */

/* x with its last two dims swapped (a new tensor). */
static ph_tensor *swap_last(const ph_tensor *x)
{
    size_t r = ph_tensor_rank(x), es = ph_dtype_size(ph_tensor_dtype(x));
    int64_t d[EVAL_MAX_RANK], st[EVAL_MAX_RANK];
    memcpy(d, ph_tensor_dims(x), r * sizeof *d);
    eval_strides(r, d, st);
    int64_t t = d[r - 1];
    d[r - 1] = d[r - 2];
    d[r - 2] = t;
    t = st[r - 1];
    st[r - 1] = st[r - 2];
    st[r - 2] = t;
    ph_tensor *o = ir_tensor_alloc(ph_tensor_dtype(x), r, d);
    if (o)
        eval_copy_strided(ir_tensor_mut(o), ph_tensor_data(x), es, r, d, st);
    return o;
}

int eval_k_ms_fused_matmul(eval_kargs *a)
{
    const ph_tensor *x[2];
    ph_tensor *own[2] = {NULL, NULL};
    int rc;
    if ((rc = eval_need(a, 0, &x[0], NULL)) != 0 || (rc = eval_need(a, 1, &x[1], NULL)) != 0)
        return rc;
    if (ph_node_attr_int(a->node, "transBatchA", 0) || ph_node_attr_int(a->node, "transBatchB", 0))
        return eval_kfail(a, PH_EUNSUPPORTED, "transBatchA and transBatchB are not supported");
    for (int k = 0; k < 2; k++) {
        if (!ph_node_attr_int(a->node, k ? "transB" : "transA", 0))
            continue;
        if (ph_tensor_rank(x[k]) < 2 || ph_tensor_rank(x[k]) > EVAL_MAX_RANK) {
            rc = eval_kfail(a, PH_EUNSUPPORTED, "a transposed operand must have rank 2 to %d", EVAL_MAX_RANK);
            goto done;
        }
        if (!(own[k] = swap_last(x[k]))) {
            rc = eval_kfail(a, PH_ENOMEM, "out of memory");
            goto done;
        }
        x[k] = own[k];
    }
    ph_tensor *t;
    if ((rc = eval_k_call(a, eval_k_matmul, x, 2, &t)) != 0)
        goto done;
    double alpha = ph_node_attr_float(a->node, "alpha", 1.0f);
    if (alpha != 1 && eval_dt_float(ph_tensor_dtype(t))) {
        void *d = ir_tensor_mut(t);
        for (int64_t e = 0; e < ph_tensor_numel(t); e++)
            eval_store_f64(d, ph_tensor_dtype(t), (size_t)e, alpha * eval_load_f64(d, ph_tensor_dtype(t), (size_t)e));
    }
    ms_act none = {MA_NONE, 0, 0, 0};
    rc = ms_out_act(a, t, &none);
done:
    ph_tensor_free(own[0]);
    ph_tensor_free(own[1]);
    return rc;
}

/* ------------------------------------------------------------ Gelu, FastGelu */

static int gelu(eval_kargs *a, int fast)
{
    const ph_tensor *x, *b = fast ? eval_in(a, 1) : NULL;
    const void *xd, *bd = NULL;
    int rc = eval_need_float(a, 0, "X", &x, &xd);
    if (rc || (b && (rc = eval_need(a, 1, &b, &bd)) != 0))
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t r = ph_tensor_rank(x);
    int64_t nb = b ? ph_tensor_numel(b) : 0;
    if (b && (ph_tensor_rank(b) != 1 || r < 1 || nb != ph_tensor_dim(x, r - 1) || ph_tensor_dtype(b) != dt))
        return eval_kfail(a, PH_EINVAL, "bias must be 1-D of X's last dim");
    void *o;
    if ((rc = eval_out(a, 0, dt, r, ph_tensor_dims(x), &o)) != 0 || !o)
        return rc;
    int64_t n = ph_tensor_numel(x);
    for (int64_t e = 0; e < n; e++) {
        double v = eval_load_f64(xd, dt, (size_t)e) + (b ? eval_load_f64(bd, dt, (size_t)(e % nb)) : 0);
        double y = fast ? 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
                        : 0.5 * v * (1 + erf(v * 0.7071067811865476));
        eval_store_f64(o, dt, (size_t)e, y);
    }
    return 0;
}

int eval_k_ms_gelu(eval_kargs *a)
{
    return gelu(a, 0);
}

int eval_k_ms_fast_gelu(eval_kargs *a)
{
    return gelu(a, 1);
}

/* ------------------------------------------------------------ SkipLayerNormalization */

int eval_k_ms_skip_layer_norm(eval_kargs *a)
{
    const ph_tensor *x, *s, *g, *be = eval_in(a, 3), *bi = eval_in(a, 4);
    const void *xd, *sd, *gd, *bed = NULL, *bid = NULL;
    int rc;
    if ((rc = eval_need_float(a, 0, "input", &x, &xd)) != 0 || (rc = eval_need(a, 1, &s, &sd)) != 0 ||
        (rc = eval_need(a, 2, &g, &gd)) != 0 || (be && (rc = eval_need(a, 3, &be, &bed)) != 0) ||
        (bi && (rc = eval_need(a, 4, &bi, &bid)) != 0))
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t r = ph_tensor_rank(x);
    int64_t H = r ? ph_tensor_dim(x, r - 1) : 0, n = ph_tensor_numel(x);
    if (r < 1 || H < 1 || ph_tensor_numel(s) != n || ph_tensor_dtype(s) != dt || ph_tensor_numel(g) != H ||
        (be && ph_tensor_numel(be) != H) || (bi && ph_tensor_numel(bi) != H))
        return eval_kfail(a, PH_EINVAL, "skip must match input, gamma, beta and bias have its last dim");
    double eps = ph_node_attr_float(a->node, "epsilon", 1e-12f);
    int64_t md[EVAL_MAX_RANK];
    if (r > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EUNSUPPORTED, "rank %zu", r);
    memcpy(md, ph_tensor_dims(x), r * sizeof *md);
    md[r - 1] = 1;
    void *o, *om, *oi, *os;
    if ((rc = eval_out(a, 0, dt, r, ph_tensor_dims(x), &o)) != 0 || (rc = eval_out(a, 1, dt, r, md, &om)) != 0 ||
        (rc = eval_out(a, 2, dt, r, md, &oi)) != 0 || (rc = eval_out(a, 3, dt, r, ph_tensor_dims(x), &os)) != 0)
        return rc;
    double *row = malloc((size_t)H * sizeof *row);
    if (!row)
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    for (int64_t i = 0; i < n / H; i++) {
        double sum = 0, sq = 0;
        for (int64_t k = 0; k < H; k++) {
            size_t e = (size_t)(i * H + k);
            row[k] = eval_load_f64(xd, dt, e) + eval_load_f64(sd, dt, e) + (bid ? eval_load_f64(bid, ph_tensor_dtype(bi), (size_t)k) : 0);
            sum += row[k];
            if (os)
                eval_store_f64(os, dt, e, row[k]);
        }
        double mean = sum / (double)H;
        for (int64_t k = 0; k < H; k++)
            sq += (row[k] - mean) * (row[k] - mean);
        double inv = 1 / sqrt(sq / (double)H + eps);
        for (int64_t k = 0; k < H && o; k++)
            eval_store_f64(o, dt, (size_t)(i * H + k),
                          (row[k] - mean) * inv * eval_load_f64(gd, ph_tensor_dtype(g), (size_t)k) +
                              (bed ? eval_load_f64(bed, ph_tensor_dtype(be), (size_t)k) : 0));
        if (om)
            eval_store_f64(om, dt, (size_t)i, mean);
        if (oi)
            eval_store_f64(oi, dt, (size_t)i, inv);
    }
    free(row);
    return 0;
}
