/* sdk/src/ops/rw_layernorm.c - LayerNormalization's normalization in
 * primitive operators (ph_rw_layernorm_normalize in op_helpers.h).  Used by
 * decompose_layernorm (primitive = true) and by convert_opset below opset
 * 17, where LayerNormalization does not exist. */
#include "passhost/passhost.h"
#include "passhost/constant.h"

static ph_value *op2(ph_rewriter *rw, const char *op, ph_value *a, ph_value *b)
{
    ph_value *in[2] = {a, b};
    return a && b ? ph_rw_op(rw, op, 2, in) : NULL;
}

/* ReduceMean of x over axes[0..n) keeping them, in the opset's form. */
static ph_value *mean(ph_rewriter *rw, ph_value *x, int n, const int64_t *axes)
{
    ph_node *r = NULL;
    if (x && ph_op_axes_is_input(PH_OP_ReduceMean, ph_rw_opset(rw)) > 0) {
        int64_t len = n;
        ph_value *in[2] = {x, ph_rw_initializer(rw, "ln_axes", ph_tensor_new(PH_DT_INT64, 1, &len, axes))};
        r = in[1] ? ph_rw_node(rw, "ReduceMean", 2, in, 1) : NULL;
    } else if (x && (r = ph_rw_node(rw, "ReduceMean", 1, &x, 1)) != NULL &&
               ph_node_set_attr_ints(r, "axes", (size_t)n, axes) < 0) {
        return NULL;
    }
    return r && ph_node_set_attr_int(r, "keepdims", 1) == 0 ? ph_node_output(r, 0) : NULL;
}

PH_API ph_value *ph_rw_layernorm_normalize(ph_rewriter *rw, ph_value *x, int rank, int axis, double epsilon)
{
    int64_t axes[64], none[1] = {0};
    int dt = x ? ph_value_dtype(x) : PH_DT_UNDEFINED;
    if (!x || rank < 1 || rank > 64 || axis < 0 || axis >= rank || (dt != PH_DT_FLOAT && dt != PH_DT_DOUBLE)) {
        ph_rw_fail(rw, PH_EINVAL);
        return NULL;
    }
    int n = rank - axis;
    for (int i = 0; i < n; i++)
        axes[i] = axis + i;
    ph_value *d = op2(rw, "Sub", x, mean(rw, x, n, axes));
    ph_value *var = mean(rw, op2(rw, "Mul", d, d), n, axes);
    ph_value *e = ph_rw_initializer(rw, "ln_epsilon", ph_tensor_from_f64(dt, 0, none, &epsilon));
    ph_value *sd = op2(rw, "Add", var, e);
    return op2(rw, "Div", d, sd ? ph_rw_op(rw, "Sqrt", 1, &sd) : NULL);
}
