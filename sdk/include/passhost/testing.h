/* passhost/testing.h - test a pass in C against the installed SDK.
 *
 * Load a built plugin (or take a descriptor compiled into the test), run it
 * on an in-memory model the way the host does, and check numerically that
 * it changed nothing it should not have:
 *
 *     #include <passhost/passhost.h>
 *     #include <passhost/testing.h>
 *
 *     ph_test_pass *tp;
 *     ph_error err = {0};
 *     if (ph_test_load_pass("build/my_pass.so", "my_pass", &tp, &err) < 0) { ... }
 *     ph_model *m = build_my_model();
 *     ph_test_result res;
 *     int rc = ph_test_run_checked(ph_test_pass_desc(tp), m, NULL, &res, &err);
 *     // rc: rewrites (>= 0), PH_EVERIFY with res.mismatch = 1 when an
 *     // output changed, or another PH_E* code; err says what and where.
 *     ph_model_free(m);
 *     ph_test_pass_free(tp);
 *
 * A run is what the host does with one pass: the parameters start from the
 * defaults of the descriptor's table (ph_params_new) and take the
 * "name=value" overrides of the options; the model's shapes are brought up
 * to date (ph_graph_update_shapes) unless the options say not to; the pass
 * runs with a fresh context (a pattern pass, one with .rules, through
 * ph_ruleset_new + ph_ruleset_run); then ph_graph_toposort and
 * ph_graph_verify must succeed, and the shapes are updated again when the
 * pass changed something.
 *
 * A checked run evaluates the model with the SDK evaluator (eval.h) before
 * and after that run, on the same seeded random inputs, and compares every
 * graph output: dtype and shape always; values bit for bit for a PH_EXACT
 * pass (and for integer and bool outputs of any pass); float values within
 * a tolerance for PH_FP and PH_APPROX passes.
 *
 * Nothing here aborts or prints (except the pass's own log, which goes to
 * stderr unless the options give a log function): every function returns 0
 * or a count, or a negative PH_E* code with a one-line message in err.
 * Nothing keeps global state.
 */
#ifndef PASSHOST_TESTING_H
#define PASSHOST_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/error.h"
#include "passhost/ir.h"
#include "passhost/host.h"
#include "passhost/plugin.h"
#include "passhost/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- plugins */

typedef struct ph_test_pass ph_test_pass;

/* dlopen the plugin so_path, find its entry symbol (PH_PASS_ENTRY_SYMBOL),
 * check the ABI major and the descriptor (name, run xor rules, stages,
 * exactness; a pattern pass's rules are compiled once to check them), and
 * with pass_name not NULL check that this is the pass it defines.  The
 * descriptor is copied as the host copies it: only its first struct_size
 * bytes, the rest zero.  On success *out is a new handle the caller frees
 * with ph_test_pass_free (which unloads the plugin).  Errors:
 * PH_EIO (cannot dlopen: dlerror's text in err), PH_ENOTFOUND (no entry
 * symbol, or another pass name), PH_EUNSUPPORTED (another ABI major),
 * PH_EINVAL (malformed descriptor or rules), PH_ENOMEM. */
PH_API int ph_test_load_pass(const char *so_path, const char *pass_name, ph_test_pass **out,
                             ph_error *err);
/* Unload.  Descriptors and strings from the handle are invalid afterwards.
 * NULL allowed. */
PH_API void ph_test_pass_free(ph_test_pass *p);
/* The handle's descriptor (borrowed, valid until ph_test_pass_free). */
PH_API const ph_pass_desc *ph_test_pass_desc(const ph_test_pass *p);

/* --------------------------------------------------------------- options */

/* Default tolerances of a checked run of a PH_FP or PH_APPROX pass, per
 * output dtype: an element passes when |after - before| <= atol +
 * rtol * |before| (NaN only against NaN, an infinity only against the same
 * infinity). */
#define PH_TEST_ATOL_FLOAT 1e-5
#define PH_TEST_RTOL_FLOAT 1e-4
#define PH_TEST_ATOL_DOUBLE 1e-12
#define PH_TEST_RTOL_DOUBLE 1e-10
#define PH_TEST_ATOL_FLOAT16 1e-2
#define PH_TEST_RTOL_FLOAT16 1e-2  /* float16 has 11 significant bits */
#define PH_TEST_ATOL_BFLOAT16 5e-2
#define PH_TEST_RTOL_BFLOAT16 5e-2 /* bfloat16 has 8 */

/* Options of a run; NULL, or a zero-initialized struct, means the defaults
 * given in each comment.  Everything is borrowed for the call. */
