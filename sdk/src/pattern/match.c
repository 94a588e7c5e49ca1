/* sdk/src/pattern/match.c - matching a compiled pattern at a root node.
 *
 * A pattern's forms are tried by benefit, greatest first.  In a form,
 * statements are matched from the root backwards: a statement's node is the
 * producer of an output a later statement bound, so the only choices are
 * the two input orders of commutative operators, tried by backtracking
 * (variables of attributes and dtypes are bound on the way and unbound on
 * the way back).  Then the engine's rules: distinct nodes, all in the
 * root's graph, and no interior value seen from outside the match.
 * ph_pattern_explain runs the same matcher with a buffer for the reason a
 * match failed (fail below); ph_pattern_match_at leaves it NULL. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/op_helpers.h"
#include "pattern.h"

/* A failure of statement i of the form being matched (-1: of the match as
 * a whole, after every statement matched), and with ph_pattern_explain
 * why: the reason about the deepest statement the match reached is kept,
 * the first of those (a commutative node's inputs as written before the
 * swapped order).  Returns 0. */
static int fail_at(ph_match *m, int i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* (the reason's arguments, node labels among them, are only computed when
 * a reason is asked for) */
#define fail(m, i, ...) ((m)->why ? fail_at((m), (i), __VA_ARGS__) : 0)
static int fail_at(ph_match *m, int i, const char *fmt, ...)
{
    if (!m->why || i >= m->why_stmt)
        return 0;
    int k = i < 0 ? 0 : snprintf(m->why, m->why_size, "statement %d (%s): ", i + 1,
                                 m->p->forms[m->form].stmts[i].ops[0].op_type);
    va_list ap;
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < m->why_size)
        vsnprintf(m->why + k, m->why_size - (size_t)k, fmt, ap);
    va_end(ap);
    m->why_stmt = i;
    return 0;
}

/* "'name'" of a value for a reason. */
static const char *vname(const ph_value *v) { return v ? ph_value_name(v) : "(omitted)"; }

int pat_is_commutative(ph_op op)
{
    switch (op) {
    case PH_OP_Add: case PH_OP_Mul: case PH_OP_Max: case PH_OP_Min: case PH_OP_Sum:
    case PH_OP_And: case PH_OP_Or: case PH_OP_Xor: case PH_OP_Equal:
    case PH_OP_BitwiseAnd: case PH_OP_BitwiseOr: case PH_OP_BitwiseXor:
        return 1;
    default:
        return 0;
    }
}

/* The alternatives of other domains than the default one, by name (the
 * known ops are pat_op_matches's bits). */
int pat_op_matches_named(const pat_stmt *s, const ph_node *n)
{
    for (int i = 0; i < s->n_ops; i++) {
        const pat_op *o = &s->ops[i];
        if (o->op == PH_OP_UNKNOWN && strcmp(ph_node_op_type(n), o->op_type) == 0) {
            const char *d = ph_node_domain(n);
            if (strcmp(d, "ai.onnx") == 0)
                d = "";
            if (strcmp(d, o->domain) == 0)
                return 1;
        }
    }
    return 0;
}

PH_API ph_match *ph_match_new(const ph_pattern *p)
{
    ph_match *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->p = p;
    size_t ns = 1, nt = 1, nv = 1;
    for (int i = 0; i < p->n_forms; i++) {
        const pat_form *f = &p->forms[i];
        ns = (size_t)f->n_slots > ns ? (size_t)f->n_slots : ns;
        nt = (size_t)f->n_stmts > nt ? (size_t)f->n_stmts : nt;
        nv = (size_t)f->n_vars > nv ? (size_t)f->n_vars : nv;
        for (int k = 0; k < f->n_slots; k++)
            m->has_variadic |= f->slot_variadic[k] != 0;
    }
    m->cap_slots = ns;
    m->cap_stmts = nt;
    m->cap_vars = nv;
    m->vals = calloc(ns, sizeof *m->vals);
    m->bound = calloc(ns, 1);
    m->var = calloc(ns, sizeof *m->var);
    m->var_n = calloc(ns, sizeof *m->var_n);
    m->trail = calloc(ns, sizeof *m->trail);
    m->nodes = calloc(nt, sizeof *m->nodes);
    m->vv = calloc(nv, sizeof *m->vv);
    m->vtrail = calloc(nv, sizeof *m->vtrail);
    size_t n_ints = 1;
    for (int i = 0; i < p->n_forms; i++)
        n_ints += (size_t)pat_root(&p->forms[i])->n_args + (size_t)p->forms[i].n_slots;
    m->pre = calloc((size_t)p->n_forms + 1, sizeof *m->pre);
    m->pre_ints = malloc(n_ints * sizeof *m->pre_ints);
    if (!m->vals || !m->bound || !m->var || !m->var_n || !m->trail || !m->nodes || !m->vv || !m->vtrail ||
        !m->pre || !m->pre_ints) {
        ph_match_free(m);
        return NULL;
    }
    int *at = m->pre_ints;
    for (int i = 0; i < p->n_forms; i++) {
        const pat_form *f = &p->forms[i];
        const pat_stmt *r = pat_root(f);
        struct pat_form_pre *pre = &m->pre[i];
        pre->need = at;
        for (int k = 0; k < r->n_args; k++) {
            const pat_arg *a = &r->args[k];
            if (a->slot < 0 || a->optional || f->slot_variadic[a->slot])
                continue;
            int st = f->slot_stmt[a->slot];
            if (st >= 0 && st != f->n_stmts - 1)
                at[pre->n_need++] = st;
        }
        at += pre->n_need;
        pre->leaves = at;
        for (int slot = 0; slot < f->n_slots; slot++)
            if (f->slot_stmt[slot] < 0)
                at[pre->n_leaves++] = slot;
        at += pre->n_leaves;
    }
    return m;
}

PH_API void ph_match_free(ph_match *m)
{
    if (!m)
        return;
    free(m->vals);
    free(m->bound);
    free(m->var);
    free(m->var_n);
    free(m->trail);
    free(m->nodes);
    free(m->vv);
    free(m->vtrail);
    free(m->pre);
    free(m->pre_ints);
    free(m->state);
    free(m);
}

/* -------------------------------------------------------------- values */

void pat_lit_val(const pat_lit *l, pat_val *out)
{
    memset(out, 0, sizeof *out);
    out->kind = l->kind;
    out->i = l->i;
    out->f = l->kind == PAT_LIT_INT ? (double)l->i : l->f;
    out->s = l->s;
    out->ints = l->ints;
    out->floats = l->floats;
    out->strs = (const char *const *)l->strs;
    out->n = l->n;
}

