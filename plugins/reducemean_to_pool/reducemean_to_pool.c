/* reducemean_to_pool - a mean over H, W of a 4-D input, or over D of a 3-D
 * (N, C, D) input, is an average pool.
 *
 * Requires: a default-domain ReduceMean whose input has a float, float16 or
 *   double dtype and a known rank r >= 3, with constant axes (attribute
 *   before opset 18, input from 18; negative allowed) that are exactly the
 *   spatial axes 2..r-1 in any order.  For r = 3 the dim D must be a known
 *   number >= 1 (it becomes the kernel).
 * Changes: r = 3: AveragePool(kernel_shape [D]), which with stride 1 and no
 *   padding averages the whole axis; r >= 4: GlobalAveragePool.  keepdims 0
 *   adds a Squeeze of axes 2..r-1 (axes an input from opset 13).  The axes
 *   operand goes when nothing else reads it; the last new node takes the name.
 * Exact: fp (the same mean, summed in another order).
 */

#include <passhost/passhost.h>

#define MAXR 16

static int spatial_mean(const ph_match *m, const ph_params *params)
{
    ph_value *x = ph_match_value(m, "x");
    int r = ph_value_rank(x);
    int64_t ax[MAXR], seen = 0;
    ptrdiff_t n = r >= 3 && r <= MAXR ? ph_node_axes(ph_match_root(m), r, ax, MAXR) : -1;
    if (n != r - 2 || (r == 3 && ph_value_dim(x, 2) < 1))
        return 0;
    for (ptrdiff_t i = 0; i < n; i++)
        seen |= ax[i] >= 2 ? (int64_t)1 << ax[i] : 0;
    return seen == ((int64_t)1 << r) - 4; /* bits 2..r-1 */
}

static int to_pool(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x");
    int64_t r = ph_value_rank(x), d = ph_value_dim(x, 2), axes[MAXR];
    ph_node *pool = ph_rw_node(rw, r == 3 ? "AveragePool" : "GlobalAveragePool", 1, &x, 1);
    if (r == 3)
        ph_node_set_attr_ints(pool, "kernel_shape", 1, &d);
    ph_value *out = ph_node_output(pool, 0);
    for (int64_t i = 2; i < r; i++)
        axes[i - 2] = i;
    if (!ph_match_int(m, "keep", 1))
        out = ph_rw_axes_op(rw, "Squeeze", out, (size_t)r - 2, axes);
    return ph_rw_replace_root(rw, out);
}

static const ph_rule rules[] = {
    {"reducemean_to_pool", "y = ReduceMean(x:float32|float16|double, axes?) {keepdims(1)=$keep}", spatial_mean,
     to_pool},
    {0}};

PH_PASS_DEFINE(
    .name = "reducemean_to_pool",
    .summary = "ReduceMean over H,W of 4-D -> GlobalAveragePool; over D of 3-D -> AveragePool",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_FP,
    .rules = rules)
