/* convert_float16 - the model computes in float16, its inputs and outputs
 * keep their types.
 *
 * GPU deployments store and run models in float16: half the file, half the
 * memory traffic, the tensor cores.  Every float32 weight (initializer,
 * Constant node) and every float32 activation becomes float16, except:
 *   - the main graph's inputs and outputs: a Cast to float16 after an input,
 *     a Cast back to float32 before an output (the output keeps its name);
 *   - the operators of the parameter keep_float32_ops (reductions and
 *     normalizations that overflow or lose precision in float16, shape
 *     computations, operators whose schema has no float16), and operators of
 *     other domains: they read and write float32, with Casts around them;
 *   - the inputs that stay float in every opset (Resize's scales,
 *     Upsample's scales);
 *   - int, bool and float64 values: untouched.
 * Constants beyond float16's range (|v| > 65504, finite) are clamped to
 * +-65504 with a warning naming them.  Casts are never redundant: one Cast
 * per value and direction, shared by all its readers (in bodies too), put
 * in the value's own graph right after it; a Cast back to the type a Cast
 * came from reads the Cast's input instead (no Cast of a Cast, no pair
 * back to back); a constant is converted when it is stored (an initializer
 * in float16, or a float16 copy beside it when a float32 reader needs it)
 * rather than cast at run time.  Operators whose output dtype is an
 * attribute follow: Cast(to = float), ConstantOfShape's value, EyeLike's
 * and the Random operators' dtype.  If/Loop/Scan: the node and its bodies
 * are converted together (a body's float inputs and outputs become
 * float16, as the node's); values a body captures from an outer graph get
 * their Cast in the outer graph.
 *
 * Requires: known dtypes (shape inference: passhost infers them); a node
 *   with an output of unknown dtype is kept as it is.
 * Changes:  the whole model at once (one rewrite); main graph and every
 *   If/Loop/Scan body.  Run once.
 * Exact:    no (approx): float16 rounds at 2^-11; the descriptor's
 *   precision (float16) gives --verify the budget of float16
 *   (docs/verify.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <passhost/passhost.h>

#define F16_MAX 65504.0

typedef struct conv {
    ph_ctx *ctx;
    const char *keep;   /* keep_float32_ops */
    ph_hmap *converted; /* values that were float32 and are float16 now */
    ph_hmap *to16;      /* value -> its float16 twin */
    ph_hmap *to32;      /* value -> its float32 twin */
    int rc;
} conv;

/* ------------------------------------------------------------- deciding */

static int list_has(const char *list, const char *op)
{
    size_t n = strlen(op);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == ',' || *p == ';' || *p == '\t' || *p == '\n')
            p++;
        size_t k = strcspn(p, " ,;\t\n");
        if (k == n && !strncmp(p, op, n))
            return 1;
        p += k;
    }
    return 0;
}

static int is_control(const ph_node *n)
{
    ph_op op = ph_node_op(n);
    return op == PH_OP_If || op == PH_OP_Loop || op == PH_OP_Scan;
}

/* A node that computes in float32 as it is: the block list, other domains,
 * an output of unknown dtype, and a Cast from float16 to float32 (a border
 * Cast, or the model's own widening: its readers read its input). */
static int kept(const conv *c, const ph_node *n)
{
    if (is_control(n))
        return 0;
    if (ph_node_op(n) == PH_OP_Cast && ph_node_attr_int(n, "to", 0) == PH_DT_FLOAT &&
        ph_value_dtype(ph_node_input(n, 0)) == PH_DT_FLOAT16)
        return 1;
    if (ph_node_domain(n)[0] || list_has(c->keep, ph_node_op_type(n)))
        return 1;
    for (size_t i = 0; i < ph_node_output_count(n); i++)
        if (ph_value_dtype(ph_node_output(n, i)) == PH_DT_UNDEFINED && ph_value_use_count(ph_node_output(n, i)))
            return 1;
    return 0;
}

/* Inputs that take any dtype: no Cast for them. */
static int any_dtype_input(const ph_node *n, size_t i)
{
    ph_op op = ph_node_op(n);
    return i == 0 && (op == PH_OP_Cast || op == PH_OP_Shape || op == PH_OP_Size || op == PH_OP_EyeLike);
}

