/* type_cast_narrow - what a model computes in int64 computed in int32, and
 * what it computes in float64 in float32, with Casts at the borders.
 *
 * msit's KnowledgeTypeCast (seed 000): models compute in int64 (shape
 * arithmetic, indices) and float64 where inference needs neither; a target
 * without those dtypes (a profile whose dtypes, or an operator's, leave
 * int64 or float64 out) gets the subgraph in the narrow dtype, with a Cast
 * before each input that comes from outside it and after each output that
 * leaves it.
 *
 * Which node computes in which dtype is read from the ONNX schemas
 * (passhost/schema.h), not from a list of operators: at a node, the
 * inputs and outputs of one type variable ("T") whose allowed dtypes hold
 * both the wide and the narrow one, all of the wide dtype (known), are a
 * GROUP; a group with an output computes, one of inputs only (Gather's
 * indices, a comparison's operands, a Cast's input) reads.
 *
 * Requires: a default-domain (or another ONNX domain's) node without
 *   bodies; a group as above; the wide dtype not allowed for the node's
 *   operator by the profile (OP.dtypes, else dtypes; no profile: the
 *   parameters int64 and float64 say).  A Cast computes when its `to` is
 *   the wide dtype and its input is not of the narrow one (that Cast is a
 *   border); a ConstantOfShape when its value fits; any other node whose
 *   output dtype an attribute gives (to, dtype, value) does not.
 * Changes:  the computing groups joined by the values they share are a
 *   subgraph; one whose constants all fit the narrow dtype is narrowed
 *   (else it stays, with a warning naming the constant): its nodes are
 *   rebuilt with narrow outputs, its constants narrowed (new initializers).
 *   A reading group is narrowed when one of its values is computed narrow.
 *   Borders: a wide value read narrow goes through Cast(narrow) after its
 *   producer (graph inputs, Shape, ArgMax/TopK/NonZero indices: outputs
 *   the spec fixes to int64); a narrow value read wide (an input the spec
 *   fixes to int64: Reshape's shape, Expand's shape, Tile's repeats, TopK's
 *   K...; a node that is not narrowed; a graph output, which keeps its
 *   name and dtype) through Cast(wide).  One rewrite per node changed.
 *   Main graph and every If/Loop/Scan body (a body's inputs and outputs
 *   keep their dtypes; a value of an enclosing graph is cast in its own).
 * Exact:    no (approx): an int64 result outside int32's range wraps, a
 *   float64 one is rounded to float32.
 */
#include <float.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_GROUPS 8

/* One narrowing: wide -> narrow. */
typedef struct narrowing {
    int wide, narrow;
    const char *param; /* the parameter that allows it without a profile */
} narrowing;

static const narrowing narrowings[] = {
    {PH_DT_INT64, PH_DT_INT32, "int64"},
    {PH_DT_DOUBLE, PH_DT_FLOAT, "float64"},
};

/* What the analysis decided for one node (for one narrowing). */
typedef struct node_plan {
    size_t n_in, n_out;
    signed char *in_group, *out_group; /* group index per actual input/output, -1 none */
    int n_groups;
    const char *type[MAX_GROUPS];
    int computes[MAX_GROUPS]; /* the group has an output */
    int narrow[MAX_GROUPS];   /* decided: narrowed */
    long set[MAX_GROUPS];     /* a computing group's union-find set */
} node_plan;

typedef struct run_state {
    ph_ctx *ctx;
    const ph_params *params;
    const narrowing *nw;
    ph_hmap *plans;    /* node -> node_plan */
    ph_hmap *index;    /* value -> 1 + union-find index */
    size_t *parent;
    char *bad;         /* per union-find root: a constant does not fit */
    size_t n_sets, cap_sets;
    ph_hmap *narrowed; /* wide value -> its narrow version */
    ph_value **prune;  /* values to prune at the end */
    size_t n_prune, cap_prune;
    int rewrites, stopped;
} run_state;

/* ------------------------------------------------------------- constants */

