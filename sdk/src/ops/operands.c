/* sdk/src/ops/operands.c - reading constant operands the way passes need them:
 * small integer vectors (shapes, axes, pads, Slice parameters) from an
 * initializer, a Constant node or a shape constant of shape inference, and
 * a Slice's parameters (see shape.h; ph_slice_length is infer/infer_util.c's). */
#include <string.h>

#include "internal.h"
#include "passhost/shape.h"

/* A 0-D or 1-D int32/int64 tensor as numbers; count or -1. */
static ptrdiff_t tensor_ints(const ph_tensor *t, int64_t *out, size_t max)
{
    if (!t || ph_tensor_rank(t) > 1)
        return -1;
    int dt = ph_tensor_dtype(t);
    int64_t n = ph_tensor_numel(t);
    const unsigned char *d = ph_tensor_data(t);
    if ((dt != PH_DT_INT64 && dt != PH_DT_INT32) || n < 0 || (uint64_t)n > max || (n && !d))
        return -1;
    for (int64_t k = 0; k < n; k++) {
        if (dt == PH_DT_INT64) {
            memcpy(&out[k], d + 8 * k, 8);
        } else {
            int32_t v;
            memcpy(&v, d + 4 * k, 4);
            out[k] = v;
        }
    }
    return (ptrdiff_t)n;
}

PH_API ptrdiff_t ph_value_const_ints(const ph_value *v, int64_t *out, const char **sym, size_t max)
{
    if (!v)
        return -1;
    if (sym)
        for (size_t k = 0; k < max; k++)
            sym[k] = NULL;
    ptrdiff_t n = tensor_ints(ph_value_const(v), out, max);
    if (n >= 0)
        return n;
    const ph_node *p = v->producer;
    if (p && p->op == PH_OP_Constant && (n = tensor_ints(ph_node_attr_tensor(p, "value"), out, max)) >= 0)
        return n;
    if (v->is_input)
        return -1;
    ptrdiff_t len = ph_value_shape_const_len(v);
    if (len < 0 || (size_t)len > max)
        return -1;
    for (ptrdiff_t k = 0; k < len; k++) {
        const char *param = NULL;
        switch (ph_value_shape_const_at(v, (size_t)k, &out[k], &param)) {
        case PH_SC_KNOWN:
            break;
        case PH_SC_SYMBOLIC:
            if (!sym || !param || !param[0])
                return -1;
            sym[k] = param;
            out[k] = 0;
            break;
        default:
            return -1;
        }
    }
    return len;
}

PH_API int ph_conv_adds_no_padding(const ph_node *conv, const ph_tensor *w)
{
    const char *ap = ph_node_attr_string(conv, "auto_pad", "NOTSET");
    if (strcmp(ap, "VALID") == 0)
        return 1;
    if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
        if (!w || ph_tensor_rank(w) < 3)
            return 0;
        for (size_t d = 2; d < ph_tensor_rank(w); d++)
            if (ph_tensor_dim(w, d) != 1)
                return 0;
        return 1;
    }
    if (strcmp(ap, "NOTSET") != 0)
        return 0;
    const int64_t *p;
    ptrdiff_t n = ph_node_attr_ints(conv, "pads", &p);
    for (ptrdiff_t i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

PH_API int ph_node_slice_params(const ph_node *n, int rank, ph_slice_params *s)
{
    memset(s, 0, sizeof *s);
    if (n->op != PH_OP_Slice || rank < 0 || rank > PH_SLICE_MAX)
        return -1;
    int64_t opset = ph_model_opset(n->graph->model, "");
    ptrdiff_t na = -1, nst = -1;
    if (opset > 0 && opset < 10) { /* starts, ends and axes are attributes */
        const int64_t *v;
        ptrdiff_t k = ph_node_attr_ints(n, "starts", &v);
        if (k < 0 || k > PH_SLICE_MAX)
            return -1;
        s->n = (int)k;
        memcpy(s->start, v, (size_t)k * sizeof *v);
        if (ph_node_attr_ints(n, "ends", &v) != k)
            return -1;
        memcpy(s->end, v, (size_t)k * sizeof *v);
        if ((na = ph_node_attr_ints(n, "axes", &v)) >= 0) {
            if (na != k)
                return -1;
            memcpy(s->axis, v, (size_t)k * sizeof *v);
        }
    } else {
        if (n->n_inputs < 3 || !n->inputs[1] || !n->inputs[2])
            return -1;
        ptrdiff_t k = ph_value_const_ints(n->inputs[1], s->start, NULL, PH_SLICE_MAX);
        if (k < 0 || ph_value_const_ints(n->inputs[2], s->end, s->end_sym, PH_SLICE_MAX) != k)
            return -1;
        s->n = (int)k;
        const ph_value *ax = n->n_inputs > 3 ? n->inputs[3] : NULL;
        const ph_value *st = n->n_inputs > 4 ? n->inputs[4] : NULL;
        if (ax && (na = ph_value_const_ints(ax, s->axis, NULL, PH_SLICE_MAX)) != k)
            return -1;
        if (st && (nst = ph_value_const_ints(st, s->step, NULL, PH_SLICE_MAX)) != k)
            return -1;
    }
    unsigned char seen[PH_SLICE_MAX] = {0};
    for (int k = 0; k < s->n; k++) {
        int64_t a = na >= 0 ? s->axis[k] : k;
        if (a < 0)
            a += rank;
        if (a < 0 || a >= rank || seen[a]++)
            return -1;
        s->axis[k] = a;
        if (nst < 0)
            s->step[k] = 1;
        if (s->step[k] == 0)
            return -1;
    }
    return 0;
}
