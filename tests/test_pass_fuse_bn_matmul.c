/* tests/test_pass_fuse_bn_matmul.c - fuse_bn_matmul: BatchNormalization
 * before or after a 2-D MatMul/Gemm with a constant weight. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("fuse_bn_matmul");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* BatchNormalization of x over C channels with constant parameters (var
 * positive); returns the node. */
static ph_node *bn_outs(ph_graph *g, ph_value *x, int64_t C, const char *tag, size_t n_out)
{
    char name[64];
    ph_value *p[5] = {x};
    float v[64];
    ck_assert_int_le(C, 64);
    for (int i = 0; i < 4; i++) {
        for (int64_t c = 0; c < C; c++) {
            float r = sinf((float)(c * 7 + i * 3 + 1));
            v[c] = i == 3 ? 0.5f + fabsf(r) : r;
        }
        snprintf(name, sizeof name, "%s_bn%d", tag, i);
        p[i + 1] = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(C), v));
    }
    ph_node *n = ph_node_create(g, NULL, "BatchNormalization", 5, p, n_out);
    ck_assert_ptr_nonnull(n);
    ph_node_set_attr_float(n, "epsilon", 1e-3f);
    return n;
}

static ph_node *bn(ph_graph *g, ph_value *x, int64_t C, const char *tag) { return bn_outs(g, x, C, tag, 1); }

static ph_value *bnv(ph_graph *g, ph_value *x, int64_t C, const char *tag)
{
    return ph_node_output(bn(g, x, C, tag), 0);
}

static ph_node *gemm(ph_graph *g, ph_value *a, ph_value *w, ph_value *c, int ta, int tb, float alpha, float beta)
{
    ph_value *in[3] = {a, w, c};
    ph_node *n = tk_node(g, "Gemm", c ? 3 : 2, in);
    if (ta)
        ph_node_set_attr_int(n, "transA", 1);
    if (tb)
        ph_node_set_attr_int(n, "transB", 1);
    if (alpha != 1)
        ph_node_set_attr_float(n, "alpha", alpha);
    if (beta != 1)
        ph_node_set_attr_float(n, "beta", beta);
    return n;
}

static ph_value *relu_in(ph_graph *g, const char *name, int rank, const int64_t *dims)
{
    return tk_op1(g, "Relu", tk_input(g, name, rank, dims));
}

