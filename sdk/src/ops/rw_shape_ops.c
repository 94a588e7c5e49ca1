/* sdk/src/ops/rw_shape_ops.c - a rewrite's Reshape, Squeeze/Unsqueeze and
 * Slice with constant operands, and Transpose, in the form the model's default-domain opset
 * wants (see ph_rw_reshape in op_helpers.h).  Added for
 * conv_after_gap_to_gemm, conv_to_matmul, conv1d_to_conv2d and
 * conv3d_to_conv2d. */
#include <string.h>

#include "passhost/passhost.h"

static int64_t rw_opset(const ph_rewriter *rw) { return ph_model_opset(ph_graph_model(ph_rw_graph(rw)), ""); }

static ph_value *ints_init(ph_rewriter *rw, const char *hint, size_t n, const int64_t *vals)
{
    int64_t len = (int64_t)n;
    return ph_rw_initializer(rw, hint, ph_tensor_new(PH_DT_INT64, 1, &len, vals));
}

PH_API ph_value *ph_rw_reshape(ph_rewriter *rw, ph_value *x, size_t rank, const int64_t *shape)
{
    if (rw_opset(rw) < 5) {
        ph_rw_fail(rw, PH_EINVAL);
        return NULL;
    }
    ph_value *in[2] = {x, ints_init(rw, "reshape_shape", rank, shape)};
    return in[1] ? ph_rw_op(rw, "Reshape", 2, in) : NULL;
}

PH_API ph_value *ph_rw_axes_op(ph_rewriter *rw, const char *op, ph_value *x, size_t n, const int64_t *axes)
{
    int is_sq = !strcmp(op, "Squeeze");
    if ((!is_sq && strcmp(op, "Unsqueeze")) || n == 0) {
        ph_rw_fail(rw, PH_EINVAL);
        return NULL;
    }
    if (ph_op_axes_is_input(PH_OP_Squeeze, rw_opset(rw)) > 0) {
        ph_value *in[2] = {x, ints_init(rw, is_sq ? "squeeze_axes" : "unsqueeze_axes", n, axes)};
        return in[1] ? ph_rw_op(rw, op, 2, in) : NULL;
    }
    ph_node *node = ph_rw_node(rw, op, 1, &x, 1);
    if (node && ph_node_set_attr_ints(node, "axes", n, axes) < 0) {
        ph_rw_fail(rw, PH_ENOMEM);
        return NULL;
    }
    return node ? ph_node_output(node, 0) : NULL;
}

PH_API ph_value *ph_rw_slice(ph_rewriter *rw, ph_value *x, size_t n, const int64_t *starts, const int64_t *ends,
                             const int64_t *axes, const int64_t *steps)
{
    if (rw_opset(rw) >= 10) {
        ph_value *in[5] = {x, ints_init(rw, "slice_starts", n, starts), ints_init(rw, "slice_ends", n, ends),
                           ints_init(rw, "slice_axes", n, axes), steps ? ints_init(rw, "slice_steps", n, steps) : NULL};
        if (!in[1] || !in[2] || !in[3] || (steps && !in[4]))
            return NULL;
        return ph_rw_op(rw, "Slice", steps ? 5 : 4, in);
    }
    for (size_t i = 0; steps && i < n; i++)
        if (steps[i] != 1) {
            ph_rw_fail(rw, PH_EINVAL); /* no steps before opset 10 */
            return NULL;
        }
    ph_node *node = ph_rw_node(rw, "Slice", 1, &x, 1);
    if (node && (ph_node_set_attr_ints(node, "starts", n, starts) < 0 ||
                 ph_node_set_attr_ints(node, "ends", n, ends) < 0 ||
                 ph_node_set_attr_ints(node, "axes", n, axes) < 0)) {
        ph_rw_fail(rw, PH_ENOMEM);
        return NULL;
    }
    return node ? ph_node_output(node, 0) : NULL;
}

PH_API ph_value *ph_rw_transpose(ph_rewriter *rw, ph_value *x, size_t rank, const int64_t *perm)
{
    if (!x) {
        ph_rw_fail(rw, PH_EINVAL);
        return NULL;
    }
    ph_node *t = ph_rw_node(rw, "Transpose", 1, &x, 1);
    if (!t || ph_node_set_attr_ints(t, "perm", rank, perm) < 0) {
        ph_rw_fail(rw, PH_ENOMEM);
        return NULL;
    }
    return ph_node_output(t, 0);
}
