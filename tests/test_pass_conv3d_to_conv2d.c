/* tests/test_pass_conv3d_to_conv2d.c - conv3d_to_conv2d: a 3-D Conv becomes
 * one 2-D Conv per depth tap, summed. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("conv3d_to_conv2d");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Conv(x [.., C, ...], w [M, C, kd, 3, 3], b?); returns the node. */
static ph_node *conv3d(ph_graph *g, ph_value *x, int64_t C, int64_t M, int64_t kd, int bias, const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "%s_w", tag);
    ph_value *in[3] = {x, tk_init(g, name, 5, TK_I64(M, C, kd, 3, 3), 3)};
    snprintf(name, sizeof name, "%s_b", tag);
    if (bias)
        in[2] = tk_init(g, name, 1, TK_I64(M), 4);
    return tk_node(g, "Conv", bias ? 3 : 2, in);
}

START_TEST(splits)
{
    static const int64_t kd[] = {3, 3, 2, 1, 3, 3};
    for (int v = 0; v < 6; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        /* one input channel keeps the float error within the test kit's few ulp */
        ph_value *x = tk_input(g, "x", 5, TK_I64(2, 1, 6, 5, 7));
        ph_node *conv = conv3d(g, x, 1, 4, kd[v], v != 2, "a");
        switch (v) {
        case 0: /* padding everywhere, depth stride 2 */
            ph_node_set_attr_ints(conv, "pads", 6, TK_I64(1, 1, 0, 2, 1, 1));
            ph_node_set_attr_ints(conv, "strides", 3, TK_I64(2, 1, 2));
            break;
        case 1: /* depth dilation, spatial dilation */
            ph_node_set_attr_ints(conv, "dilations", 3, TK_I64(2, 1, 2));
            break;
        case 2: /* no bias, no attributes */
        case 3: /* one tap */
            break;
        case 4: /* VALID, kernel_shape given */
            ph_node_set_attr_string(conv, "auto_pad", "VALID");
            ph_node_set_attr_ints(conv, "kernel_shape", 3, TK_I64(3, 3, 3));
            break;
        case 5: /* depth stride 3, pads on the end only */
            ph_node_set_attr_ints(conv, "pads", 6, TK_I64(0, 0, 0, 2, 0, 0));
            ph_node_set_attr_ints(conv, "strides", 3, TK_I64(3, 1, 1));
            break;
        }
        ph_value *y = ph_node_output(conv, 0);
        tk_output(g, y);
        char *name = strdup(ph_value_name(y));
                ck_assert_int_eq(tk_pass_run_eval(pass, m, 3 + (uint64_t)v, 0, NULL), 1);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Conv), (size_t)kd[v]);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Add), (size_t)kd[v] - 1);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Pad), v == 0 || v == 5);
        for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
            if (ph_node_op(n) == PH_OP_Conv)
                ck_assert_int_eq(ph_value_rank(ph_node_input(n, 0)), 4);
        ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
        free(name);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* Evaluate m's main graph (one float input, one output) on x[i] = sin(i). */
static ph_tensor *eval_sin(ph_model *m)
{
    ph_graph *g = ph_model_graph(m);
    ph_value *xv = ph_graph_input(g, 0);
    int64_t dims[5], n = 1;
    for (int d = 0; d < 5; d++)
        n *= dims[d] = ph_value_dim(xv, d);
    float *data = malloc((size_t)n * sizeof *data);
    ck_assert_ptr_nonnull(data);
    for (int64_t i = 0; i < n; i++)
        data[i] = (float)sin((double)i);
    ph_tensor *in = ph_tensor_new(PH_DT_FLOAT, 5, dims, data), *out = NULL;
    free(data);
    ph_eval *e = NULL;
    ph_error err = {0};
    ck_assert_msg(ph_eval_new(g, &e, &err) == 0, "%s", err.message);
    ck_assert_msg(ph_eval_run(e, (const ph_tensor *const *)&in, 1, &out, 1, &err) == 0, "%s", err.message);
    ph_eval_free(e);
    ph_tensor_free(in);
    return out;
}

/* Many channels: the sum over taps is rounded tap by tap, so the result may
 * differ by more than the test kit's few ulp; compare within 1e-5 relative. */
