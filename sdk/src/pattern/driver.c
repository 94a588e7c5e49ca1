/* sdk/src/pattern/driver.c - rule sets and the rewrite driver.
 *
 * Cost that does not grow with the catalogue: a rule set's first run on a
 * model visits only the nodes of its root op types, through each graph's
 * op-type index.  Later runs visit only what is near a change: the driver
 * observes the model (phi_observer_add) and keeps a change log of the
 * nodes touched by any mutation (created, inputs/attributes/op changed, an
 * output's uses or type changed).  Each rule set remembers how far it read;
 * a run takes the entries since then and walks downstream from each touched
 * node as far as its deepest pattern reaches, collecting nodes of its root
 * op types.  A node appears in the log at most once after the last point a
 * reader took (older entries of the node are cleared when it is logged
 * again, and when it is freed), so the log grows with the changes, not with
 * the rounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pattern.h"

/* ------------------------------------------------------------ change log */

struct phi_changelog {
    ph_node **items; /* NULL holes where a node was logged again or freed */
    size_t n, cap;
    size_t sealed;   /* entries below this were taken by a reader */
    size_t lost;     /* 1 + index where an append failed (out of memory), or 0 */
    uint64_t birth;  /* tells this log from one at a reused address */
};

static void log_touch(ph_node *n)
{
    if (!n || !n->graph || !n->graph->model)
        return;
    struct phi_changelog *log = n->graph->model->changes;
    if (!log)
        return;
    if (n->log_pos) {
        size_t at = n->log_pos - 1;
        if (at < log->n && log->items[at] == n) {
            if (at >= log->sealed)
                return; /* logged, and no reader has taken it yet */
            log->items[at] = NULL;
        }
    }
    if (phi_grow((void **)&log->items, &log->cap, log->n + 1, sizeof *log->items)) {
        phi_alloc_failed(n->graph->model); /* the next run scans everything */
        if (!log->lost)
            log->lost = log->n + 1;
        n->log_pos = 0;
        return;
    }
    log->items[log->n++] = n;
    n->log_pos = log->n;
}

static const phi_observer_ops log_observer;

static void on_node_changed(void *self, ph_node *n) { log_touch(n); }

static void on_uses_changed(void *self, ph_value *v)
{
    if (v->producer)
        log_touch(v->producer);
}

static void on_type_changed(void *self, ph_value *v)
{
    if (v->producer)
        log_touch(v->producer);
    for (size_t i = 0; i < v->n_uses; i++)
        log_touch(v->uses[i].node);
}

static void on_node_freed(void *self, ph_node *n)
{
    struct phi_changelog *log = self; /* never n->graph: it may be gone */
    if (log && n->log_pos && n->log_pos - 1 < log->n && log->items[n->log_pos - 1] == n)
        log->items[n->log_pos - 1] = NULL;
    n->log_pos = 0;
}

static void on_model_freed(void *self, ph_model *m)
{
    if (m->changes) {
        free(m->changes->items);
        free(m->changes);
        m->changes = NULL;
    }
}

static const phi_observer_ops log_observer = {
    .node_changed = on_node_changed,
    .uses_changed = on_uses_changed,
    .type_changed = on_type_changed,
    .node_freed = on_node_freed,
    .model_freed = on_model_freed,
};

