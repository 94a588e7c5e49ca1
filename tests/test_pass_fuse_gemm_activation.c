/* tests/test_pass_fuse_gemm_activation.c - fuse_gemm_activation: Gemm +
 * activation -> com.microsoft FusedGemm, MatMul of a last-two-dims Transpose
 * -> com.microsoft FusedMatMul.  The evaluator has no com.microsoft
 * operators, so these check structure; scripts/test_ort.sh checks the
 * numbers in ONNX Runtime. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("fuse_gemm_activation");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Gemm(a[2,4], B[3,4]^T, C[3]) {alpha 0.5, beta 2, transB 1}. */
static ph_value *gemm(ph_graph *g, ph_value *a, int with_c, const char *tag)
{
    char b[32], c[32];
    snprintf(b, sizeof b, "%s_b", tag);
    snprintf(c, sizeof c, "%s_c", tag);
    ph_value *in[3] = {a, tk_init(g, b, 2, TK_I64(3, 4), 5), with_c ? tk_init(g, c, 1, TK_I64(3), 6) : NULL};
    ph_node *n = tk_node(g, "Gemm", with_c ? 3 : 2, in);
    ph_node_set_attr_float(n, "alpha", 0.5f);
    ph_node_set_attr_float(n, "beta", 2.0f);
    ph_node_set_attr_int(n, "transB", 1);
    return ph_node_output(n, 0);
}

static ph_node *find_domain_op(ph_graph *g, const char *op)
{
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        if (strcmp(ph_node_op_type(n), op) == 0 && strcmp(ph_node_domain(n), "com.microsoft") == 0)
            return n;
    return NULL;
}

START_TEST(gemm_activations)
{
    static const struct {
        const char *op;
        const char *attr[2];
        float val[2];
        const char *want[3]; /* activation_alpha, _beta, _gamma: NULL = absent */
        float wval[3];
    } cases[] = {
        {"Relu", {0}, {0}, {0}, {0}},
        {"Sigmoid", {0}, {0}, {0}, {0}},
        {"Tanh", {0}, {0}, {0}, {0}},
        {"Softsign", {0}, {0}, {0}, {0}},
        {"Softplus", {0}, {0}, {0}, {0}},
        {"LeakyRelu", {"alpha"}, {0.3f}, {"activation_alpha"}, {0.3f}},
        {"LeakyRelu", {0}, {0}, {"activation_alpha"}, {0.01f}}, /* the ONNX default, explicit */
        {"Elu", {"alpha"}, {0.7f}, {"activation_alpha"}, {0.7f}},
        {"ThresholdedRelu", {0}, {0}, {"activation_alpha"}, {1.0f}},
        {"HardSigmoid", {"beta"}, {0.25f}, {"activation_alpha", "activation_beta"}, {0.2f, 0.25f}},
        {"Selu", {"gamma"}, {1.5f}, {"activation_alpha", NULL, "activation_gamma"}, {1.67326319217681884765625f, 0, 1.5f}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_node *act = tk_node(g, cases[i].op, 1, (ph_value *[]){gemm(g, tk_input(g, "a", 2, TK_I64(2, 4)), 1, "g")});
        for (int k = 0; k < 2 && cases[i].attr[k]; k++)
            ph_node_set_attr_float(act, cases[i].attr[k], cases[i].val[k]);
        tk_neg_output(g, ph_node_output(act, 0));
        ck_assert_int_eq(tk_pass_run(pass, m), 1);
        char ops[128];
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "FusedGemm,Neg");
        ph_node *fg = find_domain_op(g, "FusedGemm");
        ck_assert_ptr_nonnull(fg);
        ck_assert_str_eq(ph_node_attr_string(fg, "activation", ""), cases[i].op);
        ck_assert(ph_node_attr_float(fg, "alpha", 0) == 0.5f);
        ck_assert(ph_node_attr_float(fg, "beta", 0) == 2.0f);
        ck_assert_int_eq(ph_node_attr_int(fg, "transA", -1), 0);
        ck_assert_int_eq(ph_node_attr_int(fg, "transB", -1), 1);
        ck_assert_uint_eq(ph_node_input_count(fg), 3);
        static const char *const keys[3] = {"activation_alpha", "activation_beta", "activation_gamma"};
        for (int k = 0; k < 3; k++) {
            if (!cases[i].want[k]) {
                ck_assert_int_eq(ph_node_attr_type(fg, keys[k]), PH_ATTR_NONE);
                continue;
            }
            ck_assert_msg(ph_node_attr_float(fg, keys[k], -99) == cases[i].wval[k], "%s %s = %g", cases[i].op,
                          keys[k], (double)ph_node_attr_float(fg, keys[k], -99));
        }
        ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), 1);
        ck_assert_int_eq(ph_value_rank(ph_node_output(fg, 0)), 2);
        ck_assert_int_eq(ph_value_dim(ph_node_output(fg, 0), 1), 3);
        tk_assert_untouched(pass, m); /* idempotent */
        ph_model_free(m);
    }
}
END_TEST

