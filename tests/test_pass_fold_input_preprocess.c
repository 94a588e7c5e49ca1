/* tests/test_pass_fold_input_preprocess.c - fold_input_preprocess: per-channel
 * scale, mean and channel reversal of a graph input folded into the first
 * Conv. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("fold_input_preprocess");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Conv(v, W[M, C, k, k], b?) with pads p on every side. */
static ph_value *conv(ph_graph *g, ph_value *v, int64_t M, int64_t C, int64_t k, int bias, int64_t p,
                      const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "%s_w", tag);
    ph_value *in[3] = {v, tk_init(g, name, 4, TK_I64(M, C, k, k), 7), NULL};
    if (bias) {
        snprintf(name, sizeof name, "%s_b", tag);
        in[2] = tk_init(g, name, 1, TK_I64(M), 8);
    }
    ph_node *n = tk_node(g, "Conv", bias ? 3 : 2, in);
    if (p)
        ph_node_set_attr_ints(n, "pads", 4, TK_I64(p, p, p, p));
    return ph_node_output(n, 0);
}

static ph_value *gather1(ph_graph *g, ph_value *x, size_t n, const int64_t *idx)
{
    ph_value *in[2] = {x, tk_ints(g, "idx", n, idx)};
    ph_node *ga = tk_node(g, "Gather", 2, in);
    ph_node_set_attr_int(ga, "axis", 1);
    return ph_node_output(ga, 0);
}

/* Runs until nothing changes, each run checked numerically; returns the
 * number of rewrites. */
static int run_all(ph_model *m, uint64_t seed)
{
    int total = 0, rc;
    while ((rc = tk_pass_run_eval(pass, m, seed++, 0, NULL)) > 0)
        total += rc;
    return total;
}

START_TEST(mean_std_and_bgr_chain)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 3, 6, 6));
    ph_value *v = tk_op2(g, "Sub", x, tk_init(g, "mean", 4, TK_I64(1, 3, 1, 1), 2));
    v = tk_op2(g, "Div", v, tk_init(g, "std", 3, TK_I64(3, 1, 1), 3));
    v = gather1(g, v, 3, TK_I64(2, 1, 0));
    tk_output(g, tk_op1(g, "Relu", conv(g, v, 4, 3, 3, 1, 0, "c")));
    ck_assert_int_eq(run_all(m, 11), 3);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Conv,Relu");
    ph_node *c = tk_find_op(g, PH_OP_Conv);
    ck_assert_ptr_eq(ph_node_input(c, 0), x);
    ck_assert_uint_eq(ph_node_input_count(c), 3);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Scale and reversal fold through padding; no bias is created for them. */
START_TEST(scale_and_reverse_slice_with_padding)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(2, 3, 5, 5));
    ph_value *v = tk_slice(g, x, 1, TK_I64(-1), TK_I64(INT64_MIN), TK_I64(1), TK_I64(-1));
    v = tk_op2(g, "Mul", tk_init(g, "s", 1, TK_I64(1), 4), v); /* scalar-like, constant first */
    v = tk_op2(g, "Mul", v, tk_init(g, "s2", 4, TK_I64(1, 3, 1, 1), 5));
    tk_output(g, conv(g, v, 2, 3, 3, 0, 1, "c"));
    ck_assert_int_eq(run_all(m, 21), 3);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Conv");
    ph_node *c = tk_find_op(g, PH_OP_Conv);
    ck_assert_uint_eq(ph_node_input_count(c), 2);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* a - x and x + a into a Conv that cannot pad: VALID, and SAME with a 1x1 kernel. */
