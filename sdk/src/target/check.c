/* sdk/src/target/check.c - a model against a target profile
 * (ph_target_check, target.h): what each constraint measures on a node.
 *
 * One walk over the opset imports, the main graph's inputs and every node
 * of the main graph and of the If/Loop/Scan bodies (a body's nodes before
 * its node).  Each node: its operator is supported; the dtypes and ranks
 * of what it computes; implicit broadcasting of the elementwise
 * operators; two no-instruction operators in a row; the limits of its
 * operator's section.  What is not known (a dtype, a rank, a dim, a
 * non-constant scale) is not checked.  docs/targets.md documents the
 * keys; a key measured here is in profile.c's table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "target/target_internal.h"

typedef struct checker {
    const ph_target *t;
    ph_violation_fn fn;
    void *user;
    int count;
    int rc;
    char path[512]; /* the body being walked: "" or "If_3/then_branch" */
} checker;

static void report(checker *c, const ph_node *n, const char *name, const char *op, const char *key,
                   const char *value, const char *limit)
{
    if (c->rc)
        return;
    ph_violation v = {.node = n, .graph = c->path, .name = name ? name : "", .op = op, .key = key,
                      .value = value, .limit = limit};
    c->count++;
    if (c->fn) {
        int r = c->fn(c->user, &v);
        if (r < 0)
            c->rc = r;
    }
}

/* "Op" or "Op@domain" of n. */
static void op_name(const ph_node *n, char *buf, size_t size)
{
    const char *d = ph_node_domain(n);
    if (d && *d && strcmp(d, "ai.onnx"))
        snprintf(buf, size, "%s@%s", ph_node_op_type(n), d);
    else
        snprintf(buf, size, "%s", ph_node_op_type(n));
}

/* The value of key OP.name when the operator section sets it, else of the
 * [target] key name (for max_rank and dtypes); *which gets the key used. */
static const char *op_or_model(const checker *c, const char *op, const char *name, char *which, size_t size)
{
    snprintf(which, size, "%s.%s", op, name);
    const char *v = ph_target_value(c->t, which);
    if (v)
        return v;
    snprintf(which, size, "%s", name);
    return ph_target_value(c->t, name);
}

static int is_constant(const ph_value *v)
{
    return ph_value_const_tensor(v) != NULL;
}

/* Read a small constant of integers (at most max) into out; its count, or
 * -1 when v is not such a constant. */
static long read_ints(const ph_value *v, int64_t *out, size_t max)
{
    const ph_tensor *t = ph_value_const_tensor(v);
    if (!t || ph_tensor_rank(t) > 1)
        return -1;
    int64_t n = ph_tensor_numel(t);
    if (n < 0 || (size_t)n > max)
        return -1;
    int64_t dims[1] = {n};
    return ph_tensor_read_i64(t, ph_tensor_rank(t), dims, out) ? -1 : (long)n;
}

static long read_floats(const ph_value *v, double *out, size_t max)
{
    const ph_tensor *t = ph_value_const_tensor(v);
    if (!t || ph_tensor_rank(t) > 1)
        return -1;
    int64_t n = ph_tensor_numel(t);
    if (n < 0 || (size_t)n > max)
        return -1;
    int64_t dims[1] = {n};
    return ph_tensor_read_f64(t, ph_tensor_rank(t), dims, out) ? -1 : (long)n;
}

/* The dims of v as text "[1, 3, 224, 224]" ('?' for unknown). */
static void shape_text(const ph_value *v, char *buf, size_t size)
{
    int r = ph_value_rank(v);
    size_t len = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < r && len < size; i++) {
        int64_t d = ph_value_dim(v, i);
        len += (size_t)(d >= 0 ? snprintf(buf + len, size - len, "%s%lld", i ? ", " : "", (long long)d)
                               : snprintf(buf + len, size - len, "%s?", i ? ", " : ""));
    }
    if (len < size)
        snprintf(buf + len, size - len, "]");
}

static int shape_known(const ph_value *v)
{
    int r = ph_value_rank(v);
    if (r < 0)
        return 0;
    for (int i = 0; i < r; i++)
        if (ph_value_dim(v, i) < 0)
            return 0;
    return 1;
}

/* ---------------------------------------------------------- what a node is */

