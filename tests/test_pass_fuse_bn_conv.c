/* tests/test_pass_fuse_bn_conv.c - fuse_bn_conv: an inference
 * BatchNormalization folded into the Conv after it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("fuse_bn_conv"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* A float initializer of n values: random in [-1, 1) times mul, plus add. */
static ph_value *init(ph_graph *g, const char *name, int rank, const int64_t *dims, uint64_t seed,
                      float mul, float add, int absolute)
{
    ph_value *v = tk_init(g, name, rank, dims, seed);
    const ph_tensor *t = ph_value_const(v);
    int64_t n = ph_tensor_numel(t);
    float *vals = malloc((size_t)n * sizeof *vals);
    ck_assert_ptr_nonnull(vals);
    memcpy(vals, ph_tensor_data(t), (size_t)n * sizeof *vals);
    for (int64_t i = 0; i < n; i++)
        vals[i] = (absolute && vals[i] < 0 ? -vals[i] : vals[i]) * mul + add;
    ck_assert_int_eq(ph_value_set_const(v, ph_tensor_new(PH_DT_FLOAT, (size_t)rank, dims, vals)), 0);
    free(vals);
    return v;
}

/* BN(x) over C channels (var in [0.5, 1.5)); returns the BN node. */
static ph_node *bn(ph_graph *g, ph_value *x, int64_t C, const char *tag)
{
    char name[64];
    ph_value *p[5] = {x};
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%s_bn%d", tag, i);
        p[i + 1] = i == 3 ? init(g, name, 1, TK_I64(C), 13, 1, 0.5f, 1)
                          : tk_init(g, name, 1, TK_I64(C), 10 + (uint64_t)i);
    }
    ph_node *n = tk_node(g, "BatchNormalization", 5, p);
    ph_node_set_attr_float(n, "epsilon", 1e-3f);
    return n;
}

/* Conv(y, W[M, C/group, k...]) of spatial rank sr, weights in [-1/16, 1/16)
 * so the reassociated sums stay within the check's tolerance. */
static ph_node *conv(ph_graph *g, ph_value *y, int sr, int64_t C, int64_t M, int group, int bias,
                     const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "%s_w", tag);
    int64_t wd[4] = {M, C / group, 3, 3};
    ph_value *in[3] = {y, init(g, name, 2 + sr, wd, 7, 1.0f / 16, 0, 0), NULL};
    if (bias) {
        snprintf(name, sizeof name, "%s_b", tag);
        in[2] = tk_init(g, name, 1, TK_I64(M), 8);
    }
    ph_node *n = tk_node(g, "Conv", bias ? 3 : 2, in);
    ph_node_set_attr_int(n, "group", group);
    return n;
}

START_TEST(folds_into_unpadded_convs)
{
    char ops[256];
    for (int v = 0; v < 8; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        int sr = v == 6 ? 1 : 2, group = v == 2 ? 2 : v == 3 ? 4 : 1;
        int64_t M = v == 3 ? 4 : 6;
        ph_value *x = sr == 1 ? tk_input(g, "x", 3, TK_I64(1, 4, 9)) : tk_input(g, "x", 4, TK_I64(1, 4, 7, 7));
        ph_node *c = conv(g, ph_node_output(bn(g, x, 4, "a"), 0), sr, 4, M, group, v != 1, "a");
        switch (v) {
        case 2: /* grouped, dilated, strided */
            ph_node_set_attr_ints(c, "dilations", 2, TK_I64(2, 2));
            ph_node_set_attr_ints(c, "strides", 2, TK_I64(2, 1));
            break;
        case 4: ph_node_set_attr_string(c, "auto_pad", "VALID"); break;
        case 5: ph_node_set_attr_ints(c, "pads", 4, TK_I64(0, 0, 0, 0)); break;
        case 7: ph_node_set_attr_string(c, "auto_pad", "NOTSET"); break;
        }
        tk_output(g, tk_op1(g, "Relu", ph_node_output(c, 0)));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 60 + (uint64_t)v, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Conv,Relu");
        ph_node *n = tk_find_op(g, PH_OP_Conv);
        ck_assert_uint_eq(ph_node_input_count(n), 3);
        ck_assert_int_eq(ph_node_attr_int(n, "group", 1), group);
        ck_assert_uint_eq(ph_graph_initializer_count(g), 2); /* W' and b' only */
        tk_assert_untouched(pass, m);                         /* idempotent */
        ph_model_free(m);
    }
}
END_TEST

