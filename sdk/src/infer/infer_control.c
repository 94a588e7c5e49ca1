/* sdk/src/infer/infer_control.c - shape inference of If, Loop and Scan.
 *
 * Bodies are inferred in full whenever their node is: inference gives each
 * body input the type the node feeds it (keeping a type the model declares
 * for it), infers the body, and derives the node's outputs from the body
 * outputs.  If joins its two branches (dims that differ become unknown).
 * Loop-carried values may change shape between iterations: when a body
 * output differs from its body input, the input is widened to their join
 * and the body re-inferred, so the result holds for every iteration.
 * Scan outputs get the sequence length at their scan_output_axes.
 */
#include <string.h>

#include "infer.h"

static void join_shape(const infer_shape *a, const infer_shape *b, infer_shape *o)
{
    o->dtype = a->dtype ? a->dtype : b->dtype;
    if (a->rank < 0 || b->rank < 0 || a->rank != b->rank) {
        o->rank = -1;
        return;
    }
    o->rank = a->rank;
    for (int i = 0; i < a->rank; i++)
        o->d[i] = infer_dim_join(a->d[i], b->d[i]);
}

/* Give body input v the type s unless the model declares one. */
static int set_body_input(infer_ictx *c, ph_value *v, const infer_shape *s)
{
    infer_shape cur;
    infer_read_type(c->st, v, &cur);
    int by_infer = v->infer_fresh && v->by_infer;
    if (!by_infer && cur.rank >= 0 && cur.dtype)
        return 0;
    int r = infer_write_type(c->st, v, s, NULL, c->n, c->err);
    return r < 0 ? r : 0;
}

static int infer_body(infer_ictx *c, ph_graph *g)
{
    int rc = c->infer_graph(c->st, g, c->err);
    return rc;
}

static int infer_if(infer_ictx *c)
{
    ph_graph *t = ph_node_attr_graph(c->n, "then_branch"), *e = ph_node_attr_graph(c->n, "else_branch");
    if (!t || !e)
        return 0;
    int rc = infer_body(c, t);
    if (!rc)
        rc = infer_body(c, e);
    if (rc)
        return rc;
    size_t nt = ph_graph_output_count(t), ne = ph_graph_output_count(e);
    if (nt != ne || nt != c->nout)
        return infer_fail(c, "branches have %zu and %zu outputs for %zu node outputs", nt, ne, c->nout);
    for (size_t i = 0; i < c->nout; i++) {
        infer_shape a, b;
        infer_read_type(c->st, ph_graph_output(t, i), &a);
        infer_read_type(c->st, ph_graph_output(e, i), &b);
        if (a.dtype && b.dtype && a.dtype != b.dtype)
            return infer_fail(c, "output %zu is %s in then_branch but %s in else_branch", i, ph_dtype_name(a.dtype),
                            ph_dtype_name(b.dtype));
        join_shape(&a, &b, &c->out[i]);
    }
    return 0;
}

static int infer_loop(infer_ictx *c)
{
    ph_graph *body = ph_node_attr_graph(c->n, "body");
    if (!body)
        return 0;
    size_t nin = ph_graph_input_count(body), nbo = ph_graph_output_count(body);
    if (nin < 2 || nin - 2 + 2 > c->nin || nbo < 1 + (nin - 2))
        return infer_fail(c, "body has %zu inputs and %zu outputs for %zu node inputs", nin, nbo, c->nin);
    size_t n_carried = nin - 2, n_scan = nbo - 1 - n_carried;
    if (c->nout != n_carried + n_scan)
        return infer_fail(c, "%zu outputs, the body gives %zu", c->nout, n_carried + n_scan);
    infer_shape s;
    infer_shape_set(&s, PH_DT_INT64, 0, NULL);
    if (set_body_input(c, ph_graph_input(body, 0), &s))
        return PH_EVERIFY;
    infer_shape_set(&s, PH_DT_BOOL, 0, NULL);
    if (set_body_input(c, ph_graph_input(body, 1), &s))
        return PH_EVERIFY;
    for (size_t i = 0; i < n_carried; i++)
        if (set_body_input(c, ph_graph_input(body, 2 + i), infer_in(c, 2 + i)))
            return PH_EVERIFY;
    for (int round = 0; round < 4; round++) {
        int rc = infer_body(c, body);
        if (rc)
            return rc;
        int widened = 0;
        for (size_t i = 0; i < n_carried; i++) {
            infer_shape in, out, j;
            ph_value *bi = ph_graph_input(body, 2 + i);
            infer_read_type(c->st, bi, &in);
            infer_read_type(c->st, ph_graph_output(body, 1 + i), &out);
            join_shape(&in, &out, &j);
            if (!infer_shape_eq(&j, &in) && bi->infer.shape && bi->by_infer) {
                int r = infer_write_type(c->st, bi, &j, NULL, c->n, c->err);
                if (r < 0)
                    return r;
                widened = 1;
            }
        }
        if (!widened)
            break;
    }
    for (size_t i = 0; i < n_carried; i++) {
        infer_shape out;
        infer_read_type(c->st, ph_graph_output(body, 1 + i), &out);
        join_shape(infer_in(c, 2 + i), &out, &c->out[i]);
        if (!c->out[i].dtype)
            c->out[i].dtype = out.dtype;
    }
    for (size_t k = 0; k < n_scan; k++) {
        infer_shape out;
        infer_read_type(c->st, ph_graph_output(body, 1 + n_carried + k), &out);
        infer_shape *o = &c->out[n_carried + k];
        o->dtype = out.dtype;
        if (out.rank < 0 || out.rank + 1 > INFER_MAXRANK)
            continue;
        o->rank = out.rank + 1;
        o->d[0] = INFER_DIM_UNK;
        memcpy(o->d + 1, out.d, (size_t)out.rank * sizeof *o->d);
    }
    return 0;
}

