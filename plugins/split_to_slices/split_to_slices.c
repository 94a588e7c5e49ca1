/* split_to_slices - a Split along an axis the target cannot split becomes
 * one Slice per output.
 *
 * Icraft ConvertSplit2SlicePass (seed 004): a split of an inner dim of the
 * feature map is done with slices; the profile's Split.axes lists the axes
 * a Split may cut along.
 *
 * Requires: a default-domain Split with 2 to 6 outputs, input of known
 *   rank, whose axis (either sign) is not in the parameter axes (the
 *   profile's Split.axes, ", "-separated; empty: every axis allowed), and
 *   known part sizes: the split attribute (opset < 13) or a constant split
 *   input, else equal parts of a known dim (opset 18's num_outputs: parts
 *   of ceil(dim / n), the last one smaller).
 * Changes:  output i becomes Slice(x, start_i, end_i, axis) (an output
 *   nobody reads gets none); the Split is removed.  Main graph and every If/Loop/Scan body.
 * Exact:    yes; the same elements.
 */
#include <stdio.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_PARTS 6

static const char *const outs[MAX_PARTS] = {"y0", "y1", "y2", "y3", "y4", "y5"};

typedef struct parts {
    int64_t axis;
    size_t n;
    int64_t size[MAX_PARTS];
} parts;

/* 1 when the axis v is an item of the list. */
static int listed(const char *list, int64_t v)
{
    char item[32];
    snprintf(item, sizeof item, "%lld", (long long)v);
    return ph_target_list_has(list, item);
}

static int cut_elsewhere(const ph_match *m, const ph_params *params)
{
    const ph_node *n = ph_match_root(m);
    const ph_value *x = ph_match_value(m, "x"), *split = ph_match_value(m, "split");
    const char *allowed = ph_params_string(params, "axes");
    int rank = ph_value_rank(x);
    size_t k = ph_node_output_count(n);
    if (rank <= 0 || k < 2 || k > MAX_PARTS || !allowed || !*allowed)
        return 0;
    int64_t axis = ph_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += rank;
    if (axis < 0 || axis >= rank || listed(allowed, axis) || listed(allowed, axis - rank))
        return 0;
    parts *st = ph_match_state(m, sizeof *st);
    if (!st)
        return PH_ENOMEM;
    st->axis = axis;
    st->n = k;
    const int64_t *attr;
    ptrdiff_t na = ph_node_attr_ints(n, "split", &attr);
    if (na >= 0 || split) {
        if (na >= 0 && split)
            return 0;
        if (na >= 0) {
            if ((size_t)na != k)
                return 0;
            memcpy(st->size, attr, k * sizeof *attr);
        } else if (ph_value_const_ints(split, st->size, NULL, MAX_PARTS) != (ptrdiff_t)k) {
            return 0;
        }
        for (size_t i = 0; i < k; i++)
            if (st->size[i] < 0)
                return 0;
        return 1;
    }
    int64_t dim = ph_value_dim(x, (int)axis);
    if (dim < 0)
        return 0;
    int64_t chunk = (dim + (int64_t)k - 1) / (int64_t)k;
    if (dim % (int64_t)k && ph_node_attr_int(n, "num_outputs", 0) != (int64_t)k)
        return 0; /* uneven parts before opset 18: an invalid model */
    for (size_t i = 0; i < k; i++) {
        int64_t left = dim - chunk * (int64_t)i;
        st->size[i] = left < chunk ? (left > 0 ? left : 0) : chunk;
    }
    return 1;
}

static int to_slices(ph_rewriter *rw, const ph_match *m)
{
    const parts *st = ph_match_state(m, sizeof *st);
    ph_value *x = ph_match_value(m, "x");
    int64_t start = 0;
    for (size_t i = 0; st && i < st->n; i++) {
        int64_t end = start + st->size[i];
        ph_value *y = ph_match_value(m, outs[i]);
        if (y && (ph_value_use_count(y) || ph_value_graph_output_count(y))) { /* a part nobody reads: no Slice */
            ph_value *s = ph_rw_slice(rw, x, 1, &start, &end, &st->axis, NULL);
            if (!s)
                return ph_rw_fail(rw, PH_ENOMEM);
            ph_rw_replace(rw, y, s);
        }
        start = end;
    }
    return st ? ph_rw_done(rw) : ph_rw_fail(rw, PH_ENOMEM);
}

static const ph_rule rules[] = {
    {"split_to_slices",
     "( y0, y1 = Split(x, split?) | y0, y1, y2 = Split(x, split?) | y0, y1, y2, y3 = Split(x, split?)"
     " | y0, y1, y2, y3, y4 = Split(x, split?) | y0, y1, y2, y3, y4, y5 = Split(x, split?) )",
     cut_elsewhere, to_slices},
    {0},
};

static const ph_param_def params[] = {
    {"axes", PH_PARAM_STRING, "", "the axes a Split may cut along, ', '-separated (empty: all)"},
    {NULL, 0, NULL, NULL},
};

static const ph_profile_key keys[] = {{"Split.axes", "axes"}, {NULL, NULL}};

/* Examples for the rule checker: Splits on an axis the target cannot cut. */
static const ph_rule_example examples[] = {
    {"split_to_slices", "opset <13|17>\nx: <float|int64>[<4|6>,<2|3>,6]\ns: int64[<2|3>] = [<2, 4|3, 3|1, 2, 3|2, 2, 2>]\n"
                        "y0, y1<|, y2> = Split(x, s) {axis=<2|-1>}\nreturn y0",
     (const char *const[]){"axes=0", NULL}},
    {"split_to_slices", "opset 11\nx: float[<4|6>,6]\ny0, y1, y2 = Split(x) {axis=1, split=[<1, 2, 3|2, 2, 2>]}\n"
                        "return y0, y2",
     (const char *const[]){"axes=0", NULL}},
    {0}};

PH_PASS_DEFINE(
    .name = "split_to_slices",
    .summary = "Split along an axis the target cannot split -> one Slice per output",
    .stages = PH_STAGE_ADAPT,
    .exactness = PH_EXACT,
    .params = params,
    .rules = rules,
    .profile_keys = keys,
    .rule_examples = examples)
