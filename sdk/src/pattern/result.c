/* sdk/src/pattern/result.c - a rule's declarative result: the statements
 * after '=>' built through the rewriter.
 *
 * Each statement makes one node (or, 'y = x', names a value): its inputs
 * are values of the match, outputs of earlier result statements or values
 * the rewrite callback bound (ph_rw_bind); its attributes are literals,
 * variables of the pattern or of the callback (ph_rw_bind_int, ...), and
 * copies of a matched node's ('...c', 'like c'; op '_': the copied node's
 * op).  A list 'xs*' of the pattern is read whole as the last inputs, and
 * 'ys*' replaces the pattern's output list ys.  An output named like a
 * value the matched nodes make replaces it (taking its type); the node
 * that replaces the root's first output takes the root's name, unless
 * 'like c' gives it c's. */
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

static ph_value *resolve(const ph_rewriter *rw, ph_value *const *local, int slot)
{
    if (slot < 0)
        return NULL;
    if (local[slot])
        return local[slot];
    for (size_t i = rw->n_binds; i-- > 0;)
        if (rw->binds[i].slot == slot)
            return rw->binds[i].v;
    return rw->m->bound[slot] ? rw->m->vals[slot] : NULL;
}

/* The value of variable `var` for the result: the callback's, else the
 * match's; 0 when neither has one. */
static int var_value(const ph_rewriter *rw, const pat_form *f, int var, pat_val *out)
{
    for (size_t i = rw->n_vbinds; i-- > 0;)
        if (!strcmp(rw->vbinds[i].name, f->vars[var])) {
            pat_lit_val(&rw->vbinds[i].lit, out);
            return 1;
        }
    if (rw->m->vv[var].kind <= 0)
        return 0;
    *out = rw->m->vv[var];
    return 1;
}

static int set_attr(ph_node *n, const char *key, const pat_val *v)
{
    switch (v->kind) {
    case PAT_LIT_INT:
        return ph_node_set_attr_int(n, key, v->i);
    case PAT_LIT_FLOAT:
        return ph_node_set_attr_float(n, key, (float)v->f);
    case PAT_LIT_STRING:
        return ph_node_set_attr_string(n, key, v->s);
    case PAT_LIT_INTS:
        return ph_node_set_attr_ints(n, key, v->n, v->ints);
    case PAT_LIT_FLOATS: {
        if (v->floats32)
            return ph_node_set_attr_floats(n, key, v->n, v->floats32);
        float *f = malloc((v->n ? v->n : 1) * sizeof *f);
        if (!f)
            return PH_ENOMEM;
        for (size_t k = 0; k < v->n; k++)
            f[k] = (float)v->floats[k];
        int rc = ph_node_set_attr_floats(n, key, v->n, f);
        free(f);
        return rc;
    }
    default:
        return PH_EINVAL; /* a list of strings */
    }
}

static int build_stmt(ph_rewriter *rw, const pat_form *f, const pat_rstmt *r, ph_value **local)
{
    const ph_match *m = rw->m;
    if (!r->op && !r->same_op) { /* y = x */
        ph_value *x = resolve(rw, local, r->args[0]);
        int out = r->outs[0];
        if (!x)
            return PH_EINVAL;
        if (f->slot_stmt[out] >= 0)
            return ph_rw_replace(rw, m->vals[out], x);
        local[out] = x;
        return 0;
    }
    size_t n_var = r->variadic_arg >= 0 ? m->var_n[r->variadic_arg] : 0, n_in = 0;
    size_t n_var_out = r->variadic_out >= 0 ? m->var_n[r->variadic_out] : 0;
    ph_value **in = ph_rw_alloc(rw, ((size_t)r->n_args + n_var + 1) * sizeof *in);
    if (!in)
        return PH_ENOMEM;
    for (int k = 0; k < r->n_args; k++) {
        in[k] = resolve(rw, local, r->args[k]);
        if (!in[k] && r->args[k] >= 0 && !r->arg_optional[k])
            return PH_EINVAL; /* a value neither the match nor the callback gave */
        if (in[k])
            n_in = (size_t)k + 1; /* trailing omitted inputs are left out */
    }
    if (n_var) { /* 'xs*': the list as matched, omitted entries kept in place */
        n_in = (size_t)r->n_args + n_var;
        for (size_t k = 0; k < n_var; k++)
            in[r->n_args + k] = m->var[r->variadic_arg][k];
    }
    ph_node *n;
    if (r->like >= 0)
        n = ph_rw_clone(rw, m->nodes[f->slot_stmt[r->like]], r->op, n_in, in);
    else
        n = ph_rw_node(rw, r->op, n_in, in, (size_t)r->n_outs + n_var_out);
    if (!n)
        return PH_EINVAL;
    int rc = 0;
    for (int a = 0; a < r->n_attrs && !rc; a++) {
        const pat_rattr *ra = &r->attrs[a];
        pat_val v;
        if (ra->spread >= 0) {
            rc = ph_node_copy_attrs(n, m->nodes[f->slot_stmt[ra->spread]]);
        } else if (ra->var >= 0) {
            if (var_value(rw, f, ra->var, &v)) /* unbound: the attribute is left out */
                rc = set_attr(n, ra->key, &v);
        } else {
            pat_lit_val(&ra->lit, &v);
            rc = set_attr(n, ra->key, &v);
        }
    }
    const pat_stmt *root = pat_root(f);
    int root_out = root->n_outs ? root->outs[0] : root->variadic_out;
    for (size_t k = 0; k < n_var_out && !rc; k++) { /* 'ys*': each value of the list by the same output */
        ph_value *old = m->var[r->variadic_out][k], *v = ph_node_output(n, (size_t)r->n_outs + k);
        if (!old)
            continue;
        rc = v ? ph_value_copy_type(v, old) : PH_EINVAL;
        if (!rc)
            rc = ph_rw_replace(rw, old, v);
        if (!rc && k == 0 && r->variadic_out == root_out && r->like < 0)
            rc = ph_node_set_name(n, ph_node_name(ph_match_root(m)));
    }
    for (int k = 0; k < r->n_outs && !rc; k++) {
        int slot = r->outs[k];
        ph_value *v = ph_node_output(n, (size_t)k);
        if (slot < 0 || !v)
            continue;
        if (f->slot_stmt[slot] < 0) {
            local[slot] = v;
            continue;
        }
        rc = ph_value_copy_type(v, m->vals[slot]);
        if (!rc)
            rc = ph_rw_replace(rw, m->vals[slot], v);
        if (!rc && slot == root_out && r->like < 0)
            rc = ph_node_set_name(n, ph_node_name(ph_match_root(m)));
    }
    return rc;
}

int pat_result_build(ph_rewriter *rw)
{
    const pat_form *f = &rw->m->p->forms[rw->m->form];
    ph_value *own[32], **local = own; /* a form's slots: a few, nearly always */
    size_t n = (size_t)(f->n_slots ? f->n_slots : 1);
    if (n <= sizeof own / sizeof *own)
        memset(own, 0, n * sizeof *own);
    else if (!(local = calloc(n, sizeof *local)))
        return PH_ENOMEM;
    int rc = 0;
    for (int i = 0; i < f->n_result && !rc; i++)
        rc = build_stmt(rw, f, &f->result[i], local);
    if (local != own)
        free(local);
    return rc;
}
