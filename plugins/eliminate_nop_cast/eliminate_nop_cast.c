/* eliminate_nop_cast - remove a Cast (or CastLike) to the dtype its input
 * already has.
 *
 * Seed 003: a Cast whose source type equals its destination type converts
 * nothing.
 *
 * Requires: a default-domain Cast whose attribute `to` equals the known
 *   dtype of its input, or a CastLike whose two inputs have the same known
 *   dtype.  An unknown dtype (no declared or inferred type) is left alone.
 *   Casting a value to its own type returns it unchanged for every dtype
 *   (the `saturate` attribute only matters when the type changes).  When
 *   the output is a graph output it must be redirectable (the bypass rolls
 *   back otherwise, e.g. when the input is a graph input).
 * Changes:  users of the output read the input; the node is removed (and
 *   CastLike's second operand is pruned when nothing else reads it).  Main
 *   graph and every If/Loop/Scan body.
 * Exact:    yes; the output is the input.
 */
#include <passhost/passhost.h>

static int same_dtype_cast(const ph_match *m, const ph_params *params)
{
    int dt = ph_value_dtype(ph_match_value(m, "x"));
    return dt != PH_DT_UNDEFINED && ph_node_attr_type(ph_match_root(m), "to") == PH_ATTR_INT &&
           ph_node_attr_int(ph_match_root(m), "to", PH_DT_UNDEFINED) == dt;
}

static int same_dtype_castlike(const ph_match *m, const ph_params *params)
{
    int dt = ph_value_dtype(ph_match_value(m, "x"));
    return dt != PH_DT_UNDEFINED && ph_value_dtype(ph_match_value(m, "like")) == dt;
}

static const ph_rule rules[] = {
    {"nop_cast", "y = Cast(x)", same_dtype_cast, ph_rewrite_bypass},
    {"nop_castlike", "y = CastLike(x, like)", same_dtype_castlike, ph_rewrite_bypass},
    {0}};

PH_PASS_DEFINE(
    .name = "eliminate_nop_cast",
    .summary = "Cast/CastLike to the dtype the input already has -> bypass",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules)
