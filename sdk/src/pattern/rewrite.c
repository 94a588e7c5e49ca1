/* sdk/src/pattern/rewrite.c - the rewriter: build a replacement beside the
 * match, then commit it whole or take it all back.
 *
 * Until commit the graph only gains nodes and initializers nobody reads, so
 * rolling back is removing them.  Commit checks every replacement first
 * (ph_value_can_replace), asks the context for the rewrite's number, then
 * redirects the uses and prunes what became dead.
 *
 * Errors are sticky: the first failure of a ph_rw_* call, or of a setter
 * (attributes, names, types, opsets: the model's trap points at the
 * rewriter while the callback runs), is kept, and a callback that returns
 * 1 after one fails the rewrite with it. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

int pat_rw_room(void **arr, size_t *cap, size_t need, size_t size, void *own)
{
    if (need <= *cap)
        return 0;
    if (!own || *arr != own)
        return ir_grow(arr, cap, need, size);
    void *heap = NULL;
    size_t n = 0;
    if (ir_grow(&heap, &n, need, size))
        return PH_ENOMEM;
    memcpy(heap, own, *cap * size);
    *arr = heap;
    *cap = n;
    return 0;
}

static int push(void ***arr, size_t *n, size_t *cap, void *item, void *own)
{
    if (pat_rw_room((void **)arr, cap, *n + 1, sizeof **arr, own))
        return PH_ENOMEM;
    (*arr)[(*n)++] = item;
    return 0;
}

/* Record the first failure; returns rc. */
static int note(ph_rewriter *rw, int rc)
{
    if (rc < 0 && !rw->failed)
        rw->failed = rc;
    return rc;
}

PH_API const ph_params *ph_rw_params(const ph_rewriter *rw) { return rw->params; }
PH_API ph_ctx *ph_rw_ctx(const ph_rewriter *rw) { return rw->ctx; }
PH_API ph_graph *ph_rw_graph(const ph_rewriter *rw) { return rw->g; }
PH_API int ph_rw_status(const ph_rewriter *rw) { return rw->failed; }
PH_API int ph_rw_done(const ph_rewriter *rw) { return rw->failed ? rw->failed : 1; }
PH_API int64_t ph_rw_opset(const ph_rewriter *rw) { return ph_model_opset(rw->g->model, ""); }

/* Remember the domain of op ("Op@domain") for the commit to import. */
static int add_domain(ph_rewriter *rw, const char *op)
{
    const char *at = strchr(op, '@');
    if (!at || !at[1] || !strcmp(at + 1, "ai.onnx"))
        return 0;
    for (size_t i = 0; i < rw->n_domains; i++)
        if (!strcmp(rw->domains[i], at + 1))
            return 0;
    char *d = ir_strdup(at + 1);
    if (!d || ir_grow((void **)&rw->domains, &rw->cap_domains, rw->n_domains + 1, sizeof *rw->domains)) {
        free(d);
        return PH_ENOMEM;
    }
    rw->domains[rw->n_domains++] = d;
    return 0;
}

PH_API ph_node *ph_rw_node(ph_rewriter *rw, const char *op, size_t n_in, ph_value *const *inputs,
                           size_t n_out)
{
    char type[128];
    const char *at = op ? strchr(op, '@') : NULL;
    size_t len = !op ? 0 : at ? (size_t)(at - op) : strlen(op);
    if (len == 0 || len >= sizeof type) {
        note(rw, PH_EINVAL);
        return NULL;
    }
    memcpy(type, op, len);
    type[len] = 0;
    ph_node *n = ph_node_create(rw->g, ph_match_root(rw->m), type, n_in, inputs, n_out);
    if (n && at && at[1] && (ph_node_set_domain(n, at + 1) < 0 || add_domain(rw, op) < 0)) {
        ph_node_remove(n);
        n = NULL;
    }
    if (!n || push((void ***)&rw->created, &rw->n_created, &rw->cap_created, n, rw->created_own)) {
        if (n)
            ph_node_remove(n);
        note(rw, PH_EINVAL); /* an input out of scope, or out of memory */
        return NULL;
    }
    return n;
}

