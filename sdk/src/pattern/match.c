/* sdk/src/pattern/match.c - matching a compiled pattern at a root node.
 *
 * Statements are matched from the root backwards: a statement's node is the
 * producer of an output a later statement bound, so the only choices are the
 * two input orders of commutative operators, tried by backtracking.  Then
 * the engine's rules: distinct nodes, all in the root's graph, and no
 * interior value seen from outside the match. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

/* A failure of statement i (-1: of the match as a whole, after every
 * statement matched), and with ph_pattern_explain why: the reason about
 * the deepest statement the match reached is kept.  Returns 0. */
static int fail(ph_match *m, int i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(ph_match *m, int i, const char *fmt, ...)
{
    if (!m->why || i > m->why_stmt)
        return 0;
    int k = i < 0 ? 0 : snprintf(m->why, m->why_size, "statement %d (%s): ", i + 1,
                                 m->p->stmts[i].ops[0].op_type);
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

int pat_op_matches(const pat_stmt *s, const ph_node *n)
{
    for (int i = 0; i < s->n_ops; i++) {
        const pat_op *o = &s->ops[i];
        if (o->op != PH_OP_UNKNOWN) {
            if (n->op == o->op)
                return 1;
        } else if (strcmp(ph_node_op_type(n), o->op_type) == 0) {
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
    size_t ns = (size_t)(p->n_slots ? p->n_slots : 1);
    m->vals = calloc(ns, sizeof *m->vals);
    m->bound = calloc(ns, 1);
    m->var = calloc(ns, sizeof *m->var);
    m->var_n = calloc(ns, sizeof *m->var_n);
    m->trail = calloc(ns, sizeof *m->trail);
    m->nodes = calloc((size_t)p->n_stmts, sizeof *m->nodes);
    if (!m->vals || !m->bound || !m->var || !m->var_n || !m->trail || !m->nodes) {
        ph_match_free(m);
        return NULL;
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
    free(m);
}

/* ------------------------------------------------------------ constraints */

static int check_cons(const pat_cons *c, const ph_value *v, const ph_node *user)
{
    const ph_tensor *t;
    switch (c->kind) {
    case PAT_CONST:
        return ph_value_const(v) != NULL;
    case PAT_SCALAR:
        t = ph_value_const(v);
        return t && ph_tensor_numel(t) == 1;
    case PAT_RANK:
        return ph_value_rank(v) == c->n;
    case PAT_DTYPE:
        return ph_value_dtype(v) > 0 && ph_value_dtype(v) < 32 && (c->dtypes >> ph_value_dtype(v)) & 1;
    case PAT_FLOAT: {
        int dt = ph_value_dtype(v);
        return dt == PH_DT_FLOAT || dt == PH_DT_FLOAT16 || dt == PH_DT_BFLOAT16 || dt == PH_DT_DOUBLE;
    }
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

static const char *const cons_names[] = {"", "const", "scalar", "rank", "dtype", "shape",
                                         "perchannel", "float"};

/* check_cons, with the reason for the statement's input j. */
static int check_cons_why(ph_match *m, int i, int j, const pat_cons *c, const ph_value *v,
                          const ph_node *user)
{
    if (check_cons(c, v, user))
        return 1;
    char want[64];
    if (c->kind == PAT_RANK)
        snprintf(want, sizeof want, "rank=%lld", (long long)c->n);
    else if (c->kind == PAT_PERCHANNEL)
        snprintf(want, sizeof want, "perchannel=%lld", (long long)c->n);
    else
        snprintf(want, sizeof want, "%s", cons_names[c->kind]);
    return fail(m, i, "input %d '%s' fails ':%s' (dtype %s, rank %d%s)", j, vname(v), want,
                ph_dtype_name(ph_value_dtype(v)), ph_value_rank(v),
                ph_value_const(v) ? ", a constant" : ", not a constant");
}

static int check_attr(const pat_attr *a, const ph_node *n)
{
    ph_attr_type t = ph_node_attr_type(n, a->key);
    if (a->mode == PAT_ATTR_ABSENT)
        return t == PH_ATTR_NONE;
    if (t == PH_ATTR_NONE)
        return a->mode == PAT_ATTR_OPT_EQ;
    switch (a->lit) {
    case PAT_LIT_INT:
        if (t == PH_ATTR_INT)
            return ph_node_attr_int(n, a->key, 0) == a->i;
        if (t == PH_ATTR_FLOAT)
            return ph_node_attr_float(n, a->key, 0) == (float)a->i;
        return 0;
    case PAT_LIT_FLOAT:
        return t == PH_ATTR_FLOAT && ph_node_attr_float(n, a->key, 0) == (float)a->f;
    case PAT_LIT_STRING:
        return t == PH_ATTR_STRING && strcmp(ph_node_attr_string(n, a->key, ""), a->s) == 0;
    case PAT_LIT_INTS: {
        const int64_t *vals;
        if (t != PH_ATTR_INTS)
            return 0;
        ptrdiff_t k = ph_node_attr_ints(n, a->key, &vals);
        return k == (ptrdiff_t)a->n_ints && (k == 0 || memcmp(vals, a->ints, (size_t)k * sizeof *vals) == 0);
    }
    }
    return 0;
}

/* check_attr, with the reason. */
static int check_attr_why(ph_match *m, int i, const pat_attr *a, const ph_node *n)
{
    if (check_attr(a, n))
        return 1;
    char want[96] = "";
    switch (a->lit) {
    case PAT_LIT_INT: snprintf(want, sizeof want, "%lld", (long long)a->i); break;
    case PAT_LIT_FLOAT: snprintf(want, sizeof want, "%g", a->f); break;
    case PAT_LIT_STRING: snprintf(want, sizeof want, "\"%s\"", a->s); break;
    case PAT_LIT_INTS: snprintf(want, sizeof want, "a list of %zu ints", a->n_ints); break;
    }
    ph_attr_type t = ph_node_attr_type(n, a->key);
    if (a->mode == PAT_ATTR_ABSENT)
        return fail(m, i, "attribute %s is present; the pattern wants it absent (!%s)", a->key, a->key);
    if (t == PH_ATTR_NONE)
        return fail(m, i, "attribute %s is absent; the pattern wants %s = %s (exporters leave "
                    "out attributes at their default value: write %s ?= %s to accept that)",
                    a->key, a->key, want, a->key, want);
    char have[96] = "of another type";
    if (t == PH_ATTR_INT)
        snprintf(have, sizeof have, "%lld", (long long)ph_node_attr_int(n, a->key, 0));
    else if (t == PH_ATTR_FLOAT)
        snprintf(have, sizeof have, "%g", (double)ph_node_attr_float(n, a->key, 0));
    else if (t == PH_ATTR_STRING)
        snprintf(have, sizeof have, "\"%.60s\"", ph_node_attr_string(n, a->key, ""));
    return fail(m, i, "attribute %s is %s; the pattern wants %s", a->key, have, want);
}

/* ----------------------------------------------------------------- binding */

/* Bind slot to v (v may be NULL for an omitted optional input). */
static int bind(ph_match *m, int slot, ph_value *v)
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

/* Bind statement s's arguments to n's inputs in the order given by perm
 * (NULL: as written; otherwise a swap of the two first arguments). */
static int bind_args(ph_match *m, int i, const pat_stmt *s, ph_node *n, int swap)
{
    size_t count = n->n_inputs;
    for (int j = 0; j < s->n_args; j++) {
        const pat_arg *a = &s->args[swap && j < 2 ? 1 - j : j];
        ph_value *v = (size_t)j < count ? n->inputs[j] : NULL;
        if (!v && !a->optional)
            return fail(m, i, "input %d is omitted; the pattern needs it (write %s? for an "
                        "optional one)", j, a->slot >= 0 ? m->p->names[a->slot] : "_");
        if (!bind(m, a->slot, v))
            return fail(m, i, "input %d is '%s', but '%s' is already '%s' in this match", j,
                        vname(v), m->p->names[a->slot], vname(m->vals[a->slot]));
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
                return fail(m, i, "input %zu '%s' is one the pattern does not name (it names %d)",
                            j, vname(n->inputs[j]), s->n_args);
    }
    return 1;
}

static int interior_ok(ph_match *m);

/* Match statements i, i-1, ..., 0; at the end the interior rules, so a
 * refusal backtracks into the other order of a commutative operator. */
static int match_from(ph_match *m, int i, const ph_graph *g)
{
    if (i < 0)
        return interior_ok(m);
    const ph_pattern *p = m->p;
    const pat_stmt *s = &p->stmts[i];
    ph_node *n = m->nodes[i];
    if (!n) {
        /* the producer of an output a later statement bound */
        for (int o = 0; o < s->n_outs && !n; o++) {
            int slot = s->outs[o];
            if (slot >= 0 && m->bound[slot] && m->vals[slot]) {
                ph_value *v = m->vals[slot];
                if (!v->producer)
                    return fail(m, i, "'%s' is %s, not made by a node", vname(v),
                                v->is_input ? "a graph input" : v->tensor ? "an initializer"
                                                                          : "no node's output");
                if (v->out_index != (uint32_t)o)
                    return fail(m, i, "'%s' is output %u of its node; the pattern wants output %d",
                                vname(v), v->out_index, o);
                n = v->producer;
            }
        }
        if (!n || n->removed)
            return fail(m, i, "no node makes what the statement binds");
        if (n->graph != g)
            return fail(m, i, "the node is in another graph than the root (values from outer "
                        "scopes can only be leaves)");
        for (int k = i + 1; k < p->n_stmts; k++)
            if (m->nodes[k] == n)
                return fail(m, i, "the node is matched by statement %d already", k + 1);
    }
    char label[200];
    if (!pat_op_matches(s, n))
        return fail(m, i, "node '%s' is %s%s%s; the pattern wants %s%s", ph_node_label(n, label, sizeof label),
                    ph_node_op_type(n), ph_node_domain(n)[0] ? "@" : "", ph_node_domain(n),
                    s->ops[0].op_type, s->n_ops > 1 ? " (or an alternative)" : "");
    if ((size_t)s->n_outs > n->n_outputs)
        return fail(m, i, "node '%s' has %zu outputs; the pattern names %d",
                    ph_node_label(n, label, sizeof label), n->n_outputs, s->n_outs);
    for (int a = 0; a < s->n_attrs; a++)
        if (!check_attr_why(m, i, &s->attrs[a], n))
            return 0;
    int mark = m->n_trail;
    for (int o = 0; o < s->n_outs; o++)
        if (!bind(m, s->outs[o], n->outputs[o]) || (s->outs[o] >= 0 && !n->outputs[o])) {
            unbind_to(m, mark);
            return fail(m, i, "output %d of node '%s' is %s", o, ph_node_label(n, label, sizeof label),
                        n->outputs[o] ? "bound to another value already" : "omitted");
        }
    m->nodes[i] = n;
    int tries = s->n_args >= 2 && s->variadic_slot < 0 && pat_is_commutative(n->op) ? 2 : 1;
    for (int swap = 0; swap < tries; swap++) {
        int inner = m->n_trail;
        if (bind_args(m, i, s, n, swap) && match_from(m, i - 1, g))
            return 1;
        unbind_to(m, inner);
    }
    unbind_to(m, mark);
    m->nodes[i] = i == p->n_stmts - 1 ? n : NULL;
    return 0;
}

static int in_match(const ph_match *m, const ph_node *n)
{
    for (int i = 0; i < m->p->n_stmts; i++)
        if (m->nodes[i] == n)
            return 1;
    return 0;
}

/* No interior value is seen from outside the match, and none is bound to
 * a leaf name (which would let a rewrite read what it removes). */
static int interior_ok(ph_match *m)
{
    const ph_pattern *p = m->p;
    for (int slot = 0; slot < p->n_slots; slot++) {
        const ph_value *v = m->vals[slot];
        if (p->slot_stmt[slot] >= 0 || !m->bound[slot] || !v || !v->producer)
            continue;
        for (int i = 0; i < p->n_stmts - 1; i++)
            if (m->nodes[i] == v->producer) {
                int o = (int)v->out_index;
                if (o >= p->stmts[i].n_outs || !p->stmts[i].shared[o])
                    return fail(m, -1, "leaf '%s' is a value the match itself computes (statement %d)",
                                p->names[slot], i + 1);
            }
    }
    /* interior nodes: every output private; the root: every output the
     * pattern does not name is unused, so a rewrite accounts for all */
    for (int i = 0; i < p->n_stmts; i++) {
        const pat_stmt *s = &p->stmts[i];
        const ph_node *n = m->nodes[i];
        int root = i == p->n_stmts - 1;
        for (size_t o = 0; o < n->n_outputs; o++) {
            const ph_value *v = n->outputs[o];
            if (!v || ((int)o < s->n_outs && s->shared[o]))
                continue;
            if (root && (int)o < s->n_outs && s->outs[o] >= 0)
                continue;
            if (v->n_output_refs)
                return fail(m, -1, "'%s' (statement %d) is a graph output: the match would remove "
                            "it (mark it ':shared' if it may stay)", vname(v), i + 1);
            for (size_t u = 0; u < v->n_uses; u++)
                if (!in_match(m, v->uses[u].node)) {
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
static int root_inputs_possible(const ph_pattern *p, const ph_node *root, ph_match *why)
{
    const pat_stmt *r = &p->stmts[p->n_stmts - 1];
    for (int k = 0; k < r->n_args; k++) {
        const pat_arg *a = &r->args[k];
        if (a->slot < 0 || a->optional || p->slot_variadic[a->slot])
            continue;
        int s = p->slot_stmt[a->slot];
        if (s < 0 || s == p->n_stmts - 1)
            continue;
        int found = 0;
        for (size_t i = 0; i < root->n_inputs && !found; i++) {
            const ph_value *v = root->inputs[i];
            found = v && v->producer && pat_op_matches(&p->stmts[s], v->producer);
        }
        if (!found)
            return why ? fail(why, p->n_stmts - 1, "no input of node '%s' is made by %s, as "
                              "statement %d wants", ph_node_name(root), p->stmts[s].ops[0].op_type,
                              s + 1)
                       : 0;
    }
    return 1;
}

PH_API int ph_pattern_match_at(const ph_pattern *p, ph_node *root, ph_match *m)
{
    if (!root || root->removed || m->p != p || !pat_op_matches(&p->stmts[p->n_stmts - 1], root) ||
        !root_inputs_possible(p, root, m->why ? m : NULL))
        return 0;
    memset(m->bound, 0, (size_t)(p->n_slots ? p->n_slots : 1));
    memset(m->vals, 0, (size_t)(p->n_slots ? p->n_slots : 1) * sizeof *m->vals);
    memset(m->var_n, 0, (size_t)(p->n_slots ? p->n_slots : 1) * sizeof *m->var_n);
    memset(m->nodes, 0, (size_t)p->n_stmts * sizeof *m->nodes);
    m->n_trail = 0;
    m->nodes[p->n_stmts - 1] = root;
    if (!match_from(m, p->n_stmts - 1, root->graph)) {
        memset(m->nodes, 0, (size_t)p->n_stmts * sizeof *m->nodes);
        return 0;
    }
    return 1;
}

PH_API int ph_pattern_explain(const ph_pattern *p, ph_node *root, ph_match *m, char *why, size_t size)
{
    if (!p || !m || m->p != p || !root || root->removed || !why || !size)
        return PH_EINVAL;
    why[0] = 0;
    if (!pat_op_matches(&p->stmts[p->n_stmts - 1], root))
        return -1; /* not a candidate */
    m->why = why;
    m->why_size = size;
    m->why_stmt = p->n_stmts;
    int r = ph_pattern_match_at(p, root, m);
    m->why = NULL;
    if (!r && !why[0])
        snprintf(why, size, "no match");
    return r;
}

/* -------------------------------------------------------------- accessors */

PH_API ph_value *ph_match_value(const ph_match *m, const char *name)
{
    int slot = pat_slot(m->p, name);
    return slot >= 0 && m->bound[slot] ? m->vals[slot] : NULL;
}

PH_API size_t ph_match_values(const ph_match *m, const char *name, ph_value *const **vals)
{
    int slot = pat_slot(m->p, name);
    if (slot < 0 || !m->p->slot_variadic[slot]) {
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
    int slot = pat_slot(m->p, name);
    if (slot < 0 || m->p->slot_stmt[slot] < 0)
        return NULL;
    return m->nodes[m->p->slot_stmt[slot]];
}

PH_API ph_node *ph_match_root(const ph_match *m) { return m->nodes[m->p->n_stmts - 1]; }
PH_API size_t ph_match_node_count(const ph_match *m) { return (size_t)m->p->n_stmts; }
PH_API ph_node *ph_match_node_at(const ph_match *m, size_t i)
{
    return i < (size_t)m->p->n_stmts ? m->nodes[i] : NULL;
}

PH_API char *ph_match_describe(const ph_match *m, char *buf, size_t size)
{
    if (!size)
        return buf;
    buf[0] = 0;
    size_t len = 0;
    for (int i = 0; i < m->p->n_stmts && len + 1 < size; i++) {
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
