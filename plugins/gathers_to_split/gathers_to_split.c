/* gathers_to_split - Gathers of one tensor that partition one axis -> one
 * Split (+ Squeeze for scalar indices).
 *
 * msit KnowledgeGatherToSplit (seed 000): Gathers on the same axis of the
 * same tensor whose indices are runs of consecutive numbers (x[0:3],
 * x[3:6], x[6:9], or x[0], x[1], x[2]) that together take every index of
 * the axis once are one Split.
 *
 * Requires: at least two default-domain Gathers of the same graph reading
 *   the same value x on the same axis (attribute, negative allowed), x's
 *   rank and that axis' dim known numbers, each with constant int32/int64
 *   indices (initializer, Constant node or shape constant) that are a
 *   scalar, or a 1-D run k, k+1, ..., k+m-1 (m >= 1; negative indices count
 *   from the end); ordered, the runs are contiguous, disjoint and cover
 *   [0, dim).  Gathers of x that do not qualify stay as they are.
 * Changes: one Split of x on the axis (sizes an input from opset 13, an
 *   attribute before) replaces them; a scalar-index Gather's output becomes
 *   a Squeeze of its Split output on the axis (axes an input from opset 13).
 *   Graph outputs keep their names; the Gathers and the index constants only
 *   they used are removed.  Main graph and every If/Loop/Scan body.
 * Hand-written: sibling readers of one value, grouped by
 *   ph_graph_siblings_to_split (the matcher grows one match from one root).
 * Exact: yes; the same elements are copied.
 */
#include <stdlib.h>

#include <passhost/passhost.h>

static int gather_piece(const ph_node *n, const ph_value *x, int rank, ph_split_piece *p)
{
    const ph_value *iv = ph_node_input_count(n) == 2 ? ph_node_input(n, 1) : NULL;
    int64_t axis = ph_node_attr_int(n, "axis", 0), dim, *idx;
    int irank = iv ? ph_value_rank(iv) : -1;
    int64_t cnt = irank == 0 ? 1 : irank == 1 ? ph_value_dim(iv, 0) : -1;
    if (axis < 0)
        axis += rank;
    if (axis < 0 || axis >= rank || (dim = ph_value_dim(x, (int)axis)) < 1 || cnt < 1 || cnt > dim ||
        !(idx = malloc((size_t)cnt * sizeof *idx)))
        return 0;
    ptrdiff_t k = ph_value_const_ints(iv, idx, NULL, (size_t)cnt);
    int ok = k == cnt;
    for (ptrdiff_t i = 0; ok && i < k; i++) {
        int64_t v = idx[i] < 0 ? idx[i] + dim : idx[i];
        ok = v >= 0 && v < dim && (i == 0 || v == p->start + i);
        if (i == 0)
            p->start = v;
    }
    free(idx);
    p->axis = (int)axis;
    p->len = k;
    p->squeeze = irank == 0;
    return ok;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    return ph_graph_siblings_to_split(g, PH_OP_Gather, gather_piece, ctx);
}

PH_PASS_DEFINE(
    .name = "gathers_to_split",
    .summary = "Gathers of one tensor with constant contiguous disjoint indices covering one axis -> one Split (+Squeeze)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_EXACT,
    .run = run)
