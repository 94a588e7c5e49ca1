/* sdk/src/pattern/ruleset.c - rule sets: a pass's rules compiled, indexed
 * by root op and benefit, and tried at one node.
 *
 * At a node the (rule, form) pairs anchored on its op are tried greatest
 * benefit first, then in table order; a match that passes its condition
 * gives way to a larger form of the same set rooted downstream that holds
 * it (take_larger), so the longest form wins whatever order the nodes are
 * visited in.  Which nodes are tried, and when, is the worklist's
 * (driver.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

/* -------------------------------------------------------------- rule sets */

/* One form of one rule, as the driver tries them. */
typedef struct rs_entry {
    uint32_t rule, form;
    int benefit;
    int possible; /* every statement's op is in the model (pat_ruleset_reach) */
    int guards;   /* possible, and its opset guards hold in the model (pat_ruleset_reach) */
} rs_entry;

struct ph_ruleset {
    const ph_rule *rules; /* borrowed */
    size_t n;
    ph_pattern **pats;    /* owned */
    ph_match **matches;   /* owned */
    int depth;
    int max_benefit;
    unsigned char anchor[PH_OP__COUNT]; /* root op types */
    /* every (rule, form), greatest benefit first (then rule, then form),
     * grouped by root op: by_op[op] .. by_op[op + 1] index entries */
    rs_entry *entries;    /* owned */
    uint32_t by_op[PH_OP__COUNT + 1];
    ph_worklist *self;    /* owned: the worklist of this set alone (ph_ruleset_run) */
};

static const char *rule_name(const ph_ruleset *rs, size_t r)
{
    return rs->rules[r].name ? rs->rules[r].name : rs->pats[r]->text;
}

/* A result that reads values no statement and no callback gives. */
static int check_result_names(const ph_pattern *p, const char *name, size_t i, ph_error *err)
{
    for (int k = 0; k < p->n_forms; k++) {
        const pat_form *f = &p->forms[k];
        for (int s = 0; s < f->n_result; s++)
            for (int a = 0; a < f->result[s].n_args; a++) {
                int slot = f->result[s].args[a];
                if (slot < 0 || f->slot_stmt[slot] >= 0 || f->slot_rstmt[slot] >= 0)
                    continue;
                int in_pattern = 0;
                for (int t = 0; t < f->n_stmts && !in_pattern; t++)
                    for (int j = 0; j < f->stmts[t].n_args; j++)
                        in_pattern |= f->stmts[t].args[j].slot == slot;
                if (!in_pattern)
                    return ph_error_set(err, PH_EINVAL,
                                        "rule %zu%s%s: the result reads '%s' (at offset %zu), which the pattern "
                                        "does not bind and the rule has no rewrite function to bind it",
                                        i + 1, *name ? " " : "", name, f->names[slot], f->result[s].arg_at[a]);
            }
    }
    return 0;
}

static int build_index(ph_ruleset *rs)
{
    size_t total = 0;
    for (size_t r = 0; r < rs->n; r++)
        total += (size_t)rs->pats[r]->n_forms;
    rs_entry *all = calloc(total ? total : 1, sizeof *all);
    rs->entries = calloc(total ? total : 1, sizeof *rs->entries);
    if (!all || !rs->entries) {
        free(all);
        return PH_ENOMEM;
    }
    size_t k = 0;
    for (size_t r = 0; r < rs->n; r++)
        for (int i = 0; i < rs->pats[r]->n_forms; i++) {
            int f = rs->pats[r]->order[i];
            all[k++] = (rs_entry){(uint32_t)r, (uint32_t)f, rs->pats[r]->forms[f].benefit, 1, 0};
        }
    /* stable insertion sort by benefit, greatest first */
    for (size_t i = 1; i < total; i++) {
        rs_entry e = all[i];
        size_t j = i;
        while (j > 0 && all[j - 1].benefit < e.benefit) {
            all[j] = all[j - 1];
            j--;
        }
        all[j] = e;
    }
    /* grouped by root op (a form with several root ops is listed under each) */
    size_t n_idx = 0, cap = total;
    for (int op = 0; op < PH_OP__COUNT; op++) {
        rs->by_op[op] = (uint32_t)n_idx;
        for (size_t i = 0; i < total; i++) {
            const pat_stmt *root = pat_root(&rs->pats[all[i].rule]->forms[all[i].form]);
            int hit = 0;
            for (int o = 0; o < root->n_ops && !hit; o++)
                hit = root->ops[o].op == (ph_op)op;
            if (!hit)
                continue;
            if (n_idx >= cap) { /* more room: a form under several ops */
                rs_entry *e = realloc(rs->entries, (cap + total) * sizeof *e);
                if (!e) {
                    free(all);
                    return PH_ENOMEM;
                }
                rs->entries = e;
                cap += total;
            }
            rs->entries[n_idx++] = all[i];
        }
    }
    rs->by_op[PH_OP__COUNT] = (uint32_t)n_idx;
    free(all);
    return 0;
}