static void check_supported(checker *c, const ph_node *n, const char *op)
{
    if (ph_target_supports_op(c->t, ph_node_domain(n), ph_node_op_type(n)))
        return;
    const char *except = ph_target_value(c->t, "ops_except");
    size_t len = strlen(op);
    if (except && tgt_list_has(except, op, len)) {
        report(c, n, ph_node_name(n), op, "ops_except", op, except);
        return;
    }
    const char *domains = ph_target_value(c->t, "domains"), *ops = ph_target_value(c->t, "ops");
    char limit[512];
    snprintf(limit, sizeof limit, "%s%s%s", domains ? domains : "", domains && ops ? "; " : "", ops ? ops : "");
    report(c, n, ph_node_name(n), op, domains ? "domains" : "ops", op, limit);
}

/* The formal mask of n's actual input (output) k under n's schema; 0 when
 * unknown. */
static uint64_t formal_dtypes(const ph_node *n, size_t k, int output)
{
    const ph_schema *s = ph_schema_find(ph_node_domain(n), ph_node_op_type(n), ph_node_opset(n));
    long f = !s ? -1 : output ? ph_schema_output_formal(s, k) : ph_schema_input_formal(s, k);
    if (f < 0)
        return 0;
    return output ? ph_schema_output_dtypes(s, (size_t)f) : ph_schema_input_dtypes(s, (size_t)f);
}

/* Output k of n has the one dtype the ONNX spec allows there: Shape's,
 * the indices of ArgMax, TopK and NonZero; or n is a Cast to the one dtype
 * every reader of its output must get (an int64 Cast before Reshape's
 * shape): no pass can give it another, and a profile's dtypes does not
 * count it. */
static int dtype_fixed_by_spec(const ph_node *n, size_t k, int dt)
{
    uint64_t only = 1ull << dt;
    if (formal_dtypes(n, k, 1) == only)
        return 1;
    const ph_value *v = ph_node_output(n, k);
    size_t uses = ph_value_use_count(v);
    if (ph_node_op(n) != PH_OP_Cast || !uses || ph_value_graph_output_count(v))
        return 0;
    for (size_t i = 0; i < uses; i++) {
        size_t at;
        const ph_node *u = ph_value_use(v, i, &at);
        if (formal_dtypes(u, at, 0) != only)
            return 0;
    }
    return 1;
}

static void check_value_types(checker *c, const ph_node *n, const char *op)
{
    char dkey[300], rkey[300];
    const char *dtypes = op_or_model(c, op, "dtypes", dkey, sizeof dkey);
    const char *max_rank = op_or_model(c, op, "max_rank", rkey, sizeof rkey);
    int static_shapes = ph_target_constrains(c->t, "static_shapes");
    long long limit = max_rank ? atoll(max_rank) : -1;
    int dtype_done = 0, rank_done = 0, static_done = 0;
    /* what the node computes, and the non-constant values it reads */
    size_t n_out = ph_node_output_count(n), n_in = ph_node_input_count(n);
    for (size_t k = 0; k < n_out + n_in; k++) {
        const ph_value *v = k < n_out ? ph_node_output(n, k) : ph_node_input(n, k - n_out);
        if (!v || (k >= n_out && is_constant(v)))
            continue;
        /* TopK's indices are int64 by definition: TopK.index_dtype, when
         * the profile sets it, is the constraint on them */
        if (k == 1 && ph_node_op(n) == PH_OP_TopK && ph_target_value(c->t, "TopK.index_dtype"))
            continue;
        int dt = ph_value_dtype(v), r = ph_value_rank(v);
        if (k < n_out && dtypes && !dtype_done && dt != PH_DT_UNDEFINED && !dtype_fixed_by_spec(n, k, dt)) {
            const char *name = tgt_dtype_name(dt);
            if (!tgt_list_has(dtypes, name, strlen(name))) {
                report(c, n, ph_node_name(n), op, dkey, name, dtypes);
                dtype_done = 1;
            }
        }
        if (limit >= 0 && !rank_done && r > limit) {
            char value[32];
            snprintf(value, sizeof value, "%d", r);
            report(c, n, ph_node_name(n), op, rkey, value, max_rank);
            rank_done = 1;
        }
        if (static_shapes && k < n_out && !static_done && !shape_known(v)) {
            char value[300];
            shape_text(v, value, sizeof value);
            report(c, n, ph_node_name(n), op, "static_shapes", r < 0 ? "unknown rank" : value, "true");
            static_done = 1;
        }
    }
}