/* The attribute `key` of n as a value; 0 when absent or of a type
 * patterns do not compare (tensors, graphs, strings lists). */
static int attr_val(const ph_node *n, const char *key, pat_val *out)
{
    const Onnx__AttributeProto *a = ir_node_find_attr(n, key);
    *out = (pat_val){0};
    if (!a)
        return 0;
    switch (a->type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        out->kind = PAT_LIT_INT;
        out->i = a->i;
        out->f = (double)a->i;
        return 1;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        out->kind = PAT_LIT_FLOAT;
        out->f = a->f;
        out->f32 = 1;
        return 1;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        out->kind = PAT_LIT_STRING;
        out->s = a->s.data ? (const char *)a->s.data : "";
        return 1;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        out->kind = PAT_LIT_INTS;
        out->ints = a->ints;
        out->n = a->n_ints;
        return 1;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
        out->kind = PAT_LIT_FLOATS;
        out->floats32 = a->floats;
        out->n = a->n_floats;
        out->f32 = 1;
        return 1;
    default:
        out->kind = -1; /* present, not comparable */
        return 1;
    }
}

/* Element k of a list value as a scalar value. */
static void elem(const pat_val *v, size_t k, pat_val *out)
{
    memset(out, 0, sizeof *out);
    if (v->kind == PAT_LIT_INTS) {
        out->kind = PAT_LIT_INT;
        out->i = v->ints[k];
        out->f = (double)v->ints[k];
    } else if (v->kind == PAT_LIT_FLOATS) {
        out->kind = PAT_LIT_FLOAT;
        out->f = v->floats32 ? v->floats32[k] : v->floats[k];
        out->f32 = v->f32;
    } else if (v->kind == PAT_LIT_STRINGS) {
        out->kind = PAT_LIT_STRING;
        out->s = v->strs[k];
    }
}

static int is_num(const pat_val *v) { return v->kind == PAT_LIT_INT || v->kind == PAT_LIT_FLOAT; }
static int is_list(const pat_val *v) { return v->kind == PAT_LIT_INTS || v->kind == PAT_LIT_FLOATS; }

/* Numbers equal: a float attribute holds a float, so the other side is
 * compared rounded to float; integers compare exactly. */
static int num_eq(const pat_val *a, const pat_val *b)
{
    if (a->kind == PAT_LIT_INT && b->kind == PAT_LIT_INT)
        return a->i == b->i;
    if (a->f32 || b->f32)
        return (float)a->f == (float)b->f;
    return a->f == b->f;
}

static int val_eq(const pat_val *a, const pat_val *b)
{
    if (is_num(a) && is_num(b))
        return num_eq(a, b);
    if (a->kind == PAT_LIT_STRING && b->kind == PAT_LIT_STRING)
        return strcmp(a->s, b->s) == 0;
    if (is_list(a) && is_list(b)) {
        if (a->n != b->n)
            return 0;
        for (size_t k = 0; k < a->n; k++) {
            pat_val x, y;
            elem(a, k, &x);
            elem(b, k, &y);
            if (!num_eq(&x, &y))
                return 0;
        }
        return 1;
    }
    return 0;
}

/* a OP b for one scalar a (OP one of EQ..GE, or IN with a list b). */
static int compare(const pat_val *a, int op, const pat_val *b)
{
    switch (op) {
    case PAT_OP_EQ: return val_eq(a, b);
    case PAT_OP_NE: return a->kind > 0 && !val_eq(a, b);
    case PAT_OP_IN:
        for (size_t k = 0; k < b->n; k++) {
            pat_val y;
            if (b->kind == PAT_LIT_STRINGS) {
                if (a->kind == PAT_LIT_STRING && !strcmp(a->s, b->strs[k]))
                    return 1;
                continue;
            }
            elem(b, k, &y);
            if (is_num(a) && num_eq(a, &y))
                return 1;
        }
        return 0;
    default:
        break;
    }
    if (!is_num(a) || !is_num(b))
        return 0;
    double x = a->f, y = a->f32 ? (double)(float)b->f : b->f;
    switch (op) {
    case PAT_OP_LT: return x < y;
    case PAT_OP_LE: return x <= y;
    case PAT_OP_GT: return x > y;
    case PAT_OP_GE: return x >= y;
    default: return 0;
    }
}

/* ------------------------------------------------------------ variables */

static int var_bind(ph_match *m, int var, const pat_val *v)
{
    pat_val *cur = &m->vv[var];
    if (cur->kind)
        return val_eq(cur, v);
    *cur = *v;
    m->vtrail[m->n_vtrail++] = var;
    return 1;
}

static void var_unbind_to(ph_match *m, int mark)
{
    while (m->n_vtrail > mark)
        m->vv[m->vtrail[--m->n_vtrail]].kind = 0;
}

/* ------------------------------------------------------------ constraints */

static int within(double x, const pat_cons *c)
{
    if (isnan(x))
        return 0;
    if (c->tol < 0)
        return x == c->v;
    double tol = c->rel && c->v != 0 ? c->tol * fabs(c->v) : c->tol;
    return fabs(x - c->v) <= tol;
}

static int value_ok(const pat_cons *c, const ph_tensor *t, ph_model *model)
{
    int64_t n = t ? ph_tensor_numel(t) : 0;
    if (n < 1 || (!c->n && n != 1))
        return 0;
    if (n == 1) {
        double x;
        return !ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), &x) && within(x, c);
    }
    if (c->tol < 0)
        return ph_tensor_all_equal(t, c->v) == 1;
    double *x = malloc((size_t)n * sizeof *x);
    if (!x) {
        ir_alloc_failed(model); /* counted: the run fails rather than miss a match */
        return 0;
    }
    int ok = !ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), x);
    for (int64_t i = 0; ok && i < n; i++)
        ok = within(x[i], c);
    free(x);
    return ok;
}

/* v's shape (a constant's, else the known type) broadcasts to x's known
 * shape and leaves it as it is. */
static int fits(const ph_value *v, const ph_value *x)
{
    const ph_tensor *t = ph_value_const(v);
    int r = x ? ph_value_rank(x) : -1, vr = t ? (int)ph_tensor_rank(t) : ph_value_rank(v);
    if (vr == 0)
        return 1; /* a scalar widens nothing, whatever x is */
    if (r < 0 || vr < 0 || vr > r)
        return 0;
    for (int i = 1; i <= vr; i++) {
        int64_t d = t ? ph_tensor_dim(t, (size_t)(vr - i)) : ph_value_dim(v, vr - i);
        if (d != 1 && (d < 0 || d != ph_value_dim(x, r - i)))
            return 0;
    }
    return 1;
}

