/* tests/test_pass_merge_consecutive_reshape.c - merge_consecutive_reshape. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("merge_consecutive_reshape");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

static ph_value *reshape(ph_graph *g, ph_value *x, size_t n, const int64_t *shape)
{
    return tk_op2(g, "Reshape", x, tk_ints(g, "shape", n, shape));
}

static ph_value *flatten(ph_graph *g, ph_value *x, int64_t axis)
{
    ph_node *n = tk_node(g, "Flatten", 1, &x);
    ph_node_set_attr_int(n, "axis", axis);
    return ph_node_output(n, 0);
}

/* Squeeze/Unsqueeze with axes as an input (opset >= 13) or an attribute. */
static ph_value *sq(ph_graph *g, const char *op, ph_value *x, size_t n, const int64_t *axes)
{
    if (ph_model_opset(ph_graph_model(g), "") >= 13)
        return tk_op2(g, op, x, tk_ints(g, "axes", n, axes));
    ph_node *node = tk_node(g, op, 1, &x);
    ph_node_set_attr_ints(node, "axes", n, axes);
    return ph_node_output(node, 0);
}

/* A float input x of the given dims, dims < 0 named by names[i], fed
 * through Relu (so a bypass to it is possible). */
static ph_value *input(ph_graph *g, int rank, const int64_t *dims, const char *const *names)
{
    ph_value *x = tk_input(g, "x", rank, dims);
    for (int i = 0; names && i < rank; i++)
        if (dims[i] < 0)
            ph_value_set_dim_param(x, i, names[i]);
    return tk_op1(g, "Relu", x);
}

/* The only Reshape of g reads `from` with constant shape want[0..n). */
static void assert_reshape(ph_graph *g, ph_value *from, size_t n, const int64_t *want, int allowzero)
{
    int64_t got[16];
    ck_assert_uint_eq(ph_graph_node_count(g), 3); /* Relu, Reshape, Neg */
    ph_node *r = tk_find_op(g, PH_OP_Reshape);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_eq(ph_node_input(r, 0), from);
    ck_assert_int_eq(ph_value_const_ints(ph_node_input(r, 1), got, NULL, 16), (ptrdiff_t)n);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(got[k] == want[k], "shape[%zu] = %lld, want %lld", k, (long long)got[k],
                      (long long)want[k]);
    ck_assert_int_eq(ph_node_attr_int(r, "allowzero", 0), allowzero);
}

/* Run the pass to its fixpoint (the order nodes are visited in decides how
 * many calls a chain takes); returns the rewrites. */
static int run_all(ph_model *m, uint64_t seed, size_t n_sizes, const int64_t *sizes)
{
    int total = 0, rc;
    while ((rc = tk_pass_run_eval(pass, m, seed, n_sizes, sizes)) > 0)
        total += rc;
    return total;
}

START_TEST(static_flatten_then_reshape)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(2, 3, 4), NULL);
    tk_neg_output(g, reshape(g, flatten(g, x, 1), 2, TK_I64(4, -1)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    assert_reshape(g, x, 2, TK_I64(4, 6), 0);
    tk_assert_untouched(pass, m); /* idempotent */
    ph_model_free(m);
}
END_TEST

/* Reshape -> Squeeze -> Unsqueeze -> Flatten: one Reshape. */
START_TEST(chain_of_four)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 2, TK_I64(6, 4), NULL);
    ph_value *v = reshape(g, x, 4, TK_I64(2, 1, 3, 4));
    v = sq(g, "Squeeze", v, 1, TK_I64(1));
    v = sq(g, "Unsqueeze", v, 2, TK_I64(0, -1));
    tk_neg_output(g, flatten(g, v, 2));
    ck_assert_int_eq(run_all(m, 2, 0, NULL), 3);
    assert_reshape(g, x, 2, TK_I64(2, 12), 0);
    ph_model_free(m);
}
END_TEST

