/* sdk/src/eval/eval_ops_control.c - If, Loop, Scan and SequenceMap: the ops
 * that run a body (a subgraph attribute) through eval_body_run.
 *
 * Bodies read values of the graphs around them (outer scope) through the
 * running frame; the core prepared each body once with the graph.  Values
 * flow through unchanged, whatever their dtype (float16 and bfloat16
 * included) or kind (sequences and optionals as loop-carried values):
 * these kernels are registered native_half and with containers.
 *
 * Loop and Scan stack the per-iteration scan outputs along a new axis
 * (Scan: at scan_output_axes, reversed for scan_output_directions = 1).
 * Scan at opset 8 has a batch axis 0 and an optional sequence_lens input.
 */
#include <stdlib.h>
#include <string.h>

#include "eval_more.h"

/* ------------------------------------------------------------ helpers */

/* A new int64 or bool scalar. */
static ph_tensor *scalar_i64(int64_t v)
{
    return ph_tensor_new(PH_DT_INT64, 0, NULL, &v);
}

static ph_tensor *scalar_bool(int v)
{
    uint8_t b = v != 0;
    return ph_tensor_new(PH_DT_BOOL, 0, NULL, &b);
}

/* Read a one-element bool (or number) tensor as a truth value. */
static int truth(eval_kargs *a, const ph_tensor *t, const char *what, int *out)
{
    const void *d = ph_tensor_kind(t) == PH_KIND_TENSOR ? ph_tensor_data(t) : NULL;
    if (!d || ph_tensor_numel(t) != 1)
        return eval_kfail(a, PH_EINVAL, "%s must be a tensor of one element", what);
    *out = eval_load_f64(d, ph_tensor_dtype(t), 0) != 0;
    return 0;
}

static void free_all(ph_tensor **v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ph_tensor_free(v[i]);
        v[i] = NULL;
    }
}

/* Index `idx` of axis `axis` of t, that axis removed (a new tensor). */
ph_tensor *eval_take_axis(const ph_tensor *t, size_t axis, int64_t idx)
{
    size_t r = ph_tensor_rank(t), es = ph_dtype_size(ph_tensor_dtype(t));
    const int64_t *d = ph_tensor_dims(t);
    int64_t od[EVAL_MAX_RANK], outer = 1, inner = 1;
    for (size_t i = 0, k = 0; i < r; i++) {
        if (i < axis)
            outer *= d[i];
        else if (i > axis)
            inner *= d[i];
        if (i != axis)
            od[k++] = d[i];
    }
    ph_tensor *o = ir_tensor_alloc(ph_tensor_dtype(t), r - 1, od);
    if (!o)
        return NULL;
    char *dst = ir_tensor_mut(o);
    const char *src = ph_tensor_data(t);
    size_t blk = (size_t)inner * es;
    for (int64_t i = 0; i < outer; i++)
        memcpy(dst + (size_t)i * blk, src + ((size_t)i * (size_t)d[axis] + (size_t)idx) * blk, blk);
    return o;
}

/* Stack n same-shaped tensors along a new axis `axis` (reversed order when
 * reverse): the output of shape dims[:axis] + [n] + dims[axis:].  0 or a
 * PH_E* code with a->err set. */