START_TEST(many_channels)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_node *conv = conv3d(g, tk_input(g, "x", 5, TK_I64(2, 5, 6, 5, 7)), 5, 4, 3, 1, "a");
    ph_node_set_attr_ints(conv, "pads", 6, TK_I64(1, 1, 0, 2, 1, 1));
    ph_node_set_attr_ints(conv, "strides", 3, TK_I64(2, 1, 2));
    tk_output(g, ph_node_output(conv, 0));
    tk_infer(m);
    ph_tensor *before = eval_sin(m);
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Conv), 3);
    ph_tensor *after = eval_sin(m);
    ck_assert_int_eq(ph_tensor_numel(before), ph_tensor_numel(after));
    ck_assert_int_eq(ph_tensor_numel(before), 2 * 4 * 4 * 5 * 3);
    for (int64_t i = 0; i < ph_tensor_numel(before); i++) {
        float a = ((const float *)ph_tensor_data(before))[i], b = ((const float *)ph_tensor_data(after))[i];
        ck_assert_msg(fabsf(a - b) <= 1e-5f * (1 + fabsf(a)), "element %lld: %.9g before, %.9g after", (long long)i,
                      (double)a, (double)b);
    }
    ph_tensor_free(before);
    ph_tensor_free(after);
    ph_model_free(m);
}
END_TEST

START_TEST(symbolic_batch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 5, TK_I64(-1, 2, 4, 4, 4));
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "N"), 0);
    ph_node *conv = conv3d(g, x, 2, 3, 2, 1, "a");
    ph_node_set_attr_ints(conv, "pads", 6, TK_I64(1, 1, 1, 0, 1, 1));
    tk_output(g, tk_op1(g, "Relu", ph_node_output(conv, 0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 8, 2, TK_I64(1, 3)), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Conv), 2);
    ck_assert_str_eq(ph_value_dim_param(ph_graph_output(g, 0), 0), "N");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    const char *few[] = {"max_taps", "2", NULL};
    for (int v = 0; v < 9; v++) {
        ph_model *m = tk_model();
        if (v == 6)
            ph_model_set_opset(m, "", 10);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", v == 3 ? -1 : 5, TK_I64(1, 2, v == 4 ? -1 : 4, 4, 4));
        ph_node *conv = conv3d(g, x, 2, 2, 3, 1, "a");
        tk_output(g, ph_node_output(conv, 0));
        pass->params = NULL;
        switch (v) {
        case 0: /* deeper than max_taps */
            pass->params = few;
            break;
        case 1: /* grouped */
            ph_node_set_input(conv, 1, tk_init(g, "wg", 5, TK_I64(2, 1, 3, 3, 3), 9));
            ph_node_set_attr_int(conv, "group", 2);
            break;
        case 2: /* the weight is not constant */
            ph_node_set_input(conv, 1, tk_input(g, "w", 5, TK_I64(2, 2, 3, 3, 3)));
            break;
        case 3: /* unknown rank */
        case 4: /* unknown depth */
            break;
        case 5: /* auto_pad SAME_UPPER */
            ph_node_set_attr_string(conv, "auto_pad", "SAME_UPPER");
            break;
        case 6: /* opset 10 */
            break;
        case 7: { /* a 2-D Conv */
            ph_node_set_input(conv, 0, tk_input(g, "x2", 4, TK_I64(1, 2, 4, 4)));
            ph_node_set_input(conv, 1, tk_init(g, "w2", 4, TK_I64(2, 2, 3, 3), 9));
            break;
        }
        case 8: { /* bfloat16 */
            ph_value *xb = ph_graph_add_input(g, "xb", PH_DT_BFLOAT16, 5, TK_I64(1, 2, 4, 4, 4));
            uint16_t wv[2 * 2 * 27] = {0};
            ph_value *in[2] = {xb, ph_graph_add_initializer(g, "wb", ph_tensor_new(PH_DT_BFLOAT16, 5, TK_I64(2, 2, 3, 3, 3), wv))};
            tk_output(g, ph_node_output(tk_node(g, "Conv", 2, in), 0));
            ph_node_set_input(conv, 1, tk_input(g, "w", 5, TK_I64(2, 2, 3, 3, 3)));
            break;
        }
        }
        ck_assert_int_eq(ph_graph_toposort(g), 0);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 5, TK_I64(1, 2, 4, 4, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, ph_node_output(conv3d(then_g, x, 2, 3, 2, 1, "t"), 0));
    tk_output(else_g, ph_node_output(conv3d(else_g, x, 2, 3, 3, 0, "e"), 0));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Conv), 2);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Conv), 3);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Add), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("conv3d_to_conv2d");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, splits);
    tcase_add_test(tc, many_channels);
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