START_TEST(padding_only_when_allowed)
{
    for (int v = 0; v < 4; v++) {
        int allowed = v >= 2;
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 4, 5, 5));
        ph_node *c = conv(g, ph_node_output(bn(g, x, 4, "a"), 0), 2, 4, 6, 2, 1, "a");
        if (v % 2 == 0)
            ph_node_set_attr_ints(c, "pads", 4, TK_I64(1, 0, 1, 1));
        else
            ph_node_set_attr_string(c, "auto_pad", "SAME_UPPER");
        tk_output(g, ph_node_output(c, 0));
        if (!allowed) { /* by default: the border outputs would change */
            tk_assert_untouched(pass, m);
            ph_model_free(m);
            continue;
        }
        pass->params = (const char *const[]){"allow_border_change", "true", NULL};
        ck_assert_int_eq(tk_pass_run(pass, m), 1); /* approximate: structure only */
        pass->params = NULL;
        ck_assert_uint_eq(tk_count_op(g, PH_OP_BatchNormalization), 0);
        ph_node *n = tk_find_op(g, PH_OP_Conv);
        ck_assert_ptr_eq(ph_node_input(n, 0), x);
        ck_assert_str_eq(ph_node_attr_string(n, "auto_pad", "NOTSET"), v % 2 ? "SAME_UPPER" : "NOTSET");
        ph_model_free(m);
    }
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 5, 5));
    ph_value *y = ph_node_output(conv(g, ph_node_output(bn(g, x, 2, "a"), 0), 2, 2, 3, 1, 1, "a"), 0);
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
    for (int v = 0; v < 10; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 4, 5, 5));
        ph_node *b = bn(g, x, 4, "a");
        ph_value *y = ph_node_output(b, 0);
        ph_node *c = conv(g, y, 2, 4, 6, 1, 1, "a");
        tk_output(g, ph_node_output(c, 0));
        switch (v) {
        case 0: tk_output(g, tk_op1(g, "Relu", y)); break; /* another consumer */
        case 1: tk_output(g, y); break;                    /* a graph output */
        case 2: ph_node_set_input(b, 1, tk_input(g, "s", 1, TK_I64(4))); break; /* scale not constant */
        case 3: ph_node_set_attr_int(b, "training_mode", 1); break;
        case 4: ph_node_set_input(c, 1, tk_input(g, "w", 4, TK_I64(6, 4, 3, 3))); break; /* W not constant */
        case 5: ph_node_set_input(c, 2, tk_input(g, "cb", 1, TK_I64(6))); break;         /* bias not constant */
        case 6: { /* integer weights */
            int32_t w[6 * 4 * 9] = {0};
            ph_tensor *t = ph_tensor_new(PH_DT_INT32, 4, TK_I64(6, 4, 3, 3), w);
            ph_node_set_input(c, 1, ph_graph_add_initializer(g, "wi", t));
            break;
        }
        case 7: { /* a BN whose running statistics are used */
            ph_value *in[5];
            for (int i = 0; i < 5; i++)
                in[i] = ph_node_input(b, i);
            ph_node *b3 = ph_node_create(g, b, "BatchNormalization", 5, in, 3);
            ph_node_set_input(c, 0, ph_node_output(b3, 0));
            tk_output(g, ph_node_output(b3, 1));
            ph_node_remove(b);
            break;
        }
        case 8: /* the BN output is the Conv's weight, not its data */
            ph_node_set_input(c, 0, x);
            ph_node_set_input(c, 1, y);
            break;
        case 9: ph_node_set_attr_int(c, "group", 2); break; /* W.dim(1) * group != C */
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
    tk_output(then_g, ph_node_output(conv(then_g, ph_node_output(bn(then_g, x, 2, "t"), 0), 2, 2, 3, 1, 1, "t"), 0));
    ph_node *ec = conv(else_g, ph_node_output(bn(else_g, x, 2, "e"), 0), 2, 2, 3, 1, 0, "e");
    ph_node_set_attr_ints(ec, "pads", 4, TK_I64(1, 1, 1, 1)); /* padded: left alone */
    tk_output(else_g, ph_node_output(ec, 0));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_BatchNormalization), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_BatchNormalization), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_bn_conv");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, folds_into_unpadded_convs);
    tcase_add_test(tc, padding_only_when_allowed);
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
