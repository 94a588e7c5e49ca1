/* sdk/src/infer/infer_util.c - the helpers of the family files (infer.h):
 * interned symbolic dims, shape arithmetic, reading and writing a value's
 * inferred type and shape constant, constant inputs, and the ONNX rule of
 * how many elements a Slice selects (ph_slice_length, shape.h; the
 * evaluator uses it too).  Calls nothing else of infer/.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"

/* ============================================================== symbols */

infer_dim infer_sym(struct infer_state *st, const char *name)
{
    uintptr_t id = (uintptr_t)ir_map_get(&st->sym_ids, name);
    if (id)
        return -1 - (infer_dim)id;
    char *s = ir_strdup(name);
    if (!s || ir_grow((void **)&st->sym_names, &st->cap_syms, st->n_syms + 1, sizeof *st->sym_names)) {
        free(s);
        return INFER_DIM_UNK;
    }
    st->sym_names[st->n_syms++] = s;
    id = st->n_syms;
    if (ir_map_put(&st->sym_ids, s, (void *)id)) {
        st->n_syms--;
        free(s);
        return INFER_DIM_UNK;
    }
    return -1 - (infer_dim)id;
}

const char *infer_sym_name(const struct infer_state *st, infer_dim d)
{
    size_t id = (size_t)(-1 - d);
    return d <= -2 && id <= st->n_syms ? st->sym_names[id - 1] : NULL;
}

/* ============================================================== shapes */

void infer_shape_unknown(infer_shape *s)
{
    s->dtype = PH_DT_UNDEFINED;
    s->rank = -1;
}

void infer_shape_set(infer_shape *s, int dtype, int rank, const infer_dim *d)
{
    s->dtype = dtype;
    s->rank = rank > INFER_MAXRANK ? -1 : rank;
    for (int i = 0; i < s->rank; i++)
        s->d[i] = d ? d[i] : INFER_DIM_UNK;
}

const char *infer_shape_str(const struct infer_state *st, const infer_shape *s, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "%s", s->dtype ? ph_dtype_name(s->dtype) : "?");
    if (s->rank < 0) {
        if (k < size)
            snprintf(buf + k, size - k, "[...]");
        return buf;
    }
    for (int i = 0; i < s->rank && k < size; i++) {
        const char *sep = i ? "," : "[";
        if (s->d[i] >= 0)
            k += (size_t)snprintf(buf + k, size - k, "%s%lld", sep, (long long)s->d[i]);
        else if (infer_is_sym(s->d[i]))
            k += (size_t)snprintf(buf + k, size - k, "%s%s", sep, infer_sym_name(st, s->d[i]));
        else
            k += (size_t)snprintf(buf + k, size - k, "%s?", sep);
    }
    if (k < size)
        snprintf(buf + k, size - k, s->rank ? "]" : "[]");
    return buf;
}

int64_t infer_shape_numel(const infer_shape *s)
{
    if (s->rank < 0)
        return -1;
    for (int i = 0; i < s->rank; i++)
        if (s->d[i] < 0)
            return -1;
    return ir_dims_numel(s->d, (size_t)s->rank); /* -1 when it overflows */
}

int infer_inf_axis(int64_t a, int rank)
{
    if (a < 0)
        a += rank;
    return a >= 0 && a < rank ? (int)a : -1;
}

int infer_fail(infer_ictx *c, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ph_error_set(c->err, PH_EVERIFY, "node '%s' (%s): %s", ph_node_name(c->n), ph_node_op_type(c->n), msg);
}

int infer_broadcast(infer_ictx *c, const infer_shape *a, const infer_shape *b, infer_shape *out)
{
    if (a->rank < 0 || b->rank < 0) {
        out->rank = -1;
        return 0;
    }
    int r = a->rank > b->rank ? a->rank : b->rank;
    infer_shape res;
    res.rank = r;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        infer_dim da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
        infer_dim d;
        if (da == db)
            d = da;
        else if (da == 1)
            d = db;
        else if (db == 1)
            d = da;
        else if (da >= 0 && db >= 0) {
            char sa[160], sb[160];
            return infer_fail(c, "inputs of shape %s and %s cannot broadcast (dim %d: %lld vs %lld)",
                            infer_shape_str(c->st, a, sa, sizeof sa), infer_shape_str(c->st, b, sb, sizeof sb), i,
                            (long long)da, (long long)db);
        } else if (da > 1)
            d = da;
        else if (db > 1)
            d = db;
        else
            d = INFER_DIM_UNK;
        res.d[i] = d;
    }
    out->rank = r;
    memcpy(out->d, res.d, (size_t)r * sizeof *res.d);
    return 0;
}

