/* dynamic_reshape_to_static - a Reshape's run-time shape becomes a constant.
 *
 * Seed 000 KnowledgeDynamicReshape: in dynamic-shape models the target of a
 * Reshape is usually computed at run time (Shape -> Gather -> Concat ...),
 * which costs small operators and makes the Reshape wait for them.  Two
 * Reshape rules make a constant target possible: 0 copies the input's dim
 * at that position (allowzero = 0), and one -1 is inferred from the element
 * count.  msit finds the constant by running inference at several fixed
 * input sizes from input_shape_range; passhost's inference does the same in
 * one go with symbolic dims: it tracks the computed shape as a "shape
 * constant" whose entries are numbers, symbolic dims (`batch`, `seq`) or
 * unknown.  Input shapes the user fixed ([model] input_shape) are already
 * numbers by the time the pass runs; ranges leave the dims symbolic.
 *
 * Requires: a default-domain Reshape(data, shape) (opset >= 5) whose
 *   shape input is not already a constant (initializer or Constant node)
 *   nor a graph input, but is tracked by the inference as a shape constant
 *   of known length, each entry turned into a constant as follows:
 *   - a number: kept (0 and -1 keep their meaning);
 *   - a symbolic dim equal (by name) to the data input's dim at the same
 *     position, with allowzero = 0: 0 (copy that dim);
 *   - anything else: unknown.
 *   At most one entry may remain unknown, and only when no entry is already
 *   -1 and the parameter allow_minus_one is true (the default): it becomes
 *   -1, as ONNX Runtime's own optimizer writes it.  With allowzero = 1 a -1
 *   is only introduced when no entry is 0 (ONNX forbids both).
 *   When -1 is safe: the other entries are numbers >= 1 or copies (0) of
 *   the data's dims, so their product is 0 only when the data has no
 *   element.  It is not safe for an empty tensor (a copied dim that is 0 at
 *   run time, e.g. a batch of 0): a runtime cannot infer -1 next to a zero
 *   (ONNX Runtime refuses it), where the computed target worked; set
 *   allow_minus_one = false for models run on empty tensors.
 * Changes:  the Reshape is replaced by a Reshape of the same name, data
 *   input and attributes that reads a new int64 initializer, <name>_shape
 *   (its output value gets a new name unless it is a graph output).  The
 *   old shape value is pruned, which removes the shape-computing operators
 *   nothing else uses.  Main graph and every If/Loop/Scan body.
 * Exact:    yes; the Reshape produces the same shape from the same data.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_RANK 64

/* The constant target for Reshape n into out; its length, or -1. */
static ptrdiff_t static_target(const ph_node *n, int allow_minus_one, int64_t *out)
{
    const ph_value *x = ph_node_input(n, 0), *shape = ph_node_input(n, 1);
    const ph_node *p = ph_value_producer(shape);
    if (ph_value_const(shape) || ph_value_is_graph_input(shape) || ph_value_is_initializer(shape) ||
        (p && ph_node_op(p) == PH_OP_Constant))
        return -1;
    ptrdiff_t len = ph_value_shape_const_len(shape);
    if (len < 0 || len > MAX_RANK)
        return -1;
    int allowzero = ph_node_attr_int(n, "allowzero", 0) != 0;
    int xr = ph_value_rank(x);
    ptrdiff_t unknown = -1;
    int has_minus = 0, has_zero = 0;
    for (ptrdiff_t k = 0; k < len; k++) {
        const char *param = NULL;
        int64_t v = 0;
        switch (ph_value_shape_const_at(shape, (size_t)k, &v, &param)) {
        case PH_SC_KNOWN:
            if (v < -1)
                return -1; /* invalid target: leave it to the runtime */
            out[k] = v;
            has_minus |= v == -1;
            has_zero |= v == 0;
            continue;
        case PH_SC_SYMBOLIC:
            if (!allowzero && param && param[0] && k < xr && ph_value_dim(x, (int)k) < 0) {
                const char *xp = ph_value_dim_param(x, (int)k);
                if (xp && !strcmp(xp, param)) {
                    out[k] = 0;
                    has_zero = 1;
                    continue;
                }
            }
            break;
        default:
            break;
        }
        if (unknown >= 0)
            return -1; /* two unknown entries */
        unknown = k;
    }
    if (unknown >= 0) {
        if (!allow_minus_one || has_minus || (allowzero && has_zero))
            return -1;
        out[unknown] = -1;
    }
    return len;
}

/* Replace the Reshape by one of the same name that reads the constant target. */
static int to_static(ph_rewriter *rw, const ph_match *m)
{
    ph_node *re = ph_match_root(m);
    int64_t target[MAX_RANK];
    ptrdiff_t len = static_target(re, ph_params_bool(ph_rw_params(rw), "allow_minus_one"), target);
    if (len < 0)
        return 0;
    char hint[256];
    snprintf(hint, sizeof hint, "%s_shape", ph_node_name(re));
    ph_tensor *t = ph_tensor_new(PH_DT_INT64, 1, (const int64_t[]){(int64_t)len}, target);
    ph_value *in[2] = {ph_match_value(m, "x"), ph_rw_initializer(rw, hint, t)};
    ph_node *n = in[1] ? ph_rw_clone(rw, re, NULL, 2, in) : NULL;
    if (!n)
        return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(n, 0)) ? PH_ENOMEM : 1;
}

/* The old shape and whatever computed it go when nothing else reads them. */
static const ph_rule rules[] = {{"dynamic_reshape", "y = Reshape(x, shape)", NULL, to_static}, {0}};

static const ph_param_def params[] = {
    {"allow_minus_one", PH_PARAM_BOOL, "true",
     "let one entry that is neither a number nor a copy of the input's dim become -1 "
     "(not for inputs with a dim of 0 at run time: false keeps those chains)"},
    {NULL, 0, NULL, NULL},
};

/* Examples for the rule checker: targets computed from Shape. */
static const ph_rule_example examples[] = {
    {"dynamic_reshape", "x: <float|double|int64>[batch,<seq|3>,<4|6>]\n"
                        "s = Shape(x)\ni0: int64[1] = [0]\ng0 = Gather(s, i0) {axis=0}\n"
                        "m1: int64[1] = [-1]\nshape = Concat(g0, m1) {axis=0}\n"
                        "y = Reshape(x, shape)\nreturn y", NULL},
    {"dynamic_reshape", "x: <float|int32>[batch,seq,<K=4|6>]\n"
                        "s = Shape(x)\ni0: int64[2] = [0, 1]\ng0 = Gather(s, i0) {axis=0}\n"
                        "m1: int64[2] = [<K~1, 4|2, 3>]\nshape = Concat(g0, m1) {axis=0}\n"
                        "y = Reshape(x, shape)\nreturn y", NULL},
    {"dynamic_reshape", "x: float[batch,<seq|5>,<6|4>]\n"
                        "s = Shape(x)\ni1: int64[1] = [1]\ng1 = Gather(s, i1) {axis=0}\n"
                        "i2: int64[1] = [2]\ng2 = Gather(s, i2) {axis=0}\n"
                        "shape = Concat(<g1, g2|g2, g1>) {axis=0}\ny = Reshape(x, shape)\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "dynamic_reshape_to_static",
    .summary = "Reshape whose shape is computed at run time -> constant shape with 0 and -1",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .params = params,
    .rules = rules,
    .rule_examples = examples)
