/* constant_to_initializer - turn Constant nodes into initializers.
 *
 * Requires: a default-domain Constant with one output and exactly one of the
 *   attributes value (a numeric tensor), value_float, value_floats,
 *   value_int or value_ints.
 * Changes:  a new initializer of the Constant's graph (the main graph, or
 *   the If/Loop/Scan body the Constant is in) holds the same dtype, shape
 *   and bytes; every user of the Constant's output, including nodes of
 *   nested bodies, reads it instead, and the Constant is removed.  A Constant
 *   nobody reads is simply removed (its initializer would be dead).  The
 *   initializer's name is built from the output's name (made unique, since
 *   the output still holds it while the rewrite runs).
 *   A Constant whose output is a graph output of the main graph becomes an
 *   initializer under the output's name (the model's interface is kept).
 * Leaves:
 *   - a Constant whose output is a graph output of an If/Loop/Scan body:
 *     a body output that is an initializer of the body is not accepted by
 *     every runtime, so the Constant stays;
 *   - string constants (value of dtype string, value_string, value_strings)
 *     and sparse_value: ir.h has no way to build a string or sparse tensor;
 *   - a value tensor whose data cannot be read (e.g. an unreadable external
 *     file), and malformed Constants (no or several value attributes).
 * Exact:    yes; the data is copied bit for bit.
 */
#include <passhost/passhost.h>

/* Replace the Constant's output by a new initializer of the root's graph
 * holding its tensor (ph_constant_node_tensor: the forms above): when
 * nothing reads it, the commit removes both; when it is a body output, the
 * replacement cannot apply and the rewrite rolls back. */
static int convert(ph_rewriter *rw, const ph_match *m)
{
    ph_value *y = ph_match_value(m, "y");
    ph_tensor *t;
    int rc = ph_constant_node_tensor(ph_match_root(m), &t);
    if (rc)
        return rc == PH_ENOMEM ? rc : 0;
    ph_rw_replace(rw, y, ph_rw_initializer(rw, ph_value_name(y), t));
    return ph_rw_done(rw);
}

static const ph_rule rules[] = {{"constant", "y = Constant()", NULL, convert}, {0}};

PH_PASS_DEFINE(
    .name = "constant_to_initializer",
    .summary = "Constant node -> initializer of its graph (also inside If/Loop/Scan bodies)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .rules = rules)
