/* host/run/bisect.h - `passhost --bisect`: find the first rewrite after which
 * the model computes other outputs (LLVM's opt-bisect, on numbered
 * rewrites).
 *
 * The whole pipeline runs first on the loaded model and counts its rewrites
 * T.  If the result verifies (host_verify_check: the tolerances of [verify]),
 * that is said and the answer is 0.  Otherwise N is binary-searched in
 * [0, T]: each probe loads the input model again, applies the input shapes,
 * runs the stages with the rewrite limit N (host_run_all) and verifies
 * against the original.  The answer is the first k such that the first k-1
 * rewrites verify and the first k do not; a one-line error names k, the
 * pass, the rewrite's index within the pass call and the nodes it matched,
 * and the code is HOST_EXIT_MISMATCH.  For a pass that does not number its
 * rewrites, a whole call is one step and the message says so.
 *
 * With an output folder, a reproducer is written there: before.onnx (the
 * first k-1 rewrites), after.onnx (k), config.ini (the effective
 * configuration, every key; `passhost DIR/config.ini --max-rewrites K`
 * reproduces either file) and README.txt (the finding, the verification
 * seed and tolerances, the commands).  Nothing else is written: not the
 * output model, and never the input.
 */
#ifndef PASSHOST_HOST_BISECT_H
#define PASSHOST_HOST_BISECT_H

#include <stdio.h>

#include "config/config.h"
#include "config/plan.h"
#include "io/cut.h"
#include "run/runner.h"
#include "log/log.h"
#include "check/verify.h"

typedef struct host_bisect_job {
    const char *out_dir;     /* --bisect-out: the reproducer's folder (NULL: none) */
    int print_changes;       /* --print-changes: the full run's rewrites on stderr */
    const char *dump_dir;    /* --dump-dir: the full run's dumps (NULL: none) */
    int argc;                /* the command line, for the reproducer's README */
    char **argv;
    const host_run_progress *progress; /* every probe tells it where it is (NULL: nobody) */
    const host_cut *cut;     /* --inputs/--outputs: reloads are cut the same way (NULL: no cut) */
    const host_config *cfg;
    const host_plan *plan;
    host_log *log;
    host_verify *verify;     /* reference outputs of the model as loaded */
    host_verify_config vcfg; /* the tolerances and seed it was made with */
    ph_model *model;         /* the loaded model (shapes applied): the full run changes it */
    FILE *out;               /* progress lines (NULL: none) */
} host_bisect_job;

/* 0 when the whole run verifies; HOST_EXIT_MISMATCH naming the first bad
 * rewrite; or another exit code (a pass failed, the evaluator cannot run a
 * model, the reproducer cannot be written). */
int host_bisect(const host_bisect_job *job, ph_error *err);

#endif
