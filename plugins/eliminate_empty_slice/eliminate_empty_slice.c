/* eliminate_empty_slice - drop Concat inputs that are empty Slices.
 *
 * Seed 000 KnowledgeEmptySliceFix: ONNX allows Concat inputs that are empty
 * tensors, but some backends (Ascend ATC) reject an empty Slice feeding a
 * Concat.  An input with no elements along the Concat axis contributes
 * nothing, so the Concat can simply stop reading it; the Slice then goes
 * when nothing else reads it.
 *
 * Requires: a default-domain Concat with a constant axis attribute and
 *   known rank, and an input produced by a default-domain Slice with
 *   constant starts/ends/axes/steps (initializers, Constant nodes, shape
 *   constants the inference knows as numbers; opset < 10: attributes) whose
 *   result is provably empty ALONG THE CONCAT AXIS:
 *   - that axis is sliced and its clamped range (ONNX Slice rules) selects
 *     no element: on a known dim by the exact rule; on a symbolic or unknown
 *     dim only when start and end have the same sign and the range is empty
 *     whatever the dim (start >= end with a positive step, start <= end
 *     with a negative one), or
 *   - the axis is not sliced and the data's dim there is known to be 0.
 *   (A Slice empty along another axis is NOT dropped: then every Concat
 *   input is empty along that axis, but the output's size along the Concat
 *   axis still counts this input's.)
 *   At least one input must remain: a Concat whose inputs are all such
 *   Slices keeps its last one.  The Slice's other users and graph outputs do
 *   not matter: they keep the Slice.
 * Changes:  the Concat input is removed (one rewrite per input dropped);
 *   the Slice and its constant operands are pruned when nothing else uses
 *   them.  A Concat left with one input is left for
 *   eliminate_single_input_concat.  Main graph and every If/Loop/Scan body.
 * Exact:    yes; the Concat's output has the same shape and elements.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <passhost/passhost.h>



/* 1 if sliced axis k of the spec provably selects no element of x. */
static int axis_empty(const ph_value *x, const ph_slice_params *s, int k)
{
    int64_t d = ph_value_dim(x, (int)s->axis[k]), st = s->step[k], first;
    int64_t b = s->start[k], e = s->end[k];
    if (s->end_sym[k])
        return 0;
    if (d >= 0)
        return ph_slice_length(d, b, e, st, &first) == 0;
    if ((b < 0) != (e < 0))
        return 0;
    return st > 0 ? b >= e : b <= e;
}

/* 1 if the Slice producing v gives no element along axis `axis` (of rank r). */
static int empty_along(const ph_value *v, int axis, int r)
{
    const ph_node *n = ph_value_producer(v);
    if (!n || ph_node_op(n) != PH_OP_Slice || ph_node_domain(n)[0] != '\0' ||
        ph_node_input_count(n) < 1 || !ph_node_input(n, 0) || ph_node_output_count(n) != 1)
        return 0;
    const ph_value *x = ph_node_input(n, 0);
    if (ph_value_rank(x) != r)
        return 0;
    ph_slice_params s;
    if (ph_node_slice_params(n, r, &s) < 0)
        return 0;
    for (int k = 0; k < s.n; k++)
        if (s.axis[k] == axis)
            return axis_empty(x, &s, k);
    return ph_value_dim(x, axis) == 0;
}

/* Remove input i of the Concat and prune the Slice behind it. */
static int drop_input(ph_node *concat, size_t i, ph_ctx *ctx)
{
    ph_value *v = ph_node_input(concat, i);
    int rc = ph_node_remove_input(concat, i);
    if (rc < 0)
        return ph_ctx_error(ctx, rc, "cannot drop input %zu of Concat '%s': %s", i, ph_node_name(concat),
                            ph_strerror(rc));
    ph_value_prune(v); /* the Slice, its operands, what fed only them */
    return 1;
}

/* One node of the walk: drop a Concat's empty Slice inputs. */
static int visit(ph_node *n, void *user)
{
    if (ph_node_op(n) != PH_OP_Concat || ph_node_domain(n)[0] != '\0' ||
        ph_node_attr_type(n, "axis") != PH_ATTR_INT || ph_node_output_count(n) != 1)
        return 0;
    int r = -1;
    for (size_t i = 0; i < ph_node_input_count(n) && r < 0; i++)
        r = ph_node_input(n, i) ? ph_value_rank(ph_node_input(n, i)) : -1;
    if (r < 1 || r > PH_SLICE_MAX)
        r = ph_value_rank(ph_node_output(n, 0));
    if (r < 1 || r > PH_SLICE_MAX)
        return 0;
    int64_t axis = ph_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += r;
    if (axis < 0 || axis >= r)
        return 0;
    int count = 0;
    for (size_t i = ph_node_input_count(n); i-- > 0;) {
        ph_value *v = ph_node_input(n, i);
        if (!v || ph_node_input_count(n) <= 1 || !empty_along(v, (int)axis, r))
            continue;
        char matched[512], a[200], b[200];
        snprintf(matched, sizeof matched, "%s, %s", ph_node_label(n, a, sizeof a),
                 ph_node_label(ph_value_producer(v), b, sizeof b));
        if (!ph_ctx_rewrite_begin(user, matched))
            break;
        int rc = drop_input(n, i, user);
        if (rc < 0)
            return rc;
        count += rc;
    }
    return count;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    static const ph_op concat[] = {PH_OP_Concat};
    return ph_graph_walk_ops(g, concat, 1, visit, ctx);
}

PH_PASS_DEFINE(
    .name = "eliminate_empty_slice",
    .summary = "an empty Slice feeding a Concat -> drop that Concat input (and the Slice)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .run = run)
