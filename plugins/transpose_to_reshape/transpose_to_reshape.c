/* transpose_to_reshape - a Transpose that moves no element becomes a Reshape.
 *
 * Icraft RemoveUselessTransposePass / OptimizeTransposeEfficiencyPass (seed
 * 004): when the dims a Transpose moves relative to each other are all of
 * size 1 (the dims that are not 1 keep their order), the elements keep
 * their row-major order and only the shape changes: a Reshape does the same
 * without moving data.
 *
 * Requires: a default-domain Transpose with a valid perm (a missing perm
 *   reverses the dims) and an input x of known rank; every dim of x that
 *   the perm moves out of the relative order of the others is a known 1
 *   (an unknown or symbolic dim counts as possibly not 1); no dim of x is a
 *   known 0; opset >= 5 (Reshape with a shape input).  The Reshape's shape
 *   is a constant: each output dim is x's dim perm[i] when known; else 0
 *   (copy) when perm[i] == i; else -1, allowed once and only when every
 *   other entry is a known number (a 0 copy that is 0 at run time would
 *   leave -1 undefined, so [0, -1] is refused).
 * Changes:  y's users read Reshape(x, shape) (an int64 initializer); the
 *   Transpose is removed.  An identity perm qualifies too (eliminate_nop_
 *   reshape then removes the Reshape when it can).  Main graph and every
 *   If/Loop/Scan body.
 * Exact:    yes; no element moves.
 */
#include <stdint.h>

#include <passhost/passhost.h>

#define MAX_RANK 64

/* The Reshape shape for Transpose root of x; its rank, or -1 if refused. */
static int target_shape(const ph_node *t, const ph_value *x, int64_t *shape)
{
    int64_t perm[MAX_RANK], dims[MAX_RANK];
    int r = ph_node_transpose_perm(t, perm, MAX_RANK);
    if (r < 0 || r != ph_value_rank(x))
        return -1;
    for (int i = 0; i < r; i++)
        if ((dims[i] = ph_value_dim(x, i)) == 0)
            return -1;
    if (!ph_perm_keeps_order(r, dims, perm))
        return -1;
    int copies = 0, minus_one = 0;
    for (int i = 0; i < r; i++) {
        int64_t d = dims[perm[i]];
        if (d > 0)
            shape[i] = d;
        else if (perm[i] == i)
            shape[i] = 0, copies++;
        else
            shape[i] = -1, minus_one++;
    }
    return minus_one > 1 || (minus_one && copies) ? -1 : r;
}

static int to_reshape(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x"), *y = ph_match_value(m, "y");
    int64_t shape[MAX_RANK];
    if (ph_rw_opset(rw) < 5)
        return 0;
    int r = target_shape(ph_match_root(m), x, shape);
    if (r < 0)
        return 0;
    int64_t len = r;
    ph_value *in[2] = {x, ph_rw_initializer(rw, "reshape_shape", ph_tensor_new(PH_DT_INT64, 1, &len, shape))};
    ph_value *out = in[1] ? ph_rw_op(rw, "Reshape", 2, in) : NULL;
    if (!out || ph_value_copy_type(out, y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, out) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {{"order_keeping_transpose", "y = Transpose(x)", NULL, to_reshape}, {0}};

PH_PASS_DEFINE(
    .name = "transpose_to_reshape",
    .summary = "Transpose that keeps memory order (only size-1 dims move) -> Reshape",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
