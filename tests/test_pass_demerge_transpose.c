/* tests/test_pass_demerge_transpose.c - demerge_transpose. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("demerge_transpose");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Walk the Transposes from the one reading `from` to the graph output's
 * producer chain in g: each must swap exactly two dims; their composite
 * (c[j] = p1[p2[...]]) must equal want.  Returns how many there are. */
static int check_swaps(ph_graph *g, ph_value *from, size_t rank, const int64_t *want)
{
    int64_t c[16];
    for (size_t i = 0; i < rank; i++)
        c[i] = (int64_t)i;
    int count = 0;
    ph_value *v = from;
    for (;;) {
        ph_node *t = ph_value_use_count(v) == 1 ? ph_value_use(v, 0, NULL) : NULL;
        if (!t || ph_node_op(t) != PH_OP_Transpose)
            break;
        const int64_t *p;
        ck_assert_int_eq(ph_node_attr_ints(t, "perm", &p), (ptrdiff_t)rank);
        int moved = 0;
        for (size_t i = 0; i < rank; i++)
            moved += p[i] != (int64_t)i;
        ck_assert_int_eq(moved, 2);
        int64_t n[16];
        for (size_t j = 0; j < rank; j++)
            n[j] = c[p[j]];
        memcpy(c, n, rank * sizeof c[0]);
        count++;
        v = ph_node_output(t, 0);
    }
    for (size_t i = 0; i < rank; i++)
        ck_assert_msg(c[i] == want[i], "composite[%zu] = %lld, want %lld", i, (long long)c[i],
                      (long long)want[i]);
    (void)g;
    return count;
}

static ph_value *relu_input(ph_graph *g, int rank, const int64_t *dims)
{
    return tk_op1(g, "Relu", tk_input(g, "x", rank, dims));
}

START_TEST(descriptor)
{
    ck_assert_str_eq(pass->desc->name, "demerge_transpose");
    ck_assert_uint_eq(pass->desc->stages, PH_STAGE_ADAPT);
    ck_assert_int_eq(pass->desc->on_by_default, 0);
    ck_assert_int_eq(pass->desc->run_once, 1);
    ck_assert_int_eq(pass->desc->exactness, PH_EXACT);
}
END_TEST

/* NCHW -> NHWC: (0,2,3,1) is one 3-cycle: two swaps. */
START_TEST(three_cycle_two_swaps)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 4, TK_I64(2, 3, 4, 5));
    tk_neg_output(g, tk_transpose(g, x, 4, TK_I64(0, 2, 3, 1)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_int_eq(check_swaps(g, x, 4, TK_I64(0, 2, 3, 1)), 2);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 2);
    tk_assert_untouched(pass, m); /* idempotent */
    ph_model_free(m);
}
END_TEST