PH_API ph_node *ph_rw_clone(ph_rewriter *rw, const ph_node *like, const char *op, size_t n_in,
                            ph_value *const *inputs)
{
    char type[192];
    if (!like) {
        note(rw, PH_EINVAL);
        return NULL;
    }
    if (!op) {
        const char *d = ph_node_domain(like);
        snprintf(type, sizeof type, "%s%s%s", ph_node_op_type(like), *d ? "@" : "", d);
        op = type;
    }
    ph_node *n = ph_rw_node(rw, op, n_in, inputs, ph_node_output_count(like));
    if (n && (note(rw, ph_node_copy_attrs(n, like)) < 0 || note(rw, ph_node_set_name(n, ph_node_name(like))) < 0))
        return NULL;
    return n;
}

PH_API int ph_rw_fail(ph_rewriter *rw, int code)
{
    if (!rw->failed)
        rw->failed = code < 0 ? code : PH_EINVAL;
    return code;
}

PH_API ph_value *ph_rw_op(ph_rewriter *rw, const char *op, size_t n_in, ph_value *const *inputs)
{
    ph_node *n = ph_rw_node(rw, op, n_in, inputs, 1);
    return n ? ph_node_output(n, 0) : NULL;
}

PH_API ph_value *ph_rw_initializer(ph_rewriter *rw, const char *hint, ph_tensor *t)
{
    ph_value *v = t ? ph_graph_add_initializer(rw->g, hint, t) : NULL;
    if (!v || push((void ***)&rw->inits, &rw->n_inits, &rw->cap_inits, v, rw->inits_own)) {
        if (v)
            ph_value_prune(v);
        note(rw, t ? PH_ENOMEM : PH_EINVAL); /* no tensor given: the caller's make failed */
        return NULL;
    }
    return v;
}

/* The match's nodes (its statements' nodes, the root last) and their count. */
static ph_node *const *match_nodes(const ph_match *m, size_t *n)
{
    *n = (size_t)m->p->forms[m->form].n_stmts;
    return m->nodes;
}

PH_API int ph_rw_replace(ph_rewriter *rw, ph_value *old, ph_value *with)
{
    int matched = 0;
    size_t n_nodes;
    ph_node *const *nodes = match_nodes(rw->m, &n_nodes);
    if (old) { /* the commit reads all of old (up to three lines): ask for them together */
        __builtin_prefetch(old);
        __builtin_prefetch((const char *)old + 64);
        __builtin_prefetch((const char *)old + sizeof *old - 1);
    }
    for (size_t i = n_nodes; i-- > 0 && !matched;) /* the root, most often, first */
        matched = old && old->producer == nodes[i];
    if (!matched || !with)
        return note(rw, PH_EINVAL);
    if (push((void ***)&rw->repl, &rw->n_repl, &rw->cap_repl, old, rw->repl_own) ||
        push((void ***)&rw->repl, &rw->n_repl, &rw->cap_repl, with, rw->repl_own))
        return note(rw, PH_ENOMEM);
    return 0;
}

PH_API int ph_rw_replace_root(ph_rewriter *rw, ph_value *with)
{
    ph_value *y = ph_node_output(ph_match_root(rw->m), 0);
    if (with && !note(rw, ph_value_copy_type(with, y)))
        ph_rw_replace(rw, y, with);
    else if (!with)
        note(rw, PH_EINVAL);
    return ph_rw_done(rw);
}

PH_API int ph_rewrite_bypass(ph_rewriter *rw, const ph_match *m)
{
    ph_node *root = ph_match_root(m);
    ph_value *in = ph_node_input(root, 0), *out = ph_node_output(root, 0);
    if (!in || !out)
        return 0;
    return ph_rw_replace(rw, out, in) ? PH_ENOMEM : 1;
}

PH_API void *ph_rw_alloc(ph_rewriter *rw, size_t size)
{
    void *p = calloc(1, size ? size : 1);
    if (!p || push(&rw->scratch, &rw->n_scratch, &rw->cap_scratch, p, NULL)) {
        free(p);
        note(rw, PH_ENOMEM);
        ir_alloc_failed(rw->g->model); /* a rewrite that cannot be made must not look inapplicable */
        return NULL;
    }
    return p;
}

/* ------------------------------------------------- values for the result */

