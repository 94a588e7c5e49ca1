/* slices_to_split - Slices of one tensor that partition one axis -> one Split.
 *
 * Icraft ConvertSlice2SplitPass (seed 004): several Slices reading the same
 * tensor, each taking a contiguous range of the same axis, together taking
 * every element of that axis exactly once, are one Split.
 *
 * Requires: at least two default-domain Slices of the same graph reading the
 *   same value x, whose starts/ends/axes/steps are constant (initializers,
 *   Constant nodes, shape constants known as numbers; attributes before
 *   opset 10), each with step 1 on one axis whose clamped range (ONNX Slice
 *   rules) is not empty and, on any other axis it names, the whole dim;
 *   x's rank and that axis' dim known numbers; the ranges, ordered, are
 *   contiguous, disjoint and cover [0, dim).  Slices of x that do not
 *   qualify (another step, another axis, a symbolic end) stay as they are.
 * Changes: one Split of x on the axis (sizes as an input from opset 13, an
 *   attribute before) replaces the Slices; their outputs' readers read the
 *   Split's outputs (graph outputs keep their names); the Slices and the
 *   operands only they used are removed.  Main graph and every If/Loop/Scan
 *   body.
 * Hand-written: the pattern matcher grows one match upward from one root;
 *   sibling readers of one value are grouped by ph_graph_siblings_to_split
 *   (linear: each value's uses are read once).
 * Exact: yes; the same elements are copied.
 */
#include <passhost/passhost.h>

static int slice_piece(const ph_node *n, const ph_value *x, int rank, ph_split_piece *p)
{
    ph_slice_params s;
    if (ph_node_slice_params(n, rank, &s) < 0)
        return 0;
    p->axis = -1;
    for (int k = 0; k < s.n; k++) {
        int64_t dim = ph_value_dim(x, (int)s.axis[k]), first, len;
        if (s.step[k] != 1 || s.end_sym[k] || dim < 0)
            return 0;
        len = ph_slice_length(dim, s.start[k], s.end[k], 1, &first);
        if (len == dim)
            continue; /* the whole axis */
        if (p->axis >= 0 || len < 1)
            return 0; /* a second cut axis, or nothing selected */
        p->axis = (int)s.axis[k];
        p->start = first;
        p->len = len;
    }
    p->squeeze = 0;
    return p->axis >= 0;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    return ph_graph_siblings_to_split(g, PH_OP_Slice, slice_piece, ctx);
}

PH_PASS_DEFINE(
    .name = "slices_to_split",
    .summary = "Slices of one tensor covering contiguous disjoint ranges of one axis -> one Split",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .run = run)
