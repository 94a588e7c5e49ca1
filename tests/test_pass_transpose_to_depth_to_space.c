/* tests/test_pass_transpose_to_depth_to_space.c - transpose_to_depth_to_space:
 * the Reshape + Transpose + Reshape pixel shuffle (DCR, CRD) and its inverse
 * become DepthToSpace and SpaceToDepth; any other permutation or shape
 * stays. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("transpose_to_depth_to_space");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

#define DCR_PERM TK_I64(0, 3, 4, 1, 5, 2)
#define CRD_PERM TK_I64(0, 1, 4, 2, 5, 3)
#define S2D_PERM TK_I64(0, 3, 5, 1, 2, 4)

/* Reshape(x, view) -> Transpose(perm) -> Reshape(out); the Transpose node
 * into *t when t is not NULL. */
static ph_value *shuffle(ph_graph *g, ph_value *x, const int64_t *view, const int64_t *perm, const int64_t *out,
                         ph_node **t)
{
    ph_value *in[2] = {x, tk_ints(g, "view", 6, view)};
    ph_value *r = ph_node_output(tk_node(g, "Reshape", 2, in), 0);
    ph_value *tv = tk_transpose(g, r, 6, perm);
    if (t)
        *t = ph_value_producer(tv);
    ph_value *in2[2] = {tv, tk_ints(g, "out", 4, out)};
    return ph_node_output(tk_node(g, "Reshape", 2, in2), 0);
}

