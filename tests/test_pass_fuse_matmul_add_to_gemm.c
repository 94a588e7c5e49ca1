/* tests/test_pass_fuse_matmul_add_to_gemm.c - fuse_matmul_add_to_gemm:
 * MatMul(A, B const) + Add(C const) -> Gemm(A, B, C). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("fuse_matmul_add_to_gemm");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Relu(a[M,K]) @ B[K,N] + C (C of crank dims cdims; swap: Add(C, mm)).
 * Returns the Add output; *mm gets the MatMul output. */
static ph_value *mm_add(ph_graph *g, const char *tag, ph_value *a, int64_t K, int64_t N, int crank,
                        const int64_t *cdims, int swap, ph_value **mm)
{
    char name[64];
    snprintf(name, sizeof name, "%s_B", tag);
    ph_value *b = tk_init(g, name, 2, TK_I64(K, N), 3);
    snprintf(name, sizeof name, "%s_C", tag);
    ph_value *c = tk_init(g, name, crank, cdims, 4);
    ph_value *p = tk_op2(g, "MatMul", a, b);
    if (mm)
        *mm = p;
    return swap ? tk_op2(g, "Add", c, p) : tk_op2(g, "Add", p, c);
}

START_TEST(bias_shapes_fold)
{
    static const struct {
        int rank;
        int64_t dims[2];
    } biases[] = {{1, {5}}, {2, {1, 5}}, {2, {3, 5}}, {0, {0}}, {2, {3, 1}}, {1, {1}}, {2, {1, 1}}};
    char ops[256];
    for (size_t i = 0; i < sizeof biases / sizeof biases[0]; i++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *a = tk_op1(g, "Relu", tk_input(g, "a", 2, TK_I64(3, 4)));
        tk_output(g, tk_op1(g, "Neg", mm_add(g, "f", a, 4, 5, biases[i].rank, biases[i].dims, (int)i & 1, NULL)));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 10 + i, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Gemm,Neg");
        ph_node *gemm = tk_find_op(g, PH_OP_Gemm);
        ck_assert_uint_eq(ph_node_input_count(gemm), 3);
        ck_assert_ptr_eq(ph_node_input(gemm, 0), a);
        ck_assert_int_eq(ph_node_attr_type(gemm, "transA"), PH_ATTR_NONE);
        tk_assert_untouched(pass, m); /* idempotent */
        ph_model_free(m);
    }
}
END_TEST

/* A symbolic batch dim: [N] and [1, N] biases fold. */
START_TEST(symbolic_rows)
{
    for (int v = 0; v < 2; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *a = tk_relu_input(g, 2, TK_I64(-1, 4), "batch");
        tk_output(g, mm_add(g, "s", a, 4, 6, v + 1, v ? TK_I64(1, 6) : TK_I64(6), 0, NULL));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 21, 2, TK_I64(1, 3)), 1);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Gemm), 1);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Add), 0);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_op1(g, "Relu", tk_input(g, "a", 2, TK_I64(2, 3)));
    ph_value *y = mm_add(g, "o", a, 3, 4, 1, TK_I64(4), 0, NULL);
    tk_output(g, y);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(g, 0)), tk_find_op(g, PH_OP_Gemm));
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int v = 0; v < 11; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        int64_t M = v == 7 ? 1 : 3;
        ph_value *a = tk_op1(g, "Relu", v == 3   ? tk_input(g, "a", -1, NULL)
                                         : v == 4 ? tk_input(g, "a", 3, TK_I64(2, M, 4))
                                         : v == 6 ? tk_input(g, "a", 2, TK_I64(-1, 4))
                                                  : tk_input(g, "a", 2, TK_I64(M, 4)));
        ph_value *mm, *y;
        switch (v) {
        case 5: /* bias of rank 3 widens the output */
            y = mm_add(g, "n", a, 4, 5, 3, TK_I64(1, 1, 5), 0, &mm);
            break;
        case 6: /* [3, N] against an unknown M */
            y = mm_add(g, "n", a, 4, 5, 2, TK_I64(3, 5), 0, &mm);
            break;
        case 7: /* [2, N] against M = 1 widens the output */
            y = mm_add(g, "n", a, 4, 5, 2, TK_I64(2, 5), 0, &mm);
            break;
        default:
            y = mm_add(g, "n", a, 4, 5, 1, TK_I64(5), 0, &mm);
        }
        tk_output(g, y);
        ph_node *add = ph_value_producer(y), *mmn = ph_value_producer(mm);
        switch (v) {
        case 0: /* the MatMul output has another consumer */
            tk_output(g, tk_op1(g, "Relu", mm));
            break;
        case 1: /* the MatMul output is a graph output */
            tk_output(g, mm);
            break;
        case 2: /* B is not constant */
            ph_node_set_input(mmn, 1, tk_input(g, "b", 2, TK_I64(4, 5)));
            break;
        case 8: /* the bias is not constant */
            ph_node_set_input(add, 1, tk_input(g, "c", 1, TK_I64(5)));
            break;
        case 9: /* opset 6: Gemm's C did not broadcast yet */
            ph_model_set_opset(m, "", 6);
            break;
        case 10: /* B of rank 3 */
            ph_node_set_input(mmn, 1, tk_init(g, "b3", 3, TK_I64(1, 4, 5), 9));
            break;
        default: /* 3: rank of A unknown, 4: A of rank 3 */
            break;
        }
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* int32 MatMul + Add: Gemm takes no integers here. */
START_TEST(integers_left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    int32_t bv[6] = {1, 2, 3, 4, 5, 6}, cv[3] = {1, 1, 1};
    ph_value *a = ph_graph_add_input(g, "a", PH_DT_INT32, 2, TK_I64(2, 2));
    ph_value *b = ph_graph_add_initializer(g, "b", ph_tensor_new(PH_DT_INT32, 2, TK_I64(2, 3), bv));
    ph_value *c = ph_graph_add_initializer(g, "c", ph_tensor_new(PH_DT_INT32, 1, TK_I64(3), cv));
    tk_output(g, tk_op2(g, "Add", tk_op2(g, "MatMul", tk_op1(g, "Abs", a), b), c));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_op1(g, "Relu", tk_input(g, "a", 2, TK_I64(3, 4)));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, mm_add(then_g, "t", a, 4, 5, 1, TK_I64(5), 0, NULL));
    tk_output(else_g, mm_add(else_g, "e", a, 4, 5, 2, TK_I64(1, 5), 1, NULL));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Gemm), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Gemm), 1);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_MatMul) + tk_count_op(else_g, PH_OP_MatMul), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_matmul_add_to_gemm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, bias_shapes_fold);
    tcase_add_test(tc, symbolic_rows);
    tcase_add_test(tc, graph_output_keeps_its_name);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, integers_left_alone);
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
