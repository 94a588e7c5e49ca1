/* tests/test_pass_merge_consecutive_concat.c - merge_consecutive_concat. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("merge_consecutive_concat");
    pass->shapes = 1; /* negative axes are normalised with the rank */
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

#define V(...) ((ph_value *const[]){__VA_ARGS__})

/* Concat of n inputs; axis INT64_MIN = no axis attribute. */
static ph_value *concat(ph_graph *g, int64_t axis, size_t n, ph_value *const *in)
{
    ph_node *c = tk_node(g, "Concat", n, in);
    if (axis != INT64_MIN)
        ck_assert_int_eq(ph_node_set_attr_int(c, "axis", axis), 0);
    return ph_node_output(c, 0);
}

/* The inputs of the only Concat of g are exactly want[0..n). */
static void assert_inputs(ph_graph *g, size_t n, ph_value *const *want)
{
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Concat), 1);
    ph_node *c = tk_find_op(g, PH_OP_Concat);
    ck_assert_uint_eq(ph_node_input_count(c), n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(ph_node_input(c, i) == want[i], "input %zu is %s", i,
                      ph_value_name(ph_node_input(c, i)));
}

/* Seed diagram: Concat(Concat(X, Y), Z) -> Concat(X, Y, Z). */
START_TEST(two_into_one)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *y = tk_input(g, "y", 2, TK_I64(2, 2));
    ph_value *z = tk_input(g, "z", 2, TK_I64(2, 1));
    tk_output(g, concat(g, 1, 2, V(concat(g, 1, 2, V(x, y)), z)));

    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    assert_inputs(g, 3, V(x, y, z));
    ck_assert_int_eq(ph_node_attr_int(tk_find_op(g, PH_OP_Concat), "axis", -9), 1);
    tk_assert_untouched(pass, m); /* idempotent */
    ph_model_free(m);
}
END_TEST

/* Inner Concats at the middle and last positions, one nested in another,
 * and one read twice by the outer Concat: all spliced in place, in order,
 * in one rewrite. */
START_TEST(any_position_nested_and_repeated)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_input(g, "a", 3, TK_I64(2, 1, 2));
    ph_value *b = tk_input(g, "b", 3, TK_I64(2, 2, 2));
    ph_value *c = tk_input(g, "c", 3, TK_I64(2, 3, 2));
    ph_value *d = tk_input(g, "d", 3, TK_I64(2, 1, 2));
    ph_value *inner = concat(g, 1, 2, V(b, concat(g, 1, 2, V(c, a)))); /* b c a */
    ph_value *twice = concat(g, -2, 2, V(d, b));                        /* d b */
    tk_output(g, tk_op1(g, "Relu", concat(g, 1, 4, V(a, inner, twice, twice))));

    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Concat,Relu");
    assert_inputs(g, 8, V(a, b, c, a, d, b, d, b));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A chain of Concats folds into one, in one rewrite at its top. */
START_TEST(long_chain)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 2));
    ph_value *v = x;
    for (int i = 0; i < 50; i++)
        v = concat(g, 0, 2, V(v, x));
    tk_output(g, v);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ck_assert_uint_eq(ph_graph_node_count(g), 1);
    ck_assert_uint_eq(ph_node_input_count(tk_find_op(g, PH_OP_Concat)), 51);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* -1 and 1 on rank 2 are one axis. */
START_TEST(negative_axis_with_known_rank)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *y = tk_input(g, "y", 2, TK_I64(2, 2));
    tk_output(g, concat(g, 1, 2, V(x, concat(g, -1, 2, V(y, x)))));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    assert_inputs(g, 3, V(x, y, x));
    ph_model_free(m);
}
END_TEST