int eval_stack(eval_kargs *a, ph_tensor *const *items, size_t n, size_t axis, int reverse, int dtype,
              size_t rank, const int64_t *dims, ph_tensor **out)
{
    *out = NULL;
    if (rank + 1 > EVAL_MAX_RANK || axis > rank)
        return eval_kfail(a, PH_EUNSUPPORTED, "cannot stack tensors of rank %zu at axis %zu", rank, axis);
    for (size_t k = 0; k < n; k++) {
        if (ph_tensor_kind(items[k]) != PH_KIND_TENSOR || ph_tensor_dtype(items[k]) != dtype ||
            ph_tensor_rank(items[k]) != rank ||
            (rank && memcmp(ph_tensor_dims(items[k]), dims, rank * sizeof *dims)))
            return eval_kfail(a, PH_EINVAL, "the values to stack differ in kind, dtype or shape (item %zu)", k);
    }
    int64_t od[EVAL_MAX_RANK], outer = 1, inner = 1;
    for (size_t i = 0, k = 0; i <= rank; i++) {
        if (i == axis)
            od[k++] = (int64_t)n;
        if (i < rank)
            od[k++] = dims[i];
        if (i < rank && i < axis)
            outer *= dims[i];
        else if (i < rank)
            inner *= dims[i];
    }
    ph_tensor *o = ir_tensor_alloc(dtype, rank + 1, od);
    if (!o)
        return eval_kfail(a, PH_ENOMEM, "out of memory stacking %zu values", n);
    size_t blk = (size_t)inner * ph_dtype_size(dtype);
    char *dst = ir_tensor_mut(o);
    for (size_t k = 0; k < n; k++) {
        const char *src = ph_tensor_data(items[reverse ? n - 1 - k : k]);
        for (int64_t i = 0; i < outer; i++)
            memcpy(dst + ((size_t)i * n + k) * blk, src + (size_t)i * blk, blk);
    }
    *out = o;
    return 0;
}

/* The declared type of body output j, for a scan output that got no
 * iteration: dtype and dims (unknown dims 0). */
static int empty_scan_output(eval_kargs *a, size_t body, size_t j, size_t axis, ph_tensor **out)
{
    const ph_value *v = ph_graph_output(ph_node_subgraph(a->node, body), j);
    int dt = ph_value_dtype(v), r = ph_value_rank(v);
    if (!dt || !ph_dtype_size(dt))
        return eval_kfail(a, PH_EUNSUPPORTED, "no iteration ran and scan output %zu has no declared dtype", j);
    int64_t d[EVAL_MAX_RANK];
    size_t rank = r > 0 ? (size_t)r : 0;
    if (rank > EVAL_MAX_RANK)
        return eval_kfail(a, PH_EUNSUPPORTED, "scan output rank %zu", rank);
    for (size_t i = 0; i < rank; i++)
        d[i] = ph_value_dim(v, (int)i) > 0 ? ph_value_dim(v, (int)i) : 0;
    return eval_stack(a, NULL, 0, axis > rank ? rank : axis, 0, dt, rank, d, out);
}

/* ------------------------------------------------------------ If */

int eval_k_if(eval_kargs *a)
{
    const ph_tensor *c = eval_in(a, 0);
    int cond, rc;
    if (!c)
        return eval_kfail(a, PH_EINVAL, "the condition is required");
    if ((rc = truth(a, c, "the condition", &cond)) != 0)
        return rc;
    size_t b = eval_body_index(a, cond ? "then_branch" : "else_branch");
    if (b == SIZE_MAX)
        return eval_kfail(a, PH_EINVAL, "attribute %s is missing", cond ? "then_branch" : "else_branch");
    size_t nb = eval_body_output_count(a, b);
    if (nb != a->n_out)
        return eval_kfail(a, PH_EINVAL, "the branch has %zu outputs, the node %zu", nb, a->n_out);
    return eval_body_run(a, b, NULL, 0, a->out, a->n_out);
}

/* ------------------------------------------------------------ Loop */

