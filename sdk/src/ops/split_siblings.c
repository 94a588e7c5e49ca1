/* sdk/src/ops/split_siblings.c - sibling readers of one value that
 * partition one of its axes -> one Split (see op_helpers.h).
 *
 * The walk visits the nodes of one op through the op-type index.  The first
 * node seen reading a value x in a graph handles every reader of x there
 * (its use list, once); a set of (x, graph) pairs already handled keeps the
 * cost linear when readers of x do not form a partition. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/passhost.h"

typedef struct seen_key {
    const void *x, *g;
} seen_key;

typedef struct piece_ref {
    ph_split_piece p;
    ph_node *n;
} piece_ref;

typedef struct walk {
    ph_op op;
    ph_split_piece_fn fn;
    ph_ctx *ctx;
    int stop;
    seen_key *set; /* open addressing, cap a power of two */
    size_t cap, count;
    piece_ref *pieces;
    size_t n_pieces, cap_pieces;
} walk;

static size_t key_hash(const void *x, const void *g)
{
    uint64_t h = (uint64_t)(uintptr_t)x * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)g * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29));
}

/* 1 if (x, g) was not in the set (now it is), 0 if it was, <0 on OOM. */
static int seen_add(walk *w, const void *x, const void *g)
{
    if (2 * (w->count + 1) > w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        seen_key *s = calloc(cap, sizeof *s);
        if (!s)
            return PH_ENOMEM;
        for (size_t i = 0; i < w->cap; i++)
            if (w->set[i].x) {
                size_t j = key_hash(w->set[i].x, w->set[i].g) & (cap - 1);
                while (s[j].x)
                    j = (j + 1) & (cap - 1);
                s[j] = w->set[i];
            }
        free(w->set);
        w->set = s;
        w->cap = cap;
    }
    size_t j = key_hash(x, g) & (w->cap - 1);
    for (; w->set[j].x; j = (j + 1) & (w->cap - 1))
        if (w->set[j].x == x && w->set[j].g == g)
            return 0;
    w->set[j].x = x;
    w->set[j].g = g;
    w->count++;
    return 1;
}

static int by_axis_start(const void *a, const void *b)
{
    const ph_split_piece *p = &((const piece_ref *)a)->p, *q = &((const piece_ref *)b)->p;
    if (p->axis != q->axis)
        return p->axis < q->axis ? -1 : 1;
    return p->start < q->start ? -1 : p->start > q->start;
}

/* x's type with dim `axis` set to len (symbolic names of the others kept). */
static int piece_type(ph_value *v, const ph_value *x, int axis, int64_t len)
{
    int rc = ph_value_copy_type(v, x);
    int r = ph_value_rank(x);
    if (rc || r <= axis)
        return rc;
    int64_t dims[PH_SLICE_MAX];
    if (r > PH_SLICE_MAX)
        return 0;
    for (int i = 0; i < r; i++)
        dims[i] = i == axis ? len : ph_value_dim(x, i);
    if ((rc = ph_value_set_type(v, ph_value_dtype(x), r, dims)) != 0)
        return rc;
    for (int i = 0; i < r && !rc; i++)
        if (i != axis && ph_value_dim_param(x, i))
            rc = ph_value_set_dim_param(v, i, ph_value_dim_param(x, i));
    return rc;
}

/* Give a new node (data input only) the axes/sizes operand in its opset's form. */
static int set_ints_operand(ph_node *n, ph_op op, const char *attr, size_t k, const int64_t *vals)
{
    ph_graph *g = ph_node_graph(n);
    if (ph_op_axes_is_input(op, ph_model_opset(ph_graph_model(g), "")) <= 0)
        return ph_node_set_attr_ints(n, attr, k, vals);
    int64_t dim = (int64_t)k;
    ph_value *c = ph_graph_add_initializer(g, attr, ph_tensor_new(PH_DT_INT64, 1, &dim, vals));
    return c ? ph_node_set_input(n, 1, c) : PH_ENOMEM;
}

