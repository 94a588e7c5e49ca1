/* convert_opset - convert the default domain (ai.onnx) to the opset range
 * the target accepts: down (17 -> 11) or up (11 -> 17).
 *
 * Requires: parameter `opset` (the profile's [target.opset] ai.onnx, a
 *   range "LO..HI", "LO..", "..HI" or one version), and a model whose
 *   default-domain opset is outside it.
 * Changes: every node of the main graph and of every If/Loop/Scan body
 *   whose operator changed signature or semantics between the model's
 *   opset and the nearest end of the range is rewritten to its form at that
 *   version (docs/targets.md, "Opset conversion", lists them): operands
 *   moved between attributes and inputs, Softmax's axis semantics of
 *   before 13 kept by a Flatten/Reshape or Transpose around it, Upsample <->
 *   Resize, LayerNormalization (17), Gelu (20), HardSwish (14) and
 *   GreaterOrEqual/LessOrEqual (12, to 11) decomposed below their version, extra outputs and attributes a version does not have dropped
 *   when unused or at their default; then the model imports the new opset
 *   (and its ir_version is raised to what that opset needs, going up).
 *   What has no faithful conversion (an operand that must become an
 *   attribute but is computed, an attribute value the target version does
 *   not have, an operator that does not exist there) fails the pass with
 *   one error naming the node and why; nothing is written.
 * Exact: fp (the decompositions round each step; every other adapter is
 *   exact).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <passhost/host.h>
#include <passhost/schema.h>

#include "convert_opset.h"

/* ---------------------------------------------------------------- helpers */

int cv_refuse(cv *c, const ph_node *n, const char *fmt, ...)
{
    char why[512], label[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    ph_node_label(n, label, sizeof label);
    return ph_ctx_error(c->ctx, PH_EUNSUPPORTED, "node %s (%s): no faithful conversion from opset %lld to %lld: %s",
                        label, ph_node_op_type(n), (long long)c->from, (long long)c->to, why);
}

int cv_const_scalar(const ph_value *v, double *out)
{
    const ph_tensor *t = ph_value_const_tensor(v);
    if (!t || ph_tensor_numel(t) != 1 || !ph_dtype_is_numeric(ph_tensor_dtype(t)))
        return -1;
    return ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), out) ? -1 : 0;
}

ph_value *cv_ints(ph_node *n, const char *hint, size_t count, const int64_t *vals)
{
    int64_t len = (int64_t)count;
    ph_tensor *t = ph_tensor_new(PH_DT_INT64, 1, &len, vals);
    return t ? ph_graph_add_initializer(ph_node_graph(n), hint, t) : NULL;
}

ph_value *cv_scalar(ph_node *n, const char *hint, int dtype, double v, int one_d)
{
    int64_t one = 1;
    ph_tensor *t = ph_tensor_from_f64(dtype, one_d ? 1 : 0, &one, &v);
    return t ? ph_graph_add_initializer(ph_node_graph(n), hint, t) : NULL;
}

int cv_drop_input(ph_node *n, size_t i)
{
    ph_value *v = ph_node_input(n, i);
    if (i >= ph_node_input_count(n))
        return 0;
    int rc = ph_node_set_input(n, i, NULL);
    for (size_t k = ph_node_input_count(n); rc == 0 && k > 0 && !ph_node_input(n, k - 1); k--)
        rc = ph_node_remove_input(n, k - 1);
    if (v && rc == 0)
        ph_value_prune(v);
    return rc;
}

int cv_set_input(ph_node *n, size_t i, ph_value *v)
{
    int rc = 0;
    while (rc == 0 && ph_node_input_count(n) < i)
        rc = ph_node_set_input(n, ph_node_input_count(n), NULL);
    return rc ? rc : ph_node_set_input(n, i, v);
}

int cv_attr_to_input(cv *c, ph_node *n, const char *attr, size_t i)
{
    const int64_t *vals;
    ptrdiff_t k = ph_node_attr_ints(n, attr, &vals);
    if (k < 0)
        return 0;
    ph_value *v = cv_ints(n, attr, (size_t)k, vals);
    if (!v || cv_set_input(n, i, v) || ph_node_remove_attr(n, attr) < 0)
        return ph_ctx_error(c->ctx, PH_ENOMEM, "out of memory");
    return 1;
}

