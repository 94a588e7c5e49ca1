/* tests/support/mini_eval.c - the reference evaluator of mini_eval.h.
 *
 * One environment maps each ph_value to its computed tensor (linear search:
 * test graphs have a handful of values).  Each op is one function that reads
 * its input tensors and fills output 0; every precondition the op relies on is
 * checked and reported, so an unsupported case fails loudly.
 */
#include "mini_eval.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- tensors */

int64_t me_numel(const me_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->dims[i];
    return n;
}

void me_tensor_free(me_tensor *t)
{
    free(t->data);
    memset(t, 0, sizeof *t);
}

int me_tensor_alloc(me_tensor *t, int rank, const int64_t *dims)
{
    memset(t, 0, sizeof *t);
    if (rank < 0 || rank > ME_MAX_RANK)
        return -1;
    t->rank = rank;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return -1;
        t->dims[i] = dims[i];
    }
    int64_t n = me_numel(t);
    if (n > ((int64_t)1 << 31)) {
        memset(t, 0, sizeof *t);
        return -1;
    }
    if (n > 0) {
        t->data = calloc((size_t)n, sizeof(float));
        if (!t->data) {
            memset(t, 0, sizeof *t);
            return -1;
        }
    }
    return 0;
}

int me_tensor_copy(me_tensor *dst, const me_tensor *src)
{
    if (me_tensor_alloc(dst, src->rank, src->dims) != 0)
        return -1;
    if (dst->data)
        memcpy(dst->data, src->data, (size_t)me_numel(src) * sizeof(float));
    return 0;
}

/* --------------------------------------------------------- environment */

typedef struct me_slot {
    const ph_value *v;
    me_tensor t;
} me_slot;

typedef struct me_env {
    me_slot *slots;
    size_t count, cap;
    char *err;
    size_t err_size;
} me_env;

