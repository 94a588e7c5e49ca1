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
#include <string.h>

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

/* An inference BatchNormalization of v over C <= 8 channels in body g
 * (fixed parameters, variance positive), for the If bodies the text cannot
 * write; returns its output. */
static inline ph_value *pc_body_bn(ph_graph *g, ph_value *v, int64_t C)
{
    static const float vals[4][8] = {{0.9f, -1.2f, 0.5f, 1.4f, -0.7f, 1.1f, 0.6f, -0.8f},
                                     {0.1f, -0.3f, 0.25f, 0.4f, -0.15f, 0.2f, 0.05f, -0.1f},
                                     {0.2f, 0.1f, -0.4f, 0.3f, 0.0f, -0.2f, 0.15f, 0.35f},
                                     {0.6f, 1.3f, 0.9f, 1.5f, 1.1f, 0.7f, 1.2f, 0.8f}};
    static const char *const names[4] = {"bn_scale", "bn_bias", "bn_mean", "bn_var"};
    ck_assert_int_le(C, 8);
    ph_value *p[5] = {v};
    for (int i = 0; i < 4; i++) {
        p[i + 1] = ph_graph_add_initializer(g, names[i], ph_tensor_new(PH_DT_FLOAT, 1, &C, vals[i]));
        ck_assert_ptr_nonnull(p[i + 1]);
    }
    ph_node *n = ph_node_create(g, NULL, "BatchNormalization", 5, p, 1);
    ck_assert_ptr_nonnull(n);
    return ph_node_output(n, 0);
}

/* Run the pass to a fixpoint without the numeric check, asserting
 * `rewrites`: for a pass that changes values by design (its structure is
 * what the case checks); pc_run_checked otherwise. */
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

/* Run the pass to a fixpoint between two evaluations of m (the numeric
 * check of ph_test_run_checked), asserting `rewrites`: for models built
 * with the IR or read from a file. */
static inline void pc_run_checked(ph_model *m, int rewrites)
{
    ph_error err = {0};
    int rc = ph_test_run_checked(pass, m, &pc_defaults, NULL, &err);
    ck_assert_msg(rc == rewrites, "%d rewrites, expected %d: %s", rc, rewrites, err.message);
}

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

/* Fill the empty body `body` of a node of m's main graph from `text`, a
 * graph in the text form whose inputs stand for the values of that name in
 * the main graph (graph inputs and initializers: node outputs get fresh
 * names) and whose initializers, nodes and outputs become the body's.  For
 * the If cases: the text has no subgraphs of its own. */
static inline void pc_body_text(ph_graph *body, ph_model *m, const char *text)
{
    enum { MAX = 256 };
    ph_value *from[MAX], *to[MAX];
    size_t n = 0;
    ph_model *src = pc_model(text);
    ph_graph *sg = ph_model_graph(src);
    for (size_t i = 0; i < ph_graph_input_count(sg); i++) {
        ph_value *v = ph_graph_input(sg, i);
        ph_value *outer = ph_graph_find_value(ph_model_graph(m), ph_value_name(v));
        ck_assert_msg(outer != NULL, "the body reads '%s', which the main graph lacks", ph_value_name(v));
        from[n] = v, to[n++] = outer;
    }
    for (size_t i = 0; i < ph_graph_initializer_count(sg); i++) {
        ph_value *v = ph_graph_initializer(sg, i);
        from[n] = v;
        to[n++] = ph_graph_add_initializer(body, ph_value_name(v), ph_tensor_clone(ph_value_const(v)));
        ck_assert_ptr_nonnull(to[n - 1]);
    }
    for (ph_node *s_n = ph_graph_first_node(sg); s_n; s_n = ph_node_next(s_n)) {
        ph_value *in[16] = {0};
        size_t n_in = ph_node_input_count(s_n), n_out = ph_node_output_count(s_n);
        ck_assert_uint_le(n_in, 16);
        for (size_t k = 0; k < n_in; k++)
            for (size_t j = 0; j < n && ph_node_input(s_n, k); j++)
                if (from[j] == ph_node_input(s_n, k))
                    in[k] = to[j];
        ph_node *d = ph_node_create(body, NULL, ph_node_op_type(s_n), n_in, in, n_out);
        ck_assert_ptr_nonnull(d);
        const char *domain = ph_node_domain(s_n);
        if (*domain) {
            if (ph_model_opset(m, domain) < 0)
                ck_assert_int_eq(ph_model_set_opset(m, domain, ph_model_opset(src, domain)), 0);
            ck_assert_int_eq(ph_node_set_domain(d, domain), 0);
        }
        ck_assert_int_eq(ph_node_copy_attrs(d, s_n), 0);
        for (size_t k = 0; k < n_out; k++) {
            ck_assert_uint_lt(n, MAX);
            from[n] = ph_node_output(s_n, k), to[n++] = ph_node_output(d, k);
        }
    }
    for (size_t i = 0; i < ph_graph_output_count(sg); i++)
        for (size_t j = 0; j < n; j++)
            if (from[j] == ph_graph_output(sg, i))
                ck_assert_int_eq(ph_graph_add_output(body, to[j]), 0);
    ph_model_free(src);
}