int cv_input_to_attr(cv *c, ph_node *n, size_t i, const char *attr)
{
    ph_value *v = ph_node_input(n, i);
    int64_t vals[64];
    if (!v)
        return 0;
    ptrdiff_t k = ph_value_const_ints(v, vals, NULL, 64);
    if (k < 0)
        return cv_refuse(c, n, "input %zu ('%s') is computed, and at opset %lld it is the attribute '%s', a constant",
                         i, ph_value_name(v), (long long)c->to, attr);
    if (ph_node_set_attr_ints(n, attr, (size_t)k, vals) || cv_drop_input(n, i))
        return ph_ctx_error(c->ctx, PH_ENOMEM, "out of memory");
    return 1;
}

int cv_drop_default_int(cv *c, ph_node *n, const char *attr, int64_t dflt)
{
    if (ph_node_attr_type(n, attr) == PH_ATTR_NONE)
        return 0;
    if (ph_node_attr_int(n, attr, dflt) != dflt)
        return cv_refuse(c, n, "attribute %s = %lld does not exist at opset %lld", attr,
                         (long long)ph_node_attr_int(n, attr, dflt), (long long)c->to);
    return ph_node_remove_attr(n, attr) < 0 ? PH_ENOMEM : 1;
}

ph_node *cv_keep_outputs(ph_node *n, size_t keep)
{
    size_t nin = ph_node_input_count(n);
    ph_value *in[16];
    if (nin > 16)
        return NULL;
    for (size_t i = 0; i < nin; i++)
        in[i] = ph_node_input(n, i);
    ph_node *copy = ph_node_create(ph_node_graph(n), n, ph_node_op_type(n), nin, in, keep);
    if (!copy || ph_node_copy_attrs(copy, n) || ph_node_set_domain(copy, ph_node_domain(n)))
        return NULL;
    for (size_t o = 0; o < keep; o++) {
        ph_value *old = ph_node_output(n, o);
        if (ph_value_copy_type(ph_node_output(copy, o), old) || ph_value_replace(old, ph_node_output(copy, o)))
            return NULL;
    }
    char name[256];
    snprintf(name, sizeof name, "%s", ph_node_name(n));
    if (ph_node_remove(n) || ph_node_set_name(copy, name))
        return NULL;
    return copy;
}

/* -------------------------------------------- decompositions (rule sets) */

/* y = LayerNormalization(x, s, b): the normalization in primitive
 * operators (the SDK's, shared with decompose_layernorm), times s, plus b. */
static int layernorm(ph_rewriter *rw, const ph_match *m)
{
    ph_node *ln = ph_match_root(m);
    ph_value *x = ph_match_value(m, "x"), *s = ph_match_value(m, "s"), *b = ph_match_value(m, "b");
    int rank = ph_value_rank(x);
    int64_t axis = ph_node_attr_int(ln, "axis", -1);
    axis += axis < 0 ? rank : 0;
    if (rank < 1 || axis < 0 || axis >= rank)
        return 0; /* left for the final check to name */
    ph_value *r = ph_rw_layernorm_normalize(rw, x, rank, (int)axis, ph_node_attr_float(ln, "epsilon", 1e-5f));
    ph_value *in[2] = {r, s};
    r = r ? ph_rw_op(rw, "Mul", 2, in) : NULL;
    if (b && r) {
        in[0] = r, in[1] = b;
        r = ph_rw_op(rw, "Add", 2, in);
    }
    return r ? ph_rw_replace_root(rw, r) : ph_rw_done(rw);
}

/* y = Gelu(x): 0.5 x (1 + erf(x / sqrt 2)), or with approximate = "tanh"
 * 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). */