static int env_fail(me_env *e, const char *fmt, ...) PH_PRINTF(2, 3);
static int env_fail(me_env *e, const char *fmt, ...)
{
    if (e->err && e->err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->err, e->err_size, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Report a problem with node n: "node NAME (OP): message". */
static int node_fail(me_env *e, const ph_node *n, const char *fmt, ...) PH_PRINTF(3, 4);
static int node_fail(me_env *e, const ph_node *n, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return env_fail(e, "mini_eval: node '%s' (%s): %s", ph_node_name(n),
                    ph_node_op_type(n), msg);
}

static void env_free(me_env *e)
{
    for (size_t i = 0; i < e->count; i++)
        me_tensor_free(&e->slots[i].t);
    free(e->slots);
    e->slots = NULL;
    e->count = e->cap = 0;
}

static const me_tensor *env_get(const me_env *e, const ph_value *v)
{
    for (size_t i = 0; i < e->count; i++)
        if (e->slots[i].v == v)
            return &e->slots[i].t;
    return NULL;
}

/* Store t under v; takes t's data (t is emptied) even on failure. */
static int env_put(me_env *e, const ph_value *v, me_tensor *t)
{
    if (e->count == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 16;
        me_slot *s = realloc(e->slots, cap * sizeof *s);
        if (!s) {
            me_tensor_free(t);
            return env_fail(e, "mini_eval: out of memory");
        }
        e->slots = s;
        e->cap = cap;
    }
    e->slots[e->count].v = v;
    e->slots[e->count].t = *t;
    e->count++;
    memset(t, 0, sizeof *t);
    return 0;
}

/* Load the constant tensor of initializer v into the environment. */
static const me_tensor *env_load_const(me_env *e, const ph_value *v)
{
    const ph_tensor *ct = ph_value_const(v);
    if (!ct) {
        env_fail(e, "mini_eval: value '%s' is used before it is computed", ph_value_name(v));
        return NULL;
    }
    if (ph_tensor_dtype(ct) != PH_DT_FLOAT) {
        env_fail(e, "mini_eval: initializer '%s' has dtype %s; only float is supported",
                 ph_value_name(v), ph_dtype_name(ph_tensor_dtype(ct)));
        return NULL;
    }
    size_t rank = ph_tensor_rank(ct);
    if (rank > ME_MAX_RANK) {
        env_fail(e, "mini_eval: initializer '%s' has rank %zu > %d", ph_value_name(v), rank,
                 ME_MAX_RANK);
        return NULL;
    }
    me_tensor t;
    if (me_tensor_alloc(&t, (int)rank, ph_tensor_dims(ct)) != 0) {
        env_fail(e, "mini_eval: cannot allocate initializer '%s'", ph_value_name(v));
        return NULL;
    }
    const void *data = ph_tensor_data(ct);
    if (t.data && !data) {
        me_tensor_free(&t);
        env_fail(e, "mini_eval: data of initializer '%s' is not readable", ph_value_name(v));
        return NULL;
    }
    if (t.data)
        memcpy(t.data, data, (size_t)me_numel(&t) * sizeof(float));
    if (env_put(e, v, &t) != 0)
        return NULL;
    return &e->slots[e->count - 1].t;
}

static const me_tensor *env_value(me_env *e, const ph_value *v)
{
    const me_tensor *t = env_get(e, v);
    return t ? t : env_load_const(e, v);
}

/* ------------------------------------------------------------- helpers */

/* Row-major strides of a shape. */
static void strides_of(int rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

/* Strides of t seen as a tensor of out_rank dims aligned to the right
 * (numpy broadcasting): 0 where t has no dim or a dim of 1. */
static void bcast_strides(int rank, const int64_t *dims, int out_rank, int64_t *strides)
{
    int64_t own[ME_MAX_RANK];
    strides_of(rank, dims, own);
    for (int i = 0; i < out_rank; i++) {
        int j = i - (out_rank - rank);
        strides[i] = (j < 0 || dims[j] == 1) ? 0 : own[j];
    }
}

/* numpy broadcast of two shapes into out; -1 if incompatible. */
static int bcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int *rout,
                       int64_t *out)
{
    int r = ra > rb ? ra : rb;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int64_t da = ia < 0 ? 1 : a[ia], db = ib < 0 ? 1 : b[ib];
        if (da != db && da != 1 && db != 1)
            return -1;
        out[i] = da == 1 ? db : da;
    }
    *rout = r;
    return 0;
}

/* Advance a multi-index over dims (row major); 0 when it wrapped around. */
static int next_index(int rank, const int64_t *dims, int64_t *idx)
{
    for (int i = rank - 1; i >= 0; i--) {
        if (++idx[i] < dims[i])
            return 1;
        idx[i] = 0;
    }
    return 0;
}

/* The one dot product behind MatMul and Gemm: k ascending, float accumulator.
 * Kept out of line so both ops run the very same instructions. */
__attribute__((noinline)) static float me_dot(const float *a, int64_t sa, const float *b,
                                              int64_t sb, int64_t k)
{
    float acc = 0.0f;
    for (int64_t i = 0; i < k; i++)
        acc += a[i * sa] * b[i * sb];
    return acc;
}

static const char *shape_str(const me_tensor *t, char *buf, size_t size)
{
    size_t off = 0;
    off += (size_t)snprintf(buf + off, size - off, "[");
    for (int i = 0; i < t->rank && off < size; i++)
        off += (size_t)snprintf(buf + off, size - off, "%s%lld", i ? "," : "",
                                (long long)t->dims[i]);
    if (off < size)
        snprintf(buf + off, size - off, "]");
    return buf;
}

/* ------------------------------------------------------------------ ops */

typedef int (*op_fn)(me_env *e, const ph_node *n, const me_tensor **in, size_t n_in,
                     me_tensor *out);

static int need_inputs(me_env *e, const ph_node *n, const me_tensor **in, size_t n_in,
                       size_t min, size_t max)
{
    if (n_in < min || n_in > max)
        return node_fail(e, n, "expected %zu..%zu inputs, got %zu", min, max, n_in);
    for (size_t i = 0; i < min; i++)
        if (!in[i])
            return node_fail(e, n, "required input %zu is missing", i);
    return 0;
}

static int op_identity(me_env *e, const ph_node *n, const me_tensor **in, size_t n_in,
                       me_tensor *out)
{
    if (need_inputs(e, n, in, n_in, 1, 1))
        return -1;
    if (me_tensor_copy(out, in[0]))
        return node_fail(e, n, "out of memory");
    return 0;
}

static int unary(me_env *e, const ph_node *n, const me_tensor **in, size_t n_in,
                 me_tensor *out, float (*f)(float))
{
    if (need_inputs(e, n, in, n_in, 1, 1))
        return -1;
    if (me_tensor_copy(out, in[0]))
        return node_fail(e, n, "out of memory");
    int64_t count = me_numel(out);
    for (int64_t i = 0; i < count; i++)
        out->data[i] = f(out->data[i]);
    return 0;
}

static float f_neg(float x) { return -x; }
static float f_relu(float x) { return x < 0.0f ? 0.0f : x; }

static int op_neg(me_env *e, const ph_node *n, const me_tensor **in, size_t n_in, me_tensor *out)
{
    return unary(e, n, in, n_in, out, f_neg);
}

static int op_relu(me_env *e, const ph_node *n, const me_tensor **in, size_t n_in, me_tensor *out)
{
    return unary(e, n, in, n_in, out, f_relu);
}

static int op_add(me_env *e, const ph_node *n, const me_tensor **in, size_t n_in, me_tensor *out)
{
    if (need_inputs(e, n, in, n_in, 2, 2))
        return -1;
    const me_tensor *a = in[0], *b = in[1];
    int r;
    int64_t dims[ME_MAX_RANK], sa[ME_MAX_RANK], sb[ME_MAX_RANK], idx[ME_MAX_RANK] = {0};
    char s1[64], s2[64];
    if (bcast_shape(a->rank, a->dims, b->rank, b->dims, &r, dims))
        return node_fail(e, n, "shapes %s and %s do not broadcast", shape_str(a, s1, sizeof s1),
                         shape_str(b, s2, sizeof s2));
    if (me_tensor_alloc(out, r, dims))
        return node_fail(e, n, "out of memory");
    bcast_strides(a->rank, a->dims, r, sa);
    bcast_strides(b->rank, b->dims, r, sb);
    int64_t count = me_numel(out);
    for (int64_t i = 0; i < count; i++) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d < r; d++) {
            oa += idx[d] * sa[d];
            ob += idx[d] * sb[d];
        }
        out->data[i] = a->data[oa] + b->data[ob];
        next_index(r, dims, idx);
    }
    return 0;
}

