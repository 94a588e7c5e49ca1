/* tests/support/passcase.h - pass tests on the public harness
 * (passhost/testing.h): a case is a graph as text, the rewrites expected
 * and the result as a pattern (NULL: untouched), checked by ph_test_case
 * (numeric check with the error budget of --verify, bit for bit for exact
 * passes).
 *
 *     static const ph_pass_desc *pass;   // PASS_FIXTURE("eliminate_identity")
 *     PC_CASE("x: float[2,3]; i = Identity(x); y = Relu(i); return y", 1, "y = Relu(x)");
 *
 * Failures are Check assertions, so these are for use inside a Check test. */
#ifndef PASSHOST_TESTS_PASSCASE_H
#define PASSHOST_TESTS_PASSCASE_H

#include <check.h>
#include <stdio.h>

#include "passhost/passhost.h"
#include "passhost/testing.h"

/* The loaded plugin and its descriptor, for the cases of one test file. */
static ph_test_pass *pc_plugin;
static const ph_pass_desc *pass;

/* Load PH_BUILD_DIR/plugins/NAME.so (asserting success). */
static inline void pc_load(const char *name)
{
    char path[4096];
    ph_error err = {0};
    snprintf(path, sizeof path, "%s/plugins/%s.so", PH_BUILD_DIR, name);
    int rc = ph_test_load_pass(path, name, &pc_plugin, &err);
    ck_assert_msg(rc == 0, "loading %s: %s", path, err.message);
    pass = ph_test_pass_desc(pc_plugin);
}

static inline void pc_unload(void)
{
    ph_test_pass_free(pc_plugin);
    pc_plugin = NULL;
    pass = NULL;
}

/* A model from `text` whose output y is produced by an If (written
 * "y = If(cond)" in the text), with two empty bodies for the caller to fill
 * with the IR calls (the text has no subgraphs).  Caller frees. */
static inline ph_model *pc_if_model(const char *text, ph_graph **then_g, ph_graph **else_g)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(text, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ph_node *iff = ph_value_producer(ph_graph_output(ph_model_graph(m), 0));
    ck_assert_int_eq(ph_node_op(iff), PH_OP_If);
    *then_g = ph_node_add_subgraph(iff, "then_branch");
    *else_g = ph_node_add_subgraph(iff, "else_branch");
    ck_assert(*then_g && *else_g);
    return m;
}

/* Run the pass to a fixpoint without the numeric check (the evaluator has
 * no If), asserting `rewrites`. */
static inline void pc_run_structure(ph_model *m, int rewrites)
{
    ph_error err = {0};
    ph_test_options o = {.max_iterations = 4};
    int rc = ph_test_run(pass, m, &o, NULL, &err);
    ck_assert_msg(rc == rewrites, "%d rewrites, expected %d: %s", rc, rewrites, err.message);
}

/* Assert that g is as the patterns `expect` say (ph_test_graph_is). */
#define PC_GRAPH_IS(g, expect)                                                                     \
    do {                                                                                           \
        ph_error pc_err_ = {0};                                                                    \
        ck_assert_msg(ph_test_graph_is(g, expect, &pc_err_) == 0, "%s", pc_err_.message);          \
    } while (0)

/* setup/teardown of a TCase whose tests run the pass NAME. */
#define PASS_FIXTURE(name)                                                                         \
    static void setup(void) { pc_load(name); }                                                     \
    static void teardown(void) { pc_unload(); }

/* The options of PC_CASE: the pass runs again while it rewrites (up to 4
 * times), so a pass that is not idempotent shows more rewrites than the
 * case expects. */
static const ph_test_options pc_defaults = {.max_iterations = 4};
/* The same without the numeric check: for a model the evaluator cannot run
 * (a rank it cannot know, shapes ONNX does not allow). */
static const ph_test_options pc_unchecked = {.max_iterations = 4, .unchecked = 1};

/* Without shape inference either: for an invalid model, which inference
 * refuses (the pass then sees the declared shapes). */
static const ph_test_options pc_no_shapes = {.max_iterations = 4, .unchecked = 1, .no_shapes = 1};

/* How a table row runs: checked (the default), unchecked, or without
 * shapes (pc_defaults, pc_unchecked, pc_no_shapes). */