/* Inputs that are float32 in every opset whatever the node computes in. */
static int float_only_input(const ph_node *n, size_t i)
{
    ph_op op = ph_node_op(n);
    return (op == PH_OP_Resize && i == 2) || (op == PH_OP_Upsample && i == 1);
}

/* What input i of n must be: 16, 32, or 0 (as it is). */
static int wants(const conv *c, const ph_node *n, size_t i)
{
    if (any_dtype_input(n, i))
        return 0;
    if (kept(c, n) || float_only_input(n, i))
        return 32;
    return 16;
}

static int mark(conv *c, ph_hmap *map, const ph_value *key, ph_value *val)
{
    if (ph_hmap_put(map, ph_hash_ptr(key), key, val) < 0)
        c->rc = PH_ENOMEM;
    return c->rc;
}

static int was_float32(const conv *c, const ph_value *v)
{
    return ph_hmap_get(c->converted, ph_hash_ptr(v), v) != NULL;
}

/* ------------------------------------------------------------ constants */

/* A float16 copy of float32 tensor t (name for the warning), clamped to
 * float16's range; straight from the floats, no buffer of its own beside
 * the new tensor.  NULL on failure. */
static ph_tensor *half_of(conv *c, const ph_tensor *t, const char *name)
{
    int64_t n = ph_tensor_numel(t);
    const unsigned char *f = ph_tensor_data(t); /* maybe unaligned (the file's bytes) */
    void *data = NULL;
    ph_tensor *h = ph_tensor_new_uninit(PH_DT_FLOAT16, ph_tensor_rank(t), ph_tensor_dims(t), &data);
    if (!h || (n > 0 && !f)) {
        ph_tensor_free(h);
        c->rc = PH_ENOMEM;
        return NULL;
    }
    uint16_t *o = data;
    int64_t clamped = 0;
    double worst = 0;
    for (int64_t k = 0; k < n; k++) {
        float x;
        memcpy(&x, f + (size_t)k * sizeof x, sizeof x);
        double v = x;
        if (isfinite(v) && fabs(v) > F16_MAX) {
            worst = fmax(worst, fabs(v));
            v = v > 0 ? F16_MAX : -F16_MAX;
            clamped++;
        }
        o[k] = ph_f64_to_f16_bits(v);
    }
    if (clamped)
        ph_log(c->ctx, PH_LOG_WARN, "constant '%s': %lld value%s beyond float16's range (largest |v| %g) "
               "clamped to +-65504", name, (long long)clamped, clamped == 1 ? "" : "s", worst);
    return h;
}

/* The float32 constant tensor of v (an initializer, or a Constant node's
 * value), or NULL. */
static const ph_tensor *const_of(const ph_value *v, ph_node **constant)
{
    const ph_tensor *t = ph_value_const_tensor(v);
    *constant = t && !ph_value_const(v) ? ph_value_producer(v) : NULL;
    return t && ph_tensor_dtype(t) == PH_DT_FLOAT ? t : NULL;
}

/* Every reader of v wants float16, and v is no graph output. */
static int all_want16(const conv *c, const ph_value *v)
{
    if (ph_value_graph_output_count(v))
        return 0;
    for (size_t u = 0; u < ph_value_use_count(v); u++) {
        size_t idx;
        const ph_node *n = ph_value_use(v, u, &idx);
        if (wants(c, n, idx) != 16)
            return 0;
    }
    return 1;
}

/* Constant v becomes float16 in place. */
static void convert_const_in_place(conv *c, ph_value *v, const ph_tensor *t, ph_node *constant)
{
    ph_tensor *h = half_of(c, t, ph_value_name(v));
    if (!h)
        return;
    if (constant ? ph_node_set_attr_tensor(constant, "value", h) : ph_value_set_const(v, h)) {
        c->rc = PH_ENOMEM;
        return;
    }
    if (constant)
        ph_value_set_type(v, PH_DT_FLOAT16, (int)ph_tensor_rank(t), ph_tensor_dims(ph_node_attr_tensor(constant, "value")));
    mark(c, c->converted, v, v);
}