static int gelu(ph_rewriter *rw, const ph_match *m)
{
    ph_node *g = ph_match_root(m);
    ph_value *x = ph_match_value(m, "x"), *in[2];
    int dt = ph_value_dtype(x);
    int64_t d0[1] = {0};
#define K(v) ph_rw_initializer(rw, "gelu_k", ph_tensor_from_f64(dt, 0, d0, (double[]){v}))
#define OP2(op, a, b) (in[0] = (a), in[1] = (b), in[0] && in[1] ? ph_rw_op(rw, op, 2, in) : NULL)
    ph_value *inner, *half, *one;
    if (!strcmp(ph_node_attr_string(g, "approximate", "none"), "tanh")) {
        ph_value *x2 = OP2("Mul", x, x), *x3 = OP2("Mul", x2, x), *k = K(0.044715);
        ph_value *c3 = OP2("Mul", x3, k), *sum = OP2("Add", x, c3), *s = K(0.7978845608028654);
        ph_value *t = OP2("Mul", sum, s);
        inner = t ? ph_rw_op(rw, "Tanh", 1, &t) : NULL;
    } else {
        ph_value *s = K(0.7071067811865476), *t = OP2("Mul", x, s);
        inner = t ? ph_rw_op(rw, "Erf", 1, &t) : NULL;
    }
    half = K(0.5), one = K(1.0);
    ph_value *hx = OP2("Mul", x, half), *e1 = OP2("Add", inner, one);
    ph_value *r = OP2("Mul", hx, e1);
#undef K
#undef OP2
    return r ? ph_rw_replace_root(rw, r) : ph_rw_done(rw);
}

static const ph_rule layernorm_rules[] = {
    {"layernorm", "y = LayerNormalization(x:float32|double, s, b?)", NULL, layernorm}, {0}};
static const ph_rule gelu_rules[] = {{"gelu", "y = Gelu(x:float32|double|float16)", NULL, gelu}, {0}};

/* GreaterOrEqual and LessOrEqual (12) as the comparison or Equal (exact,
 * NaN included: both are false); Equal takes floats from 11. */
static const ph_rule compare_rules[] = {
    {"greater_or_equal", "y = GreaterOrEqual(a, b)\n=>\ng = Greater(a, b); e = Equal(a, b); y = Or(g, e)", NULL, NULL},
    {"less_or_equal", "y = LessOrEqual(a, b)\n=>\nl = Less(a, b); e = Equal(a, b); y = Or(l, e)", NULL, NULL},
    {0}};
/* HardSwish (14) = x * HardSigmoid(x) with alpha 1/6, beta 0.5. */
static const ph_rule hardswish_rules[] = {
    {"hardswish", "y = HardSwish(x)\n=>\nh = HardSigmoid(x) {alpha=0.16666667, beta=0.5}; y = Mul(x, h)", NULL, NULL},
    {0}};

static int run_rules(const ph_rule *rules, ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    ph_error err = {0};
    ph_ruleset *rs = ph_ruleset_new(rules, &err);
    if (!rs)
        return ph_ctx_error(ctx, err.code ? err.code : PH_ENOMEM, "%s", err.message);
    int rc = ph_ruleset_run(rs, g, p, ctx);
    ph_ruleset_free(rs);
    return rc;
}

/* ------------------------------------------------------------------ walks */

static int adapt_node(ph_node *n, void *user)
{
    cv *c = user;
    if (*ph_node_domain(n) && strcmp(ph_node_domain(n), "ai.onnx"))
        return 0;
    int a = cv_adapt_operands(c, n);
    if (a < 0 || ph_node_is_removed(n))
        return a;
    int b = cv_adapt_resize(c, n);
    if (b < 0 || ph_node_is_removed(n))
        return b < 0 ? b : a + b;
    int s = cv_adapt_semantics(c, n);
    return s < 0 ? s : a + b + s;
}

/* Every default-domain node must exist at the target opset, with no
 * attribute and no more inputs or outputs than its schema there has. */
static int check_node(ph_node *n, void *user)
{
    cv *c = user;
    const char *op = ph_node_op_type(n);
    if (*ph_node_domain(n) && strcmp(ph_node_domain(n), "ai.onnx"))
        return 0;
    const ph_schema *s = ph_schema_find("", op, c->to);
    if (!s || ph_schema_deprecated(s)) {
        const ph_schema *first = ph_schema_first("", op);
        if (!first)
            return 0; /* not an ONNX operator: the loader's business */
        return cv_refuse(c, n, "%s does not exist at opset %lld (it is defined from opset %lld%s)", op,
                         (long long)c->to, (long long)ph_schema_since_version(first),
                         s ? ", deprecated since" : "");
    }
    for (size_t i = 0; i < ph_node_attr_count(n); i++)
        if (ph_schema_attr_find(s, ph_node_attr_name(n, i)) < 0)
            return cv_refuse(c, n, "attribute '%s' does not exist at opset %lld", ph_node_attr_name(n, i),
                             (long long)c->to);
    int lo, hi;
    ph_schema_input_range(s, &lo, &hi);
    if (hi >= 0 && ph_node_input_count(n) > (size_t)hi)
        return cv_refuse(c, n, "%zu inputs, and at opset %lld it takes at most %d", ph_node_input_count(n),
                         (long long)c->to, hi);
    ph_schema_output_range(s, &lo, &hi);
    if (hi >= 0 && ph_node_output_count(n) > (size_t)hi)
        return cv_refuse(c, n, "%zu outputs, and at opset %lld it has at most %d", ph_node_output_count(n),
                         (long long)c->to, hi);
    return 0;
}

