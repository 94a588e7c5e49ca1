/* tests/test_pass_transpose_large_input_conv.c - transpose_large_input_conv
 * (adapt, off by default: loaded by name). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;
static const char *const narrow[] = {"min_width", "32", NULL};

static void setup(void)
{
    pass = tk_pass_load("transpose_large_input_conv");
    pass->shapes = 1;
    pass->params = narrow;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

static void assert_ints(const ph_node *n, const char *name, size_t len, const int64_t *want)
{
    const int64_t *p;
    ck_assert_int_eq(ph_node_attr_ints(n, name, &p), (ptrdiff_t)len);
    for (size_t i = 0; i < len; i++)
        ck_assert_msg(p[i] == want[i], "%s[%zu] = %lld, want %lld", name, i, (long long)p[i], (long long)want[i]);
}

/* Conv of x with weight [M, C/group, kh, kw] (seeded) and optional bias. */
static ph_node *conv(ph_graph *g, ph_value *x, const int64_t *wdims, int bias, const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "%s_w", tag);
    ph_value *in[3] = {x, tk_init(g, name, 4, wdims, 11), NULL};
    if (bias) {
        snprintf(name, sizeof name, "%s_b", tag);
        in[2] = tk_init(g, name, 1, TK_I64(wdims[0]), 12);
    }
    return tk_node(g, "Conv", bias ? 3 : 2, in);
}

/* x [1,2,3,64] -> Relu -> Conv(3x5, strides [1,2], pads [1,2,0,1],
 * dilations [1,2], bias) [1,4,2,30] -> Mul(constant [4,1,30]) ->
 * Conv(1x3, group 2) [1,4,2,28] -> Sigmoid; returns the Sigmoid output. */
static ph_value *wide_chain(ph_graph *g, ph_value *x, const char *tag)
{
    char name[32];
    ph_node *c1 = conv(g, tk_op1(g, "Relu", x), TK_I64(4, 2, 3, 5), 1, tag);
    ph_node_set_attr_ints(c1, "kernel_shape", 2, TK_I64(3, 5));
    ph_node_set_attr_ints(c1, "strides", 2, TK_I64(1, 2));
    ph_node_set_attr_ints(c1, "pads", 4, TK_I64(1, 2, 0, 1));
    ph_node_set_attr_ints(c1, "dilations", 2, TK_I64(1, 2));
    snprintf(name, sizeof name, "%s_k", tag);
    ph_value *mul = tk_op2(g, "Mul", ph_node_output(c1, 0), tk_init(g, name, 3, TK_I64(4, 1, 30), 13));
    snprintf(name, sizeof name, "%s2", tag);
    ph_node *c2 = conv(g, mul, TK_I64(4, 2, 1, 3), 0, name);
    ph_node_set_attr_int(c2, "group", 2);
    return tk_op1(g, "Sigmoid", ph_node_output(c2, 0));
}

START_TEST(chain_swapped)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *y = wide_chain(g, tk_input(g, "x", 4, TK_I64(1, 2, 3, 64)), "a");
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Transpose,Relu,Conv,Mul,Conv,Sigmoid,Transpose");
    ph_node *c1 = tk_find_op(g, PH_OP_Conv);
    assert_ints(c1, "kernel_shape", 2, TK_I64(5, 3));
    assert_ints(c1, "strides", 2, TK_I64(2, 1));
    assert_ints(c1, "pads", 4, TK_I64(2, 1, 1, 0));
    assert_ints(c1, "dilations", 2, TK_I64(2, 1));
    const ph_tensor *w = ph_value_const(ph_node_input(c1, 1));
    ck_assert_int_eq(ph_tensor_dim(w, 2), 5);
    ck_assert_int_eq(ph_tensor_dim(w, 3), 3);
    ph_value *c1y = ph_node_output(c1, 0);
    ck_assert_int_eq(ph_value_dim(c1y, 2), 30); /* H now the long axis */
    ck_assert_int_eq(ph_value_dim(c1y, 3), 2);
    ph_node *t = ph_graph_first_node(g);
    assert_ints(t, "perm", 4, TK_I64(0, 1, 3, 2));
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ck_assert_ptr_null(ph_graph_find_value(g, "a_w")); /* the old weight is gone */
    tk_assert_untouched(pass, m); /* idempotent: H >= W everywhere now */
    ph_model_free(m);
}
END_TEST