/* The elementwise operators that broadcast their inputs (numpy rules). */
static int broadcasts(ph_op op)
{
    switch (op) {
    case PH_OP_Add: case PH_OP_Sub: case PH_OP_Mul: case PH_OP_Div: case PH_OP_Pow: case PH_OP_Mod:
    case PH_OP_Equal: case PH_OP_Less: case PH_OP_LessOrEqual: case PH_OP_Greater: case PH_OP_GreaterOrEqual:
    case PH_OP_And: case PH_OP_Or: case PH_OP_Xor: case PH_OP_Where: case PH_OP_Max: case PH_OP_Min:
    case PH_OP_Sum: case PH_OP_Mean: case PH_OP_PRelu: case PH_OP_BitShift:
        return 1;
    default:
        return 0;
    }
}

static void check_broadcast(checker *c, const ph_node *n, const char *op)
{
    const char *mode = ph_target_value(c->t, "broadcast");
    if (!mode || !strcmp(mode, "yes") || !broadcasts(ph_node_op(n)))
        return;
    int same_rank = !strcmp(mode, "same_rank");
    const ph_value *first = NULL;
    for (size_t i = 0; i < ph_node_input_count(n); i++) {
        const ph_value *v = ph_node_input(n, i);
        if (!v)
            continue;
        if (!first) {
            first = v;
            continue;
        }
        int r0 = ph_value_rank(first), r1 = ph_value_rank(v);
        if (r0 < 0 || r1 < 0)
            continue;
        int differ = r0 != r1;
        if (!same_rank && !differ)
            for (int d = 0; d < r0 && !differ; d++) {
                int64_t a = ph_value_dim(first, d), b = ph_value_dim(v, d);
                differ = a >= 0 && b >= 0 && a != b;
            }
        if (differ) {
            char a[200], b[200], value[420];
            shape_text(first, a, sizeof a);
            shape_text(v, b, sizeof b);
            snprintf(value, sizeof value, "%s with %s", a, b);
            report(c, n, ph_node_name(n), op, "broadcast", value, mode);
            return;
        }
    }
}

static void check_noop(checker *c, const ph_node *n, const char *op)
{
    const char *noop = ph_target_value(c->t, "noop_ops");
    if (!noop || !*noop || !tgt_list_has(noop, op, strlen(op)) || !ph_node_input_count(n))
        return;
    const ph_node *p = ph_value_producer(ph_node_input(n, 0));
    if (!p)
        return;
    char pop[200];
    op_name(p, pop, sizeof pop);
    if (!tgt_list_has(noop, pop, strlen(pop)))
        return;
    char value[300];
    snprintf(value, sizeof value, "after %s %s", pop, ph_node_name(p));
    report(c, n, ph_node_name(n), op, "noop_ops", value, noop);
}

/* ------------------------------------------------------ per-operator limits */

/* A limit op.key of the profile, or -1. */
static long long limit_of(const checker *c, const char *op, const char *key)
{
    char dotted[300];
    snprintf(dotted, sizeof dotted, "%s.%s", op, key);
    const char *v = ph_target_value(c->t, dotted);
    return v ? atoll(v) : -1;
}

static void over(checker *c, const ph_node *n, const char *op, const char *key, long long value, long long limit)
{
    if (limit < 0 || value <= limit)
        return;
    char dotted[300], v[32], l[32];
    snprintf(dotted, sizeof dotted, "%s.%s", op, key);
    snprintf(v, sizeof v, "%lld", value);
    snprintf(l, sizeof l, "%lld", limit);
    report(c, n, ph_node_name(n), op, dotted, v, l);
}

static long long ints_max(const ph_node *n, const char *attr, long long dflt)
{
    const int64_t *vals = NULL;
    ptrdiff_t k = ph_node_attr_ints(n, attr, &vals);
    long long m = k > 0 ? vals[0] : dflt;
    for (ptrdiff_t i = 1; i < k; i++)
        if (vals[i] > m)
            m = vals[i];
    return m;
}

