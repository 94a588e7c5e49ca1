/* eliminate_nop_pad - remove a Pad whose pads are all zero.
 *
 * Seed 003: padding nothing on either side of every axis gives the input
 * back, whatever the mode (constant, reflect, edge, wrap) and value.
 *
 * Requires: a default-domain Pad whose pads are all zero:
 *   - opset < 11: the attribute `pads` (opset 2..10) or `paddings` (opset
 *     1), with no pads input;
 *   - opset >= 11: the pads input, constant (an initializer, a Constant
 *     node or a shape constant).  The constant_value and the opset 18 axes
 *     inputs do not matter when nothing is padded.
 *   A runtime pads input is left alone.  When the output is a graph output
 *   it must be redirectable (the bypass rolls back otherwise, e.g. when the
 *   input is a graph input).
 * Changes:  users of the output read the input; the Pad is removed and its
 *   operands pruned when nothing else reads them.  Main graph and every
 *   If/Loop/Scan body.
 * Exact:    yes; the output is the input.
 */
#include <passhost/passhost.h>

#define MAX_PADS 256

static int zero_pads(const ph_match *m, const ph_params *params)
{
    const ph_node *n = ph_match_root(m);
    const ph_value *pads_in = ph_match_value(m, "pads");
    const int64_t *attr = NULL;
    int64_t buf[MAX_PADS];
    ptrdiff_t k;
    if (ph_node_opset(n) < 11) {
        k = ph_node_attr_ints(n, "pads", &attr);
        if (k < 0)
            k = ph_node_attr_ints(n, "paddings", &attr);
        if (pads_in)
            return 0;
    } else {
        k = pads_in ? ph_value_const_ints(pads_in, buf, NULL, MAX_PADS) : -1;
        attr = buf;
    }
    if (k < 0)
        return 0;
    for (ptrdiff_t i = 0; i < k; i++)
        if (attr[i] != 0)
            return 0;
    return 1;
}

static const ph_rule rules[] = {
    {"nop_pad", "y = Pad(x, pads?, value?, axes?)", zero_pads, ph_rewrite_bypass}, {0}};

PH_PASS_DEFINE(
    .name = "eliminate_nop_pad",
    .summary = "Pad with all-zero pads -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
