/* tests/test_pass_eliminate_nop_pad.c - the eliminate_nop_pad pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("eliminate_nop_pad"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Pad(x, pads[, value]) in mode (NULL: the default). */
static ph_value *pad(ph_graph *g, ph_value *x, ph_value *pads, ph_value *value, const char *mode)
{
    ph_value *in[3] = {x, pads, value};
    ph_node *n = tk_node(g, "Pad", value ? 3 : 2, in);
    if (mode)
        ck_assert_int_eq(ph_node_set_attr_string(n, "mode", mode), 0);
    return ph_node_output(n, 0);
}

static ph_value *zeros(ph_graph *g, size_t n)
{
    static const int64_t z[8] = {0};
    return tk_ints(g, "pads", n, z);
}

START_TEST(zero_pads_removed_in_every_mode)
{
    static const char *const modes[] = {NULL, "constant", "reflect", "edge"};
    char ops[256];
    for (int k = 0; k < 4; k++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
        tk_neg_output(g, pad(g, r, zeros(g, 4), NULL, modes[k]));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
        ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
        tk_assert_untouched(pass, m); /* idempotent */
        ph_model_free(m);
    }
}
END_TEST

/* A constant value and an int64 input read straight from the graph input. */
START_TEST(with_value_from_graph_input_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT64, 2, TK_I64(2, 3));
    ph_value *v = ph_graph_add_initializer(g, "v", ph_tensor_new(PH_DT_INT64, 0, NULL, &(int64_t){7}));
    tk_neg_output(g, pad(g, x, zeros(g, 4), v, NULL));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(g), 0), x);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ph_model_free(m);
}
END_TEST

/* pads from a Constant node. */
START_TEST(constant_node_pads_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_node *c = tk_node(g, "Constant", 0, NULL);
    ck_assert_int_eq(ph_node_set_attr_tensor(c, "value", ph_tensor_new(PH_DT_INT64, 1, TK_I64(4), NULL)), 0);
    tk_neg_output(g, pad(g, r, ph_node_output(c, 0), NULL, NULL));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Pad), 0);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Constant), 0);
    ph_model_free(m);
}
END_TEST

/* opset 10 (pads attribute) and opset 1 (paddings attribute). */
START_TEST(attribute_pads_before_opset_11)
{
    static const char *const names[] = {"pads", "paddings"};
    static const int64_t opsets[] = {10, 1};
    for (int k = 0; k < 2; k++)
        for (int zero = 0; zero <= 1; zero++) {
            ph_model *m = tk_model();
            ph_graph *g = ph_model_graph(m);
            ck_assert_int_eq(ph_model_set_opset(m, "", opsets[k]), 0);
            ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
            ph_node *n = tk_node(g, "Pad", 1, &r);
            ck_assert_int_eq(ph_node_set_attr_ints(n, names[k], 4, zero ? TK_I64(0, 0, 0, 0) : TK_I64(0, 1, 0, 0)), 0);
            tk_neg_output(g, ph_node_output(n, 0));
            if (zero) {
                ck_assert_int_eq(tk_pass_run(pass, m), 1);
                ck_assert_uint_eq(tk_count_op(g, PH_OP_Pad), 0);
            } else {
                tk_assert_untouched(pass, m);
            }
            ph_model_free(m);
        }
}
END_TEST

/* opset 18: zero pads on the given axes. */
START_TEST(opset18_axes_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "", 18), 0);
    ph_value *r = tk_relu_input(g, 3, TK_I64(2, 3, 4), NULL);
    ph_value *in[4] = {r, zeros(g, 2), NULL, tk_ints(g, "axes", 1, TK_I64(-1))};
    tk_neg_output(g, ph_node_output(tk_node(g, "Pad", 4, in), 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Pad), 0);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_output_takes_the_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *y = pad(g, r, zeros(g, 4), NULL, NULL);
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    ck_assert_ptr_eq(ph_graph_output(g, 0), r);
    ck_assert_str_eq(ph_value_name(r), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(nonzero_pads_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    tk_neg_output(g, pad(g, r, tk_ints(g, "p1", 4, TK_I64(0, 0, 0, 1)), NULL, NULL));
    tk_neg_output(g, pad(g, r, tk_ints(g, "p2", 4, TK_I64(-1, 0, 0, 0)), NULL, NULL));
    tk_neg_output(g, pad(g, r, tk_ints(g, "p3", 4, TK_I64(1, 0, -1, 0)), NULL, "edge"));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(runtime_pads_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *p = ph_graph_add_input(g, "p", PH_DT_INT64, 1, TK_I64(4));
    tk_neg_output(g, pad(g, r, p, NULL, NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Opset 11+ without a pads input, or opset 10 with a pads input: not a Pad
 * this pass understands. */
START_TEST(malformed_pads_kept)
{
    for (int k = 0; k < 2; k++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
        if (k) { /* zero pads attribute, but a pads input too */
            ck_assert_int_eq(ph_model_set_opset(m, "", 10), 0);
            ph_value *y = pad(g, r, tk_ints(g, "p", 4, TK_I64(0, 1, 0, 0)), NULL, NULL);
            ph_node_set_attr_ints(ph_value_producer(y), "pads", 4, TK_I64(0, 0, 0, 0));
            tk_neg_output(g, y);
            tk_assert_untouched(pass, m);
        } else { /* opset 10: pads is an attribute (one input), here missing: refused on load */
            ck_assert_int_eq(ph_model_set_opset(m, "", 10), 0);
            tk_neg_output(g, tk_op1(g, "Pad", r));
            tk_assert_invalid_untouched(pass, m, "required attribute 'pads' (INTS) is missing");
        }
        ph_model_free(m);
    }
}
END_TEST

START_TEST(graph_input_to_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_output(g, pad(g, tk_input(g, "x", 2, TK_I64(3, 4)), zeros(g, 4), NULL, NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    char ops[64];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    /* then: pads from an initializer of the branch; else: of the main graph */
    ph_value *inner = tk_ints(then_g, "inner_pads", 4, TK_I64(0, 0, 0, 0));
    tk_output(then_g, tk_op1(then_g, "Neg", pad(then_g, x, inner, NULL, NULL)));
    tk_output(else_g, tk_op1(else_g, "Neg", pad(else_g, x, zeros(g, 4), NULL, "reflect")));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Neg");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Neg");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(else_g), 0), x);
    ck_assert_uint_eq(ph_graph_initializer_count(then_g), 0);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_pad");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, zero_pads_removed_in_every_mode);
    tcase_add_test(tc, with_value_from_graph_input_removed);
    tcase_add_test(tc, constant_node_pads_removed);
    tcase_add_test(tc, attribute_pads_before_opset_11);
    tcase_add_test(tc, opset18_axes_removed);
    tcase_add_test(tc, graph_output_takes_the_name);
    tcase_add_test(tc, nonzero_pads_kept);
    tcase_add_test(tc, runtime_pads_kept);
    tcase_add_test(tc, malformed_pads_kept);
    tcase_add_test(tc, graph_input_to_graph_output_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
