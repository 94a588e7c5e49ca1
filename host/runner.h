/* host/runner.h - the stage runner: repeat the stage's repeatable passes
 * until a whole round makes no rewrite (at most max_iterations rounds), then
 * run each run-once pass once; count, time and check every pass call.
 *
 * For every call: ph_ctx_begin_pass, run, ph_ctx_end_pass.  A negative
 * return is an error naming the pass and ph_ctx_last_error().  After a call
 * that made rewrites the graph is re-sorted (ph_graph_toposort; a cycle is
 * an error naming the pass), its shapes updated incrementally (update_shapes)
 * and, with verify_each, verified: structure, then outputs (verify).  Reaching the
 * cap is not an error: a warning names the passes that still changed the
 * graph in the last round (that is how two passes undoing each other show).
 */
#ifndef PASSHOST_HOST_RUNNER_H
#define PASSHOST_HOST_RUNNER_H

#include <stddef.h>

#include "passhost/passhost.h"
#include "plan.h"

struct host_log;

typedef struct host_pass_stats {
    const char *name;    /* borrowed from the descriptor */
    int run_once;
    unsigned calls;
    long long rewrites;
    double ms;
    size_t nodes_before; /* before the first call */
    size_t nodes_after;  /* after the last call */
} host_pass_stats;

typedef struct host_stage_stats {
    int stage;              /* HOST_STAGE_* */
    const char *target;     /* borrowed from the stage plan */
    int rounds;             /* fixpoint rounds run */
    int hit_cap;            /* the last round still changed the graph */
    double ms;
    size_t nodes_before;
    size_t nodes_after;
    host_pass_stats *passes; /* owned; one per plan step, plan order */
    size_t count;
} host_stage_stats;

struct host_verify;

typedef struct host_run_opts {
    int verify_each;
    int update_shapes;          /* keep inferred shapes current after each change */
    struct host_verify *verify; /* with verify_each: numeric check after each change (NULL: none) */
    struct host_log *log; /* borrowed; the cap warning goes here (NULL: none) */
} host_run_opts;

/* Run one stage of the plan on m.  stats is filled even on failure (caller
 * frees with host_stage_stats_free).  0 or HOST_EXIT_PASS with a message
 * naming the pass. */
int host_run_stage(ph_model *m, const host_stage_plan *sp, ph_ctx *ctx,
                   const host_run_opts *opts, host_stage_stats *stats, ph_error *err);
void host_stage_stats_free(host_stage_stats *stats);

#endif
