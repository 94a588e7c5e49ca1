/* tests/test_pass_split_qkv_matmul.c - split_qkv_matmul: the QKV MatMul cut
 * by Gathers (or a Split) after Reshape/Transpose becomes one MatMul per
 * part.  The pass is off by default: it is loaded and run by name. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("split_qkv_matmul");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* x [.., H] -> MatMul(W [H, K]) -> (+ bias [K])? -> Reshape(R) -> Transpose(T). */
static ph_value *qkv(ph_graph *g, ph_value *x, int64_t H, int64_t K, int bias, size_t q, const int64_t *R,
                     const int64_t *T)
{
    ph_value *v = tk_op2(g, "MatMul", x, tk_init(g, "w", 2, TK_I64(H, K), 5));
    if (bias)
        v = tk_op2(g, "Add", tk_init(g, "bias", 1, TK_I64(K), 6), v);
    ph_value *in[2] = {v, tk_ints(g, "shape", q, R)};
    v = ph_node_output(tk_node(g, "Reshape", 2, in), 0);
    return tk_transpose(g, v, q, T);
}

/* Gather(t, i) on axis; a scalar index or [i]. */
static ph_value *gather(ph_graph *g, ph_value *t, int64_t axis, int64_t i, int scalar)
{
    ph_value *in[2] = {t, ph_graph_add_initializer(g, "i", ph_tensor_new(PH_DT_INT64, scalar ? 0 : 1,
                                                                          TK_I64(1), &i))};
    ph_node *n = tk_node(g, "Gather", 2, in);
    ph_node_set_attr_int(n, "axis", axis);
    return ph_node_output(n, 0);
}

START_TEST(gathers_become_matmuls)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 5, 8));
    ph_value *t = qkv(g, x, 8, 24, 1, 5, TK_I64(0, -1, 3, 2, 4), TK_I64(2, 0, 3, 1, 4));
    ph_value *q = gather(g, t, 0, 0, 1), *k = gather(g, t, -5, 1, 1), *v = gather(g, t, 0, -1, 1);
    tk_output(g, q);
    tk_output(g, tk_transpose(g, k, 4, TK_I64(0, 1, 3, 2)));
    tk_output(g, tk_op1(g, "Relu", v));
    char *qname = strdup(ph_value_name(q));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 3);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_MatMul), 3);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Add), 3);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Reshape), 3);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 3); /* k's two merged into one */
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Gather), 0);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), qname);
    free(qname);
    /* every MatMul reads x with an [8, 8] weight */
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        if (ph_node_op(n) == PH_OP_MatMul) {
            ck_assert_ptr_eq(ph_node_input(n, 0), x);
            ck_assert_int_eq(ph_tensor_dim(ph_value_const(ph_node_input(n, 1)), 1), 8);
        }
    ck_assert_uint_eq(ph_graph_initializer_count(g), 9); /* 3 x (w, bias, shape) */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The part axis in the middle of the reshaped columns (interleaved
 * columns), a Split with and without sizes, scalar and per-column
 * elementwise ops on either side. */
START_TEST(split_of_interleaved_columns)
{
    for (int variant = 0; variant < 3; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 3, TK_I64(2, 5, 6));
        ph_value *p = tk_op2(g, "MatMul", x, tk_init(g, "w", 2, TK_I64(6, 12), 5));
        p = tk_op2(g, "Mul", p, tk_init(g, "scale", 0, NULL, 7));
        p = tk_op2(g, "Sub", tk_init(g, "c", 3, TK_I64(1, 1, 12), 8), p);
        p = tk_op2(g, "Div", p, tk_init(g, "d", 1, TK_I64(1), 9));
        ph_value *rin[2] = {p, tk_ints(g, "shape", 5, TK_I64(0, 0, 2, 3, 2))};
        ph_value *t = tk_transpose(g, ph_node_output(tk_node(g, "Reshape", 2, rin), 0), 5, TK_I64(3, 0, 2, 1, 4));
        ph_value *sin[2] = {t, variant ? tk_ints(g, "sizes", 3, TK_I64(1, 1, 1)) : NULL};
        ph_node *sp = ph_node_create(g, NULL, "Split", variant ? 2 : 1, sin, 3);
        for (size_t o = 0; o < 3; o++)
            if (variant != 2 || o != 1) /* 2: the middle piece is not read */
                tk_output(g, ph_node_output(sp, o));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 4 + (uint64_t)variant, 0, NULL), 1);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_MatMul), variant == 2 ? 2 : 3);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Split), 0);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), variant == 2 ? 2 : 3);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* Parameters: two parts only with parts=2 (or 0); min_hidden refuses. */
