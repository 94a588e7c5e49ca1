/* tests/test_pass_eliminate_nop_split.c - the eliminate_nop_split pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("eliminate_nop_split");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Split(x[, split]) with n_out outputs on axis. */
static ph_node *split(ph_graph *g, ph_value *x, ph_value *sizes, size_t n_out, int64_t axis)
{
    ph_value *in[2] = {x, sizes};
    ph_node *n = ph_node_create(g, NULL, "Split", sizes ? 2 : 1, in, n_out);
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(ph_node_set_attr_int(n, "axis", axis), 0);
    return n;
}

static ph_value *split1(ph_graph *g, ph_value *x, ph_value *sizes, int64_t axis)
{
    return ph_node_output(split(g, x, sizes, 1, axis), 0);
}

START_TEST(one_part_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    tk_neg_output(g, split1(g, r, NULL, 1));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    tk_assert_untouched(pass, m); /* idempotent */
    ph_model_free(m);
}
END_TEST

/* opset 13+: split sizes as an input equal to the dim (negative axis too);
 * the sizes initializer is pruned. */
START_TEST(split_input_of_the_whole_dim_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 3, TK_I64(2, 3, 4), NULL);
    ph_value *a = split1(g, r, tk_ints(g, "s4", 1, TK_I64(4)), -1);
    tk_neg_output(g, split1(g, a, tk_ints(g, "s2", 1, TK_I64(2)), 0));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 2);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Split), 0);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ph_model_free(m);
}
END_TEST

/* opset 11: split sizes as an attribute. */
START_TEST(opset11_split_attribute)
{
    for (int64_t size = 3; size <= 4; size++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ck_assert_int_eq(ph_model_set_opset(m, "", 11), 0);
        ph_value *x = tk_input(g, "x", 2, TK_I64(3, 4));
        ph_node *n = split(g, x, NULL, 1, 1);
        ck_assert_int_eq(ph_node_set_attr_ints(n, "split", 1, &size), 0);
        tk_neg_output(g, ph_node_output(n, 0));
        if (size == 4) {
            ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
            ck_assert_uint_eq(tk_count_op(g, PH_OP_Split), 0);
        } else { /* 3 of 4: an invalid model (inference refuses it), left alone */
            pass->shapes = 0;
            tk_assert_untouched(pass, m);
        }
        ph_model_free(m);
    }
}
END_TEST

/* opset 18: num_outputs = 1. */
START_TEST(opset18_num_outputs_one_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "", 18), 0);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_node *n = split(g, r, NULL, 1, 0);
    ck_assert_int_eq(ph_node_set_attr_int(n, "num_outputs", 1), 0);
    tk_neg_output(g, ph_node_output(n, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Split), 0);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_output_takes_the_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *y = split1(g, r, NULL, 0);
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    ck_assert_ptr_eq(ph_graph_output(g, 0), r);
    ck_assert_str_eq(ph_value_name(r), name);
    free(name);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_input_feeding_a_node_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT64, 1, TK_I64(5));
    tk_neg_output(g, split1(g, x, NULL, 0));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(g), 0), x);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

/* Two outputs, only the first read: it is half the input. */
START_TEST(two_outputs_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(4, 4), NULL);
    tk_neg_output(g, ph_node_output(split(g, r, NULL, 2, 0), 0));
    ph_node *n = split(g, r, tk_ints(g, "s", 2, TK_I64(4, 0)), 2, 0);
    tk_neg_output(g, ph_node_output(n, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* An invalid model, which inference refuses: the pass sees the declared
 * shape of the graph input. */
START_TEST(size_not_the_dim_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    pass->shapes = 0;
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 4));
    tk_neg_output(g, split1(g, x, tk_ints(g, "s", 1, TK_I64(3)), 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(unknown_dim_with_sizes_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(-1, 4), "batch");
    tk_neg_output(g, split1(g, r, tk_ints(g, "s", 1, TK_I64(2)), 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(runtime_sizes_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *s = ph_graph_add_input(g, "s", PH_DT_INT64, 1, TK_I64(1));
    tk_neg_output(g, split1(g, r, s, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_input_to_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_output(g, split1(g, tk_input(g, "x", 2, TK_I64(3, 4)), NULL, 0));
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
    tk_output(then_g, tk_op1(then_g, "Neg", split1(then_g, x, NULL, 0)));
    tk_output(else_g, tk_op1(else_g, "Abs", split1(else_g, x, NULL, 1)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Neg");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Abs");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(else_g), 0), x);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_split");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, one_part_removed);
    tcase_add_test(tc, split_input_of_the_whole_dim_removed);
    tcase_add_test(tc, opset11_split_attribute);
    tcase_add_test(tc, opset18_num_outputs_one_removed);
    tcase_add_test(tc, graph_output_takes_the_name);
    tcase_add_test(tc, graph_input_feeding_a_node_removed);
    tcase_add_test(tc, two_outputs_kept);
    tcase_add_test(tc, size_not_the_dim_kept);
    tcase_add_test(tc, unknown_dim_with_sizes_kept);
    tcase_add_test(tc, runtime_sizes_kept);
    tcase_add_test(tc, graph_input_to_graph_output_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
