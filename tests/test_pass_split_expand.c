/* tests/test_pass_split_expand.c - the split_expand pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;
static const char *const two_params[] = {"max_broadcast_dims", "2", NULL};

static void setup(void)
{
    pass = tk_pass_load("split_expand");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* x (rank, dims) -> Relu -> Expand(shape) -> y */
static void expand(ph_graph *g, int rank, const int64_t *dims, size_t n, const int64_t *shape)
{
    ph_value *x = tk_relu_input(g, rank, dims, NULL);
    ph_value *y = tk_op2(g, "Expand", x, tk_ints(g, "shape", n, shape));
    tk_output(g, y);
}

START_TEST(one_dim_at_a_time)
{
    char ops[128];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    expand(g, 3, TK_I64(1, 3, 1), 4, TK_I64(2, 4, 3, 5)); /* dims 0, 1 and 3 broadcast */
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Expand,Expand,Expand");
    for (const ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n)) {
        if (ph_node_op(n) != PH_OP_Expand)
            continue;
        const ph_value *in = ph_node_input(n, 0), *out = ph_node_output(n, 0);
        int changed = 0;
        for (int i = 0; i < ph_value_rank(out); i++) {
            int j = i - (ph_value_rank(out) - ph_value_rank(in));
            changed += (j >= 0 ? ph_value_dim(in, j) : 1) != ph_value_dim(out, i);
        }
        ck_assert_int_eq(changed, 1);
    }
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    /* two at a time: three dims in two steps */
    m = tk_model();
    g = ph_model_graph(m);
    expand(g, 3, TK_I64(1, 3, 1), 4, TK_I64(2, 4, 3, 5));
    pass->params = two_params;
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Expand,Expand");
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    expand(g, 2, TK_I64(3, 1), 2, TK_I64(3, 4)); /* one dim */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    m = tk_model();
    g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(-1, 1)); /* an unknown dim */
    tk_output(g, tk_op2(g, "Expand", x, tk_ints(g, "shape", 3, TK_I64(2, 1, 4))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_if_branches)
{
    char ops[64];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(1, 1));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op2(then_g, "Expand", x, tk_ints(g, "shape", 2, TK_I64(3, 4))));
    tk_output(else_g, tk_op2(else_g, "Expand", x, tk_ints(g, "shape2", 2, TK_I64(3, 4))));
    tk_output(g, ph_node_output(iff, 0));
    tk_infer(m);
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Expand,Expand");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Expand,Expand");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_split_expand");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, one_dim_at_a_time);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_if_branches);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
