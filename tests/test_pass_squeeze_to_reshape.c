/* tests/test_pass_squeeze_to_reshape.c - squeeze_to_reshape: Squeeze and
 * Unsqueeze with a static output shape become Reshape. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("squeeze_to_reshape");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Squeeze or Unsqueeze of x with axes in the opset's form. */
static ph_value *sq(ph_graph *g, const char *op, ph_value *x, size_t n, const int64_t *axes, int64_t opset)
{
    ph_value *in[2] = {x, opset >= 13 && n ? tk_ints(g, "axes", n, axes) : NULL};
    ph_node *node = tk_node(g, op, in[1] ? 2 : 1, in);
    if (opset < 13 && n)
        ph_node_set_attr_ints(node, "axes", n, axes);
    return ph_node_output(node, 0);
}

/* The Reshape's shape operand into out; count. */
static ptrdiff_t shape_of(const ph_node *r, int64_t *out)
{
    return ph_value_const_ints(ph_node_input(r, 1), out, NULL, 8);
}

START_TEST(squeeze_and_unsqueeze_become_reshape)
{
    char ops[256];
    int64_t s[8];
    for (int opset = 11; opset <= 17; opset += 6) {
        ph_model *m = ph_model_new(opset);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 3, 1, 4));
        ph_value *a = sq(g, "Squeeze", x, 2, TK_I64(0, -2), opset);   /* [3, 4] */
        ph_value *b = sq(g, "Unsqueeze", a, 1, TK_I64(-1), opset);    /* [3, 4, 1] */
        ph_value *c = sq(g, "Squeeze", tk_op1(g, "Relu", x), 0, NULL, opset); /* all ones: [3, 4] */
        tk_output(g, tk_op1(g, "Neg", b));
        tk_output(g, c);
        char *nc = strdup(ph_value_name(c));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 3);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Reshape,Reshape,Relu,Reshape,Neg");
        ck_assert_str_eq(ph_value_name(ph_graph_output(g, 1)), nc);
        ph_node *r = tk_find_op(g, PH_OP_Reshape);
        ck_assert_int_eq(shape_of(r, s), 2);
        ck_assert_int_eq(s[0], 3);
        ck_assert_int_eq(s[1], 4);
        ck_assert_int_eq(shape_of(ph_value_producer(ph_graph_output(g, 1)), s), 2);
        /* the axes initializers went with the nodes */
        ck_assert_uint_eq(ph_graph_initializer_count(g), 3);
        free(nc);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(to_a_scalar)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(1));
    tk_output(g, tk_op1(g, "Neg", sq(g, "Squeeze", x, 1, TK_I64(0), 17)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    int64_t s[8];
    ck_assert_int_eq(shape_of(tk_find_op(g, PH_OP_Reshape), s), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 5; variant++) {
        ph_model *m = ph_model_new(variant == 4 ? 4 : 17);
        ph_graph *g = ph_model_graph(m);
        ph_value *x;
        switch (variant) {
        case 0: /* a symbolic dim */
            x = tk_input(g, "x", 3, TK_I64(-1, 1, 4));
            ph_value_set_dim_param(x, 0, "batch");
            break;
        case 1: /* unknown rank */
            x = tk_input(g, "x", -1, NULL);
            break;
        case 2: /* a dim 0 */
            x = tk_input(g, "x", 3, TK_I64(0, 1, 4));
            break;
        case 3: /* axes not constant: the output shape is unknown */
            x = tk_input(g, "x", 3, TK_I64(2, 1, 4));
            break;
        default: /* opset 4: Reshape has no shape input */
            x = tk_input(g, "x", 3, TK_I64(2, 1, 4));
            break;
        }
        ph_value *y;
        if (variant == 3) {
            ph_value *in[2] = {x, ph_graph_add_input(g, "axes", PH_DT_INT64, 1, TK_I64(1))};
            y = ph_node_output(tk_node(g, "Squeeze", 2, in), 0);
        } else {
            y = sq(g, "Squeeze", x, 1, TK_I64(1), variant == 4 ? 4 : 17);
        }
        tk_neg_output(g, y);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(1, 6));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, sq(then_g, "Squeeze", x, 1, TK_I64(0), 17));
    tk_output(else_g, tk_op1(else_g, "Neg", sq(else_g, "Squeeze", x, 1, TK_I64(0), 17)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Reshape), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Reshape), 1);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Squeeze), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("squeeze_to_reshape");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, squeeze_and_unsqueeze_become_reshape);
    tcase_add_test(tc, to_a_scalar);
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
