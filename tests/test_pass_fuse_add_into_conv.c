/* tests/test_pass_fuse_add_into_conv.c - fuse_add_into_conv: a per-channel
 * constant added to a Conv's output becomes the Conv's bias. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("fuse_add_into_conv"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* x[1,C,5,5] -> Conv(W[M,C/group,3,3], b?) with pads and dilations `dil`. */
static ph_value *conv(ph_graph *g, ph_value *x, int64_t C, int64_t M, int group, int dil, int bias,
                      const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "%s_w", tag);
    ph_value *in[3] = {x, tk_init(g, name, 4, TK_I64(M, C / group, 3, 3), 7), NULL};
    if (bias) {
        snprintf(name, sizeof name, "%s_b", tag);
        in[2] = tk_init(g, name, 1, TK_I64(M), 8);
    }
    ph_node *n = tk_node(g, "Conv", bias ? 3 : 2, in);
    ph_node_set_attr_int(n, "group", group);
    ph_node_set_attr_ints(n, "pads", 4, TK_I64(dil, dil, dil, dil));
    ph_node_set_attr_ints(n, "dilations", 2, TK_I64(dil, dil));
    return ph_node_output(n, 0);
}

static ph_value *konst(ph_graph *g, const char *name, int rank, const int64_t *dims)
{
    return tk_init(g, name, rank, dims, 21);
}

START_TEST(folds_per_channel_constants)
{
    char ops[256];
    for (int v = 0; v < 9; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        int group = v == 4 ? 2 : 1, dil = v == 4 ? 2 : 1;
        ph_value *x, *c, *a, *y;
        if (v == 7) { /* 1-D convolution, a [M,1] */
            x = tk_input(g, "x", 3, TK_I64(1, 4, 7));
            ph_value *in[3] = {x, tk_init(g, "w", 3, TK_I64(6, 4, 3), 7), tk_init(g, "b", 1, TK_I64(6), 8)};
            c = ph_node_output(tk_node(g, "Conv", 3, in), 0);
            a = konst(g, "a", 2, TK_I64(6, 1));
        } else {
            x = tk_input(g, "x", 4, TK_I64(1, 4, 5, 5));
            c = conv(g, x, 4, 6, group, dil, v != 1, "c");
            switch (v) {
            case 1: a = konst(g, "a", 4, TK_I64(1, 6, 1, 1)); break;
            case 2: a = konst(g, "a", 0, NULL); break;
            case 3: a = konst(g, "a", 1, TK_I64(1)); break;
            case 8: a = konst(g, "a", 4, TK_I64(1, 1, 1, 1)); break;
            default: a = konst(g, "a", 3, TK_I64(6, 1, 1)); break;
            }
        }
        if (v == 5)
            y = tk_op2(g, "Sub", c, a);
        else if (v == 6)
            y = tk_op2(g, "Add", a, c);
        else
            y = tk_op2(g, "Add", c, a);
        tk_output(g, tk_op1(g, "Relu", y));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 50 + (uint64_t)v, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Conv,Relu");
        ph_node *n = tk_find_op(g, PH_OP_Conv);
        ck_assert_uint_eq(ph_node_input_count(n), 3);
        ck_assert_int_eq(ph_node_attr_int(n, "group", 1), group);
        if (v != 7) {
            const int64_t *d;
            ck_assert_int_eq(ph_node_attr_ints(n, "dilations", &d), 2);
            ck_assert_int_eq(d[0], dil);
        }
        ck_assert_uint_eq(ph_graph_initializer_count(g), 2); /* W and the new bias */
        tk_assert_untouched(pass, m);                         /* idempotent */
        ph_model_free(m);
    }
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *y = tk_op2(g, "Add", conv(g, tk_input(g, "x", 4, TK_I64(1, 2, 5, 5)), 2, 3, 1, 1, 1, "c"),
                         konst(g, "a", 3, TK_I64(3, 1, 1)));
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
    for (int v = 0; v < 12; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 4, 5, 5));
        ph_value *c = conv(g, x, 4, 6, 1, 1, 1, "c"), *a;
        ph_node *cn = ph_value_producer(c);
        switch (v) {
        case 2: a = tk_input(g, "a", 3, TK_I64(6, 1, 1)); break;          /* not constant */
        case 3: a = konst(g, "a", 4, TK_I64(1, 1, 1, 5)); break;          /* varies along W */
        case 4: a = konst(g, "a", 4, TK_I64(2, 6, 1, 1)); break;          /* widens N */
        case 5: a = konst(g, "a", 5, TK_I64(1, 1, 6, 1, 1)); break;       /* widens the rank */
        case 6: a = konst(g, "a", 2, TK_I64(5, 1)); break;                /* varies along H */
        case 7: { /* an integer constant */
            int64_t vals[6] = {1, 2, 3, 4, 5, 6};
            a = ph_graph_add_initializer(g, "a", ph_tensor_new(PH_DT_INT64, 3, TK_I64(6, 1, 1), vals));
            break;
        }
        case 8: { /* a float16 constant: another dtype than W */
            uint16_t vals[6] = {0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00};
            a = ph_graph_add_initializer(g, "a", ph_tensor_new(PH_DT_FLOAT16, 3, TK_I64(6, 1, 1), vals));
            break;
        }
        default: a = konst(g, "a", 3, TK_I64(6, 1, 1)); break;
        }
        ph_value *y = tk_op2(g, "Add", c, a);
        tk_output(g, y);
        switch (v) {
        case 0: tk_output(g, tk_op1(g, "Relu", c)); break; /* another consumer */
        case 1: tk_output(g, c); break;                    /* a graph output */
        case 9: ph_node_set_input(cn, 2, tk_input(g, "b", 1, TK_I64(6))); break; /* bias not constant */
        case 10: ph_node_set_input(cn, 1, tk_input(g, "w", 4, TK_I64(6, 4, 3, 3))); break;
        case 11: /* legacy broadcasting (opset < 7) aligns at an axis */
            ph_node_set_attr_int(ph_value_producer(y), "broadcast", 1);
            ph_node_set_attr_int(ph_value_producer(y), "axis", 1);
            break;
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
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 5, 5));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g,
              tk_op2(then_g, "Add", conv(then_g, x, 2, 3, 1, 1, 1, "t"), konst(then_g, "ta", 3, TK_I64(3, 1, 1))));
    tk_output(else_g, tk_op2(else_g, "Sub", conv(else_g, x, 2, 3, 1, 1, 0, "e"), konst(else_g, "ea", 0, NULL)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Add), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Sub), 0);
    ck_assert_uint_eq(ph_node_input_count(tk_find_op(else_g, PH_OP_Conv)), 3);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_add_into_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, folds_per_channel_constants);
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
