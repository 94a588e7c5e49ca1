/* tests/test_pass_set_output_layout.c - set_output_layout (adapt, off by
 * default: loaded by name). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <passhost/testing.h>

#include "passrun.h"
#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("set_output_layout");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Run the pass with layouts = spec; the rewrite count (asserted not an error). */
static int run_with(ph_model *m, const char *spec)
{
    const char *params[] = {"layouts", spec, NULL};
    pass->params = params;
    int rc = tk_pass_run(pass, m);
    pass->params = NULL;
    return rc;
}

static void quiet(void *user, ph_log_level level, const char *pass_name, const char *message) {}

/* The pass's error for layouts = spec, and its message into msg. */
static int error_with(ph_model *m, const char *spec, char *msg, size_t size)
{
    ph_error err = {0};
    char param[512];
    snprintf(param, sizeof param, "layouts=%s", spec);
    const char *const params[] = {param, NULL};
    ph_test_options o = {.params = params, .log = quiet};
    int rc = ph_test_run(pass->desc, m, &o, NULL, &err);
    snprintf(msg, size, "%s", err.message);
    return rc;
}

/* x [1,2,3,4] -> Relu -> "y" (also read by Neg -> "z"); q [2,5] -> Neg -> "q2". */
static ph_model *model(void)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *y = tk_op1(g, "Relu", tk_input(g, "x", 4, TK_I64(1, 2, 3, 4)));
    tk_output(g, y);
    tk_output(g, tk_op1(g, "Neg", y));
    tk_output(g, tk_op1(g, "Neg", tk_input(g, "q", 2, TK_I64(2, 5))));
    return m;
}

static void assert_perm(const ph_node *n, size_t rank, const int64_t *want)
{
    const int64_t *p;
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(ph_node_attr_ints(n, "perm", &p), (ptrdiff_t)rank);
    for (size_t i = 0; i < rank; i++)
        ck_assert_int_eq(p[i], want[i]);
}

START_TEST(nhwc_output_keeps_its_name)
{
    ph_model *m = model();
    ph_graph *g = ph_model_graph(m);
    char y_name[64], z_name[64];
    snprintf(y_name, sizeof y_name, "%s", ph_value_name(ph_graph_output(g, 0)));
    snprintf(z_name, sizeof z_name, "%s", ph_value_name(ph_graph_output(g, 1)));
    ph_tensor **before, **after;
    size_t nb = tk_eval_model(m, 1, &before), na;
    char spec[256];
    snprintf(spec, sizeof spec, " %s : nhwc ; 2:NC ", y_name); /* blanks, lower case, an index */
    ck_assert_int_eq(run_with(m, spec), 1);
    ph_value *y = ph_graph_output(g, 0);
    ck_assert_str_eq(ph_value_name(y), y_name);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 1)), z_name);
    ph_node *t = ph_value_producer(y);
    ck_assert_int_eq(ph_node_op(t), PH_OP_Transpose);
    assert_perm(t, 4, TK_I64(0, 2, 3, 1));
    ck_assert_int_eq(ph_value_dim(y, 1), 3);
    ck_assert_int_eq(ph_value_dim(y, 3), 2);
    /* Neg still reads the Relu's value, untransposed */
    ph_node *neg = ph_value_producer(ph_graph_output(g, 1));
    ck_assert_ptr_eq(ph_node_input(neg, 0), ph_node_input(t, 0));
    ck_assert_int_eq(ph_node_op(ph_value_producer(ph_node_input(t, 0))), PH_OP_Relu);
    /* the values: y is the old y in NHWC, the others unchanged */
    na = tk_eval_model(m, 1, &after);
    ck_assert_uint_eq(na, 3);
    ck_assert_int_eq(ph_tensor_dim(after[0], 3), 2);
    const float *a0 = ph_tensor_data(after[0]), *b0 = ph_tensor_data(before[0]);
    for (int c = 0; c < 2; c++)
        for (int h = 0; h < 3; h++)
            for (int w = 0; w < 4; w++)
                ck_assert(a0[(h * 4 + w) * 2 + c] == b0[(c * 3 + h) * 4 + w]);
    tk_assert_same(before + 1, 2, after + 1, 2);
    tk_free_outs(before, nb);
    tk_free_outs(after, na);
    /* a state, not a step: the same settings again change nothing */
    ck_assert_int_eq(run_with(m, spec), 0);
    /* another layout: the same Transpose, another perm; then back to NCHW */
    snprintf(spec, sizeof spec, "%s:NCWH", y_name);
    ck_assert_int_eq(run_with(m, spec), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 1);
    assert_perm(ph_value_producer(ph_graph_output(g, 0)), 4, TK_I64(0, 1, 3, 2));
    snprintf(spec, sizeof spec, "%s:NCHW", y_name);
    ck_assert_int_eq(run_with(m, spec), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 0);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), y_name);
    ck_assert_int_eq(ph_node_op(ph_value_producer(ph_graph_output(g, 0))), PH_OP_Relu);
    ph_model_free(m);
}
END_TEST

