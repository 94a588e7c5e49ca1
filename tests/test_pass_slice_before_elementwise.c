/* tests/test_pass_slice_before_elementwise.c - slice_before_elementwise: a
 * Slice of an elementwise op's output moves onto its non-constant input,
 * the constants are sliced at build time. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("slice_before_elementwise");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* The dims of constant v. */
static void assert_const_dims(ph_value *v, size_t rank, const int64_t *dims)
{
    const ph_tensor *t = ph_value_const(v);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(ph_tensor_rank(t), rank);
    for (size_t i = 0; i < rank; i++)
        ck_assert_int_eq(ph_tensor_dim(t, i), dims[i]);
}

START_TEST(slices_input_and_constant)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 6, 8));
    ph_value *y = tk_op2(g, "Add", x, tk_init(g, "c", 2, TK_I64(6, 8), 3));
    tk_output(g, tk_slice(g, y, 2, TK_I64(1, -1), TK_I64(5, INT64_MIN), TK_I64(1, 2), TK_I64(2, -3)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Slice,Add");
    ph_node *add = tk_find_op(g, PH_OP_Add);
    ck_assert_ptr_eq(ph_node_input(ph_value_producer(ph_node_input(add, 0)), 0), x);
    assert_const_dims(ph_node_input(add, 1), 2, TK_I64(2, 3));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Broadcast axes: the operand of dim 1 (or without the axis) is kept. */
START_TEST(broadcast_operands_kept)
{
    for (int variant = 0; variant < 4; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x, *c, *y, *s;
        switch (variant) {
        case 0: /* x [1, 8] broadcast along axis 0: only c is sliced there */
            x = tk_input(g, "x", 2, TK_I64(1, 8));
            c = tk_init(g, "c", 2, TK_I64(6, 8), 3);
            s = tk_slice(g, y = tk_op2(g, "Mul", x, c), 1, TK_I64(2), TK_I64(5), TK_I64(0), NULL);
            break;
        case 1: /* x [6, 1], c [1, 8]: slicing both axes slices x on 0, c on 1 */
            x = tk_input(g, "x", 2, TK_I64(6, 1));
            c = tk_init(g, "c", 2, TK_I64(1, 8), 3);
            s = tk_slice(g, y = tk_op2(g, "Sub", c, x), 2, TK_I64(1, 1), TK_I64(4, 7), TK_I64(0, 1), TK_I64(1, 2));
            break;
        case 2: /* x [8] lower rank: the leading axis is c's alone */
            x = tk_input(g, "x", 1, TK_I64(8));
            c = tk_init(g, "c", 2, TK_I64(4, 8), 3);
            s = tk_slice(g, y = tk_op2(g, "Div", c, x), 2, TK_I64(1, -3), TK_I64(3, 100), TK_I64(0, -1), NULL);
            break;
        default: /* x [3, 1, 5] sliced on all axes but not of y's rank 4 */
            x = tk_input(g, "x", 3, TK_I64(3, 1, 5));
            c = tk_init(g, "c", 4, TK_I64(2, 1, 4, 1), 3);
            s = tk_slice(g, y = tk_op2(g, "Max", x, c), 2, TK_I64(1, 0), TK_I64(3, 4), TK_I64(1, 3), TK_I64(1, 2));
            break;
        }
        tk_output(g, s);
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 7 + (uint64_t)variant, 0, NULL), 1);
        ph_node *op = ph_value_producer(ph_graph_output(g, 0));
        ck_assert(ph_node_is_elementwise(op));
        if (variant == 0) { /* x read directly */
            ck_assert_ptr_eq(ph_node_input(op, 0), x);
            assert_const_dims(ph_node_input(op, 1), 2, TK_I64(3, 8));
        } else if (variant == 1) {
            assert_const_dims(ph_node_input(op, 0), 2, TK_I64(1, 3));
            ck_assert_int_eq(ph_node_op(ph_value_producer(ph_node_input(op, 1))), PH_OP_Slice);
        } else if (variant == 2) {
            assert_const_dims(ph_node_input(op, 0), 2, TK_I64(2, 3));
        } else {
            assert_const_dims(ph_node_input(op, 1), 4, TK_I64(2, 1, 4, 1));
        }
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* Unary op on a symbolic batch; a Where on a bool input; a chain. */
START_TEST(unary_where_and_chain)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(-1, 8));
    ph_value_set_dim_param(x, 0, "N");
    tk_output(g, tk_slice(g, tk_op1(g, "Sigmoid", x), 1, TK_I64(0), TK_I64(1), TK_I64(0), NULL));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 2, TK_I64(4, 6));
    ph_value *in[3] = {cond, tk_init(g, "a", 1, TK_I64(6), 1), tk_init(g, "b", 2, TK_I64(4, 1), 2)};
    ph_value *w = ph_node_output(tk_node(g, "Where", 3, in), 0);
    tk_output(g, tk_slice(g, w, 2, TK_I64(3, 1), TK_I64(0, 5), TK_I64(0, 1), TK_I64(-1, 2)));
    ph_value *z = tk_input(g, "z", 3, TK_I64(2, 3, 4));
    ph_value *chain = tk_op2(g, "Pow", tk_op1(g, "Abs", z), tk_init(g, "e", 0, NULL, 4));
    tk_output(g, tk_slice(g, chain, 1, TK_I64(1), TK_I64(3), TK_I64(-1), NULL));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 9, 2, TK_I64(1, 3)), 3);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 10, 2, TK_I64(1, 3)), 1); /* on above Abs */
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Slice,Sigmoid,Slice,Where,Slice,Abs,Pow");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 7; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 2, TK_I64(6, 8));
        ph_value *c = tk_init(g, "c", 2, TK_I64(6, 8), 3);
        switch (variant) {
        case 2: /* two operands that are not constant */
            c = tk_input(g, "c2", 2, TK_I64(6, 8));
            break;
        case 3: /* x's dim unknown on an axis where c is not 1 */
            ph_value_set_type(x, PH_DT_FLOAT, 2, TK_I64(-1, 8));
            break;
        case 4: /* x's rank unknown */
            ph_value_set_type(x, PH_DT_FLOAT, -1, NULL);
            break;
        }
        ph_value *y = variant == 6 ? tk_op1(g, "Softmax", x) : tk_op2(g, "Mul", x, c); /* 6: not elementwise */
        ph_value *s;
        if (variant == 5) { /* the starts are not constant */
            ph_value *st = ph_graph_add_input(g, "st", PH_DT_INT64, 1, TK_I64(1));
            ph_value *in[4] = {y, st, tk_ints(g, "en", 1, TK_I64(3)), tk_ints(g, "ax", 1, TK_I64(0))};
            s = ph_node_output(tk_node(g, "Slice", 4, in), 0);
        } else {
            s = tk_slice(g, y, 1, TK_I64(1), TK_I64(3), TK_I64(0), NULL);
        }
        tk_output(g, s);
        if (variant == 0) /* another reader */
            tk_output(g, tk_op1(g, "Relu", y));
        if (variant == 1) /* a graph output */
            tk_output(g, y);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(6, 8));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    ph_value *y = tk_op2(then_g, "Add", x, tk_init(then_g, "c", 2, TK_I64(6, 1), 3));
    tk_output(then_g, tk_slice(then_g, y, 1, TK_I64(0), TK_I64(2), TK_I64(0), NULL));
    tk_output(else_g, tk_slice(else_g, tk_op1(else_g, "Neg", x), 1, TK_I64(4), TK_I64(6), TK_I64(0), NULL));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    char ops[128];
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Slice,Add");
    assert_const_dims(ph_node_input(tk_find_op(then_g, PH_OP_Add), 1), 2, TK_I64(2, 1));
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Slice,Neg");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("slice_before_elementwise");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, slices_input_and_constant);
    tcase_add_test(tc, broadcast_operands_kept);
    tcase_add_test(tc, unary_where_and_chain);
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