/* t in the narrow dtype, or NULL when an element does not fit (or OOM). */
static ph_tensor *narrow_tensor(const ph_tensor *t, const narrowing *nw)
{
    const void *src = ph_tensor_data(t);
    int64_t n = ph_tensor_numel(t);
    if (!src || n < 0 || ph_tensor_dtype(t) != nw->wide)
        return NULL;
    void *dst;
    ph_tensor *out = ph_tensor_new_uninit(nw->narrow, ph_tensor_rank(t), ph_tensor_dims(t), &dst);
    if (!out)
        return NULL;
    for (int64_t i = 0; i < n; i++) {
        if (nw->wide == PH_DT_INT64) {
            int64_t v;
            memcpy(&v, (const char *)src + i * 8, 8);
            if (v < INT32_MIN || v > INT32_MAX) {
                ph_tensor_free(out);
                return NULL;
            }
            int32_t w = (int32_t)v;
            memcpy((char *)dst + i * 4, &w, 4);
        } else {
            double v;
            memcpy(&v, (const char *)src + i * 8, 8);
            if (v == v && (v > FLT_MAX || v < -FLT_MAX) && v - v == 0) { /* finite, beyond float */
                ph_tensor_free(out);
                return NULL;
            }
            float w = (float)v;
            memcpy((char *)dst + i * 4, &w, 4);
        }
    }
    return out;
}

/* ------------------------------------------------------------- union-find */

static long set_of(run_state *st, const ph_value *v, int create)
{
    int created = 0;
    uint64_t h = ph_hash_ptr(v);
    if (!create) {
        void *got = ph_hmap_get(st->index, h, v);
        return got ? (long)((uintptr_t)got - 1) : -1;
    }
    void **slot = ph_hmap_slot(st->index, h, v, &created);
    if (!slot)
        return -1;
    if (!created)
        return (long)((uintptr_t)*slot - 1);
    if (st->n_sets == st->cap_sets) {
        size_t cap = st->cap_sets ? 2 * st->cap_sets : 64;
        size_t *p = realloc(st->parent, cap * sizeof *p);
        char *b = p ? realloc(st->bad, cap) : NULL;
        if (p)
            st->parent = p;
        if (!b)
            return -1;
        st->bad = b;
        st->cap_sets = cap;
    }
    st->parent[st->n_sets] = st->n_sets;
    st->bad[st->n_sets] = 0;
    *slot = (void *)(uintptr_t)(st->n_sets + 1);
    return (long)st->n_sets++;
}

static size_t find(run_state *st, size_t i)
{
    while (st->parent[i] != i)
        i = st->parent[i] = st->parent[st->parent[i]];
    return i;
}

/* ------------------------------------------------------------- analysis */

/* The wide dtype is not allowed for n's operator (the profile), or there
 * is no profile and the parameter allows the narrowing. */
static int wide_refused(const run_state *st, const ph_node *n)
{
    if (!ph_params_bool(st->params, st->nw->param))
        return 0;
    const ph_target *t = ph_ctx_profile(st->ctx);
    if (!t)
        return 1;
    char key[300];
    const char *d = ph_node_domain(n);
    if (d && *d && strcmp(d, "ai.onnx"))
        snprintf(key, sizeof key, "%s@%s.dtypes", ph_node_op_type(n), d);
    else
        snprintf(key, sizeof key, "%s.dtypes", ph_node_op_type(n));
    const char *list = ph_target_value(t, key);
    if (!list)
        list = ph_target_value(t, "dtypes");
    if (!list)
        return 0;
    const char *name = st->nw->wide == PH_DT_INT64 ? "int64" : "float64";
    return !ph_target_list_has(list, name);
}

static int group_of(node_plan *p, const char *type)
{
    for (int g = 0; g < p->n_groups; g++)
        if (!strcmp(p->type[g], type))
            return g;
    if (p->n_groups == MAX_GROUPS)
        return -1;
    p->type[p->n_groups] = type;
    return p->n_groups++;
}

/* The node's output dtype comes from an attribute it would need changed. */
static int dtype_from_attr(const ph_node *n)
{
    ph_op op = ph_node_op(n);
    if (op == PH_OP_Cast || op == PH_OP_ConstantOfShape)
        return 0;
    return ph_node_attr_type(n, "to") != PH_ATTR_NONE || ph_node_attr_type(n, "dtype") != PH_ATTR_NONE ||
           ph_node_attr_type(n, "value") != PH_ATTR_NONE || op == PH_OP_Constant;
}

