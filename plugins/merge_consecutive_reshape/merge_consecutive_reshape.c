/* merge_consecutive_reshape - a chain of Reshape/Flatten/Squeeze/Unsqueeze
 * becomes one Reshape.
 *
 * Icraft MergeMultipleReshapePass (seed 004).  All four operators keep the
 * row-major order of the elements, so any chain of them is one Reshape of
 * its first input to the chain's final shape.  The final shape is read from
 * the inferred type of the last output, not recomputed from the operators,
 * so the operators' own forms do not matter (0 and -1 in a Reshape shape,
 * allowzero, Squeeze/Unsqueeze axes as attributes before opset 13 and as an
 * input from 13, Flatten's axis).
 *
 * Requires: two default-domain nodes of those four ops, the first's output
 *   read only by the second and no graph output; opset >= 5 (Reshape-1 had
 *   its shape as an attribute); the last output y of known rank whose dims
 *   can be written as a constant Reshape shape that yields exactly them
 *   for the first input x:
 *   - every dim of y a known number: the numbers.  A 0 dim is written as
 *     0 when x's dim at that index is a known 0 (a 0 copies that dim),
 *     else with allowzero=1 from opset 14, else the pair is left alone;
 *   - exactly one dim unknown or symbolic and no 0 dim: -1 there (it is
 *     numel / product of the known dims, never a division by 0);
 *   - otherwise every unknown dim must provably equal x's dim at the same
 *     index (the same symbolic name, ph_value_dim_equal) and is written 0
 *     (a copy), with no -1 beside it: a copied dim that is 0 at run time
 *     would leave a -1 undefined where the chain was defined; nor a 0 that
 *     is not a copy (that needs allowzero=1, which turns every 0 literal
 *     and forbids -1); else the pair is left alone.
 * Changes:  y's users read Reshape(x, shape) (an int64 initializer), or x
 *   itself when x and y provably have the same shape and y can be
 *   redirected; the pair is removed, and its shape/axes operands when only
 *   they used them.  A longer chain folds pair by pair (the Reshape made is
 *   the first node of the next pair).  Main graph and every If/Loop/Scan
 *   body.
 * Exact:    yes; only data movement.
 */
#include <stdint.h>

#include <passhost/passhost.h>

#define MAX_RANK 64

/* Fill shape[0..r) for y read from x; *allowzero gets 1 when a literal 0
 * needs allowzero=1.  0, or -1 when no constant shape gives y. */
static int target_shape(const ph_value *x, const ph_value *y, int r, int64_t opset, int64_t *shape,
                        int *allowzero)
{
    int unknown = 0, zero = 0, literal_zero = 0, minus_one = 0, copies = 0;
    for (int i = 0; i < r; i++) {
        int64_t d = ph_value_dim(y, i);
        unknown += d < 0;
        zero |= d == 0;
    }
    *allowzero = 0;
    for (int i = 0; i < r; i++) {
        int64_t d = ph_value_dim(y, i);
        shape[i] = d;
        if (d == 0) {
            if (i < ph_value_rank(x) && ph_value_dim(x, i) == 0)
                continue; /* 0: copy x's 0 */
            literal_zero = 1;
        } else if (d < 0) {
            if ((unknown > 1 || zero) && ph_value_dim_equal(x, i, y, i))
                shape[i] = 0, copies++; /* copy x's dim i */
            else if (minus_one++)
                return -1;
            else
                shape[i] = -1;
        }
    }
    if (minus_one && (zero || copies))
        return -1; /* a copied dim that is 0 at run time would leave -1 undefined */
    if (literal_zero) {
        /* allowzero=1 makes every 0 literal: no copies, no -1 */
        if (unknown || opset < 14)
            return -1;
        *allowzero = 1;
    }
    return 0;
}

static int merge(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x"), *y = ph_match_value(m, "y");
    int64_t opset = ph_rw_opset(rw);
    int r = ph_value_rank(y), allowzero;
    int64_t shape[MAX_RANK];
    if (opset < 5 || r < 0 || r > MAX_RANK)
        return 0;
    if (ph_value_same_shape(x, y) && ph_value_can_replace(y, x))
        return ph_rw_replace(rw, y, x) ? PH_ENOMEM : 1;
    if (target_shape(x, y, r, opset, shape, &allowzero))
        return 0;
    int64_t len = r;
    ph_value *in[2] = {x, ph_rw_initializer(rw, "reshape_shape", ph_tensor_new(PH_DT_INT64, 1, &len, shape))};
    ph_node *n = in[1] ? ph_rw_node(rw, "Reshape", 2, in, 1) : NULL;
    if (!n || (allowzero && ph_node_set_attr_int(n, "allowzero", 1)))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, ph_node_output(n, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"reshape_pair",
     "t = Reshape|Flatten|Squeeze|Unsqueeze(x, a?)\n"
     "y = Reshape|Flatten|Squeeze|Unsqueeze(t, b?)",
     NULL, merge},
    {0}};

PH_PASS_DEFINE(
    .name = "merge_consecutive_reshape",
    .summary = "chain of Reshape/Flatten/Squeeze/Unsqueeze -> one Reshape (0 and -1 where the shape is symbolic)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
