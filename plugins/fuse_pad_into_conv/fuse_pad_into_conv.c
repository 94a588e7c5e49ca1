/* fuse_pad_into_conv - move a zero Pad in front of a Conv (or of an
 * AveragePool that counts padding) into that node's pads.
 *
 * Requires: a default-domain Pad (opset >= 2) whose output feeds only
 *   - a Conv (as its data input), auto_pad absent or NOTSET, or
 *   - an AveragePool with count_include_pad = 1, ceil_mode absent or 0 (with
 *     ceil_mode the last window is dropped or kept by where the input
 *     starts, which moving the padding changes), auto_pad absent or NOTSET,
 *     and every merged pad smaller than the kernel (ONNX Runtime refuses
 *     larger ones).
 *   MaxPool and AveragePool with count_include_pad = 0 are left alone: the
 *   padded zeros would then stop being candidates of the max or count in
 *   the divisor.  The Pad must be in constant mode (mode absent or
 *   "constant") with the value +0 (the attribute value before opset 11, the
 *   constant_value input from 11: omitted or a one-element constant; -0
 *   could show through an all-padding window), and constant pads (the
 *   attribute before opset 11, the pads input from 11, read as int32/int64
 *   constants; the opset 18 axes input is honoured, negative axes too) that
 *   are all >= 0 and 0 on dims 0 (N) and 1 (C).  The node's rank comes from
 *   the Conv weight's known rank or the kernel_shape attribute; its pads
 *   attribute, when present, must have 2 * (rank - 2) entries.
 * Changes: Conv(Pad(x)) becomes Conv(x) with the Pad's spatial pads added to
 *   the Conv's pads (likewise AveragePool); the node keeps its other
 *   attributes, inputs and name.  The Pad goes when nothing else reads it.
 * Exact: yes: the window sees the same zeros, in the same places, and with
 *   count_include_pad = 1 the divisor counts them either way.
 */
#include <math.h>
#include <string.h>
#include <passhost/passhost.h>
#include <passhost/constant.h>

#define MAX_RANK 16

/* 1 if constant-pad value v (a constant tensor, NULL for omitted) is +0. */
static int zero_value(const ph_value *v)
{
    double d;
    if (!v)
        return 1;
    const ph_tensor *t = ph_value_const(v);
    return t && ph_tensor_numel(t) == 1 && ph_tensor_read_f64(t, 0, NULL, &d) == 0 && d == 0 && !signbit(d);
}

/* The Pad's pads for every dim of a rank-r tensor into pp[2r]: begins, then
 * ends.  0 when the Pad is not a constant zero pad we can read. */
static int read_pad(const ph_node *pad, int r, int64_t *pp)
{
    int64_t opset = ph_node_opset(pad), vals[2 * MAX_RANK], axes[MAX_RANK];
    ptrdiff_t np, na = r;
    ph_attr_type mode = ph_node_attr_type(pad, "mode");
    const ph_value *ax = NULL;
    if (opset < 2 || (mode != PH_ATTR_NONE && (mode != PH_ATTR_STRING ||
                                               strcmp(ph_node_attr_string(pad, "mode", ""), "constant") != 0)))
        return 0;
    if (opset < 11) {
        const int64_t *p;
        float v = ph_node_attr_float(pad, "value", 0.0f);
        np = ph_node_attr_ints(pad, "pads", &p);
        if (ph_node_input_count(pad) != 1 || v != 0 || signbit(v) || np != 2 * r)
            return 0;
        memcpy(vals, p, (size_t)np * sizeof *p);
    } else {
        const ph_value *pv = ph_node_input(pad, 1);
        ax = ph_node_input(pad, 3);
        if (!pv || !zero_value(ph_node_input(pad, 2)) || ph_node_input_count(pad) > 4 ||
            (np = ph_value_const_ints(pv, vals, NULL, 2 * MAX_RANK)) < 0 ||
            (ax && (opset < 18 || (na = ph_value_const_ints(ax, axes, NULL, MAX_RANK)) < 0)) || np != 2 * na)
            return 0;
    }
    memset(pp, 0, 2 * (size_t)r * sizeof *pp);
    unsigned seen = 0;
    for (ptrdiff_t i = 0; i < na; i++) {
        int64_t a = !ax ? i : axes[i] < 0 ? axes[i] + r : axes[i];
        if (a < 0 || a >= r || (seen >> a & 1u))
            return 0; /* out of range or repeated */
        seen |= 1u << a;
        pp[a] = vals[i];
        pp[a + r] = vals[i + na];
    }
    for (int i = 0; i < 2 * r; i++)
        if (pp[i] < 0)
            return 0;
    return pp[0] == 0 && pp[1] == 0 && pp[r] == 0 && pp[r + 1] == 0;
}

static int fold(ph_rewriter *rw, const ph_match *m)
{
    ph_node *node = ph_match_root(m);
    int pool = ph_node_op(node) == PH_OP_AveragePool;
    ph_value *in[3] = {ph_match_value(m, "x"), ph_match_value(m, "w"), ph_match_value(m, "b")};
    const ph_tensor *wt = pool ? NULL : ph_value_const(in[1]);
    const int64_t *old = NULL, *ks = NULL;
    ptrdiff_t nk = ph_node_attr_ints(node, "kernel_shape", &ks), no = ph_node_attr_ints(node, "pads", &old);
    int r = pool ? (int)nk + 2 : wt ? (int)ph_tensor_rank(wt) : ph_value_rank(in[1]);
    if (r < 3 && !pool && nk >= 1)
        r = (int)nk + 2;
    int64_t pp[2 * MAX_RANK], merged[2 * MAX_RANK];
    if (r < 3 || r > MAX_RANK || (nk >= 0 && nk != r - 2) || (no >= 0 && no != 2 * (r - 2)) ||
        !read_pad(ph_match_node(m, "p"), r, pp))
        return 0;
    for (int i = 0; i < r - 2; i++) {
        merged[i] = (no > 0 ? old[i] : 0) + pp[i + 2];
        merged[i + r - 2] = (no > 0 ? old[i + r - 2] : 0) + pp[i + 2 + r];
        if (pool && (merged[i] >= ks[i] || merged[i + r - 2] >= ks[i]))
            return 0;
    }
    ph_node *nn = ph_rw_clone(rw, node, NULL, pool ? 1 : in[2] ? 3 : 2, in);
    if (!nn || ph_node_set_attr_ints(nn, "pads", 2 * (size_t)(r - 2), merged) < 0)
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(nn, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"pad_conv", "p = Pad(x, pargs*)\ny = Conv(p, w, b?) {auto_pad?=\"NOTSET\"}", NULL, fold},
    {"pad_avgpool",
     "p = Pad(x, pargs*)\ny = AveragePool(p) {count_include_pad=1, ceil_mode?=0, auto_pad?=\"NOTSET\"}", NULL,
     fold},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_pad_into_conv",
    .summary = "constant-mode zero Pad on spatial dims -> the pads of the Conv (or counting AveragePool) after it",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
