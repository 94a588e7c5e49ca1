/* tests/test_pass_fuse_conv_bn.c - fuse_conv_bn: the pattern pass folding
 * BatchNormalization into the Conv before it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("fuse_conv_bn"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* x[1,C,5,5] -> Conv(W[M,C/group,3,3], b?) -> BN(M); returns the BN output.
 * var is made positive. */
static ph_value *conv_bn(ph_graph *g, ph_value *x, int64_t C, int64_t M, int group, int bias,
                         const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "%s_w", tag);
    ph_value *in[3] = {x, tk_init(g, name, 4, TK_I64(M, C / group, 3, 3), 7), NULL};
    if (bias) {
        snprintf(name, sizeof name, "%s_b", tag);
        in[2] = tk_init(g, name, 1, TK_I64(M), 8);
    }
    ph_node *conv = tk_node(g, "Conv", bias ? 3 : 2, in);
    ph_node_set_attr_int(conv, "group", group);
    ph_node_set_attr_ints(conv, "pads", 4, TK_I64(1, 1, 1, 1));
    ph_value *p[5] = {ph_node_output(conv, 0)};
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%s_bn%d", tag, i);
        p[i + 1] = tk_init(g, name, 1, TK_I64(M), 10 + (uint64_t)i);
    }
    /* variance = 1 + |random| so sqrt is defined */
    ph_value *abs_var = p[4];
    const ph_tensor *vt = ph_value_const(abs_var);
    float vals[64];
    memcpy(vals, ph_tensor_data(vt), (size_t)M * sizeof *vals);
    for (int64_t i = 0; i < M; i++)
        vals[i] = 1.0f + (vals[i] < 0 ? -vals[i] : vals[i]);
    snprintf(name, sizeof name, "%s_var", tag);
    p[4] = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(M), vals));
    ph_value_prune(abs_var);
    ph_node *bn = tk_node(g, "BatchNormalization", 5, p);
    ph_node_set_attr_float(bn, "epsilon", 1e-3f);
    return ph_node_output(bn, 0);
}

START_TEST(folds_with_and_without_bias_and_groups)
{
    char ops[256];
    for (int variant = 0; variant < 3; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 4, 5, 5));
        int group = variant == 2 ? 2 : 1;
        tk_output(g, tk_op1(g, "Relu", conv_bn(g, x, 4, 6, group, variant != 1, "a")));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 31 + (uint64_t)variant, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Conv,Relu");
        ph_node *conv = tk_find_op(g, PH_OP_Conv);
        ck_assert_int_eq(ph_node_attr_int(conv, "group", 0), group);
        ck_assert_uint_eq(ph_node_input_count(conv), 3);
        /* old weights, bias and BN parameters are gone */
        ck_assert_uint_eq(ph_graph_initializer_count(g), 2);
        /* idempotent */
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *y = conv_bn(g, tk_input(g, "x", 4, TK_I64(1, 2, 5, 5)), 2, 3, 1, 1, "a");
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
    for (int variant = 0; variant < 5; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 5, 5));
        ph_value *y = conv_bn(g, x, 2, 3, 1, 1, "a");
        ph_node *bn = ph_value_producer(y);
        ph_value *c = ph_node_input(bn, 0);
        tk_output(g, y);
        switch (variant) {
        case 0: /* the Conv output has another consumer */
            tk_output(g, tk_op1(g, "Relu", c));
            break;
        case 1: /* the Conv output is a graph output */
            tk_output(g, c);
            break;
        case 2: { /* the scale is not constant */
            ph_value *s = tk_input(g, "s", 1, TK_I64(3));
            ph_node_set_input(bn, 1, s);
            break;
        }
        case 3: /* training mode */
            ph_node_set_attr_int(bn, "training_mode", 1);
            break;
        case 4: { /* weights are a graph input */
            ph_node *conv = ph_value_producer(c);
            ph_node_set_input(conv, 1, tk_input(g, "w", 4, TK_I64(3, 2, 3, 3)));
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
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 2, 5, 5));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, conv_bn(then_g, x, 2, 3, 1, 1, "t"));
    tk_output(else_g, conv_bn(else_g, x, 2, 3, 1, 0, "e"));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_BatchNormalization), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_BatchNormalization), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_conv_bn");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, folds_with_and_without_bias_and_groups);
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
