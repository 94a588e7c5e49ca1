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

#include <passhost/passhost.h>

/* Each list of the kernel's length (pads twice that), as ONNX wants. */
static int lengths_ok(const ph_match *m, const ph_params *params)
{
    ptrdiff_t k = ph_match_ints(m, "k", NULL), s = ph_match_ints(m, "s", NULL), d = ph_match_ints(m, "d", NULL),
              p = ph_match_ints(m, "p", NULL);
    return k >= 1 && (s < 0 || s == k) && (d < 0 || d == k) && (p < 0 || p == 2 * k);
}

/* MaxPool's Indices output is unnamed, so the engine requires it unused. */
static const ph_rule rules[] = {
    {"nop_pool",
     "y = AveragePool|MaxPool(x) {kernel_shape=$k, kernel_shape all=1, strides?=$s, strides? all=1, "
     "dilations?=$d, dilations? all=1, pads?=$p, pads? all=0, "
     "auto_pad(\"NOTSET\") in [\"NOTSET\", \"VALID\", \"SAME_UPPER\", \"SAME_LOWER\"]}\n"
     "=>\n"
     "y = x",
     lengths_ok, NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "eliminate_nop_pool",
    .summary = "AveragePool/MaxPool with kernel 1, stride 1, no pads -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