static struct phi_changelog *log_get(ph_model *m)
{
    if (m->changes)
        return m->changes;
    struct phi_changelog *log = calloc(1, sizeof *log);
    if (!log || phi_observer_add(m, &log_observer, log)) {
        free(log);
        phi_alloc_failed(m);
        return NULL;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    log->birth = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    m->changes = log;
    return log;
}

/* -------------------------------------------------------------- rule sets */

/* One form of one rule, as the driver tries them. */
typedef struct rs_entry {
    uint32_t rule, form;
    int benefit;
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
    /* what this set has read of a model's change log */
    const ph_model *model;
    const struct phi_changelog *log;
    uint64_t birth;
    size_t pos;
    ph_node **cands;      /* owned scratch */
    size_t n_cands, cap_cands;
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
            all[k++] = (rs_entry){(uint32_t)r, (uint32_t)f, rs->pats[r]->forms[f].benefit};
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
    free(rs->cands);
    free(rs);
}

PH_API size_t ph_ruleset_count(const ph_ruleset *rs) { return rs->n; }
PH_API int ph_ruleset_depth(const ph_ruleset *rs) { return rs->depth; }
PH_API void ph_ruleset_reset(ph_ruleset *rs) { rs->model = NULL; }

/* ------------------------------------------------------------- candidates */

static int add_cand(ph_ruleset *rs, ph_node *n, uint64_t epoch)
{
    if (n->visit_mark == epoch)
        return 0;
    n->visit_mark = epoch;
    if (phi_grow((void **)&rs->cands, &rs->cap_cands, rs->n_cands + 1, sizeof *rs->cands))
        return PH_ENOMEM;
    rs->cands[rs->n_cands++] = n;
    return 0;
}

/* Every node of g and its bodies whose op is an anchor. */
static int collect_all(ph_ruleset *rs, ph_graph *g, uint64_t epoch)
{
    int rc = 0;
    if (!g->op_first) { /* no index (it could not be allocated): the node list */
        for (ph_node *n = g->first; n && !rc; n = n->next) {
            if (rs->anchor[n->op])
                rc = add_cand(rs, n, epoch);
            for (size_t s = 0; s < n->n_subgraphs && !rc; s++)
                rc = collect_all(rs, n->subgraphs[s].graph, epoch);
        }
        return rc;
    }
    for (int op = 0; op < PH_OP__COUNT && !rc; op++) {
        if (!rs->anchor[op])
            continue;
        size_t k;
        ph_node *const *arr = phi_op_nodes(g, (ph_op)op, &k);
        if (!arr) { /* out of memory (counted): the list itself */
            for (ph_node *n = g->op_first[op]; n && !rc; n = n->op_next)
                rc = add_cand(rs, n, epoch);
            continue;
        }
        for (size_t i = 0; i < k && !rc; i++) {
            if (i + 8 < k) /* an array, unlike the list, lets the misses overlap */
                __builtin_prefetch(arr[i + 8]);
            rc = add_cand(rs, arr[i], epoch);
        }
    }
    static const ph_op holders[] = {PH_OP_If, PH_OP_Loop, PH_OP_Scan, PH_OP_UNKNOWN};
    for (size_t h = 0; h < sizeof holders / sizeof holders[0] && !rc; h++)
        for (ph_node *n = g->op_first[holders[h]]; n && !rc; n = n->op_next)
            for (size_t s = 0; s < n->n_subgraphs && !rc; s++)
                rc = collect_all(rs, n->subgraphs[s].graph, epoch);
    return rc;
}

/* Nodes of anchor ops within depth-1 hops downstream of start (start
 * included), breadth first; walk marks the nodes this walk has queued. */
static int collect_near(ph_ruleset *rs, ph_node *start, uint64_t epoch, uint64_t walk,
                        ph_node ***queue, size_t *cap_queue)
{
    size_t head = 0, tail = 0;
    if (phi_grow((void **)queue, cap_queue, 1, sizeof **queue))
        return PH_ENOMEM;
    (*queue)[tail++] = start;
    start->walk_mark = walk;
    size_t level_end = tail;
    int hops = 0, rc = 0;
    while (head < tail && !rc) {
        ph_node *n = (*queue)[head++];
        if (!n->removed && rs->anchor[n->op])
            rc = add_cand(rs, n, epoch);
        if (hops + 1 < rs->depth) {
            for (size_t o = 0; o < n->n_outputs && !rc; o++) {
                ph_value *v = n->outputs[o];
                for (size_t u = 0; v && u < v->n_uses && !rc; u++) {
                    ph_node *c = v->uses[u].node;
                    if (c->walk_mark == walk)
                        continue;
                    c->walk_mark = walk;
                    if (phi_grow((void **)queue, cap_queue, tail + 1, sizeof **queue))
                        rc = PH_ENOMEM;
                    else
                        (*queue)[tail++] = c;
                }
            }
        }
        if (head == level_end) {
            hops++;
            level_end = tail;
        }
    }
    return rc;
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
    /* a callback that explains its failure (ph_ctx_error) keeps its words */
    const char *before = ctx ? ph_ctx_last_error(ctx) : "";
    char *saved = *before ? strdup(before) : NULL;
    int rc = pat_rewrite(n->graph, m, rs->rules[r].rewrite, params, ctx, stop);
    if (rc < 0 && ctx) {
        const char *now = ph_ctx_last_error(ctx);
        char own[512] = "";
        if (*now && (!saved || strcmp(now, saved) != 0))
            snprintf(own, sizeof own, "%s", now);
        free(saved);
        return ph_ctx_error(ctx, rc, "rule '%.200s' at node '%.100s': %s", rule_name(rs, r), ph_node_name(n),
                            *own ? own : ph_strerror(rc));
    }
    free(saved);
    return rc;
}

/* The nodes downstream of n within `hops` (n excluded), breadth first,
 * into a new array (caller frees); NULL when out of memory (counted). */
static ph_node **downstream(ph_node *n, int hops, size_t *count)
{
    size_t cap = 8, k = 0, head = 0;
    ph_node **q = malloc(cap * sizeof *q);
    ph_model *model = n->graph->model;
    uint64_t walk = ++model->visit_epoch;
    if (!q) {
        phi_alloc_failed(model);
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
                    if (k == cap && phi_grow((void **)&q, &cap, k + 1, sizeof *q)) {
                        free(q);
                        phi_alloc_failed(model);
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

static int try_node(ph_ruleset *rs, ph_node *n, const ph_params *params, ph_ctx *ctx, int *stop)
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

PH_API int ph_ruleset_run(ph_ruleset *rs, ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    if (!rs || !g)
        return PH_EINVAL;
    ph_model *m = g->model;
    uint64_t failures = m->alloc_failures;
    size_t present = 0; /* nodes of the root op types anywhere in the model */
    for (int op = 0; op < PH_OP__COUNT && !present; op++)
        present += rs->anchor[op] ? m->op_count[op] : 0;
    struct phi_changelog *log = log_get(m);
    uint64_t epoch = ++m->visit_epoch;
    rs->n_cands = 0;
    int full = !log || rs->model != m || rs->log != log || rs->birth != log->birth ||
               (log->lost && log->lost - 1 >= rs->pos);
    int rc = 0;
    size_t end = log ? log->n : 0;
    if (!present) {
        /* nothing to match: only mark the log read */
    } else if (full) {
        rc = collect_all(rs, g, epoch);
    } else {
        ph_node **queue = NULL;
        size_t cap_queue = 0;
        for (size_t i = rs->pos; i < end && !rc; i++) {
            ph_node *n = log->items[i];
            if (n && !n->removed)
                rc = collect_near(rs, n, epoch, ++m->visit_epoch, &queue, &cap_queue);
        }
        free(queue);
    }
    if (rc)
        return ctx ? ph_ctx_error(ctx, rc, "collecting candidates: %s", ph_strerror(rc)) : rc;
    if (log) {
        if (log->lost && log->lost - 1 < end)
            log->lost = 0; /* the full scans it forces start from here */
        if (end > log->sealed)
            log->sealed = end;
        rs->model = m;
        rs->log = log;
        rs->birth = log->birth;
        rs->pos = end;
    }
    int total = 0, stop = 0;
    for (size_t i = 0; i < rs->n_cands && !stop; i++) {
        if (i + 8 < rs->n_cands) /* a candidate of a large graph is a cache miss: ask early */
            __builtin_prefetch(rs->cands[i + 8]);
        ph_node *n = rs->cands[i];
        if (n->removed)
            continue;
        int r = try_node(rs, n, params, ctx, &stop);
        if (r < 0)
            return r;
        total += r;
    }
    if (m->alloc_failures != failures) /* absorbed below: the result would depend on memory */
        return ctx ? ph_ctx_error(ctx, PH_ENOMEM, "out of memory") : PH_ENOMEM;
    return total;
}
