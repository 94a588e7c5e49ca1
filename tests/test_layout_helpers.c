/* tests/test_layout_helpers.c - SDK helpers of the layout passes:
 * ph_tensor_transpose, ph_node_is_elementwise, ph_rw_node_after,
 * ph_rw_transpose. */
#include <check.h>
#include <string.h>

#include "testkit.h"

/* [2,3] int16 aligned to rank 3 ([1,2,3]) and transposed by [2,0,1]:
 * shape [3,1,2], element (k,0,i) = t[i][k]. */
START_TEST(tensor_transpose_aligns_and_moves)
{
    int16_t v[6] = {0, 1, 2, 10, 11, 12};
    ph_tensor *t = ph_tensor_new(PH_DT_INT16, 2, TK_I64(2, 3), v);
    ph_tensor *r = ph_tensor_transpose(t, 3, TK_I64(2, 0, 1));
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(ph_tensor_dtype(r), PH_DT_INT16);
    ck_assert_uint_eq(ph_tensor_rank(r), 3);
    ck_assert_int_eq(ph_tensor_dim(r, 0), 3);
    ck_assert_int_eq(ph_tensor_dim(r, 1), 1);
    ck_assert_int_eq(ph_tensor_dim(r, 2), 2);
    int16_t got[6];
    memcpy(got, ph_tensor_data(r), sizeof got);
    const int16_t want[6] = {0, 10, 1, 11, 2, 12};
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(got[i], want[i]);
    ph_tensor_free(r);
    /* scalar: all-ones shape of the rank */
    float s = 2.5f;
    ph_tensor *sc = ph_tensor_new(PH_DT_FLOAT, 0, NULL, &s);
    r = ph_tensor_transpose(sc, 2, TK_I64(1, 0));
    ck_assert_uint_eq(ph_tensor_rank(r), 2);
    ck_assert_int_eq(ph_tensor_numel(r), 1);
    ph_tensor_free(r);
    ph_tensor_free(sc);
    /* refused: rank too small, not a permutation */
    ck_assert_ptr_null(ph_tensor_transpose(t, 1, TK_I64(0)));
    ck_assert_ptr_null(ph_tensor_transpose(t, 2, TK_I64(0, 0)));
    ck_assert_ptr_null(ph_tensor_transpose(t, 2, TK_I64(0, 2)));
    ph_tensor_free(t);
}
END_TEST

START_TEST(elementwise_ops)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ck_assert_int_eq(ph_node_is_elementwise(ph_value_producer(tk_op1(g, "Relu", x))), 1);
    ck_assert_int_eq(ph_node_is_elementwise(ph_value_producer(tk_op2(g, "Pow", x, x))), 1);
    ck_assert_int_eq(ph_node_is_elementwise(ph_value_producer(tk_op1(g, "Softmax", x))), 0);
    ph_value *in[2] = {x, x};
    ck_assert_int_eq(ph_node_is_elementwise(tk_node(g, "Concat", 2, in)), 0);
    ph_node *other = tk_node(g, "Relu", 1, &x);
    ph_node_set_domain(other, "com.example");
    ck_assert_int_eq(ph_node_is_elementwise(other), 0);
    ph_model_free(m);
}
END_TEST

static ph_node *placed_after;

/* Rewrite of y = Neg(x): Abs(x) placed after placed_after, then Neg(Abs). */
static int place(ph_rewriter *rw, const ph_match *mt)
{
    ph_value *x = ph_match_value(mt, "x");
    ph_node *a = ph_rw_node_after(rw, placed_after, "Abs", 1, &x, 1);
    if (!a)
        return PH_ENOMEM;
    ph_value *ax = ph_node_output(a, 0);
    ph_value *y = ph_rw_op(rw, "Neg", 1, &ax);
    return y && !ph_rw_replace(rw, ph_match_value(mt, "y"), y) ? 1 : PH_ENOMEM;
}

START_TEST(rw_node_after_places_the_node)
{
    static const ph_rule rules[] = {{"place", "y = Neg(x)", NULL, place}, {0}};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", 1, TK_I64(3)));
    ph_value *s = tk_op1(g, "Sigmoid", x);
    tk_output(g, tk_op1(g, "Tanh", s));
    tk_output(g, tk_op1(g, "Neg", x));
    placed_after = ph_value_producer(x);
    ph_error err = {0};
    ph_ruleset *rs = ph_ruleset_new(rules, &err);
    ck_assert_ptr_nonnull(rs);
    ck_assert_int_eq(ph_ruleset_run(rs, g, NULL, NULL), 1);
    char ops[256];
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Abs,Sigmoid,Tanh,Neg");
    ck_assert_int_eq(ph_graph_verify(g, &err), 0);
    ph_ruleset_free(rs);
    ph_model_free(m);
}
END_TEST

/* Rewrite of y = Neg(x): Transpose(x) {perm [1, 0]} when x has rank 2,
 * else ph_rw_transpose of NULL, which must fail the rewrite. */
static int transpose_then(ph_rewriter *rw, const ph_match *mt)
{
    ph_value *x = ph_match_value(mt, "x");
    ph_value *t = ph_rw_transpose(rw, ph_value_rank(x) == 2 ? x : NULL, 2, TK_I64(1, 0)); /* rank 3: fails */
    return ph_rw_replace_root(rw, t);
}

START_TEST(rw_transpose_builds_and_fails_on_null)
{
    static const ph_rule rules[] = {{"tr", "y = Neg(x)", NULL, transpose_then}, {0}};
    ph_error err = {0};
    ph_ruleset *rs = ph_ruleset_new(rules, &err);
    ck_assert_ptr_nonnull(rs);
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_output(g, tk_op1(g, "Neg", tk_input(g, "x", 2, TK_I64(2, 3))));
    ck_assert_int_eq(ph_ruleset_run(rs, g, NULL, NULL), 1);
    char ops[256];
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Transpose");
    const int64_t *perm;
    ck_assert_int_eq(ph_node_attr_ints(ph_graph_first_node(g), "perm", &perm), 2);
    ck_assert_int_eq(perm[0], 1);
    ck_assert_int_eq(perm[1], 0);
    ck_assert_int_eq(ph_graph_verify(g, &err), 0);
    ph_model_free(m);
    m = tk_model(); /* NULL input: the rewrite fails, the graph is as before */
    g = ph_model_graph(m);
    tk_output(g, tk_op1(g, "Neg", tk_input(g, "x", 3, TK_I64(2, 3, 4))));
    ck_assert_int_lt(ph_ruleset_run(rs, g, NULL, NULL), 0);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Neg");
    ph_model_free(m);
    ph_ruleset_free(rs);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout_helpers");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, tensor_transpose_aligns_and_moves);
    tcase_add_test(tc, elementwise_ops);
    tcase_add_test(tc, rw_node_after_places_the_node);
    tcase_add_test(tc, rw_transpose_builds_and_fails_on_null);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