/* Whether a computing group of n may be narrowed (beyond its values'
 * dtypes): Cast and ConstantOfShape's attributes. */
static int output_narrowable(const run_state *st, const ph_node *n)
{
    ph_op op = ph_node_op(n);
    if (dtype_from_attr(n))
        return 0;
    if (op == PH_OP_Cast) {
        const ph_value *x = ph_node_input(n, 0);
        return ph_node_attr_int(n, "to", 0) == st->nw->wide && x && ph_value_dtype(x) != st->nw->narrow &&
               ph_value_dtype(x) != PH_DT_UNDEFINED;
    }
    if (op == PH_OP_ConstantOfShape) {
        const ph_tensor *t = ph_node_attr_tensor(n, "value");
        ph_tensor *c = t ? narrow_tensor(t, st->nw) : NULL;
        ph_tensor_free(c);
        return c != NULL;
    }
    return 1;
}

static int plan_node(ph_node *n, void *user)
{
    run_state *st = user;
    if (ph_node_subgraph_count(n) || !wide_refused(st, n))
        return 0;
    const ph_schema *s = ph_schema_find(ph_node_domain(n), ph_node_op_type(n), ph_node_opset(n));
    if (!s)
        return 0;
    size_t n_in = ph_node_input_count(n), n_out = ph_node_output_count(n);
    node_plan *p = ph_ctx_alloc(st->ctx, sizeof *p + n_in + n_out);
    if (!p)
        return PH_ENOMEM;
    p->n_in = n_in;
    p->n_out = n_out;
    p->in_group = (signed char *)(p + 1);
    p->out_group = p->in_group + n_in;
    uint64_t both = (1ull << st->nw->wide) | (1ull << st->nw->narrow);
    int ok[MAX_GROUPS] = {0}, seen[MAX_GROUPS] = {0};
    for (size_t k = 0; k < n_in + n_out; k++) {
        int out = k >= n_in;
        size_t i = out ? k - n_in : k;
        long f = out ? ph_schema_output_formal(s, i) : ph_schema_input_formal(s, i);
        signed char *slot = out ? &p->out_group[i] : &p->in_group[i];
        *slot = -1;
        if (f < 0)
            continue;
        uint64_t mask = out ? ph_schema_output_dtypes(s, (size_t)f) : ph_schema_input_dtypes(s, (size_t)f);
        const char *type = out ? ph_schema_output_type(s, (size_t)f) : ph_schema_input_type(s, (size_t)f);
        if ((mask & both) != both)
            continue;
        int g = group_of(p, type);
        if (g < 0)
            continue;
        *slot = (signed char)g;
        const ph_value *v = out ? ph_node_output(n, i) : ph_node_input(n, i);
        if (!v)
            continue;
        if (!seen[g])
            ok[g] = 1;
        seen[g] = 1;
        ok[g] &= ph_value_dtype(v) == st->nw->wide;
        p->computes[g] |= out;
    }
    int any = 0;
    for (int g = 0; g < p->n_groups; g++) {
        p->narrow[g] = seen[g] && ok[g] && (!p->computes[g] || output_narrowable(st, n));
        any |= p->narrow[g];
    }
    if (!any)
        return 0;
    /* join each computing group's outputs and the inputs computed by
     * another computing group: the subgraph (a value from outside, a
     * border, joins nothing) */
    for (int g = 0; g < p->n_groups; g++) {
        if (!p->narrow[g] || !p->computes[g])
            continue;
        long root = -1;
        for (size_t k = n_in + n_out; k-- > 0;) {
            int out = k >= n_in;
            size_t i = out ? k - n_in : k;
            const ph_value *v = out ? ph_node_output(n, i) : ph_node_input(n, i);
            if (!v || (out ? p->out_group[i] : p->in_group[i]) != g)
                continue;
            if (!out && set_of(st, v, 0) < 0)
                continue; /* not computed by a computing group */
            long set = set_of(st, v, 1);
            if (set < 0)
                return PH_ENOMEM;
            if (root < 0)
                root = set;
            else
                st->parent[find(st, (size_t)set)] = find(st, (size_t)root);
        }
        p->set[g] = root;
    }
    return ph_hmap_put(st->plans, ph_hash_ptr(n), n, p) ? PH_ENOMEM : 0;
}