/* The outer Concat's output is a graph output: it keeps its name. */
START_TEST(graph_output_keeps_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(3));
    ph_value *out = concat(g, 0, 2, V(concat(g, 0, 2, V(x, x)), x));
    tk_output(g, out);
    char *name = strdup(ph_value_name(out));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* Concat-1 (opset 3): a missing axis is 1 on both; a missing axis and an
 * explicit 1 agree once the rank is known.  (Shapes are not inferred: the
 * inference reads a missing Concat axis as 0 at every opset.) */
START_TEST(opset3_default_axis)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "", 3), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *y = tk_input(g, "y", 2, TK_I64(2, 2));
    ph_value *c = concat(g, INT64_MIN, 2, V(concat(g, INT64_MIN, 2, V(x, y)), x));
    tk_output(g, concat(g, 1, 2, V(c, y)));
    pass->shapes = 0;
    ck_assert_int_eq(tk_pass_run(pass, m), 1); /* no evaluator below opset 11 */
    assert_inputs(g, 4, V(x, y, x, y));
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(other_axis_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 2));
    tk_output(g, concat(g, 1, 2, V(concat(g, 0, 2, V(x, x)), concat(g, -2, 2, V(x, x)))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(negative_axis_unknown_rank_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", -1, NULL);
    tk_output(g, concat(g, 1, 2, V(x, concat(g, -1, 2, V(x, x)))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Same literal axis needs no rank. */
START_TEST(same_axis_unknown_rank_merged)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", -1, NULL);
    tk_output(g, concat(g, -1, 2, V(x, concat(g, -1, 2, V(x, x)))));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    assert_inputs(g, 3, V(x, x, x));
    ph_model_free(m);
}
END_TEST

START_TEST(inner_with_other_consumer_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 2));
    ph_value *c = concat(g, 0, 2, V(x, x));
    tk_output(g, concat(g, 0, 2, V(c, x)));
    tk_output(g, tk_op1(g, "Relu", c));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inner_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 2));
    ph_value *c = concat(g, 0, 2, V(x, x));
    tk_output(g, concat(g, 0, 2, V(x, c)));
    tk_output(g, c);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inner_read_by_a_body_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 2));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_value *c = concat(g, 0, 2, V(x, x));
    tk_output(g, concat(g, 0, 2, V(c, x)));
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *tg = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *eg = ph_node_add_subgraph(iff, "else_branch");
    tk_output(tg, tk_op1(tg, "Relu", c));
    tk_output(eg, tk_op1(eg, "Neg", c));
    tk_output(g, ph_node_output(iff, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(other_domain_or_op_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 2));
    ph_value *c = concat(g, 0, 2, V(x, x));
    ck_assert_int_eq(ph_node_set_domain(ph_value_producer(c), "com.example"), 0);
    ph_value *s = tk_op2(g, "Add", x, x);
    tk_output(g, concat(g, 0, 3, V(c, s, x)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The pattern inside both branches of an If. */
START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 2));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *tg = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *eg = ph_node_add_subgraph(iff, "else_branch");
    tk_output(tg, concat(tg, 0, 2, V(concat(tg, 0, 2, V(x, x)), x)));
    tk_output(eg, concat(eg, 1, 2, V(x, concat(eg, 1, 2, V(x, x)))));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    assert_inputs(tg, 3, V(x, x, x));
    assert_inputs(eg, 3, V(x, x, x));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_merge_consecutive_concat");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, two_into_one);
    tcase_add_test(tc, any_position_nested_and_repeated);
    tcase_add_test(tc, long_chain);
    tcase_add_test(tc, negative_axis_with_known_rank);
    tcase_add_test(tc, graph_output_keeps_name);
    tcase_add_test(tc, opset3_default_axis);
    tcase_add_test(tc, other_axis_kept);
    tcase_add_test(tc, negative_axis_unknown_rank_kept);
    tcase_add_test(tc, same_axis_unknown_rank_merged);
    tcase_add_test(tc, inner_with_other_consumer_kept);
    tcase_add_test(tc, inner_graph_output_kept);
    tcase_add_test(tc, inner_read_by_a_body_kept);
    tcase_add_test(tc, other_domain_or_op_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
