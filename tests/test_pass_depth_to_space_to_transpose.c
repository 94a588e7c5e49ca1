/* tests/test_pass_depth_to_space_to_transpose.c - depth_to_space_to_transpose:
 * DepthToSpace (DCR, CRD) and SpaceToDepth become Reshape + Transpose +
 * Reshape. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("depth_to_space_to_transpose");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* op(x) {blocksize = b, mode when not NULL}. */
static ph_value *d2s(ph_graph *g, const char *op, ph_value *x, int64_t b, const char *mode)
{
    ph_node *n = tk_node(g, op, 1, &x);
    ph_node_set_attr_int(n, "blocksize", b);
    if (mode)
        ph_node_set_attr_string(n, "mode", mode);
    return ph_node_output(n, 0);
}

static void perm_is(const ph_graph *g, const int64_t *want)
{
    const int64_t *perm;
    ck_assert_int_eq(ph_node_attr_ints(tk_find_op(g, PH_OP_Transpose), "perm", &perm), 6);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(perm[i], want[i]);
}

START_TEST(becomes_transpose)
{
    static const struct {
        const char *op, *mode;
        int64_t opset, b, dims[4], perm[6];
    } cases[] = {
        {"DepthToSpace", "DCR", 17, 2, {2, 12, 3, 4}, {0, 3, 4, 1, 5, 2}},
        {"DepthToSpace", NULL, 17, 2, {1, 8, 3, 4}, {0, 3, 4, 1, 5, 2}},
        {"DepthToSpace", "CRD", 17, 2, {2, 12, 3, 4}, {0, 1, 4, 2, 5, 3}},
        {"DepthToSpace", "CRD", 13, 3, {1, 18, 2, 3}, {0, 1, 4, 2, 5, 3}},
        {"DepthToSpace", NULL, 9, 2, {1, 8, 3, 4}, {0, 3, 4, 1, 5, 2}},
        {"SpaceToDepth", NULL, 17, 2, {2, 3, 4, 6}, {0, 3, 5, 1, 2, 4}},
        {"SpaceToDepth", NULL, 11, 3, {1, 2, 6, 3}, {0, 3, 5, 1, 2, 4}},
    };
    char ops[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ph_model *m = ph_model_new(cases[i].opset);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, cases[i].dims);
        ph_value *y = d2s(g, cases[i].op, x, cases[i].b, cases[i].mode);
        tk_output(g, y);
        char *name = strdup(ph_value_name(y));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 20 + i, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Reshape,Transpose,Reshape");
        ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
        perm_is(g, cases[i].perm);
        free(name);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(symbolic_batch)
{
    const int64_t sizes[2] = {1, 3};
    for (int variant = 0; variant < 3; variant++) {
        int s2d = variant == 1;
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(-1, 8, 4, 6));
        if (variant < 2) /* named; else unknown: the Reshapes copy it either way */
            ph_value_set_dim_param(x, 0, "batch");
        tk_output(g, tk_op1(g, "Neg", d2s(g, s2d ? "SpaceToDepth" : "DepthToSpace", x, 2, s2d ? NULL : "CRD")));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 2, sizes), 1);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Reshape), 2);
        /* the batch dim is copied, never written */
        int64_t s[8];
        ck_assert_int_eq(ph_value_const_ints(ph_node_input(tk_find_op(g, PH_OP_Reshape), 1), s, NULL, 8), 6);
        ck_assert_int_eq(s[0], 0);
        if (variant < 2)
            ck_assert_str_eq(ph_value_dim_param(ph_node_input(tk_find_op(g, PH_OP_Neg), 0), 0), "batch");
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 5; variant++) {
        ph_model *m = ph_model_new(variant == 3 ? 10 : variant == 4 ? 4 : 17);
        ph_graph *g = ph_model_graph(m);
        ph_value *x, *y;
        switch (variant) {
        case 0: /* unknown rank */
            x = tk_input(g, "x", -1, NULL);
            y = d2s(g, "DepthToSpace", x, 2, NULL);
            break;
        case 1: /* H unknown */
            x = tk_input(g, "x", 4, TK_I64(1, 8, -1, 4));
            y = d2s(g, "DepthToSpace", x, 2, "DCR");
            break;
        case 2: /* C symbolic */
            x = tk_input(g, "x", 4, TK_I64(1, -1, 4, 4));
            ph_value_set_dim_param(x, 1, "c");
            y = d2s(g, "SpaceToDepth", x, 2, NULL);
            break;
        case 3: /* a mode attribute before opset 11 */
            x = tk_input(g, "x", 4, TK_I64(1, 8, 3, 4));
            y = d2s(g, "DepthToSpace", x, 2, "CRD");
            break;
        default: /* opset 4: Reshape has no shape input */
            x = tk_input(g, "x", 4, TK_I64(1, 8, 3, 4));
            y = d2s(g, "DepthToSpace", x, 2, NULL);
            break;
        }
        tk_output(g, y);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(integer_data)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT64, 4, TK_I64(1, 8, 2, 3));
    tk_output(g, d2s(g, "DepthToSpace", x, 2, "CRD"));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 9, 0, NULL), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 8, 2, 2));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op1(then_g, "Neg", d2s(then_g, "DepthToSpace", x, 2, "CRD")));
    tk_output(else_g, tk_op1(else_g, "Neg", d2s(else_g, "DepthToSpace", x, 2, NULL)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_DepthToSpace), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_DepthToSpace), 0);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Transpose), 1);
    perm_is(then_g, TK_I64(0, 1, 4, 2, 5, 3));
    perm_is(else_g, TK_I64(0, 3, 4, 1, 5, 2));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("depth_to_space_to_transpose");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, becomes_transpose);
    tcase_add_test(tc, symbolic_batch);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, integer_data);
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