static __attribute__((noinline)) int check_cons_more(ph_match *m, const pat_cons *c, const ph_value *v,
                                                     const ph_node *user)
{
    const ph_tensor *t;
    switch (c->kind) {
    case PAT_CONST:
        return ph_value_const(v) != NULL;
    case PAT_INTS: {
        int64_t out[PAT_INTS_MAX];
        const char *sym[PAT_INTS_MAX];
        return ph_value_const_ints(v, out, sym, PAT_INTS_MAX) >= 0;
    }
    case PAT_SCALAR:
        t = ph_value_const(v);
        return t && ph_tensor_numel(t) == 1;
    case PAT_VALUE:
        return value_ok(c, ph_value_const(v), user ? user->graph->model : NULL);
    case PAT_RANK:
        return ph_value_rank(v) == c->n;
    case PAT_DTYPE:
        return ph_value_dtype(v) > 0 && ph_value_dtype(v) < 32 && (c->dtypes >> ph_value_dtype(v)) & 1;
    case PAT_DTYPE_VAR: {
        pat_val d = {.kind = PAT_LIT_INT, .i = ph_value_dtype(v), .f = ph_value_dtype(v)};
        return d.i > 0 && var_bind(m, c->ref, &d);
    }
    case PAT_SCALAR_VAR: {
        pat_val x = {.kind = PAT_LIT_FLOAT};
        t = ph_value_const(v);
        return t && ph_tensor_numel(t) == 1 && !ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), &x.f) &&
               isfinite(x.f) && var_bind(m, c->ref, &x);
    }
    case PAT_FITS:
        return 1; /* at the end, when every value is bound */
    case PAT_SHAPE:
        if (ph_value_rank(v) != c->n)
            return 0;
        for (int i = 0; i < c->n; i++)
            if (c->dims[i] != PAT_ANY_DIM && ph_value_dim(v, i) != c->dims[i])
                return 0;
        return 1;
    case PAT_PERCHANNEL: {
        t = ph_value_const(v);
        ph_value *out = user && user->n_outputs ? user->outputs[0] : NULL;
        int r = out ? ph_value_rank(out) : -1;
        if (!t || r < 1)
            return 0;
        int64_t axis = c->n < 0 ? c->n + r : c->n;
        int tr = (int)ph_tensor_rank(t);
        if (axis < 0 || axis >= r || tr > r)
            return 0;
        int64_t chans = ph_value_dim(out, (int)axis);
        for (int i = 0; i < tr; i++) {
            int64_t d = ph_tensor_dim(t, (size_t)i);
            int at = r - tr + i; /* right-aligned */
            if (at == axis) {
                if (d != 1 && (chans < 0 || d != chans))
                    return 0;
            } else if (d != 1) {
                return 0;
            }
        }
        return 1;
    }
    }
    return 0;
}

/* A value's constraint: the usual ones here, the others (with their larger
 * frames) in check_cons_more. */
static inline int check_cons(ph_match *m, const pat_cons *c, const ph_value *v, const ph_node *user)
{
    switch (c->kind) {
    case PAT_CONST:
        return ph_value_const(v) != NULL;
    case PAT_RANK:
        return ph_value_rank(v) == c->n;
    case PAT_DTYPE: {
        int d = ph_value_dtype(v);
        return d > 0 && d < 32 && (c->dtypes >> d) & 1;
    }
    case PAT_FITS:
        return 1; /* at the end, when every value is bound */
    default:
        return check_cons_more(m, c, v, user);
    }
}

static int check_attr(ph_match *m, const pat_attr *a, const ph_node *n)
{
    pat_val v;
    int present = attr_val(n, a->key, &v);
    if (a->op == PAT_OP_ABSENT)
        return !present;
    if (!present) {
        if (!a->has_default)
            return a->absent_ok;
        v = a->dflt_val;
    }
    if (a->op == PAT_OP_PRESENT)
        return 1;
    if (v.kind < 0)
        return 0;
    if (a->var >= 0)
        return var_bind(m, a->var, &v);
    if (!a->all)
        return compare(&v, a->op, &a->rhs_val);
    if (!is_list(&v))
        return 0;
    for (size_t k = 0; k < v.n; k++) {
        pat_val e;
        elem(&v, k, &e);
        if (!compare(&e, a->op, &a->rhs_val))
            return 0;
    }
    return 1;
}

/* ----------------------------------------------------------------- reasons
 * (ph_pattern_explain): what the pattern wants and what the graph has, in
 * the pattern language's words. */

/* A dtype as patterns spell it (float32 for ONNX's float). */
static const char *dtype_word(int d) { return d == PH_DT_FLOAT ? "float32" : ph_dtype_name(d); }