PH_API int ph_rw_bind(ph_rewriter *rw, const char *name, ph_value *v)
{
    const pat_form *f = &rw->m->p->forms[rw->m->form];
    int slot = name ? pat_slot(f, name) : -1;
    if (slot < 0 || !v)
        return note(rw, PH_EINVAL);
    if (ir_grow((void **)&rw->binds, &rw->cap_binds, rw->n_binds + 1, sizeof *rw->binds))
        return note(rw, PH_ENOMEM);
    rw->binds[rw->n_binds++] = (pat_bound){slot, v};
    return 0;
}

static int vbind(ph_rewriter *rw, const char *name, const pat_lit *lit)
{
    if (name && name[0] == '$')
        name++;
    char *dup = name ? ir_strdup(name) : NULL;
    if (!dup || ir_grow((void **)&rw->vbinds, &rw->cap_vbinds, rw->n_vbinds + 1, sizeof *rw->vbinds)) {
        free(dup);
        return note(rw, name ? PH_ENOMEM : PH_EINVAL);
    }
    rw->vbinds[rw->n_vbinds++] = (pat_vbound){dup, *lit};
    return 0;
}

PH_API int ph_rw_bind_int(ph_rewriter *rw, const char *name, int64_t v)
{
    return vbind(rw, name, &(pat_lit){.kind = PAT_LIT_INT, .i = v, .f = (double)v});
}

PH_API int ph_rw_bind_float(ph_rewriter *rw, const char *name, double v)
{
    return vbind(rw, name, &(pat_lit){.kind = PAT_LIT_FLOAT, .f = v});
}

PH_API int ph_rw_bind_string(ph_rewriter *rw, const char *name, const char *v)
{
    char *s = v ? ir_strdup(v) : NULL;
    if (!s)
        return note(rw, v ? PH_ENOMEM : PH_EINVAL);
    int rc = vbind(rw, name, &(pat_lit){.kind = PAT_LIT_STRING, .s = s});
    if (rc)
        free(s);
    return rc;
}

/* Bind a list the caller copied into `copy` (owned by the binding from
 * now on; freed here on failure); bad: the caller's list was NULL. */
static int bind_list(ph_rewriter *rw, const char *name, const pat_lit *lit, void *copy, int bad)
{
    if (!copy || bad) {
        free(copy);
        return note(rw, copy ? PH_EINVAL : PH_ENOMEM);
    }
    int rc = vbind(rw, name, lit);
    if (rc)
        free(copy);
    return rc;
}

PH_API int ph_rw_bind_ints(ph_rewriter *rw, const char *name, size_t n, const int64_t *v)
{
    int64_t *d = malloc((n ? n : 1) * sizeof *d);
    if (d && n && v)
        memcpy(d, v, n * sizeof *d);
    return bind_list(rw, name, &(pat_lit){.kind = PAT_LIT_INTS, .ints = d, .n = n}, d, n && !v);
}

PH_API int ph_rw_bind_floats(ph_rewriter *rw, const char *name, size_t n, const float *v)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    for (size_t i = 0; d && v && i < n; i++)
        d[i] = v[i];
    return bind_list(rw, name, &(pat_lit){.kind = PAT_LIT_FLOATS, .floats = d, .n = n}, d, n && !v);
}

/* ------------------------------------------------------- commit, rollback */

static void rollback(ph_rewriter *rw)
{
    for (size_t i = rw->n_created; i-- > 0;) {
        ph_node *n = rw->created[i];
        /* outputs may still be read by another created node: drop uses first */
        for (size_t k = 0; k < ph_node_input_count(n); k++)
            ph_node_set_input(n, k, NULL);
    }
    for (size_t i = rw->n_created; i-- > 0;)
        ph_node_remove(rw->created[i]);
    for (size_t i = 0; i < rw->n_inits; i++)
        ph_value_prune(rw->inits[i]);
}

/* "a, b" of the given nodes' names into buf. */
static void names(char *buf, size_t size, ph_node *const *nodes, size_t n, int only_removed)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && len + 1 < size; i++) {
        if (only_removed && !ph_node_is_removed(nodes[i]))
            continue;
        char label[200];
        int w = snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
                         ph_node_label(nodes[i], label, sizeof label));
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