/* ---------------------------------------------------------------- casts */

/* Where a node made for v goes: right after its producer, or first in
 * v's graph. */
static ph_node *after(const ph_value *v)
{
    ph_node *p = ph_value_producer(v);
    return p ? ph_node_next(p) : ph_graph_first_node(ph_value_graph(v));
}

/* A reader of v that is already Cast(to). */
static ph_value *existing_cast(const ph_value *v, int to)
{
    for (size_t u = 0; u < ph_value_use_count(v); u++) {
        const ph_node *n = ph_value_use(v, u, NULL);
        if (ph_node_op(n) == PH_OP_Cast && ph_node_graph(n) == ph_value_graph(v) &&
            ph_node_attr_int(n, "to", 0) == to)
            return ph_node_output(n, 0);
    }
    return NULL;
}

static ph_value *new_cast(conv *c, ph_value *v, int to)
{
    ph_value *out = ph_cast_create(ph_value_graph(v), after(v), v, to);
    if (!out)
        c->rc = PH_ENOMEM;
    return out;
}

/* v (float32) as float16, for a reader that wants it. */
static ph_value *as16(conv *c, ph_value *v)
{
    ph_value *t = ph_hmap_get(c->to16, ph_hash_ptr(v), v);
    if (t)
        return t;
    ph_node *constant, *p = ph_value_producer(v);
    const ph_tensor *k = const_of(v, &constant);
    if (k && all_want16(c, v)) {
        convert_const_in_place(c, v, k, constant);
        return v;
    }
    if (k) {
        ph_tensor *h = half_of(c, k, ph_value_name(v));
        t = h ? ph_graph_add_initializer(ph_value_graph(v), ph_value_name(v), h) : NULL;
    } else if (p && ph_node_op(p) == PH_OP_Cast && ph_value_dtype(ph_node_input(p, 0)) == PH_DT_FLOAT16) {
        t = ph_node_input(p, 0); /* Cast(to = float) of a float16: its input */
    } else {
        t = existing_cast(v, PH_DT_FLOAT16);
        if (!t)
            t = new_cast(c, v, PH_DT_FLOAT16);
    }
    if (!t) {
        c->rc = c->rc ? c->rc : PH_ENOMEM;
        return NULL;
    }
    mark(c, c->to16, v, t);
    return t;
}

/* v (float32 made float16) as float32 again, for a reader that wants it. */
static ph_value *as32(conv *c, ph_value *v)
{
    ph_value *t = ph_hmap_get(c->to32, ph_hash_ptr(v), v);
    if (t)
        return t;
    ph_node *p = ph_value_producer(v);
    if (p && ph_node_op(p) == PH_OP_Cast) { /* a Cast made float16 by us: from its source */
        ph_value *src = ph_node_input(p, 0);
        t = ph_value_dtype(src) == PH_DT_FLOAT ? src : existing_cast(src, PH_DT_FLOAT);
        if (!t)
            t = new_cast(c, src, PH_DT_FLOAT);
    } else {
        t = existing_cast(v, PH_DT_FLOAT);
        if (!t)
            t = new_cast(c, v, PH_DT_FLOAT);
    }
    if (!t)
        return NULL;
    mark(c, c->to32, v, t);
    return t;
}

/* Make the output slots that read v read t (a node output of v's graph,
 * no graph input or output) instead, under v's name; v's readers keep v. */
static void retarget_outputs(conv *c, ph_value *v, ph_value *t)
{
    size_t n = ph_value_use_count(v);
    ph_node **nodes = ph_ctx_alloc(c->ctx, (n + 1) * sizeof *nodes);
    size_t *idx = ph_ctx_alloc(c->ctx, (n + 1) * sizeof *idx);
    if (!nodes || !idx) {
        c->rc = PH_ENOMEM;
        return;
    }
    for (size_t u = 0; u < n; u++)
        nodes[u] = ph_value_use(v, 0, &idx[u]), ph_node_set_input(nodes[u], idx[u], NULL);
    if (ph_value_replace(v, t))
        c->rc = PH_EBUSY;
    for (size_t u = 0; u < n; u++)
        ph_node_set_input(nodes[u], idx[u], v);
}