typedef struct ph_test_options {
    /* Parameter overrides, "name=value" in INI syntax, ending with NULL; or
     * NULL for the defaults. */
    const char *const *params;
    /* The adapt stage's target the pass sees (ph_ctx_target); NULL: "". */
    const char *target;
    /* 0: run once (the default).  N > 1: run again while the pass reports
     * rewrites, at most N times, as the host does up to a fixpoint. */
    int max_iterations;
    /* 1: do not infer or update shapes around the run (the host always
     * does; set this only for a pass that must work without shapes). */
    int no_shapes;
    /* Messages of the pass (ph_log, ph_ctx_error); NULL: stderr. */
    ph_log_fn log;
    void *log_user;

    /* Checked runs only. */
    uint64_t seed; /* seeds the random inputs (0 is a seed like any other) */
    /* The size given to every unknown or symbolic input dim, one evaluation
     * per entry; n_sizes 0: {1, 3} when some input dim is not known, one
     * evaluation otherwise. */
    const int64_t *sizes;
    size_t n_sizes;
    /* Inputs to use instead of random ones: one entry per graph input of
     * the model (ph_graph_input_count), NULL entries random; or NULL.  A
     * given input is used as is for every size. */
    const ph_tensor *const *inputs;
    /* Tolerance of PH_FP / PH_APPROX passes for every float dtype; 0: the
     * PH_TEST_ATOL_* / PH_TEST_RTOL_* default of the output's dtype. */
    double atol, rtol;
    /* 1: compare bit for bit even for PH_FP and PH_APPROX passes. */
    int exact;

    /* The adapt stage's target profile the pass sees (ph_ctx_profile), or
     * NULL; and where the violations it reports go (ph_ctx_violation; NULL:
     * logged as warnings). */
    const struct ph_target *profile;
    ph_violation_fn violation;
    void *violation_user;
} ph_test_options;

/* What a run did and, for a checked run, how the outputs compared. */
typedef struct ph_test_result {
    int rewrites;   /* the pass's rewrites, summed over iterations */
    int iterations; /* times the pass ran */
    /* checked runs: */
    size_t evaluations;  /* before/after pairs compared (one per size) */
    int mismatch;        /* 1 when an output disagreed */
    /* The output with the worst disagreement (the first one that failed,
     * else the one with the largest absolute error); -1 when none. */
    ptrdiff_t output;
    char output_name[256];
    int64_t element;     /* its flat index (row major); -1 for a dtype or
                            shape mismatch, or when no element differs */
    double before, after; /* that element before and after the pass */
    int64_t size;        /* the size of unknown dims in that evaluation (0: none) */
    /* Largest errors over every numeric output and every evaluation:
     * |after - before| and |after - before| / |before| (infinity when
     * before is 0 and after is not; both infinity for a NaN or infinity that
     * disagrees). */
    double max_abs_err, max_rel_err;
} ph_test_result;

/* ------------------------------------------------------------------- runs */

/* Run the pass desc (from ph_test_pass_desc, or a ph_pass_desc compiled
 * into the test; only its first struct_size bytes are read) on m's main
 * graph as described at the top.  Returns the rewrite count, or a negative
 * code with err saying why: PH_EINVAL (bad descriptor or options),
 * PH_ENOTFOUND / PH_EINVAL (an override names no parameter or does not
 * parse), the pass's own code when it fails (its ph_ctx_error message in
 * err), PH_EVERIFY (the graph does not sort or verify after the pass, or its
 * shapes contradict each other before or after).  res may be NULL; it is
 * filled in either case. */
PH_API int ph_test_run(const ph_pass_desc *desc, ph_model *m, const ph_test_options *opts,
                       ph_test_result *res, ph_error *err);

/* ph_test_run between two evaluations of m (see the top).  Returns the
 * rewrite count when every output agrees; PH_EVERIFY with res->mismatch = 1
 * and err naming the output, the element and both values when one does
 * not; PH_EVERIFY also when the pass changed the graph's inputs or outputs
 * count; PH_EINVAL for an input whose rank is unknown; PH_EUNSUPPORTED for
 * an input dtype the generator cannot fill (string, complex) or a model the
 * evaluator cannot run (err names the node); or ph_test_run's errors. */
PH_API int ph_test_run_checked(const ph_pass_desc *desc, ph_model *m, const ph_test_options *opts,
                               ph_test_result *res, ph_error *err);

/* Compare two output sets (na and nb tensors, borrowed) as a checked run
 * does for exactness ex with opts' tolerances (opts may be NULL); fills res's
 * comparison fields (mismatch, output, element, before, after, max errors;
 * output_name stays empty).  0 when they agree, PH_EVERIFY with err saying
 * where when not. */
PH_API int ph_test_compare(ph_tensor *const *a, size_t na, ph_tensor *const *b, size_t nb,
                           ph_exactness ex, const ph_test_options *opts, ph_test_result *res,
                           ph_error *err);

/* Fill inputs[i] for every graph input i of g with a new random tensor of
 * its type (the caller frees each with ph_tensor_free), as a checked run
 * does: floats uniform in [-1, 1) (exactly representable in the dtype),
 * integers in [0, 4), bools 0 or 1; an unknown or symbolic dim gets `size`.
 * An input that has an initializer gets NULL (the evaluator then uses the
 * initializer).  The same (g's input types, seed, size) give the same
 * tensors.  0, or PH_EINVAL / PH_EUNSUPPORTED / PH_ENOMEM (inputs then all
 * NULL). */
PH_API int ph_test_random_inputs(const ph_graph *g, uint64_t seed, int64_t size, ph_tensor **inputs,
                                 ph_error *err);

#ifdef __cplusplus
}
#endif
#endif
