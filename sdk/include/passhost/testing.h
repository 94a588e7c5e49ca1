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

/* The rule of a checked run of a PH_FP or PH_APPROX pass is the error
 * budget of `passhost --verify` (docs/verify.md): the model before the pass
 * is also evaluated in the evaluator's float64 mode (the reference), and a
 * float output passes when, in each evaluation,
 *     max |after - ref| <= 4 x max |before - ref|
 *                          + 4 x eps(dtype) x max(max |ref|, smallest normal)
 * with NaN and infinities where the output before the pass has them and
 * nowhere else; an integer or bool output must equal the reference wherever
 * the output before the pass does.  A PH_EXACT pass (or opts.exact) must
 * leave every output bit for bit as it was.
 *
 * Fixed tolerances judge instead when opts sets atol or rtol, in
 * ph_test_compare, and when the float64 evaluation fails: an element passes
 * when |after - before| <= atol + rtol * |before| (NaN only against NaN, an
 * infinity only against the same infinity), with these defaults per dtype. */
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
    /* Fixed tolerances for PH_FP / PH_APPROX passes instead of the error
     * budget (either set: both apply, the other at the PH_TEST_ATOL_* /
     * PH_TEST_RTOL_* default of the output's dtype); 0 and 0: the budget. */
    double atol, rtol;
    /* 1: compare bit for bit even for PH_FP and PH_APPROX passes. */
    int exact;

    /* The adapt stage's target profile the pass sees (ph_ctx_profile), or
     * NULL; and where the violations it reports go (ph_ctx_violation; NULL:
     * logged as warnings). */
    const struct ph_target *profile;
    ph_violation_fn violation;
    void *violation_user;
    /* ph_test_case only: 1 runs the pass with ph_test_run (no numeric
     * check), for a model the evaluator cannot run. */
    int unchecked;
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

/* ------------------------------------------------------ graphs as text
 *
 * A test case in a few lines:
 *
 *     ph_error err = {0};
 *     int rc = ph_test_case(ph_test_pass_desc(tp),
 *                           "x: float[2,3]\n"
 *                           "i = Identity(x)\n"
 *                           "y = Relu(i)\n"
 *                           "return y",
 *                           NULL, 1, "y = Relu(x)", &err);
 *
 * The graph text has one item per line (or ';'), '#' starts a comment:
 *   x: float[2,3]            a graph input; dims are numbers, '?' (unknown)
 *                            or a name (symbolic); float[*]: unknown rank
 *   w: const float[3,4]      an initializer of seeded random values (floats
 *                            in [-1, 1), integers in [0, 4))
 *   s: int64[2] = [2, 3]     an initializer of these values (one value fills
 *                            the whole tensor); float[] = [0.5] is a scalar
 *   y = Op(a, _, b) {k=1, f=0.5, s="str", l=[1,2]}
 *   a, b = Op@domain(x)      a node, in the pattern language's statement
 *                            syntax (pattern.h): outputs, op, inputs ('_' is
 *                            an omitted optional input), attributes (an
 *                            integer, a float, a string, or a list of
 *                            integers or floats); the domain is imported
 *                            (version 1) when the model lacks it
 *   opset 13, opset@d 2      the imports (default: opset 17)
 *   return y, z              the graph outputs
 * Every name is defined above its use.  The model's values get the names of
 * the text for inputs and initializers; node outputs get fresh names.
 *
 * The expected result is one or more patterns (pattern.h) separated by
 * lines holding only "--".  The graph is as expected when each pattern
 * matches somewhere in it (with its leaves named like a graph input or
 * initializer bound to that value) and the matched nodes, counted over all
 * patterns, are as many as the graph's nodes: a pattern of two statements
 * says the graph is exactly two such nodes.  As in any pattern, an interior
 * value that is also a graph output is written 'name:shared'. */

/* A new model (caller frees with ph_model_free) from the text above; NULL
 * with err (PH_EINVAL naming the line and column, or PH_ENOMEM). */
PH_API ph_model *ph_test_model_text(const char *text, ph_error *err);

/* 0 when g is as the patterns `expect` say (see above); PH_EVERIFY with err
 * listing the graph's ops when it is not; PH_EINVAL for a pattern that does
 * not parse (err gives the position). */
PH_API int ph_test_graph_is(const ph_graph *g, const char *expect, ph_error *err);

/* One test case: build the model of `graph`, run desc on it checked
 * (ph_test_run_checked, or ph_test_run with opts->unchecked), require
 * `rewrites` rewrites (-1: any number), then require the result to be
 * `expect` (ph_test_graph_is), or, with expect NULL, the graph untouched
 * (the same nodes, inputs, outputs and attributes).  0 when all holds;
 * else the negative code of what failed with err saying what. */
PH_API int ph_test_case(const ph_pass_desc *desc, const char *graph, const ph_test_options *opts,
                        int rewrites, const char *expect, ph_error *err);

#ifdef __cplusplus
}
#endif
#endif
