/* tests/test_pass_compare_to_zero.c - compare_to_zero: Less, Greater,
 * LessOrEqual and GreaterOrEqual of two float tensors become a Sub and a
 * comparison with 0. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;
static const char *const cmp_ops[] = {"Less", "Greater", "LessOrEqual", "GreaterOrEqual"};

static void setup(void)
{
    pass = tk_pass_load("compare_to_zero");
    pass->shapes = 1; /* reads the inputs' dtypes */
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

START_TEST(splits)
{
    char ops[256], want[64];
    for (int op = 0; op < 4; op++) {
        for (int variant = 0; variant < 4; variant++) {
            ph_model *m = tk_model();
            ph_graph *g = ph_model_graph(m);
            ph_value *a = tk_input(g, "a", 2, TK_I64(2, 3)), *b;
            switch (variant) {
            case 0:
                b = tk_input(g, "b", 2, TK_I64(2, 3));
                break;
            case 1: /* broadcast */
                b = tk_input(g, "b", 1, TK_I64(3));
                break;
            case 2: /* a constant */
                b = tk_init(g, "b", 2, TK_I64(1, 3), 3);
                break;
            default: /* the same value twice: a - a is 0, and equal compares equal */
                b = a;
                break;
            }
            ph_value *y = tk_op2(g, cmp_ops[op], a, b);
            tk_output(g, y);
            char *name = strdup(ph_value_name(y));
            ck_assert_int_eq(tk_pass_run_eval(pass, m, 50 + (uint64_t)(op * 4 + variant), 0, NULL), 1);
            snprintf(want, sizeof want, "Sub,%s", cmp_ops[op]);
            ck_assert_str_eq(tk_ops(g, ops, sizeof ops), want);
            ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
            ph_value *y2 = ph_graph_output(g, 0);
            ck_assert_int_eq(ph_value_dtype(y2), PH_DT_BOOL);
            ck_assert_int_eq(ph_value_rank(y2), 2);
            ph_node *c = ph_value_producer(y2);
            const ph_tensor *zero = ph_value_const(ph_node_input(c, 1));
            ck_assert_ptr_nonnull(zero);
            ck_assert_uint_eq(ph_tensor_rank(zero), 0);
            ck_assert_int_eq(ph_tensor_dtype(zero), PH_DT_FLOAT);
            ck_assert(ph_tensor_all_equal(zero, 0.0));
            free(name);
            tk_assert_untouched(pass, m);
            ph_model_free(m);
        }
    }
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 4; variant++) {
        ph_model *m = ph_model_new(variant == 3 ? 6 : 17);
        ph_graph *g = ph_model_graph(m);
        ph_value *a, *b;
        switch (variant) {
        case 0: /* integers: a - b may wrap */
            a = ph_graph_add_input(g, "a", PH_DT_INT32, 1, TK_I64(4));
            b = ph_graph_add_input(g, "b", PH_DT_INT32, 1, TK_I64(4));
            break;
        case 1: /* already a comparison with zero */
            a = tk_input(g, "a", 1, TK_I64(4));
            b = ph_graph_add_initializer(g, "zero", ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(4), NULL));
            break;
        case 2: /* dtype unknown */
            a = ph_graph_add_input(g, "a", PH_DT_UNDEFINED, -1, NULL);
            b = ph_graph_add_input(g, "b", PH_DT_UNDEFINED, -1, NULL);
            break;
        default: /* opset 6: Sub broadcasts only with an attribute */
            a = tk_input(g, "a", 1, TK_I64(4));
            b = tk_input(g, "b", 1, TK_I64(4));
            break;
        }
        tk_output(g, tk_op2(g, variant == 3 ? "Less" : "GreaterOrEqual", a, b));
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_input(g, "a", 1, TK_I64(4)), *b = tk_input(g, "b", 1, TK_I64(4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op2(then_g, "Less", a, b));
    tk_output(else_g, tk_op1(else_g, "Not", tk_op2(else_g, "GreaterOrEqual", a, b)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Sub), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Sub), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("compare_to_zero");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, splits);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