/* Append to buf (size bytes, NUL-terminated) what fmt says, cut at the end. */
static void put(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *buf, size_t size, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

/* A value of the language as written: 2, 0.5, "constant", [1, 2]. */
static void val_text(const pat_val *v, char *buf, size_t size)
{
    buf[0] = 0;
    if (v->kind == PAT_LIT_INT)
        put(buf, size, "%lld", (long long)v->i);
    else if (v->kind == PAT_LIT_FLOAT)
        put(buf, size, "%g", v->f32 ? (double)(float)v->f : v->f);
    else if (v->kind == PAT_LIT_STRING)
        put(buf, size, "\"%.60s\"", v->s);
    else if (v->kind == PAT_LIT_INTS || v->kind == PAT_LIT_FLOATS || v->kind == PAT_LIT_STRINGS) {
        put(buf, size, "[");
        for (size_t k = 0; k < v->n && k < 8; k++) {
            pat_val e;
            elem(v, k, &e);
            char t[72];
            val_text(&e, t, sizeof t);
            put(buf, size, "%s%s", k ? ", " : "", t);
        }
        put(buf, size, "%s]", v->n > 8 ? ", ..." : "");
    } else
        put(buf, size, "of a type patterns do not compare");
}

/* A constraint as written after ':'. */
static void cons_text(const pat_form *f, const pat_cons *c, char *buf, size_t size)
{
    buf[0] = 0;
    switch (c->kind) {
    case PAT_CONST: put(buf, size, "const"); break;
    case PAT_INTS: put(buf, size, "ints"); break;
    case PAT_SCALAR: put(buf, size, "scalar"); break;
    case PAT_RANK: put(buf, size, "rank=%lld", (long long)c->n); break;
    case PAT_PERCHANNEL: put(buf, size, "perchannel=%lld", (long long)c->n); break;
    case PAT_DTYPE:
        for (int d = 1; d < 32; d++)
            if ((c->dtypes >> d) & 1)
                put(buf, size, "%s%s", buf[0] ? "|" : "", dtype_word(d));
        break;
    case PAT_SHAPE:
        put(buf, size, "shape=[");
        for (int i = 0; i < c->n; i++)
            if (c->dims[i] == PAT_ANY_DIM)
                put(buf, size, "%s*", i ? "," : "");
            else
                put(buf, size, "%s%lld", i ? "," : "", (long long)c->dims[i]);
        put(buf, size, "]");
        break;
    case PAT_VALUE:
        put(buf, size, "%s%c%g", c->n ? "all" : "scalar", c->tol < 0 ? '=' : '~', c->v);
        if (c->tol >= 0)
            put(buf, size, "+-%g%s", c->tol, c->rel ? " (relative)" : "");
        break;
    case PAT_FITS: put(buf, size, "fits(%s)", f->names[c->ref]); break;
    case PAT_DTYPE_VAR: put(buf, size, "dtype=$%s", f->vars[c->ref]); break;
    case PAT_SCALAR_VAR: put(buf, size, "scalar=$%s", f->vars[c->ref]); break;
    }
}

/* What a value is, for a reason: "dtype float32, shape [1,64,?,?], not a
 * constant" (a one-element constant's value too). */
static void value_facts(const ph_value *v, char *buf, size_t size)
{
    buf[0] = 0;
    int r = ph_value_rank(v);
    put(buf, size, "dtype %s, ", dtype_word(ph_value_dtype(v)));
    if (r < 0)
        put(buf, size, "unknown rank");
    else {
        put(buf, size, "shape [");
        for (int i = 0; i < r; i++) {
            int64_t d = ph_value_dim(v, i);
            if (d < 0)
                put(buf, size, "%s?", i ? "," : "");
            else
                put(buf, size, "%s%lld", i ? "," : "", (long long)d);
        }
        put(buf, size, "]");
    }
    const ph_tensor *t = ph_value_const(v);
    double x;
    if (!t)
        put(buf, size, ", not a constant");
    else if (ph_tensor_numel(t) == 1 && !ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), &x))
        put(buf, size, ", a constant of value %g", x);
    else
        put(buf, size, ", a constant of %lld elements", (long long)ph_tensor_numel(t));
}

/* check_cons, with the reason for input j of statement i. */
static int check_cons_why(ph_match *m, int i, int j, const pat_cons *c, const ph_value *v, const ph_node *user)
{
    if (check_cons(m, c, v, user))
        return 1;
    if (!m->why)
        return 0;
    const pat_form *f = &m->p->forms[m->form];
    char want[160], have[200];
    cons_text(f, c, want, sizeof want);
    value_facts(v, have, sizeof have);
    if (c->kind == PAT_DTYPE_VAR && m->vv[c->ref].kind)
        return fail(m, i, "input %d '%s' has dtype %s, but $%s is %s already in this match", j, vname(v),
                    dtype_word(ph_value_dtype(v)), f->vars[c->ref], dtype_word((int)m->vv[c->ref].i));
    if (c->kind == PAT_SCALAR_VAR && m->vv[c->ref].kind) {
        char was[72];
        val_text(&m->vv[c->ref], was, sizeof was);
        return fail(m, i, "input %d '%s' (%s), but $%s is %s already in this match", j, vname(v), have,
                    f->vars[c->ref], was);
    }
    return fail(m, i, "input %d '%s' fails ':%s' (%s)", j, vname(v), want, have);
}

/* An attribute test as written, without its key: "= 0.5", "< 0.1",
 * "in [1, 2]", "all = 1", "= $eps". */
static void attr_want(const pat_form *f, const pat_attr *a, char *buf, size_t size)
{
    static const char *const ops[] = {[PAT_OP_EQ] = "=", [PAT_OP_NE] = "!=", [PAT_OP_LT] = "<",
                                      [PAT_OP_LE] = "<=", [PAT_OP_GT] = ">", [PAT_OP_GE] = ">=",
                                      [PAT_OP_IN] = "in"};
    buf[0] = 0;
    if (a->op < PAT_OP_EQ || a->op > PAT_OP_IN)
        return;
    put(buf, size, "%s%s ", a->all ? "all " : "", ops[a->op]);
    if (a->var >= 0) {
        put(buf, size, "$%s", f->vars[a->var]);
        return;
    }
    pat_val rhs;
    char t[120];
    pat_lit_val(&a->rhs, &rhs);
    val_text(&rhs, t, sizeof t);
    put(buf, size, "%s", t);
}

/* check_attr, with the reason for statement i. */
static int check_attr_why(ph_match *m, int i, const pat_attr *a, const ph_node *n)
{
    if (check_attr(m, a, n))
        return 1;
    if (!m->why)
        return 0;
    const pat_form *f = &m->p->forms[m->form];
    pat_val v;
    char want[160], have[200];
    int present = attr_val(n, a->key, &v);
    attr_want(f, a, want, sizeof want);
    if (present)
        val_text(&v, have, sizeof have);
    if (a->op == PAT_OP_ABSENT)
        return fail(m, i, "attribute %s is present (%s); the pattern wants it absent (!%s)", a->key, have, a->key);
    if (!present && !a->has_default) {
        if (a->op == PAT_OP_PRESENT)
            return fail(m, i, "attribute %s is absent; the pattern wants it present", a->key);
        if (a->op == PAT_OP_EQ && a->var < 0 && !a->all)
            return fail(m, i, "attribute %s is absent; the pattern wants %s %s (exporters leave out "
                        "attributes at their default value: write %s ?%s to accept that)",
                        a->key, a->key, want, a->key, want);
        return fail(m, i, "attribute %s is absent; the pattern wants %s %s (exporters leave out attributes "
                    "at their default value: write %s(DEFAULT) %s to use it)",
                    a->key, a->key, want, a->key, want);
    }
    if (!present) {
        char d[160];
        pat_lit_val(&a->dflt, &v);
        val_text(&v, d, sizeof d);
        snprintf(have, sizeof have, "absent, its default %s", d);
    } else if (v.kind < 0) {
        return fail(m, i, "attribute %s is %s; the pattern wants %s %s", a->key, have, a->key, want);
    }
    if (a->var >= 0 && m->vv[a->var].kind) {
        char was[120];
        val_text(&m->vv[a->var], was, sizeof was);
        return fail(m, i, "attribute %s is %s, but $%s is %s already in this match", a->key, have,
                    f->vars[a->var], was);
    }
    if (a->all && !is_list(&v))
        return fail(m, i, "attribute %s is %s, not a list; the pattern wants %s %s", a->key, have, a->key, want);
    if (a->op == PAT_OP_EQ && !a->all) /* the usual case, said shortest */
        return fail(m, i, "attribute %s is %s; the pattern wants %s", a->key, have, want + 2);
    return fail(m, i, "attribute %s is %s; the pattern wants %s %s", a->key, have, a->key, want);
}