/* A fusion's node keeps the name of the node it replaces, which is what
 * the user's tools (profiles, quantization overrides) know it by: when the
 * root went, the created node that makes the root's first output's
 * replacement takes the root's name, unless the rewrite already named a
 * node after a matched one (ph_rw_clone, a result's 'like'). */
static void keep_root_name(ph_rewriter *rw, ph_node *root, const char *name)
{
    ph_value *y = ph_node_output(root, 0), *with = NULL;
    if (!ph_node_is_removed(root) || !name[0])
        return;
    for (size_t i = 0; i < rw->n_repl && !with; i += 2)
        with = rw->repl[i] == y ? rw->repl[i + 1] : NULL;
    ph_node *p = with ? ph_value_producer(with) : NULL;
    int created = 0;
    for (size_t i = 0; i < rw->n_created; i++) {
        created |= rw->created[i] == p;
        for (size_t k = 0; k < ph_match_node_count(rw->m); k++)
            if (!strcmp(ph_node_name(rw->created[i]), ph_node_name(ph_match_node_at(rw->m, k))))
                return;
    }
    if (created && ph_node_set_name(p, name) < 0)
        ir_alloc_failed(rw->g->model); /* counted: the output must not depend on memory */
}

static int commit(ph_rewriter *rw, int *stop)
{
    for (size_t i = 0; i < rw->n_repl; i += 2)
        if (!ph_value_can_replace(rw->repl[i], rw->repl[i + 1]))
            return 0;
    /* What the commit reads next lies far apart on a large graph: ask for
     * it now (the replaced value's readers and its slot in the name map,
     * which it leaves when pruned; the replacement's readers). */
    for (size_t i = 0; i < rw->n_repl; i += 2) {
        const ph_value *old = rw->repl[i], *with = rw->repl[i + 1];
        if (old->n_uses) /* old's fields are at hand: can_replace read them */
            __builtin_prefetch(&old->uses[old->n_uses - 1]);
        __builtin_prefetch(with->uses); /* (the line of with->producer, read by the match) */
        __builtin_prefetch(&with->n_uses); /* not read: a load would wait for it here */
        ir_names_prefetch(&rw->g->model->value_names, old->name_hash);
    }
    char matched[512];
    matched[0] = 0;
    int named = rw->ctx && ph_ctx_wants_names(rw->ctx);
    if (named)
        ph_match_describe(rw->m, matched, sizeof matched);
    if (rw->ctx && !ph_ctx_rewrite_begin(rw->ctx, named ? matched : NULL)) {
        *stop = 1;
        return 0;
    }
    ph_node *root = ph_match_root(rw->m);
    /* the root's name, copied (on the heap when longer), for a created
     * node to keep: not needed when the rewrite created none */
    char name_own[128], *root_name = name_own;
    if (rw->n_created) {
        const char *name_now = ph_node_name(root);
        size_t name_len = strlen(name_now);
        root_name = name_len < sizeof name_own ? memcpy(name_own, name_now, name_len + 1) : ir_strdup(name_now);
    }
    size_t n_nodes;
    ph_node *const *match = match_nodes(rw->m, &n_nodes);
    ph_node *matched_nodes[64];
    if (n_nodes > 64)
        n_nodes = 64;
    memcpy(matched_nodes, match, n_nodes * sizeof *matched_nodes);
    for (size_t i = 0; i < rw->n_repl; i += 2) {
        int rc = ph_value_replace(rw->repl[i], rw->repl[i + 1]);
        if (rc < 0) {
            if (root_name != name_own)
                free(root_name);
            return rc; /* only out of memory gets here after can_replace */
        }
    }
    for (size_t i = 0; i < rw->n_repl; i += 2) /* out of memory is counted (ph_model_alloc_failures) */
        ph_value_prune(rw->repl[i]);
    for (size_t i = 0; i < rw->n_inits; i++) /* built but, after all, not read */
        ph_value_prune(rw->inits[i]);
    /* the root and interior nodes nobody reads any more */
    for (size_t i = n_nodes; i-- > 0;) {
        ph_node *n = matched_nodes[i];
        if (!ph_node_is_removed(n)) {
            int dead = 1;
            for (size_t o = 0; o < ph_node_output_count(n) && dead; o++) {
                ph_value *v = ph_node_output(n, o);
                dead = !v || (!ph_value_use_count(v) && !ph_value_graph_output_count(v));
            }
            if (dead)
                for (size_t o = 0; o < ph_node_output_count(n); o++)
                    if (ph_node_output(n, o)) {
                        ph_value_prune(ph_node_output(n, o));
                        break;
                    }
        }
    }
    if (root_name && rw->n_created)
        keep_root_name(rw, root, root_name);
    else if (!root_name)
        ir_alloc_failed(rw->g->model);
    if (root_name != name_own)
        free(root_name);
    for (size_t i = 0; i < rw->n_domains; i++) /* a result's ops of other domains */
        if (ph_model_require_opset(rw->g->model, rw->domains[i], 1) < 0)
            ir_alloc_failed(rw->g->model);
    if (named) {
        char removed[512], added[512];
        names(removed, sizeof removed, matched_nodes, n_nodes, 1);
        names(added, sizeof added, rw->created, rw->n_created, 0);
        ph_ctx_rewrite_end(rw->ctx, removed, added);
    }
    return 1;
}