infer_dim infer_dim_merge(infer_dim a, infer_dim b, int *clash)
{
    if (a == b)
        return a;
    if (a >= 0 && b >= 0) {
        if (clash)
            *clash = 1;
        return a;
    }
    if (a >= 0)
        return a;
    if (b >= 0)
        return b;
    if (a == INFER_DIM_UNK)
        return b;
    return a;
}

infer_dim infer_dim_join(infer_dim a, infer_dim b) { return a == b ? a : INFER_DIM_UNK; }

infer_dim infer_dim_mul(infer_dim a, infer_dim b)
{
    int64_t p;
    if (a >= 0 && b >= 0)
        return ir_mul_ovf(a, b, &p) ? INFER_DIM_UNK : p;
    if (a == 0 || b == 0)
        return 0;
    if (a == 1)
        return b;
    if (b == 1)
        return a;
    return INFER_DIM_UNK;
}

infer_dim infer_dim_add(infer_dim a, infer_dim b)
{
    int64_t s;
    if (a >= 0 && b >= 0)
        return __builtin_add_overflow(a, b, &s) ? INFER_DIM_UNK : s;
    if (a == 0)
        return b;
    if (b == 0)
        return a;
    return INFER_DIM_UNK;
}

/* ======================================================= value types */

void infer_read_type(struct infer_state *st, ph_value *v, infer_shape *s)
{
    if (v->infer_fresh) {
        *s = *v->infer.shape;
        return;
    }
    s->dtype = v->dtype;
    s->rank = v->rank > INFER_MAXRANK ? -1 : v->rank;
    for (int i = 0; i < s->rank; i++) {
        if (v->dims[i] >= 0)
            s->d[i] = v->dims[i];
        else if (v->dim_params && v->dim_params[i] && v->dim_params[i][0]) {
            if ((s->d[i] = infer_sym(st, v->dim_params[i])) == INFER_DIM_UNK)
                ir_alloc_failed(v->graph ? v->graph->model : NULL);
        } else
            s->d[i] = INFER_DIM_UNK;
    }
    int unknown = s->rank < 0 && !s->dtype;
    const infer_shape *shared = unknown && st->shapes.unknown ? st->shapes.unknown : infer_shape_intern(st, s);
    if (!shared)
        ir_alloc_failed(v->graph ? v->graph->model : NULL);
    if (shared) {
        if (unknown)
            st->shapes.unknown = shared;
        v->infer.shape = shared;
        v->infer.decl = s->dtype || s->rank >= 0 ? shared : NULL;
        v->by_infer = 0;
        v->infer_fresh = 1;
    }
}

void infer_value_pc(const ph_value *v, infer_pc *pc)
{
    const struct infer_partial *p = v ? v->infer.pc : NULL;
    pc->n = -1;
    if (!p)
        return;
    pc->n = p->n;
    memcpy(pc->v, p->v, (size_t)pc->n * sizeof *pc->v);
    memcpy(pc->k, p->k, (size_t)pc->n * sizeof *pc->k);
}

static int pc_same(const struct infer_partial *p, const infer_pc *pc)
{
    int n = pc ? pc->n : -1;
    int have = p ? p->n : -1;
    if (n != have)
        return 0;
    if (n <= 0)
        return 1;
    return memcmp(p->v, pc->v, (size_t)n * sizeof *pc->v) == 0 &&
           memcmp(p->k, pc->k, (size_t)n * sizeof *pc->k) == 0;
}

