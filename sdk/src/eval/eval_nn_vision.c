/* sdk/src/eval/eval_nn_vision.c - detection and sampling ops:
 * NonMaxSuppression, RoiAlign, GridSample, MaxUnpool, Upsample (float,
 * double; halves through float), computed in double.
 *
 * NonMaxSuppression: per batch and class, boxes scoring above
 * score_threshold in decreasing score order (ties: the lower index first),
 * each kept unless its IoU with a kept box exceeds iou_threshold, at most
 * max_output_boxes_per_class of them; corners may come in either order
 * (center_point_box 0) or as centre and size (1).
 * RoiAlign: average or max of bilinear samples per bin, as ONNX Runtime
 * computes it (max of the weighted corner values for mode max), with the
 * half_pixel coordinate mode of opset 16 or the output_half_pixel one.
 * GridSample: 2-D, modes bilinear/linear, nearest (rounding half to even),
 * bicubic/cubic (A = -0.75), padding zeros, border, reflection,
 * align_corners.
 * MaxUnpool: zeros, then each input value at its index into the flattened
 * output; the output shape from output_shape or from kernel, strides, pads.
 * Upsample (opsets 7-9): nearest (the floor of the asymmetric source
 * position) and linear, from the scales attribute or input.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_more.h"
#include "eval_nn.h"

/* ------------------------------------------------------------ NonMaxSuppression */

typedef struct nms_cand {
    double score;
    int64_t index;
} nms_cand;

