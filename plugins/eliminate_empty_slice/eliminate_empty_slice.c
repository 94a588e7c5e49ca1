/* eliminate_empty_slice - drop Concat inputs that are empty Slices.
 *
 * Seed 000 KnowledgeEmptySliceFix: ONNX allows Concat inputs that are empty
 * tensors, but some backends (Ascend ATC) reject an empty Slice feeding a
 * Concat.  An input with no elements along the Concat axis contributes
 * nothing, so the Concat can simply stop reading it; the Slice then goes
 * when nothing else reads it.
 *
 * Requires: a default-domain Concat with a constant axis attribute and
 *   known rank, and an input produced by a default-domain Slice with
 *   constant starts/ends/axes/steps (initializers, Constant nodes, shape
 *   constants the inference knows as numbers; opset < 10: attributes) whose
 *   result is provably empty ALONG THE CONCAT AXIS:
 *   - that axis is sliced and its clamped range (ONNX Slice rules) selects
 *     no element: on a known dim by the exact rule; on a symbolic or unknown
 *     dim only when start and end have the same sign and the range is empty
 *     whatever the dim (start >= end with a positive step, start <= end
 *     with a negative one), or
 *   - the axis is not sliced and the data's dim there is known to be 0.
 *   (A Slice empty along another axis is NOT dropped: then every Concat
 *   input is empty along that axis, but the output's size along the Concat
 *   axis still counts this input's.)
 *   At least one input must remain: a Concat whose inputs are all such
 *   Slices keeps its last one.  The Slice's other users and graph outputs do
 *   not matter: they keep the Slice.
 * Changes:  the Concat input is removed (one rewrite per input dropped);
 *   the Slice and its constant operands are pruned when nothing else uses
 *   them.  A Concat left with one input is left for
 *   eliminate_single_input_concat.  Main graph and every If/Loop/Scan body.
 * Exact:    yes; the Concat's output has the same shape and elements.
 */
#include <stdint.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_RANK 64

/* ------------------------------------------------------- constant operands */

/* A 1-D (or scalar) int32/int64 tensor as numbers; count or -1. */
static int tensor_ints(const ph_tensor *t, int64_t *out, int max)
{
    if (!t || ph_tensor_rank(t) > 1)
        return -1;
    int dt = ph_tensor_dtype(t);
    int64_t n = ph_tensor_numel(t);
    const unsigned char *d = ph_tensor_data(t);
    if ((dt != PH_DT_INT64 && dt != PH_DT_INT32) || n < 0 || n > max || (n && !d))
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
    return (int)n;
}

/* The entries of a constant operand: numbers, and for shape constants the
 * symbolic name of an entry (sym[k], NULL for numbers).  Count, or -1 when v
 * is not constant or some entry is unknown. */
static int const_entries(const ph_value *v, int64_t *out, const char **sym, int max)
{
    for (int k = 0; k < max; k++)
        sym[k] = NULL;
    int n = tensor_ints(ph_value_const(v), out, max);
    if (n >= 0)
        return n;
    ph_node *p = ph_value_producer(v);
    if (p && ph_node_op(p) == PH_OP_Constant && ph_node_domain(p)[0] == '\0') {
        n = tensor_ints(ph_node_attr_tensor(p, "value"), out, max);
        if (n >= 0)
            return n;
    }
    if (ph_value_is_graph_input(v))
        return -1;
    ptrdiff_t len = ph_value_shape_const_len(v);
    if (len < 0 || len > max)
        return -1;
    for (ptrdiff_t k = 0; k < len; k++) {
        switch (ph_value_shape_const_at(v, (size_t)k, &out[k], &sym[k])) {
        case PH_SC_KNOWN:
            sym[k] = NULL;
            break;
        case PH_SC_SYMBOLIC:
            if (!sym[k] || !sym[k][0])
                return -1;
            out[k] = 0;
            break;
        default:
            return -1;
        }
    }
    return (int)len;
}

/* Numbers only. */
static int const_ints(const ph_value *v, int64_t *out, int max)
{
    const char *sym[MAX_RANK];
    int n = const_entries(v, out, sym, max);
    for (int k = 0; k < n; k++)
        if (sym[k])
            return -1;
    return n;
}

/* ------------------------------------------------------------ the Slice */

typedef struct slice_spec {
    int n;
    int64_t axis[MAX_RANK], start[MAX_RANK], end[MAX_RANK], step[MAX_RANK];
    const char *end_sym[MAX_RANK]; /* the end is this symbolic dim */
} slice_spec;

/* Read n's slicing parameters for data of rank r; 0, or -1 when something
 * is not constant or not valid. */
