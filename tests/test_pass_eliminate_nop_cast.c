/* tests/test_pass_eliminate_nop_cast.c - the eliminate_nop_cast pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("eliminate_nop_cast");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

static ph_value *cast(ph_graph *g, ph_value *x, int to)
{
    ph_node *n = tk_node(g, "Cast", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_int(n, "to", to), 0);
    return ph_node_output(n, 0);
}

/* Abs of a graph input of dtype dt [3,4]: a node output of that dtype. */
static ph_value *abs_input(ph_graph *g, const char *name, int dt)
{
    ph_value *x = ph_graph_add_input(g, name, dt, 2, TK_I64(3, 4));
    ck_assert_ptr_nonnull(x);
    return tk_op1(g, "Abs", x);
}

START_TEST(float_to_float_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_neg_output(g, cast(g, abs_input(g, "x", PH_DT_FLOAT), PH_DT_FLOAT));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Abs,Neg");
    tk_assert_untouched(pass, m); /* idempotent */
    ph_model_free(m);
}
END_TEST

START_TEST(int_to_same_int_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_neg_output(g, cast(g, abs_input(g, "a", PH_DT_INT64), PH_DT_INT64));
    tk_neg_output(g, cast(g, abs_input(g, "b", PH_DT_INT32), PH_DT_INT32));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Abs,Neg,Abs,Neg");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* int64 -> float -> float: only the second Cast does nothing. */
START_TEST(chain_keeps_the_converting_cast)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *f = cast(g, abs_input(g, "x", PH_DT_INT64), PH_DT_FLOAT);
    tk_neg_output(g, cast(g, f, PH_DT_FLOAT));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Abs,Cast,Neg");
    ph_model_free(m);
}
END_TEST

/* CastLike to a value of the same dtype; the like operand is pruned. */
START_TEST(castlike_same_dtype_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = abs_input(g, "x", PH_DT_FLOAT);
    tk_neg_output(g, tk_op2(g, "CastLike", x, tk_init(g, "like", 1, TK_I64(1), 5)));
    ph_value *i = abs_input(g, "i", PH_DT_INT64);
    tk_neg_output(g, tk_op2(g, "CastLike", i, tk_op1(g, "Neg", i)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Abs,Neg,Abs,Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_output_takes_the_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = abs_input(g, "x", PH_DT_INT32);
    ph_value *y = cast(g, a, PH_DT_INT32);
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    ck_assert_ptr_eq(ph_graph_output(g, 0), a);
    ck_assert_str_eq(ph_value_name(a), name);
    free(name);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_input_feeding_a_node_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT64, 1, TK_I64(4));
    tk_neg_output(g, cast(g, x, PH_DT_INT64));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 0, NULL), 1);
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(g), 0), x);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(converting_casts_kept)
{
    static const int from[] = {PH_DT_FLOAT, PH_DT_INT64, PH_DT_INT32, PH_DT_INT64};
    static const int to[] = {PH_DT_INT64, PH_DT_FLOAT, PH_DT_INT64, PH_DT_INT32};
    for (int k = 0; k < 4; k++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        tk_neg_output(g, cast(g, abs_input(g, "x", from[k]), to[k]));
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(castlike_other_dtype_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *i = abs_input(g, "i", PH_DT_INT64);
    tk_neg_output(g, tk_op2(g, "CastLike", i, tk_init(g, "like", 1, TK_I64(1), 5)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The input comes from an operator inference does not know: dtype unknown. */
START_TEST(unknown_dtype_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 4));
    ph_node *op = tk_node(g, "Mystery", 1, &x);
    ck_assert_int_eq(ph_node_set_domain(op, "com.example"), 0);
    ph_value *c = cast(g, ph_node_output(op, 0), PH_DT_FLOAT);
    tk_neg_output(g, c);
    tk_assert_untouched(pass, m);
    ck_assert_int_eq(ph_value_dtype(ph_node_output(op, 0)), PH_DT_UNDEFINED);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_input_to_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_output(g, cast(g, tk_input(g, "x", 2, TK_I64(3, 4)), PH_DT_FLOAT));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    char ops[64];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT64, 2, TK_I64(3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    /* then: Neg(Cast(x, int64)) goes; else: Neg(Cast(x, float)) stays */
    tk_output(then_g, cast(then_g, tk_op1(then_g, "Neg", cast(then_g, x, PH_DT_INT64)), PH_DT_FLOAT));
    tk_output(else_g, tk_op1(else_g, "Neg", cast(else_g, x, PH_DT_FLOAT)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1); /* the evaluator has no If: structure only */
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Neg,Cast");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(then_g), 0), x);
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Cast,Neg");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_cast");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, float_to_float_removed);
    tcase_add_test(tc, int_to_same_int_removed);
    tcase_add_test(tc, chain_keeps_the_converting_cast);
    tcase_add_test(tc, castlike_same_dtype_removed);
    tcase_add_test(tc, graph_output_takes_the_name);
    tcase_add_test(tc, graph_input_feeding_a_node_removed);
    tcase_add_test(tc, converting_casts_kept);
    tcase_add_test(tc, castlike_other_dtype_kept);
    tcase_add_test(tc, unknown_dtype_kept);
    tcase_add_test(tc, graph_input_to_graph_output_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