int eval_k_loop(eval_kargs *a)
{
    size_t b = eval_body_index(a, "body");
    if (b == SIZE_MAX)
        return eval_kfail(a, PH_EINVAL, "attribute body is missing");
    const ph_graph *g = ph_node_subgraph(a->node, b);
    size_t n_carried = a->n_in >= 2 ? a->n_in - 2 : 0;
    size_t nb_in = ph_graph_input_count(g), nb_out = ph_graph_output_count(g);
    if (nb_in != n_carried + 2 || nb_out < n_carried + 1 || a->n_out != nb_out - 1)
        return eval_kfail(a, PH_EINVAL, "the body has %zu inputs and %zu outputs for %zu loop-carried values",
                         nb_in, nb_out, n_carried);
    size_t n_scan = nb_out - 1 - n_carried;
    int64_t max_trip = INT64_MAX;
    int cond = 1, rc;
    const ph_tensor *mt = eval_in(a, 0), *ct = eval_in(a, 1);
    if (mt) {
        const void *md = ph_tensor_kind(mt) == PH_KIND_TENSOR ? ph_tensor_data(mt) : NULL;
        if (!md || ph_tensor_numel(mt) != 1 || !eval_dt_int(ph_tensor_dtype(mt)))
            return eval_kfail(a, PH_EINVAL, "M must be an integer tensor of one element");
        max_trip = eval_load_i64(md, ph_tensor_dtype(mt), 0);
    }
    if (ct && (rc = truth(a, ct, "cond", &cond)) != 0)
        return rc;
    /* body inputs: iteration number, condition, carried values; outputs:
       condition, carried values, scan outputs */
    const ph_tensor **in = calloc(nb_in, sizeof *in);
    ph_tensor **carried = calloc(n_carried + 1, sizeof *carried);
    ph_tensor **bout = calloc(nb_out, sizeof *bout);
    ph_tensor ***scans = calloc(n_scan + 1, sizeof *scans);
    size_t n_iter = 0, cap_iter = 0;
    ph_tensor *iter_t = NULL, *cond_t = NULL;
    rc = 0;
    if (!in || !carried || !bout || !scans) {
        rc = eval_kfail(a, PH_ENOMEM, "out of memory");
        goto done;
    }
    for (int64_t i = 0; (i < max_trip) && cond; i++) {
        ph_tensor_free(iter_t);
        ph_tensor_free(cond_t);
        iter_t = scalar_i64(i);
        cond_t = scalar_bool(cond);
        if (!iter_t || !cond_t) {
            rc = eval_kfail(a, PH_ENOMEM, "out of memory");
            goto done;
        }
        in[0] = iter_t;
        in[1] = cond_t;
        for (size_t k = 0; k < n_carried; k++) {
            in[2 + k] = i == 0 ? eval_in(a, 2 + k) : carried[k];
            if (!in[2 + k]) {
                rc = eval_kfail(a, PH_EINVAL, "loop-carried input %zu is missing", k);
                goto done;
            }
        }
        if ((rc = eval_body_run(a, b, in, nb_in, bout, nb_out)) != 0)
            goto done;
        free_all(carried, n_carried);
        for (size_t k = 0; k < n_carried; k++) {
            carried[k] = bout[1 + k];
            bout[1 + k] = NULL;
        }
        if ((rc = truth(a, bout[0], "the body's condition output", &cond)) != 0)
            goto done;
        if (n_scan && n_iter == cap_iter) {
            size_t nc = cap_iter ? 2 * cap_iter : 16;
            for (size_t k = 0; k < n_scan; k++) {
                ph_tensor **ns = realloc(scans[k], nc * sizeof *ns);
                if (!ns) {
                    rc = eval_kfail(a, PH_ENOMEM, "out of memory");
                    goto done;
                }
                scans[k] = ns;
            }
            cap_iter = nc;
        }
        for (size_t k = 0; k < n_scan; k++) {
            scans[k][n_iter] = bout[1 + n_carried + k];
            bout[1 + n_carried + k] = NULL;
        }
        n_iter += n_scan > 0;
        free_all(bout, nb_out);
    }
    for (size_t k = 0; k < n_carried; k++) {
        if (!eval_wanted(a, k))
            continue;
        if (carried[k]) {
            a->out[k] = carried[k];
            carried[k] = NULL;
        } else if (!(a->out[k] = ph_tensor_clone(eval_in(a, 2 + k)))) {
            rc = eval_kfail(a, PH_ENOMEM, "out of memory");
            goto done;
        }
    }
    for (size_t k = 0; k < n_scan; k++) {
        if (!eval_wanted(a, n_carried + k))
            continue;
        ph_tensor **o = &a->out[n_carried + k];
        if (n_iter == 0)
            rc = empty_scan_output(a, b, 1 + n_carried + k, 0, o);
        else
            rc = eval_stack(a, scans[k], n_iter, 0, 0, ph_tensor_dtype(scans[k][0]), ph_tensor_rank(scans[k][0]),
                           ph_tensor_dims(scans[k][0]), o);
        if (rc)
            goto done;
    }
done:
    ph_tensor_free(iter_t);
    ph_tensor_free(cond_t);
    if (carried)
        free_all(carried, n_carried);
    if (bout)
        free_all(bout, nb_out);
    for (size_t k = 0; scans && k < n_scan; k++) {
        if (scans[k])
            free_all(scans[k], n_iter);
        free(scans[k]);
    }
    free(scans);
    free(in);
    free(carried);
    free(bout);
    return rc;
}