START_TEST(gemm_left_alone)
{
    for (int variant = 0; variant < 7; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *a = variant == 3 ? ph_graph_add_input(g, "a", PH_DT_UNDEFINED, -1, NULL)
                                   : tk_input(g, "a", 2, TK_I64(2, 4));
        ph_value *c = gemm(g, a, variant != 2, "g");
        const char *op = variant == 4 ? "Clip" : "Relu";
        ph_value *y = tk_op1(g, op, c);
        switch (variant) {
        case 0: /* the Gemm output has another consumer */
            tk_neg_output(g, c);
            break;
        case 1: /* the Gemm output is a graph output */
            tk_output(g, c);
            break;
        case 5: /* opset 6: Gemm may carry `broadcast` */
            ph_model_set_opset(m, "", 6);
            break;
        case 6: /* a Gemm of another domain */
            ph_node_set_domain(ph_value_producer(c), "com.example");
            ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0); /* a domain the model imports */
            break;
        default: /* 2: no C; 3: dtype unknown; 4: Clip (FusedGemm has no Clip) */
            break;
        }
        tk_neg_output(g, y);
        if (variant == 5) /* opset 6: no inference; compare the signature only */
            pass->shapes = 0;
        tk_assert_untouched(pass, m);
        pass->shapes = 1;
        ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), -1);
        ph_model_free(m);
    }
}
END_TEST

/* MatMul(Transpose?(a), Transpose?(b)) of rank-4 operands. */
START_TEST(matmul_transposes)
{
    static const int64_t swap4[4] = {0, 1, 3, 2};
    for (int variant = 0; variant < 4; variant++) {
        int ta = variant & 1, tb = variant & 2;
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        /* A as seen by MatMul: [2,3,5,4]; B: [2,3,4,6] */
        ph_value *a = tk_input(g, "a", 4, ta ? TK_I64(2, 3, 4, 5) : TK_I64(2, 3, 5, 4));
        ph_value *b = tk_input(g, "b", 4, tb ? TK_I64(2, 3, 6, 4) : TK_I64(2, 3, 4, 6));
        ph_value *y = tk_op2(g, "MatMul", ta ? tk_transpose(g, a, 4, swap4) : a, tb ? tk_transpose(g, b, 4, swap4) : b);
        tk_output(g, y);
        ck_assert_int_eq(tk_pass_run(pass, m), variant ? 1 : 0);
        if (!variant) {
            ph_model_free(m);
            continue;
        }
        char ops[64];
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "FusedMatMul");
        ph_node *fm = find_domain_op(g, "FusedMatMul");
        ck_assert_ptr_nonnull(fm);
        ck_assert_ptr_eq(ph_node_input(fm, 0), a);
        ck_assert_ptr_eq(ph_node_input(fm, 1), b);
        ck_assert_int_eq(ph_node_attr_int(fm, "transA", -1), ta ? 1 : 0);
        ck_assert_int_eq(ph_node_attr_int(fm, "transB", -1), tb ? 1 : 0);
        ck_assert(ph_node_attr_float(fm, "alpha", 0) == 1.0f);
        ck_assert_int_eq(ph_value_dim(ph_graph_output(g, 0), 3), 6);
        ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), 1);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(matmul_2d_without_perm)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_input(g, "a", 3, TK_I64(2, 5, 4));
    ph_value *b = tk_input(g, "b", 2, TK_I64(6, 4));
    tk_output(g, tk_op2(g, "MatMul", a, tk_transpose(g, b, 2, NULL)));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ph_node *fm = find_domain_op(g, "FusedMatMul");
    ck_assert_ptr_nonnull(fm);
    ck_assert_int_eq(ph_node_attr_int(fm, "transB", -1), 1);
    ck_assert_int_eq(ph_node_attr_int(fm, "transA", -1), 0);
    ph_model_free(m);
}
END_TEST