static int pc_store(ph_value *v, const infer_pc *pc)
{
    if (v->infer.pc) { /* most values carry none */
        free(v->infer.pc);
        v->infer.pc = NULL;
    }
    if (!pc || pc->n < 0)
        return 0;
    size_t n = (size_t)pc->n;
    struct infer_partial *p = malloc(sizeof *p + n * sizeof *p->v + (n ? n : 1));
    if (!p)
        return PH_ENOMEM;
    p->n = pc->n;
    p->k = (uint8_t *)(p->v + n);
    memcpy(p->v, pc->v, n * sizeof *pc->v);
    memcpy(p->k, pc->k, n);
    v->infer.pc = p;
    return 0;
}

/* Store an inferred type.  The inputs and outputs of a body (If branch,
 * Loop/Scan body) keep the type their file gives them at save, often none
 * (a runtime infers them): what inference learns of them is not an edit to
 * write back, so a no-pass round trip stays byte-identical. */
static int store_type(struct infer_state *st, ph_value *v, const infer_shape *s)
{
    int dirty = v->type_dirty, body_io = v->graph && v->graph->parent && (v->is_input || v->n_output_refs);
    infer_shape_entry *e = (infer_shape_entry *)s; /* s is interned */
    int rc = 0;
    if (e->ir_dims) {
        ir_value_set_type_interned(v, s->dtype, s->rank, e->ir_dims);
    } else {
        int64_t dims[INFER_MAXRANK];
        int syms = 0;
        for (int i = 0; i < s->rank; i++) {
            dims[i] = s->d[i] >= 0 ? s->d[i] : -1;
            syms |= infer_is_sym(s->d[i]);
        }
        rc = ph_value_set_type(v, s->dtype, s->rank, dims);
        for (int i = 0; !rc && i < s->rank; i++)
            if (infer_is_sym(s->d[i]))
                rc = ph_value_set_dim_param(v, i, infer_sym_name(st, s->d[i]));
        if (!rc && !syms && s->rank >= 0)
            e->ir_dims = v->dims;
    }
    if (body_io)
        v->type_dirty = dirty;
    return rc;
}

int infer_write_type(struct infer_state *st, ph_value *v, const infer_shape *sin, const infer_pc *pc,
                   const ph_node *n, ph_error *err)
{
    infer_shape cur, s = *sin;
    infer_read_type(st, v, &cur);
    struct infer_value *vi = &v->infer;
    /* Merge with the declared type: on the first inference of any value,
     * and always for graph outputs (their declared type is the interface). */
    int first = !(v->infer_fresh && v->by_infer);
    int declared = first ? (cur.dtype || cur.rank >= 0) : (v->n_output_refs && vi->decl);
    if (declared) {
        infer_shape cur_saved = cur;
        if (!first)
            cur = *vi->decl;
        char a[200], b[200];
        int bad = (s.dtype && cur.dtype && s.dtype != cur.dtype) ||
                  (s.rank >= 0 && cur.rank >= 0 && s.rank != cur.rank);
        for (int i = 0; !bad && s.rank >= 0 && i < s.rank && cur.rank >= 0; i++)
            if (s.d[i] >= 0 && cur.d[i] >= 0 && s.d[i] != cur.d[i])
                bad = 1;
        if (bad)
            return ph_error_set(err, PH_EVERIFY, "node '%s' (%s): output '%s' is declared %s but inferred as %s",
                                ph_node_name(n), ph_node_op_type(n), v->name, infer_shape_str(st, &cur, a, sizeof a),
                                infer_shape_str(st, sin, b, sizeof b));
        if (!s.dtype)
            s.dtype = cur.dtype;
        if (s.rank < 0) {
            s.rank = cur.rank;
            memcpy(s.d, cur.d, sizeof s.d);
        } else if (cur.rank >= 0) {
            for (int i = 0; i < s.rank; i++) {
                if (s.d[i] >= 0)
                    continue;
                if (cur.d[i] >= 0 || s.d[i] == INFER_DIM_UNK || v->n_output_refs)
                    s.d[i] = cur.d[i] == INFER_DIM_UNK ? s.d[i] : cur.d[i];
            }
        }
        cur = cur_saved;
    }
    int same_shape = infer_shape_eq(&s, &cur);
    if (same_shape && pc_same(vi->pc, pc)) {
        v->by_infer = 1;
        return 0;
    }
    const infer_shape *shared = infer_shape_intern(st, &s);
    if (!shared || (!same_shape && store_type(st, v, shared)) || pc_store(v, pc))
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    vi->shape = shared;
    v->by_infer = 1;
    v->infer_fresh = 1;
    st->stats.values_changed++;
    if (same_shape) /* only the shape constant changed; a new type was told of by its setter */
        ir_notify_type_changed(v);
    return 1;
}

