/* tests/test_pass_set_output_layout.c - set_output_layout (adapt, off by
 * default: loaded by name): a Transpose before the graph outputs that the
 * layouts parameter names.  The outputs change on purpose, so the runs are
 * unchecked and the new values are compared with the old by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passcase.h"
#include "testkit.h"

PASS_FIXTURE("set_output_layout")

/* x [1,2,3,4] -> Relu -> y (also read by Neg -> z); q [2,5] -> Neg -> q2. */
#define MODEL "x: float[1,2,3,4]; q: float[2,5]\ny = Relu(x); z = Neg(y); q2 = Neg(q)\nreturn y, z, q2"
#define AS_BUILT "y = Relu(x)\n--\nz = Neg(y)\n--\nq2 = Neg(q)"

static ph_model *model(void)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(MODEL, &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    return m;
}

static void quiet(void *user, ph_log_level level, const char *pass_name, const char *message) {}

/* Run the pass with layouts = spec: its rewrites, or its error code with the
 * message in msg (may be NULL). */
static int run_with(ph_model *m, const char *spec, char *msg, size_t size)
{
    ph_error err = {0};
    char param[512];
    snprintf(param, sizeof param, "layouts=%s", spec);
    const char *const params[] = {param, NULL};
    ph_test_options o = {.params = params, .log = quiet};
    int rc = ph_test_run(pass, m, &o, NULL, &err);
    if (msg)
        snprintf(msg, size, "%s", err.message);
    else
        ck_assert_msg(rc >= 0, "%s: %s", spec, err.message);
    return rc;
}

/* The outputs of m on seeded random inputs (caller frees each). */
static size_t eval_all(ph_model *m, ph_tensor **out)
{
    ph_graph *g = ph_model_graph(m);
    ph_tensor *in[4] = {NULL};
    ph_error err = {0};
    ck_assert_int_eq(ph_test_random_inputs(g, 1, 1, in, &err), 0);
    ph_eval *e = NULL;
    ck_assert_msg(ph_eval_new(g, &e, &err) == 0, "%s", err.message);
    size_t n = ph_graph_output_count(g);
    ck_assert_msg(ph_eval_run(e, (const ph_tensor *const *)in, ph_graph_input_count(g), out, n, &err) == 0, "%s",
                  err.message);
    ph_eval_free(e);
    for (size_t i = 0; i < 4; i++)
        ph_tensor_free(in[i]);
    return n;
}

START_TEST(nhwc_output_keeps_its_name)
{
    ph_model *m = model();
    ph_graph *g = ph_model_graph(m);
    char y_name[64], z_name[64], spec[256];
    snprintf(y_name, sizeof y_name, "%s", ph_value_name(ph_graph_output(g, 0)));
    snprintf(z_name, sizeof z_name, "%s", ph_value_name(ph_graph_output(g, 1)));
    ph_tensor *before[3], *after[3];
    eval_all(m, before);
    snprintf(spec, sizeof spec, " %s : nhwc ; 2:NC ", y_name); /* blanks, lower case, an index */
    ck_assert_int_eq(run_with(m, spec, NULL, 0), 1);
    /* Neg still reads the Relu's value, untransposed */
    PC_GRAPH_IS(g, "r = Relu(x)\n--\ny = Transpose(r) {perm=[0,2,3,1]}\n--\nz = Neg(r)\n--\nq2 = Neg(q)");
    ph_value *y = ph_graph_output(g, 0);
    ck_assert_str_eq(ph_value_name(y), y_name);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 1)), z_name);
    ck_assert_int_eq(ph_value_dim(y, 1), 3);
    ck_assert_int_eq(ph_value_dim(y, 3), 2);
    /* the values: y is the old y in NHWC, the others unchanged */
    eval_all(m, after);
    ck_assert_int_eq(ph_tensor_dim(after[0], 3), 2);
    const float *a0 = ph_tensor_data(after[0]), *b0 = ph_tensor_data(before[0]);
    for (int c = 0; c < 2; c++)
        for (int h = 0; h < 3; h++)
            for (int w = 0; w < 4; w++)
                ck_assert(a0[(h * 4 + w) * 2 + c] == b0[(c * 3 + h) * 4 + w]);
    ph_error err = {0};
    ck_assert_msg(ph_test_compare(before + 1, 2, after + 1, 2, PH_EXACT, NULL, NULL, &err) == 0, "%s", err.message);
    for (int i = 0; i < 3; i++) {
        ph_tensor_free(before[i]);
        ph_tensor_free(after[i]);
    }
    /* a state, not a step: the same settings again change nothing */
    ck_assert_int_eq(run_with(m, spec, NULL, 0), 0);
    /* another layout: the same Transpose, another perm; then back to NCHW */
    snprintf(spec, sizeof spec, "%s:NCWH", y_name);
    ck_assert_int_eq(run_with(m, spec, NULL, 0), 1);
    PC_GRAPH_IS(g, "r = Relu(x)\n--\ny = Transpose(r) {perm=[0,1,3,2]}\n--\nz = Neg(r)\n--\nq2 = Neg(q)");
    snprintf(spec, sizeof spec, "%s:NCHW", y_name);
    ck_assert_int_eq(run_with(m, spec, NULL, 0), 1);
    PC_GRAPH_IS(g, AS_BUILT);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), y_name);
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
    ck_assert_int_eq(run_with(m, spec, NULL, 0), 2);
    PC_GRAPH_IS(g, "y = Relu(x)\n--\nn = Neg(y)\nz = Transpose(n) {perm=[3,2,1,0]}\n--\nn2 = Neg(q)\nq2 = Transpose(n2) {perm=[1,0]}");
    ck_assert_int_eq(run_with(m, spec, NULL, 0), 0);
    ph_model_free(m);
}
END_TEST

