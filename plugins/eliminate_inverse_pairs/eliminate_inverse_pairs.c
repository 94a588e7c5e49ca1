/* eliminate_inverse_pairs - remove two adjacent nodes that undo each other.
 *
 * Seed 003 ("Op 前后反义"): x -> A -> m -> B -> y with B the inverse of A is
 * y = x; both nodes go.  In every rule the middle value m has no reader but
 * B and is no graph output (the matcher's rule for interior values).
 *
 * Requires, per rule (default domain only):
 *  - squeeze_unsqueeze / unsqueeze_squeeze: Squeeze then Unsqueeze, or
 *    Unsqueeze then Squeeze, on the same set of axes.  Axes come from the
 *    `axes` attribute before opset 13 and from a constant input from 13 on
 *    (initializer, Constant node or shape constant); negative axes are
 *    normalised with the known rank (x's for Squeeze first, the middle
 *    value's for Unsqueeze first), and an unknown rank refuses them.  A
 *    Squeeze without axes (or with an empty list) squeezes every dim of 1:
 *    its input's dims must then all be known numbers.
 *  - reshape_pair: Reshape or Flatten, then Reshape or Flatten, whose final
 *    shape provably equals x's (ph_value_same_shape: same rank, each dim the
 *    same number or the same symbolic name).  Row-major order is kept by
 *    both, so the data is unchanged.
 *  - cast_pair: Cast A -> B -> A where x's dtype A is known and every value
 *    of A is exactly representable in B (ph_dtype_holds: bool to
 *    any numeric type, an integer to a wider integer of suitable sign or to
 *    a float type with enough significand bits, float16/bfloat16 to
 *    float/double, float to double).  float -> int -> float or
 *    int64 -> float -> int64 lose values and are left alone.
 *  - concat_slice: Concat(x0..xn) then a Slice, step 1 on the Concat axis,
 *    that selects exactly the range of one input xk: the Concat axis must
 *    be a known rank's attribute and every input's dim on it a known
 *    number; any other sliced axis must provably take its whole range.
 * Changes:  users of y read x (or xk); both nodes are removed, and their
 *   operands (axes, shapes, the other Concat inputs) are pruned when
 *   nothing else reads them.  A graph output y keeps its name when x can
 *   take it over; otherwise (x is a graph input, ...) nothing changes.
 *   Main graph and every If/Loop/Scan body.
 * Exact:    yes; no value is computed.  Cast A->B->A through a type that
 *   holds A exactly gives back the same values (a signalling NaN may come
 *   back quiet, as any float conversion makes it).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_AXES 64

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The axes bound to `v` (the attribute variable $v before opset 13, the
 * value v from 13 on) normalised against rank r (< 0: unknown), sorted.
 * The count, or -1 when none are given, -2 when they cannot be read (not
 * constant, out of range, repeated, negative with r unknown). */
static int node_axes(const ph_match *m, const char *v, int r, int64_t *ax)
{
    const int64_t *a;
    ptrdiff_t k = ph_match_ints(m, v, &a);
    if (k > MAX_AXES)
        return -2;
    if (k > 0)
        memcpy(ax, a, (size_t)k * sizeof *ax);
    else if (k < 0 && !ph_match_value(m, v))
        return -1;
    else if (k < 0 && (k = ph_value_const_ints(ph_match_value(m, v), ax, NULL, MAX_AXES)) < 0)
        return -2;
    for (ptrdiff_t i = 0; i < k; i++) {
        if (ax[i] < 0 && r < 0)
            return -2;
        if (ax[i] < 0)
            ax[i] += r;
        if (ax[i] < 0 || (r >= 0 && ax[i] >= r))
            return -2;
    }
    qsort(ax, (size_t)k, sizeof *ax, cmp_i64);
    for (ptrdiff_t i = 1; i < k; i++)
        if (ax[i] == ax[i - 1])
            return -2;
    return (int)k;
}