/* A constant of a computing group that does not fit spoils its subgraph. */
static void mark_unfit(run_state *st, ph_node *n, node_plan *p)
{
    for (size_t i = 0; i < p->n_in; i++) {
        const ph_value *v = ph_node_input(n, i);
        int g = p->in_group[i];
        if (!v || g < 0 || !p->narrow[g] || !p->computes[g] || p->set[g] < 0)
            continue;
        const ph_tensor *t = ph_value_const_tensor(v);
        if (!t)
            continue;
        ph_tensor *c = narrow_tensor(t, st->nw);
        if (c) {
            ph_tensor_free(c);
            continue;
        }
        size_t root = find(st, (size_t)p->set[g]);
        if (!st->bad[root])
            ph_log(st->ctx, PH_LOG_WARN, "constant %s does not fit %s: its %s subgraph stays %s",
                   ph_value_name(v), ph_dtype_name(st->nw->narrow), ph_dtype_name(st->nw->wide),
                   ph_dtype_name(st->nw->wide));
        st->bad[root] = 1;
    }
}

/* The computing groups of a spoiled subgraph stay wide. */
static void apply_unfit(run_state *st, ph_node *n, node_plan *p)
{
    (void)n;
    for (int g = 0; g < p->n_groups; g++)
        if (p->narrow[g] && p->computes[g] && p->set[g] >= 0 && st->bad[find(st, (size_t)p->set[g])])
            p->narrow[g] = 0;
}

/* Whether v is computed narrow: its producer's group for it is narrowed. */
static int computed_narrow(const run_state *st, const ph_value *v)
{
    ph_node *prod = ph_value_producer(v);
    node_plan *pp = prod ? ph_hmap_get(st->plans, ph_hash_ptr(prod), prod) : NULL;
    if (!pp)
        return 0;
    int g = pp->out_group[ph_value_producer_index(v)];
    return g >= 0 && pp->narrow[g];
}

/* A reading group is narrowed when one of its values is computed narrow
 * and its constants fit. */
static void decide_readers(run_state *st, ph_node *n, node_plan *p)
{
    for (int g = 0; g < p->n_groups; g++) {
        if (!p->narrow[g] || p->computes[g])
            continue;
        int any = 0, fit = 1;
        for (size_t i = 0; i < p->n_in; i++) {
            const ph_value *v = ph_node_input(n, i);
            if (!v || p->in_group[i] != g)
                continue;
            any |= computed_narrow(st, v);
            const ph_tensor *t = ph_value_const_tensor(v);
            ph_tensor *c = t ? narrow_tensor(t, st->nw) : NULL;
            fit &= !t || c;
            ph_tensor_free(c);
        }
        p->narrow[g] = any && fit;
    }
}

/* ------------------------------------------------------------- rewriting */

static int remember_prune(run_state *st, ph_value *v)
{
    if (st->n_prune == st->cap_prune) {
        size_t cap = st->cap_prune ? 2 * st->cap_prune : 32;
        ph_value **p = realloc(st->prune, cap * sizeof *p);
        if (!p)
            return PH_ENOMEM;
        st->prune = p;
        st->cap_prune = cap;
    }
    st->prune[st->n_prune++] = v;
    return 0;
}

/* The node of v's graph that is `n` or holds n in one of its bodies. */
static ph_node *ancestor_in(ph_node *n, const ph_graph *g)
{
    while (n && ph_node_graph(n) != g)
        n = ph_graph_parent(ph_node_graph(n));
    return n;
}

/* The narrow version of wide value v, read by node `reader`: the narrow
 * output it was rebuilt as, a narrowed constant, or a Cast after it. */
