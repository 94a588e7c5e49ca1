/* host/run/runner.h - the stage runner: repeat the stage's repeatable passes
 * until a whole round makes no rewrite (at most max_iterations rounds), then
 * run each run-once pass once; count, time and check every pass call.
 *
 * The stage's pattern passes share one worklist (ph_worklist, pattern.h),
 * made from the stage plan's steps in their order (the pipeline's): the
 * runner still calls each pass at its place, but the nodes worth trying
 * are found once for all of them, near what changed, so the stage's cost
 * hardly grows with the number of pattern passes.
 *
 * For every call: ph_ctx_begin_pass, run, ph_ctx_end_pass.  A negative
 * return is an error naming the pass and ph_ctx_last_error().  After a call
 * that made rewrites the graph is re-sorted (ph_graph_toposort; a cycle is
 * an error naming the pass), its shapes updated incrementally (update_shapes)
 * and, with verify_each, verified: structure, then outputs (verify; a pass
 * declared exact must keep every output bit for bit).  Reaching the
 * cap is not an error: a warning names the passes that still changed the
 * graph in the last round.  A round that ends with the graph it began with
 * (compared by fingerprint, fingerprint.h), or two running that end with
 * its structure (the same but for names), though passes reported rewrites
 * stops the stage early, with a warning that names the passes that report
 * rewrites they do not make, those that change only names, or else the
 * passes that undo each other.
 *
 * Numbered rewrites (plugin.h): every rewrite of a run has a global index,
 * counted by the context.  A pass asks ph_ctx_rewrite_begin() before each
 * rewrite.  For a pass that does not ask, the runner numbers the difference
 * between what run() returned and what the pass numbered itself
 * (ph_ctx_count_rewrites), so the numbering stays whole.  Once the context's
 * budget is used up (ph_ctx_rewrite_allowed() is 0) no pass is called any
 * more: a pass that does not ask is thus limited per call, not per rewrite.
 */
#ifndef PASSHOST_HOST_RUNNER_H
#define PASSHOST_HOST_RUNNER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "passhost/host.h"
#include "passhost/passhost.h"
#include "config/plan.h"

struct host_log;

typedef struct host_pass_stats {
    const char *name;    /* borrowed from the descriptor */
    int run_once;
    unsigned calls;
    long long rewrites;
    double ms;
    size_t nodes_before; /* before the first call */
    size_t nodes_after;  /* after the last call */
    long long node_change; /* node count change made by this pass's own calls */
    double check_ms;     /* after its changing calls: sort, shapes, --verify-each */
} host_pass_stats;

typedef struct host_stage_stats {
    int stage;              /* HOST_STAGE_* */
    const char *target;     /* borrowed from the stage plan */
    int rounds;             /* fixpoint rounds run */
    int hit_cap;            /* the last round still changed the graph */
    int stalled;            /* a round left the graph as it began (or its
                               structure, names aside) though passes reported
                               rewrites: stopped there (runner.c) */
    double ms;
    size_t nodes_before;
    size_t nodes_after;
    host_pass_stats *passes; /* owned; one per plan step, plan order */
    size_t count;
    const char *last_changed; /* borrowed: the pass whose call last changed the graph, or NULL */
} host_stage_stats;

struct host_verify;

/* What a run learns of one chosen rewrite (--bisect).  index: the rewrite
 * to record, 0 for the last one of the run.  When the pass did not number
 * its rewrites itself, its whole call is one step: first..last are the
 * indices of the call and matched is "". */
typedef struct host_rewrite_capture {
    uint64_t index;        /* in: which rewrite (0: the last) */
    int found;             /* out: recorded */
    int numbered;          /* the pass asked ph_ctx_rewrite_begin for it */
    int stage;             /* HOST_STAGE_* */
    uint64_t first, last;  /* global indices (first == last when numbered) */
    uint64_t pass_first, pass_last; /* indices within the pass call */
    char *pass;            /* owned (host_rewrite_capture_clear) */
    char *matched;         /* owned; "" when the pass did not say */
    char *removed, *added; /* owned; NULL when the pass did not say */
} host_rewrite_capture;

void host_rewrite_capture_clear(host_rewrite_capture *c);

struct host_region;

/* --report-html: the region each changing pass call changed (dump.h),
 * for the first `max` such calls while the graph has at most `max_nodes`
 * nodes (a snapshot before every call costs a walk of the graph). */
typedef struct host_region_shot {
    int stage;                  /* HOST_STAGE_* */
    const char *pass;           /* borrowed from the descriptor */
    unsigned seq;               /* the pass call's number among the changing ones, from 1 */
    uint64_t first, last;       /* global indices of its rewrites */
    struct host_region *region; /* owned */
} host_region_shot;

typedef struct host_region_list {
    host_region_shot *items;    /* owned */
    size_t count, cap;
    size_t max, max_nodes;      /* set by the caller */
    size_t left_out;            /* changing calls not drawn */
    unsigned seq;
} host_region_list;
void host_region_list_free(host_region_list *l);
/* Where a run is, told as it goes (host_run_opts.progress).  Every member
 * is set; user is passed back.  passhost's worker process publishes these
 * for its supervisor (host_supervise_progress, supervise.h), so the
 * supervisor can name the pass a crash or a hang happened in. */