/* The axes the Squeeze whose axes bind `sq` removes from v: given ones, or
 * every dim of 1 (all dims known).  Count or -2. */
static int squeezed_axes(const ph_match *m, const char *sq, const ph_value *v, int64_t *ax)
{
    int r = ph_value_rank(v), k = node_axes(m, sq, r, ax);
    if (k > 0)
        return k;
    if (k == -2 || r < 0 || r > MAX_AXES)
        return -2;
    k = 0; /* no axes, or an empty list: every dim of 1 */
    for (int i = 0; i < r; i++) {
        if (ph_value_dim(v, i) < 0)
            return -2;
        if (ph_value_dim(v, i) == 1)
            ax[k++] = i;
    }
    return k;
}

static int same_axes(int na, const int64_t *a, int nb, const int64_t *b)
{
    return na >= 0 && na == nb && (na == 0 || memcmp(a, b, (size_t)na * sizeof *a) == 0);
}

/* x -> Squeeze -> s -> Unsqueeze -> y: the Unsqueeze's output has x's rank. */
static int squeeze_unsqueeze(const ph_match *m, const ph_params *p)
{
    int64_t sa[MAX_AXES], ua[MAX_AXES];
    const ph_value *x = ph_match_value(m, "x");
    return same_axes(squeezed_axes(m, "sa", x, sa), sa, node_axes(m, "ua", ph_value_rank(x), ua), ua);
}

/* x -> Unsqueeze -> u -> Squeeze -> y: both axes index u's dims. */
static int unsqueeze_squeeze(const ph_match *m, const ph_params *p)
{
    int64_t ua[MAX_AXES], sa[MAX_AXES];
    const ph_value *x = ph_match_value(m, "x"), *u = ph_match_value(m, "u");
    int nu = node_axes(m, "ua", ph_value_rank(u), ua);
    if (nu < 0)
        return 0;
    int r = ph_value_rank(u) >= 0 ? ph_value_rank(u) : ph_value_rank(x) >= 0 ? ph_value_rank(x) + nu : -1;
    int ns = node_axes(m, "sa", r, sa);
    if (ns <= 0) /* no axes: every dim of 1 of u */
        ns = ns == -2 ? -2 : squeezed_axes(m, "sa", u, sa);
    return same_axes(nu, ua, ns, sa);
}

static int reshape_pair(const ph_match *m, const ph_params *p)
{
    return ph_value_same_shape(ph_match_value(m, "x"), ph_match_value(m, "y"));
}

static int cast_pair(const ph_match *m, const ph_params *p)
{
    int64_t b = ph_match_int(m, "b", -1);
    return b >= 0 && b < 64 && ph_dtype_holds((int)ph_match_int(m, "a", 0), (int)b);
}

/* The Concat input a step-1 Slice on the Concat axis selects exactly,
 * handed to the result as `src`.  Other sliced axes must take their whole
 * range. */
static int concat_slice(const ph_match *m, const ph_params *p)
{
    ph_value *const *xs, **src = ph_match_state(m, sizeof *src);
    size_t n = ph_match_values(m, "xs", &xs);
    int r = ph_value_rank(ph_match_value(m, "c"));
    if (r < 0 && n)
        r = ph_value_rank(xs[0]);
    int64_t axis = ph_match_int(m, "axis", INT64_MIN);
    ph_slice_params s;
    if (!src || n == 0 || !xs[0] || r < 1 || r > PH_SLICE_MAX || axis < -r || axis >= r ||
        ph_node_slice_params(ph_match_root(m), r, &s) < 0)
        return src ? 0 : PH_ENOMEM;
    axis += axis < 0 ? r : 0;
    *src = NULL;
    int k_axis = -1;
    for (int k = 0; k < s.n; k++) {
        if (s.axis[k] == axis) {
            k_axis = k;
            continue;
        }
        if (!ph_slice_axis_whole(xs[0], &s, k)) /* another axis must be taken whole */
            return 0;
    }
    if (k_axis < 0 || s.step[k_axis] != 1 || s.end_sym[k_axis])
        return 0;
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (!xs[i] || ph_value_rank(xs[i]) != r || ph_value_dim(xs[i], (int)axis) < 0)
            return 0;
        total += ph_value_dim(xs[i], (int)axis);
    }
    int64_t first = 0, len = ph_slice_length(total, s.start[k_axis], s.end[k_axis], 1, &first);
    for (size_t i = 0, off = 0; i < n && !*src; off += (size_t)ph_value_dim(xs[i], (int)axis), i++)
        if ((int64_t)off == first && ph_value_dim(xs[i], (int)axis) == len)
            *src = xs[i];
    return *src != NULL;
}