/* Read a permutation attribute of the given rank (absent: reversed dims). */
static int read_perm(me_env *e, const ph_node *n, int rank, int64_t *perm)
{
    const int64_t *p;
    ph_attr_type at = ph_node_attr_type(n, "perm");
    if (at == PH_ATTR_NONE) {
        for (int i = 0; i < rank; i++)
            perm[i] = rank - 1 - i;
        return 0;
    }
    ptrdiff_t len = ph_node_attr_ints(n, "perm", &p);
    if (at != PH_ATTR_INTS || len != rank)
        return node_fail(e, n, "perm has %td entries for rank %d", len, rank);
    int seen[ME_MAX_RANK] = {0};
    for (int i = 0; i < rank; i++) {
        if (p[i] < 0 || p[i] >= rank || seen[p[i]]++)
            return node_fail(e, n, "perm is not a permutation of 0..%d", rank - 1);
        perm[i] = p[i];
    }
    return 0;
}

static int op_transpose(me_env *e, const ph_node *n, const me_tensor **in, size_t n_in,
                        me_tensor *out)
{
    if (need_inputs(e, n, in, n_in, 1, 1))
        return -1;
    const me_tensor *x = in[0];
    int r = x->rank;
    int64_t perm[ME_MAX_RANK], dims[ME_MAX_RANK], xs[ME_MAX_RANK], idx[ME_MAX_RANK] = {0};
    if (read_perm(e, n, r, perm))
        return -1;
    for (int i = 0; i < r; i++)
        dims[i] = x->dims[perm[i]];
    if (me_tensor_alloc(out, r, dims))
        return node_fail(e, n, "out of memory");
    strides_of(r, x->dims, xs);
    int64_t count = me_numel(out);
    for (int64_t i = 0; i < count; i++) {
        int64_t off = 0;
        for (int d = 0; d < r; d++)
            off += idx[d] * xs[perm[d]];
        out->data[i] = x->data[off];
        next_index(r, dims, idx);
    }
    return 0;
}