int pat_rewrite(ph_graph *g, const ph_match *m, ph_rule_rewrite_fn fn, const ph_params *params,
                ph_ctx *ctx, int *stop)
{
    /* field by field: the rooms inside the rewriter need no zeroing (a
     * field added before them must be set here: the assertion says so) */
    _Static_assert(offsetof(ph_rewriter, created_own) == 25 * sizeof(void *) + sizeof(size_t),
                   "every field before the rooms is set below");
    ph_rewriter rw;
    rw.g = g;
    rw.m = m;
    rw.params = params;
    rw.ctx = ctx;
    rw.created = rw.created_own;
    rw.n_created = 0;
    rw.cap_created = sizeof rw.created_own / sizeof *rw.created_own;
    rw.inits = rw.inits_own;
    rw.n_inits = 0;
    rw.cap_inits = sizeof rw.inits_own / sizeof *rw.inits_own;
    rw.repl = rw.repl_own;
    rw.n_repl = 0;
    rw.cap_repl = sizeof rw.repl_own / sizeof *rw.repl_own;
    rw.scratch = NULL;
    rw.n_scratch = rw.cap_scratch = 0;
    rw.binds = NULL;
    rw.n_binds = rw.cap_binds = 0;
    rw.vbinds = NULL;
    rw.n_vbinds = rw.cap_vbinds = 0;
    rw.domains = NULL;
    rw.n_domains = rw.cap_domains = 0;
    rw.failed = 0;
    ph_model *model = g->model;
    int *outer = model->trap;
    model->trap = &rw.failed;
    int rc = fn ? fn(&rw, m) : 1;
    if (rc > 0 && !rw.failed && m->p->forms[m->form].has_result)
        note(&rw, pat_result_build(&rw));
    model->trap = outer;
    if (rc > 0 && rw.failed)
        rc = rw.failed; /* a call failed: the rewrite cannot be whole */
    if (rc > 0 && rw.n_repl == 0 && rw.n_created == 0)
        rc = 0; /* nothing to do */
    if (rc > 0)
        rc = commit(&rw, stop);
    if (rc <= 0)
        rollback(&rw);
    for (size_t i = 0; i < rw.n_scratch; i++)
        free(rw.scratch[i]);
    for (size_t i = 0; i < rw.n_vbinds; i++) {
        free(rw.vbinds[i].name);
        pat_lit_free(&rw.vbinds[i].lit);
    }
    for (size_t i = 0; i < rw.n_domains; i++)
        free(rw.domains[i]);
    if (rw.domains) /* most rewrites allocate none of these */
        free(rw.domains);
    if (rw.vbinds)
        free(rw.vbinds);
    if (rw.binds)
        free(rw.binds);
    if (rw.scratch)
        free(rw.scratch);
    if (rw.created != rw.created_own)
        free(rw.created);
    if (rw.inits != rw.inits_own)
        free(rw.inits);
    if (rw.repl != rw.repl_own)
        free(rw.repl);
    return rc;
}
