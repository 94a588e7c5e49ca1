/* tests/test_pass_fuse_pad_into_conv.c - fuse_pad_into_conv: a zero Pad on
 * spatial dims moved into the pads of the Conv (or counting AveragePool)
 * after it. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("fuse_pad_into_conv"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* A one-element float constant (rank 0). */
static ph_value *scalar(ph_graph *g, const char *name, float v)
{
    return ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, 0, NULL, &v));
}

/* Pad(x) of opset >= 11: pads input of n values, optional value and axes. */
static ph_node *pad11(ph_graph *g, ph_value *x, size_t n, const int64_t *pads, ph_value *value,
                      size_t n_axes, const int64_t *axes)
{
    ph_value *in[4] = {x, tk_ints(g, "pads", n, pads), value,
                       n_axes ? tk_ints(g, "axes", n_axes, axes) : NULL};
    return tk_node(g, "Pad", n_axes ? 4 : value ? 3 : 2, in);
}

/* Pad(x) of opset < 11: pads and value attributes. */
static ph_node *pad10(ph_graph *g, ph_value *x, size_t n, const int64_t *pads, float value)
{
    ph_node *p = tk_node(g, "Pad", 1, &x);
    ph_node_set_attr_ints(p, "pads", n, pads);
    ph_node_set_attr_float(p, "value", value);
    ph_node_set_attr_string(p, "mode", "constant");
    return p;
}

/* Conv(p, W[M, C/group, 3...]) of spatial rank sr, optional bias. */
static ph_node *conv(ph_graph *g, ph_value *p, int sr, int64_t C, int64_t M, int group, int bias)
{
    int64_t wd[4] = {M, C / group, 3, 3};
    ph_value *in[3] = {p, tk_init(g, "w", 2 + sr, wd, 7), bias ? tk_init(g, "b", 1, TK_I64(M), 8) : NULL};
    ph_node *n = tk_node(g, "Conv", bias ? 3 : 2, in);
    ph_node_set_attr_int(n, "group", group);
    return n;
}

static ph_node *avgpool(ph_graph *g, ph_value *p, int include_pad)
{
    ph_node *n = tk_node(g, "AveragePool", 1, &p);
    ph_node_set_attr_ints(n, "kernel_shape", 2, TK_I64(3, 3));
    ph_node_set_attr_int(n, "count_include_pad", include_pad);
    return n;
}

static void assert_pads(const ph_node *n, size_t count, const int64_t *want)
{
    const int64_t *got;
    ck_assert_int_eq(ph_node_attr_ints(n, "pads", &got), (ptrdiff_t)count);
    for (size_t i = 0; i < count; i++)
        ck_assert_int_eq(got[i], want[i]);
}