/* numpy matmul: 1-D operands are promoted and the added dim removed again;
 * batch dims broadcast. */
static int op_matmul(me_env *e, const ph_node *n, const me_tensor **in, size_t n_in,
                     me_tensor *out)
{
    if (need_inputs(e, n, in, n_in, 2, 2))
        return -1;
    const me_tensor *a = in[0], *b = in[1];
    char s1[64], s2[64];
    if (a->rank < 1 || b->rank < 1)
        return node_fail(e, n, "MatMul of a scalar");
    int ra = a->rank, rb = b->rank;
    int64_t M = ra == 1 ? 1 : a->dims[ra - 2], K = a->dims[ra - 1];
    int64_t K2 = rb == 1 ? b->dims[0] : b->dims[rb - 2], N = rb == 1 ? 1 : b->dims[rb - 1];
    if (K != K2)
        return node_fail(e, n, "inner dims differ: %s x %s", shape_str(a, s1, sizeof s1),
                         shape_str(b, s2, sizeof s2));
    int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0, rbat;
    int64_t bdims[ME_MAX_RANK], sa[ME_MAX_RANK], sb[ME_MAX_RANK], idx[ME_MAX_RANK] = {0};
    if (bcast_shape(ba, a->dims, bb, b->dims, &rbat, bdims))
        return node_fail(e, n, "batch dims of %s and %s do not broadcast",
                         shape_str(a, s1, sizeof s1), shape_str(b, s2, sizeof s2));
    int64_t odims[ME_MAX_RANK];
    int ro = 0;
    for (int i = 0; i < rbat; i++)
        odims[ro++] = bdims[i];
    if (ra > 1)
        odims[ro++] = M;
    if (rb > 1)
        odims[ro++] = N;
    if (ro > ME_MAX_RANK || me_tensor_alloc(out, ro, odims))
        return node_fail(e, n, "cannot allocate the result");
    /* batch strides in units of whole matrices */
    bcast_strides(ba, a->dims, rbat, sa);
    bcast_strides(bb, b->dims, rbat, sb);
    int64_t nbatch = 1;
    for (int i = 0; i < rbat; i++)
        nbatch *= bdims[i];
    float *o = out->data;
    for (int64_t bi = 0; bi < nbatch; bi++) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d < rbat; d++) {
            oa += idx[d] * sa[d];
            ob += idx[d] * sb[d];
        }
        const float *am = a->data + oa * M * K, *bm = b->data + ob * K * N;
        for (int64_t m = 0; m < M; m++)
            for (int64_t j = 0; j < N; j++)
                *o++ = me_dot(am + m * K, 1, bm + j, N, K);
        next_index(rbat, bdims, idx);
    }
    return 0;
}