START_TEST(becomes_depth_to_space)
{
    static const struct {
        int64_t opset, dims[4], view[6], perm[6], out[4], b;
        const char *op, *mode;
    } cases[] = {
        {17, {2, 12, 3, 4}, {2, 2, 2, 3, 3, 4}, {0, 3, 4, 1, 5, 2}, {2, 3, 6, 8}, 2, "DepthToSpace", "DCR"},
        {17, {2, 12, 3, 4}, {0, 2, 2, 3, 3, 4}, {0, 3, 4, 1, 5, 2}, {0, -1, 6, 8}, 2, "DepthToSpace", "DCR"},
        {17, {2, 12, 3, 4}, {2, 3, 2, 2, 3, 4}, {0, 1, 4, 2, 5, 3}, {2, 3, 6, 8}, 2, "DepthToSpace", "CRD"},
        {13, {1, 18, 2, 3}, {1, 2, 3, 3, 2, 3}, {0, 1, 4, 2, 5, 3}, {1, 2, 6, 9}, 3, "DepthToSpace", "CRD"},
        {9, {1, 8, 3, 4}, {1, 2, 2, 2, 3, 4}, {0, 3, 4, 1, 5, 2}, {1, 2, 6, 8}, 2, "DepthToSpace", NULL},
        {17, {2, 3, 4, 6}, {2, 3, 2, 2, 3, 2}, {0, 3, 5, 1, 2, 4}, {2, 12, 2, 3}, 2, "SpaceToDepth", NULL},
        {17, {1, 2, 6, 3}, {1, 2, 2, 3, 1, 3}, {0, 3, 5, 1, 2, 4}, {1, 18, 2, 1}, 3, "SpaceToDepth", NULL},
    };
    char ops[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ph_model *m = ph_model_new(cases[i].opset);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", 4, cases[i].dims));
        ph_value *y = shuffle(g, x, cases[i].view, cases[i].perm, cases[i].out, NULL);
        tk_output(g, y);
        char *name = strdup(ph_value_name(y));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 30 + i, 0, NULL), 1);
        char want[64];
        snprintf(want, sizeof want, "Relu,%s", cases[i].op);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), want);
        ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
        ph_node *n = ph_value_producer(ph_graph_output(g, 0));
        ck_assert_int_eq(ph_node_attr_int(n, "blocksize", 0), cases[i].b);
        if (cases[i].mode)
            ck_assert_str_eq(ph_node_attr_string(n, "mode", ""), cases[i].mode);
        else
            ck_assert_int_eq(ph_node_attr_type(n, "mode"), PH_ATTR_NONE);
        ck_assert_uint_eq(ph_graph_initializer_count(g), 0); /* the shapes went too */
        free(name);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(symbolic_batch)
{
    const int64_t sizes[2] = {1, 3};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(-1, 12, 3, 4));
    ph_value_set_dim_param(x, 0, "batch");
    tk_output(g, tk_op1(g, "Neg", shuffle(g, x, TK_I64(0, 3, 2, 2, 3, 4), CRD_PERM, TK_I64(0, 3, 6, 8), NULL)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 2, sizes), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_DepthToSpace), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 10; variant++) {
        ph_model *m = ph_model_new(variant == 6 ? 10 : 17);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, variant == 4 ? TK_I64(2, 12, -1, 4) : TK_I64(2, 12, 3, 4));
        static const int64_t dcr_view[6] = {2, 2, 2, 3, 3, 4}, crd_view[6] = {2, 3, 2, 2, 3, 4},
                             mixed_view[6] = {2, 2, 3, 2, 3, 4}, unknown_view[6] = {2, 2, 2, 3, -1, 4},
                             dcr[6] = {0, 3, 4, 1, 5, 2}, crd[6] = {0, 1, 4, 2, 5, 3}, other[6] = {0, 3, 4, 1, 2, 5},
                             d2s_out[4] = {2, 3, 6, 8}, other_out[4] = {2, 3, 12, 4}, swapped_out[4] = {2, 3, 4, 12},
                             mixed_out[4] = {2, 2, 9, 8}, unknown_out[4] = {2, 3, -1, 8};
        const int64_t *view = dcr_view, *perm = dcr, *out = d2s_out;
        switch (variant) {
        case 3: /* another permutation: another operator */
            perm = other;
            out = other_out;
            break;
        case 4: /* H unknown: Reshapes with -1 */
            view = unknown_view;
            out = unknown_out;
            break;
        case 5: /* the right permutation, but another final shape */
            out = swapped_out;
            break;
        case 6: /* CRD before opset 11 */
            view = crd_view;
            perm = crd;
            break;
        case 7: /* DCR permutation on a CRD view */
            view = crd_view;
            break;
        case 8: /* blocks of two sizes */
            view = mixed_view;
            out = mixed_out;
            break;
        default:
            break;
        }
        ph_node *t;
        ph_value *y;
        if (variant == 9) { /* the view's shape is computed at run time */
            ph_value *in[2] = {x, ph_graph_add_input(g, "view", PH_DT_INT64, 1, TK_I64(6))};
            ph_value *r = ph_node_output(tk_node(g, "Reshape", 2, in), 0);
            ph_value *in2[2] = {tk_transpose(g, r, 6, perm), tk_ints(g, "out", 4, out)};
            y = ph_node_output(tk_node(g, "Reshape", 2, in2), 0);
        } else {
            y = shuffle(g, x, view, perm, out, &t);
        }
        tk_output(g, y);
        if (variant == 0) /* the view has another reader */
            tk_output(g, tk_op1(g, "Neg", ph_node_input(t, 0)));
        if (variant == 1) /* the transposed value has another reader */
            tk_output(g, tk_op1(g, "Neg", ph_node_output(t, 0)));
        if (variant == 2) /* the transposed value is a graph output */
            tk_output(g, ph_node_output(t, 0));
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
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
    tk_output(then_g, shuffle(then_g, x, TK_I64(1, 2, 2, 2, 2, 2), DCR_PERM, TK_I64(1, 2, 4, 4), NULL));
    tk_output(else_g, tk_op1(else_g, "Neg", shuffle(else_g, x, TK_I64(1, 8, 1, 2, 1, 2), S2D_PERM,
                                                    TK_I64(1, 32, 1, 1), NULL)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_DepthToSpace), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_SpaceToDepth), 1);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Transpose) + tk_count_op(else_g, PH_OP_Transpose), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("transpose_to_depth_to_space");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, becomes_depth_to_space);
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