/* ==================================================== constant inputs */

const ph_tensor *infer_in_tensor(infer_ictx *c, size_t i)
{
    const ph_value *v = i < c->nin ? c->n->inputs[i] : NULL;
    if (!v)
        return NULL;
    const ph_tensor *t = ph_value_const(v);
    if (t)
        return t;
    if (v->producer && v->producer->op == PH_OP_Constant)
        return ph_node_attr_tensor(v->producer, "value");
    return NULL;
}

static int dtype_is_int(int dt)
{
    switch (dt) {
    case PH_DT_INT8: case PH_DT_INT16: case PH_DT_INT32: case PH_DT_INT64:
    case PH_DT_UINT8: case PH_DT_UINT16: case PH_DT_UINT32: case PH_DT_UINT64: case PH_DT_BOOL:
        return 1;
    default:
        return 0;
    }
}

/* Element k of a tensor's data (which may be unaligned: raw bytes mapped
 * from the file), as int64 or double. */
#define LOAD(T, data, k) (memcpy(&tmp_##T, (const char *)(data) + (k) * sizeof(T), sizeof(T)), tmp_##T)

static int64_t tensor_int_at(const void *data, int dt, size_t k)
{
    int8_t tmp_int8_t;
    int16_t tmp_int16_t;
    int32_t tmp_int32_t;
    int64_t tmp_int64_t;
    uint8_t tmp_uint8_t;
    uint16_t tmp_uint16_t;
    uint32_t tmp_uint32_t;
    uint64_t tmp_uint64_t;
    switch (dt) {
    case PH_DT_INT8: return LOAD(int8_t, data, k);
    case PH_DT_INT16: return LOAD(int16_t, data, k);
    case PH_DT_INT32: return LOAD(int32_t, data, k);
    case PH_DT_INT64: return LOAD(int64_t, data, k);
    case PH_DT_UINT8: case PH_DT_BOOL: return LOAD(uint8_t, data, k);
    case PH_DT_UINT16: return LOAD(uint16_t, data, k);
    case PH_DT_UINT32: return LOAD(uint32_t, data, k);
    case PH_DT_UINT64: return (int64_t)LOAD(uint64_t, data, k);
    default: return 0;
    }
}

static double tensor_double_at(const void *data, int dt, size_t k)
{
    float tmp_float;
    double tmp_double;
    uint16_t tmp_uint16_t;
    switch (dt) {
    case PH_DT_FLOAT: return LOAD(float, data, k);
    case PH_DT_DOUBLE: return LOAD(double, data, k);
    case PH_DT_FLOAT16: return ir_half_to_float(LOAD(uint16_t, data, k));
    case PH_DT_BFLOAT16: return ir_bf16_to_float(LOAD(uint16_t, data, k));
    default: return (double)tensor_int_at(data, dt, k);
    }
}
#undef LOAD

int infer_pc_from_tensor(const ph_tensor *t, infer_pc *pc)
{
    pc->n = -1;
    if (!t || !dtype_is_int(ph_tensor_dtype(t)) || ph_tensor_rank(t) > 1)
        return 0;
    int64_t numel = ph_tensor_numel(t);
    const void *data = ph_tensor_data(t);
    if (numel < 0 || numel > INFER_PC_MAX || (!data && numel))
        return 0;
    pc->n = (int)numel;
    for (int64_t k = 0; k < numel; k++) {
        pc->v[k] = tensor_int_at(data, ph_tensor_dtype(t), (size_t)k);
        pc->k[k] = INFER_PC_NUM;
    }
    return 1;
}