/* [N,3,4,5] -> Unsqueeze(1) -> Flatten(1) = [N,60]: one unknown dim, -1. */
START_TEST(symbolic_batch_minus_one)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 4, TK_I64(-1, 3, 4, 5), (const char *[]){"N"});
    tk_neg_output(g, flatten(g, sq(g, "Unsqueeze", x, 1, TK_I64(1)), 1));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 2, TK_I64(1, 3)), 1);
    assert_reshape(g, x, 2, TK_I64(-1, 60), 0);
    ph_model_free(m);
}
END_TEST

/* [N,H,4] -> Reshape [0,-1] = [N,?] -> Unsqueeze(2) = [N,?,1]: the only
 * constant shape would be [0,-1,1], whose -1 is undefined when N is 0 at run
 * time: left alone. */
START_TEST(symbolic_copy_and_minus_one)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(-1, -1, 4), (const char *[]){"N", "H"});
    tk_neg_output(g, sq(g, "Unsqueeze", reshape(g, x, 2, TK_I64(0, -1)), 1, TK_I64(2)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Opset 11: Squeeze/Unsqueeze axes are attributes. */
START_TEST(opset11_attribute_axes)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "", 11), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(2, 1, 5), NULL);
    tk_neg_output(g, sq(g, "Unsqueeze", sq(g, "Squeeze", x, 1, TK_I64(1)), 2, TK_I64(0, 3)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    assert_reshape(g, x, 4, TK_I64(1, 2, 5, 1), 0);
    ph_model_free(m);
}
END_TEST

/* Squeeze then Unsqueeze of the same axis: x's own shape, no node. */
START_TEST(identity_chain_bypassed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(-1, 1, 5), (const char *[]){"N"});
    tk_neg_output(g, sq(g, "Unsqueeze", sq(g, "Squeeze", x, 1, TK_I64(1)), 1, TK_I64(1)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 2, TK_I64(1, 3)), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ph_model_free(m);
}
END_TEST

/* A 0 dim of x at the same index is copied (no allowzero needed, opset 13). */
START_TEST(zero_dim_copied)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "", 13), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 2, TK_I64(0, 3), NULL);
    tk_neg_output(g, sq(g, "Unsqueeze", flatten(g, x, 1), 1, TK_I64(2)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 7, 0, NULL), 1);
    assert_reshape(g, x, 3, TK_I64(0, 3, 1), 0);
    ph_model_free(m);
}
END_TEST

