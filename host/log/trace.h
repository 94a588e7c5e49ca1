/* host/log/trace.h - what a run did, call by call, and the progress line.
 *
 * The stage runner tells a host_trace (host_run_opts.trace) when each pass
 * call begins and ends.  The trace keeps one record per call (for the
 * timeline of --report-json and --report-html) and, when it was given a
 * terminal, keeps one line on it up to date once the run has taken more
 * than a second:
 *
 *   passhost: optimize round 3: fuse_conv_bn (12/40), 1,204,311 nodes, 4.2 s
 *
 * Outside the stages the line names the phase of the run instead, drawn as
 * soon as the phase begins (a phase is one long call, with no pass calls
 * to redraw it) once the run has taken a second, and at once for the runs
 * of --verify (each a whole evaluation of the model):
 *
 *   passhost: verify: evaluating the original, run 2 of 3, 6.1 s
 *   passhost: saving the output, 2.3 s
 *
 * The line is redrawn at most ten times a second and erased by
 * host_trace_clear_line (the log calls it before it writes to the same
 * terminal, and the report before it prints).  Nothing is printed when the
 * trace has no terminal (stderr is not one, or -q).
 *
 * Ownership: a host_trace is the caller's (host_trace_init/free); records
 * borrow the pass names from the plugins' descriptors, so the registry must
 * outlive the trace.
 */
#ifndef PASSHOST_HOST_TRACE_H
#define PASSHOST_HOST_TRACE_H

#include <stddef.h>
#include <stdio.h>

/* One pass call. */
typedef struct host_call_record {
    int stage;           /* HOST_STAGE_* */
    int round;           /* fixpoint round from 1; 0 for a run-once pass */
    size_t step;         /* index of the pass in the stage plan */
    const char *pass;    /* borrowed from the descriptor */
    double start_ms;     /* from host_trace_init */
    double ms;           /* the pass's run() */
    double check_ms;     /* sort, shape update and --verify-each after it */
    long long rewrites;  /* what run() returned; < 0: the call failed */
    size_t nodes_before;
    size_t nodes_after;
} host_call_record;

typedef struct host_trace {
    double t0;
    host_call_record *calls; /* owned */
    size_t count, cap;
    FILE *tty;               /* borrowed: the terminal of the progress line, or NULL */
    int shown;               /* the line is on the terminal now */
    double last_draw;
    int stage, round;        /* where the run is */
    size_t step, steps;
    const char *pass;
    size_t nodes;
    const char *phase;       /* static text of the phase outside the stages, or NULL */
    int phase_run, phase_runs; /* run k of n within the phase (0: none) */
} host_trace;

/* Start a trace at time now.  tty: the stream of the progress line (a
 * terminal), or NULL for none. */
void host_trace_init(host_trace *t, FILE *tty);
void host_trace_free(host_trace *t);

/* The stream for a progress line: stderr when it is a terminal and not
 * quiet, else NULL. */
FILE *host_trace_terminal(int quiet);

/* The runner's calls around one pass call: step of steps in the stage plan;
 * pass_ms is the pass's accumulated time (host_pass_stats.ms) before and
 * after the call, so the record gets the call's own time. */
void host_trace_call_begin(host_trace *t, int stage, int round, size_t step, size_t steps,
                           const char *pass, size_t nodes, double pass_ms);
void host_trace_call_end(host_trace *t, long long rewrites, size_t nodes, double pass_ms);

/* The phase the run is in outside the stages ("loading the model",
 * "verify: evaluating the original"; static text; NULL: none).  The
 * runner's next pass call ends it. */
void host_trace_phase(host_trace *t, const char *phase);
/* Run k of n of the current trace's phase (below), drawn at once: for code
 * under the job (the verifier's runs) that is not handed the trace.
 * Nothing when no phase is set. */
void host_trace_phase_step(int run, int runs);
/* The trace host_trace_phase_step reports to (the job sets its own; NULL:
 * none). */
void host_trace_set_current(host_trace *t);

/* Erase the progress line if it is shown (NULL allowed). */
void host_trace_clear_line(host_trace *t);

#endif