START_TEST(moves_pads_into_the_consumer)
{
    char ops[256];
    for (int v = 0; v < 9; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        if (v == 2)
            ph_model_set_opset(m, "", 10);
        if (v == 3)
            ph_model_set_opset(m, "", 18);
        ph_value *x = v == 5 ? tk_input(g, "x", 3, TK_I64(1, 4, 7)) : tk_input(g, "x", 4, TK_I64(1, 4, 5, 5));
        ph_node *p, *n;
        int64_t want[4];
        switch (v) {
        case 0: /* merged with the Conv's own pads; grouped, dilated */
            p = pad11(g, x, 8, TK_I64(0, 0, 1, 2, 0, 0, 2, 1), NULL, 0, NULL);
            n = conv(g, ph_node_output(p, 0), 2, 4, 6, 2, 1);
            ph_node_set_attr_ints(n, "pads", 4, TK_I64(1, 1, 1, 1));
            ph_node_set_attr_ints(n, "dilations", 2, TK_I64(2, 2));
            memcpy(want, TK_I64(2, 3, 3, 2), sizeof want);
            break;
        case 1: /* explicit constant_value 0, no bias */
            p = pad11(g, x, 8, TK_I64(0, 0, 1, 0, 0, 0, 0, 2), scalar(g, "zero", 0), 0, NULL);
            n = conv(g, ph_node_output(p, 0), 2, 4, 6, 1, 0);
            memcpy(want, TK_I64(1, 0, 0, 2), sizeof want);
            break;
        case 2: /* opset 10: attributes */
            p = pad10(g, x, 8, TK_I64(0, 0, 2, 1, 0, 0, 1, 2), 0);
            n = conv(g, ph_node_output(p, 0), 2, 4, 6, 1, 1);
            memcpy(want, TK_I64(2, 1, 1, 2), sizeof want);
            break;
        case 3: /* opset 18: axes, one of them negative */
            p = pad11(g, x, 4, TK_I64(1, 2, 0, 1), NULL, 2, TK_I64(-1, 2));
            n = conv(g, ph_node_output(p, 0), 2, 4, 6, 1, 1);
            memcpy(want, TK_I64(2, 1, 1, 0), sizeof want);
            break;
        case 4: /* AveragePool counting the padding; strided */
            p = pad11(g, x, 8, TK_I64(0, 0, 1, 1, 0, 0, 1, 0), NULL, 0, NULL);
            n = avgpool(g, ph_node_output(p, 0), 1);
            ph_node_set_attr_ints(n, "pads", 4, TK_I64(1, 0, 0, 1));
            ph_node_set_attr_ints(n, "strides", 2, TK_I64(2, 1));
            memcpy(want, TK_I64(2, 1, 1, 1), sizeof want);
            break;
        case 5: /* 1-D */
            p = pad11(g, x, 6, TK_I64(0, 0, 2, 0, 0, 1), NULL, 0, NULL);
            n = conv(g, ph_node_output(p, 0), 1, 4, 6, 1, 1);
            memcpy(want, TK_I64(2, 1, 0, 0), sizeof want);
            break;
        case 6: { /* weights from a graph input: not needed constant */
            p = pad11(g, x, 8, TK_I64(0, 0, 1, 1, 0, 0, 1, 1), NULL, 0, NULL);
            ph_value *in[2] = {ph_node_output(p, 0), tk_input(g, "w", 4, TK_I64(6, 4, 3, 3))};
            n = tk_node(g, "Conv", 2, in);
            memcpy(want, TK_I64(1, 1, 1, 1), sizeof want);
            break;
        }
        case 7: { /* pads from a Constant node */
            ph_node *k = tk_node(g, "Constant", 0, NULL);
            ph_node_set_attr_tensor(k, "value",
                                    ph_tensor_new(PH_DT_INT64, 1, TK_I64(8), TK_I64(0, 0, 0, 1, 0, 0, 3, 0)));
            ph_value *in[2] = {x, ph_node_output(k, 0)};
            p = tk_node(g, "Pad", 2, in);
            n = conv(g, ph_node_output(p, 0), 2, 4, 6, 1, 1);
            memcpy(want, TK_I64(0, 1, 3, 0), sizeof want);
            break;
        }
        default: /* Pad pads all zero: nothing to add, but still one node less */
            p = pad11(g, x, 8, TK_I64(0, 0, 0, 0, 0, 0, 0, 0), NULL, 0, NULL);
            n = avgpool(g, ph_node_output(p, 0), 1);
            memcpy(want, TK_I64(0, 0, 0, 0), sizeof want);
            break;
        }
        tk_output(g, tk_op1(g, "Relu", ph_node_output(n, 0)));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 70 + (uint64_t)v, 0, NULL), 1);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Pad), 0);
        ph_node *after = tk_find_op(g, ph_node_op(n));
        ck_assert_ptr_nonnull(after);
        ck_assert_ptr_eq(ph_node_input(after, 0), x);
        assert_pads(after, v == 5 ? 2 : 4, want);
        if (v == 0)
            ck_assert_int_eq(ph_node_attr_int(after, "group", 1), 2);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), v == 4 || v == 8 ? "AveragePool,Relu" : "Conv,Relu");
        tk_assert_untouched(pass, m); /* idempotent */
        ph_model_free(m);
    }
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 4, 5, 5));
    ph_node *p = pad11(g, x, 8, TK_I64(0, 0, 1, 1, 0, 0, 1, 1), NULL, 0, NULL);
    ph_value *y = ph_node_output(conv(g, ph_node_output(p, 0), 2, 4, 6, 1, 1), 0);
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 40, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int v = 0; v < 19; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        if (v == 13)
            ph_model_set_opset(m, "", 10);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 4, 5, 5)), *value = NULL;
        int64_t pads[8] = {0, 0, 1, 1, 0, 0, 1, 1};
        switch (v) {
        case 4: value = scalar(g, "one", 1); break;
        case 5: value = scalar(g, "negzero", -0.0f); break;
        case 6: memcpy(pads, TK_I64(0, 1, 1, 1, 0, 0, 1, 1), sizeof pads); break;  /* pads C */
        case 7: memcpy(pads, TK_I64(0, 0, 1, -1, 0, 0, 1, 1), sizeof pads); break; /* crops */
        case 12: value = tk_input(g, "v", 0, NULL); break;     /* value not constant */
        case 14: memcpy(pads, TK_I64(0, 0, 1, 3, 0, 0, 1, 1), sizeof pads); break; /* pool pad would reach the kernel */
        case 18: memcpy(pads, TK_I64(1, 0, 1, 1, 0, 0, 1, 1), sizeof pads); break; /* pads N */
        }
        ph_node *p = v == 13   ? pad10(g, x, 8, pads, 1.0f)
                     : v == 16 ? pad11(g, x, 4, TK_I64(1, 1, 1, 1), NULL, 2, TK_I64(2, 3)) /* axes before opset 18 */
                               : pad11(g, x, 8, pads, value, 0, NULL);
        ph_value *pv = ph_node_output(p, 0);
        ph_node *n = v == 8 || v == 9 || v == 10 || v == 14 ? NULL : conv(g, pv, 2, 4, 6, 1, 1);
        switch (v) {
        case 0: tk_output(g, tk_op1(g, "Relu", pv)); break; /* another consumer */
        case 1: tk_output(g, pv); break;                    /* a graph output */
        case 2: ph_node_set_input(p, 1, ph_graph_add_input(g, "pads_in", PH_DT_INT64, 1, TK_I64(8))); break;
        case 3: ph_node_set_attr_string(p, "mode", "reflect"); break;
        case 8: { /* MaxPool: the padded zeros would join the max */
            n = tk_node(g, "MaxPool", 1, &pv);
            ph_node_set_attr_ints(n, "kernel_shape", 2, TK_I64(3, 3));
            break;
        }
        case 9: n = avgpool(g, pv, 0); break; /* the divisor would change */
        case 10: /* ceil_mode: which last windows exist would change */
            n = avgpool(g, pv, 1);
            ph_node_set_attr_int(n, "ceil_mode", 1);
            ph_node_set_attr_ints(n, "strides", 2, TK_I64(2, 2));
            break;
        case 11: ph_node_set_attr_string(n, "auto_pad", "SAME_UPPER"); break;
        case 14: n = avgpool(g, pv, 1); break;
        case 15: ph_node_set_attr_string(n, "auto_pad", "VALID"); break;
        case 17: ph_node_set_attr_ints(n, "pads", 2, TK_I64(1, 1)); break; /* malformed Conv pads */
        }
        tk_output(g, ph_node_output(n, 0));
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 4, 5, 5));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    ph_node *tp = pad11(then_g, x, 8, TK_I64(0, 0, 1, 1, 0, 0, 1, 1), NULL, 0, NULL);
    tk_output(then_g, ph_node_output(conv(then_g, ph_node_output(tp, 0), 2, 4, 6, 1, 1), 0));
    ph_node *ep = pad11(else_g, x, 8, TK_I64(0, 0, 1, 1, 0, 0, 1, 1), NULL, 0, NULL);
    tk_output(else_g, ph_node_output(avgpool(else_g, ph_node_output(ep, 0), 0), 0)); /* not counting */
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Pad), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Pad), 1);
    assert_pads(tk_find_op(then_g, PH_OP_Conv), 4, TK_I64(1, 1, 1, 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_pad_into_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, moves_pads_into_the_consumer);
    tcase_add_test(tc, graph_output_keeps_its_name);
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
