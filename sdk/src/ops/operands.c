/* sdk/src/ops/operands.c - reading constant operands the way passes need them
 * (see op_helpers.h): the tensor a Constant node holds, a Slice's
 * parameters and whether a sliced axis is whole.  ph_value_const_ints, the
 * small integer vectors (shapes, axes, pads, Slice parameters) from an
 * initializer, a Constant node or a shape constant, is infer/infer_query.c's
 * (below the pattern matcher, whose ':ints' calls it); ph_slice_length, the
 * Slice rule shape inference and the evaluator share, infer/infer_util.c's. */
#include <string.h>

#include "passhost/passhost.h"

/* The attributes a Constant may carry, at most one of which may be set. */
static const char *const constant_attrs[] = {"value",     "value_float",  "value_floats",  "value_int",
                                             "value_ints", "value_string", "value_strings", "sparse_value"};

PH_API int ph_constant_node_tensor(const ph_node *n, ph_tensor **out)
{
    const char *which = NULL;
    *out = NULL;
    for (size_t i = 0; n && i < sizeof constant_attrs / sizeof *constant_attrs; i++) {
        if (ph_node_attr_type(n, constant_attrs[i]) == PH_ATTR_NONE)
            continue;
        if (which)
            return PH_ENOTFOUND; /* several values: malformed */
        which = constant_attrs[i];
    }
    if (!which)
        return PH_ENOTFOUND;
    const int64_t *iv;
    const float *fv;
    ptrdiff_t c;
    if (!strcmp(which, "value")) {
        const ph_tensor *src = ph_node_attr_tensor(n, "value");
        if (!src || ph_tensor_dtype(src) == PH_DT_STRING || !ph_tensor_data(src))
            return PH_ENOTFOUND;
        *out = ph_tensor_clone(src);
    } else if (!strcmp(which, "value_float") && ph_node_attr_type(n, which) == PH_ATTR_FLOAT) {
        float f = ph_node_attr_float(n, which, 0.0f);
        *out = ph_tensor_new(PH_DT_FLOAT, 0, NULL, &f);
    } else if (!strcmp(which, "value_int") && ph_node_attr_type(n, which) == PH_ATTR_INT) {
        int64_t i = ph_node_attr_int(n, which, 0);
        *out = ph_tensor_new(PH_DT_INT64, 0, NULL, &i);
    } else if (!strcmp(which, "value_floats") && (c = ph_node_attr_floats(n, which, &fv)) >= 0) {
        *out = ph_tensor_new(PH_DT_FLOAT, 1, (int64_t[]){c}, c ? (const void *)fv : NULL);
    } else if (!strcmp(which, "value_ints") && (c = ph_node_attr_ints(n, which, &iv)) >= 0) {
        *out = ph_tensor_new(PH_DT_INT64, 1, (int64_t[]){c}, c ? (const void *)iv : NULL);
    } else {
        return PH_ENOTFOUND; /* string, sparse, or an attribute of the wrong type */
    }
    return *out ? 0 : PH_ENOMEM;
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

PH_API int ph_slice_axis_whole(const ph_value *x, const ph_slice_params *s, int k)
{
    const int64_t big = INT32_MAX; /* an end this large means "to the end" */
    int ax = (int)s->axis[k];
    int64_t d = ph_value_dim(x, ax), st = s->step[k], first;
    if (d >= 0) {
        if (s->end_sym[k])
            return 0; /* a symbolic end on a static axis: not provable */
        if (d == 0)
            return 1; /* nothing to select: the output is as empty as x */
        int64_t len = ph_slice_length(d, s->start[k], s->end[k], st, &first);
        return len == d && first == 0 && (st == 1 || (d == 1 && st > 0));
    }
    if (st != 1 || (s->start[k] != 0 && s->start[k] > -big))
        return 0;
    if (s->end_sym[k]) {
        const char *p = ph_value_dim_param(x, ax);
        return p && p[0] && !strcmp(p, s->end_sym[k]);
    }
    return s->end[k] >= big;
}

PH_API int ph_node_slice_params(const ph_node *n, int rank, ph_slice_params *s)
{
    memset(s, 0, sizeof *s);
    if (ph_node_op(n) != PH_OP_Slice)
        return PH_ENOTFOUND;
    if (rank < 0 || rank > PH_SLICE_MAX)
        return PH_EINVAL;
    int64_t opset = ph_model_opset(ph_graph_model(ph_node_graph(n)), "");
    ptrdiff_t na = -1, nst = -1;
    if (opset > 0 && opset < 10) { /* starts, ends and axes are attributes */
        const int64_t *v;
        ptrdiff_t k = ph_node_attr_ints(n, "starts", &v);
        if (k < 0 || k > PH_SLICE_MAX)
            return k < 0 ? PH_ENOTFOUND : PH_EINVAL;
        s->n = (int)k;
        memcpy(s->start, v, (size_t)k * sizeof *v);
        if (ph_node_attr_ints(n, "ends", &v) != k)
            return PH_EINVAL;
        memcpy(s->end, v, (size_t)k * sizeof *v);
        if ((na = ph_node_attr_ints(n, "axes", &v)) >= 0) {
            if (na != k)
                return PH_EINVAL;
            memcpy(s->axis, v, (size_t)k * sizeof *v);
        }
    } else {
        size_t n_in = ph_node_input_count(n);
        const ph_value *starts = n_in > 1 ? ph_node_input(n, 1) : NULL;
        const ph_value *ends = n_in > 2 ? ph_node_input(n, 2) : NULL;
        if (!starts || !ends)
            return PH_EINVAL;
        ptrdiff_t k = ph_value_const_ints(starts, s->start, NULL, PH_SLICE_MAX);
        if (k < 0)
            return PH_ENOTFOUND;
        if (ph_value_const_ints(ends, s->end, s->end_sym, PH_SLICE_MAX) != k)
            return PH_ENOTFOUND;
        s->n = (int)k;
        const ph_value *ax = n_in > 3 ? ph_node_input(n, 3) : NULL;
        const ph_value *st = n_in > 4 ? ph_node_input(n, 4) : NULL;
        if (ax && (na = ph_value_const_ints(ax, s->axis, NULL, PH_SLICE_MAX)) != k)
            return PH_ENOTFOUND;
        if (st && (nst = ph_value_const_ints(st, s->step, NULL, PH_SLICE_MAX)) != k)
            return PH_ENOTFOUND;
    }
    unsigned char seen[PH_SLICE_MAX] = {0};
    for (int k = 0; k < s->n; k++) {
        int64_t a = na >= 0 ? s->axis[k] : k;
        if (a < 0)
            a += rank;
        if (a < 0 || a >= rank || seen[a]++)
            return PH_EINVAL;
        s->axis[k] = a;
        if (nst < 0)
            s->step[k] = 1;
        if (s->step[k] == 0)
            return PH_EINVAL;
    }
    return 0;
}