static int bind_slice_source(ph_rewriter *rw, const ph_match *m)
{
    ph_rw_bind(rw, "src", *(ph_value **)ph_match_state(m, sizeof(ph_value *)));
    return 1;
}

/* Axes are the attribute before opset 13, an input from 13 on; Concat's
 * axis defaults to 1 before opset 4 and is required from 4 on. */
static const ph_rule rules[] = {
    {"squeeze_unsqueeze",
     "( opset < 13; s = Squeeze(x) {axes?=$sa}; y = Unsqueeze(s) {axes?=$ua}\n"
     "| opset >= 13; s = Squeeze(x, sa?); y = Unsqueeze(s, ua?) )\n=> y = x",
     squeeze_unsqueeze, NULL},
    {"unsqueeze_squeeze",
     "( opset < 13; u = Unsqueeze(x) {axes?=$ua}; y = Squeeze(u) {axes?=$sa}\n"
     "| opset >= 13; u = Unsqueeze(x, ua?); y = Squeeze(u, sa?) )\n=> y = x",
     unsqueeze_squeeze, NULL},
    {"reshape_pair", "r = Reshape|Flatten(x, _?); y = Reshape|Flatten(r, _?)\n=> y = x", reshape_pair, NULL},
    {"cast_pair", "c = Cast(x:dtype=$a) {to=$b}; y = Cast(c) {to=$a}\n=> y = x", cast_pair, NULL},
    {"concat_slice",
     "( opset < 4; c = Concat(xs*) {axis(1)=$axis} | opset >= 4; c = Concat(xs*) {axis=$axis} )\n"
     "y = Slice(c, ps*)\n=> y = src",
     concat_slice, bind_slice_source},
    {0}};

/* Examples for the rule checker: each form of the axes (an attribute before
 * opset 13, an input from 13) and lossless Cast pairs. */
static const ph_rule_example examples[] = {
    {"squeeze_unsqueeze", "opset 11\nx: <T=float|int32>[2,1,3]\nr = Neg(x)\ns = Squeeze(r) {axes=[<1|-2>]}\n"
                          "y = Unsqueeze(s) {axes=[1]}\nz = Neg(y)\nreturn z", NULL},
    {"squeeze_unsqueeze", "opset <13|17>\nx: <T=float|int64>[2,1,3]\nax: int64[1] = [<1|-2>]\nr = Neg(x)\n"
                          "s = Squeeze(r, ax)\ny = Unsqueeze(s, ax)\nz = Neg(y)\nreturn z", NULL},
    {"unsqueeze_squeeze", "opset <11|13>\nx: <T=float|int32>[2,3]\nax: int64[1] = [<0|-1>]\nr = Neg(x)\n"
                          "u = Unsqueeze(r, ax)\ny = Squeeze(u, ax)\nz = Neg(y)\nreturn z", NULL},
    {"cast_pair", "x: <T=float|float16>[2,3]\nr = Neg(x)\nc = Cast(r) {to=11}\ny = Cast(c) {to=<1|10>}\n"
                  "z = Neg(y)\nreturn z", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "eliminate_inverse_pairs",
    .summary = "adjacent inverses (Squeeze/Unsqueeze, Reshape A->B->A, lossless Cast A->B->A, "
               "Concat then a Slice of one input) -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules,
    .rule_examples = examples)