/* Replace the readers pr[0..n) (a partition of x's axis) by one Split. */
static int emit(walk *w, ph_graph *g, ph_value *x, piece_ref *pr, size_t n)
{
    char names[512] = "";
    if (w->ctx && ph_ctx_wants_names(w->ctx))
        for (size_t i = 0, len = 0; i < n && len + 1 < sizeof names; i++) {
            char label[200];
            int k = snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                             ph_node_label(pr[i].n, label, sizeof label));
            if (k < 0)
                break;
            len += (size_t)k;
        }
    if (w->ctx && !ph_ctx_rewrite_begin(w->ctx, names[0] ? names : NULL)) {
        w->stop = 1;
        return 0;
    }
    int axis = pr[0].p.axis;
    ph_node *p = ph_value_producer(x);
    ph_node *before = p && ph_node_graph(p) == g ? ph_node_next(p) : ph_graph_first_node(g);
    int64_t *sizes = malloc(n * sizeof *sizes);
    if (!sizes)
        return PH_ENOMEM;
    for (size_t i = 0; i < n; i++)
        sizes[i] = pr[i].p.len;
    ph_node *split = ph_node_create(g, before, "Split", 1, &x, n);
    int rc = split ? ph_node_set_attr_int(split, "axis", axis) : PH_ENOMEM;
    if (!rc)
        rc = set_ints_operand(split, PH_OP_Split, "split", n, sizes);
    free(sizes);
    /* every node first: `before` may be a reader, removed below */
    ph_value **outs = rc ? NULL : malloc(n * sizeof *outs);
    if (!rc && !outs)
        rc = PH_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) {
        outs[i] = ph_node_output(split, i);
        if (pr[i].p.squeeze) {
            int64_t ax = axis;
            ph_node *sq = ph_node_create(g, before, "Squeeze", 1, &outs[i], 1);
            rc = sq ? set_ints_operand(sq, PH_OP_Squeeze, "axes", 1, &ax) : PH_ENOMEM;
            if (!rc)
                rc = piece_type(outs[i], x, axis, 1);
            outs[i] = sq ? ph_node_output(sq, 0) : NULL;
        }
    }
    for (size_t i = 0; i < n && !rc; i++) {
        ph_value *old = ph_node_output(pr[i].n, 0);
        rc = ph_value_copy_type(outs[i], old);
        if (!rc)
            rc = ph_value_replace(old, outs[i]);
        if (!rc)
            ph_value_prune(old);
    }
    free(outs);
    if (rc < 0)
        return rc;
    if (w->ctx)
        ph_ctx_rewrite_end(w->ctx, names[0] ? names : NULL, NULL);
    return 1;
}

/* The readers of x (input 0) of op in n's graph: group by axis, emit partitions. */
static int visit(ph_node *n, void *user)
{
    walk *w = user;
    ph_value *x = ph_node_input_count(n) ? ph_node_input(n, 0) : NULL;
    ph_graph *g = ph_node_graph(n);
    if (w->stop || !x || ph_node_domain(n)[0])
        return 0;
    int rc = seen_add(w, x, g), rank = ph_value_rank(x);
    if (rc < 0)
        return rc;
    if (rc == 0 || rank < 1) /* handled already, or a rank unknown: no rewrite */
        return 0;
    w->n_pieces = 0;
    for (size_t i = 0; i < ph_value_use_count(x); i++) {
        size_t slot;
        ph_node *u = ph_value_use(x, i, &slot);
        piece_ref pr = {.n = u};
        if (slot != 0 || ph_node_graph(u) != g || ph_node_op(u) != w->op || ph_node_domain(u)[0] ||
            ph_node_output_count(u) != 1 || !ph_node_output(u, 0) || !w->fn(u, x, rank, &pr.p))
            continue;
        int64_t dim = pr.p.axis >= 0 && pr.p.axis < rank ? ph_value_dim(x, pr.p.axis) : -1;
        if (dim < 0 || pr.p.start < 0 || pr.p.len < 1 || pr.p.start + pr.p.len > dim ||
            (pr.p.squeeze && pr.p.len != 1))
            continue;
        if (w->n_pieces == w->cap_pieces) {
            size_t cap = w->cap_pieces ? 2 * w->cap_pieces : 8;
            piece_ref *grown = realloc(w->pieces, cap * sizeof *grown);
            if (!grown)
                return PH_ENOMEM;
            w->pieces = grown;
            w->cap_pieces = cap;
        }
        w->pieces[w->n_pieces++] = pr;
    }
    if (w->n_pieces > 1)
        qsort(w->pieces, w->n_pieces, sizeof *w->pieces, by_axis_start);
    int count = 0;
    for (size_t a = 0, b; a < w->n_pieces && !w->stop; a = b) {
        int axis = w->pieces[a].p.axis, ok = w->pieces[a].p.start == 0;
        int64_t end = 0;
        for (b = a; b < w->n_pieces && w->pieces[b].p.axis == axis; b++) {
            ok &= w->pieces[b].p.start == end;
            end = w->pieces[b].p.start + w->pieces[b].p.len;
        }
        if (!ok || b - a < 2 || end != ph_value_dim(x, axis))
            continue;
        if ((rc = emit(w, g, x, w->pieces + a, b - a)) < 0)
            return rc;
        count += rc;
    }
    return count;
}

PH_API int ph_graph_siblings_to_split(ph_graph *g, ph_op op, ph_split_piece_fn fn, ph_ctx *ctx)
{
    if (!g || !fn)
        return PH_EINVAL;
    walk w = {.op = op, .fn = fn, .ctx = ctx};
    int rc = ph_graph_walk_ops(g, &op, 1, visit, &w);
    free(w.set);
    free(w.pieces);
    return rc;
}