/* ------------------------------------------------------------ Scan */

typedef struct scan_plan {
    size_t n_state, n_in, n_out; /* states, scan inputs, scan outputs */
    int64_t in_axis[EVAL_MAX_RANK * 4], in_dir[EVAL_MAX_RANK * 4];
    int64_t out_axis[EVAL_MAX_RANK * 4], out_dir[EVAL_MAX_RANK * 4];
} scan_plan;

/* Attribute list name (of at most cap entries) into v, default 0. */
static int scan_attr(eval_kargs *a, const char *name, size_t n, int64_t *v)
{
    const int64_t *p;
    ptrdiff_t c = ph_node_attr_ints(a->node, name, &p);
    for (size_t i = 0; i < n; i++)
        v[i] = 0;
    if (c < 0)
        return 0;
    if ((size_t)c != n)
        return eval_kfail(a, PH_EINVAL, "%s has %td entries, expected %zu", name, c, n);
    memcpy(v, p, n * sizeof *v);
    return 0;
}

/* One batch entry (opset 8) or the whole (opset 9+) of a Scan: states in
 * st (replaced by the final ones), scan inputs xs (the batch axis already
 * removed), scan outputs stacked into outs. */
static int scan_run(eval_kargs *a, size_t b, const scan_plan *sp, ph_tensor **st, const ph_tensor *const *xs,
                    int64_t len, ph_tensor **outs)
{
    size_t nb_in = sp->n_state + sp->n_in, nb_out = sp->n_state + sp->n_out;
    const ph_tensor **in = calloc(nb_in ? nb_in : 1, sizeof *in);
    ph_tensor **bout = calloc(nb_out ? nb_out : 1, sizeof *bout);
    ph_tensor **slices = calloc(sp->n_in + 1, sizeof *slices);
    ph_tensor **acc = calloc((sp->n_out ? sp->n_out : 1) * (size_t)(len ? len : 1), sizeof *acc);
    int rc = 0;
    if (!in || !bout || !slices || !acc) {
        rc = eval_kfail(a, PH_ENOMEM, "out of memory");
        goto done;
    }
    for (int64_t t = 0; t < len; t++) {
        for (size_t k = 0; k < sp->n_state; k++)
            in[k] = st[k];
        for (size_t k = 0; k < sp->n_in; k++) {
            int64_t idx = sp->in_dir[k] ? len - 1 - t : t;
            ph_tensor_free(slices[k]);
            if (!(slices[k] = eval_take_axis(xs[k], (size_t)sp->in_axis[k], idx))) {
                rc = eval_kfail(a, PH_ENOMEM, "out of memory");
                goto done;
            }
            in[sp->n_state + k] = slices[k];
        }
        if ((rc = eval_body_run(a, b, in, nb_in, bout, nb_out)) != 0)
            goto done;
        for (size_t k = 0; k < sp->n_state; k++) {
            ph_tensor_free(st[k]);
            st[k] = bout[k];
            bout[k] = NULL;
        }
        for (size_t k = 0; k < sp->n_out; k++) {
            acc[k * (size_t)len + (size_t)t] = bout[sp->n_state + k];
            bout[sp->n_state + k] = NULL;
        }
    }
    for (size_t k = 0; k < sp->n_out; k++) {
        if (len == 0) {
            rc = empty_scan_output(a, b, sp->n_state + k, (size_t)sp->out_axis[k], &outs[k]);
        } else {
            ph_tensor *const *items = &acc[k * (size_t)len];
            size_t r = ph_tensor_rank(items[0]), ax = (size_t)(sp->out_axis[k] < 0 ? sp->out_axis[k] + (int64_t)r + 1
                                                                                    : sp->out_axis[k]);
            if (ax > r) {
                rc = eval_kfail(a, PH_EINVAL, "scan_output_axes[%zu] is out of range", k);
                goto done;
            }
            rc = eval_stack(a, items, (size_t)len, ax, (int)sp->out_dir[k], ph_tensor_dtype(items[0]), r,
                           ph_tensor_dims(items[0]), &outs[k]);
        }
        if (rc)
            goto done;
    }
done:
    if (slices)
        free_all(slices, sp->n_in);
    if (bout)
        free_all(bout, nb_out);
    if (acc)
        free_all(acc, sp->n_out * (size_t)len);
    free(in);
    free(bout);
    free(slices);
    free(acc);
    return rc;
}