const infer_pc *infer_in_pc(infer_ictx *c, size_t i)
{
    const ph_value *v = i < c->nin ? c->n->inputs[i] : NULL;
    if (!v)
        return NULL;
    infer_pc *pc = &c->in_pc_buf[i < 6 ? i : 5];
    infer_value_pc(v, pc);
    if (pc->n >= 0)
        return pc;
    if (infer_pc_from_tensor(infer_in_tensor(c, i), pc))
        return pc;
    return NULL;
}

int infer_in_ints(infer_ictx *c, size_t i, int64_t *out, int max)
{
    const infer_pc *pc = infer_in_pc(c, i);
    if (!pc || pc->n > max)
        return -1;
    for (int k = 0; k < pc->n; k++) {
        if (pc->k[k] != INFER_PC_NUM)
            return -1;
        out[k] = pc->v[k];
    }
    return pc->n;
}

int infer_in_doubles(infer_ictx *c, size_t i, double *out, int max)
{
    const ph_tensor *t = infer_in_tensor(c, i);
    if (t) {
        int64_t numel = ph_tensor_numel(t);
        const void *data = ph_tensor_data(t);
        if (numel < 0 || numel > max || (!data && numel) || !ph_dtype_size(ph_tensor_dtype(t)))
            return -1;
        for (int64_t k = 0; k < numel; k++)
            out[k] = tensor_double_at(data, ph_tensor_dtype(t), (size_t)k);
        return (int)numel;
    }
    const ph_value *v = i < c->nin ? c->n->inputs[i] : NULL;
    if (v && v->producer && v->producer->op == PH_OP_Constant) {
        const ph_node *p = v->producer;
        const float *fs;
        ptrdiff_t nf = ph_node_attr_floats(p, "value_floats", &fs);
        if (nf >= 0 && nf <= max) {
            for (ptrdiff_t k = 0; k < nf; k++)
                out[k] = fs[k];
            return (int)nf;
        }
        if (ph_node_attr_type(p, "value_float") == PH_ATTR_FLOAT && max >= 1) {
            out[0] = ph_node_attr_float(p, "value_float", 0);
            return 1;
        }
    }
    int64_t iv[INFER_PC_MAX];
    int k = infer_in_ints(c, i, iv, max < INFER_PC_MAX ? max : INFER_PC_MAX);
    for (int j = 0; j < k; j++)
        out[j] = (double)iv[j];
    return k;
}

int infer_ints_attr_or_input(infer_ictx *c, const char *attr, size_t in_idx, int64_t from_opset, int64_t *out,
                           int max)
{
    const int64_t *vals;
    ptrdiff_t k = attr ? ph_node_attr_ints(c->n, attr, &vals) : -1;
    if (k >= 0 && (c->opset < from_opset || !infer_has_in(c, in_idx))) {
        if (k > max)
            return -2;
        if (k > 0) /* an empty list may come with no array */
            memcpy(out, vals, (size_t)k * sizeof *out);
        return (int)k;
    }
    if (in_idx == (size_t)-1 || !infer_has_in(c, in_idx))
        return -1;
    int r = infer_in_ints(c, in_idx, out, max);
    return r >= 0 ? r : -2;
}

infer_pc *infer_out_pc(infer_ictx *c, size_t i)
{
    if (i >= c->nout)
        return NULL;
    if (!c->out_pc[i] && !(c->out_pc[i] = malloc(sizeof(infer_pc))))
        ir_alloc_failed(c->n->graph->model);
    if (c->out_pc[i])
        c->out_pc[i]->n = 0;
    return c->out_pc[i];
}

/* ============================================================ Slice */

PH_API int64_t ph_slice_length(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first)
{
    int64_t s = start, e = end, d = dim;
    if (s < 0)
        s += d;
    if (e < 0)
        e += d;
    if (step > 0) {
        s = s < 0 ? 0 : s > d ? d : s;
        e = e < 0 ? 0 : e > d ? d : e;
        if (first)
            *first = s;
        return e > s ? (e - s - 1) / step + 1 : 0;
    }
    s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
    e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
    if (first)
        *first = s;
    if (step == 0)
        return 0; /* invalid: the callers report it */
    int64_t back = step == INT64_MIN ? INT64_MAX : -step; /* never a negation that overflows */
    return d > 0 && s > e ? (s - e - 1) / back + 1 : 0; /* an empty axis stays empty */
}