static ph_value *narrow_of(run_state *st, ph_value *v, ph_node *reader)
{
    uint64_t h = ph_hash_ptr(v);
    ph_value *got = ph_hmap_get(st->narrowed, h, v);
    if (got)
        return got;
    ph_graph *g = ph_value_graph(v);
    const ph_tensor *t = ph_value_const(v);
    ph_node *prod = ph_value_producer(v);
    ph_value *nv = NULL;
    if (prod && ph_node_op(prod) == PH_OP_Cast && ph_node_input(prod, 0) &&
        ph_value_dtype(ph_node_input(prod, 0)) == st->nw->narrow) {
        nv = ph_node_input(prod, 0); /* v widens a narrow value: that value */
        if (remember_prune(st, v))
            return NULL;
    } else if (t) {
        ph_tensor *c = narrow_tensor(t, st->nw);
        nv = c ? ph_graph_add_initializer(g, ph_value_name(v), c) : NULL;
        if (nv && remember_prune(st, v))
            return NULL;
    } else {
        ph_node *before = ancestor_in(reader, g);
        nv = before ? ph_cast_create(g, before, v, st->nw->narrow) : NULL;
    }
    if (!nv || ph_hmap_put(st->narrowed, h, v, nv))
        return NULL;
    return nv;
}

/* n rebuilt with its narrowed groups narrow: a copy reading the narrow
 * inputs; each narrowed output replaced by Cast(wide) of the copy's (a
 * graph output keeps its name), which its wide readers keep reading. */
static int rebuild(run_state *st, ph_node *n, node_plan *p, ph_value **in)
{
    ph_graph *g = ph_node_graph(n);
    ph_node *copy = ph_node_create(g, n, ph_node_op_type(n), p->n_in, in, p->n_out);
    if (!copy || ph_node_copy_attrs(copy, n) || ph_node_set_domain(copy, ph_node_domain(n)))
        return PH_ENOMEM;
    if (ph_node_op(n) == PH_OP_Cast && ph_node_set_attr_int(copy, "to", st->nw->narrow))
        return PH_ENOMEM;
    if (ph_node_op(n) == PH_OP_ConstantOfShape) {
        ph_tensor *c = narrow_tensor(ph_node_attr_tensor(n, "value"), st->nw);
        if (!c || ph_node_set_attr_tensor(copy, "value", c))
            return PH_ENOMEM;
    }
    for (size_t i = 0; i < p->n_out; i++) {
        ph_value *old = ph_node_output(n, i), *mine = ph_node_output(copy, i);
        int g2 = p->out_group[i];
        int nar = g2 >= 0 && p->narrow[g2];
        if (ph_value_copy_type(mine, old) || (nar && ph_value_set_dtype(mine, st->nw->narrow)))
            return PH_ENOMEM;
        ph_value *with = mine;
        if (nar) {
            with = ph_cast_create(g, n, mine, st->nw->wide);
            if (!with ||
                ph_hmap_put(st->narrowed, ph_hash_ptr(with), with, mine) || remember_prune(st, with))
                return PH_ENOMEM;
        }
        if (ph_value_use_count(old) || ph_value_graph_output_count(old))
            if (ph_value_replace(old, with))
                return PH_EINVAL;
    }
    char *name = strdup(ph_node_name(n));
    if (!name || ph_node_remove(n)) {
        free(name);
        return PH_EINVAL;
    }
    int rc = ph_node_set_name(copy, name);
    free(name);
    return rc;
}

