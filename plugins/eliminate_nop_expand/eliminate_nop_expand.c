/* eliminate_nop_expand - remove an Expand to the shape its input already has.
 *
 * Seed 003: Expand(x, shape) broadcasts x against `shape`; when that
 * broadcast result has x's own shape, every element is copied once to where
 * it already is, so the node is the identity.
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
 *   operand is pruned when nothing else uses it.  Main graph and every
 *   If/Loop/Scan body.
 * Exact:    yes; the output is x.
 */
#include <stdint.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_RANK 64

/* 1 if entry k of the shape operand v (nums[k] when v is a constant tensor,
 * else v's shape constant) keeps dim i of x under broadcasting. */
static int entry_keeps(const ph_value *v, size_t k, const int64_t *nums, const ph_value *x, int i)
{
    int64_t d = ph_value_dim(x, i);
    if (nums)
        return nums[k] == 1 || (d >= 0 && nums[k] == d);
    int64_t val = 0;
    const char *param = NULL;
    switch (ph_value_shape_const_at(v, k, &val, &param)) {
    case PH_SC_KNOWN:
        return val == 1 || (d >= 0 && val == d);
    case PH_SC_SYMBOLIC: {
        const char *xp = ph_value_dim_param(x, i);
        return d < 0 && param && param[0] && xp && !strcmp(param, xp);
    }
    default:
        return 0;
    }
}

/* A 1-D int64 tensor's values (Expand's shape is int64); count or -1. */
static ptrdiff_t tensor_ints(const ph_tensor *t, int64_t *out)
{
    if (!t || ph_tensor_dtype(t) != PH_DT_INT64 || ph_tensor_rank(t) != 1)
        return -1;
    int64_t n = ph_tensor_numel(t);
    const void *d = ph_tensor_data(t);
    if (n < 0 || n > MAX_RANK || (n && !d))
        return -1;
    memcpy(out, d, (size_t)n * sizeof *out);
    return (ptrdiff_t)n;
}

static int is_nop_expand(const ph_node *n)
{
    if (ph_node_op(n) != PH_OP_Expand || ph_node_domain(n)[0] != '\0' || ph_node_input_count(n) != 2 ||
        !ph_node_input(n, 0) || !ph_node_input(n, 1) || ph_node_output_count(n) != 1)
        return 0;
    const ph_value *x = ph_node_input(n, 0), *shape = ph_node_input(n, 1);
    int r = ph_value_rank(x);
    if (r < 0)
        return 0;
    int64_t buf[MAX_RANK];
    const int64_t *nums = NULL;
    const ph_node *p = ph_value_producer(shape);
    ptrdiff_t len = tensor_ints(ph_value_const(shape), buf);
    if (len < 0 && p && ph_node_op(p) == PH_OP_Constant && ph_node_domain(p)[0] == '\0')
        len = tensor_ints(ph_node_attr_tensor(p, "value"), buf);
    if (len >= 0)
        nums = buf;
    else if (!ph_value_is_graph_input(shape))
        len = ph_value_shape_const_len(shape);
    if (len < 0 || len > r)
        return 0;
    for (ptrdiff_t k = 0; k < len; k++)
        if (!entry_keeps(shape, (size_t)k, nums, x, (int)(r - len + k)))
            return 0;
    return ph_value_can_replace(ph_node_output(n, 0), x);
}

/* One node of the walk: bypass it if it is an Expand that changes nothing. */
static int visit(ph_node *n, void *user)
{
    ph_ctx *ctx = user;
    if (!is_nop_expand(n))
        return 0;
    ph_value *shape = ph_node_input(n, 1);
    int rc = ph_node_bypass(n, 0, ph_node_input(n, 0));
    if (rc < 0)
        return ph_ctx_error(ctx, rc, "cannot bypass Expand '%s': %s", ph_node_name(n), ph_strerror(rc));
    ph_value_prune(shape);
    return 1;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    return ph_graph_walk(g, visit, ctx);
}

PH_PASS_DEFINE(
    .name = "eliminate_nop_expand",
    .summary = "Expand to the shape its input already has -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .run = run)
