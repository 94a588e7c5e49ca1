/* tests/test_pass_eliminate_dropout.c - the eliminate_dropout pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("eliminate_dropout"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* A bool scalar initializer. */
static ph_value *bool_init(ph_graph *g, const char *name, int v)
{
    uint8_t b = (uint8_t)v;
    ph_value *t = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_BOOL, 0, NULL, &b));
    ck_assert_ptr_nonnull(t);
    return t;
}

/* Dropout(x[, ratio, mode]) with n_out outputs; returns the node. */
static ph_node *dropout(ph_graph *g, ph_value *x, ph_value *ratio, ph_value *mode, size_t n_out)
{
    ph_value *in[3] = {x, ratio, mode};
    ph_node *n = ph_node_create(g, NULL, "Dropout", mode ? 3 : ratio ? 2 : 1, in, n_out);
    ck_assert_ptr_nonnull(n);
    return n;
}

static ph_value *ratio(ph_graph *g) { return tk_init(g, "ratio", 0, NULL, 3); }

START_TEST(removes_inference_dropout)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    tk_neg_output(g, ph_node_output(dropout(g, r, NULL, NULL, 1), 0));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    tk_assert_untouched(pass, m); /* idempotent */
    ph_model_free(m);
}
END_TEST

/* ratio and training_mode = false as inputs, an unused mask: all go. */
START_TEST(training_mode_false_and_unused_mask_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_node *d = dropout(g, r, ratio(g), bool_init(g, "mode", 0), 2);
    tk_neg_output(g, ph_node_output(d, 0));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ph_model_free(m);
}
END_TEST

/* Several readers and a graph output in the middle: all follow the input,
 * which takes over the output's name. */
START_TEST(fan_out_and_graph_output_redirected)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *y = ph_node_output(dropout(g, r, NULL, NULL, 1), 0);
    tk_output(g, y);
    tk_neg_output(g, y);
    tk_output(g, tk_op1(g, "Abs", y));
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Dropout), 0);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_ptr_eq(ph_graph_output(g, 0), r);
    free(name);
    ph_model_free(m);
}
END_TEST

/* A graph input feeding a node: the reader takes the input. */
START_TEST(graph_input_feeding_a_node_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(5));
    tk_neg_output(g, ph_node_output(dropout(g, x, NULL, NULL, 1), 0));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(g), 0), x);
    ph_model_free(m);
}
END_TEST

/* opset 10: ratio attribute, no training switch. */
START_TEST(opset10_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "", 10), 0);
    ph_value *r = tk_relu_input(g, 2, TK_I64(2, 2), NULL);
    ph_node *d = dropout(g, r, NULL, NULL, 1);
    ph_node_set_attr_float(d, "ratio", 0.3f);
    tk_neg_output(g, ph_node_output(d, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Dropout), 0);
    ph_model_free(m);
}
END_TEST

/* opset 6: only is_test = 1 is inference. */
START_TEST(opset6_is_test)
{
    for (int is_test = -1; is_test <= 1; is_test++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ck_assert_int_eq(ph_model_set_opset(m, "", 6), 0);
        ph_value *r = tk_relu_input(g, 2, TK_I64(2, 2), NULL);
        ph_node *d = dropout(g, r, NULL, NULL, 1);
        if (is_test >= 0)
            ph_node_set_attr_int(d, "is_test", is_test);
        tk_neg_output(g, ph_node_output(d, 0));
        if (is_test == 1)
            ck_assert_int_eq(tk_pass_run(pass, m), 1);
        else
            tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* ---- negative cases */

START_TEST(training_mode_true_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    tk_neg_output(g, ph_node_output(dropout(g, r, ratio(g), bool_init(g, "mode", 1), 1), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(runtime_training_mode_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *mode = ph_graph_add_input(g, "mode", PH_DT_BOOL, 0, NULL);
    tk_neg_output(g, ph_node_output(dropout(g, r, NULL, mode, 1), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(used_mask_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_node *d = dropout(g, r, NULL, NULL, 2);
    tk_neg_output(g, ph_node_output(d, 0));
    tk_output(g, tk_op1(g, "Not", ph_node_output(d, 1)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(mask_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_node *d = dropout(g, r, NULL, NULL, 2);
    tk_neg_output(g, ph_node_output(d, 0));
    tk_output(g, ph_node_output(d, 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_input_to_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 4));
    tk_output(g, ph_node_output(dropout(g, x, NULL, NULL, 1), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(other_domain_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_node *d = dropout(g, r, NULL, NULL, 1);
    ck_assert_int_eq(ph_node_set_domain(d, "com.example"), 0);
    tk_neg_output(g, ph_node_output(d, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    /* then: Neg(Dropout(x)) reads the outer x; else: Dropout(Abs(x)) is the
     * branch output, which Abs's output takes over */
    tk_output(then_g, tk_op1(then_g, "Neg", ph_node_output(dropout(then_g, x, NULL, NULL, 1), 0)));
    tk_output(else_g, ph_node_output(dropout(else_g, tk_op1(else_g, "Abs", x), NULL, NULL, 1), 0));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    char ops[64];
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Neg");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(then_g), 0), x);
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Abs");
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(else_g, 0)), ph_graph_first_node(else_g));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_dropout");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, removes_inference_dropout);
    tcase_add_test(tc, training_mode_false_and_unused_mask_removed);
    tcase_add_test(tc, fan_out_and_graph_output_redirected);
    tcase_add_test(tc, graph_input_feeding_a_node_removed);
    tcase_add_test(tc, opset10_removed);
    tcase_add_test(tc, opset6_is_test);
    tcase_add_test(tc, training_mode_true_kept);
    tcase_add_test(tc, runtime_training_mode_kept);
    tcase_add_test(tc, used_mask_kept);
    tcase_add_test(tc, mask_graph_output_kept);
    tcase_add_test(tc, graph_input_to_graph_output_kept);
    tcase_add_test(tc, other_domain_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