/* ----------------------------------------------------------------- binding */

/* Bind slot to v (v may be NULL for an omitted optional input). */
static inline __attribute__((always_inline)) int bind(ph_match *m, int slot, ph_value *v)
{
    if (slot < 0)
        return 1;
    if (m->bound[slot])
        return m->vals[slot] == v;
    m->bound[slot] = 1;
    m->vals[slot] = v;
    m->trail[m->n_trail++] = slot;
    return 1;
}

static void unbind_to(ph_match *m, int mark)
{
    while (m->n_trail > mark) {
        int slot = m->trail[--m->n_trail];
        m->bound[slot] = 0;
        m->vals[slot] = NULL;
    }
}

/* Bind statement i's arguments to n's inputs, the first two swapped when
 * swap is set. */
static int bind_args(ph_match *m, int i, const pat_stmt *s, ph_node *n, int swap)
{
    const pat_form *f = &m->p->forms[m->form];
    size_t count = n->n_inputs;
    for (int j = 0; j < s->n_args; j++) {
        const pat_arg *a = &s->args[swap && j < 2 ? 1 - j : j];
        ph_value *v = (size_t)j < count ? n->inputs[j] : NULL;
        if (!v && !a->optional)
            return fail(m, i, "input %d is omitted; the pattern needs it (write %s? for an optional one)", j,
                        a->slot >= 0 ? f->names[a->slot] : "_");
        if (!bind(m, a->slot, v))
            return fail(m, i, "input %d is '%s', but '%s' is already '%s' in this match", j, vname(v),
                        f->names[a->slot], vname(m->vals[a->slot]));
        for (int c = 0; v && c < a->n_cons; c++)
            if (!check_cons_why(m, i, j, &a->cons[c], v, n))
                return 0;
    }
    if (s->variadic_slot >= 0) {
        size_t k = (size_t)s->n_args;
        m->var[s->variadic_slot] = (ph_value *const *)(count > k ? n->inputs + k : NULL);
        m->var_n[s->variadic_slot] = count > k ? count - k : 0;
    } else {
        for (size_t j = (size_t)s->n_args; j < count; j++)
            if (n->inputs[j]) /* an input the pattern does not account for */
                return fail(m, i, "input %zu '%s' is one the pattern does not name (it names %d)", j,
                            vname(n->inputs[j]), s->n_args);
    }
    return 1;
}

static int interior_ok(ph_match *m, const pat_form *f);

/* The constraints that read another value (fits), once all are bound. */
static int deferred_ok(ph_match *m, const pat_form *f)
{
    for (int s = 0; s < f->n_stmts; s++)
        for (int j = 0; j < f->stmts[s].n_args; j++) {
            const pat_arg *a = &f->stmts[s].args[j];
            const ph_value *v = a->slot >= 0 ? m->vals[a->slot] : NULL;
            for (int c = 0; v && c < a->n_cons; c++) {
                const ph_value *x = m->vals[a->cons[c].ref];
                if (a->cons[c].kind != PAT_FITS || fits(v, x))
                    continue;
                char have[200], other[200] = "(omitted)";
                value_facts(v, have, sizeof have);
                if (x)
                    value_facts(x, other, sizeof other);
                return fail(m, -1, "'%s' (statement %d, input %d: %s) fails ':fits(%s)' ('%s': %s)", vname(v),
                            s + 1, j, have, f->names[a->cons[c].ref], vname(x), other);
            }
        }
    return 1;
}

/* A negative statement's arguments against c's inputs (swapped when swap). */
static int nac_args(ph_match *m, const pat_stmt *s, ph_node *c, int swap)
{
    for (int j = 0; j < s->n_args; j++) {
        const pat_arg *a = &s->args[swap && j < 2 ? 1 - j : j];
        ph_value *v = c->inputs[j];
        if (!v || (a->slot >= 0 && m->vals[a->slot] != v))
            return 0;
        for (int k = 0; k < a->n_cons; k++)
            if (!check_cons(m, &a->cons[k], v, c))
                return 0;
    }
    return 1;
}

/* 1 when reader c matches negative statement s (op, attributes, inputs). */
static int nac_reader(ph_match *m, const pat_stmt *s, ph_node *c)
{
    if (c->removed || c->n_inputs != (size_t)s->n_args || !pat_op_matches(s, c))
        return 0;
    int vmark = m->n_vtrail, hit = 1;
    for (int a = 0; a < s->n_attrs && hit; a++)
        hit = check_attr(m, &s->attrs[a], c);
    if (hit) {
        hit = nac_args(m, s, c, 0);
        if (!hit && s->n_args >= 2 && pat_is_commutative(c->op)) {
            var_unbind_to(m, vmark);
            hit = nac_args(m, s, c, 1);
        }
    }
    var_unbind_to(m, vmark);
    return hit;
}

/* The first value negative statement s names. */
static const ph_value *nac_value(const ph_match *m, const pat_stmt *s)
{
    const ph_value *v = NULL;
    for (int j = 0; j < s->n_args && !v; j++)
        v = s->args[j].slot >= 0 ? m->vals[s->args[j].slot] : NULL;
    return v;
}

/* A reader outside the match of the first value negative statement s
 * names that matches s, or NULL. */
static ph_node *nac_hit(ph_match *m, const pat_stmt *s, const ph_graph *g)
{
    const ph_value *v = nac_value(m, s);
    for (size_t u = 0; v && u < v->n_uses; u++) {
        ph_node *c = v->uses[u].node;
        if (c->graph == g && !pat_match_has(m, c) && nac_reader(m, s, c))
            return c;
    }
    return NULL;
}

/* '!all': 1 when the value s names is no graph output and every reader
 * outside the match (in any graph; none at all counts) matches s. */