START_TEST(explicit_forms)
{
    ph_model *m = model();
    ph_graph *g = ph_model_graph(m);
    char spec[256];
    snprintf(spec, sizeof spec, "%s:1,0;%s:ABCD>DCBA", ph_value_name(ph_graph_output(g, 2)),
             ph_value_name(ph_graph_output(g, 1)));
    ck_assert_int_eq(run_with(m, spec), 2);
    assert_perm(ph_value_producer(ph_graph_output(g, 2)), 2, TK_I64(1, 0));
    assert_perm(ph_value_producer(ph_graph_output(g, 1)), 4, TK_I64(3, 2, 1, 0));
    ck_assert_int_eq(run_with(m, spec), 0);
    ph_model_free(m);
}
END_TEST

/* Errors name the problem, and the real outputs for an unknown one; the
 * graph is left as it was. */
START_TEST(errors)
{
    static const struct {
        const char *spec, *says;
    } cases[] = {
        {"nope:NHWC", "no output 'nope'"},
        {"7:NHWC", "no output '7'"},
        {"NHWC", "not OUTPUT:LAYOUT"},
        {"@0:NHW", "does not name the 4 dims"},
        {"@0:NHWX", "not a reordering"},
        {"@0:NHHC", "not a reordering"},
        {"@0:0,1,2,4", "not a permutation"},
        {"@0:0,1,1,2", "repeats"},
        {"@0:NHWC;@0:NCHW", "given twice"},
        {"@0:", "no layout"},
        {"@x:CN", "graph input"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ph_model *m = model();
        ph_graph *g = ph_model_graph(m);
        if (!strcmp(cases[i].spec, "@x:CN"))
            tk_output(g, ph_graph_input(g, 1)); /* q, a graph input, as an output */
        char spec[256], msg[512];
        const char *y = ph_value_name(ph_graph_output(g, 0));
        /* "@0" stands for output 0's name, "@x" for q */
        size_t k = 0;
        for (const char *p = cases[i].spec; *p && k + 64 < sizeof spec; p++) {
            if (p[0] == '@' && p[1] == '0') {
                k += (size_t)snprintf(spec + k, sizeof spec - k, "%s", y);
                p++;
            } else if (p[0] == '@' && p[1] == 'x') {
                k += (size_t)snprintf(spec + k, sizeof spec - k, "q");
                p++;
            } else {
                spec[k++] = *p;
            }
        }
        spec[k] = 0;
        char *sig = tk_graph_sig(g);
        ck_assert_msg(error_with(m, spec, msg, sizeof msg) < 0, "%s: no error", spec);
        ck_assert_msg(strstr(msg, cases[i].says), "%s: '%s' does not say '%s'", spec, msg, cases[i].says);
        if (i == 0)
            ck_assert_msg(strstr(msg, y) && strstr(msg, ph_value_name(ph_graph_output(g, 2))),
                          "'%s' does not name the outputs", msg);
        char *sig2 = tk_graph_sig(g);
        ck_assert_str_eq(sig, sig2);
        free(sig);
        free(sig2);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 3; variant++) {
        ph_model *m = model();
        ph_graph *g = ph_model_graph(m);
        char spec[256];
        if (variant == 0) /* nothing asked */
            spec[0] = 0;
        else if (variant == 1) /* the layout it has */
            snprintf(spec, sizeof spec, "%s:NCHW", ph_value_name(ph_graph_output(g, 0)));
        else { /* an output that comes from the model's own Transpose: not ours to take away */
            tk_output(g, tk_transpose(g, tk_op1(g, "Relu", ph_graph_input(g, 0)), 4, TK_I64(0, 2, 3, 1)));
            snprintf(spec, sizeof spec, "%s:NCHW", ph_value_name(ph_graph_output(g, 3)));
        }
        const char *params[] = {"layouts", spec, NULL};
        pass->params = params;
        tk_assert_untouched(pass, m);
        pass->params = NULL;
        ph_model_free(m);
    }
}
END_TEST

/* Main-graph outputs only: an output that comes from an If gets its
 * Transpose after the If; the branches are not touched. */
START_TEST(if_output)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op1(then_g, "Relu", x));
    tk_output(else_g, tk_op1(else_g, "Neg", x));
    tk_output(g, ph_node_output(iff, 0));
    char *then_sig = tk_graph_sig(then_g);
    char spec[128];
    snprintf(spec, sizeof spec, "%s:NWC", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(run_with(m, spec), 1);
    ph_node *t = ph_value_producer(ph_graph_output(g, 0));
    assert_perm(t, 3, TK_I64(0, 2, 1));
    ck_assert_ptr_eq(ph_value_producer(ph_node_input(t, 0)), iff);
    char *then_sig2 = tk_graph_sig(then_g);
    ck_assert_str_eq(then_sig, then_sig2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Transpose) + tk_count_op(else_g, PH_OP_Transpose), 0);
    free(then_sig);
    free(then_sig2);
    ck_assert_int_eq(run_with(m, spec), 0);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("set_output_layout");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, nhwc_output_keeps_its_name);
    tcase_add_test(tc, explicit_forms);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, if_output);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
