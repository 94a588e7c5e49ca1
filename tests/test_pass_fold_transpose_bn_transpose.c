/* tests/test_pass_fold_transpose_bn_transpose.c - fold_transpose_bn_transpose:
 * Transpose -> BatchNormalization -> inverse Transpose becomes Mul + Add. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("fold_transpose_bn_transpose");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* BatchNormalization of x over C channels, constant parameters, var > 0. */
static ph_node *bn(ph_graph *g, ph_value *x, int64_t C, const char *tag)
{
    char name[64];
    ph_value *p[5] = {x};
    float v[64];
    ck_assert_int_le(C, 64);
    for (int i = 0; i < 4; i++) {
        for (int64_t c = 0; c < C; c++) {
            float r = sinf((float)(c * 5 + i * 3 + 2));
            v[c] = i == 3 ? 0.5f + fabsf(r) : r;
        }
        snprintf(name, sizeof name, "%s_bn%d", tag, i);
        p[i + 1] = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(C), v));
    }
    ph_node *n = tk_node(g, "BatchNormalization", 5, p);
    ph_node_set_attr_float(n, "epsilon", 1e-3f);
    return n;
}

/* Transpose(x, p) -> BN(C) -> Transpose(q); perms NULL = attribute absent.
 * *t gets the first Transpose's output, *b the BN node. */
static ph_value *tbt(ph_graph *g, ph_value *x, size_t r, const int64_t *p, const int64_t *q, int64_t C,
                     const char *tag, ph_value **t, ph_node **b)
{
    ph_value *tv = tk_transpose(g, x, r, p);
    ph_node *bnode = bn(g, tv, C, tag);
    if (t)
        *t = tv;
    if (b)
        *b = bnode;
    return tk_transpose(g, ph_node_output(bnode, 0), r, q);
}

START_TEST(folds)
{
    char ops[256];
    for (int v = 0; v < 4; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *y;
        size_t sizes = 0;
        switch (v) {
        case 0: /* NHWC: to NCHW and back */
            y = tbt(g, tk_relu_input(g, 4, TK_I64(2, 3, 3, 5), NULL), 4, TK_I64(0, 3, 1, 2), TK_I64(0, 2, 3, 1), 5, "a", NULL, NULL);
            break;
        case 1: /* [N, L, C] with a swap, symbolic batch */
            y = tbt(g, tk_relu_input(g, 3, TK_I64(-1, 4, 6), "batch"), 3, TK_I64(0, 2, 1), TK_I64(0, 2, 1), 6, "a", NULL, NULL);
            sizes = 2;
            break;
        case 2: /* rank 2, both perms absent (reversed dims): channel is x's axis 0 */
            y = tbt(g, tk_relu_input(g, 2, TK_I64(4, 3), NULL), 2, NULL, NULL, 4, "a", NULL, NULL);
            break;
        default: /* a rotation whose channel lands on axis 2 of x */
            y = tbt(g, tk_relu_input(g, 3, TK_I64(3, 4, 5), NULL), 3, TK_I64(1, 2, 0), TK_I64(2, 0, 1), 5, "a", NULL, NULL);
            break;
        }
        tk_output(g, y);
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 90 + (uint64_t)v, sizes, TK_I64(1, 3)), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Mul,Add");
        ck_assert_uint_eq(ph_graph_initializer_count(g), 2);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *y = tbt(g, tk_relu_input(g, 3, TK_I64(2, 3, 4), NULL), 3, TK_I64(0, 2, 1), TK_I64(0, 2, 1), 4, "a", NULL, NULL);
    tk_output(g, y);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 7, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(g, 0)), tk_find_op(g, PH_OP_Add));
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int v = 0; v < 7; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_relu_input(g, v == 6 ? -1 : 4, TK_I64(2, 3, 3, 5), NULL), *t, *y;
        ph_node *b;
        if (v == 0) /* not inverses: the same rotation twice */
            y = tbt(g, x, 4, TK_I64(0, 3, 1, 2), TK_I64(0, 3, 1, 2), 5, "a", &t, &b);
        else if (v == 6) /* perms absent and the rank unknown */
            y = tbt(g, x, 0, NULL, NULL, 5, "a", &t, &b);
        else
            y = tbt(g, x, 4, TK_I64(0, 3, 1, 2), TK_I64(0, 2, 3, 1), 5, "a", &t, &b);
        tk_output(g, y);
        switch (v) {
        case 1: /* the first Transpose has another consumer */
            tk_output(g, tk_op1(g, "Neg", t));
            break;
        case 2: /* the BN output is a graph output */
            tk_output(g, ph_node_output(b, 0));
            break;
        case 3: /* a BN parameter is not constant */
            ph_node_set_input(b, 4, tk_input(g, "var", 1, TK_I64(5)));
            break;
        case 4: /* training mode */
            ph_node_set_attr_int(b, "training_mode", 1);
            break;
        case 5: /* opset 6 */
            ph_model_set_opset(m, "", 6);
            break;
        default:
            break;
        }
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 3, TK_I64(2, 3, 4), NULL);
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tbt(then_g, x, 3, TK_I64(0, 2, 1), TK_I64(0, 2, 1), 4, "t", NULL, NULL));
    tk_output(else_g, tbt(else_g, x, 3, TK_I64(0, 2, 1), TK_I64(0, 2, 1), 4, "e", NULL, NULL));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_BatchNormalization) + tk_count_op(else_g, PH_OP_BatchNormalization), 0);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Transpose) + tk_count_op(else_g, PH_OP_Transpose), 0);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Mul) + tk_count_op(else_g, PH_OP_Add), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fold_transpose_bn_transpose");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, folds);
    tcase_add_test(tc, graph_output_keeps_its_name);
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
