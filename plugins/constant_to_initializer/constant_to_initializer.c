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
#include <string.h>

#include <passhost/passhost.h>

/* The attributes a Constant may carry, at most one of which may be set. */
static const char *const value_attrs[] = {"value",        "value_float",  "value_floats", "value_int",
                                          "value_ints",   "value_string", "value_strings",
                                          "sparse_value"};

/* The tensor n holds as a new tensor the caller owns, or NULL when n is not a
 * Constant this pass can convert (see the header).  *oom is set on failure
 * to allocate. */
static ph_tensor *constant_tensor(const ph_node *n, int *oom)
{
    const char *which = NULL;
    *oom = 0;
    for (size_t i = 0; i < sizeof value_attrs / sizeof *value_attrs; i++) {
        if (ph_node_attr_type(n, value_attrs[i]) == PH_ATTR_NONE)
            continue;
        if (which)
            return NULL; /* several values: malformed */
        which = value_attrs[i];
    }
    if (!which)
        return NULL;

    ph_tensor *t = NULL;
    const int64_t *iv;
    const float *fv;
    ptrdiff_t c;
    if (!strcmp(which, "value")) {
        const ph_tensor *src = ph_node_attr_tensor(n, "value");
        if (!src || ph_tensor_dtype(src) == PH_DT_STRING || !ph_tensor_data(src))
            return NULL;
        t = ph_tensor_clone(src);
    } else if (!strcmp(which, "value_float") && ph_node_attr_type(n, which) == PH_ATTR_FLOAT) {
        float f = ph_node_attr_float(n, which, 0.0f);
        t = ph_tensor_new(PH_DT_FLOAT, 0, NULL, &f);
    } else if (!strcmp(which, "value_int") && ph_node_attr_type(n, which) == PH_ATTR_INT) {
        int64_t i = ph_node_attr_int(n, which, 0);
        t = ph_tensor_new(PH_DT_INT64, 0, NULL, &i);
    } else if (!strcmp(which, "value_floats") && (c = ph_node_attr_floats(n, which, &fv)) >= 0) {
        int64_t d = c;
        t = ph_tensor_new(PH_DT_FLOAT, 1, &d, c ? (const void *)fv : NULL);
    } else if (!strcmp(which, "value_ints") && (c = ph_node_attr_ints(n, which, &iv)) >= 0) {
        int64_t d = c;
        t = ph_tensor_new(PH_DT_INT64, 1, &d, c ? (const void *)iv : NULL);
    } else {
        return NULL; /* string, sparse, or an attribute of the wrong type */
    }
    *oom = t == NULL;
    return t;
}

/* Replace the Constant's output by a new initializer of the root's graph:
 * when nothing reads it, the commit removes both; when it is a body output,
 * the replacement cannot apply and the rewrite rolls back. */
static int convert(ph_rewriter *rw, const ph_match *m)
{
    int oom;
    ph_value *y = ph_match_value(m, "y");
    ph_tensor *t = constant_tensor(ph_match_root(m), &oom);
    if (!t)
        return oom ? PH_ENOMEM : 0;
    ph_value *init = ph_rw_initializer(rw, ph_value_name(y), t);
    return !init || ph_rw_replace(rw, y, init) ? PH_ENOMEM : 1;
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