static int is_window_op(ph_op op)
{
    return op == PH_OP_Conv || op == PH_OP_ConvTranspose || op == PH_OP_ConvInteger || op == PH_OP_QLinearConv ||
           op == PH_OP_MaxPool || op == PH_OP_AveragePool || op == PH_OP_LpPool;
}

static void check_window(checker *c, const ph_node *n, const char *op)
{
    ph_op o = ph_node_op(n);
    /* auto_pad = no: the pads must be written out */
    const char *ap = ph_node_attr_string(n, "auto_pad", "NOTSET");
    if (ph_target_constrains(c->t, "auto_pad") && strcmp(ap, "NOTSET"))
        report(c, n, ph_node_name(n), op, "auto_pad", ap, "no");
    /* kernel: the attribute, else the weight's spatial dims */
    int64_t kernel[16];
    size_t k = 0;
    const int64_t *ks = NULL;
    ptrdiff_t nk = ph_node_attr_ints(n, "kernel_shape", &ks);
    if (nk > 0) {
        for (ptrdiff_t i = 0; i < nk && k < 16; i++)
            kernel[k++] = ks[i];
    } else if (o != PH_OP_MaxPool && o != PH_OP_AveragePool && o != PH_OP_LpPool) {
        const ph_value *w = ph_node_input(n, o == PH_OP_QLinearConv ? 3 : 1);
        int r = w ? ph_value_rank(w) : -1;
        for (int i = 2; i < r && k < 16; i++) {
            int64_t d = ph_value_dim(w, i);
            if (d < 0) {
                k = 0;
                break;
            }
            kernel[k++] = d;
        }
    }
    /* the area the kernel spans: ((k - 1) * dilation + 1) per axis */
    const int64_t *dil = NULL;
    ptrdiff_t nd = ph_node_attr_ints(n, "dilations", &dil);
    long long kmax = 0, area = 1;
    for (size_t i = 0; i < k; i++) {
        if (kernel[i] > kmax)
            kmax = kernel[i];
        area *= (kernel[i] - 1) * ((ptrdiff_t)i < nd && dil[i] > 0 ? dil[i] : 1) + 1;
    }
    if (k) {
        over(c, n, op, "max_kernel", kmax, limit_of(c, op, "max_kernel"));
        over(c, n, op, "max_kernel_area", area, limit_of(c, op, "max_kernel_area"));
    }
    over(c, n, op, "max_stride", ints_max(n, "strides", 1), limit_of(c, op, "max_stride"));
    over(c, n, op, "max_pad", ints_max(n, "pads", 0), limit_of(c, op, "max_pad"));
    if (o != PH_OP_AveragePool && o != PH_OP_LpPool)
        over(c, n, op, "max_dilation", ints_max(n, "dilations", 1), limit_of(c, op, "max_dilation"));
    if (o == PH_OP_AveragePool) {
        const char *v = ph_target_value(c->t, "AveragePool.count_include_pad");
        int have = ph_node_attr_int(n, "count_include_pad", 0) != 0;
        if (v && have != !strcmp(v, "true"))
            report(c, n, ph_node_name(n), op, "AveragePool.count_include_pad", have ? "true" : "false", v);
    }
}

/* The largest scale of a Resize/Upsample, or -1 when not known. */
static double resize_scale(const ph_node *n)
{
    double s[16];
    long k = -1;
    const float *fs = NULL;
    ptrdiff_t na = ph_node_attr_floats(n, "scales", &fs);
    if (na > 0) {
        k = na < 16 ? na : 16;
        for (long i = 0; i < k; i++)
            s[i] = fs[i];
    } else if (ph_node_op(n) == PH_OP_Upsample) {
        k = read_floats(ph_node_input(n, 1), s, 16);
    } else {
        size_t n_in = ph_node_input_count(n);
        if (n_in > 2 && ph_node_input(n, 2))
            k = read_floats(ph_node_input(n, 2), s, 16);
        if (k <= 0 && n_in > 3 && ph_node_input(n, 3)) {
            int64_t sizes[16];
            long m = read_ints(ph_node_input(n, 3), sizes, 16);
            const ph_value *x = ph_node_input(n, 0);
            const int64_t *axes = NULL;
            ptrdiff_t n_axes = ph_node_attr_ints(n, "axes", &axes);
            k = -1;
            if (m > 0 && x) {
                k = m;
                for (long i = 0; i < m; i++) {
                    int axis = n_axes == m ? (int)axes[i] : (int)i;
                    if (axis < 0)
                        axis += ph_value_rank(x);
                    int64_t d = ph_value_dim(x, axis);
                    if (d <= 0)
                        return -1;
                    s[i] = (double)sizes[i] / (double)d;
                }
            }
        }
    }
    if (k <= 0)
        return -1;
    double m = s[0];
    for (long i = 1; i < k; i++)
        if (s[i] > m)
            m = s[i];
    return m;
}

