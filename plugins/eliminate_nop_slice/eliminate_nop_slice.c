/* eliminate_nop_slice - remove a Slice that returns its whole input.
 *
 * Icraft RemoveUselessSlicePass (seed 004) and seed 003: a Slice whose every
 * sliced axis selects indices 0, 1, ..., d-1 in order returns its input
 * unchanged.
 *
 * Requires: a default-domain Slice whose starts, ends and (when given) axes
 *   and steps are constants: initializers, Constant nodes, or shape
 *   constants the inference knows as numbers (opset < 10: the attributes).
 *   The data input's rank must be known (to resolve negative axes); axes
 *   must be distinct and in range, steps non-zero.  Each sliced axis must
 *   provably select the whole axis, in order:
 *   - dim d known: the clamped range (ONNX Slice rules) starts at 0 and has
 *     d elements, with step 1 (d == 1: any positive step; d == 0: any
 *     slice, the output is empty either way).  Negative steps are never
 *     taken, even on one element: runtimes clamp their starts differently;
 *   - dim d symbolic or unknown: step 1, start 0 (or a start <= -2^31+1,
 *     which clamps to 0), and end >= 2^31-1 (the "to the end" sentinels
 *     exporters write: INT64_MAX by PyTorch, INT32_MAX by TensorFlow
 *     converters) or an end that is the axis's own symbolic dim (a shape
 *     constant such as Shape(x)[k]).  An axis of 2^31 or more elements is
 *     taken to be impossible, as the shape inference also does.
 *   The output must be redirectable (ph_value_can_replace) when it is a
 *   graph output.
 * Changes:  users of the output read the data input; the Slice is removed,
 *   and its starts/ends/axes/steps operands are pruned when nothing else
 *   uses them.  Main graph and every If/Loop/Scan body.
 * Exact:    yes; the output is the input.
 */
#include <stdint.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_RANK 64
#define BIG ((int64_t)INT32_MAX) /* an end this large means "to the end" */

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

/* 1 if slicing axis k of the spec keeps every element of x in order. */
static int axis_whole(const ph_value *x, const slice_spec *s, int k)
{
    int ax = (int)s->axis[k];
    int64_t d = ph_value_dim(x, ax), st = s->step[k], first;
    if (d >= 0) {
        int64_t e = s->end[k];
        if (s->end_sym[k])
            return 0; /* a symbolic end on a static axis: not provable */
        if (d == 0)
            return 1; /* nothing to select: the output is as empty as x */
        int64_t len = slice_len(d, s->start[k], e, st, &first);
        return len == d && first == 0 && (st == 1 || (d == 1 && st > 0));
    }
    if (st != 1 || (s->start[k] != 0 && s->start[k] > -BIG))
        return 0;
    if (s->end_sym[k]) {
        const char *p = ph_value_dim_param(x, ax);
        return p && p[0] && !strcmp(p, s->end_sym[k]);
    }
    return s->end[k] >= BIG;
}

static int is_nop_slice(const ph_node *n)
{
    if (ph_node_op(n) != PH_OP_Slice || ph_node_domain(n)[0] != '\0' || ph_node_input_count(n) < 1 ||
        !ph_node_input(n, 0) || ph_node_output_count(n) != 1)
        return 0;
    const ph_value *x = ph_node_input(n, 0);
    int r = ph_value_rank(x);
    slice_spec s;
    if (r < 0 || r > MAX_RANK || read_slice(n, r, &s) < 0)
        return 0;
    for (int k = 0; k < s.n; k++)
        if (!axis_whole(x, &s, k))
            return 0;
    return ph_value_can_replace(ph_node_output(n, 0), x);
}

/* One node of the walk: bypass it if it is a Slice that keeps everything. */
static int visit(ph_node *n, void *user)
{
    ph_ctx *ctx = user;
    if (!is_nop_slice(n))
        return 0;
    ph_value *operands[4] = {NULL, NULL, NULL, NULL};
    for (size_t i = 1; i < ph_node_input_count(n) && i <= 4; i++)
        operands[i - 1] = ph_node_input(n, i);
    int rc = ph_node_bypass(n, 0, ph_node_input(n, 0));
    if (rc < 0)
        return ph_ctx_error(ctx, rc, "cannot bypass Slice '%s': %s", ph_node_name(n), ph_strerror(rc));
    for (int i = 0; i < 4; i++)
        if (operands[i])
            ph_value_prune(operands[i]);
    return 1;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    return ph_graph_walk(g, visit, ctx);
}

PH_PASS_DEFINE(
    .name = "eliminate_nop_slice",
    .summary = "Slice whose output equals its input (whole range, step 1) -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .run = run)