/* ---------------------------------------------------------------- nodes */

/* The attributes that name an output dtype of float32 become float16. */
static void adjust_attrs(conv *c, ph_node *n)
{
    ph_op op = ph_node_op(n);
    if (op == PH_OP_Cast && ph_node_attr_int(n, "to", 0) == PH_DT_FLOAT)
        ph_node_set_attr_int(n, "to", PH_DT_FLOAT16);
    else if (op == PH_OP_ConstantOfShape) {
        const ph_tensor *t = ph_node_attr_tensor(n, "value");
        if (t && ph_tensor_dtype(t) == PH_DT_FLOAT) {
            ph_tensor *h = half_of(c, t, ph_node_name(n));
            if (h)
                ph_node_set_attr_tensor(n, "value", h);
        } else if (!t) { /* the default is a float32 zero */
            int64_t one = 1;
            double zero = 0;
            ph_tensor *h = ph_tensor_from_f64(PH_DT_FLOAT16, 1, &one, &zero);
            if (!h || ph_node_set_attr_tensor(n, "value", h))
                c->rc = PH_ENOMEM;
        }
    } else if (op == PH_OP_EyeLike || op == PH_OP_RandomNormal || op == PH_OP_RandomUniform ||
               op == PH_OP_RandomNormalLike || op == PH_OP_RandomUniformLike || op == PH_OP_Bernoulli) {
        int like = op == PH_OP_EyeLike || op == PH_OP_RandomNormalLike || op == PH_OP_RandomUniformLike ||
                   op == PH_OP_Bernoulli;
        int64_t dt = ph_node_attr_int(n, "dtype", like ? 0 : PH_DT_FLOAT);
        if (dt == PH_DT_FLOAT || (like && dt == 0 && ph_value_dtype(ph_node_output(n, 0)) == PH_DT_FLOAT))
            ph_node_set_attr_int(n, "dtype", PH_DT_FLOAT16);
    }
}

static int convert_graph(conv *c, ph_graph *g, int main_graph);

/* A body of a converted If/Loop/Scan: its float inputs and outputs become
 * float16 with the node's. */
static void convert_body(conv *c, ph_graph *b)
{
    for (size_t i = 0; i < ph_graph_input_count(b); i++) {
        ph_value *v = ph_graph_input(b, i);
        if (ph_value_dtype(v) == PH_DT_FLOAT) {
            ph_value_set_dtype(v, PH_DT_FLOAT16);
            mark(c, c->converted, v, v);
        }
    }
    convert_graph(c, b, 0);
}

static void convert_node(conv *c, ph_node *n)
{
    if (ph_node_op(n) == PH_OP_Constant) { /* converted with its readers (as16) */
        return;
    }
    for (size_t s = 0; is_control(n) && s < ph_node_subgraph_count(n); s++)
        convert_body(c, ph_node_subgraph(n, s));
    for (size_t i = 0; i < ph_node_input_count(n) && !c->rc; i++) {
        ph_value *v = ph_node_input(n, i);
        if (!v)
            continue;
        int w = wants(c, n, i);
        ph_value *t = NULL;
        if (w == 16 && ph_value_dtype(v) == PH_DT_FLOAT)
            t = as16(c, v);
        else if (w == 32 && ph_value_dtype(v) == PH_DT_FLOAT16 && was_float32(c, v))
            t = as32(c, v);
        if (t && t != v) {
            ph_node_set_input(n, i, t);
            if (!ph_value_use_count(v))
                ph_value_prune(v); /* e.g. the model's own Cast(float16 -> float) whose readers read its input now */
        }
    }
    if (kept(c, n) || c->rc)
        return;
    adjust_attrs(c, n);
    for (size_t o = 0; o < ph_node_output_count(n); o++) {
        ph_value *v = ph_node_output(n, o);
        if (ph_value_dtype(v) == PH_DT_FLOAT) {
            ph_value_set_dtype(v, PH_DT_FLOAT16);
            mark(c, c->converted, v, v);
        }
    }
}

