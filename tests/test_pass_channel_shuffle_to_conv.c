/* tests/test_pass_channel_shuffle_to_conv.c - channel_shuffle_to_conv: the
 * Reshape [N,g,C/g,H,W] -> Transpose(0,2,1,3,4) -> Reshape [N,C,H,W] channel
 * shuffle becomes a 1x1 Conv with a permutation weight. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("channel_shuffle_to_conv");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

#define SHUFFLE_PERM TK_I64(0, 2, 1, 3, 4)

/* Reshape(x, view[5]) -> Transpose(perm) -> Reshape(out[4]); the Transpose
 * node into *t when t is not NULL. */
static ph_value *shuffle(ph_graph *g, ph_value *x, const int64_t *view, const int64_t *perm, const int64_t *out,
                         ph_node **t)
{
    ph_value *in[2] = {x, tk_ints(g, "view", 5, view)};
    ph_value *r = ph_node_output(tk_node(g, "Reshape", 2, in), 0);
    ph_value *tv = tk_transpose(g, r, 5, perm);
    if (t)
        *t = ph_value_producer(tv);
    ph_value *in2[2] = {tv, tk_ints(g, "out", 4, out)};
    return ph_node_output(tk_node(g, "Reshape", 2, in2), 0);
}

START_TEST(becomes_conv)
{
    static const struct {
        int64_t dims[4], view[5], out[4], g;
    } cases[] = {
        {{1, 6, 3, 4}, {1, 2, 3, 3, 4}, {1, 6, 3, 4}, 2},
        {{2, 12, 2, 3}, {2, 3, 4, 2, 3}, {2, 12, 2, 3}, 3},
        {{2, 12, 2, 3}, {0, 4, -1, 2, 3}, {0, 12, 2, 3}, 4},
        {{1, 4, 1, 1}, {1, 1, 4, 1, 1}, {1, 4, 1, 1}, 1},
    };
    char ops[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, cases[i].dims);
        ph_value *y = shuffle(g, x, cases[i].view, SHUFFLE_PERM, cases[i].out, NULL);
        tk_output(g, y);
        char *name = strdup(ph_value_name(y));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 40 + i, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Conv");
        ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
        free(name);
        /* the weight: output o reads input (o % g) * (C/g) + o / g, with 1 */
        const ph_tensor *w = ph_value_const(ph_node_input(tk_find_op(g, PH_OP_Conv), 1));
        int64_t C = cases[i].dims[1], G = cases[i].g;
        ck_assert_ptr_nonnull(w);
        ck_assert_int_eq(ph_tensor_numel(w), C * C);
        double vals[144];
        ck_assert_int_eq(ph_tensor_read_f64(w, ph_tensor_rank(w), ph_tensor_dims(w), vals), 0);
        for (int64_t o = 0; o < C; o++)
            for (int64_t c = 0; c < C; c++)
                ck_assert(vals[o * C + c] == (c == (o % G) * (C / G) + o / G ? 1.0 : 0.0));
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* A symbolic batch dim: the Conv does not need it. */
START_TEST(symbolic_batch)
{
    const int64_t sizes[2] = {1, 3};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(-1, 8, 3, 4));
    ph_value_set_dim_param(x, 0, "n");
    tk_output(g, tk_op1(g, "Neg", shuffle(g, x, TK_I64(0, 2, 4, 3, 4), SHUFFLE_PERM, TK_I64(0, 8, 3, 4), NULL)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 2, sizes), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Conv), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 9; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x;
        switch (variant) {
        case 4: /* W unknown, without a name */
            x = tk_input(g, "x", 4, TK_I64(1, 6, 3, -1));
            break;
        case 5: /* integers */
            x = ph_graph_add_input(g, "x", PH_DT_INT32, 4, TK_I64(1, 6, 3, 4));
            break;
        default:
            x = tk_input(g, "x", 4, TK_I64(1, 6, 3, 4));
            break;
        }
        static const int64_t view4[5] = {1, 2, 3, 3, 4}, unknown_view[5] = {1, 2, 3, 3, -1},
                             perm[5] = {0, 2, 1, 3, 4}, other[5] = {0, 1, 2, 4, 3}, out4[4] = {1, 6, 3, 4},
                             unknown_out[4] = {1, 6, 3, -1}, other_out[4] = {1, 6, 4, 3}, flat_out[4] = {1, 6, 12, 1};
        const int64_t *view = variant == 4 ? unknown_view : view4, *p = perm;
        const int64_t *out = variant == 4 ? unknown_out : variant == 6 ? other_out : variant == 7 ? flat_out : out4;
        if (variant == 6) /* another permutation */
            p = other;
        /* variant 7: another final shape */
        ph_node *t = NULL;
        ph_value *y;
        if (variant == 8) { /* the view's shape is computed at run time */
            ph_value *in[2] = {x, ph_graph_add_input(g, "view", PH_DT_INT64, 1, TK_I64(5))};
            ph_value *r = ph_node_output(tk_node(g, "Reshape", 2, in), 0);
            ph_value *in2[2] = {tk_transpose(g, r, 5, p), tk_ints(g, "out", 4, out)};
            y = ph_node_output(tk_node(g, "Reshape", 2, in2), 0);
        } else {
            y = shuffle(g, x, view, p, out, &t);
        }
        tk_output(g, y);
        if (variant == 0) /* the view has another reader */
            tk_output(g, tk_op1(g, "Neg", ph_node_input(t, 0)));
        if (variant == 1) /* the transposed value has another reader */
            tk_output(g, tk_op1(g, "Neg", ph_node_output(t, 0)));
        if (variant == 2) /* the view is a graph output */
            tk_output(g, ph_node_input(t, 0));
        if (variant == 3) /* the transposed value is a graph output */
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
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 6, 2, 2));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, shuffle(then_g, x, TK_I64(1, 2, 3, 2, 2), SHUFFLE_PERM, TK_I64(1, 6, 2, 2), NULL));
    tk_output(else_g, tk_op1(else_g, "Neg", shuffle(else_g, x, TK_I64(1, 3, 2, 2, 2), SHUFFLE_PERM,
                                                    TK_I64(1, 6, 2, 2), NULL)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Conv), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Conv), 1);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Transpose) + tk_count_op(else_g, PH_OP_Transpose), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("channel_shuffle_to_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, becomes_conv);
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