/* A 0 dim at an index where x has 3: allowzero=1 from opset 14. */
START_TEST(zero_dim_literal_with_allowzero)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(2, 0, 3), NULL);
    tk_neg_output(g, sq(g, "Unsqueeze", flatten(g, x, 1), 1, TK_I64(0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 8, 0, NULL), 1);
    assert_reshape(g, x, 3, TK_I64(1, 2, 0), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The last output is a graph output: it keeps its name. */
START_TEST(graph_output_keeps_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(4, 6));
    ph_value *y = reshape(g, reshape(g, x, 1, TK_I64(24)), 3, TK_I64(2, 3, 4));
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 9, 0, NULL), 1);
    ck_assert_uint_eq(ph_graph_node_count(g), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(middle_with_other_consumer_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 2, TK_I64(4, 6), NULL);
    ph_value *t = flatten(g, x, 0);
    tk_neg_output(g, reshape(g, t, 2, TK_I64(3, 8)));
    tk_neg_output(g, t);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(middle_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 2, TK_I64(4, 6), NULL);
    ph_value *t = flatten(g, x, 0);
    tk_neg_output(g, reshape(g, t, 2, TK_I64(3, 8)));
    tk_output(g, t);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The final shape is unknown (the shape operand is computed at run time). */
START_TEST(unknown_shape_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 2, TK_I64(4, 6), NULL);
    ph_value *s = ph_graph_add_input(g, "s", PH_DT_INT64, 1, TK_I64(3));
    tk_neg_output(g, tk_op2(g, "Reshape", flatten(g, x, 1), s));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Two unknown dims that are no copies of x's dims at the same index cannot
 * be written: [N,H,4] -> Unsqueeze(0) = [1,N,H,4] -> Reshape [0,0,-1] =
 * [1,N,?], where N sits at index 1 of y but at index 0 of x. */
START_TEST(two_unknown_dims_not_copies_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(-1, -1, 4), (const char *[]){"N", "H"});
    tk_neg_output(g, reshape(g, sq(g, "Unsqueeze", x, 1, TK_I64(0)), 3, TK_I64(0, 0, -1)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A literal 0 dim below opset 14 (no allowzero) cannot be written. */
START_TEST(zero_dim_opset13_kept)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "", 13), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(2, 0, 3), NULL);
    tk_neg_output(g, sq(g, "Unsqueeze", flatten(g, x, 1), 1, TK_I64(0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A 0 dim next to an unknown one: -1 would divide by 0. */
START_TEST(zero_dim_with_unknown_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(-1, 0, 3), (const char *[]){"N"});
    tk_neg_output(g, sq(g, "Unsqueeze", flatten(g, x, 1), 1, TK_I64(0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A copied 0 dim next to an unknown one that is no copy: -1 of numel 0 is
 * undefined.  [0,H,W] -> Flatten(1) = [0,?] -> Unsqueeze(2) = [0,?,1]. */
START_TEST(zero_copy_with_minus_one_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 3, TK_I64(0, -1, -1), (const char *[]){NULL, "H", "W"});
    tk_neg_output(g, sq(g, "Unsqueeze", flatten(g, x, 1), 1, TK_I64(2)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Reshape-1 (opset 4) has its shape as an attribute. */
START_TEST(opset4_kept)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "", 4), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = input(g, 2, TK_I64(4, 6), NULL);
    ph_node *r = tk_node(g, "Reshape", 1, &x);
    ph_node_set_attr_ints(r, "shape", 1, TK_I64(24));
    ph_value *y = flatten(g, ph_node_output(r, 0), 1);
    tk_neg_output(g, y);
    pass->shapes = 0; /* the types are given: every shape is known */
    tk_set_shape(ph_node_output(r, 0), 1, TK_I64(24));
    tk_set_shape(y, 2, TK_I64(24, 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(other_domain_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_value *x = input(g, 2, TK_I64(4, 6), NULL);
    ph_value *t = flatten(g, x, 0);
    ck_assert_int_eq(ph_node_set_domain(ph_value_producer(t), "com.example"), 0);
    tk_set_shape(t, 2, TK_I64(1, 24));
    tk_neg_output(g, reshape(g, t, 2, TK_I64(3, 8)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(4, 6));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *tg = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *eg = ph_node_add_subgraph(iff, "else_branch");
    tk_output(tg, tk_op1(tg, "Neg", reshape(tg, flatten(tg, x, 0), 2, TK_I64(12, 2))));
    tk_output(eg, tk_op1(eg, "Neg", x));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(ph_graph_node_count(tg), 2);
    ph_node *r = tk_find_op(tg, PH_OP_Reshape);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_eq(ph_node_input(r, 0), x);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_merge_consecutive_reshape");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, static_flatten_then_reshape);
    tcase_add_test(tc, chain_of_four);
    tcase_add_test(tc, symbolic_batch_minus_one);
    tcase_add_test(tc, symbolic_copy_and_minus_one);
    tcase_add_test(tc, opset11_attribute_axes);
    tcase_add_test(tc, identity_chain_bypassed);
    tcase_add_test(tc, zero_dim_copied);
    tcase_add_test(tc, zero_dim_literal_with_allowzero);
    tcase_add_test(tc, graph_output_keeps_name);
    tcase_add_test(tc, middle_with_other_consumer_kept);
    tcase_add_test(tc, middle_graph_output_kept);
    tcase_add_test(tc, unknown_shape_kept);
    tcase_add_test(tc, two_unknown_dims_not_copies_kept);
    tcase_add_test(tc, zero_dim_opset13_kept);
    tcase_add_test(tc, zero_dim_with_unknown_kept);
    tcase_add_test(tc, zero_copy_with_minus_one_kept);
    tcase_add_test(tc, opset4_kept);
    tcase_add_test(tc, other_domain_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