/* Move the final states and the scan outputs of a run into dst (states
 * first), leaving st and outs empty. */
static void scan_results(const scan_plan *sp, ph_tensor **st, ph_tensor **outs, ph_tensor **dst)
{
    for (size_t k = 0; k < sp->n_state; k++) {
        dst[k] = st[k];
        st[k] = NULL;
    }
    for (size_t k = 0; k < sp->n_out; k++) {
        dst[sp->n_state + k] = outs[k];
        outs[k] = NULL;
    }
}

int eval_k_scan(eval_kargs *a)
{
    size_t b = eval_body_index(a, "body");
    if (b == SIZE_MAX)
        return eval_kfail(a, PH_EINVAL, "attribute body is missing");
    const ph_graph *g = ph_node_subgraph(a->node, b);
    int v8 = a->opset < 9;
    size_t first = v8 ? 1 : 0; /* opset 8: sequence_lens comes first */
    int64_t m = ph_node_attr_int(a->node, "num_scan_inputs", -1);
    if (m < 0 || (size_t)m + first > a->n_in)
        return eval_kfail(a, PH_EINVAL, "num_scan_inputs is missing or too large");
    scan_plan sp;
    sp.n_in = (size_t)m;
    sp.n_state = a->n_in - first - sp.n_in;
    if (ph_graph_input_count(g) != sp.n_state + sp.n_in || ph_graph_output_count(g) < sp.n_state ||
        a->n_out != ph_graph_output_count(g))
        return eval_kfail(a, PH_EINVAL, "the body's inputs and outputs do not match the node's");
    sp.n_out = a->n_out - sp.n_state;
    if (sp.n_in > EVAL_MAX_RANK * 4 || sp.n_out > EVAL_MAX_RANK * 4)
        return eval_kfail(a, PH_EUNSUPPORTED, "more than %d scan inputs or outputs", EVAL_MAX_RANK * 4);
    int rc;
    if ((rc = scan_attr(a, v8 ? "directions" : "scan_input_directions", sp.n_in, sp.in_dir)) != 0 ||
        (rc = scan_attr(a, "scan_input_axes", sp.n_in, sp.in_axis)) != 0 ||
        (rc = scan_attr(a, "scan_output_axes", sp.n_out, sp.out_axis)) != 0 ||
        (rc = scan_attr(a, "scan_output_directions", sp.n_out, sp.out_dir)) != 0)
        return rc;
    if (v8)
        for (size_t k = 0; k < sp.n_in; k++)
            sp.in_axis[k] = 0; /* opset 8 scans axis 1 of the batched input: axis 0 per batch entry */
    const ph_tensor *xs[EVAL_MAX_RANK * 4];
    int64_t len = -1;
    for (size_t k = 0; k < sp.n_in; k++) {
        const ph_tensor *x = eval_in(a, first + sp.n_state + k);
        if (!x || ph_tensor_kind(x) != PH_KIND_TENSOR || !ph_tensor_data(x))
            return eval_kfail(a, PH_EINVAL, "scan input %zu is missing or not a tensor", k);
        size_t r = ph_tensor_rank(x) - (v8 ? 1 : 0), ax;
        if (ph_tensor_rank(x) < (v8 ? 2u : 1u) || (rc = eval_axis(a, sp.in_axis[k], r, &ax)) != 0)
            return rc ? rc : eval_kfail(a, PH_EINVAL, "scan input %zu has too small a rank", k);
        sp.in_axis[k] = (int64_t)ax;
        int64_t l = ph_tensor_dim(x, ax + (v8 ? 1 : 0));
        if (len >= 0 && l != len)
            return eval_kfail(a, PH_EINVAL, "scan inputs have different lengths (%lld and %lld)", (long long)len,
                             (long long)l);
        len = l;
        xs[k] = x;
    }
    if (len < 0)
        return eval_kfail(a, PH_EINVAL, "Scan has no scan input");
    ph_tensor *st[EVAL_MAX_RANK * 4] = {0}, *outs[EVAL_MAX_RANK * 4] = {0};
    if (sp.n_state > EVAL_MAX_RANK * 4)
        return eval_kfail(a, PH_EUNSUPPORTED, "more than %d state values", EVAL_MAX_RANK * 4);
    if (!v8) {
        for (size_t k = 0; k < sp.n_state && !rc; k++)
            if (!eval_in(a, k) || !(st[k] = ph_tensor_clone(eval_in(a, k))))
                rc = eval_kfail(a, PH_EINVAL, "state input %zu is missing or cannot be copied", k);
        if (!rc)
            rc = scan_run(a, b, &sp, st, xs, len, outs);
        if (!rc)
            scan_results(&sp, st, outs, a->out);
        free_all(st, sp.n_state);
        free_all(outs, sp.n_out);
        return rc;
    }
    /* opset 8: every input and output has a batch axis 0 */
    int64_t batch = ph_tensor_dim(xs[0], 0);
    const ph_tensor *lens = eval_in(a, 0);
    ph_tensor **per = calloc((size_t)(batch > 0 ? batch : 1) * a->n_out, sizeof *per);
    if (!per)
        return eval_kfail(a, PH_ENOMEM, "out of memory");
    for (int64_t bi = 0; bi < batch && !rc; bi++) {
        const ph_tensor *xb[EVAL_MAX_RANK * 4];
        ph_tensor *own[EVAL_MAX_RANK * 4] = {0};
        int64_t l = len;
        if (lens) {
            const void *ld = ph_tensor_data(lens);
            if (!ld || ph_tensor_numel(lens) != batch)
                rc = eval_kfail(a, PH_EINVAL, "sequence_lens must have one entry per batch entry");
            else if ((l = eval_load_i64(ld, ph_tensor_dtype(lens), (size_t)bi)) != len)
                rc = eval_kfail(a, PH_EUNSUPPORTED, "sequence_lens shorter than the scan inputs");
        }
        for (size_t k = 0; k < sp.n_state && !rc; k++) {
            const ph_tensor *s0 = eval_in(a, first + k);
            if (!s0 || !(st[k] = eval_take_axis(s0, 0, bi)))
                rc = eval_kfail(a, PH_EINVAL, "state input %zu is missing", k);
        }
        for (size_t k = 0; k < sp.n_in && !rc; k++)
            if (!(xb[k] = own[k] = eval_take_axis(xs[k], 0, bi)))
                rc = eval_kfail(a, PH_ENOMEM, "out of memory");
        if (!rc)
            rc = scan_run(a, b, &sp, st, xb, l, outs);
        if (!rc)
            scan_results(&sp, st, outs, &per[(size_t)bi * a->n_out]);
        free_all(own, sp.n_in);
        free_all(st, sp.n_state);
        free_all(outs, sp.n_out);
    }
    for (size_t k = 0; k < a->n_out && !rc; k++) {
        ph_tensor *col[1024];
        if (batch > 1024) {
            rc = eval_kfail(a, PH_EUNSUPPORTED, "batch of %lld", (long long)batch);
            break;
        }
        for (int64_t bi = 0; bi < batch; bi++)
            col[bi] = per[(size_t)bi * a->n_out + k];
        rc = eval_stack(a, col, (size_t)batch, 0, 0, ph_tensor_dtype(col[0]), ph_tensor_rank(col[0]),
                       ph_tensor_dims(col[0]), &a->out[k]);
    }
    free_all(per, (size_t)(batch > 0 ? batch : 0) * a->n_out);
    free(per);
    return rc;
}