/* The default threshold is 20000: a [1,1,2,20000] input is swapped, one
 * column narrower is not. */
START_TEST(default_min_width)
{
    for (int64_t w = 19999; w <= 20000; w++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 1, 2, w));
        tk_output(g, ph_node_output(conv(g, x, TK_I64(1, 1, 1, 3), 1, "c"), 0));
        pass->params = NULL;
        if (w == 20000) {
            ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
            ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 2);
        } else {
            tk_assert_untouched(pass, m);
        }
        ph_model_free(m);
    }
}
END_TEST

/* The chain stops at a value with another reader and at a graph output:
 * the Transposes go there. */
START_TEST(chain_cut_at_shared_values)
{
    char ops[256];
    for (int variant = 0; variant < 2; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 4, TK_I64(1, 2, 3, 64)));
        ph_value *y = ph_node_output(conv(g, r, TK_I64(2, 2, 3, 3), 0, "c"), 0);
        tk_output(g, tk_op1(g, "Tanh", y));
        if (variant == 0)
            tk_output(g, tk_op1(g, "Neg", r));
        else
            tk_output(g, r);
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), variant == 0 ? "Relu,Transpose,Conv,Tanh,Transpose,Neg"
                                                                  : "Relu,Transpose,Conv,Tanh,Transpose");
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 7; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 3, 64));
        switch (variant) {
        case 0: /* narrow */
            x = tk_input(g, "n", 4, TK_I64(1, 2, 3, 31));
            tk_output(g, ph_node_output(conv(g, x, TK_I64(2, 2, 3, 3), 0, "c"), 0));
            break;
        case 1: /* higher than wide */
            x = tk_input(g, "n", 4, TK_I64(1, 2, 64, 3));
            tk_output(g, ph_node_output(conv(g, x, TK_I64(2, 2, 3, 3), 0, "c"), 0));
            break;
        case 2: /* as high as wide: swapping gains nothing */
            x = tk_input(g, "n", 4, TK_I64(1, 1, 40, 40));
            tk_output(g, ph_node_output(conv(g, x, TK_I64(1, 1, 3, 3), 0, "c"), 0));
            break;
        case 3: { /* the weight is not constant */
            ph_value *in[2] = {x, tk_input(g, "w", 4, TK_I64(2, 2, 3, 3))};
            tk_output(g, ph_node_output(tk_node(g, "Conv", 2, in), 0));
            break;
        }
        case 4: /* unknown batch */
            x = tk_input(g, "n", 4, TK_I64(-1, 2, 3, 64));
            tk_output(g, ph_node_output(conv(g, x, TK_I64(2, 2, 3, 3), 0, "c"), 0));
            break;
        case 5: { /* 1-D convolution */
            x = tk_input(g, "n", 3, TK_I64(1, 2, 64));
            ph_value *in[2] = {x, tk_init(g, "w1", 3, TK_I64(2, 2, 3), 1)};
            ph_node *c = tk_node(g, "Conv", 2, in);
            tk_output(g, ph_node_output(c, 0));
            break;
        }
        case 6: { /* a later Conv of the chain is higher than wide: swapping it would undo itself */
            x = tk_input(g, "n", 4, TK_I64(1, 1, 40, 64));
            ph_node *c1 = conv(g, x, TK_I64(1, 1, 1, 1), 0, "c");
            ph_node_set_attr_ints(c1, "strides", 2, TK_I64(1, 8));
            tk_output(g, ph_node_output(conv(g, ph_node_output(c1, 0), TK_I64(1, 1, 3, 3), 0, "d"), 0));
            break;
        }
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
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 3, 64));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, wide_chain(then_g, x, "t"));
    tk_output(else_g, wide_chain(else_g, x, "e"));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    char ops[256];
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Transpose,Relu,Conv,Mul,Conv,Sigmoid,Transpose");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(else_g), 0), x);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("transpose_large_input_conv");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, chain_swapped);
    tcase_add_test(tc, default_min_width);
    tcase_add_test(tc, chain_cut_at_shared_values);
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
