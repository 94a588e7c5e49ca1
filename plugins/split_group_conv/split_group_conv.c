/* split_group_conv - a grouped Conv becomes Split + one Conv per group +
 * Concat (seed 003 "Group Conv Replace"), for targets without grouped
 * convolution.
 *
 * Requires: y = Conv(x, w, b?) with group g > 1, w a constant [M, C/g, k...]
 *   of a float dtype (float, float16, double), M divisible by g, b absent or
 *   a constant [M] of w's dtype; x's channel dim, when known, is g * C/g.
 *   Depthwise convolutions (C/g = 1) only with the parameter depthwise set;
 *   at most max_groups groups (each becomes a node).
 * Changes: Split(x) on axis 1 into g pieces of C/g channels (sizes an input
 *   from opset 13, an attribute before); piece i goes through Conv(piece,
 *   w[i*M/g .. (i+1)*M/g), b[same]) with every attribute of the original
 *   (strides, pads, dilations, auto_pad, kernel_shape) but group 1; the
 *   results are concatenated on axis 1.  w and b go when nothing else reads
 *   them.
 * Exact: fp (each output channel sums the same products; the runtime's
 *   kernels may order them differently).
 */
#include <passhost/passhost.h>

static int grouped(const ph_match *m, const ph_params *params)
{
    ph_node *conv = ph_match_root(m);
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b");
    int64_t g = ph_node_attr_int(conv, "group", 1), M = ph_tensor_dim(w, 0), cg = ph_tensor_dim(w, 1);
    int64_t C = ph_value_dim(ph_match_value(m, "x"), 1);
    int dt = ph_tensor_dtype(w);
    return ph_tensor_rank(w) >= 3 && g > 1 && g <= ph_params_int(params, "max_groups") && M > 0 && M % g == 0 &&
           cg > 0 &&
           (cg > 1 || ph_params_bool(params, "depthwise")) && (C < 0 || C == g * cg) &&
           (dt == PH_DT_FLOAT || dt == PH_DT_FLOAT16 || dt == PH_DT_DOUBLE) &&
           (!b || (ph_tensor_dtype(b) == dt && ph_tensor_dim(b, 0) == M)) && ph_tensor_data(w) &&
           (!b || ph_tensor_data(b));
}

static int split(ph_rewriter *rw, const ph_match *m)
{
    ph_node *conv = ph_match_root(m);
    ph_value *x = ph_match_value(m, "x"), *y = ph_match_value(m, "y");
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b");
    int64_t g = ph_node_attr_int(conv, "group", 1), Mg = ph_tensor_dim(w, 0) / g, cg = ph_tensor_dim(w, 1);
    size_t rank = ph_tensor_rank(w), esize = ph_dtype_size(ph_tensor_dtype(w));
    size_t wbytes = ph_tensor_nbytes(w) / (size_t)g, bbytes = (size_t)Mg * esize;
    int64_t *dims = ph_rw_alloc(rw, (rank + (size_t)g) * sizeof *dims), *sizes = dims ? dims + rank : NULL;
    ph_value **outs = ph_rw_alloc(rw, (size_t)g * sizeof *outs);
    if (!dims || !outs)
        return PH_ENOMEM;
    for (size_t i = 0; i < rank; i++)
        dims[i] = i ? ph_tensor_dim(w, i) : Mg;
    for (int64_t i = 0; i < g; i++)
        sizes[i] = cg;
    int sizes_input = ph_op_axes_is_input(PH_OP_Split, ph_rw_opset(rw)) > 0;
    ph_value *in[3] = {x, NULL, NULL};
    if (sizes_input && !(in[1] = ph_rw_initializer(rw, "split_sizes", ph_tensor_new(PH_DT_INT64, 1, &g, sizes))))
        return PH_ENOMEM;
    ph_node *sp = ph_rw_node(rw, "Split", sizes_input ? 2 : 1, in, (size_t)g);
    if (!sp || ph_node_set_attr_int(sp, "axis", 1) < 0 ||
        (!sizes_input && ph_node_set_attr_ints(sp, "split", (size_t)g, sizes) < 0))
        return PH_ENOMEM;
    const unsigned char *wd = ph_tensor_data(w), *bd = b ? ph_tensor_data(b) : NULL;
    for (int64_t i = 0; i < g; i++) {
        in[0] = ph_node_output(sp, (size_t)i);
        int dt = ph_tensor_dtype(w);
        in[1] = ph_rw_initializer(rw, "group_w", ph_tensor_new(dt, rank, dims, wd + (size_t)i * wbytes));
        in[2] = b ? ph_rw_initializer(rw, "group_b", ph_tensor_new(dt, 1, &Mg, bd + (size_t)i * bbytes)) : NULL;
        ph_node *c = in[1] && (in[2] || !b) ? ph_rw_node(rw, "Conv", b ? 3 : 2, in, 1) : NULL;
        if (!c || ph_node_copy_attrs(c, conv) < 0 || ph_node_set_attr_int(c, "group", 1) < 0)
            return PH_ENOMEM;
        outs[i] = ph_node_output(c, 0);
    }
    ph_node *cat = ph_rw_node(rw, "Concat", (size_t)g, outs, 1);
    if (!cat || ph_node_set_attr_int(cat, "axis", 1) < 0 || ph_value_copy_type(ph_node_output(cat, 0), y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, ph_node_output(cat, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"group_conv", "y = Conv(x, w:const, b?:const:rank=1)", grouped, split},
    {0}};

static const ph_param_def params[] = {
    {"depthwise", PH_PARAM_BOOL, "false", "also split depthwise convolutions (one input channel per group)"},
    {"max_groups", PH_PARAM_INT, "64", "split only convolutions with at most this many groups"},
    {NULL, 0, NULL, NULL},
};

/* Examples for the rule checker: 2 and 3 groups, 1-D and 2-D. */
static const ph_rule_example examples[] = {
    {"group_conv", "x: <T=float|double|float16>[<1|2>,4,<5|6>,<5|7>]\n"
                   "w: const <T>[<M=2|4|6>,2,<3|1>,<3|2>]\nb: const <T>[<M>]\n"
                   "y = Conv(x, w<, b|>) {group=2<|, pads=[1,1,1,1]|, strides=[2,1]>}\nreturn y", NULL},
    {"group_conv", "x: <T=float|double>[<1|2>,6,<5|8>]\n"
                   "w: const <T>[<M=3|6>,2,<3|1>]\nb: const <T>[<M>]\n"
                   "y = Conv(x, w<, b|>) {group=3<|, dilations=[2]>}\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "split_group_conv",
    .summary = "grouped Conv -> Split + Conv per group + Concat",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_FP,
    .params = params,
    .rules = rules,
    .rule_examples = examples)
