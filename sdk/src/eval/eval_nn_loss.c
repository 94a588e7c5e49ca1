/* sdk/src/eval/eval_nn_loss.c - NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (float, double; halves through float).
 *
 * Input [N, C, d1...], target [N, d1...] of integer class indices,
 * optional weight [C].  The per-element loss is -input[n, target, d...]
 * (for SoftmaxCrossEntropyLoss, of the log-softmax of the scores over C)
 * times the weight of the target class; a target equal to ignore_index
 * contributes 0 and weighs 0.  reduction none gives the per-element loss
 * of target's shape; sum its sum; mean its sum divided by the sum of the
 * weights of the targets (with neither weight nor ignore_index: the element
 * count), as the ONNX reference computes.  SoftmaxCrossEntropyLoss's second
 * output is the log-softmax itself.  Sums are taken in double.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_more.h"

static int loss(eval_kargs *a, int softmax)
{
    const ph_tensor *x, *t, *w = eval_in(a, 2);
    const void *xd, *td, *wd = NULL;
    int rc;
    if ((rc = eval_need_float(a, 0, "input", &x, &xd)) != 0 || (rc = eval_need(a, 1, &t, &td)) != 0 ||
        (w && (rc = eval_need(a, 2, &w, &wd)) != 0))
        return rc;
    int dt = ph_tensor_dtype(x), tdt = ph_tensor_dtype(t);
    if (!eval_dt_int(tdt))
        return eval_kbad_dtype(a, "target", tdt);
    size_t r = ph_tensor_rank(x);
    if (r < 2 || ph_tensor_rank(t) != r - 1)
        return eval_kfail(a, PH_EINVAL, "input must be [N, C, ...] and target [N, ...]");
    int64_t N = ph_tensor_dim(x, 0), C = ph_tensor_dim(x, 1), D = eval_numel(r - 2, ph_tensor_dims(x) + 2);
    if (ph_tensor_dim(t, 0) != N)
        return eval_kfail(a, PH_EINVAL, "target's batch differs from input's");
    for (size_t i = 2; i < r; i++)
        if (ph_tensor_dim(t, i - 1) != ph_tensor_dim(x, i))
            return eval_kfail(a, PH_EINVAL, "target dim %zu differs from input's", i - 1);
    if (w && (ph_tensor_rank(w) != 1 || ph_tensor_dim(w, 0) != C || ph_tensor_dtype(w) != dt))
        return eval_kfail(a, PH_EINVAL, "weight must be [C] of the input's dtype");
    const char *red = ph_node_attr_string(a->node, "reduction", "mean");
    int mode = !strcmp(red, "none") ? 0 : !strcmp(red, "sum") ? 1 : !strcmp(red, "mean") ? 2 : -1;
    if (mode < 0)
        return eval_kfail(a, PH_EINVAL, "reduction '%s' is not none, sum or mean", red);
    int has_ignore = ph_node_attr_type(a->node, "ignore_index") != PH_ATTR_NONE;
    int64_t ignore = ph_node_attr_int(a->node, "ignore_index", 0);
    /* log-probabilities: the input itself, or its log-softmax over C */
    double *lp = NULL;
    int64_t nx = ph_tensor_numel(x);
    if (softmax) {
        if (!(lp = malloc((size_t)(nx ? nx : 1) * sizeof *lp)))
            return eval_kfail(a, PH_ENOMEM, "out of memory");
        for (int64_t n = 0; n < N; n++)
            for (int64_t d = 0; d < D; d++) {
                double mx = -INFINITY, s = 0;
                for (int64_t c = 0; c < C; c++) {
                    double v = eval_load_f64(xd, dt, (size_t)((n * C + c) * D + d));
                    mx = v > mx ? v : mx;
                }
                for (int64_t c = 0; c < C; c++)
                    s += exp(eval_load_f64(xd, dt, (size_t)((n * C + c) * D + d)) - mx);
                for (int64_t c = 0; c < C; c++) {
                    size_t e = (size_t)((n * C + c) * D + d);
                    lp[e] = eval_load_f64(xd, dt, e) - mx - log(s);
                }
            }
    }
    int64_t nt = N * D;
    double *l = malloc((size_t)(nt ? nt : 1) * sizeof *l), wsum = 0, lsum = 0;
    if (!l) {
        free(lp);
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++) {
            int64_t c = eval_load_i64(td, tdt, (size_t)(n * D + d));
            double wt = 1, v = 0;
            if (has_ignore && c == ignore) {
                wt = 0;
            } else {
                if (c < 0 || c >= C) {
                    free(lp);
                    free(l);
                    return eval_kfail(a, PH_EINVAL, "target %lld is outside [0, %lld)", (long long)c, (long long)C);
                }
                size_t e = (size_t)((n * C + c) * D + d);
                if (wd)
                    wt = eval_load_f64(wd, dt, (size_t)c);
                v = -(lp ? lp[e] : eval_load_f64(xd, dt, e)) * wt;
            }
            l[n * D + d] = v;
            lsum += v;
            wsum += wt;
        }
    void *o;
    if (mode == 0)
        rc = eval_out(a, 0, dt, r - 1, ph_tensor_dims(t), &o);
    else
        rc = eval_out(a, 0, dt, 0, NULL, &o);
    if (!rc && o) {
        if (mode == 0)
            for (int64_t i = 0; i < nt; i++)
                eval_store_f64(o, dt, (size_t)i, l[i]);
        else
            eval_store_f64(o, dt, 0, mode == 1 ? lsum : lsum / wsum);
    }
    if (!rc && softmax && eval_wanted(a, 1)) {
        void *p;
        if ((rc = eval_out(a, 1, dt, r, ph_tensor_dims(x), &p)) == 0 && p)
            for (int64_t i = 0; i < nx; i++)
                eval_store_f64(p, dt, (size_t)i, lp[i]);
    }
    free(lp);
    free(l);
    return rc;
}

int eval_k_nll_loss(eval_kargs *a)
{
    return loss(a, 0);
}

int eval_k_softmax_cross_entropy_loss(eval_kargs *a)
{
    return loss(a, 1);
}
