/* tests/test_pass_fuse_conv_activation.c - fuse_conv_activation: Conv +
 * activation -> com.microsoft FusedConv.  The evaluator has no com.microsoft
 * operators, so these check structure; scripts/test_ort.sh checks the
 * numbers in ONNX Runtime. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("fuse_conv_activation");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

static ph_value *scalar(ph_graph *g, const char *name, float v)
{
    ph_value *s = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, 0, NULL, &v));
    ck_assert_ptr_nonnull(s);
    return s;
}

/* Conv(x[1,3,6,6], W[4,3,3,3], b[4]) {pads 1, strides 2}; returns its output. */
static ph_value *conv(ph_graph *g, ph_value *x, const char *tag)
{
    char w[32], b[32];
    snprintf(w, sizeof w, "%s_w", tag);
    snprintf(b, sizeof b, "%s_b", tag);
    ph_value *in[3] = {x, tk_init(g, w, 4, TK_I64(4, 3, 3, 3), 3), tk_init(g, b, 1, TK_I64(4), 4)};
    ph_node *c = tk_node(g, "Conv", 3, in);
    ph_node_set_attr_ints(c, "pads", 4, TK_I64(1, 1, 1, 1));
    ph_node_set_attr_ints(c, "strides", 2, TK_I64(2, 2));
    return ph_node_output(c, 0);
}

/* The activation `op` of c: LeakyRelu alpha = lo, HardSigmoid alpha, beta =
 * lo, hi; Clip bounds lo, hi as inputs (clip_inputs) or attributes, an
 * infinite one left out. */
static ph_value *act(ph_graph *g, ph_value *c, const char *op, float lo, float hi, int clip_inputs)
{
    if (strcmp(op, "Clip") == 0 && clip_inputs) {
        ph_value *in[3] = {c, isinf(lo) ? NULL : scalar(g, "lo", lo), isinf(hi) ? NULL : scalar(g, "hi", hi)};
        return ph_node_output(tk_node(g, "Clip", isinf(hi) ? 2 : 3, in), 0);
    }
    ph_node *n = tk_node(g, op, 1, &c);
    if (strcmp(op, "Clip") == 0) {
        if (!isinf(lo))
            ph_node_set_attr_float(n, "min", lo);
        if (!isinf(hi))
            ph_node_set_attr_float(n, "max", hi);
    } else if (strcmp(op, "LeakyRelu") == 0) {
        ph_node_set_attr_float(n, "alpha", lo);
    } else if (strcmp(op, "HardSigmoid") == 0) {
        ph_node_set_attr_float(n, "alpha", lo);
        ph_node_set_attr_float(n, "beta", hi);
    }
    return ph_node_output(n, 0);
}

static void assert_fused(ph_graph *g, const char *op, size_t n_params, const float *params)
{
    char ops[128];
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "FusedConv,Neg");
    ph_node *fc = ph_graph_first_node(g);
    ck_assert_str_eq(ph_node_domain(fc), "com.microsoft");
    ck_assert_str_eq(ph_node_attr_string(fc, "activation", ""), op);
    const float *p;
    ptrdiff_t k = ph_node_attr_floats(fc, "activation_params", &p);
    ck_assert_int_eq(k, n_params ? (ptrdiff_t)n_params : -1);
    for (size_t i = 0; i < n_params; i++)
        ck_assert_msg(p[i] == params[i], "activation_params[%zu] = %g, want %g", i, (double)p[i], (double)params[i]);
    const int64_t *v;
    ck_assert_int_eq(ph_node_attr_ints(fc, "pads", &v), 4);
    ck_assert_int_eq(ph_node_attr_ints(fc, "strides", &v), 2);
    ck_assert_uint_eq(ph_node_input_count(fc), 3);
    ck_assert_int_eq(ph_model_opset(ph_graph_model(g), "com.microsoft"), 1);
    /* the output keeps its known type: the next passes still see shapes */
    ph_value *y = ph_node_output(fc, 0);
    ck_assert_int_eq(ph_value_dtype(y), PH_DT_FLOAT);
    ck_assert_int_eq(ph_value_rank(y), 4);
    ck_assert_int_eq(ph_value_dim(y, 3), 3);
}

