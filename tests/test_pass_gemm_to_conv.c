/* tests/test_pass_gemm_to_conv.c - gemm_to_conv: Gemm/MatMul with a constant
 * weight on a flattened [N,C,1,1] becomes a 1x1 Conv + Flatten. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("gemm_to_conv");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

enum { FLATTEN, RESHAPE };

/* x [N,C,1,1] -> Flatten/Reshape -> f [N,C]; returns f. */
static ph_value *flat(ph_graph *g, ph_value *x, int how, int64_t C)
{
    if (how == FLATTEN)
        return tk_op1(g, "Flatten", x);
    return tk_op2(g, "Reshape", x, tk_ints(g, "shape", 2, TK_I64(-1, C)));
}

/* Gemm(f, w, c?) with w [C,M] ([M,C] with transB); bias_rank 0: no bias. */
static ph_node *gemm(ph_graph *g, ph_value *f, int64_t C, int64_t M, int trans_b, int bias_rank,
                     const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "%s_w", tag);
    ph_value *in[3] = {f, trans_b ? tk_init(g, name, 2, TK_I64(M, C), 3) : tk_init(g, name, 2, TK_I64(C, M), 3)};
    snprintf(name, sizeof name, "%s_c", tag);
    if (bias_rank == 1)
        in[2] = tk_init(g, name, 1, TK_I64(M), 4);
    else if (bias_rank == 2)
        in[2] = tk_init(g, name, 2, TK_I64(1, M), 4);
    ph_node *n = tk_node(g, "Gemm", bias_rank ? 3 : 2, in);
    if (trans_b)
        ph_node_set_attr_int(n, "transB", 1);
    return n;
}

START_TEST(gemm_variants)
{
    char ops[256];
    for (int v = 0; v < 8; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(2, 6, 1, 1));
        ph_node *n = gemm(g, flat(g, x, v & 1 ? RESHAPE : FLATTEN, 6), 6, 5, (v >> 1) & 1, v >> 2 ? 2 : (v & 2 ? 1 : 0), "a");
        if (v == 7) {
            ph_node_set_attr_float(n, "alpha", 0.5f);
            ph_node_set_attr_float(n, "beta", 2.0f);
        }
        tk_output(g, ph_node_output(n, 0));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 11 + (uint64_t)v, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Conv,Flatten");
        ph_node *conv = tk_find_op(g, PH_OP_Conv);
        const ph_tensor *w = ph_value_const(ph_node_input(conv, 1));
        ck_assert_int_eq(ph_tensor_rank(w), 4);
        ck_assert_int_eq(ph_tensor_dim(w, 0), 5);
        ck_assert_int_eq(ph_tensor_dim(w, 1), 6);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(matmul_symbolic_batch)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(-1, 4, 1, 1));
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "N"), 0);
    ph_value *y = tk_op2(g, "MatMul", flat(g, x, RESHAPE, 4), tk_init(g, "w", 2, TK_I64(4, 3), 5));
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 21, 2, TK_I64(1, 3)), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Conv,Flatten");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name); /* the output keeps its name */
    ck_assert_str_eq(ph_value_dim_param(ph_graph_output(g, 0), 0), "N");
    free(name);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int v = 0; v < 11; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        int64_t h = v == 3 ? 2 : 1;
        ph_value *x = tk_input(g, "x", v == 2 ? -1 : 4, TK_I64(2, 6, h, 1));
        ph_value *f = flat(g, x, FLATTEN, 6);
        ph_node *n = gemm(g, f, 6 * h, 5, 0, 1, "a");
        tk_output(g, ph_node_output(n, 0));
        switch (v) {
        case 0: /* the flattened value has another consumer */
            tk_output(g, tk_op1(g, "Relu", f));
            break;
        case 1: /* the flattened value is a graph output */
            tk_output(g, f);
            break;
        case 2: /* unknown rank */
            break;
        case 3: /* [N,C,2,1]: not a 1x1 spatial input */
            break;
        case 4: /* the weight is not constant */
            ph_node_set_input(n, 1, tk_input(g, "w", 2, TK_I64(6, 5)));
            break;
        case 5: /* the bias is not constant */
            ph_node_set_input(n, 2, tk_input(g, "c", 1, TK_I64(5)));
            break;
        case 6: /* transA */
            ph_node_set_attr_int(n, "transA", 1);
            ph_node_set_input(n, 1, tk_init(g, "w2", 2, TK_I64(2, 5), 9));
            break;
        case 7: /* a bias of shape [N, M] is not per channel */
            ph_node_set_input(n, 2, tk_init(g, "c2", 2, TK_I64(2, 5), 9));
            break;
        case 8: { /* Flatten at axis 2 gives [N*C, 1] */
            ph_node_set_attr_int(ph_value_producer(f), "axis", 2);
            ph_node_set_input(n, 1, tk_init(g, "w1", 2, TK_I64(1, 5), 9));
            break;
        }
        case 9: { /* integer dtype */
            ph_value *xi = ph_graph_add_input(g, "xi", PH_DT_INT32, 4, TK_I64(2, 6, 1, 1));
            int32_t wv[30] = {0};
            ph_value *wi = ph_graph_add_initializer(g, "wi", ph_tensor_new(PH_DT_INT32, 2, TK_I64(6, 5), wv));
            tk_output(g, tk_op2(g, "MatMul", tk_op1(g, "Flatten", xi), wi));
            ph_node_set_input(n, 1, tk_input(g, "w", 2, TK_I64(6, 5))); /* the float one stays put */
            break;
        }
        case 10: /* MatMul with the flattened value as the second operand */
            tk_output(g, tk_op2(g, "MatMul", tk_init(g, "l", 2, TK_I64(3, 2), 9), tk_op1(g, "Flatten", tk_input(g, "z", 4, TK_I64(2, 6, 1, 1)))));
            ph_node_set_input(n, 1, tk_input(g, "w", 2, TK_I64(6, 5)));
            break;
        }
        ck_assert_int_eq(ph_graph_toposort(g), 0);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 6, 1, 1));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, ph_node_output(gemm(then_g, flat(then_g, x, FLATTEN, 6), 6, 5, 1, 1, "t"), 0));
    tk_output(else_g, tk_op2(else_g, "MatMul", flat(else_g, x, RESHAPE, 6), tk_init(else_g, "e_w", 2, TK_I64(6, 5), 3)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Gemm), 0);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Conv), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_MatMul), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Conv), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gemm_to_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, gemm_variants);
    tcase_add_test(tc, matmul_symbolic_batch);
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