/* ------------------------------------------------------------ SequenceMap */

int eval_k_sequence_map(eval_kargs *a)
{
    size_t b = eval_body_index(a, "body");
    if (b == SIZE_MAX)
        return eval_kfail(a, PH_EINVAL, "attribute body is missing");
    const ph_graph *g = ph_node_subgraph(a->node, b);
    const ph_tensor *s0 = eval_in(a, 0);
    if (!s0 || ph_tensor_kind(s0) != PH_KIND_SEQUENCE)
        return eval_kfail(a, PH_EINVAL, "input 0 must be a sequence");
    size_t n = ph_container_length(s0), nb_in = ph_graph_input_count(g), nb_out = ph_graph_output_count(g);
    if (nb_in != a->n_in || nb_out != a->n_out)
        return eval_kfail(a, PH_EINVAL, "the body has %zu inputs and %zu outputs, the node %zu and %zu", nb_in,
                         nb_out, a->n_in, a->n_out);
    for (size_t k = 1; k < a->n_in; k++) {
        const ph_tensor *x = eval_in(a, k);
        if (!x)
            return eval_kfail(a, PH_EINVAL, "input %zu is missing", k);
        if (ph_tensor_kind(x) == PH_KIND_SEQUENCE && ph_container_length(x) != n)
            return eval_kfail(a, PH_EINVAL, "sequence input %zu has %zu items, input 0 has %zu", k,
                             ph_container_length(x), n);
    }
    const ph_tensor **in = calloc(nb_in, sizeof *in);
    ph_tensor **bout = calloc(nb_out ? nb_out : 1, sizeof *bout);
    ph_tensor **acc = calloc((nb_out ? nb_out : 1) * (n ? n : 1), sizeof *acc);
    int rc = 0;
    if (!in || !bout || !acc)
        rc = eval_kfail(a, PH_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        for (size_t k = 0; k < nb_in; k++) {
            const ph_tensor *x = eval_in(a, k);
            in[k] = ph_tensor_kind(x) == PH_KIND_SEQUENCE ? ph_container_item(x, i) : x;
        }
        if ((rc = eval_body_run(a, b, in, nb_in, bout, nb_out)) != 0)
            break;
        for (size_t j = 0; j < nb_out; j++) {
            acc[j * n + i] = bout[j];
            bout[j] = NULL;
        }
    }
    for (size_t j = 0; j < nb_out && !rc; j++) {
        const ph_value *v = ph_graph_output(g, j);
        int dt = n ? ph_tensor_dtype(acc[j * n]) : ph_value_dtype(v);
        if (!(a->out[j] = ph_sequence_new(dt, n, &acc[j * n])))
            rc = eval_kfail(a, PH_ENOMEM, "out of memory");
        memset(&acc[j * n], 0, n * sizeof *acc); /* taken over */
    }
    if (acc)
        free_all(acc, nb_out * n);
    free(acc);
    free(bout);
    free(in);
    return rc;
}