static int nms_order(const void *x, const void *y)
{
    const nms_cand *a = x, *b = y;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Corners of box i as (x_min, y_min, x_max, y_max). */
static void nms_box(const void *bd, int dt, size_t i, int center, double *c)
{
    double v[4];
    for (int k = 0; k < 4; k++)
        v[k] = eval_load_f64(bd, dt, i * 4 + (size_t)k);
    if (center) {
        c[0] = v[0] - v[2] / 2, c[2] = v[0] + v[2] / 2;
        c[1] = v[1] - v[3] / 2, c[3] = v[1] + v[3] / 2;
    } else { /* [y1, x1, y2, x2], either corner first */
        c[0] = fmin(v[1], v[3]), c[2] = fmax(v[1], v[3]);
        c[1] = fmin(v[0], v[2]), c[3] = fmax(v[0], v[2]);
    }
}

static int nms_suppress(const double *p, const double *q, double thr)
{
    double ix0 = fmax(p[0], q[0]), ix1 = fmin(p[2], q[2]), iy0 = fmax(p[1], q[1]), iy1 = fmin(p[3], q[3]);
    if (ix1 <= ix0 || iy1 <= iy0)
        return 0;
    double inter = (ix1 - ix0) * (iy1 - iy0), a1 = (p[2] - p[0]) * (p[3] - p[1]), a2 = (q[2] - q[0]) * (q[3] - q[1]);
    double uni = a1 + a2 - inter;
    if (a1 <= 0 || a2 <= 0 || uni <= 0)
        return 0;
    return inter / uni > thr;
}

int eval_k_non_max_suppression(eval_kargs *a)
{
    const ph_tensor *bt, *st;
    const void *bd, *sd;
    int rc;
    if ((rc = eval_need_float(a, 0, "boxes", &bt, &bd)) != 0 || (rc = eval_need_float(a, 1, "scores", &st, &sd)) != 0)
        return rc;
    if (ph_tensor_rank(bt) != 3 || ph_tensor_dim(bt, 2) != 4 || ph_tensor_rank(st) != 3 ||
        ph_tensor_dim(st, 0) != ph_tensor_dim(bt, 0) || ph_tensor_dim(st, 2) != ph_tensor_dim(bt, 1))
        return eval_kfail(a, PH_EINVAL, "boxes must be [B, N, 4] and scores [B, C, N]");
    int64_t max_out = 0;
    double iou = 0, sthr = -INFINITY;
    const void *d;
    const ph_tensor *t;
    if (eval_in(a, 2) && ((rc = eval_need(a, 2, &t, &d)) != 0 || ph_tensor_numel(t) != 1))
        return rc ? rc : eval_kfail(a, PH_EINVAL, "max_output_boxes_per_class must be one value");
    if (eval_in(a, 2))
        max_out = eval_load_i64(d, ph_tensor_dtype(t), 0);
    if (eval_in(a, 3) && ((rc = eval_need(a, 3, &t, &d)) != 0 || ph_tensor_numel(t) != 1))
        return rc ? rc : eval_kfail(a, PH_EINVAL, "iou_threshold must be one value");
    if (eval_in(a, 3))
        iou = eval_load_f64(d, ph_tensor_dtype(t), 0);
    if (eval_in(a, 4) && ((rc = eval_need(a, 4, &t, &d)) != 0 || ph_tensor_numel(t) != 1))
        return rc ? rc : eval_kfail(a, PH_EINVAL, "score_threshold must be one value");
    if (eval_in(a, 4))
        sthr = eval_load_f64(d, ph_tensor_dtype(t), 0);
    int center = ph_node_attr_int(a->node, "center_point_box", 0) != 0;
    int64_t B = ph_tensor_dim(bt, 0), N = ph_tensor_dim(bt, 1), C = ph_tensor_dim(st, 1);
    nms_cand *cand = malloc((size_t)(N ? N : 1) * sizeof *cand);
    int64_t *kept = malloc((size_t)(N ? N : 1) * sizeof *kept), *sel = NULL;
    size_t n_sel = 0, cap_sel = 0;
    if (!cand || !kept) {
        rc = eval_kfail(a, PH_ENOMEM, "out of memory");
        goto done;
    }
    for (int64_t b = 0; b < B && max_out > 0; b++)
        for (int64_t c = 0; c < C; c++) {
            int64_t nc = 0, nk = 0;
            for (int64_t i = 0; i < N; i++) {
                double s = eval_load_f64(sd, ph_tensor_dtype(st), (size_t)((b * C + c) * N + i));
                if (s > sthr)
                    cand[nc++] = (nms_cand){s, i};
            }
            qsort(cand, (size_t)nc, sizeof *cand, nms_order);
            for (int64_t k = 0; k < nc && nk < max_out; k++) {
                double p[4], q[4];
                nms_box(bd, ph_tensor_dtype(bt), (size_t)(b * N + cand[k].index), center, p);
                int keep = 1;
                for (int64_t j = 0; j < nk && keep; j++) {
                    nms_box(bd, ph_tensor_dtype(bt), (size_t)(b * N + kept[j]), center, q);
                    keep = !nms_suppress(p, q, iou);
                }
                if (!keep)
                    continue;
                kept[nk++] = cand[k].index;
                if (n_sel == cap_sel) {
                    size_t nc2 = cap_sel ? 2 * cap_sel : 64;
                    int64_t *ns = realloc(sel, nc2 * 3 * sizeof *ns);
                    if (!ns) {
                        rc = eval_kfail(a, PH_ENOMEM, "out of memory");
                        goto done;
                    }
                    sel = ns;
                    cap_sel = nc2;
                }
                sel[3 * n_sel] = b, sel[3 * n_sel + 1] = c, sel[3 * n_sel + 2] = cand[k].index;
                n_sel++;
            }
        }
    int64_t od[2] = {(int64_t)n_sel, 3};
    int64_t *o;
    if ((rc = eval_out(a, 0, PH_DT_INT64, 2, od, (void **)&o)) == 0 && o && n_sel)
        memcpy(o, sel, n_sel * 3 * sizeof *o);
done:
    free(cand);
    free(kept);
    free(sel);
    return rc;
}

/* ------------------------------------------------------------ RoiAlign */

int eval_k_roi_align(eval_kargs *a)
{
    const ph_tensor *x, *rt, *it;
    const void *xd, *rd, *id;
    int rc;
    if ((rc = eval_need_float(a, 0, "X", &x, &xd)) != 0 || (rc = eval_need_float(a, 1, "rois", &rt, &rd)) != 0 ||
        (rc = eval_need(a, 2, &it, &id)) != 0)
        return rc;
    int dt = ph_tensor_dtype(x);
    if (ph_tensor_rank(x) != 4 || ph_tensor_rank(rt) != 2 || ph_tensor_dim(rt, 1) != 4 ||
        ph_tensor_numel(it) != ph_tensor_dim(rt, 0))
        return eval_kfail(a, PH_EINVAL, "X must be [N, C, H, W], rois [R, 4] and batch_indices [R]");
    const char *mode = ph_node_attr_string(a->node, "mode", "avg");
    int is_max = !strcmp(mode, "max");
    if (!is_max && strcmp(mode, "avg"))
        return eval_kfail(a, PH_EINVAL, "mode '%s' is not avg or max", mode);
    const char *ctm = ph_node_attr_string(a->node, "coordinate_transformation_mode",
                                          a->opset >= 16 ? "half_pixel" : "output_half_pixel");
    int half = !strcmp(ctm, "half_pixel");
    int64_t oh = ph_node_attr_int(a->node, "output_height", 1), ow = ph_node_attr_int(a->node, "output_width", 1);
    int64_t sr = ph_node_attr_int(a->node, "sampling_ratio", 0);
    double scale = ph_node_attr_float(a->node, "spatial_scale", 1.0f);
    int64_t N = ph_tensor_dim(x, 0), C = ph_tensor_dim(x, 1), H = ph_tensor_dim(x, 2), W = ph_tensor_dim(x, 3);
    int64_t R = ph_tensor_dim(rt, 0), od[4] = {R, C, oh, ow};
    if (oh < 1 || ow < 1 || sr < 0)
        return eval_kfail(a, PH_EINVAL, "output size and sampling_ratio must be positive");
    void *o;
    if ((rc = eval_out(a, 0, dt, 4, od, &o)) != 0 || !o)
        return rc;
    double off = half ? 0.5 : 0;
    for (int64_t r = 0; r < R; r++) {
        int64_t bi = eval_load_i64(id, ph_tensor_dtype(it), (size_t)r);
        if (bi < 0 || bi >= N)
            return eval_kfail(a, PH_EINVAL, "batch index %lld is out of range", (long long)bi);
        double x0 = eval_load_f64(rd, ph_tensor_dtype(rt), (size_t)(r * 4)) * scale - off;
        double y0 = eval_load_f64(rd, ph_tensor_dtype(rt), (size_t)(r * 4 + 1)) * scale - off;
        double x1 = eval_load_f64(rd, ph_tensor_dtype(rt), (size_t)(r * 4 + 2)) * scale - off;
        double y1 = eval_load_f64(rd, ph_tensor_dtype(rt), (size_t)(r * 4 + 3)) * scale - off;
        double rw = x1 - x0, rh = y1 - y0;
        if (!half) {
            rw = fmax(rw, 1.0);
            rh = fmax(rh, 1.0);
        }
        double bh = rh / (double)oh, bw = rw / (double)ow;
        int64_t gh = sr > 0 ? sr : eval_coord(ceil(rh / (double)oh)), gw = sr > 0 ? sr : eval_coord(ceil(rw / (double)ow));
        gh = gh < 1 ? 1 : gh; /* an empty or NaN region: one sample */
        gw = gw < 1 ? 1 : gw;
        if (gh > 4096 || gw > 4096)
            return eval_kfail(a, PH_EUNSUPPORTED, "a sampling grid of %lld x %lld per bin", (long long)gh, (long long)gw);
        double count = (double)(gh * gw > 1 ? gh * gw : 1);
        for (int64_t c = 0; c < C; c++) {
            size_t base = (size_t)((bi * C + c) * H * W);
            for (int64_t ph = 0; ph < oh; ph++)
                for (int64_t pw = 0; pw < ow; pw++) {
                    double acc = 0;
                    int first = 1;
                    for (int64_t iy = 0; iy < gh; iy++)
                        for (int64_t ix = 0; ix < gw; ix++) {
                            double yy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                            double xx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                            double v = 0, w[4] = {0};
                            int64_t p[4] = {0};
                            if (!(yy < -1.0 || yy > (double)H || xx < -1.0 || xx > (double)W)) {
                                yy = yy <= 0 ? 0 : yy;
                                xx = xx <= 0 ? 0 : xx;
                                int64_t yl = eval_coord(yy), xl = eval_coord(xx), yh, xh;
                                if (yl >= H - 1)
                                    yh = yl = H - 1, yy = (double)yl;
                                else
                                    yh = yl + 1;
                                if (xl >= W - 1)
                                    xh = xl = W - 1, xx = (double)xl;
                                else
                                    xh = xl + 1;
                                double ly = yy - (double)yl, lx = xx - (double)xl, hy = 1 - ly, hx = 1 - lx;
                                w[0] = hy * hx, w[1] = hy * lx, w[2] = ly * hx, w[3] = ly * lx;
                                p[0] = yl * W + xl, p[1] = yl * W + xh, p[2] = yh * W + xl, p[3] = yh * W + xh;
                            }
                            if (is_max) {
                                for (int k = 0; k < 4; k++) {
                                    double t = w[k] * eval_load_f64(xd, dt, base + (size_t)p[k]);
                                    v = k == 0 || t > v ? t : v;
                                }
                                acc = first || v > acc ? v : acc;
                            } else {
                                for (int k = 0; k < 4; k++)
                                    acc += w[k] * eval_load_f64(xd, dt, base + (size_t)p[k]);
                            }
                            first = 0;
                        }
                    eval_store_f64(o, dt, (size_t)(((r * C + c) * oh + ph) * ow + pw), is_max ? acc : acc / count);
                }
        }
    }
    return 0;
}

/* ------------------------------------------------------------ GridSample */

enum { GS_LINEAR, GS_NEAREST, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECT };

typedef struct gs_ctx {
    const void *x;
    int dt;
    size_t base;
    int64_t H, W;
    int pad;
    double border[4]; /* x_min, y_min, x_max, y_max */
} gs_ctx;

/* Reflect x by the borders until it is inside [lo, hi] (ORT's GsReflect). */
static double gs_reflect(double x, double lo, double hi)
{
    double range = hi - lo;
    if (!(range > 0))
        return lo;
    if (x < lo || x > hi) {
        double dx = x < lo ? lo - x : x - hi, n = floor(dx / range), r = dx - n * range;
        int even = fmod(n, 2) == 0;
        return x < lo ? (even ? lo + r : hi - r) : (even ? hi - r : lo + r);
    }
    return x;
}

static double gs_pixel(const gs_ctx *g, int64_t r, int64_t c)
{
    if (g->pad == GS_ZEROS) {
        if (c < 0 || c >= g->W || r < 0 || r >= g->H)
            return 0;
    } else if (g->pad == GS_BORDER) {
        c = c < 0 ? 0 : c >= g->W ? g->W - 1 : c;
        r = r < 0 ? 0 : r >= g->H ? g->H - 1 : r;
    } else {
        c = eval_coord(gs_reflect((double)c, g->border[0], g->border[2]));
        r = eval_coord(gs_reflect((double)r, g->border[1], g->border[3]));
        c = c < 0 ? 0 : c >= g->W ? g->W - 1 : c;
        r = r < 0 ? 0 : r >= g->H ? g->H - 1 : r;
    }
    return eval_load_f64(g->x, g->dt, g->base + (size_t)(r * g->W + c));
}

static void gs_cubic_coeffs(double x, double *c)
{
    const double A = -0.75;
    x = fabs(x);
    c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

int eval_k_grid_sample(eval_kargs *a)
{
    const ph_tensor *x, *gt;
    const void *xd, *gd;
    int rc;
    if ((rc = eval_need_float(a, 0, "X", &x, &xd)) != 0 || (rc = eval_need_float(a, 1, "grid", &gt, &gd)) != 0)
        return rc;
    if (ph_tensor_rank(x) != 4 || ph_tensor_rank(gt) != 4 || ph_tensor_dim(gt, 3) != 2 ||
        ph_tensor_dim(gt, 0) != ph_tensor_dim(x, 0))
        return eval_kfail(a, PH_EUNSUPPORTED, "only 2-D sampling: X [N, C, H, W] and grid [N, H_out, W_out, 2]");
    const char *ms = ph_node_attr_string(a->node, "mode", a->opset >= 20 ? "linear" : "bilinear");
    const char *ps = ph_node_attr_string(a->node, "padding_mode", "zeros");
    int mode = !strcmp(ms, "bilinear") || !strcmp(ms, "linear") ? GS_LINEAR : !strcmp(ms, "nearest") ? GS_NEAREST
             : !strcmp(ms, "bicubic") || !strcmp(ms, "cubic") ? GS_CUBIC : -1;
    int pad = !strcmp(ps, "zeros") ? GS_ZEROS : !strcmp(ps, "border") ? GS_BORDER : !strcmp(ps, "reflection") ? GS_REFLECT
            : -1;
    if (mode < 0 || pad < 0)
        return eval_kfail(a, PH_EINVAL, "mode '%s' or padding_mode '%s' is not supported", ms, ps);
    int ac = ph_node_attr_int(a->node, "align_corners", 0) != 0, dt = ph_tensor_dtype(x);
    int64_t N = ph_tensor_dim(x, 0), C = ph_tensor_dim(x, 1), H = ph_tensor_dim(x, 2), W = ph_tensor_dim(x, 3);
    int64_t OH = ph_tensor_dim(gt, 1), OW = ph_tensor_dim(gt, 2), od[4] = {N, C, OH, OW};
    void *o;
    if ((rc = eval_out(a, 0, dt, 4, od, &o)) != 0 || !o)
        return rc;
    gs_ctx g = {xd, dt, 0, H, W, pad, {-0.5, -0.5, (double)W - 0.5, (double)H - 0.5}};
    if (ac) {
        g.border[0] = g.border[1] = 0;
        g.border[2] = (double)W - 1;
        g.border[3] = (double)H - 1;
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            g.base = (size_t)((n * C + c) * H * W);
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    size_t gi = (size_t)(((n * OH + oy) * OW + ox) * 2);
                    double nx = eval_load_f64(gd, ph_tensor_dtype(gt), gi), ny = eval_load_f64(gd, ph_tensor_dtype(gt), gi + 1);
                    double xx = ac ? (nx + 1) / 2 * (double)(W - 1) : ((nx + 1) * (double)W - 1) / 2;
                    double yy = ac ? (ny + 1) / 2 * (double)(H - 1) : ((ny + 1) * (double)H - 1) / 2;
                    if (mode == GS_NEAREST) {
                        xx = nearbyint(xx);
                        yy = nearbyint(yy);
                    }
                    if (xx < g.border[0] || xx > g.border[2] || yy < g.border[1] || yy > g.border[3]) {
                        if (pad == GS_BORDER) {
                            xx = xx < 0 ? 0 : xx > (double)(W - 1) ? (double)(W - 1) : xx;
                            yy = yy < 0 ? 0 : yy > (double)(H - 1) ? (double)(H - 1) : yy;
                        } else if (pad == GS_REFLECT) {
                            xx = gs_reflect(xx, g.border[0], g.border[2]);
                            yy = gs_reflect(yy, g.border[1], g.border[3]);
                        }
                    }
                    double v;
                    if (mode == GS_NEAREST) {
                        v = gs_pixel(&g, eval_coord(yy), eval_coord(xx));
                    } else if (mode == GS_LINEAR) {
                        int64_t x1 = eval_coord(floor(xx)), y1 = eval_coord(floor(yy)), x2 = x1 + 1, y2 = y1 + 1;
                        double dx2 = (double)x2 - xx, dx1 = xx - (double)x1, dy2 = (double)y2 - yy, dy1 = yy - (double)y1;
                        v = dy2 * (dx2 * gs_pixel(&g, y1, x1) + dx1 * gs_pixel(&g, y1, x2)) +
                            dy1 * (dx2 * gs_pixel(&g, y2, x1) + dx1 * gs_pixel(&g, y2, x2));
                    } else {
                        int64_t x0 = eval_coord(floor(xx)) - 1, y0 = eval_coord(floor(yy)) - 1;
                        double cx[4], cy[4], row[4];
                        gs_cubic_coeffs(xx - (double)x0 - 1, cx);
                        gs_cubic_coeffs(yy - (double)y0 - 1, cy);
                        v = 0;
                        for (int h = 0; h < 4; h++) {
                            row[h] = 0;
                            for (int w = 0; w < 4; w++)
                                row[h] += cx[w] * gs_pixel(&g, y0 + h, x0 + w);
                            v += cy[h] * row[h];
                        }
                    }
                    eval_store_f64(o, dt, (size_t)(((n * C + c) * OH + oy) * OW + ox), v);
                }
        }
    return 0;
}

/* ------------------------------------------------------------ MaxUnpool */

int eval_k_max_unpool(eval_kargs *a)
{
    const ph_tensor *x, *it;
    const void *xd, *id;
    int rc;
    if ((rc = eval_need(a, 0, &x, &xd)) != 0 || (rc = eval_need(a, 1, &it, &id)) != 0)
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t r = ph_tensor_rank(x), nd = r >= 2 ? r - 2 : 0, es = ph_dtype_size(dt);
    if (r < 3 || r > EVAL_MAX_RANK || !es || ph_tensor_numel(it) != ph_tensor_numel(x))
        return eval_kfail(a, PH_EINVAL, "X must have rank >= 3 and I as many elements");
    int64_t od[EVAL_MAX_RANK];
    const ph_tensor *st = eval_in(a, 2);
    if (st) {
        size_t n;
        if ((rc = eval_need(a, 2, &st, NULL)) != 0 || (rc = eval_small_ints(a, st, "output_shape", od, EVAL_MAX_RANK, &n)) != 0)
            return rc;
        if (n != r)
            return eval_kfail(a, PH_EINVAL, "output_shape has %zu entries, expected %zu", n, r);
    } else {
        const int64_t *ks, *ss = NULL, *ps = NULL;
        if (ph_node_attr_ints(a->node, "kernel_shape", &ks) != (ptrdiff_t)nd)
            return eval_kfail(a, PH_EINVAL, "kernel_shape must have %zu entries", nd);
        ptrdiff_t ns = ph_node_attr_ints(a->node, "strides", &ss), np = ph_node_attr_ints(a->node, "pads", &ps);
        if ((ns >= 0 && ns != (ptrdiff_t)nd) || (np >= 0 && np != (ptrdiff_t)(2 * nd)))
            return eval_kfail(a, PH_EINVAL, "strides or pads of the wrong length");
        od[0] = ph_tensor_dim(x, 0);
        od[1] = ph_tensor_dim(x, 1);
        for (size_t i = 0; i < nd; i++)
            od[2 + i] = (ph_tensor_dim(x, 2 + i) - 1) * (ns > 0 ? ss[i] : 1) - (np > 0 ? ps[i] + ps[nd + i] : 0) + ks[i];
    }
    char *o;
    if ((rc = eval_out(a, 0, dt, r, od, (void **)&o)) != 0 || !o)
        return rc;
    int64_t total = eval_numel(r, od), n = ph_tensor_numel(x);
    memset(o, 0, (size_t)total * es);
    for (int64_t e = 0; e < n; e++) {
        int64_t k = eval_load_i64(id, ph_tensor_dtype(it), (size_t)e);
        if (k < 0 || k >= total)
            return eval_kfail(a, PH_EINVAL, "index %lld is outside the output", (long long)k);
        memcpy(o + (size_t)k * es, (const char *)xd + (size_t)e * es, es);
    }
    return 0;
}

/* ------------------------------------------------------------ Upsample */

int eval_k_upsample(eval_kargs *a)
{
    const ph_tensor *x;
    const void *xd;
    int rc;
    if ((rc = eval_need(a, 0, &x, &xd)) != 0)
        return rc;
    int dt = ph_tensor_dtype(x);
    size_t r = ph_tensor_rank(x);
    if (r > EVAL_MAX_RANK || !ph_dtype_size(dt))
        return eval_kbad_dtype(a, "X", dt);
    double sc[EVAL_MAX_RANK];
    const ph_tensor *st = eval_in(a, 1);
    if (st) {
        const void *sd;
        if ((rc = eval_need(a, 1, &st, &sd)) != 0)
            return rc;
        if ((size_t)ph_tensor_numel(st) != r)
            return eval_kfail(a, PH_EINVAL, "scales must have one entry per dim");
        for (size_t i = 0; i < r; i++)
            sc[i] = eval_load_f64(sd, ph_tensor_dtype(st), i);
    } else {
        const float *f;
        if (ph_node_attr_floats(a->node, "scales", &f) != (ptrdiff_t)r)
            return eval_kfail(a, PH_EINVAL, "scales must have one entry per dim");
        for (size_t i = 0; i < r; i++)
            sc[i] = f[i];
    }
    const char *ms = ph_node_attr_string(a->node, "mode", "nearest");
    int linear = !strcmp(ms, "linear") || !strcmp(ms, "bilinear");
    if (!linear && strcmp(ms, "nearest"))
        return eval_kfail(a, PH_EINVAL, "mode '%s' is not nearest or linear", ms);
    if (linear && !eval_dt_float(dt) && dt != PH_DT_FLOAT16 && dt != PH_DT_BFLOAT16)
        return eval_kbad_dtype(a, "X", dt);
    int64_t od[EVAL_MAX_RANK], xs[EVAL_MAX_RANK], idx[EVAL_MAX_RANK] = {0};
    for (size_t i = 0; i < r; i++) {
        double o = floor((double)ph_tensor_dim(x, i) * sc[i]);
        if (!(sc[i] >= 1) || !(o < 1099511627776.0))
            return eval_kfail(a, PH_EINVAL, "scales must be finite and at least 1");
        od[i] = (int64_t)o;
    }
    eval_strides(r, ph_tensor_dims(x), xs);
    char *o;
    if ((rc = eval_out(a, 0, dt, r, od, (void **)&o)) != 0 || !o)
        return rc;
    int64_t total = eval_numel(r, od);
    size_t es = ph_dtype_size(dt);
    for (int64_t e = 0; e < total; e++) {
        if (!linear) {
            int64_t off = 0;
            for (size_t i = 0; i < r; i++) {
                int64_t s = (int64_t)floor((double)idx[i] / sc[i]);
                off += (s < ph_tensor_dim(x, i) ? s : ph_tensor_dim(x, i) - 1) * xs[i];
            }
            memcpy(o + (size_t)e * es, (const char *)xd + (size_t)off * es, es);
        } else { /* N-linear over every dim, asymmetric coordinates */
            double v = 0;
            for (unsigned corner = 0; corner < (1u << r); corner++) {
                double w = 1;
                int64_t off = 0;
                for (size_t i = 0; i < r; i++) {
                    double p = (double)idx[i] / sc[i];
                    int64_t lo = (int64_t)floor(p), d = ph_tensor_dim(x, i);
                    double f = p - (double)lo;
                    int hi = (corner >> i) & 1;
                    int64_t q = lo + hi;
                    q = q >= d ? d - 1 : q;
                    w *= hi ? f : 1 - f;
                    off += q * xs[i];
                }
                if (w != 0)
                    v += w * eval_load_f64(xd, dt, (size_t)off);
            }
            eval_store_f64(o, dt, (size_t)e, v);
        }
        for (size_t i = r; i-- > 0;) {
            if (++idx[i] < od[i])
                break;
            idx[i] = 0;
        }
    }
    return 0;
}