/* Errors name the problem, and the real outputs for an unknown one; the
 * graph is left as it was.  "@0" stands for output 0's name, "@x" for q. */
static const struct {
    const char *spec, *says;
} errors[] = {
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

START_TEST(error)
{
    int q_out = !strcmp(errors[_i].spec, "@x:CN"); /* q, a graph input, as an output */
    ph_error err = {0};
    ph_model *m = ph_test_model_text(q_out ? MODEL ", q" : MODEL, &err);
    ph_graph *g = ph_model_graph(m);
    char spec[256], msg[512];
    const char *y = ph_value_name(ph_graph_output(g, 0));
    size_t k = 0;
    for (const char *p = errors[_i].spec; *p && k + 64 < sizeof spec; p++) {
        if (p[0] == '@' && (p[1] == '0' || p[1] == 'x')) {
            k += (size_t)snprintf(spec + k, sizeof spec - k, "%s", p[1] == '0' ? y : "q");
            p++;
        } else {
            spec[k++] = *p;
        }
    }
    spec[k] = 0;
    ck_assert_msg(run_with(m, spec, msg, sizeof msg) < 0, "%s: no error", spec);
    ck_assert_msg(strstr(msg, errors[_i].says), "%s: '%s' does not say '%s'", spec, msg, errors[_i].says);
    if (_i == 0)
        ck_assert_msg(strstr(msg, y) && strstr(msg, ph_value_name(ph_graph_output(g, 2))),
                      "'%s' does not name the outputs", msg);
    PC_GRAPH_IS(g, AS_BUILT);
    ph_model_free(m);
}
END_TEST

/* nothing asked; the layout it has; an output that comes from the model's
 * own Transpose: not ours to take away */
START_TEST(left_alone)
{
    ph_error err = {0};
    ph_model *m = ph_test_model_text(_i == 2 ? "x: float[1,2,3,4]; q: float[2,5]\ny = Relu(x); z = Neg(y); q2 = Neg(q)\n"
                                               "r = Relu(x); t = Transpose(r) {perm=[0,2,3,1]}\nreturn y, z, q2, t"
                                             : MODEL,
                                      &err);
    ck_assert_msg(m != NULL, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    char spec[256] = "";
    if (_i)
        snprintf(spec, sizeof spec, "%s:NCHW", ph_value_name(ph_graph_output(g, _i == 2 ? 3 : 0)));
    ck_assert_int_eq(run_with(m, spec, NULL, 0), 0);
    PC_GRAPH_IS(g, _i == 2 ? AS_BUILT "\n--\nr = Relu(x)\nt = Transpose(r)" : AS_BUILT);
    ph_model_free(m);
}
END_TEST

/* Main-graph outputs only: an output that comes from an If gets its
 * Transpose after the If; the branches are not touched (the text has no
 * subgraphs: they are built with the IR calls). */
START_TEST(if_output)
{
    ph_graph *body[2];
    ph_model *m = pc_if_model("x: float[2,3,4]; cond: bool[]\ny = If(cond)\nreturn y", &body[0], &body[1]);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_find_value(g, "x");
    tk_output(body[0], tk_op1(body[0], "Relu", x));
    tk_output(body[1], tk_op1(body[1], "Neg", x));
    char spec[128];
    snprintf(spec, sizeof spec, "%s:NWC", ph_value_name(ph_graph_output(g, 0)));
    ck_assert_int_eq(run_with(m, spec, NULL, 0), 1);
    PC_GRAPH_IS(g, "i = If(cond)\ny = Transpose(i) {perm=[0,2,1]}");
    PC_GRAPH_IS(body[0], "y = Relu(x)");
    PC_GRAPH_IS(body[1], "y = Neg(x)");
    ck_assert_int_eq(run_with(m, spec, NULL, 0), 0);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("set_output_layout");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, nhwc_output_keeps_its_name);
    tcase_add_test(tc, explicit_forms);
    tcase_add_loop_test(tc, error, 0, (int)(sizeof errors / sizeof *errors));
    tcase_add_loop_test(tc, left_alone, 0, 3);
    tcase_add_test(tc, if_output);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
