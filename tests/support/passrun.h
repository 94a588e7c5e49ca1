/* tests/support/passrun.h - pass runs for tests that need parameters, a
 * captured log, or a numeric check with the SDK evaluator.
 *
 * tk_run_with runs a loaded pass once as the host does (parameters from the
 * descriptor's table, one of them set from text; toposort and verify after)
 * and returns its rewrite count; a failing pass fails the test.
 * tk_run_checked does the same between two evaluations of the model on the
 * same seeded inputs (ph_test_run_checked: bit-identical outputs for exact
 * passes, the error budget of --verify for the others).  Output arrays are
 * owned by the caller (tk_free_outs). */
#ifndef PASSHOST_TESTS_PASSRUN_H
#define PASSHOST_TESTS_PASSRUN_H

#include <stddef.h>
#include <stdint.h>

#include "testkit.h"

/* Warnings (and errors) a pass logged: how many, and the last message. */
typedef struct tk_logcap {
    int warnings;
    char last[512];
} tk_logcap;

int tk_run_with(const tk_pass *p, ph_model *m, const char *param, const char *value, tk_logcap *cap);
size_t tk_eval_model(ph_model *m, uint64_t seed, ph_tensor ***outs);
void tk_free_outs(ph_tensor **t, size_t n);
void tk_assert_same(ph_tensor **a, size_t na, ph_tensor **b, size_t nb);
int tk_run_checked(const tk_pass *p, ph_model *m, uint64_t seed, const char *param, const char *value,
                   tk_logcap *cap);

#endif
