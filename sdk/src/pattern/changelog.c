/* sdk/src/pattern/changelog.c - what changed in a model since a reader
 * last looked, and the nodes worklists hold between two runs.
 *
 * The driver observes the model (ir_observer_add) and logs the nodes
 * touched by any mutation (created, inputs/attributes/op changed, an
 * output's uses or type changed).  A worklist remembers how far it read.
 * A node appears in the log at most once after the last point a reader
 * took (older entries of the node are cleared when it is logged again,
 * and when it is freed), so the log grows with the changes, not with the
 * rounds.  Nor does it keep what no reader needs: a pass told of a quarter
 * of the graph or more walks the whole graph anyway (ph_ctx_changed_nodes),
 * so entries farther back than that from the end, and behind every
 * attached worklist, are dropped (a reader whose position fell off is told
 * "everything").  A node removed from its graph leaves the log then (no
 * reader looks at removed nodes), so a look does not read it to see that.
 *
 * Held nodes: a worklist's agendas keep nodes from one pass of a stage to
 * a later one, while the host frees removed nodes in between (at each
 * toposort).  So agendas name nodes by their entry in the log's table of
 * held nodes, which the observer clears when a node is freed; the table
 * is emptied whenever no attached worklist has anything pending. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pattern.h"

/* Entries a reader needs at most behind the end: a quarter of the graph
 * (fewer is not worth a trim). */
static size_t log_keep(const ph_model *m)
{
    size_t q = m->n_nodes_total / 4;
    return q > 4096 ? q : 4096;
}

/* Drop the entries before the last log_keep() ones that no attached
 * worklist still has to read (called when the log holds twice that, so
 * each entry is moved once at most on average). */
static void log_trim(struct pat_changelog *log, const ph_model *m)
{
    size_t from = log->n - log_keep(m);
    for (size_t i = 0; i < log->n_attached; i++) {
        size_t pos = pat_worklist_pos(log->attached[i]);
        if (pos < from)
            from = pos;
    }
    if (from <= log->base || from - log->base < (log->n - log->base) / 4)
        return; /* held back by a worklist: trim when it lets a quarter go */
    /* The dropped entries' nodes keep their log_pos: a position below base
     * is told stale where it is read (log_touch, on_node_freed), so the trim
     * writes no node (a cache miss each, a quarter of the graph at a time). */
    memmove(log->items, log->items + (from - log->base), (log->n - from) * sizeof *log->items);
    log->base = from;
}

static void log_touch(ph_node *n)
{
    if (!n || n->removed || !n->graph || !n->graph->model)
        return; /* (a removed node is nothing a reader looks at) */
    struct pat_changelog *log = n->graph->model->changes;
    if (!log)
        return;
    if (n->log_pos) {
        size_t at = n->log_pos - 1;
        if (at >= log->base && at < log->n && pat_log_at(log, at) == n) {
            if (at >= log->sealed)
                return; /* logged, and no reader has taken it yet */
            log->items[at - log->base] = NULL;
        }
    }
    if (log->n - log->base >= 2 * log_keep(n->graph->model))
        log_trim(log, n->graph->model);
    if (log->n - log->base >= log->cap &&
        ir_grow((void **)&log->items, &log->cap, log->n - log->base + 1, sizeof *log->items)) {
        ir_alloc_failed(n->graph->model); /* the next run scans everything */
        if (!log->lost)
            log->lost = log->n + 1;
        n->log_pos = 0;
        return;
    }
    log->items[log->n++ - log->base] = n;
    n->log_pos = log->n <= UINT32_MAX ? (uint32_t)log->n : 0; /* past 2^32 entries: not found again, may be logged twice */
}

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

/* A node removed (ph_node_remove: on a large rewrite a third to a half of
 * the nodes logged) leaves the log: its entry becomes a hole, so a look
 * skips it without reading it.  Its held entry stays until it is freed
 * (the table is most often emptied before, and a run reads its candidates
 * anyway, where a check here would be a miss in the table each). */
static void log_unlog(struct pat_changelog *log, ph_node *n)
{
    if (log && n->log_pos && n->log_pos - 1 >= log->base && n->log_pos - 1 < log->n &&
        pat_log_at(log, n->log_pos - 1) == n)
        log->items[n->log_pos - 1 - log->base] = NULL;
    n->log_pos = 0;
}

static void on_node_removed(void *self, ph_node *n) { log_unlog(self, n); }

/* A node freed leaves the log and the held table. */
static void on_node_freed(void *self, ph_node *n)
{
    struct pat_changelog *log = self; /* never n->graph: it may be gone */
    log_unlog(log, n);
    if (log && n->held_pos && n->held_pos - 1 < log->n_held && log->held[n->held_pos - 1] == n)
        log->held[n->held_pos - 1] = NULL;
    n->held_pos = 0;
}

static void on_model_freed(void *self, ph_model *m)
{
    struct pat_changelog *log = m->changes;
    if (!log)
        return;
    for (size_t i = 0; i < log->n_attached; i++)
        pat_worklist_detached(log->attached[i]);
    free(log->attached);
    free(log->held);
    free(log->items);
    free(log);
    m->changes = NULL;
}

static const ir_observer_ops log_observer = {
    .node_changed = on_node_changed,
    .uses_changed = on_uses_changed,
    .type_changed = on_type_changed,
    .node_freed = on_node_freed,
    .node_removed = on_node_removed,
    .model_freed = on_model_freed,
};

struct pat_changelog *pat_log_get(ph_model *m)
{
    if (m->changes)
        return m->changes;
    struct pat_changelog *log = calloc(1, sizeof *log);
    if (!log || ir_observer_add(m, &log_observer, log)) {
        free(log);
        ir_alloc_failed(m);
        return NULL;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    log->birth = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    m->changes = log;
    return log;
}

int pat_log_hold(struct pat_changelog *log, ph_node *n, uint32_t *index)
{
    if (n->held_pos && n->held_pos - 1 < log->n_held && log->held[n->held_pos - 1] == n) {
        *index = n->held_pos - 1;
        return 0;
    }
    if (log->n_held >= UINT32_MAX - 1 ||
        (log->n_held >= log->cap_held && ir_grow((void **)&log->held, &log->cap_held, log->n_held + 1, sizeof *log->held)))
        return PH_ENOMEM;
    log->held[log->n_held++] = n;
    n->held_pos = (uint32_t)log->n_held;
    *index = n->held_pos - 1;
    return 0;
}

int pat_log_attach(struct pat_changelog *log, ph_worklist *wl)
{
    for (size_t i = 0; i < log->n_attached; i++)
        if (log->attached[i] == wl)
            return 0;
    if (ir_grow((void **)&log->attached, &log->cap_attached, log->n_attached + 1, sizeof *log->attached))
        return PH_ENOMEM;
    log->attached[log->n_attached++] = wl;
    return 0;
}

void pat_log_detach(struct pat_changelog *log, ph_worklist *wl)
{
    for (size_t i = 0; i < log->n_attached; i++)
        if (log->attached[i] == wl) {
            log->attached[i] = log->attached[--log->n_attached];
            break;
        }
    pat_log_release(log);
}

void pat_log_release(struct pat_changelog *log)
{
    for (size_t i = 0; i < log->n_attached; i++)
        if (pat_worklist_pending(log->attached[i]))
            return;
    log->n_held = 0; /* nothing names a held node any more */
}