static int read_slice(const ph_node *n, int r, slice_spec *s)
{
    int64_t opset = ph_model_opset(ph_graph_model(ph_node_graph(n)), "");
    int na = -1, nst = -1;
    const int64_t *v;
    if (opset > 0 && opset < 10) {
        ptrdiff_t k = ph_node_attr_ints(n, "starts", &v);
        if (k < 0 || k > MAX_RANK)
            return -1;
        s->n = (int)k;
        memcpy(s->start, v, (size_t)k * sizeof *v);
        if (ph_node_attr_ints(n, "ends", &v) != k)
            return -1;
        memcpy(s->end, v, (size_t)k * sizeof *v);
        ptrdiff_t ka = ph_node_attr_ints(n, "axes", &v);
        if (ka >= 0) {
            if (ka != k)
                return -1;
            memcpy(s->axis, v, (size_t)k * sizeof *v);
            na = (int)k;
        }
        for (int i = 0; i < MAX_RANK; i++)
            s->end_sym[i] = NULL;
    } else {
        if (ph_node_input_count(n) < 3 || !ph_node_input(n, 1) || !ph_node_input(n, 2))
            return -1;
        s->n = const_ints(ph_node_input(n, 1), s->start, MAX_RANK);
        if (s->n < 0 || const_entries(ph_node_input(n, 2), s->end, s->end_sym, MAX_RANK) != s->n)
            return -1;
        const ph_value *ax = ph_node_input_count(n) > 3 ? ph_node_input(n, 3) : NULL;
        const ph_value *st = ph_node_input_count(n) > 4 ? ph_node_input(n, 4) : NULL;
        if (ax && (na = const_ints(ax, s->axis, MAX_RANK)) != s->n)
            return -1;
        if (st && (nst = const_ints(st, s->step, MAX_RANK)) != s->n)
            return -1;
    }
    unsigned char seen[MAX_RANK] = {0};
    for (int k = 0; k < s->n; k++) {
        int64_t a = na >= 0 ? s->axis[k] : k;
        if (a < 0)
            a += r;
        if (a < 0 || a >= r || seen[a]++)
            return -1;
        s->axis[k] = a;
        if (nst < 0)
            s->step[k] = 1;
        if (s->step[k] == 0)
            return -1;
    }
    return 0;
}

/* Elements a slice of an axis of known length d >= 0 selects, and the
 * first one, by the ONNX Slice rules: negative starts and ends count from
 * the end; then starts clamp to [0, d] (step > 0) or [0, d-1] (step < 0),
 * ends to [0, d] or [-1, d-1]. */
static int64_t slice_len(int64_t d, int64_t s, int64_t e, int64_t st, int64_t *first)
{
    if (s < 0)
        s += d;
    if (e < 0)
        e += d;
    if (st > 0) {
        s = s < 0 ? 0 : s > d ? d : s;
        e = e < 0 ? 0 : e > d ? d : e;
        *first = s;
        return e > s ? (e - s - 1) / st + 1 : 0;
    }
    s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
    e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
    *first = s;
    return s > e ? (s - e - 1) / -st + 1 : 0;
}

/* 1 if sliced axis k of the spec provably selects no element of x. */
static int axis_empty(const ph_value *x, const slice_spec *s, int k)
{
    int64_t d = ph_value_dim(x, (int)s->axis[k]), st = s->step[k], first;
    int64_t b = s->start[k], e = s->end[k];
    if (s->end_sym[k])
        return 0;
    if (d >= 0)
        return slice_len(d, b, e, st, &first) == 0;
    if ((b < 0) != (e < 0))
        return 0;
    return st > 0 ? b >= e : b <= e;
}

/* 1 if the Slice producing v gives no element along axis `axis` (of rank r). */
static int empty_along(const ph_value *v, int axis, int r)
{
    const ph_node *n = ph_value_producer(v);
    if (!n || ph_node_op(n) != PH_OP_Slice || ph_node_domain(n)[0] != '\0' ||
        ph_node_input_count(n) < 1 || !ph_node_input(n, 0) || ph_node_output_count(n) != 1)
        return 0;
    const ph_value *x = ph_node_input(n, 0);
    if (ph_value_rank(x) != r)
        return 0;
    slice_spec s;
    if (read_slice(n, r, &s) < 0)
        return 0;
    for (int k = 0; k < s.n; k++)
        if (s.axis[k] == axis)
            return axis_empty(x, &s, k);
    return ph_value_dim(x, axis) == 0;
}

/* Remove input i of the Concat and prune the Slice behind it. */
static int drop_input(ph_node *concat, size_t i, ph_ctx *ctx)
{
    ph_value *v = ph_node_input(concat, i);
    int rc = ph_node_remove_input(concat, i);
    if (rc < 0)
        return ph_ctx_error(ctx, rc, "cannot drop input %zu of Concat '%s': %s", i, ph_node_name(concat),
                            ph_strerror(rc));
    ph_value_prune(v); /* the Slice, its operands, what fed only them */
    return 1;
}

/* One node of the walk: drop a Concat's empty Slice inputs. */
static int visit(ph_node *n, void *user)
{
    if (ph_node_op(n) != PH_OP_Concat || ph_node_domain(n)[0] != '\0' ||
        ph_node_attr_type(n, "axis") != PH_ATTR_INT || ph_node_output_count(n) != 1)
        return 0;
    int r = -1;
    for (size_t i = 0; i < ph_node_input_count(n) && r < 0; i++)
        r = ph_node_input(n, i) ? ph_value_rank(ph_node_input(n, i)) : -1;
    if (r < 1 || r > MAX_RANK)
        r = ph_value_rank(ph_node_output(n, 0));
    if (r < 1 || r > MAX_RANK)
        return 0;
    int64_t axis = ph_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += r;
    if (axis < 0 || axis >= r)
        return 0;
    int count = 0;
    for (size_t i = ph_node_input_count(n); i-- > 0;) {
        ph_value *v = ph_node_input(n, i);
        if (!v || ph_node_input_count(n) <= 1 || !empty_along(v, (int)axis, r))
            continue;
        int rc = drop_input(n, i, user);
        if (rc < 0)
            return rc;
        count += rc;
    }
    return count;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    return ph_graph_walk(g, visit, ctx);
}

PH_PASS_DEFINE(
    .name = "eliminate_empty_slice",
    .summary = "an empty Slice feeding a Concat -> drop that Concat input (and the Slice)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .run = run)