static void check_resize(checker *c, const ph_node *n, const char *op)
{
    long long limit = limit_of(c, op, "max_scale");
    if (limit >= 0) {
        double s = resize_scale(n);
        if (s > (double)limit) {
            char dotted[300], v[32], l[32];
            snprintf(dotted, sizeof dotted, "%s.max_scale", op);
            snprintf(v, sizeof v, "%g", s);
            snprintf(l, sizeof l, "%lld", limit);
            report(c, n, ph_node_name(n), op, dotted, v, l);
        }
    }
    char dotted[300];
    snprintf(dotted, sizeof dotted, "%s.modes", op);
    const char *modes = ph_target_value(c->t, dotted);
    const char *mode = ph_node_attr_string(n, "mode", "nearest");
    if (modes && !tgt_list_has(modes, mode, strlen(mode)))
        report(c, n, ph_node_name(n), op, dotted, mode, modes);
    const char *ctms = ph_target_value(c->t, "Resize.coordinate_transformation_modes");
    const char *ctm = ph_node_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    if (ph_node_op(n) == PH_OP_Resize && ctms && !tgt_list_has(ctms, ctm, strlen(ctm)))
        report(c, n, ph_node_name(n), op, "Resize.coordinate_transformation_modes", ctm, ctms);
}

static void check_split(checker *c, const ph_node *n, const char *op)
{
    const char *axes = ph_target_value(c->t, "Split.axes");
    if (!axes)
        return;
    long long axis = ph_node_attr_int(n, "axis", 0);
    int r = ph_value_rank(ph_node_input(n, 0));
    char pos[32], neg[32];
    snprintf(pos, sizeof pos, "%lld", axis < 0 && r > 0 ? axis + r : axis);
    snprintf(neg, sizeof neg, "%lld", axis >= 0 && r > 0 ? axis - r : axis);
    if (tgt_list_has(axes, pos, strlen(pos)) || tgt_list_has(axes, neg, strlen(neg)))
        return;
    report(c, n, ph_node_name(n), op, "Split.axes", pos, axes);
}

static void check_expand(checker *c, const ph_node *n, const char *op)
{
    long long limit = limit_of(c, "Expand", "max_broadcast_dims");
    const ph_value *x = ph_node_input(n, 0), *y = ph_node_output(n, 0);
    if (limit < 0 || !x || !y || ph_value_rank(x) < 0 || ph_value_rank(y) < 0)
        return;
    int rx = ph_value_rank(x), ry = ph_value_rank(y);
    long long count = 0;
    for (int i = 0; i < ry; i++) {
        int j = i - (ry - rx);
        int64_t dy = ph_value_dim(y, i), dx = j >= 0 ? ph_value_dim(x, j) : 1;
        if (dy < 0 || dx < 0)
            return;
        count += dx != dy;
    }
    over(c, n, op, "max_broadcast_dims", count, limit);
}

static void check_topk(checker *c, const ph_node *n, const char *op)
{
    const char *want = ph_target_value(c->t, "TopK.index_dtype");
    if (!want || !strcmp(want, "int64") || ph_node_output_count(n) < 2)
        return;
    const ph_value *idx = ph_node_output(n, 1);
    if (!idx)
        return;
    int dt = tgt_dtype(want, strlen(want));
    /* fixed: every use of the indices is a Cast to the target's dtype */
    int fixed = ph_value_graph_output_count(idx) == 0;
    for (size_t i = 0; i < ph_value_use_count(idx) && fixed; i++) {
        const ph_node *u = ph_value_use(idx, i, NULL);
        fixed = ph_node_op(u) == PH_OP_Cast && ph_node_attr_int(u, "to", 0) == dt;
    }
    if (!fixed && (ph_value_use_count(idx) || ph_value_graph_output_count(idx)))
        report(c, n, ph_node_name(n), op, "TopK.index_dtype", "int64", want);
}