/* A 5-cycle needs four swaps. */
START_TEST(five_cycle_four_swaps)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 5, TK_I64(2, 3, 4, 5, 6));
    tk_neg_output(g, tk_transpose(g, x, 5, TK_I64(1, 2, 3, 4, 0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_int_eq(check_swaps(g, x, 5, TK_I64(1, 2, 3, 4, 0)), 4);
    ph_model_free(m);
}
END_TEST

/* (3,2,1,0) = two disjoint 2-cycles: two swaps (not three). */
START_TEST(two_two_cycles)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 4, TK_I64(2, 3, 4, 5));
    tk_neg_output(g, tk_transpose(g, x, 4, TK_I64(3, 2, 1, 0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ck_assert_int_eq(check_swaps(g, x, 4, TK_I64(3, 2, 1, 0)), 2);
    ph_model_free(m);
}
END_TEST

/* (2,0,1,4,5,3): two 3-cycles, 6 dims moved: four swaps. */
START_TEST(two_three_cycles)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 6, TK_I64(2, 3, 1, 4, 2, 3));
    tk_neg_output(g, tk_transpose(g, x, 6, TK_I64(2, 0, 1, 4, 5, 3)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    ck_assert_int_eq(check_swaps(g, x, 6, TK_I64(2, 0, 1, 4, 5, 3)), 4);
    ph_model_free(m);
}
END_TEST

/* A missing perm at rank 4 reverses the dims; the chain keeps y's name. */
START_TEST(missing_perm_rank4_graph_output)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(2, 3, 4, 5));
    ph_value *y = tk_transpose(g, x, 0, NULL);
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    ck_assert_int_eq(check_swaps(g, x, 4, TK_I64(3, 2, 1, 0)), 2);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    int64_t want[4] = {5, 4, 3, 2};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(ph_value_dim(ph_graph_output(g, 0), i), want[i]);
    free(name);
    ph_model_free(m);
}
END_TEST

/* Symbolic dims: the intermediate types carry the names. */
START_TEST(symbolic_dims)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *in = tk_input(g, "x", 3, TK_I64(-1, 3, 4));
    ck_assert_int_eq(ph_value_set_dim_param(in, 0, "N"), 0);
    ph_value *x = tk_op1(g, "Relu", in);
    tk_neg_output(g, tk_transpose(g, x, 3, TK_I64(1, 2, 0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 2, TK_I64(1, 3)), 1);
    ck_assert_int_eq(check_swaps(g, x, 3, TK_I64(1, 2, 0)), 2);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(two_dim_swap_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_neg_output(g, tk_transpose(g, relu_input(g, 4, TK_I64(2, 3, 4, 5)), 4, TK_I64(0, 3, 2, 1)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(identity_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_neg_output(g, tk_transpose(g, relu_input(g, 3, TK_I64(2, 3, 4)), 3, TK_I64(0, 1, 2)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Rank 3 without perm: (2,1,0) moves two dims. */
START_TEST(missing_perm_rank3_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_neg_output(g, tk_transpose(g, relu_input(g, 3, TK_I64(2, 3, 4)), 0, NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(unknown_rank_without_perm_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_neg_output(g, tk_transpose(g, relu_input(g, -1, NULL), 0, NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(invalid_perm_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_output(g, tk_transpose(g, tk_input(g, "x", 4, TK_I64(2, 3, 4, 5)), 4, TK_I64(1, 2, 3, 3)));
    pass->shapes = 0; /* inference refuses the perm; the pass must refuse it too */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(other_domain_kept)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *t = tk_transpose(g, relu_input(g, 3, TK_I64(2, 3, 4)), 3, TK_I64(1, 2, 0));
    ck_assert_int_eq(ph_node_set_domain(ph_value_producer(t), "com.example"), 0);
    tk_neg_output(g, t);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *tg = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *eg = ph_node_add_subgraph(iff, "else_branch");
    tk_output(tg, tk_op1(tg, "Neg", tk_transpose(tg, x, 3, TK_I64(2, 0, 1))));
    tk_output(eg, tk_op1(eg, "Neg", tk_transpose(eg, x, 3, TK_I64(0, 2, 1))));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(tg, PH_OP_Transpose), 2);
    ck_assert_uint_eq(tk_count_op(eg, PH_OP_Transpose), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_demerge_transpose");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, descriptor);
    tcase_add_test(tc, three_cycle_two_swaps);
    tcase_add_test(tc, five_cycle_four_swaps);
    tcase_add_test(tc, two_two_cycles);
    tcase_add_test(tc, two_three_cycles);
    tcase_add_test(tc, missing_perm_rank4_graph_output);
    tcase_add_test(tc, symbolic_dims);
    tcase_add_test(tc, two_dim_swap_kept);
    tcase_add_test(tc, identity_kept);
    tcase_add_test(tc, missing_perm_rank3_kept);
    tcase_add_test(tc, unknown_rank_without_perm_kept);
    tcase_add_test(tc, invalid_perm_kept);
    tcase_add_test(tc, other_domain_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
