/* transpose_to_reshape - a Transpose that moves no element becomes a Reshape:
 * when the dims it moves relative to each other are all of size 1, the
 * elements keep their row-major order and only the shape changes.
 *
 * Requires: a valid perm (none: reversed) and x's rank known; every dim of x
 *   the perm moves out of the others' relative order a known 1 (unknown or
 *   symbolic: maybe not), none a known 0.  The shape: x's dim perm[i] when
 *   known, else 0 (copy) when perm[i] == i, else -1, once and only when every
 *   other entry is a number ([0, -1] is refused: a 0 copy that is 0 at run
 *   time would leave -1 undefined).
 * Changes: y = Reshape(x, shape) (an int64 initializer).  An identity perm
 *   qualifies too (eliminate_nop_reshape then removes the Reshape).
 * Exact: yes; no element moves.
 */
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
        shape[i] = dims[perm[i]] > 0 ? dims[perm[i]] : perm[i] == i ? 0 : -1;
        copies += shape[i] == 0;
        minus_one += shape[i] < 0;
    }
    return minus_one > 1 || (minus_one && copies) ? -1 : r;
}

static int to_reshape(ph_rewriter *rw, const ph_match *m)
{
    int64_t shape[MAX_RANK], r = target_shape(ph_match_root(m), ph_match_value(m, "x"), shape);
    if (r < 0)
        return 0;
    ph_rw_bind(rw, "shape", ph_rw_initializer(rw, "reshape_shape", ph_tensor_new(PH_DT_INT64, 1, &r, shape)));
    return 1;
}

static const ph_rule rules[] = {
    {"order_keeping_transpose", "opset >= 5\ny = Transpose(x)\n=>\ny = Reshape(x, shape)", NULL, to_reshape}, {0}};

PH_PASS_DEFINE(
    .name = "transpose_to_reshape",
    .summary = "Transpose that keeps memory order (only size-1 dims move) -> Reshape",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