typedef struct host_run_progress {
    /* A stage (HOST_STAGE_*) starts. */
    void (*stage)(void *user, int stage);
    /* A call of `pass` starts in stage, fixpoint round `round` (0: the
     * run-once passes), with `rewrites` rewrites of the run completed. */
    void (*pass_begin)(void *user, int stage, int round, const char *pass, uint64_t rewrites);
    /* The call returned; `rewrites` of the run are now numbered. */
    void (*pass_end)(void *user, uint64_t rewrites);
    /* Rewrite `index` of the run (the pass_index-th of the call) is
     * complete (the runner keeps a count hook installed for it,
     * ph_ctx_set_count_hook). */
    void (*rewrite)(void *user, uint64_t index, uint64_t pass_index);
    /* The stages are over (the model is checked, saved...). */
    void (*after_stages)(void *user);
    /* With check_every_call: `pass` left a graph that fails the structural
     * check, for `message` (the supervisor's re-run that finds the pass to
     * blame for a crash); may be NULL. */
    void (*blamed)(void *user, const char *pass, const char *message);
    void *user;
} host_run_progress;

/* --bisect's exact audit: after a call of a PH_EXACT pass that changed the
 * graph, every output must be bit for bit what it was before the call
 * (verify.h: host_verify_refresh before such a call, host_verify_exact
 * after it, host_verify_changed after calls of other passes).  The first
 * broken promise is recorded and the run goes on. */
typedef struct host_exact_audit {
    struct host_verify *verify; /* in: the verifier of the loaded model */
    int broken;                 /* out: a pass broke its promise */
    char pass[128];             /* ... this one */
    int stage;                  /* HOST_STAGE_* */
    uint64_t first, last;       /* the rewrites of its call */
    char why[512];              /* the verifier's message */
    int skipped;                /* the evaluator could not run a model on the way: audit stopped */
    char skipped_why[300];
} host_exact_audit;

typedef struct host_run_opts {
    int verify_each;
    /* The structural check (ph_graph_verify, names included) after EVERY
     * pass call, also one that reports no rewrite: the first call that
     * leaves the graph broken fails the stage naming its pass.  Finding
     * the pass to blame for a later failure (job.c, supervise.h). */
    int check_every_call;
    int update_shapes;          /* keep inferred shapes current after each change */
    struct host_verify *verify; /* with verify_each: numeric check after each change (NULL: none);
                                   a PH_EXACT pass must also keep every output bit for bit */
    host_exact_audit *audit;    /* --bisect's exact audit (NULL: none) */
    struct host_log *log; /* borrowed; the cap warning goes here (NULL: none) */
    /* --print-changes: one line per rewrite here (NULL: off):
     *   rewrite 12 [fuse_x #3]: Conv_1, BatchNormalization_2 -> Conv_7 */
    FILE *changes;
    /* --dump-dir: after each pass call that changed the graph, write
     * DIR/NNN-STAGE-PASS.onnx and .mmd (NULL: off); *dump_seq numbers the
     * files across stages (NULL: from 1 in each stage). */
    const char *dump_dir;
    unsigned *dump_seq;
    host_rewrite_capture *capture; /* record one rewrite (NULL: none) */
    struct host_trace *trace;      /* told of every pass call (NULL: none); trace.h */
    /* The violations the passes of a stage with a target profile report
     * (check_target_constraints); cleared when such a stage starts (NULL:
     * logged as warnings). */
    struct host_violations *violations;
    host_region_list *regions;     /* --report-html's diagrams (NULL: none) */
    const host_run_progress *progress; /* told where the run is (NULL: nobody); borrowed */
    /* With changes, dump_dir, capture or regions set, the runner owns the context's
     * rewrite hook (ph_ctx_set_rewrite_hook) while a stage runs. */
} host_run_opts;

/* Run one stage of the plan on m.  stats is filled even on failure (caller
 * frees with host_stage_stats_free).  0 or HOST_EXIT_PASS with a message
 * naming the pass. */
int host_run_stage(ph_model *m, const host_stage_plan *sp, ph_ctx *ctx,
                   const host_run_opts *opts, host_stage_stats *stats, ph_error *err);
void host_stage_stats_free(host_stage_stats *stats);

/* Run every stage of the plan on m with a fresh context that allows `limit`
 * rewrites (< 0: no limit), like `passhost --max-rewrites`.  stats has one
 * entry per stage (HOST_STAGE_COUNT, each freed by the caller even on
 * failure); *rewrites (may be NULL) gets the rewrites numbered in the run.
 * 0 or an exit code as host_run_stage. */
int host_run_all(ph_model *m, const host_plan *plan, int64_t limit, const host_run_opts *opts,
                 host_stage_stats *stats, uint64_t *rewrites, ph_error *err);

#endif