/* pc_if_model with both bodies from text (pc_body_text). */
static inline ph_model *pc_if_text(const char *text, const char *then_text, const char *else_text, ph_graph **then_g,
                                   ph_graph **else_g)
{
    ph_model *m = pc_if_model(text, then_g, else_g);
    pc_body_text(*then_g, m, then_text);
    pc_body_text(*else_g, m, else_text);
    return m;
}

/* PC_UNTOUCHED_AS, and the model still does not import `domain` (a pass
 * that imports the domain of its replacement must not when it replaces
 * nothing). */
static inline void pc_untouched_without_import(int mode, const char *graph, const char *domain)
{
    PC_UNTOUCHED_AS(mode, graph);
    ph_model *m = pc_model(graph);
    ph_error err = {0};
    ck_assert_int_eq(ph_test_run(pass, m, pc_opts(mode), NULL, &err), 0);
    ck_assert_int_eq(ph_model_opset(m, domain), -1);
    ph_model_free(m);
}

/* A model the verifier refuses (with a message holding `why`), so the
 * loader never hands it to a pass: assert so, and that the pass, called on
 * it all the same (ph_test_run, no shapes), rewrites nothing and leaves the
 * graph as `expect` says.  For a case ph_test_case cannot run: it builds
 * only models that verify. */
static inline void pc_invalid_untouched(const char *text, const char *why, const char *expect)
{
    ph_error err = {0};
    ph_model *m = pc_model(text);
    ck_assert_int_ne(ph_graph_verify(ph_model_graph(m), &err), 0);
    ck_assert_msg(strstr(err.message, why), "'%s' not in: %s", why, err.message);
    ph_test_options o = {.no_shapes = 1};
    ph_test_result res;
    ck_assert_int_eq(ph_test_run(pass, m, &o, &res, &err), PH_EVERIFY); /* it still does not verify */
    ck_assert_int_eq(res.rewrites, 0);
    ck_assert_msg(ph_test_graph_is(ph_model_graph(m), expect, &err) == 0, "%s", err.message);
    ph_model_free(m);
}

/* The model of `graph` after the pass ran as in PC_CASE (to a fixpoint,
 * ph_test_run: no numeric check), asserting `rewrites`: for what a pattern
 * cannot say (the names of graph outputs, the initializers left).  Caller
 * frees. */
static inline ph_model *pc_run_text(const char *graph, int rewrites)
{
    ph_error err = {0};
    ph_model *m = pc_model(graph);
    int rc = ph_test_run(pass, m, &pc_defaults, NULL, &err);
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

/* After the pass ran on `graph` as in PC_CASE (asserting `rewrites`), the
 * main graph has n initializers (the constants the pass made dead are gone). */
#define PC_INITIALIZERS_AFTER(graph, rewrites, n)                                                  \
    do {                                                                                           \
        ph_model *pc_m_ = pc_run_text(graph, rewrites);                                            \
        ck_assert_uint_eq(ph_graph_initializer_count(ph_model_graph(pc_m_)), n);                   \
        ph_model_free(pc_m_);                                                                      \
    } while (0)

#endif
