/* merge_consecutive_slice - fold Slice -> Slice into one Slice.
 *
 * Seed 000 KnowledgeMergeConsecutiveSlice (different axes: one multi-axis
 * Slice), 004 MergeMultipleSlicePass (the same axis: one composed range).
 *
 * Requires: two default-domain Slices, the first's output read only by the
 *   second and no graph output; the starts, ends and (when given) axes and
 *   steps of both are constants (initializers, Constant nodes, shape
 *   constants known as numbers; opset < 10: the attributes), read with
 *   ph_node_slice_params, with no symbolic end; the data's rank is known.
 *   An axis sliced by both needs its dim in the data to be a known number:
 *   the composition of two clamped ranges depends on it.
 * Changes:  the two Slices become one Slice of the first's data:
 *   - an axis only one of them slices keeps that Slice's start, end and
 *     step as they are (slicing another axis does not change its length);
 *   - an axis both slice gets the composite, by index arithmetic on the
 *     ONNX rules (ph_slice_length): the first selects f1 + i*k1 for
 *     i < n1 out of dim d, the second f2 + j*k2 for j < n2 out of n1, so
 *     together f1 + f2*k1 + j*(k1*k2) for j < n2.  It is written with an
 *     in-range start and an end just past the last index (INT64_MIN when
 *     that is before index 0 with a negative step), step 1 for at most one
 *     element, and start = end = 0 for none; any step signs.
 *   Opset >= 10: int64 starts, ends, axes and (unless all 1) steps
 *   initializers; opset < 10: starts, ends and axes attributes (steps are
 *   always 1 there).  The old Slices, and operands only they read, are
 *   removed.  Main graph and every If/Loop/Scan body.
 * Exact:    yes; only data movement.
 */
#include <stdint.h>
#include <string.h>

#include <passhost/passhost.h>

/* *r = a * b + c without overflow; 0, or -1. */
static int mul_add(int64_t a, int64_t b, int64_t c, int64_t *r)
{
    int64_t p;
    return __builtin_mul_overflow(a, b, &p) || __builtin_add_overflow(p, c, r) ? -1 : 0;
}

/* out = (start, end, step) of one Slice on an axis of length d equal to
 * slicing it by a = (start, end, step) and then by b.  0, or -1 on
 * overflow. */
static int compose(int64_t d, const int64_t a[3], const int64_t b[3], int64_t out[3])
{
    int64_t f1 = 0, f2 = 0, n1 = d > 0 ? ph_slice_length(d, a[0], a[1], a[2], &f1) : 0;
    int64_t n2 = n1 > 0 ? ph_slice_length(n1, b[0], b[1], b[2], &f2) : 0;
    int64_t first, k, last;
    out[0] = out[1] = 0, out[2] = 1;
    if (n2 <= 0)
        return 0; /* empty */
    if (mul_add(f2, a[2], f1, &first) || __builtin_mul_overflow(a[2], b[2], &k))
        return -1;
    out[0] = first;
    if (n2 == 1) {
        out[1] = first + 1;
        return 0;
    }
    if (mul_add(n2 - 1, k, first, &last)) /* in [0, d) by construction */
        return -1;
    out[1] = k > 0 ? last + 1 : last > 0 ? last - 1 : INT64_MIN;
    out[2] = k;
    return 0;
}

static ph_value *ints(ph_rewriter *rw, const char *hint, int n, const int64_t *v)
{
    int64_t dim = n;
    return ph_rw_initializer(rw, hint, ph_tensor_new(PH_DT_INT64, 1, &dim, v));
}

static int merge(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x"), *y = ph_match_value(m, "y");
    int rank = ph_value_rank(x);
    if (rank < 0)
        rank = ph_value_rank(ph_match_value(m, "s"));
    ph_slice_params p[2];
    if (rank < 0 || ph_node_slice_params(ph_match_node(m, "s"), rank, &p[0]) ||
        ph_node_slice_params(ph_match_root(m), rank, &p[1]))
        return 0;
    /* per axis, the parameters of the first and of the second Slice */
    int at[2][PH_SLICE_MAX];
    memset(at, -1, sizeof at);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < p[i].n; k++) {
            if (p[i].end_sym[k])
                return 0;
            at[i][p[i].axis[k]] = k;
        }
    int64_t st[PH_SLICE_MAX], en[PH_SLICE_MAX], ax[PH_SLICE_MAX], sp[PH_SLICE_MAX];
    int n = 0, unit = 1;
    for (int a = 0; a < rank; a++) {
        int64_t r[2][3], out[3];
        for (int i = 0; i < 2; i++)
            if (at[i][a] >= 0) {
                int k = at[i][a];
                memcpy(r[i], (int64_t[3]){p[i].start[k], p[i].end[k], p[i].step[k]}, sizeof r[i]);
            }
        if (at[0][a] >= 0 && at[1][a] >= 0) {
            int64_t d = ph_value_dim(x, a);
            if (d < 0 || compose(d, r[0], r[1], out))
                return 0;
        } else if (at[0][a] >= 0 || at[1][a] >= 0) {
            memcpy(out, r[at[0][a] >= 0 ? 0 : 1], sizeof out);
        } else {
            continue;
        }
        st[n] = out[0], en[n] = out[1], ax[n] = a, sp[n] = out[2];
        unit &= sp[n++] == 1;
    }
    ph_node *s;
    if (ph_rw_opset(rw) < 10) {
        s = ph_rw_node(rw, "Slice", 1, &x, 1);
        if (!s || ph_node_set_attr_ints(s, "starts", (size_t)n, st) ||
            ph_node_set_attr_ints(s, "ends", (size_t)n, en) || ph_node_set_attr_ints(s, "axes", (size_t)n, ax))
            return PH_ENOMEM;
    } else {
        ph_value *in[5] = {x, ints(rw, "slice_starts", n, st), ints(rw, "slice_ends", n, en),
                           ints(rw, "slice_axes", n, ax), unit ? NULL : ints(rw, "slice_steps", n, sp)};
        if (!in[1] || !in[2] || !in[3] || (!unit && !in[4]))
            return PH_ENOMEM;
        s = ph_rw_node(rw, "Slice", unit ? 4 : 5, in, 1);
        if (!s)
            return PH_ENOMEM;
    }
    return ph_rw_replace(rw, y, ph_node_output(s, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"slice_pair", "s = Slice(x, p*); y = Slice(s, q*)", NULL, merge}, {0}};

PH_PASS_DEFINE(
    .name = "merge_consecutive_slice",
    .summary = "Slice -> Slice becomes one Slice (composed range on a shared axis, more axes otherwise)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
