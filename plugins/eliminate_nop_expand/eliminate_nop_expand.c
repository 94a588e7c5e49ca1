/* eliminate_nop_expand - remove an Expand to the shape its input already
 * has: it copies every element once to where it already is.
 *
 * Requires: a default-domain Expand whose shape operand is constant (an
 *   initializer, a Constant node, or a shape constant of the inference, whose
 *   entries may be symbolic dims such as Shape(x)[k]), x's rank r known, the
 *   shape's length L <= r (a longer shape adds leading dims), and each shape
 *   entry j, aligned with x's dim i = r - L + j, either
 *   - 1 (broadcasting keeps dim i whatever it is, even unknown), or
 *   - the same number as x's known dim i, or
 *   - the same symbolic dim as x's dim i (same name).
 *   The output must be redirectable (ph_value_can_replace) when it is a
 *   graph output.
 * Changes:  users of the output read x; the Expand is removed, and its shape
 *   operand is pruned when nothing else uses it.
 * Exact:    yes; the output is x.
 */
#include <stdint.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_RANK 64

/* 1 if shape entry (num, or the symbolic dim sym) keeps dim i of x under
 * broadcasting. */
static int entry_keeps(int64_t num, const char *sym, const ph_value *x, int i)
{
    int64_t d = ph_value_dim(x, i);
    if (sym) {
        const char *xp = ph_value_dim_param(x, i);
        return d < 0 && xp && !strcmp(sym, xp);
    }
    return num == 1 || (d >= 0 && num == d);
}

static int expands_nothing(const ph_match *m, const ph_params *params)
{
    const ph_value *x = ph_match_value(m, "x");
    int64_t nums[MAX_RANK];
    const char *sym[MAX_RANK];
    int r = ph_value_rank(x);
    ptrdiff_t len = ph_value_const_ints(ph_match_value(m, "shape"), nums, sym, MAX_RANK);
    if (r < 0 || len < 0 || len > r)
        return 0;
    for (ptrdiff_t k = 0; k < len; k++)
        if (!entry_keeps(nums[k], sym[k], x, (int)(r - len + k)))
            return 0;
    return 1;
}

static const ph_rule rules[] = {{"nop_expand", "y = Expand(x, shape)", expands_nothing, ph_rewrite_bypass}, {0}};

PH_PASS_DEFINE(
    .name = "eliminate_nop_expand",
    .summary = "Expand to the shape its input already has -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