/* "LO..HI", "LO..", "..HI" or "V" into *lo and *hi (open ends: 1 and
 * INT64_MAX).  0, or -1 when it is none of these. */
static int parse_range(const char *s, int64_t *lo, int64_t *hi)
{
    char *end;
    const char *dots = strstr(s, "..");
    *lo = 1, *hi = INT64_MAX;
    if (!dots) {
        *lo = *hi = strtoll(s, &end, 10);
        return end != s && !*end && *lo > 0 ? 0 : -1;
    }
    if (dots != s && ((*lo = strtoll(s, &end, 10)) < 1 || end != dots))
        return -1;
    if (dots[2] && ((*hi = strtoll(dots + 2, &end, 10)) < 1 || *end))
        return -1;
    return *lo <= *hi ? 0 : -1;
}

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    const char *range = ph_params_string(p, "opset");
    ph_model *m = ph_graph_model(g);
    int64_t lo, hi, min_known, max_known, from = ph_model_opset(m, "");
    if (!range || !*range || from < 0)
        return 0;
    if (parse_range(range, &lo, &hi))
        return ph_ctx_error(ctx, PH_EINVAL, "opset = '%s' is not an opset range (13, 11..17, 11.. or ..17)", range);
    if (from >= lo && from <= hi)
        return 0;
    cv c = {ctx, from, from < lo ? lo : hi};
    ph_schema_domain_known("", &min_known, &max_known);
    if (c.to > max_known || c.to < 7 || from < 7)
        return ph_ctx_error(ctx, PH_EUNSUPPORTED,
                            "cannot convert the model from opset %lld to %lld: the adapters cover opsets 7 to 21, "
                            "and the operator schemas of this build (ONNX %s) end at opset %lld",
                            (long long)from, (long long)c.to, ph_schema_onnx_version(), (long long)max_known);
    char what[64];
    snprintf(what, sizeof what, "opset %lld -> %lld", (long long)from, (long long)c.to);
    if (!ph_ctx_rewrite_begin(ctx, what))
        return 0;
    int rc = ph_graph_walk(g, adapt_node, &c);
    if (rc >= 0)
        rc = ph_model_set_opset(m, "", c.to);
    if (rc >= 0)
        rc = ph_model_require_ir_version(m, c.to);
    if (rc >= 0 && c.to < 17)
        rc = run_rules(layernorm_rules, g, p, ctx);
    if (rc >= 0 && c.to < 20)
        rc = run_rules(gelu_rules, g, p, ctx);
    if (rc >= 0 && c.to < 14)
        rc = run_rules(hardswish_rules, g, p, ctx);
    if (rc >= 0 && c.to < 12 && c.to >= 11)
        rc = run_rules(compare_rules, g, p, ctx);
    if (rc >= 0)
        rc = ph_graph_walk(g, check_node, &c);
    if (rc < 0)
        return rc;
    ph_log(ctx, PH_LOG_INFO, "converted the default domain from opset %lld to %lld", (long long)from,
           (long long)c.to);
    return 1;
}

static const ph_param_def params[] = {
    {"opset", PH_PARAM_STRING, "",
     "the default-domain opsets the target accepts (13, 11..17, 11.., ..17); empty: no conversion"},
    {NULL, 0, NULL, NULL},
};

static const ph_profile_key keys[] = {{"opset.ai.onnx", "opset"}, {NULL, NULL}};

PH_PASS_DEFINE(
    .name = "convert_opset",
    .summary = "convert the default domain to the opset range of the target (down 17 -> 11, up 11 -> 17)",
    .stages = PH_STAGE_ADAPT,
    .exactness = PH_FP,
    .params = params,
    .run = run,
    .profile_keys = keys)
