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

static int is_constant(const ph_node *n)
{
    return ph_node_op(n) == PH_OP_Constant && ph_node_domain(n)[0] == '\0' &&
           ph_node_input_count(n) == 0 && ph_node_output_count(n) == 1 && ph_node_output(n, 0);
}

/* Convert one Constant: 1 if converted, 0 if left, or a PH_E* code. */
static int convert(ph_node *n, ph_ctx *ctx)
{
    ph_value *out = ph_node_output(n, 0);
    int is_output = ph_value_graph_output_count(out) > 0;
    if (is_output && ph_graph_parent(ph_node_graph(n)))
        return 0;
    if (ph_value_use_count(out) == 0 && !is_output) { /* dead: nothing would read the initializer */
        if (!ph_ctx_rewrite_begin(ctx, ph_node_name(n)))
            return 0;
        int rc = ph_node_remove(n);
        return rc < 0 ? ph_ctx_error(ctx, rc, "cannot remove unused Constant '%s': %s", ph_node_name(n),
                                     ph_strerror(rc))
                      : 1;
    }
    int oom;
    ph_tensor *t = constant_tensor(n, &oom);
    if (!t)
        return oom ? ph_ctx_error(ctx, PH_ENOMEM, "Constant '%s': out of memory copying its value",
                                  ph_node_name(n))
                   : 0;
    if (!ph_ctx_rewrite_begin(ctx, ph_node_name(n))) {
        ph_tensor_free(t);
        return 0;
    }
    ph_value *init = ph_graph_add_initializer(ph_node_graph(n), ph_value_name(out), t);
    if (!init)
        return ph_ctx_error(ctx, PH_ENOMEM, "Constant '%s': cannot add an initializer", ph_node_name(n));
    /* init lives in n's graph, so in scope of every user, and may take over
       a main-graph output's name: the replace can only fail for lack of memory. */
    int rc = ph_value_replace(out, init);
    if (rc == 0)
        rc = ph_node_remove(n);
    if (rc < 0) {
        ph_value_prune(init);
        return ph_ctx_error(ctx, rc, "Constant '%s': cannot redirect its users: %s", ph_node_name(n),
                            ph_strerror(rc));
    }
    return 1;
}

static int visit(ph_node *n, void *ctx)
{
    return is_constant(n) ? convert(n, ctx) : 0;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    (void)params;
    return ph_graph_walk(g, visit, ctx);
}

PH_PASS_DEFINE(
    .name = "constant_to_initializer",
    .summary = "Constant node -> initializer of its graph (also inside If/Loop/Scan bodies)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .run = run)