static int convert_graph(conv *c, ph_graph *g, int main_graph)
{
    for (ph_node *n = ph_graph_first_node(g), *next; n && !c->rc; n = next) {
        next = ph_node_next(n);
        convert_node(c, n);
    }
    /* the outputs: the main graph's keep float32, a body's are float16 */
    for (size_t i = 0; i < ph_graph_output_count(g) && !c->rc; i++) {
        ph_value *v = ph_graph_output(g, i);
        ph_value *t = NULL;
        if (main_graph && ph_value_dtype(v) == PH_DT_FLOAT16 && was_float32(c, v))
            t = as32(c, v);
        else if (!main_graph && ph_value_dtype(v) == PH_DT_FLOAT)
            t = as16(c, v);
        if (!t || t == v || c->rc)
            continue;
        ph_node *p = ph_value_producer(t);
        if (!p || ph_value_graph(t) != g || ph_value_graph_output_count(t)) { /* an Identity of it in g */
            ph_node *id = ph_node_create(g, NULL, "Identity", 1, &t, 1);
            if (!id) {
                c->rc = PH_ENOMEM;
                break;
            }
            ph_value_copy_type(ph_node_output(id, 0), t);
            t = ph_node_output(id, 0);
        }
        retarget_outputs(c, v, t);
    }
    return c->rc;
}

/* ----------------------------------------------------------------- scan */

/* Anything to convert: a float32 value a converted node computes, or a
 * float32 constant a converted node reads. */
static int has_work(const conv *c, ph_graph *g)
{
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        for (size_t s = 0; s < ph_node_subgraph_count(n); s++)
            if (has_work(c, ph_node_subgraph(n, s)))
                return 1;
        if (ph_node_op(n) == PH_OP_Constant || kept(c, n))
            continue;
        for (size_t o = 0; o < ph_node_output_count(n); o++)
            if (ph_value_dtype(ph_node_output(n, o)) == PH_DT_FLOAT)
                return 1;
        for (size_t i = 0; i < ph_node_input_count(n); i++) {
            const ph_value *v = ph_node_input(n, i);
            if (v && ph_value_dtype(v) == PH_DT_FLOAT && wants(c, n, i) == 16)
                return 1;
        }
    }
    return 0;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    conv c = {.ctx = ctx, .keep = ph_params_string(params, "keep_float32_ops")};
    if (ph_graph_parent(g) || !has_work(&c, g) || !ph_ctx_rewrite_begin(ctx, "the model"))
        return 0;
    c.converted = ph_hmap_new(NULL, NULL);
    c.to16 = ph_hmap_new(NULL, NULL);
    c.to32 = ph_hmap_new(NULL, NULL);
    if (!c.converted || !c.to16 || !c.to32)
        c.rc = PH_ENOMEM;
    if (!c.rc)
        convert_graph(&c, g, 1);
    ph_hmap_free(c.converted);
    ph_hmap_free(c.to16);
    ph_hmap_free(c.to32);
    if (c.rc)
        return ph_ctx_error(ctx, c.rc, "converting to float16: %s", ph_strerror(c.rc));
    return 1;
}

static const ph_param_def params[] = {
    {"keep_float32_ops", PH_PARAM_STRING,
     "ReduceSum, ReduceSumSquare, ReduceMean, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, "
     "CumSum, Softmax, LogSoftmax, LayerNormalization, GroupNormalization, InstanceNormalization, "
     "LpNormalization, MeanVarianceNormalization, Exp, Pow, Range, NonMaxSuppression, RoiAlign, "
     "QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv, QLinearMatMul, Celu",
     "operators kept in float32 (Casts around them): reductions and normalizations that overflow or lose "
     "precision in float16, exponentials, shape computations, operators whose schema has no float16"},
    {NULL, 0, NULL, NULL},
};

PH_PASS_DEFINE(
    .name = "convert_float16",
    .summary = "float32 weights and activations to float16; inputs and outputs keep their types",
    .stages = PH_STAGE_ADAPT,
    .run_once = 1,
    .exactness = PH_APPROX,
    .params = params,
    .run = run,
    .precision = PH_DT_FLOAT16)