static int op_gemm(me_env *e, const ph_node *n, const me_tensor **in, size_t n_in, me_tensor *out)
{
    if (need_inputs(e, n, in, n_in, 2, 3))
        return -1;
    const me_tensor *a = in[0], *b = in[1], *c = n_in > 2 ? in[2] : NULL;
    char s1[64], s2[64];
    if (a->rank != 2 || b->rank != 2)
        return node_fail(e, n, "Gemm needs 2-D A and B, got %s and %s",
                         shape_str(a, s1, sizeof s1), shape_str(b, s2, sizeof s2));
    int64_t ta = ph_node_attr_int(n, "transA", 0), tb = ph_node_attr_int(n, "transB", 0);
    float alpha = ph_node_attr_float(n, "alpha", 1.0f), beta = ph_node_attr_float(n, "beta", 1.0f);
    int64_t M = ta ? a->dims[1] : a->dims[0], K = ta ? a->dims[0] : a->dims[1];
    int64_t K2 = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
    if (K != K2)
        return node_fail(e, n, "inner dims differ: %s x %s (transA=%lld transB=%lld)",
                         shape_str(a, s1, sizeof s1), shape_str(b, s2, sizeof s2),
                         (long long)ta, (long long)tb);
    int64_t odims[2] = {M, N}, cs[2] = {0, 0};
    if (c) {
        if (c->rank > 2)
            return node_fail(e, n, "C of rank %d", c->rank);
        for (int i = 0; i < c->rank; i++) {
            int64_t want = odims[2 - c->rank + i];
            if (c->dims[i] != 1 && c->dims[i] != want)
                return node_fail(e, n, "C %s does not broadcast to [%lld,%lld]",
                                 shape_str(c, s1, sizeof s1), (long long)M, (long long)N);
        }
        bcast_strides(c->rank, c->dims, 2, cs);
    }
    if (me_tensor_alloc(out, 2, odims))
        return node_fail(e, n, "out of memory");
    /* A'[m,k] and B'[k,n] as (start, step) into the stored matrices */
    int64_t a_row = ta ? 1 : K, a_step = ta ? M : 1;
    int64_t b_col = tb ? K : 1, b_step = tb ? 1 : N;
    for (int64_t m = 0; m < M; m++)
        for (int64_t j = 0; j < N; j++) {
            float v = alpha * me_dot(a->data + m * a_row, a_step, b->data + j * b_col, b_step, K);
            if (c)
                v += beta * c->data[m * cs[0] + j * cs[1]];
            out->data[m * N + j] = v;
        }
    return 0;
}

/* Geometry of a 2-D pool after its attributes are read and checked. */
typedef struct pool_geom {
    int64_t k[2], s[2], d[2], pb[2], pe[2], in[2], out[2];
    int ceil_mode;
} pool_geom;

static int read_pair(me_env *e, const ph_node *n, const char *name, int64_t dflt, int64_t *v,
                     int64_t min)
{
    const int64_t *p;
    v[0] = v[1] = dflt;
    if (ph_node_attr_type(n, name) == PH_ATTR_NONE)
        return 0;
    if (ph_node_attr_type(n, name) != PH_ATTR_INTS || ph_node_attr_ints(n, name, &p) != 2)
        return node_fail(e, n, "%s must be 2 ints", name);
    if (p[0] < min || p[1] < min)
        return node_fail(e, n, "%s value below %lld", name, (long long)min);
    v[0] = p[0];
    v[1] = p[1];
    return 0;
}

static int pool_geometry(me_env *e, const ph_node *n, const me_tensor *x, pool_geom *g)
{
    const int64_t *p;
    char s1[64];
    if (x->rank != 4)
        return node_fail(e, n, "only 2-D pooling of [N,C,H,W] is supported, input %s",
                         shape_str(x, s1, sizeof s1));
    if (ph_node_attr_type(n, "kernel_shape") == PH_ATTR_NONE)
        return node_fail(e, n, "kernel_shape is missing");
    if (read_pair(e, n, "kernel_shape", 1, g->k, 1) || read_pair(e, n, "strides", 1, g->s, 1) ||
        read_pair(e, n, "dilations", 1, g->d, 1))
        return -1;
    g->pb[0] = g->pb[1] = g->pe[0] = g->pe[1] = 0;
    if (ph_node_attr_type(n, "pads") != PH_ATTR_NONE) {
        if (ph_node_attr_type(n, "pads") != PH_ATTR_INTS || ph_node_attr_ints(n, "pads", &p) != 4)
            return node_fail(e, n, "pads must be 4 ints");
        for (int i = 0; i < 4; i++)
            if (p[i] < 0)
                return node_fail(e, n, "negative pads");
        g->pb[0] = p[0], g->pb[1] = p[1], g->pe[0] = p[2], g->pe[1] = p[3];
    }
    g->ceil_mode = (int)ph_node_attr_int(n, "ceil_mode", 0);
    const char *ap = ph_node_attr_string(n, "auto_pad", "NOTSET");
    int same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && !same_upper && !same_lower)
        return node_fail(e, n, "auto_pad '%s' is not supported", ap);
    if (strcmp(ap, "NOTSET"))
        g->pb[0] = g->pb[1] = g->pe[0] = g->pe[1] = 0;
    for (int i = 0; i < 2; i++) {
        int64_t in = x->dims[2 + i], dk = (g->k[i] - 1) * g->d[i] + 1;
        g->in[i] = in;
        if (same_upper || same_lower) {
            int64_t o = (in + g->s[i] - 1) / g->s[i];
            int64_t total = (o - 1) * g->s[i] + dk - in;
            if (total < 0)
                total = 0;
            g->pb[i] = same_upper ? total / 2 : total - total / 2;
            g->pe[i] = total - g->pb[i];
            g->out[i] = o;
            continue;
        }
        int64_t span = in + g->pb[i] + g->pe[i] - dk;
        if (span < 0)
            return node_fail(e, n, "kernel larger than the padded input");
        int64_t o = g->ceil_mode ? (span + g->s[i] - 1) / g->s[i] + 1 : span / g->s[i] + 1;
        /* a window may not start in the end padding (ONNX / PyTorch rule) */
        if (g->ceil_mode && (o - 1) * g->s[i] >= in + g->pb[i])
            o--;
        g->out[i] = o;
    }
    return 0;
}

