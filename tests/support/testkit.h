/* tests/support/testkit.h - helpers for pass tests (Check).
 *
 * Load a built pass plugin through the host's real loader, run it the way the
 * host does (params from the descriptor's table, a context, toposort and the
 * verifier afterwards), build small graphs in a line or two, and check a pass
 * numerically through the public harness (passhost/testing.h,
 * ph_test_run_checked): evaluate the model before and after on the same
 * seeded random inputs with the SDK evaluator and compare every output (bit
 * for bit for exact passes, the error budget of --verify for the others).
 *
 * Failures are Check assertions (ck_assert_msg), so these helpers are only
 * for use inside a Check test.  Ownership: a tk_pass is owned by the caller
 * (tk_pass_free); strings returned by tk_graph_sig are malloc'd (caller
 * frees); every builder returns handles borrowed from the model.
 */
#ifndef PASSHOST_TESTS_TESTKIT_H
#define PASSHOST_TESTS_TESTKIT_H

#include <stddef.h>
#include <stdint.h>

#include "config/loader.h"
#include "passhost/host.h"
#include "passhost/passhost.h"
#include "passhost/testing.h"

/* Dims and perms inline: tk_input(g, "x", 2, TK_I64(3, 4)). */
#define TK_I64(...) ((const int64_t[]){__VA_ARGS__})

/* ------------------------------------------------------------ plugins */

typedef struct tk_pass {
    host_registry *reg;       /* owned */
    const host_plugin *plugin; /* borrowed from reg */
    const ph_pass_desc *desc; /* borrowed from the plugin */
    /* Set to 1 for passes that read shapes: tk_pass_run then brings the
     * inferred shapes up to date (ph_graph_update_shapes) before the pass,
     * as the host does before a stage, and again after it, as the host does
     * after every pass that changed something; both must succeed. */
    int shapes;
    /* Parameter values other than the defaults: name, INI text, name,
     * text, ..., NULL (or NULL for none); borrowed. */
    const char *const *params;
} tk_pass;

/* Load PH_BUILD_DIR/plugins/NAME.so and find the pass NAME in it. */
tk_pass *tk_pass_load(const char *name);
void tk_pass_free(tk_pass *p);

/* Run the pass on m's main graph like the host: default params, a context,
 * then ph_graph_toposort and ph_graph_verify, both of which must succeed.
 * Returns the pass's rewrite count (asserting it is not an error). */
int tk_pass_run(const tk_pass *p, ph_model *m);

/* tk_pass_run with a numeric check (ph_test_run_checked): evaluate m before
 * and after on random inputs from seed, compare every output (bit-exact for
 * PH_EXACT passes, the error budget of --verify for the others).  Returns
 * the rewrite count. */
int tk_pass_run_checked(const tk_pass *p, ph_model *m, uint64_t seed);

/* tk_pass_run with a numeric check by the SDK evaluator (ph_eval): m is
 * evaluated before and after the pass on random inputs from seed (float
 * inputs in [-1, 1), int32/int64 inputs in [0, 4), bool inputs 0 or 1), once for each of the n_sizes
 * values in sizes, which is given to every unknown or symbolic input dim
 * (n_sizes 0: sizes 1 and 3 when some input dim is unknown).  Every output
 * must agree as in tk_pass_run_checked.  Returns the rewrite count. */
int tk_pass_run_eval(const tk_pass *p, ph_model *m, uint64_t seed, size_t n_sizes,
                     const int64_t *sizes);

/* Evaluate both models with the SDK evaluator on the same random inputs
 * from seed (every input dim known) and assert their outputs are the same,
 * bit for bit: e.g. a rewritten model against a reference written by hand. */
void tk_assert_same_outputs(const ph_model *want, const ph_model *got, uint64_t seed);

/* Assert the pass changes nothing on m: returns 0 and leaves the graph's
 * signature (tk_graph_sig) and node count as they were. */
void tk_assert_untouched(const tk_pass *p, ph_model *m);

/* For a model the verifier refuses (with a message holding why), so the
 * loader never hands it to a pass: assert so, and that the pass, called on
 * it all the same, changes nothing (as tk_assert_untouched, without the
 * checks after the call). */
void tk_assert_invalid_untouched(const tk_pass *p, ph_model *m, const char *why);

/* ------------------------------------------------------------ builders */

/* A new model, default opset 17.  Caller frees with ph_model_free. */
ph_model *tk_model(void);
/* x[2,3] -> n Identity nodes id0..id(n-1) in a chain -> y, at opset 13,
 * saved to path (the model the host tests run their test passes on). */
void tk_identity_chain_file(const char *path, int n);
/* m saved to a temporary file and loaded back (asserting that both work
 * and that the result verifies); the caller frees it.  The file is gone. */
ph_model *tk_reload(ph_model *m);
/* Infer the shapes of m's main graph (asserting success). */
void tk_infer(ph_model *m);
/* A 1-D int64 initializer of n values. */
ph_value *tk_ints(ph_graph *g, const char *name, size_t n, const int64_t *vals);
/* A float graph input; rank < 0 = unknown rank (dims ignored), dims[i] < 0
 * an unknown dim. */
ph_value *tk_input(ph_graph *g, const char *name, int rank, const int64_t *dims);
/* A float initializer of random values in [-1, 1) from seed. */
ph_value *tk_init(ph_graph *g, const char *name, int rank, const int64_t *dims, uint64_t seed);
/* A default-domain node with one output. */
ph_node *tk_node(ph_graph *g, const char *op, size_t n_in, ph_value *const *inputs);
ph_value *tk_op1(ph_graph *g, const char *op, ph_value *x);
ph_value *tk_op2(ph_graph *g, const char *op, ph_value *a, ph_value *b);
/* Transpose with the given perm; perm NULL = no perm attribute. */
ph_value *tk_transpose(ph_graph *g, ph_value *x, size_t rank, const int64_t *perm);
/* Slice of x with constant int64 operands (n entries each); axes and steps
 * may be NULL (omitted inputs). */
ph_value *tk_slice(ph_graph *g, ph_value *x, size_t n, const int64_t *starts, const int64_t *ends,
                   const int64_t *axes, const int64_t *steps);
/* Relu of a new float input "x" (dim 0 named sym0 when not NULL): a value
 * produced by a node, so a pass under test can bypass to it. */
ph_value *tk_relu_input(ph_graph *g, int rank, const int64_t *dims, const char *sym0);
/* Neg of v as the graph output: v itself stays an inner value. */
void tk_neg_output(ph_graph *g, ph_value *v);
/* Mark v as a graph output. */
void tk_output(ph_graph *g, ph_value *v);
/* Set v's known type to float with the given shape (rank < 0: unknown). */
void tk_set_shape(ph_value *v, int rank, const int64_t *dims);

/* --------------------------------------------------------- inspection */

/* A text signature of g and its subgraphs: every node (op, inputs, outputs,
 * int attributes) in order, and the graph outputs.  Equal signatures mean an
 * untouched graph.  Caller frees. */
char *tk_graph_sig(const ph_graph *g);
/* Op types of g's nodes in order, comma separated, into buf. */
const char *tk_ops(const ph_graph *g, char *buf, size_t size);
/* Nodes of g (not subgraphs) with this op. */
size_t tk_count_op(const ph_graph *g, ph_op op);
/* First node of g with this op, or NULL. */
ph_node *tk_find_op(const ph_graph *g, ph_op op);

#endif