PH_API ph_ruleset *ph_ruleset_new(const ph_rule *rules, ph_error *err)
{
    ph_ruleset *rs = calloc(1, sizeof *rs);
    if (!rs) {
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    rs->rules = rules;
    while (rules && rules[rs->n].pattern)
        rs->n++;
    if (rs->n == 0) {
        free(rs);
        ph_error_set(err, PH_EINVAL, "the rule table is empty");
        return NULL;
    }
    rs->pats = calloc(rs->n, sizeof *rs->pats);
    rs->matches = calloc(rs->n, sizeof *rs->matches);
    if (!rs->pats || !rs->matches) {
        ph_ruleset_free(rs);
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < rs->n; i++) {
        ph_error perr = {0};
        const char *name = rules[i].name ? rules[i].name : "";
        rs->pats[i] = ph_pattern_parse(rules[i].pattern, &perr);
        rs->matches[i] = rs->pats[i] ? ph_match_new(rs->pats[i]) : NULL;
        if (!rs->matches[i]) {
            ph_error_set(err, rs->pats[i] ? PH_ENOMEM : perr.code, "rule %zu%s%s: %s", i + 1,
                         *name ? " " : "", name, rs->pats[i] ? "out of memory" : perr.message);
            ph_ruleset_free(rs);
            return NULL;
        }
        if (!rules[i].rewrite && !rs->pats[i]->has_result) {
            ph_error_set(err, PH_EINVAL, "rule %zu%s%s: no rewrite function and no result ('=> ...')", i + 1,
                         *name ? " " : "", name);
            ph_ruleset_free(rs);
            return NULL;
        }
        if (!rules[i].rewrite && check_result_names(rs->pats[i], name, i, err)) {
            ph_ruleset_free(rs);
            return NULL;
        }
        if (rs->pats[i]->depth > rs->depth)
            rs->depth = rs->pats[i]->depth;
        for (int f = 0; f < rs->pats[i]->n_forms; f++) {
            const pat_form *fm = &rs->pats[i]->forms[f];
            for (int k = 0; k < pat_root(fm)->n_ops; k++)
                rs->anchor[pat_root(fm)->ops[k].op] = 1;
            if (fm->benefit > rs->max_benefit)
                rs->max_benefit = fm->benefit;
        }
    }
    if (build_index(rs)) {
        ph_ruleset_free(rs);
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    return rs;
}

PH_API void ph_ruleset_free(ph_ruleset *rs)
{
    if (!rs)
        return;
    for (size_t i = 0; i < rs->n; i++) {
        ph_match_free(rs->matches ? rs->matches[i] : NULL);
        ph_pattern_free(rs->pats ? rs->pats[i] : NULL);
    }
    free(rs->pats);
    free(rs->matches);
    free(rs->entries);
    ph_worklist_free(rs->self);
    free(rs);
}

PH_API size_t ph_ruleset_count(const ph_ruleset *rs) { return rs->n; }
PH_API int ph_ruleset_depth(const ph_ruleset *rs) { return rs->depth; }
PH_API void ph_ruleset_reset(ph_ruleset *rs)
{
    if (rs->self)
        pat_worklist_reset(rs->self);
}

int pat_ruleset_anchored(const ph_ruleset *rs, ph_op op) { return rs->anchor[op]; }

/* 1 if a statement of form f has no op with a node in the model: then it
 * matches nowhere. */
static int form_impossible(const pat_form *f, const ph_model *m)
{
    for (int s = 0; s < f->n_stmts; s++) {
        int any = 0;
        for (int o = 0; o < f->stmts[s].n_ops && !any; o++)
            any = m->op_count[f->stmts[s].ops[o].op] > 0;
        if (!any)
            return 1;
    }
    return 0;
}

int pat_ruleset_reach(ph_ruleset *rs, const ph_model *m)
{
    int reach = 0;
    for (uint32_t e = 0; e < rs->by_op[PH_OP__COUNT]; e++) {
        rs_entry *en = &rs->entries[e];
        const pat_form *f = &rs->pats[en->rule]->forms[en->form];
        en->possible = !form_impossible(f, m);
        en->guards = en->possible && pat_guards_hold(f, m);
        if (en->possible && f->depth > reach)
            reach = f->depth;
    }
    return reach;
}

/* 1 if a possible form of the set anchored on n's op matches at n,
 * conditions aside.  (A look changes nothing: the guards decided by
 * pat_ruleset_reach at its start hold for all of it.) */
int pat_ruleset_may_match_memo(ph_ruleset *rs, ph_node *n, const uint32_t *ids, pat_form_memo *memo)
{
    for (uint32_t e = rs->by_op[n->op]; e < rs->by_op[n->op + 1]; e++) {
        const rs_entry *en = &rs->entries[e];
        if (!en->guards)
            continue;
        uint32_t key = ids[e];
        if (key == PAT_FORM_UNSHARED) {
            if (pat_match_form_guards_held(rs->pats[en->rule], (int)en->form, n, rs->matches[en->rule]))
                return 1;
            continue;
        }
        if (memo->stamp[key] != memo->now) {
            memo->answer[key] = pat_match_form_guards_held(rs->pats[en->rule], (int)en->form, n,
                                                          rs->matches[en->rule]) != 0;
            memo->stamp[key] = memo->now;
        }
        if (memo->answer[key])
            return 1;
    }
    return 0;
}

size_t pat_ruleset_n_entries(const ph_ruleset *rs) { return rs->by_op[PH_OP__COUNT]; }

void pat_ruleset_op_entries(const ph_ruleset *rs, ph_op op, size_t *lo, size_t *hi)
{
    *lo = rs->by_op[op];
    *hi = rs->by_op[op + 1];
}

void pat_ruleset_entry(const ph_ruleset *rs, size_t e, const char **text, uint32_t *form)
{
    *text = rs->pats[rs->entries[e].rule]->text;
    *form = rs->entries[e].form;
}

PH_API int ph_ruleset_run(ph_ruleset *rs, ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    if (!rs || !g)
        return PH_EINVAL;
    if (!rs->self && !(rs->self = ph_worklist_new(&rs, 1, NULL)))
        return ctx ? ph_ctx_error(ctx, PH_ENOMEM, "out of memory") : PH_ENOMEM;
    return ph_worklist_run(rs->self, 0, g, params, ctx);
}


/* ------------------------------------------------------------------- run */

/* The condition of rule r on match m: 1, 0, or a negative code (with the
 * context's message naming the rule and the node). */
static int condition(ph_ruleset *rs, size_t r, ph_match *m, ph_node *n, const ph_params *params, ph_ctx *ctx)
{
    int ok = rs->rules[r].check ? rs->rules[r].check(m, params) : 1;
    if (ok < 0)
        return ctx ? ph_ctx_error(ctx, ok, "rule '%.200s' at node '%.100s': condition: %s", rule_name(rs, r),
                                  ph_node_name(n), ph_strerror(ok))
                   : ok;
    return ok;
}

/* Rewrite the match m of rule r at n: 1, 0 (declined or stopped), < 0. */
static int apply(ph_ruleset *rs, size_t r, ph_match *m, ph_node *n, const ph_params *params, ph_ctx *ctx, int *stop)
{
    if (ctx && !ph_ctx_rewrite_allowed(ctx)) {
        *stop = 1;
        return 0;
    }
    /* a callback that explains its failure (ph_ctx_error) keeps its words:
     * the message before the rewrite is kept to tell them apart (on the
     * stack: the context holds at most 511 characters) */
    char saved[512];
    const char *before = ctx ? ph_ctx_last_error(ctx) : "";
    size_t len = strlen(before);
    if (len >= sizeof saved)
        len = sizeof saved - 1;
    memcpy(saved, before, len);
    saved[len] = 0;
    int rc = pat_rewrite(n->graph, m, rs->rules[r].rewrite, params, ctx, stop);
    if (rc < 0 && ctx) {
        const char *now = ph_ctx_last_error(ctx);
        char own[512] = "";
        if (*now && strcmp(now, saved) != 0)
            snprintf(own, sizeof own, "%s", now);
        return ph_ctx_error(ctx, rc, "rule '%.200s' at node '%.100s': %s", rule_name(rs, r), ph_node_name(n),
                            *own ? own : ph_strerror(rc));
    }
    return rc;
}

/* The nodes downstream of n within `hops` (n excluded), breadth first,
 * into a new array (caller frees); NULL when out of memory (counted). */
static ph_node **downstream(ph_node *n, int hops, size_t *count)
{
    size_t cap = 8, k = 0, head = 0;
    ph_node **q = malloc(cap * sizeof *q);
    ph_model *model = n->graph->model;
    uint32_t walk = ir_walk_epoch(model, 1);
    if (!q) {
        ir_alloc_failed(model);
        return NULL;
    }
    q[k++] = n;
    n->walk_mark = walk;
    for (int h = 0; h < hops; h++) {
        size_t level_end = k;
        for (; head < level_end; head++)
            for (size_t o = 0; o < q[head]->n_outputs; o++) {
                ph_value *v = q[head]->outputs[o];
                for (size_t u = 0; v && u < v->n_uses; u++) {
                    ph_node *c = v->uses[u].node;
                    if (c->walk_mark == walk || c->graph != n->graph)
                        continue;
                    c->walk_mark = walk;
                    if (k == cap && ir_grow((void **)&q, &cap, k + 1, sizeof *q)) {
                        free(q);
                        ir_alloc_failed(model);
                        return NULL;
                    }
                    q[k++] = c;
                }
            }
    }
    *count = k;
    return q;
}

/* The larger match wins: a form of greater benefit than `min`, rooted
 * downstream of n, whose match holds n, is made instead (itself giving
 * way to a still larger one).  1 made, 0 none (or declined), < 0. */
static int take_larger(ph_ruleset *rs, ph_node *n, int min, const ph_params *params, ph_ctx *ctx, int *stop)
{
    if (min >= rs->max_benefit || rs->depth < 2)
        return 0;
    size_t k = 0;
    ph_node **near = downstream(n, rs->depth - 1, &k);
    if (!near)
        return PH_ENOMEM;
    int rc = 0;
    for (size_t i = 1; i < k && !rc && !*stop; i++) {
        ph_node *u = near[i];
        for (uint32_t e = rs->by_op[u->op]; e < rs->by_op[u->op + 1] && !rc && !*stop; e++) {
            const rs_entry *en = &rs->entries[e];
            if (en->benefit <= min)
                break;
            ph_match *m = rs->matches[en->rule];
            if (!pat_match_form(rs->pats[en->rule], (int)en->form, u, m) || !pat_match_has(m, n))
                continue;
            int ok = condition(rs, en->rule, m, u, params, ctx);
            if (ok <= 0) {
                rc = ok;
                continue;
            }
            rc = take_larger(rs, u, en->benefit, params, ctx, stop);
            if (rc || *stop)
                break;
            /* none larger: this one, matched again (the search reused the buffers) */
            if (pat_match_form(rs->pats[en->rule], (int)en->form, u, m) &&
                (ok = condition(rs, en->rule, m, u, params, ctx)) > 0)
                rc = apply(rs, en->rule, m, u, params, ctx, stop);
            else if (ok < 0)
                rc = ok;
        }
    }
    free(near);
    return rc;
}

int pat_ruleset_try(ph_ruleset *rs, ph_node *n, const ph_params *params, ph_ctx *ctx, int *stop)
{
    for (uint32_t e = rs->by_op[n->op]; e < rs->by_op[n->op + 1]; e++) {
        const rs_entry *en = &rs->entries[e];
        const ph_pattern *p = rs->pats[en->rule];
        ph_match *m = rs->matches[en->rule];
        if (!pat_match_form(p, (int)en->form, n, m))
            continue;
        int ok = condition(rs, en->rule, m, n, params, ctx);
        if (ok < 0)
            return ok;
        if (!ok)
            continue;
        if (en->benefit < rs->max_benefit) {
            int rc = take_larger(rs, n, en->benefit, params, ctx, stop);
            if (rc || *stop)
                return rc;
            if (!pat_match_form(p, (int)en->form, n, m) || (ok = condition(rs, en->rule, m, n, params, ctx)) <= 0) {
                if (ok < 0)
                    return ok;
                continue;
            }
        }
        int rc = apply(rs, en->rule, m, n, params, ctx, stop);
        if (rc < 0)
            return rc;
        if (rc > 0 || *stop)
            return rc;
    }
    return 0;
}