enum { PC_CHECKED = 0, PC_UNCHECKED = 1, PC_NO_SHAPES = 2 };
static inline const ph_test_options *pc_opts(int mode)
{
    return mode == PC_NO_SHAPES ? &pc_no_shapes : mode == PC_UNCHECKED ? &pc_unchecked : &pc_defaults;
}

/* One case with options (NULL: a single run, nothing else). */
#define PC_CASE_OPTS(opts, graph, rewrites, expect)                                                \
    do {                                                                                           \
        ph_error pc_err_ = {0};                                                                    \
        int pc_rc_ = ph_test_case(pass, graph, opts, rewrites, expect, &pc_err_);                  \
        ck_assert_msg(pc_rc_ == 0, "%s", pc_err_.message);                                         \
    } while (0)
#define PC_CASE(graph, rewrites, expect) PC_CASE_OPTS(&pc_defaults, graph, rewrites, expect)
/* The pass leaves the graph as it is. */
#define PC_UNTOUCHED(graph) PC_CASE_OPTS(&pc_defaults, graph, 0, NULL)
#define PC_UNTOUCHED_UNCHECKED(graph) PC_CASE_OPTS(&pc_unchecked, graph, 0, NULL)
/* The pass leaves the graph as it is, run as `mode` says (PC_CHECKED...). */
#define PC_UNTOUCHED_AS(mode, graph) PC_CASE_OPTS(pc_opts(mode), graph, 0, NULL)

/* The model of `text` (asserting it builds), for a case that sets what the
 * text cannot say (a declared shape on a node output, a body).  Caller
 * frees. */
static inline ph_model *pc_model(const char *text)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(text, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    return m;
}

/* Output 0 of the k-th node (0-based, in the text's order) of m's main graph. */
static inline ph_value *pc_node_output(ph_model *m, size_t k)
{
    ph_node *n = ph_graph_first_node(ph_model_graph(m));
    for (size_t i = 0; n && i < k; i++)
        n = ph_node_next(n);
    ck_assert_ptr_nonnull(n);
    return ph_node_output(n, 0);
}

/* The model of `graph` after one run of the pass (ph_test_run, no numeric
 * check), asserting `rewrites`: for what a pattern cannot say (the names
 * of graph outputs, the initializers left).  Caller frees. */
static inline ph_model *pc_run_text(const char *graph, int rewrites)
{
    ph_error err = {0};
    ph_model *m = pc_model(graph);
    int rc = ph_test_run(pass, m, NULL, NULL, &err);
    ck_assert_msg(rc == rewrites, "%d rewrites, expected %d: %s", rc, rewrites, err.message);
    return m;
}

/* The pass keeps the name of graph output 0 of `graph` (one run, asserting
 * `rewrites`). */
#define PC_OUTPUT_NAME_KEPT(graph, rewrites)                                                       \
    do {                                                                                           \
        ph_error pc_err_ = {0};                                                                    \
        ph_model *pc_m_ = ph_test_model_text(graph, &pc_err_);                                     \
        ck_assert_msg(pc_m_ != NULL, "%s", pc_err_.message);                                       \
        char pc_name_[256];                                                                        \
        snprintf(pc_name_, sizeof pc_name_, "%s", ph_value_name(ph_graph_output(ph_model_graph(pc_m_), 0))); \
        int pc_rc_ = ph_test_run(pass, pc_m_, NULL, NULL, &pc_err_);                               \
        ck_assert_msg(pc_rc_ == (rewrites), "%d rewrites: %s", pc_rc_, pc_err_.message);           \
        ck_assert_str_eq(ph_value_name(ph_graph_output(ph_model_graph(pc_m_), 0)), pc_name_);      \
        ph_model_free(pc_m_);                                                                      \
    } while (0)

/* After one run of the pass on `graph` (asserting `rewrites`), the main
 * graph has n initializers (the constants the pass made dead are gone). */
#define PC_INITIALIZERS_AFTER(graph, rewrites, n)                                                  \
    do {                                                                                           \
        ph_model *pc_m_ = pc_run_text(graph, rewrites);                                            \
        ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(pc_m_)), n);                   \
        ph_model_free(pc_m_);                                                                      \
    } while (0)

#endif