static int infer_scan(infer_ictx *c)
{
    ph_graph *body = ph_node_attr_graph(c->n, "body");
    if (!body || c->opset < 9)
        return 0;
    int64_t m = ph_node_attr_int(c->n, "num_scan_inputs", 0);
    size_t nin = ph_graph_input_count(body), nbo = ph_graph_output_count(body);
    if (m < 0 || (size_t)m > c->nin || nin != c->nin)
        return infer_fail(c, "body has %zu inputs for %zu node inputs", nin, c->nin);
    size_t n_state = c->nin - (size_t)m;
    if (nbo < n_state || c->nout != nbo)
        return infer_fail(c, "body has %zu outputs for %zu node outputs", nbo, c->nout);
    const int64_t *in_axes = NULL, *out_axes = NULL;
    ptrdiff_t nia = ph_node_attr_ints(c->n, "scan_input_axes", &in_axes);
    ptrdiff_t noa = ph_node_attr_ints(c->n, "scan_output_axes", &out_axes);
    infer_dim seq = INFER_DIM_UNK;
    for (size_t i = 0; i < n_state; i++)
        if (set_body_input(c, ph_graph_input(body, i), infer_in(c, i)))
            return PH_EVERIFY;
    for (size_t j = 0; j < (size_t)m; j++) {
        const infer_shape *x = infer_in(c, n_state + j);
        infer_shape s = *x;
        if (x->rank >= 1) {
            int ax = infer_inf_axis(nia > (ptrdiff_t)j ? in_axes[j] : 0, x->rank);
            if (ax < 0)
                return infer_fail(c, "scan_input_axes out of range");
            if (j == 0)
                seq = x->d[ax];
            for (int k = ax; k < x->rank - 1; k++)
                s.d[k] = x->d[k + 1];
            s.rank = x->rank - 1;
        } else {
            s.rank = -1;
        }
        if (set_body_input(c, ph_graph_input(body, n_state + j), &s))
            return PH_EVERIFY;
    }
    int rc = infer_body(c, body);
    if (rc)
        return rc;
    for (size_t i = 0; i < nbo; i++) {
        infer_shape out;
        infer_read_type(c->st, ph_graph_output(body, i), &out);
        if (i < n_state) {
            c->out[i] = out;
            continue;
        }
        infer_shape *o = &c->out[i];
        o->dtype = out.dtype;
        if (out.rank < 0 || out.rank + 1 > INFER_MAXRANK)
            continue;
        size_t k = i - n_state;
        int ax = infer_inf_axis(noa > (ptrdiff_t)k ? out_axes[k] : 0, out.rank + 1);
        if (ax < 0)
            return infer_fail(c, "scan_output_axes out of range");
        o->rank = out.rank + 1;
        for (int d = 0, s = 0; d < o->rank; d++)
            o->d[d] = d == ax ? seq : out.d[s++];
    }
    return 0;
}

infer_fn infer_control_fn(ph_op op)
{
    switch (op) {
    case PH_OP_If: return infer_if;
    case PH_OP_Loop: return infer_loop;
    case PH_OP_Scan: return infer_scan;
    default: return NULL;
    }
}
