/* sdk/src/infer/infer_query.c - the queries of shape.h over what inference
 * keeps on each value: known shapes, equal dims, shape constants, the
 * counters of the last run, value_info written from the known types, and
 * constant integer operands (ph_value_const_ints, op_helpers.h). */
#include <stdlib.h>
#include <string.h>

#include "infer.h"

PH_API int ph_value_shape_known(const ph_value *v)
{
    if (!v || v->rank < 0)
        return 0;
    for (int i = 0; i < v->rank; i++)
        if (v->dims[i] < 0)
            return 0;
    return 1;
}

static int dim_eq(const ph_value *a, int i, const ph_value *b, int j)
{
    if (a->dims[i] >= 0 || b->dims[j] >= 0)
        return a->dims[i] == b->dims[j];
    const char *pa = ph_value_dim_param(a, i), *pb = ph_value_dim_param(b, j);
    return pa && pb && *pa && strcmp(pa, pb) == 0;
}

PH_API int ph_value_same_shape(const ph_value *a, const ph_value *b)
{
    if (!a || !b || a->rank < 0 || a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (!dim_eq(a, i, b, i))
            return 0;
    return 1;
}

PH_API int ph_value_dim_equal(const ph_value *a, int i, const ph_value *b, int j)
{
    if (!a || !b || a->rank < 0 || b->rank < 0)
        return 0;
    if (i < 0)
        i += a->rank;
    if (j < 0)
        j += b->rank;
    if (i < 0 || i >= a->rank || j < 0 || j >= b->rank)
        return 0;
    return dim_eq(a, i, b, j);
}

/* (ph_value_const_ints is declared in op_helpers.h; it lives here, below the
 * pattern matcher, whose ':ints' constraint calls it.) */
/* A 0-D or 1-D int32/int64 tensor as numbers: the count, PH_ENOTFOUND when
 * t is no such tensor, PH_ERANGE when it has more than max elements. */
static ptrdiff_t tensor_ints(const ph_tensor *t, int64_t *out, size_t max)
{
    if (!t || ph_tensor_rank(t) > 1)
        return PH_ENOTFOUND;
    int dt = ph_tensor_dtype(t);
    int64_t n = ph_tensor_numel(t);
    const unsigned char *d = ph_tensor_data(t);
    if ((dt != PH_DT_INT64 && dt != PH_DT_INT32) || n < 0 || (n && !d))
        return PH_ENOTFOUND;
    if ((uint64_t)n > max)
        return PH_ERANGE;
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
        return PH_ENOTFOUND;
    if (sym)
        for (size_t k = 0; k < max; k++)
            sym[k] = NULL;
    ptrdiff_t n = tensor_ints(ph_value_const_tensor(v), out, max);
    if (n != PH_ENOTFOUND)
        return n; /* the count, or PH_ERANGE */
    if (ph_value_is_graph_input(v))
        return PH_ENOTFOUND;
    ptrdiff_t len = ph_value_shape_const_len(v);
    if (len < 0)
        return PH_ENOTFOUND;
    if ((size_t)len > max)
        return PH_ERANGE;
    for (ptrdiff_t k = 0; k < len; k++) {
        const char *param = NULL;
        switch (ph_value_shape_const_at(v, (size_t)k, &out[k], &param)) {
        case PH_SC_KNOWN:
            break;
        case PH_SC_SYMBOLIC:
            if (!sym || !param || !param[0])
                return PH_ENOTFOUND;
            sym[k] = param;
            out[k] = 0;
            break;
        default:
            return PH_ENOTFOUND;
        }
    }
    return len;
}

PH_API int ph_value_dims_are(const ph_value *v, int rank, const int64_t *want, const ph_value *x)
{
    if (!v || !want || v->rank != rank)
        return 0;
    for (int i = 0; i < rank; i++)
        if (want[i] >= 0 ? ph_value_dim(v, i) != want[i] : !ph_value_dim_equal(v, i, x, (int)(-1 - want[i])))
            return 0;
    return 1;
}

PH_API int64_t ph_value_numel(const ph_value *v)
{
    if (!ph_value_shape_known(v))
        return -1;
    return ir_dims_numel(v->dims, (size_t)v->rank); /* -1 when it overflows */
}

/* The tracked shape constant of v: inferred, or from a constant tensor. */
static const struct infer_partial *tracked(const ph_value *v)
{
    return v ? v->infer.pc : NULL;
}

PH_API ptrdiff_t ph_value_shape_const_len(const ph_value *v)
{
    const struct infer_partial *vi = tracked(v);
    return vi ? vi->n : -1;
}

PH_API ph_shape_const_kind ph_value_shape_const_at(const ph_value *v, size_t i, int64_t *val, const char **param)
{
    const struct infer_partial *vi = tracked(v);
    if (!vi || i >= (size_t)vi->n)
        return PH_SC_UNKNOWN;
    if (vi->k[i] == INFER_PC_NUM) {
        if (val)
            *val = vi->v[i];
        return PH_SC_KNOWN;
    }
    if (vi->k[i] == INFER_PC_SYM && v->graph->model->infer) {
        if (param)
            *param = infer_sym_name(v->graph->model->infer, vi->v[i]);
        return PH_SC_SYMBOLIC;
    }
    return PH_SC_UNKNOWN;
}

PH_API ptrdiff_t ph_value_shape_const(const ph_value *v, const int64_t **vals)
{
    const struct infer_partial *vi = tracked(v);
    if (!vi)
        return -1;
    for (int i = 0; i < vi->n; i++)
        if (vi->k[i] != INFER_PC_NUM)
            return -1;
    if (vals)
        *vals = vi->v;
    return vi->n;
}

PH_API void ph_model_infer_stats(const ph_model *m, ph_infer_stats *out)
{
    if (m->infer)
        *out = m->infer->stats;
    else
        memset(out, 0, sizeof *out);
}

static int write_vi(ph_graph *g, ir_map *have, ph_value *v)
{
    if (!v || v->dead || (!v->dtype && v->rank < 0) || v->n_output_refs || v->is_input)
        return 0;
    Onnx__ValueInfoProto *vi = ir_map_get(have, v->name);
    if (vi)
        return ir_value_info_refresh(vi, v) ? PH_ENOMEM : 1;
    if (ir_grow((void **)&g->value_info, &g->cap_value_info, g->n_value_info + 1, sizeof *g->value_info))
        return PH_ENOMEM;
    vi = ir_value_info_new(v);
    if (!vi)
        return PH_ENOMEM;
    g->value_info[g->n_value_info++] = vi;
    return ir_map_put(have, vi->name, vi) ? PH_ENOMEM : 1;
}

PH_API int ph_graph_write_value_info(ph_graph *g, ph_error *err)
{
    ir_map have = {0};
    int count = 0, rc = 0;
    for (size_t i = 0; i < g->n_value_info && !rc; i++)
        if (g->value_info[i]->name)
            rc = ir_map_put(&have, g->value_info[i]->name, g->value_info[i]);
    for (ph_node *n = g->first; n && rc >= 0; n = n->next) {
        if (n->removed)
            continue;
        for (size_t i = 0; i < n->n_outputs && rc >= 0; i++) {
            rc = write_vi(g, &have, n->outputs[i]);
            count += rc > 0;
        }
        for (size_t s = 0; s < ir_node_n_subgraphs(n) && rc >= 0; s++) {
            rc = ph_graph_write_value_info(ir_node_subgraphs(n)[s].graph, err);
            count += rc > 0 ? rc : 0;
        }
    }
    ir_map_free(&have);
    if (rc < 0)
        return rc == PH_ENOMEM ? ph_error_set(err, PH_ENOMEM, "out of memory") : rc;
    return count;
}