START_TEST(matmul_left_alone)
{
    for (int variant = 0; variant < 8; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *a = tk_input(g, "a", 3, TK_I64(2, 5, 4));
        ph_value *b = variant == 4 ? ph_graph_add_input(g, "b", PH_DT_INT32, 3, TK_I64(2, 6, 4))
                      : variant == 5 ? ph_graph_add_input(g, "b", PH_DT_UNDEFINED, -1, NULL)
                                     : tk_input(g, "b", 3, TK_I64(2, 6, 4));
        if (variant == 4)
            a = ph_graph_add_input(g, "ai", PH_DT_INT32, 3, TK_I64(2, 5, 4));
        const int64_t *perm = variant == 2 ? TK_I64(1, 0, 2) : TK_I64(0, 2, 1);
        ph_value *t;
        if (variant == 3) { /* no perm at rank 3: reverses all dims, no swap */
            t = tk_transpose(g, tk_input(g, "b3", 3, TK_I64(4, 6, 2)), 3, NULL);
            a = tk_input(g, "a3", 3, TK_I64(2, 5, 6));
        } else {
            t = tk_transpose(g, b, 3, perm);
        }
        if (variant == 2) /* perm [1,0,2]: b' is [6,2,4], so a must be [6,5,2] */
            a = tk_input(g, "a2", 3, TK_I64(6, 5, 2));
        ph_value *y = tk_op2(g, "MatMul", a, t);
        switch (variant) {
        case 0: /* the Transpose has another consumer */
            tk_neg_output(g, t);
            break;
        case 1: /* the Transpose output is a graph output */
            tk_output(g, t);
            break;
        case 6: /* Transpose of another domain */
            ph_node_set_domain(ph_value_producer(t), "com.example");
            ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0); /* a domain the model imports */
            break;
        case 7: { /* the other operand is 1-D: ORT gets FusedMatMul {transA} of that wrong */
            ph_node *mm = ph_value_producer(y);
            ph_node_set_input(mm, 0, tk_transpose(g, tk_input(g, "a7", 3, TK_I64(2, 6, 4)), 3, TK_I64(0, 2, 1)));
            ph_node_set_input(mm, 1, tk_input(g, "v7", 1, TK_I64(6)));
            break;
        }
        default: /* 2: not a swap; 3: no perm at rank 3; 4: int32; 5: dtype unknown */
            break;
        }
        tk_output(g, y);
        ph_graph_remove_dead(g);
        ck_assert_int_eq(ph_graph_toposort(g), 0); /* nodes added out of order above */
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_input(g, "a", 2, TK_I64(2, 4));
    ph_value *b = tk_input(g, "b", 3, TK_I64(2, 3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op1(then_g, "Relu", gemm(then_g, a, 1, "t")));
    tk_output(else_g, tk_op2(else_g, "MatMul", a, tk_transpose(else_g, b, 3, TK_I64(0, 2, 1))));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_ptr_nonnull(find_domain_op(then_g, "FusedGemm"));
    ck_assert_ptr_nonnull(find_domain_op(else_g, "FusedMatMul"));
    ck_assert_uint_eq(ph_graph_node_count(then_g), 1);
    ck_assert_uint_eq(ph_graph_node_count(else_g), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_gemm_activation");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, gemm_activations);
    tcase_add_test(tc, gemm_left_alone);
    tcase_add_test(tc, matmul_transposes);
    tcase_add_test(tc, matmul_2d_without_perm);
    tcase_add_test(tc, matmul_left_alone);
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