static int op_pool(me_env *e, const ph_node *n, const me_tensor **in, size_t n_in, me_tensor *out)
{
    if (need_inputs(e, n, in, n_in, 1, 1))
        return -1;
    int is_max = ph_node_op(n) == PH_OP_MaxPool;
    for (size_t i = 1; i < ph_node_output_count(n); i++) {
        ph_value *o = ph_node_output(n, i);
        if (o && ph_value_name(o)[0])
            return node_fail(e, n, "output %zu (Indices) is not supported", i);
    }
    const me_tensor *x = in[0];
    pool_geom g;
    if (pool_geometry(e, n, x, &g))
        return -1;
    int include_pad = !is_max && ph_node_attr_int(n, "count_include_pad", 0) != 0;
    int64_t odims[4] = {x->dims[0], x->dims[1], g.out[0], g.out[1]};
    if (me_tensor_alloc(out, 4, odims))
        return node_fail(e, n, "out of memory");
    int64_t planes = x->dims[0] * x->dims[1], H = g.in[0], W = g.in[1];
    float *o = out->data;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x->data + pl * H * W;
        for (int64_t oh = 0; oh < g.out[0]; oh++)
            for (int64_t ow = 0; ow < g.out[1]; ow++) {
                float acc = 0.0f;
                int64_t valid = 0, padded = 0;
                for (int64_t kh = 0; kh < g.k[0]; kh++)
                    for (int64_t kw = 0; kw < g.k[1]; kw++) {
                        int64_t ih = oh * g.s[0] - g.pb[0] + kh * g.d[0];
                        int64_t iw = ow * g.s[1] - g.pb[1] + kw * g.d[1];
                        if (ih < H + g.pe[0] && iw < W + g.pe[1])
                            padded++;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                            continue;
                        float v = xp[ih * W + iw];
                        if (valid++ == 0)
                            acc = v;
                        else if (is_max)
                            acc = v > acc ? v : acc;
                        else
                            acc += v;
                    }
                if (valid == 0)
                    return node_fail(e, n, "a window covers only padding");
                /* ceil_mode windows reaching past the end padding: runtimes
                 * disagree on the divisor, so refuse rather than guess */
                if (include_pad && padded != g.k[0] * g.k[1])
                    return node_fail(e, n, "count_include_pad with a window past the "
                                           "padding (ceil_mode) is not supported");
                if (!is_max)
                    acc /= (float)(include_pad ? padded : valid);
                *o++ = acc;
            }
    }
    return 0;
}

/* ------------------------------------------------------------- driver */

static op_fn op_lookup(ph_op op)
{
    switch (op) {
    case PH_OP_Identity: return op_identity;
    case PH_OP_Neg: return op_neg;
    case PH_OP_Relu: return op_relu;
    case PH_OP_Add: return op_add;
    case PH_OP_Transpose: return op_transpose;
    case PH_OP_MatMul: return op_matmul;
    case PH_OP_Gemm: return op_gemm;
    case PH_OP_MaxPool:
    case PH_OP_AveragePool: return op_pool;
    default: return NULL;
    }
}

