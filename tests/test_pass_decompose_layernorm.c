/* tests/test_pass_decompose_layernorm.c - decompose_layernorm:
 * LayerNormalization becomes LayerNormalization without affine + Mul + Add
 * (default), or primitive operators (primitive = true). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;
static const char *const primitive[] = {"primitive", "true", NULL};

static void setup(void)
{
    pass = tk_pass_load("decompose_layernorm");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* LayerNormalization(x, s, b?) {axis}; returns the node. */
static ph_node *ln(ph_graph *g, ph_value *x, ph_value *s, ph_value *b, int64_t axis)
{
    ph_value *in[3] = {x, s, b};
    ph_node *n = tk_node(g, "LayerNormalization", b ? 3 : 2, in);
    ph_node_set_attr_int(n, "axis", axis);
    ph_node_set_attr_float(n, "epsilon", 1e-3f);
    return n;
}

static ph_value *float_const(ph_graph *g, const char *name, int64_t n, double v)
{
    double vals[64];
    for (int64_t i = 0; i < n; i++)
        vals[i] = v;
    return ph_graph_add_initializer(g, name, ph_tensor_from_f64(PH_DT_FLOAT, 1, TK_I64(n), vals));
}

START_TEST(split_scale_and_bias)
{
    char ops[256];
    for (int variant = 0; variant < 4; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 8));
        ph_value *s = NULL, *b = NULL;
        int64_t axis = -1;
        const char *want = "LayerNormalization,Mul,Add";
        switch (variant) {
        case 0: /* constant Scale and B over the last axis */
            s = tk_init(g, "s", 1, TK_I64(8), 1);
            b = tk_init(g, "b", 1, TK_I64(8), 2);
            break;
        case 1: /* two normalized axes, no B, Scale broadcast over one of them */
            axis = 1;
            s = tk_init(g, "s", 2, TK_I64(1, 8), 1);
            want = "LayerNormalization,Mul";
            break;
        case 2: /* Scale and B computed at run time */
            s = tk_op1(g, "Relu", tk_input(g, "s", 1, TK_I64(8)));
            b = tk_input(g, "b", 1, TK_I64(8));
            want = "Relu,LayerNormalization,Mul,Add";
            break;
        default: /* Scale of ones: only the Add */
            s = float_const(g, "s", 8, 1.0);
            b = tk_init(g, "b", 1, TK_I64(8), 2);
            want = "LayerNormalization,Add";
            break;
        }
        ph_value *y = ph_node_output(ln(g, x, s, b, axis), 0);
        tk_output(g, y);
        char *name = strdup(ph_value_name(y));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 5 + (uint64_t)variant, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), want);
        ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
        free(name);
        ph_node *n = tk_find_op(g, PH_OP_LayerNormalization);
        ck_assert_uint_eq(ph_node_input_count(n), 2);
        ck_assert_int_eq(ph_node_attr_int(n, "axis", 0), axis);
        ck_assert_float_eq(ph_node_attr_float(n, "epsilon", 0), 1e-3f);
        const ph_tensor *ones = ph_value_const(ph_node_input(n, 1));
        ck_assert_ptr_nonnull(ones);
        ck_assert_int_eq(ph_tensor_numel(ones), axis == 1 ? 24 : 8);
        ck_assert(ph_tensor_all_equal(ones, 1.0));
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(primitive_ops)
{
    char ops[256];
    const int64_t sizes[2] = {1, 3};
    pass->params = primitive;
    for (int opset = 17; opset <= 18; opset++) {
        for (int variant = 0; variant < 2; variant++) {
            ph_model *m = ph_model_new(opset);
            ph_graph *g = ph_model_graph(m);
            ph_value *x = tk_input(g, "x", 3, TK_I64(-1, 3, 8));
            ph_value_set_dim_param(x, 0, "batch");
            ph_value *s = tk_init(g, "s", 1, TK_I64(8), 1);
            ph_value *b = variant ? float_const(g, "b", 8, 0.0) : tk_init(g, "b", 1, TK_I64(8), 2);
            tk_output(g, ph_node_output(ln(g, x, s, b, 2), 0));
            ck_assert_int_eq(tk_pass_run_eval(pass, m, 7, 2, sizes), 1);
            ck_assert_str_eq(tk_ops(g, ops, sizeof ops), variant ? "ReduceMean,Sub,Mul,ReduceMean,Add,Sqrt,Div,Mul"
                                                                 : "ReduceMean,Sub,Mul,ReduceMean,Add,Sqrt,Div,Mul,Add");
            ph_node *r = tk_find_op(g, PH_OP_ReduceMean);
            const int64_t *axes;
            if (opset >= 18) {
                int64_t v[4];
                ck_assert_int_eq(ph_value_const_ints(ph_node_input(r, 1), v, NULL, 4), 1);
                ck_assert_int_eq(v[0], 2);
                ck_assert_int_eq(ph_node_attr_ints(r, "axes", &axes), -1);
            } else {
                ck_assert_uint_eq(ph_node_input_count(r), 1);
                ck_assert_int_eq(ph_node_attr_ints(r, "axes", &axes), 1);
                ck_assert_int_eq(axes[0], 2);
            }
            ck_assert_int_eq(ph_node_attr_int(r, "keepdims", 0), 1);
            tk_assert_untouched(pass, m);
            ph_model_free(m);
        }
    }
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 8; variant++) {
        ph_model *m = ph_model_new(variant == 1 ? 16 : 17);
        ph_graph *g = ph_model_graph(m);
        ph_value *x, *s, *b = NULL;
        switch (variant) {
        case 2: /* unknown rank */
            x = tk_input(g, "x", -1, NULL);
            break;
        case 3: /* the normalized dim is symbolic: no shape for the ones */
            x = tk_input(g, "x", 3, TK_I64(2, 3, -1));
            ph_value_set_dim_param(x, 2, "h");
            break;
        case 6: /* float16 has no primitive form */
            x = ph_graph_add_input(g, "x", PH_DT_FLOAT16, 3, TK_I64(2, 3, 8));
            break;
        default:
            x = tk_input(g, "x", 3, TK_I64(2, 3, 8));
            break;
        }
        switch (variant) {
        case 3:
            s = tk_input(g, "s", 1, TK_I64(-1));
            ph_value_set_dim_param(s, 0, "h");
            break;
        case 4: /* already without affine: ones and zeros */
            s = float_const(g, "s", 8, 1.0);
            b = float_const(g, "b", 8, 0.0);
            break;
        case 5: /* Scale of unknown shape */
            s = tk_input(g, "s", -1, NULL);
            break;
        case 6:
            s = ph_graph_add_input(g, "s", PH_DT_FLOAT16, 1, TK_I64(8));
            break;
        case 7: /* already without affine: ones, no B */
            s = float_const(g, "s", 8, 1.0);
            break;
        default:
            s = tk_init(g, "s", 1, TK_I64(8), 1);
            b = tk_init(g, "b", 1, TK_I64(8), 2);
            break;
        }
        ph_value *in[3] = {x, s, b};
        ph_node *n = ph_node_create(g, NULL, "LayerNormalization", b ? 3 : 2, in, variant == 0 ? 2 : 1);
        ck_assert_ptr_nonnull(n);
        tk_output(g, ph_node_output(n, 0));
        if (variant == 0) /* the Mean output is used */
            tk_output(g, tk_op1(g, "Neg", ph_node_output(n, 1)));
        pass->params = variant == 6 ? primitive : NULL;
        tk_assert_untouched(pass, m);
        if (variant == 0 || variant == 1 || variant == 2 || variant == 5) {
            pass->params = primitive;
            tk_assert_untouched(pass, m);
        }
        pass->params = NULL;
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 8));
    ph_value *s = tk_init(g, "s", 1, TK_I64(8), 1), *b = tk_init(g, "b", 1, TK_I64(8), 2);
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, ph_node_output(ln(then_g, x, s, b, -1), 0));
    tk_output(else_g, tk_op1(else_g, "Neg", ph_node_output(ln(else_g, x, s, NULL, -1), 0)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Add), 1);
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Mul), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Mul), 1);
    ck_assert_uint_eq(ph_node_input_count(tk_find_op(then_g, PH_OP_LayerNormalization)), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("decompose_layernorm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, split_scale_and_bias);
    tcase_add_test(tc, primitive_ops);
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
