/* tests/test_pass_decompose_einsum.c - decompose_einsum: Einsum forms of a
 * batched matmul, an elementwise product or a permutation become
 * Transpose/Reshape/MatMul/Mul; trace, diagonal, sum-only and broadcasting
 * forms stay. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("decompose_einsum");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Einsum(eq) of inputs a (and b when rb >= 0) in g; returns its output. */
static ph_value *einsum(ph_graph *g, const char *eq, ph_value *a, ph_value *b)
{
    ph_value *in[2] = {a, b};
    ph_node *n = tk_node(g, "Einsum", b ? 2 : 1, in);
    ph_node_set_attr_string(n, "equation", eq);
    return ph_node_output(n, 0);
}

/* A model whose output is Einsum(eq) of a [ra dims] (and b). */
static ph_model *model(const char *eq, int ra, const int64_t *da, int rb, const int64_t *db)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_input(g, "a", ra, da), *b = rb >= 0 ? tk_input(g, "b", rb, db) : NULL;
    tk_output(g, einsum(g, eq, a, b));
    return m;
}

static const struct {
    const char *eq, *ops;
    int ra;
    int64_t da[4];
    int rb;
    int64_t db[4];
} good[] = {
    {"bij,bjk->bik", "MatMul", 3, {2, 3, 4}, 3, {2, 4, 5}},
    {"bhid,bhjd->bhij", "Transpose,MatMul", 4, {2, 3, 4, 5}, 4, {2, 3, 6, 5}},
    {"ij,jk->ik", "MatMul", 2, {3, 4}, 2, {4, 5}},
    {"ij,jk", "MatMul", 2, {3, 4}, 2, {4, 5}},
    {" i j , j k -> i k ", "MatMul", 2, {3, 4}, 2, {4, 5}},
    {"bi,bi->bi", "Mul", 2, {3, 4}, 2, {3, 4}},
    {"bi,ib->ib", "Transpose,Mul", 2, {3, 4}, 2, {4, 3}},
    {"ik,kj->ji", "MatMul,Transpose", 2, {3, 4}, 2, {4, 5}},
    {"bij,bj->bi", "Reshape,MatMul,Reshape", 3, {2, 3, 4}, 2, {2, 4}},
    {"i,j->ij", "Reshape,Reshape,MatMul", 1, {3}, 1, {5}},
    {"bi,bi->b", "Reshape,Reshape,MatMul,Reshape", 2, {3, 4}, 2, {3, 4}},
    {"abcd,cdef->abef", "Reshape,Reshape,MatMul,Reshape", 4, {2, 3, 4, 2}, 4, {4, 2, 3, 2}},
    {"bqhd,bkhd->bhqk", "Transpose,Transpose,MatMul", 4, {2, 5, 3, 4}, 4, {2, 6, 3, 4}},
    {"ij->ji", "Transpose", 2, {3, 4}, -1, {0}},
    {"abc->cab", "Transpose", 3, {2, 3, 4}, -1, {0}},
};

START_TEST(forms_decompose)
{
    char ops[256];
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        ph_model *m = model(good[i].eq, good[i].ra, good[i].da, good[i].rb, good[i].db);
        ph_graph *g = ph_model_graph(m);
        char *name = strdup(ph_value_name(ph_graph_output(g, 0)));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 10 + i, 0, NULL), 1);
        ck_assert_msg(!strcmp(tk_ops(g, ops, sizeof ops), good[i].ops), "%s: %s, want %s", good[i].eq, ops,
                      good[i].ops);
        ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
        free(name);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* Symbolic batch dims: MatMul batches over them; Reshapes copy them with 0. */
START_TEST(symbolic_batch)
{
    char ops[256];
    const int64_t sizes[2] = {1, 3};
    for (int variant = 0; variant < 2; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *a = tk_input(g, "a", 3, TK_I64(-1, 3, 4));
        ph_value *b = variant ? tk_input(g, "b", 2, TK_I64(-1, 4)) : tk_input(g, "b", 3, TK_I64(-1, 4, 5));
        ph_value_set_dim_param(a, 0, "batch");
        ph_value_set_dim_param(b, 0, "batch");
        tk_output(g, tk_op1(g, "Neg", einsum(g, variant ? "bij,bj->bi" : "bij,bjk->bik", a, b)));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 2, sizes), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), variant ? "Reshape,MatMul,Reshape,Neg" : "MatMul,Neg");
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(left_alone)
{
    static const struct {
        const char *eq;
        int ra;
        int64_t da[3];
        int rb;
        int64_t db[3];
    } bad[] = {
        {"ii->", 2, {3, 3}, -1, {0}},                  /* trace */
        {"ii->i", 2, {3, 3}, -1, {0}},                 /* diagonal */
        {"ij->i", 2, {3, 4}, -1, {0}},                 /* sum */
        {"bii,bij->bj", 3, {2, 3, 3}, 3, {2, 3, 4}},   /* diagonal in one operand */
        {"ij,jk->i", 2, {3, 4}, 2, {4, 5}},            /* k summed over one operand only */
        {"...ij,...jk->...ik", 3, {2, 3, 4}, 3, {2, 4, 5}}, /* ellipsis */
        {"bij,bjk->bik", 3, {-1, 3, 4}, 3, {2, 4, 5}}, /* b not provably equal */
        {"ij,jk->ik", 2, {3, -1}, 2, {-1, 5}},         /* j likewise */
        {"ij,jk->ikk", 2, {3, 4}, 2, {4, 5}},          /* repeated output letter */
        {"ij,jk->ix", 2, {3, 4}, 2, {4, 5}},           /* output letter from nowhere */
        {"bij,bj->bi", 3, {2, 3, -1}, 2, {2, -1}},     /* a Reshape needs an unknown dim */
        {"bij,bjk->bik", -1, {0}, 3, {2, 4, 5}},       /* unknown rank */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ph_model *m = model(bad[i].eq, bad[i].ra, bad[i].da, bad[i].rb, bad[i].db);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
    /* three operands */
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *in[3] = {tk_input(g, "a", 2, TK_I64(3, 4)), tk_input(g, "b", 2, TK_I64(4, 5)),
                       tk_input(g, "c", 2, TK_I64(5, 6))};
    ph_node *n = tk_node(g, "Einsum", 3, in);
    ph_node_set_attr_string(n, "equation", "ij,jk,kl->il");
    tk_output(g, ph_node_output(n, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
    /* integer operands */
    m = tk_model();
    g = ph_model_graph(m);
    ph_value *ia = ph_graph_add_input(g, "a", PH_DT_INT32, 2, TK_I64(3, 4));
    ph_value *ib = ph_graph_add_input(g, "b", PH_DT_INT32, 2, TK_I64(4, 5));
    tk_output(g, einsum(g, "ij,jk->ik", ia, ib));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_input(g, "a", 3, TK_I64(2, 3, 4)), *b = tk_input(g, "b", 3, TK_I64(2, 4, 5));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, einsum(then_g, "bij,bjk->bik", a, b));
    tk_output(else_g, tk_op1(else_g, "Neg", einsum(else_g, "bij,bjk->bik", a, b)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Einsum), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Einsum), 0);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_MatMul), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_MatMul), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("decompose_einsum");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, forms_decompose);
    tcase_add_test(tc, symbolic_batch);
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
