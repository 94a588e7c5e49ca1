/* squeeze_to_reshape - Squeeze/Unsqueeze -> Reshape to a static shape.
 *
 * Icraft ConvertSqueeze2ReshapePass (seed 004): a backend that has Reshape
 * but no Squeeze/Unsqueeze gets the one operator it knows; both keep the
 * row-major order of the data, so only the shape operand differs.
 *
 * Requires: a default-domain Squeeze or Unsqueeze (axes an attribute or an
 *   input, any opset from 5, the first with Reshape's shape input) whose
 *   output shape is fully known (every dim a number, from shape inference
 *   or value_info) and has no dim 0 (a 0 in Reshape's shape would copy the
 *   input's dim, not mean 0).
 * Changes: the node becomes Reshape(x, shape) with shape an int64
 *   initializer holding the output's dims; the axes operand goes when
 *   nothing else reads it.  Main graph and every If/Loop/Scan body.
 * Exact: yes; no element moves.
 */
#include <passhost/passhost.h>

static int static_output(const ph_match *m, const ph_params *params)
{
    ph_value *y = ph_match_value(m, "y");
    if (ph_node_opset(ph_match_root(m)) < 5 || !ph_value_shape_known(y))
        return 0;
    for (int i = 0; i < ph_value_rank(y); i++)
        if (ph_value_dim(y, i) == 0)
            return 0;
    return 1;
}

static int to_reshape(ph_rewriter *rw, const ph_match *m)
{
    ph_value *y = ph_match_value(m, "y");
    int64_t r = ph_value_rank(y), *dims = ph_rw_alloc(rw, (size_t)(r + 1) * sizeof *dims);
    if (!dims)
        return PH_ENOMEM;
    for (int i = 0; i < r; i++)
        dims[i] = ph_value_dim(y, i);
    ph_value *in[2] = {ph_match_value(m, "x"),
                       ph_rw_initializer(rw, "reshape_shape", ph_tensor_new(PH_DT_INT64, 1, &r, dims))};
    ph_value *out = in[1] ? ph_rw_op(rw, "Reshape", 2, in) : NULL;
    if (!out || ph_value_copy_type(out, y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, out) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"squeeze_to_reshape", "y = Squeeze|Unsqueeze(x, axes?)", static_output, to_reshape},
    {0}};

PH_PASS_DEFINE(
    .name = "squeeze_to_reshape",
    .summary = "Squeeze/Unsqueeze -> Reshape with a static shape",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_EXACT,
    .rules = rules)
