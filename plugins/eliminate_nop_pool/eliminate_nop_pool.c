/* eliminate_nop_pool - remove AveragePool/MaxPool that copy their input.
 *
 * The Icraft manual's custom-pass demo (seed 004, 3.2): a pool whose window is
 * one element and that steps one element at a time samples every point once
 * and returns it unchanged, so the node can be cut out and its producer wired
 * to its consumers.
 *
 * Requires: AveragePool or MaxPool of the default domain, with
 *   - kernel_shape present, every entry 1;
 *   - strides absent or all 1, dilations absent or all 1, pads absent or all
 *     0 (each list, when present, of the kernel's length, pads twice that);
 *   - auto_pad NOTSET or VALID, or SAME_UPPER/SAME_LOWER (with kernel 1 and
 *     stride 1 the SAME padding is zero);
 *   - for MaxPool, the optional Indices output unused and not a graph output;
 *   - the output redirectable (ph_value_can_replace) when it is a graph output.
 *   ceil_mode and count_include_pad cannot change anything at kernel 1,
 *   stride 1, no pads.  The input's shape need not be known: such a pool is
 *   the identity on any input the operator accepts.
 * Changes:  users of the pool's output read its input; the pool is removed.
 *   Main graph and every If/Loop/Scan body.
 * Exact:    yes: max of one element is that element, and the average is the
 *   element divided by 1.
 */
#include <string.h>

#include <passhost/passhost.h>

/* 1 if attribute `name` is absent, or a list of `len` ints all equal to v. */
static int ints_absent_or_all(const ph_node *n, const char *name, ptrdiff_t len, int64_t v)
{
    const int64_t *vals;
    ph_attr_type t = ph_node_attr_type(n, name);
    if (t == PH_ATTR_NONE)
        return 1;
    if (t != PH_ATTR_INTS || ph_node_attr_ints(n, name, &vals) != len)
        return 0;
    for (ptrdiff_t i = 0; i < len; i++)
        if (vals[i] != v)
            return 0;
    return 1;
}

static int auto_pad_ok(const ph_node *n)
{
    ph_attr_type t = ph_node_attr_type(n, "auto_pad");
    if (t == PH_ATTR_NONE)
        return 1;
    if (t != PH_ATTR_STRING)
        return 0;
    const char *ap = ph_node_attr_string(n, "auto_pad", "NOTSET");
    return !strcmp(ap, "NOTSET") || !strcmp(ap, "VALID") || !strcmp(ap, "SAME_UPPER") ||
           !strcmp(ap, "SAME_LOWER");
}

/* The window: kernel of ones, unit strides and dilations, no padding. */
static int window_is_nop(const ph_node *n)
{
    const int64_t *k;
    if (ph_node_attr_type(n, "kernel_shape") != PH_ATTR_INTS)
        return 0;
    ptrdiff_t rank = ph_node_attr_ints(n, "kernel_shape", &k);
    if (rank < 1 || !ints_absent_or_all(n, "kernel_shape", rank, 1))
        return 0;
    return ints_absent_or_all(n, "strides", rank, 1) &&
           ints_absent_or_all(n, "dilations", rank, 1) &&
           ints_absent_or_all(n, "pads", 2 * rank, 0) && auto_pad_ok(n);
}

static int nop_window(const ph_match *m, const ph_params *params)
{
    return window_is_nop(ph_match_root(m));
}

/* MaxPool's Indices output is unnamed, so the engine requires it unused. */
static const ph_rule rules[] = {{"nop_pool", "y = AveragePool|MaxPool(x)", nop_window, ph_rewrite_bypass}, {0}};

PH_PASS_DEFINE(
    .name = "eliminate_nop_pool",
    .summary = "AveragePool/MaxPool with kernel 1, stride 1, no pads -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