#define ME_MAX_INPUTS 8

static int eval_node(me_env *e, const ph_node *n)
{
    op_fn fn = ph_node_domain(n)[0] == '\0' ? op_lookup(ph_node_op(n)) : NULL;
    if (!fn)
        return node_fail(e, n, "operator '%s' of domain '%s' is not supported by mini_eval",
                         ph_node_op_type(n), ph_node_domain(n));
    size_t n_in = ph_node_input_count(n);
    if (n_in > ME_MAX_INPUTS)
        return node_fail(e, n, "too many inputs");
    const me_tensor *in[ME_MAX_INPUTS] = {0};
    for (size_t i = 0; i < n_in; i++) {
        ph_value *v = ph_node_input(n, i);
        if (!v)
            continue;
        in[i] = env_value(e, v);
        if (!in[i])
            return -1;
    }
    ph_value *ov = ph_node_output(n, 0);
    if (!ov)
        return node_fail(e, n, "no output");
    int ot = ph_value_dtype(ov);
    if (ot != PH_DT_UNDEFINED && ot != PH_DT_FLOAT)
        return node_fail(e, n, "output dtype %s; only float is supported", ph_dtype_name(ot));
    me_tensor out;
    memset(&out, 0, sizeof out);
    if (fn(e, n, in, n_in, &out)) {
        me_tensor_free(&out);
        return -1;
    }
    return env_put(e, ov, &out);
}

/* Check an input tensor against the graph input's declared type. */
static int check_input(me_env *e, const ph_value *v, const me_tensor *t)
{
    char s1[64];
    int dt = ph_value_dtype(v), rank = ph_value_rank(v);
    if (dt != PH_DT_UNDEFINED && dt != PH_DT_FLOAT)
        return env_fail(e, "mini_eval: graph input '%s' has dtype %s; only float is supported",
                        ph_value_name(v), ph_dtype_name(dt));
    if (rank < 0)
        return 0;
    if (rank != t->rank)
        return env_fail(e, "mini_eval: graph input '%s' has rank %d, given %s", ph_value_name(v),
                        rank, shape_str(t, s1, sizeof s1));
    for (int i = 0; i < rank; i++)
        if (ph_value_dim(v, i) >= 0 && ph_value_dim(v, i) != t->dims[i])
            return env_fail(e, "mini_eval: graph input '%s' dim %d is %lld, given %s",
                            ph_value_name(v), i, (long long)ph_value_dim(v, i),
                            shape_str(t, s1, sizeof s1));
    return 0;
}

static int eval_all(me_env *e, const ph_graph *g, const me_tensor *inputs, size_t n_inputs)
{
    if (n_inputs != ph_graph_input_count(g))
        return env_fail(e, "mini_eval: %zu inputs given, the graph has %zu", n_inputs,
                        ph_graph_input_count(g));
    for (size_t i = 0; i < n_inputs; i++) {
        const ph_value *v = ph_graph_input(g, i);
        me_tensor t;
        if (check_input(e, v, &inputs[i]))
            return -1;
        if (me_tensor_copy(&t, &inputs[i]) || env_put(e, v, &t))
            return env_fail(e, "mini_eval: out of memory");
    }
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        if (!ph_node_is_removed(n) && eval_node(e, n))
            return -1;
    return 0;
}

int me_eval(const ph_graph *g, const me_tensor *inputs, size_t n_inputs, me_tensor *outputs,
            char *err, size_t err_size)
{
    me_env e = {.err = err, .err_size = err_size};
    size_t n_out = ph_graph_output_count(g);
    memset(outputs, 0, n_out * sizeof *outputs);
    int rc = eval_all(&e, g, inputs, n_inputs);
    for (size_t i = 0; rc == 0 && i < n_out; i++) {
        const me_tensor *t = env_value(&e, ph_graph_output(g, i));
        if (!t)
            rc = -1;
        else if (me_tensor_copy(&outputs[i], t))
            rc = env_fail(&e, "mini_eval: out of memory");
    }
    if (rc) {
        for (size_t i = 0; i < n_out; i++)
            me_tensor_free(&outputs[i]);
    }
    env_free(&e);
    return rc;
}