START_TEST(fuses_each_activation)
{
    static const struct {
        const char *op;
        float lo, hi;
        int opset, clip_inputs;
        size_t np;
        float p[2];
    } cases[] = {
        {"Relu", 0, 0, 17, 0, 0, {0}},
        {"Sigmoid", 0, 0, 17, 0, 0, {0}},
        {"Tanh", 0, 0, 17, 0, 0, {0}},
        {"LeakyRelu", 0.25f, 0, 17, 0, 1, {0.25f}},
        {"HardSigmoid", 0.125f, 0.375f, 17, 0, 2, {0.125f, 0.375f}},
        {"Clip", 0.0f, 6.0f, 13, 1, 2, {0.0f, 6.0f}},               /* ReLU6, bounds as inputs */
        {"Clip", -1.5f, INFINITY, 13, 1, 2, {-1.5f, FLT_MAX}},      /* max omitted */
        {"Clip", -INFINITY, 6.0f, 13, 1, 2, {-FLT_MAX, 6.0f}},      /* min omitted ("") */
        {"Clip", 0.0f, 6.0f, 10, 0, 2, {0.0f, 6.0f}},               /* bounds as attributes */
        {"Clip", -INFINITY, 2.0f, 10, 0, 2, {-FLT_MAX, 2.0f}},      /* min left at its default */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ph_model *m = tk_model();
        ph_model_set_opset(m, "", cases[i].opset);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(1, 3, 6, 6));
        tk_neg_output(g, act(g, conv(g, x, "a"), cases[i].op, cases[i].lo, cases[i].hi, cases[i].clip_inputs));
        ck_assert_int_eq(tk_pass_run(pass, m), 1);
        assert_fused(g, cases[i].op, cases[i].np, cases[i].p);
        tk_assert_untouched(pass, m); /* idempotent */
        ph_model_free(m);
    }
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *y = act(g, conv(g, tk_input(g, "x", 4, TK_I64(1, 3, 6, 6)), "a"), "Relu", 0, 0, 0);
    tk_output(g, y);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(y));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_str_eq(ph_node_op_type(ph_value_producer(ph_graph_output(g, 0))), "FusedConv");
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 10; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = variant == 2   ? ph_graph_add_input(g, "x", PH_DT_DOUBLE, 4, TK_I64(1, 3, 6, 6))
                      : variant == 3 ? ph_graph_add_input(g, "x", PH_DT_UNDEFINED, -1, NULL)
                                     : tk_input(g, "x", 4, TK_I64(1, 3, 6, 6));
        ph_value *c = conv(g, x, "a");
        if (variant == 2) { /* a double Conv: ORT's FusedConv CPU kernel is float only */
            ph_node *cn = ph_value_producer(c);
            ph_value *w0 = ph_node_input(cn, 1), *b0 = ph_node_input(cn, 2);
            double w[108] = {0}, b[4] = {0};
            ph_node_set_input(cn, 1, ph_graph_add_initializer(g, "wd", ph_tensor_new(PH_DT_DOUBLE, 4, TK_I64(4, 3, 3, 3), w)));
            ph_node_set_input(cn, 2, ph_graph_add_initializer(g, "bd", ph_tensor_new(PH_DT_DOUBLE, 1, TK_I64(4), b)));
            ph_value_prune(w0);
            ph_value_prune(b0);
        }
        ph_value *y;
        switch (variant) {
        case 0: /* the Conv output has another consumer */
            y = act(g, c, "Relu", 0, 0, 0);
            tk_neg_output(g, c);
            break;
        case 1: /* the Conv output is a graph output */
            y = act(g, c, "Relu", 0, 0, 0);
            tk_output(g, c);
            break;
        case 4: { /* Clip bound not constant */
            ph_value *in[3] = {c, tk_input(g, "lo", 0, NULL), NULL};
            y = ph_node_output(tk_node(g, "Clip", 2, in), 0);
            break;
        }
        case 5: /* an activation FusedConv does not take */
            y = act(g, c, "Elu", 0, 0, 0);
            break;
        case 6: { /* Clip bound of another dtype than float (an invalid model: left alone) */
            double lo = 0;
            ph_value *in[2] = {c, ph_graph_add_initializer(g, "lo", ph_tensor_new(PH_DT_DOUBLE, 0, NULL, &lo))};
            y = ph_node_output(tk_node(g, "Clip", 2, in), 0);
            break;
        }
        case 8: /* Clip with min > max (ORT refuses it) */
            y = act(g, c, "Clip", 6.0f, 0.0f, 1);
            break;
        case 9: /* the same at opset 10 */
            ph_model_set_opset(m, "", 10);
            y = act(g, c, "Clip", 6.0f, 0.0f, 0);
            break;
        case 7: /* a Conv of another domain */
            ph_node_set_domain(ph_value_producer(c), "com.example");
            ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0); /* a domain the model imports */
            y = act(g, c, "Relu", 0, 0, 0);
            break;
        default: /* 2, 3: dtype double / unknown */
            y = act(g, c, "Relu", 0, 0, 0);
            break;
        }
        tk_neg_output(g, y);
        tk_assert_untouched(pass, m);
        ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), -1);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 3, 6, 6));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, act(then_g, conv(then_g, x, "t"), "Relu", 0, 0, 0));
    tk_output(else_g, act(else_g, conv(else_g, x, "e"), "LeakyRelu", 0.5f, 0, 0));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    char ops[64];
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "FusedConv");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "FusedConv");
    ck_assert_str_eq(ph_node_domain(ph_graph_first_node(else_g)), "com.microsoft");
    ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_conv_activation");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, fuses_each_activation);
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