static int nac_every(ph_match *m, const pat_stmt *s)
{
    const ph_value *v = nac_value(m, s);
    if (!v || v->n_output_refs)
        return 0;
    for (size_t u = 0; u < v->n_uses; u++) {
        ph_node *c = v->uses[u].node;
        if (!c->removed && !pat_match_has(m, c) && !nac_reader(m, s, c))
            return 0;
    }
    return 1;
}

/* Match statements i, i-1, ..., 0; at the end the interior rules, so a
 * refusal backtracks into the other order of a commutative operator. */
static int match_from(ph_match *m, const pat_form *f, int i, const ph_graph *g)
{
    if (i < 0) {
        for (int k = 0; k < f->n_nacs; k++) {
            if (f->nacs[k].every && nac_every(m, &f->nacs[k]))
                return fail(m, -1, "every reader of '%s' is what the negative statement %d (!all %s) excludes",
                            vname(nac_value(m, &f->nacs[k])), k + 1, f->nacs[k].ops[0].op_type);
            ph_node *c = f->nacs[k].every ? NULL : nac_hit(m, &f->nacs[k], g);
            char label[200];
            if (c)
                return fail(m, -1, "node '%s' reads the match and is what the negative statement %d (!%s) "
                            "excludes", ph_node_label(c, label, sizeof label), k + 1, f->nacs[k].ops[0].op_type);
        }
        return (!f->deferred || deferred_ok(m, f)) && interior_ok(m, f);
    }
    const pat_stmt *s = &f->stmts[i];
    ph_node *n = m->nodes[i];
    if (!n) {
        /* the producer of an output a later statement bound */
        for (int o = 0; o < s->n_outs && !n; o++) {
            int slot = s->outs[o];
            if (slot >= 0 && m->bound[slot] && m->vals[slot]) {
                ph_value *v = m->vals[slot];
                if (!v->producer)
                    return fail(m, i, "'%s' is %s, not made by a node", vname(v),
                                v->is_input ? "a graph input" : v->tensor ? "an initializer" : "no node's output");
                if (v->out_index != (uint32_t)o)
                    return fail(m, i, "'%s' is output %u of its node; the pattern wants output %d", vname(v),
                                v->out_index, o);
                n = v->producer;
            }
        }
        if (!n || n->removed)
            return fail(m, i, "no node makes what the statement binds");
        if (n->graph != g)
            return fail(m, i, "the node is in another graph than the root (values from outer scopes can "
                        "only be leaves)");
        for (int k = i + 1; k < f->n_stmts; k++)
            if (m->nodes[k] == n)
                return fail(m, i, "the node is matched by statement %d already", k + 1);
    }
    char label[200];
    if (!pat_op_matches(s, n))
        return fail(m, i, "node '%s' is %s%s%s; the pattern wants %s%s", ph_node_label(n, label, sizeof label),
                    ph_node_op_type(n), ph_node_domain(n)[0] ? "@" : "", ph_node_domain(n), s->ops[0].op_type,
                    s->n_ops > 1 ? " (or an alternative)" : "");
    if ((size_t)s->n_outs > n->n_outputs)
        return fail(m, i, "node '%s' has %zu outputs; the pattern names %d", ph_node_label(n, label, sizeof label),
                    (size_t)n->n_outputs, s->n_outs);
    int vmark = m->n_vtrail;
    for (int a = 0; a < s->n_attrs; a++)
        if (!check_attr_why(m, i, &s->attrs[a], n)) {
            var_unbind_to(m, vmark);
            return 0;
        }
    int mark = m->n_trail;
    for (int o = 0; o < s->n_outs; o++)
        if (!bind(m, s->outs[o], n->outputs[o]) || (s->outs[o] >= 0 && !n->outputs[o])) {
            unbind_to(m, mark);
            var_unbind_to(m, vmark);
            return fail(m, i, "output %d of node '%s' is %s", o, ph_node_label(n, label, sizeof label),
                        n->outputs[o] ? "bound to another value already" : "omitted");
        }
    if (s->variadic_out >= 0) { /* 'ys*': the outputs after the named ones */
        size_t k = (size_t)s->n_outs;
        m->var[s->variadic_out] = (ph_value *const *)(n->n_outputs > k ? n->outputs + k : NULL);
        m->var_n[s->variadic_out] = n->n_outputs > k ? n->n_outputs - k : 0;
    }
    m->nodes[i] = n;
    int tries = s->n_args >= 2 && s->variadic_slot < 0 && pat_is_commutative(n->op) ? 2 : 1;
    for (int swap = 0; swap < tries; swap++) {
        int inner = m->n_trail, vinner = m->n_vtrail;
        if (bind_args(m, i, s, n, swap) && match_from(m, f, i - 1, g))
            return 1;
        unbind_to(m, inner);
        var_unbind_to(m, vinner);
    }
    unbind_to(m, mark);
    var_unbind_to(m, vmark);
    m->nodes[i] = i == f->n_stmts - 1 ? n : NULL;
    return 0;
}

int pat_match_has(const ph_match *m, const ph_node *n)
{
    const pat_form *f = &m->p->forms[m->form];
    for (int i = 0; i < f->n_stmts; i++)
        if (m->nodes[i] == n)
            return 1;
    return 0;
}

/* No interior value is seen from outside the match, and none is bound to
 * a leaf name (which would let a rewrite read what it removes). */
static int interior_ok(ph_match *m, const pat_form *f)
{
    const struct pat_form_pre *pre = &m->pre[m->form];
    for (int l = 0; l < pre->n_leaves; l++) {
        int slot = pre->leaves[l];
        const ph_value *v = m->vals[slot];
        if (!m->bound[slot] || !v || !v->producer)
            continue;
        for (int i = 0; i < f->n_stmts - 1; i++)
            if (m->nodes[i] == v->producer) {
                int o = (int)v->out_index;
                if (o >= f->stmts[i].n_outs || !f->stmts[i].shared[o])
                    return fail(m, -1, "leaf '%s' is a value the match itself computes (statement %d)",
                                f->names[slot], i + 1);
            }
    }
    /* interior nodes: every output private; the root: every output the
     * pattern does not name is unused, so a rewrite accounts for all */
    for (int i = 0; i < f->n_stmts; i++) {
        const pat_stmt *s = &f->stmts[i];
        const ph_node *n = m->nodes[i];
        int root = i == f->n_stmts - 1;
        for (size_t o = 0; o < n->n_outputs; o++) {
            const ph_value *v = n->outputs[o];
            if (!v || ((int)o < s->n_outs && s->shared[o]))
                continue;
            if (root && ((int)o < s->n_outs ? s->outs[o] >= 0 : s->variadic_out >= 0))
                continue;
            if (v->n_output_refs)
                return fail(m, -1, "'%s' (statement %d) is a graph output: the match would remove it (mark it "
                            "':shared' if it may stay)", vname(v), i + 1);
            for (size_t u = 0; u < v->n_uses; u++)
                if (!pat_match_has(m, v->uses[u].node)) {
                    char label[200];
                    return fail(m, -1, "'%s' (statement %d) is also read by node '%s' outside the match",
                                vname(v), i + 1, ph_node_label(v->uses[u].node, label, sizeof label));
                }
        }
    }
    return 1;
}