/* ------------------------------------------------------------------ walk */

static void check_graph(checker *c, ph_graph *g);

static void check_node(checker *c, ph_node *n)
{
    char op[200];
    op_name(n, op, sizeof op);
    /* bodies first, with their path */
    for (size_t i = 0; i < ph_node_attr_count(n) && !c->rc; i++) {
        const char *attr = ph_node_attr_name(n, i);
        if (ph_node_attr_type(n, attr) != PH_ATTR_GRAPH)
            continue;
        ph_graph *body = ph_node_attr_graph(n, attr);
        if (!body)
            continue;
        size_t len = strlen(c->path);
        const char *nm = *ph_node_name(n) ? ph_node_name(n) : ph_node_op_type(n);
        snprintf(c->path + len, sizeof c->path - len, "%s%s/%s", len ? "/" : "", nm, attr);
        check_graph(c, body);
        c->path[len] = '\0';
    }
    if (ph_node_op(n) == PH_OP_Constant)
        return; /* a value the target gets at compile time */
    check_supported(c, n, op);
    check_value_types(c, n, op);
    check_broadcast(c, n, op);
    check_noop(c, n, op);
    ph_op o = ph_node_op(n);
    const char *dom = ph_node_domain(n);
    if (dom && *dom && strcmp(dom, "ai.onnx"))
        return; /* the limits below are those of the default domain's operators */
    if (is_window_op(o))
        check_window(c, n, op);
    else if (o == PH_OP_Resize || o == PH_OP_Upsample)
        check_resize(c, n, op);
    else if (o == PH_OP_Split)
        check_split(c, n, op);
    else if (o == PH_OP_Expand)
        check_expand(c, n, op);
    else if (o == PH_OP_TopK)
        check_topk(c, n, op);
}

static void check_graph(checker *c, ph_graph *g)
{
    for (ph_node *n = ph_graph_first_node(g); n && !c->rc; n = ph_node_next(n))
        check_node(c, n);
}

static void check_opsets(checker *c, ph_model *m)
{
    for (size_t i = 0; i < ph_target_count(c->t); i++) {
        const char *key = ph_target_key_at(c->t, i);
        if (strncmp(key, "opset.", 6))
            continue;
        const char *domain = key + 6, *range = ph_target_value(c->t, key);
        int64_t have = ph_model_opset(m, !strcmp(domain, "ai.onnx") ? "" : domain);
        if (have < 0)
            continue;
        long long lo = 0, hi = 0;
        const char *dots = strstr(range, "..");
        lo = atoll(range);
        hi = dots && dots[2] ? atoll(dots + 2) : 0;
        if ((lo && have < lo) || (hi && have > hi)) {
            char v[32];
            snprintf(v, sizeof v, "%lld", (long long)have);
            report(c, NULL, "", "(model)", key, v, range);
        }
    }
}

static void check_inputs(checker *c, ph_graph *g)
{
    const char *dtypes = ph_target_value(c->t, "dtypes"), *max_rank = ph_target_value(c->t, "max_rank");
    for (size_t i = 0; i < ph_graph_input_count(g); i++) {
        const ph_value *v = ph_graph_input(g, i);
        if (ph_value_is_initializer(v))
            continue;
        int dt = ph_value_dtype(v), r = ph_value_rank(v);
        if (dtypes && dt != PH_DT_UNDEFINED) {
            const char *name = tgt_dtype_name(dt);
            if (!tgt_list_has(dtypes, name, strlen(name)))
                report(c, NULL, ph_value_name(v), "(input)", "dtypes", name, dtypes);
        }
        if (max_rank && r > atoll(max_rank)) {
            char value[32];
            snprintf(value, sizeof value, "%d", r);
            report(c, NULL, ph_value_name(v), "(input)", "max_rank", value, max_rank);
        }
    }
}

PH_API int ph_target_check(const ph_target *t, ph_model *m, ph_violation_fn fn, void *user)
{
    if (!t || !m)
        return PH_EINVAL;
    checker c = {.t = t, .fn = fn, .user = user};
    check_opsets(&c, m);
    check_inputs(&c, ph_model_graph(m));
    check_graph(&c, ph_model_graph(m));
    return c.rc ? c.rc : c.count;
}