START_TEST(parameters)
{
    for (int variant = 0; variant < 4; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 2, TK_I64(5, 8));
        ph_value *t = qkv(g, x, 8, 16, 0, 3, TK_I64(5, 2, 8), TK_I64(1, 0, 2));
        tk_output(g, gather(g, t, 0, 0, 0));
        tk_output(g, gather(g, t, 0, 1, 1));
        const char *const params[][5] = {
            {NULL}, {"parts", "2", NULL}, {"parts", "0", NULL}, {"parts", "0", "min_hidden", "9"}};
        pass->params = params[variant][0] ? params[variant] : NULL;
        if (variant == 1 || variant == 2) {
            ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 0, NULL), 2);
            ck_assert_uint_eq(tk_count_op(g, PH_OP_MatMul), 2);
            /* the scalar index leaves [5, 8] in order: no Transpose for it */
            ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 1);
        }
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 12; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = variant == 9 ? ph_graph_add_input(g, "x", PH_DT_INT32, 3, TK_I64(3, 5, 8))
                                   : tk_input(g, "x", 3, TK_I64(3, 5, 8));
        if (variant == 4) /* x's rank unknown */
            ph_value_set_type(x, PH_DT_FLOAT, -1, NULL);
        int64_t R[5] = {0, 0, 3, 2, 4}, T[5] = {2, 0, 3, 1, 4};
        size_t q = 5;
        if (variant == 5) /* the product's columns mixed with its rows */
            memcpy(R, TK_I64(3, 15, 2, 4), 4 * sizeof *R), memcpy(T, TK_I64(1, 0, 2, 3), 4 * sizeof *T), q = 4;
        if (variant == 6) /* the axis cut is a row axis (the batch) */
            memcpy(R, TK_I64(3, 5, 3, 2, 4), 5 * sizeof *R), memcpy(T, TK_I64(0, 2, 3, 1, 4), 5 * sizeof *T);
        ph_value *t;
        if (variant == 9) { /* an integer MatMul */
            ph_value *w = ph_graph_add_initializer(g, "wi", ph_tensor_new(PH_DT_INT32, 2, TK_I64(8, 24), NULL));
            ph_value *in[2] = {tk_op2(g, "MatMul", x, w), tk_ints(g, "shape", q, R)};
            t = tk_transpose(g, ph_node_output(tk_node(g, "Reshape", 2, in), 0), q, T);
        } else {
            t = qkv(g, x, 8, 24, 1, q, R, T);
        }
        ph_node *tr = ph_value_producer(t), *reshape = ph_value_producer(ph_node_input(tr, 0));
        ph_value *add = ph_node_input(reshape, 0);
        for (int64_t i = 0; i < 3; i++)
            tk_output(g, gather(g, t, 0, variant == 7 && i == 2 ? 1 : i, 1)); /* 7: index 1 twice */
        switch (variant) {
        case 0: /* t has another reader */
            tk_output(g, tk_op1(g, "Relu", t));
            break;
        case 1: /* the product has another reader */
            tk_output(g, tk_op1(g, "Relu", ph_node_input(ph_value_producer(add), 1)));
            break;
        case 2: /* the biased product is a graph output */
            tk_output(g, add);
            break;
        case 3: { /* W is no constant */
            ph_node *mm = ph_value_producer(ph_node_input(ph_value_producer(add), 1));
            ph_node_set_input(mm, 1, tk_input(g, "w_in", 2, TK_I64(8, 24)));
            break;
        }
        case 8: /* four parts while the parameter wants three */
            break;
        case 10: /* t is a graph output */
            tk_output(g, t);
            break;
        case 11: { /* a Gather index that is not constant */
            ph_node *ga = ph_value_producer(ph_graph_output(g, 0));
            ph_node_set_input(ga, 1, ph_graph_add_input(g, "i_in", PH_DT_INT64, 0, NULL));
            break;
        }
        }
        if (variant == 8)
            ph_node_set_input(reshape, 1, tk_ints(g, "shape4", 5, TK_I64(0, 0, 4, 2, 3)));
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 5, 8));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    ph_value *t = qkv(then_g, x, 8, 24, 1, 5, TK_I64(0, 0, 3, 2, 4), TK_I64(2, 0, 3, 1, 4));
    ph_value *sum = tk_op2(then_g, "Add", gather(then_g, t, 0, 0, 1), gather(then_g, t, 0, 1, 1));
    tk_output(then_g, tk_op2(then_g, "Add", sum, gather(then_g, t, 0, 2, 1)));
    tk_output(else_g, tk_init(else_g, "k", 4, TK_I64(2, 2, 5, 4), 3));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 3);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_MatMul), 3);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Gather), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("split_qkv_matmul");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, gathers_become_matmuls);
    tcase_add_test(tc, split_of_interleaved_columns);
    tcase_add_test(tc, parameters);
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