/* A quick necessary condition, before the matcher's bookkeeping: every
 * required argument of the root statement that another statement makes
 * (`y = Add(n, beta)` with `n = Mul(...)`) must be an input of root made by
 * a node of one of that statement's ops, whatever position binding or
 * commutation gives it.  On a large graph most candidates of a rule set
 * fail here, after reading only their inputs' producers. */
static inline __attribute__((always_inline)) int root_inputs_possible(const ph_match *m, const pat_form *f,
                                                                     const ph_node *root, ph_match *why)
{
    const struct pat_form_pre *pre = &m->pre[m->form];
    for (int k = 0; k < pre->n_need; k++) {
        int s = pre->need[k];
        int found = 0;
        for (size_t i = 0; i < root->n_inputs && !found; i++) {
            const ph_value *v = root->inputs[i];
            found = v && v->producer && pat_op_matches(&f->stmts[s], v->producer);
        }
        if (!found) {
            char label[200];
            return why ? fail(why, f->n_stmts - 1, "no input of node '%s' is made by %s, as statement %d wants",
                              ph_node_label(root, label, sizeof label), f->stmts[s].ops[0].op_type, s + 1)
                       : 0;
        }
    }
    return 1;
}

/* 1 when guard g holds for v, the model's opset of g's domain (-1: not
 * imported, which no guard accepts). */
static int guard_holds(const pat_guard *g, int64_t v)
{
    if (v < 0)
        return 0;
    switch (g->op) {
    case PAT_OP_EQ: return v == g->version;
    case PAT_OP_NE: return v != g->version;
    case PAT_OP_LT: return v < g->version;
    case PAT_OP_LE: return v <= g->version;
    case PAT_OP_GT: return v > g->version;
    default: return v >= g->version;
    }
}

int pat_guards_hold(const pat_form *f, const ph_model *model)
{
    for (int i = 0; i < f->n_guards; i++)
        if (!guard_holds(&f->guards[i], ph_model_opset(model, f->guards[i].domain)))
            return 0;
    return 1;
}

/* pat_guards_hold, with the reason of the first that fails. */
static int guards_ok(const pat_form *f, const ph_node *root, ph_match *why)
{
    if (!why)
        return pat_guards_hold(f, root->graph->model);
    static const char *const ops[] = {[PAT_OP_EQ] = "==", [PAT_OP_NE] = "!=", [PAT_OP_LT] = "<",
                                      [PAT_OP_LE] = "<=", [PAT_OP_GT] = ">", [PAT_OP_GE] = ">="};
    for (int i = 0; i < f->n_guards; i++) {
        const pat_guard *g = &f->guards[i];
        int64_t v = ph_model_opset(root->graph->model, g->domain);
        if (!guard_holds(g, v)) {
            char have[64] = "not imported";
            if (v >= 0)
                snprintf(have, sizeof have, "%lld", (long long)v);
            return fail(why, f->n_stmts - 1, "the guard opset%s%s %s %lld fails: the model's opset%s%s is %s",
                        g->domain[0] ? "@" : "", g->domain, ops[g->op], (long long)g->version,
                        g->domain[0] ? " of " : "", g->domain, have);
        }
    }
    return 1;
}

static inline __attribute__((always_inline)) int match_form(const ph_pattern *p, int fi, ph_node *root, ph_match *m,
                                                            int guards)
{
    const pat_form *f = &p->forms[fi];
    if (!root || root->removed || m->p != p || !pat_op_matches(pat_root(f), root))
        return 0;
    m->form = fi; /* for the reasons of ph_pattern_explain */
    ph_match *why = m->why ? m : NULL;
    if ((guards && f->n_guards && !guards_ok(f, root, why)) || /* a guard is the first reason */
        !root_inputs_possible(m, f, root, why))
        return 0;
    if (m->dirty) { /* after a failed match, backtracking left all of this clear */
        unbind_to(m, 0); /* what the match that held bound, from its trail */
        var_unbind_to(m, 0);
        if (m->has_variadic)
            memset(m->var_n, 0, (size_t)(f->n_slots ? f->n_slots : 1) * sizeof *m->var_n);
        memset(m->nodes, 0, m->cap_stmts * sizeof *m->nodes);
        m->dirty = 0;
    }
    m->n_trail = m->n_vtrail = 0;
    m->state_fresh = 0;
    m->nodes[f->n_stmts - 1] = root;
    if (!match_from(m, f, f->n_stmts - 1, root->graph)) {
        m->nodes[f->n_stmts - 1] = NULL; /* backtracking cleared the others */
        return 0;
    }
    m->dirty = 1;
    return 1;
}

int pat_match_form(const ph_pattern *p, int fi, ph_node *root, ph_match *m)
{
    return match_form(p, fi, root, m, 1);
}

int pat_match_form_guards_held(const ph_pattern *p, int fi, ph_node *root, ph_match *m)
{
    return match_form(p, fi, root, m, 0);
}

PH_API int ph_pattern_match_at(const ph_pattern *p, ph_node *root, ph_match *m)
{
    if (!p || !m || m->p != p)
        return 0;
    for (int k = 0; k < p->n_forms; k++)
        if (pat_match_form(p, p->order[k], root, m))
            return 1;
    return 0;
}

