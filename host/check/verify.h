/* host/check/verify.h - numeric verification: the rewritten model must compute what
 * the original computed.
 *
 * host_verify_new evaluates the model as loaded (before any pass) on `runs`
 * sets of seeded random inputs and keeps the inputs and outputs.
 * host_verify_check evaluates the model as it is now on the same inputs and
 * compares every output: |got - want| <= atol + rtol * |want| for floats
 * (NaN must match NaN), equality for integers and bools.  Inputs take the
 * dtype and dims the graph input has after user shapes and inference; a
 * dim that is still unknown or symbolic is 1.
 */
#ifndef PASSHOST_HOST_VERIFY_H
#define PASSHOST_HOST_VERIFY_H

#include <stdio.h>

#include "config/config.h"
#include "passhost/passhost.h"

typedef struct host_verify host_verify;

/* Per graph output: the largest errors seen over all runs. */
typedef struct host_verify_result {
    const char *name; /* borrowed from the verifier */
    double max_abs;
    double max_rel;
    size_t mismatches; /* elements outside the tolerance */
} host_verify_result;

/* Evaluate m on cfg->runs seeded input sets.  *out is owned by the caller
 * (host_verify_free).  0, or HOST_EXIT_NOVERIFY when the evaluator cannot run
 * the model (the message names the node and op). */
int host_verify_new(ph_model *m, const host_verify_config *cfg, host_verify **out, ph_error *err);
void host_verify_free(host_verify *v);

/* Evaluate m now and compare with the reference.  0 when every output is
 * within tolerance, HOST_EXIT_MISMATCH when one is not (the message names the
 * output and the error), HOST_EXIT_NOVERIFY when m cannot be evaluated.
 * The results stay readable through host_verify_results. */
int host_verify_check(host_verify *v, ph_model *m, ph_error *err);
const host_verify_result *host_verify_results(const host_verify *v, size_t *count);

/* Print "output NAME: max abs E, max rel E" lines after a check. */
void host_verify_print(FILE *out, const host_verify *v);

#endif