static int rewrite_node(ph_node *n, void *user)
{
    run_state *st = user;
    node_plan *p = ph_hmap_get(st->plans, ph_hash_ptr(n), n);
    if (!p || st->stopped)
        return 0;
    int computes = 0, reads = 0;
    for (int g = 0; g < p->n_groups; g++) {
        computes |= p->narrow[g] && p->computes[g];
        reads |= p->narrow[g];
    }
    if (!reads)
        return 0;
    if (!ph_ctx_rewrite_begin(st->ctx, ph_ctx_wants_names(st->ctx) ? ph_node_name(n) : NULL)) {
        st->stopped = 1;
        return 0;
    }
    ph_value **in = malloc((p->n_in + 1) * sizeof *in);
    if (!in)
        return PH_ENOMEM;
    for (size_t i = 0; i < p->n_in; i++) {
        in[i] = ph_node_input(n, i);
        int g = p->in_group[i];
        if (in[i] && g >= 0 && p->narrow[g] && ph_value_dtype(in[i]) == st->nw->wide) {
            in[i] = narrow_of(st, in[i], n);
            if (!in[i]) {
                free(in);
                return PH_ENOMEM;
            }
        }
    }
    int rc = 0;
    if (ph_node_op(n) == PH_OP_Cast && ph_node_attr_int(n, "to", 0) == st->nw->narrow && in[0] &&
        in[0] != ph_node_input(n, 0) && ph_node_bypass(n, 0, in[0]) == 0)
        rc = 0; /* a Cast to the narrow dtype of what is now narrow: gone */
    else if (computes)
        rc = rebuild(st, n, p, in);
    else
        for (size_t i = 0; i < p->n_in && !rc; i++)
            if (in[i] != ph_node_input(n, i))
                rc = ph_node_set_input(n, i, in[i]);
    free(in);
    if (rc)
        return ph_ctx_error(st->ctx, rc, "rebuilding %s in %s failed", ph_node_name(n),
                            ph_dtype_name(st->nw->narrow));
    return 1;
}

/* The decisions after the plan, one walk each: spoiled subgraphs found,
 * then left wide, then the reading groups decided. */
typedef void (*decide_fn)(run_state *st, ph_node *n, node_plan *p);

typedef struct decide_walk {
    run_state *st;
    decide_fn fn;
} decide_walk;

static int decide_node(ph_node *n, void *user)
{
    decide_walk *w = user;
    node_plan *p = ph_hmap_get(w->st->plans, ph_hash_ptr(n), n);
    if (p)
        w->fn(w->st, n, p);
    return 0;
}

static int narrow_model(ph_graph *g, const narrowing *nw, const ph_params *params, ph_ctx *ctx)
{
    run_state st = {.ctx = ctx, .params = params, .nw = nw};
    st.plans = ph_hmap_new(NULL, NULL);
    st.index = ph_hmap_new(NULL, NULL);
    st.narrowed = ph_hmap_new(NULL, NULL);
    int rc = st.plans && st.index && st.narrowed ? 0 : PH_ENOMEM;
    if (!rc)
        rc = ph_graph_walk(g, plan_node, &st);
    if (rc >= 0 && ph_hmap_count(st.plans)) {
        const decide_fn steps[] = {mark_unfit, apply_unfit, decide_readers};
        for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
            decide_walk w = {&st, steps[i]};
            ph_graph_walk(g, decide_node, &w);
        }
        rc = ph_graph_walk(g, rewrite_node, &st);
        for (size_t i = 0; rc >= 0 && i < st.n_prune; i++)
            ph_value_prune(st.prune[i]);
    }
    ph_hmap_free(st.plans);
    ph_hmap_free(st.index);
    ph_hmap_free(st.narrowed);
    free(st.parent);
    free(st.bad);
    free(st.prune);
    return rc;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    int total = 0;
    for (size_t i = 0; i < sizeof narrowings / sizeof *narrowings; i++) {
        int rc = narrow_model(g, &narrowings[i], params, ctx);
        if (rc < 0)
            return rc == PH_ENOMEM ? ph_ctx_error(ctx, rc, "out of memory") : rc;
        total += rc;
    }
    return total;
}

static const ph_param_def params[] = {
    {"int64", PH_PARAM_BOOL, "true", "narrow int64 to int32 (with a profile: where its dtypes leave int64 out)"},
    {"float64", PH_PARAM_BOOL, "true",
     "narrow float64 to float32 (with a profile: where its dtypes leave float64 out)"},
    {NULL, 0, NULL, NULL},
};

static const ph_profile_key keys[] = {{"dtypes", NULL}, {NULL, NULL}};

PH_PASS_DEFINE(
    .name = "type_cast_narrow",
    .summary = "int64 subgraphs computed in int32 and float64 ones in float32, Casts at their borders",
    .stages = PH_STAGE_OPTIMIZE | PH_STAGE_ADAPT,
    .exactness = PH_APPROX,
    .params = params,
    .run = run,
    .profile_keys = keys)