PH_API int ph_pattern_explain(const ph_pattern *p, ph_node *root, ph_match *m, char *why, size_t size)
{
    if (!p || !m || m->p != p || !root || root->removed || !why || !size)
        return PH_EINVAL;
    why[0] = 0;
    char *reason = malloc(size);
    if (!reason)
        return PH_ENOMEM;
    /* the forms in the matcher's order; the reason kept is the one of the
     * form that got furthest (the first of those) */
    int candidate = 0, best = -2, r = 0;
    for (int k = 0; k < p->n_forms && !r; k++) {
        int fi = p->order[k];
        const pat_form *f = &p->forms[fi];
        if (!pat_op_matches(pat_root(f), root))
            continue;
        candidate = 1;
        reason[0] = 0;
        m->why = reason;
        m->why_size = size;
        m->why_stmt = f->n_stmts;
        r = pat_match_form(p, fi, root, m);
        m->why = NULL;
        int reached = f->n_stmts - 1 - m->why_stmt; /* statements matched before the failure */
        if (!r && reached > best) {
            best = reached;
            if (p->n_forms > 1)
                snprintf(why, size, "form %d of %d: %s", fi + 1, p->n_forms, reason[0] ? reason : "no match");
            else
                snprintf(why, size, "%s", reason[0] ? reason : "no match");
        }
    }
    free(reason);
    if (r)
        why[0] = 0;
    return r ? 1 : candidate ? 0 : -1;
}

/* -------------------------------------------------------------- accessors */

static const pat_form *form_of(const ph_match *m) { return &m->p->forms[m->form]; }

/* The slot (kind 0) or variable (kind 1) called `name` in the matched
 * form, or -1: the accessors' lookups, remembered by the name's address
 * (conditions ask for the same literals at every match) and confirmed by
 * its text, so a reused buffer is never taken for another name. */
static int name_index(const ph_match *m, const char *name, int kind)
{
    const pat_form *f = form_of(m);
    struct pat_name_hit *h = (struct pat_name_hit *)&m->names[(((uint64_t)(uintptr_t)name + (uint64_t)kind) * 0x9E3779B97F4A7C15ull) >> 61];
    if (h->name == name && h->form == m->form && h->kind == kind) {
        const char *text = kind ? f->vars[h->index] : f->names[h->index];
        if (strcmp(text, kind && name[0] == '$' ? name + 1 : name) == 0)
            return h->index;
    }
    int i = kind ? pat_var(f, name) : pat_slot(f, name);
    if (i >= 0)
        *h = (struct pat_name_hit){name, m->form, kind, i}; /* a cache in a const match: see ph_match */
    return i;
}

PH_API ph_value *ph_match_value(const ph_match *m, const char *name)
{
    int slot = name_index(m, name, 0);
    return slot >= 0 && m->bound[slot] ? m->vals[slot] : NULL;
}

PH_API size_t ph_match_values(const ph_match *m, const char *name, ph_value *const **vals)
{
    const pat_form *f = form_of(m);
    int slot = name_index(m, name, 0);
    if (slot < 0 || !f->slot_variadic[slot]) {
        if (vals)
            *vals = NULL;
        return 0;
    }
    if (vals)
        *vals = m->var[slot];
    return m->var_n[slot];
}

PH_API const ph_tensor *ph_match_const(const ph_match *m, const char *name)
{
    ph_value *v = ph_match_value(m, name);
    return v ? ph_value_const(v) : NULL;
}

PH_API ph_node *ph_match_node(const ph_match *m, const char *name)
{
    const pat_form *f = form_of(m);
    int slot = name_index(m, name, 0);
    if (slot < 0 || f->slot_stmt[slot] < 0)
        return NULL;
    return m->nodes[f->slot_stmt[slot]];
}

PH_API ph_node *ph_match_root(const ph_match *m) { return m->nodes[form_of(m)->n_stmts - 1]; }
PH_API size_t ph_match_node_count(const ph_match *m) { return (size_t)form_of(m)->n_stmts; }
PH_API ph_node *ph_match_node_at(const ph_match *m, size_t i)
{
    return i < (size_t)form_of(m)->n_stmts ? m->nodes[i] : NULL;
}
PH_API size_t ph_match_form(const ph_match *m) { return (size_t)m->form; }

/* The bound variable `name` ("$name" or "name"), or NULL. */
static const pat_val *var_of(const ph_match *m, const char *name)
{
    int v = name_index(m, name, 1);
    return v >= 0 && m->vv[v].kind > 0 ? &m->vv[v] : NULL;
}

PH_API int64_t ph_match_int(const ph_match *m, const char *name, int64_t dflt)
{
    const pat_val *v = var_of(m, name);
    if (!v || !is_num(v))
        return dflt;
    return v->kind == PAT_LIT_INT ? v->i : (int64_t)v->f;
}

PH_API double ph_match_float(const ph_match *m, const char *name, double dflt)
{
    const pat_val *v = var_of(m, name);
    if (!v || !is_num(v))
        return dflt;
    return v->kind == PAT_LIT_FLOAT && v->f32 ? (double)(float)v->f : v->f;
}

PH_API const char *ph_match_string(const ph_match *m, const char *name, const char *dflt)
{
    const pat_val *v = var_of(m, name);
    return v && v->kind == PAT_LIT_STRING ? v->s : dflt;
}

PH_API ptrdiff_t ph_match_ints(const ph_match *m, const char *name, const int64_t **vals)
{
    const pat_val *v = var_of(m, name);
    if (!v || v->kind != PAT_LIT_INTS) {
        if (vals)
            *vals = NULL;
        return -1;
    }
    if (vals)
        *vals = v->ints;
    return (ptrdiff_t)v->n;
}

PH_API int ph_match_has(const ph_match *m, const char *name) { return var_of(m, name) != NULL; }

PH_API int ph_match_escapes(const ph_match *m, const char *name)
{
    const ph_value *v = ph_match_value(m, name);
    if (!v)
        return 0;
    if (v->n_output_refs)
        return 1;
    for (size_t u = 0; u < v->n_uses; u++)
        if (!pat_match_has(m, v->uses[u].node))
            return 1;
    return 0;
}

PH_API void *ph_match_state(const ph_match *m, size_t size)
{
    ph_match *mm = (ph_match *)m; /* the state is the match's own scratch, not what it matched */
    if (!size)
        size = 1;
    if (size > mm->state_size) {
        void *s = realloc(mm->state, size);
        if (!s)
            return NULL;
        memset((char *)s + mm->state_size, 0, size - mm->state_size);
        mm->state = s;
        mm->state_size = size;
    }
    if (!mm->state_fresh && mm->state) {
        memset(mm->state, 0, mm->state_size);
        mm->state_fresh = 1;
    }
    return mm->state;
}

PH_API char *ph_match_describe(const ph_match *m, char *buf, size_t size)
{
    if (!size)
        return buf;
    buf[0] = 0;
    size_t len = 0;
    for (size_t i = 0; i < ph_match_node_count(m) && len + 1 < size; i++) {
        const ph_node *n = m->nodes[i];
        if (!n)
            continue;
        char label[200];
        int w = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", ph_node_label(n, label, sizeof label));
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return buf;
}