START_TEST(bn_before)
{
    char ops[256];
    for (int v = 0; v < 4; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *b = bnv(g, relu_in(g, "x", 2, TK_I64(3, 4)), 4, "a"), *y;
        switch (v) {
        case 0: y = tk_op2(g, "MatMul", b, tk_init(g, "w", 2, TK_I64(4, 5), 1)); break;
        case 1: y = ph_node_output(gemm(g, b, tk_init(g, "w", 2, TK_I64(5, 4), 1), tk_init(g, "c", 1, TK_I64(5), 2), 0, 1, 0.5f, 2.0f), 0); break;
        case 2: y = ph_node_output(gemm(g, b, tk_init(g, "w", 2, TK_I64(4, 5), 1), tk_init(g, "c", 2, TK_I64(3, 1), 2), 0, 0, 1.5f, 1.0f), 0); break;
        default: y = ph_node_output(gemm(g, b, tk_init(g, "w", 2, TK_I64(4, 5), 1), NULL, 0, 0, 1.0f, 3.0f), 0); break;
        }
        tk_output(g, y);
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 70 + (uint64_t)v, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Gemm");
        ph_node *n = tk_find_op(g, PH_OP_Gemm);
        ck_assert_uint_eq(ph_node_input_count(n), 3);
        ck_assert_float_eq(ph_node_attr_float(n, "beta", 1.0f), 1.0f);
        ck_assert_uint_eq(ph_graph_initializer_count(g), 2);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(bn_after)
{
    char ops[256];
    for (int v = 0; v < 4; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = relu_in(g, "x", 2, TK_I64(3, 4)), *p;
        switch (v) {
        case 0: p = tk_op2(g, "MatMul", x, tk_init(g, "w", 2, TK_I64(4, 5), 1)); break;
        case 1: p = ph_node_output(gemm(g, x, tk_init(g, "w", 2, TK_I64(5, 4), 1), tk_init(g, "c", 2, TK_I64(3, 5), 2), 0, 1, 0.5f, 2.0f), 0); break;
        case 2: p = ph_node_output(gemm(g, x, tk_init(g, "w", 2, TK_I64(4, 5), 1), NULL, 0, 0, 2.0f, 1.0f), 0); break;
        default: /* transA: the product is still [M, N] */
            p = ph_node_output(gemm(g, relu_in(g, "xt", 2, TK_I64(4, 3)), tk_init(g, "w", 2, TK_I64(4, 5), 1), tk_init(g, "c", 0, NULL, 2), 1, 0, 1.0f, 0.5f), 0);
            break;
        }
        tk_output(g, bnv(g, p, 5, "a"));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 80 + (uint64_t)v, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), v == 3 ? "Relu,Relu,Gemm" : "Relu,Gemm");
        ck_assert_uint_eq(ph_graph_initializer_count(g), 2);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(left_alone)
{
    for (int v = 0; v < 13; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = relu_in(g, "x", v == 4 ? 3 : v == 9 ? -1 : 2, v == 4 ? TK_I64(2, 4, 4) : TK_I64(3, 4));
        ph_value *w = tk_init(g, "w", 2, TK_I64(4, 5), 1);
        ph_node *n;
        ph_value *b, *p;
        switch (v) {
        case 0: /* the BN output has another consumer */
            b = bnv(g, x, 4, "a");
            tk_output(g, tk_op2(g, "MatMul", b, w));
            tk_output(g, b);
            break;
        case 1: /* the product feeds the BN and a graph output */
            p = tk_op2(g, "MatMul", x, w);
            tk_output(g, bnv(g, p, 5, "a"));
            tk_output(g, p);
            break;
        case 2: /* a BN parameter is not constant */
            n = bn(g, x, 4, "a");
            ph_node_set_input(n, 3, tk_input(g, "mean", 1, TK_I64(4)));
            tk_output(g, tk_op2(g, "MatMul", ph_node_output(n, 0), w));
            break;
        case 3: /* the weight is not constant */
            tk_output(g, bnv(g, tk_op2(g, "MatMul", x, relu_in(g, "wv", 2, TK_I64(4, 5))), 5, "a"));
            break;
        case 4: /* BN on a rank-3 input: channel axis 1 is not the contraction axis */
            tk_output(g, tk_op2(g, "MatMul", bnv(g, x, 4, "a"), w));
            break;
        case 5: /* Gemm with transA: the BN channel is A's column, the M axis of op(A) */
            tk_output(g, ph_node_output(gemm(g, bnv(g, relu_in(g, "xt", 2, TK_I64(4, 4)), 4, "a"), w, NULL, 1, 0, 1, 1), 0));
            break;
        case 6: /* training mode */
            n = bn(g, tk_op2(g, "MatMul", x, w), 5, "a");
            ph_node_set_attr_int(n, "training_mode", 1);
            tk_output(g, ph_node_output(n, 0));
            break;
        case 7: /* opset 6: BatchNormalization had is_test */
            ph_model_set_opset(m, "", 6);
            tk_output(g, tk_op2(g, "MatMul", bnv(g, x, 4, "a"), w));
            break;
        case 8: /* Gemm bias not constant */
            tk_output(g, bnv(g, ph_node_output(gemm(g, x, w, relu_in(g, "c", 1, TK_I64(5)), 0, 0, 1, 1), 0), 5, "a"));
            break;
        case 9: /* rank of x unknown */
            tk_output(g, tk_op2(g, "MatMul", bnv(g, x, 4, "a"), w));
            break;
        case 10: /* the BN's second output is used */
            n = bn_outs(g, tk_op2(g, "MatMul", x, w), 5, "a", 3);
            tk_output(g, ph_node_output(n, 0));
            tk_output(g, ph_node_output(n, 1));
            break;
        case 12: /* the weight is shared with another MatMul */
            tk_output(g, tk_op2(g, "MatMul", bnv(g, x, 4, "a"), w));
            tk_output(g, tk_op2(g, "MatMul", relu_in(g, "z", 2, TK_I64(2, 4)), w));
            break;
        default: /* N-D MatMul then BN: channel axis 1 is a batch axis */
            x = relu_in(g, "x3", 3, TK_I64(2, 5, 4));
            tk_output(g, bnv(g, tk_op2(g, "MatMul", x, w), 5, "a"));
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
    ph_value *x = relu_in(g, "x", 2, TK_I64(3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op2(then_g, "MatMul", bnv(then_g, x, 4, "t"), tk_init(then_g, "tw", 2, TK_I64(4, 5), 1)));
    tk_output(else_g, bnv(else_g, tk_op2(else_g, "MatMul", x, tk_init(else_g, "ew", 2, TK_I64(4, 5), 1)), 5, "e"));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_BatchNormalization) + tk_count_op(else_g, PH_OP_BatchNormalization), 0);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Gemm) + tk_count_op(else_g, PH_OP_Gemm), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_bn_matmul");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, bn_before);
    tcase_add_test(tc, bn_after);
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
