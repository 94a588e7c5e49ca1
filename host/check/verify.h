/* host/check/verify.h - numeric verification: the rewritten model must compute
 * what the original computed, within the original's own rounding error.
 *
 * host_verify_new evaluates the model as loaded (before any pass) on the
 * input sets of verify_inputs.h (seeded random inputs that respect the
 * model, or real data folders), twice: as it is (the original) and in the
 * evaluator's float64 reference mode (ph_eval_options.float64: the same
 * inputs and weights, every kernel in double).  Per graph output it keeps
 * the original's error against that reference.
 *
 * host_verify_check evaluates the model as it is now on the same inputs and
 * judges every output (docs/verify.md gives the reasons):
 *   - error budget (the default): a float output's optimized error, the
 *     largest |optimized - reference| over its elements and the input sets,
 *     must stay within budget = budget_factor x the original's error +
 *     budget_ulps x eps(dtype) x max(|reference|, smallest normal); an
 *     integer or bool output must equal the reference wherever the
 *     original does (where it does not, the value hangs on rounding); an
 *     element where the original is NaN or infinite must be the same there,
 *     and a NaN or infinity where the original is finite is a mismatch.
 *   - fixed tolerances (--verify-atol/--verify-rtol, [verify] atol/rtol set,
 *     or when the reference cannot be computed, with a note):
 *     |optimized - original| <= atol + rtol * |original| for floats (NaN
 *     must match NaN), equality for integers and bools.
 * When an input set comes with expected outputs (output_K.pb, NAME.npy),
 * the original's outputs are judged against them the same way (the file's
 * error against the reference within the original's budget), one line per
 * output and set.
 *
 * Exactness: a pass declared PH_EXACT must leave every output bit for bit as
 * it was (a NaN may stay a NaN of other bits).  host_verify_check_pass (for
 * --verify-each) and host_verify_exact (for --bisect) compare with the
 * outputs of the state before the pass, kept by the verifier.
 */
#ifndef PASSHOST_HOST_VERIFY_H
#define PASSHOST_HOST_VERIFY_H

#include <stdio.h>

#include "config/config.h"
#include "passhost/host.h"
#include "passhost/passhost.h"

typedef struct host_verify host_verify;

/* Per graph output, over all input sets. */
typedef struct host_verify_result {
    const char *name;       /* borrowed from the verifier */
    int is_float;           /* float output: errors are magnitudes; else element counts */
    /* optimized against original (what the fixed tolerances judge) */
    double max_abs;
    double max_rel;
    /* against the float64 reference (host_verify_reference) */
    double original_error;  /* floats: max |original - reference|; else elements where they differ */
    double optimized_error; /* floats: max |optimized - reference|; else elements where they differ */
    double budget;          /* floats: what optimized_error may reach; else original_error */
    double scale;           /* floats: max |reference| */
    size_t mismatches;      /* elements beyond the budget (or tolerance), NaN/Inf mismatches included */
    int ok;
} host_verify_result;

/* Per input set with expected outputs, per output the set has. */
typedef struct host_verify_expected {
    const char *set;        /* the data folder (borrowed) */
    const char *file;       /* the file of expected values (borrowed) */
    const char *name;       /* the output (borrowed) */
    int is_float;
    double max_abs;         /* |original - expected| */
    double original_error;  /* against the reference, as host_verify_result */
    double expected_error;  /* the file's error against the reference */
    double budget;
    size_t mismatches;
    int ok;
} host_verify_expected;

/* Make the input sets (cfg), evaluate m on each as it is and in float64.
 * *out is owned by the caller (host_verify_free), also on failure.  0;
 * HOST_EXIT_NOVERIFY when the evaluator cannot run the model (the message
 * names the node and op, and says when symbolic dims at their verification
 * default are the cause) or an input would be too large; HOST_EXIT_CONFIG
 * for a bad range or data folder; HOST_EXIT_MISMATCH when the original does
 * not compute the expected outputs of a data folder (the results say which). */
int host_verify_new(ph_model *m, const host_verify_config *cfg, host_verify **out, ph_error *err);
void host_verify_free(host_verify *v);

/* Evaluate m now and judge it against the original.  0 when every output
 * is within its budget (or tolerance), HOST_EXIT_MISMATCH when one is not
 * (the message names the output and its figures), HOST_EXIT_NOVERIFY when m
 * cannot be evaluated.  The results stay readable (host_verify_results). */
int host_verify_check(host_verify *v, ph_model *m, ph_error *err);

/* --verify-each, after a call of pass `pass` that changed m:
 * host_verify_check, and when exact, every output bit for bit as after the
 * previous call (or as loaded).  A broken promise is HOST_EXIT_MISMATCH
 * with a message naming the output, and host_verify_exact_broken is 1. */
int host_verify_check_pass(host_verify *v, ph_model *m, const char *pass, int exact, ph_error *err);

/* The exact audit of --bisect: host_verify_changed after a call of a pass
 * that is not exact; host_verify_refresh before a call of an exact pass
 * (evaluates m when it changed since the kept outputs); host_verify_exact
 * after that call changed m: compares bits with the kept outputs and keeps
 * m's.  host_verify_snapshot keeps m's outputs; host_verify_same_bits
 * compares m's with the kept ones (HOST_EXIT_MISMATCH when any bit differs)
 * and keeps nothing. */
void host_verify_changed(host_verify *v);
int host_verify_refresh(host_verify *v, ph_model *m, ph_error *err);
int host_verify_exact(host_verify *v, ph_model *m, const char *pass, ph_error *err);
int host_verify_snapshot(host_verify *v, ph_model *m, ph_error *err);
int host_verify_same_bits(host_verify *v, ph_model *m, ph_error *err);
int host_verify_exact_broken(const host_verify *v);

/* A pass that declares a precision (ph_pass_desc.precision, e.g. float16)
 * changed the model: from now on the budgets allow that dtype's rounding
 * (ph_error_budget; the least precise such dtype wins).  v may be NULL.
 * host_verify_precision: that dtype, or 0. */
void host_verify_lower_precision(host_verify *v, int dtype);
int host_verify_precision(const host_verify *v);

const host_verify_result *host_verify_results(const host_verify *v, size_t *count);
const host_verify_expected *host_verify_expected_results(const host_verify *v, size_t *count);
/* 1 when the float64 reference was computed; else 0 and *why (may be NULL)
 * gets the reason (borrowed). */
int host_verify_reference(const host_verify *v, const char **why);
/* 1 when the budget judges the outputs (0: the fixed tolerances). */
int host_verify_uses_budget(const host_verify *v);
/* The input sets: their count, whether they are real data, and the notes
 * on how the random inputs were made (verify_inputs.h). */
size_t host_verify_set_count(const host_verify *v);
int host_verify_from_data(const host_verify *v);
const char *const *host_verify_input_notes(const host_verify *v, size_t *count);

/* With checked (a check ran): the notes on the random inputs and the
 * per-output lines of the last check,
 *   output NAME  original error E  optimized error E  budget B  [MISMATCH]
 * (or max abs / max rel against the original with fixed tolerances); then,
 * always, one line per expected output of a data folder. */
void host_verify_print(FILE *out, const host_verify *v, int checked);
/* The same without the per-output lines (the default report: the notes on
 * the inputs and the data folders' lines only). */
void host_verify_print_notes(FILE *out, const host_verify *v, int checked);

#endif