START_TEST(sub_from_and_add_without_padding)
{
    for (int variant = 0; variant < 2; variant++) {
        char ops[256];
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 3, 4, 4));
        ph_value *v = tk_op2(g, "Sub", tk_init(g, "a", 4, TK_I64(1, 3, 1, 1), 6), x);
        v = tk_op2(g, "Add", tk_init(g, "a2", 3, TK_I64(3, 1, 1), 9), v);
        ph_value *y = conv(g, v, 5, 3, variant ? 1 : 3, variant, 0, "c");
        ph_node_set_attr_string(ph_value_producer(y), "auto_pad", variant ? "SAME_UPPER" : "VALID");
        if (variant)
            ph_node_set_attr_ints(ph_value_producer(y), "strides", 2, TK_I64(2, 2));
        tk_output(g, y);
        ck_assert_int_eq(run_all(m, 31), 2);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Conv");
        ck_assert_uint_eq(ph_node_input_count(tk_find_op(g, PH_OP_Conv)), 3);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 14; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 3, 5, 5));
        ph_value *s = tk_init(g, "s", 4, TK_I64(1, 3, 1, 1), 3);
        const char *op = variant == 0 || variant == 8 ? "Sub" : "Mul";
        ph_value *in = x, *v;
        int64_t pad = variant == 0 ? 1 : 0;
        switch (variant) {
        case 4: /* x is not a graph input */
            in = tk_op1(g, "Relu", x);
            break;
        case 6: /* shape unknown: the input's channels */
            ph_value_set_type(x, PH_DT_FLOAT, 4, TK_I64(1, -1, 5, 5));
            break;
        case 7: /* the Mul would broadcast a one-channel input to three */
            ph_value_set_type(x, PH_DT_FLOAT, 4, TK_I64(1, 1, 5, 5));
            break;
        case 9: /* varies along axis 2, not per channel */
            s = tk_init(g, "s9", 4, TK_I64(1, 1, 5, 1), 3);
            break;
        case 3: /* the operand is not constant */
            s = tk_input(g, "s_in", 4, TK_I64(1, 3, 1, 1));
            break;
        }
        if (variant == 10) /* not a permutation */
            v = gather1(g, in, 3, TK_I64(0, 0, 1));
        else if (variant == 11) /* a reversal of rows, not of channels */
            v = tk_slice(g, in, 1, TK_I64(-1), TK_I64(INT64_MIN), TK_I64(2), TK_I64(-1));
        else if (variant == 13) /* Div by a zero channel */
            v = tk_op2(g, "Div", in, ph_graph_add_initializer(g, "z", ph_tensor_new(PH_DT_FLOAT, 3, TK_I64(3, 1, 1),
                                                                                     (const float[]){1, 0, 2})));
        else
            v = tk_op2(g, op, in, s);
        ph_value *y = conv(g, v, 2, 3, 3, 1, pad, "c");
        if (variant == 8) /* Sub into SAME padding */
            ph_node_set_attr_string(ph_value_producer(y), "auto_pad", "SAME_LOWER");
        if (variant == 12)
            ph_node_set_attr_int(ph_value_producer(y), "group", 3);
        tk_output(g, y);
        switch (variant) {
        case 1: /* the preprocessed value has another reader */
            tk_output(g, tk_op1(g, "Relu", v));
            break;
        case 2: /* the preprocessed value is a graph output */
            tk_output(g, v);
            break;
        case 5: /* the graph input is read by something else as well */
            tk_output(g, tk_op1(g, "Neg", x));
            break;
        }
        if (variant == 12) { /* grouped: W is [2, 1, 3, 3] */
            ph_node *c = ph_value_producer(y);
            ph_node_set_input(c, 1, tk_init(g, "wg", 4, TK_I64(3, 1, 3, 3), 5));
            ph_node_remove_input(c, 2);
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
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 3, 5, 5));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, conv(then_g, tk_op2(then_g, "Mul", x, tk_init(then_g, "s", 4, TK_I64(1, 3, 1, 1), 2)), 2, 3,
                           3, 1, 1, "t"));
    tk_output(else_g, conv(else_g, tk_init(else_g, "k", 4, TK_I64(1, 3, 5, 5), 3), 2, 3, 3, 1, 1, "e"));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Mul), 0);
    ck_assert_ptr_eq(ph_node_input(tk_find_op(then_g, PH_OP_Conv), 0), x);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fold_input_preprocess");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, mean_std_and_bgr_chain);
    tcase_add_test(tc, scale_and_reverse_slice_with_padding);
    tcase_add_test(tc, sub_from_and_add_without_padding);
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
