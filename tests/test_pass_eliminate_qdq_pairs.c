/* tests/test_pass_eliminate_qdq_pairs.c - the eliminate_qdq_pairs pass. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("eliminate_qdq_pairs");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

static ph_value *scale(ph_graph *g, const char *name, float s)
{
    ph_value *v = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, 0, NULL, &s));
    ck_assert_ptr_nonnull(v);
    return v;
}

static ph_value *zero_point(ph_graph *g, const char *name, int8_t z)
{
    ph_value *v = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_INT8, 0, NULL, &z));
    ck_assert_ptr_nonnull(v);
    return v;
}

/* x -> QuantizeLinear(s, z) -> DequantizeLinear(s2, z2) (z, z2 may be NULL);
 * *q (may be NULL) gets the quantized value. */
static ph_value *qdq(ph_graph *g, ph_value *x, ph_value *s, ph_value *z, ph_value *s2, ph_value *z2,
                     ph_value **q)
{
    ph_value *qi[3] = {x, s, z};
    ph_value *qv = ph_node_output(tk_node(g, "QuantizeLinear", z ? 3 : 2, qi), 0);
    ph_value *di[3] = {qv, s2, z2};
    if (q)
        *q = qv;
    return ph_node_output(tk_node(g, "DequantizeLinear", z2 ? 3 : 2, di), 0);
}

/* Round half to even, as QuantizeLinear does. */
static float dequant_quant(float x, float s, int z)
{
    float v = nearbyintf(x / s) + (float)z;
    v = v < -128 ? -128 : v > 127 ? 127 : v;
    return (v - (float)z) * s;
}

/* Relu -> Q/DQ (scale 0.25, int8 zero point 3, one shared scale value and
 * two equal zero-point initializers) -> Neg.  The evaluator has no
 * QuantizeLinear, so the result after the pass is compared with the pair
 * computed here: equal up to half a scale step, and exactly -relu(x). */
START_TEST(pair_removed_within_half_a_step)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_relu_input(g, 1, TK_I64(64), NULL);
    ph_value *s = scale(g, "s", 0.25f);
    tk_neg_output(g, qdq(g, r, s, zero_point(g, "z", 3), s, zero_point(g, "z2", 3), NULL));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);

    float xs[64];
    for (int i = 0; i < 64; i++)
        xs[i] = (float)(i - 20) * 0.37f;
    ph_tensor *in = ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(64), xs), *out = NULL;
    ph_eval *e = NULL;
    ph_error err = {0};
    ck_assert_msg(ph_eval_new(g, &e, &err) == 0, "%s", err.message);
    ck_assert_msg(ph_eval_run(e, (const ph_tensor *const *)&in, 1, &out, 1, &err) == 0, "%s", err.message);
    float ys[64];
    memcpy(ys, ph_tensor_data(out), sizeof ys);
    for (int i = 0; i < 64; i++) {
        float relu = xs[i] > 0 ? xs[i] : 0, before = -dequant_quant(relu, 0.25f, 3);
        ck_assert_float_eq(ys[i], -relu);
        ck_assert_msg(fabsf(ys[i] - before) <= 0.125f, "element %d: %g after, %g before", i,
                      (double)ys[i], (double)before);
    }
    ph_tensor_free(in);
    ph_tensor_free(out);
    ph_eval_free(e);
    tk_assert_untouched(pass, m); /* idempotent */
    ph_model_free(m);
}
END_TEST

/* No zero points, two equal scale initializers, a graph input feeding the
 * pair and a graph output after it. */
START_TEST(no_zero_points_graph_input_and_output)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "a", 2, TK_I64(2, 3));
    ph_value *y = qdq(g, x, scale(g, "s", 0.5f), NULL, scale(g, "s2", 0.5f), NULL, NULL);
    tk_neg_output(g, y);
    ph_value *r = tk_relu_input(g, 2, TK_I64(2, 3), NULL);
    ph_value *y2 = qdq(g, r, scale(g, "t", 0.5f), NULL, scale(g, "t2", 0.5f), NULL, NULL);
    tk_output(g, y2);
    char *name = strdup(ph_value_name(y2));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_QuantizeLinear) + tk_count_op(g, PH_OP_DequantizeLinear), 0);
    ck_assert_ptr_eq(ph_node_input(tk_find_op(g, PH_OP_Neg), 0), x);
    ck_assert_ptr_eq(ph_graph_output(g, 1), r);
    ck_assert_str_eq(ph_value_name(r), name);
    free(name);
    ph_model_free(m);
}
END_TEST

START_TEST(descriptor_is_off_and_approximate)
{
    ck_assert_int_eq(pass->desc->on_by_default, 0);
    ck_assert_int_eq(pass->desc->exactness, PH_APPROX);
    ck_assert_int_eq(pass->desc->stages, PH_STAGE_OPTIMIZE);
}
END_TEST

/* ---- negative cases: each model is left alone */

static void kept(void (*build)(ph_graph *g, ph_value *r))
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    build(g, tk_relu_input(g, 2, TK_I64(4, 4), NULL));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}

static void other_scale(ph_graph *g, ph_value *r)
{
    tk_neg_output(g, qdq(g, r, scale(g, "s", 0.25f), NULL, scale(g, "s2", 0.5f), NULL, NULL));
}
static void other_zero_point(ph_graph *g, ph_value *r)
{
    ph_value *s = scale(g, "s", 0.25f);
    tk_neg_output(g, qdq(g, r, s, zero_point(g, "z", 0), s, zero_point(g, "z2", 1), NULL));
}
static void one_zero_point(ph_graph *g, ph_value *r)
{
    ph_value *s = scale(g, "s", 0.25f);
    tk_neg_output(g, qdq(g, r, s, zero_point(g, "z", 0), s, NULL, NULL));
}
static void runtime_scale(ph_graph *g, ph_value *r)
{
    ph_value *s = ph_graph_add_input(g, "s", PH_DT_FLOAT, 0, NULL);
    tk_neg_output(g, qdq(g, r, s, NULL, s, NULL, NULL));
}
static void runtime_zero_point(ph_graph *g, ph_value *r)
{
    ph_value *s = scale(g, "s", 0.25f), *z = ph_graph_add_input(g, "z", PH_DT_INT8, 0, NULL);
    tk_neg_output(g, qdq(g, r, s, z, s, z, NULL));
}
/* per-channel scales along different axes */
static void other_axis(ph_graph *g, ph_value *r)
{
    ph_value *s = tk_init(g, "s", 1, TK_I64(4), 9);
    ph_value *y = qdq(g, r, s, NULL, s, NULL, NULL);
    ph_node_set_attr_int(ph_value_producer(y), "axis", 0);
    tk_neg_output(g, y);
}
/* int32 in, float out */
static void int_input(ph_graph *g, ph_value *r)
{
    ph_value *x = ph_graph_add_input(g, "i", PH_DT_INT32, 2, TK_I64(4, 4));
    ph_value *s = scale(g, "s", 1.0f);
    tk_neg_output(g, qdq(g, x, s, NULL, s, NULL, NULL));
    tk_neg_output(g, r);
}
/* a Dequantize to another dtype than the Quantize input's (opset 23 form) */
static void other_output_dtype(ph_graph *g, ph_value *r)
{
    ph_value *s = scale(g, "s", 0.25f);
    ph_value *y = qdq(g, r, s, NULL, s, NULL, NULL);
    ph_node_set_attr_int(ph_value_producer(y), "output_dtype", PH_DT_FLOAT16);
    tk_output(g, y);
}
static void quantized_value_read_elsewhere(ph_graph *g, ph_value *r)
{
    ph_value *s = scale(g, "s", 0.25f), *q;
    tk_neg_output(g, qdq(g, r, s, NULL, s, NULL, &q));
    tk_output(g, tk_op1(g, "Identity", q));
}
static void quantized_value_is_graph_output(ph_graph *g, ph_value *r)
{
    ph_value *s = scale(g, "s", 0.25f), *q;
    tk_neg_output(g, qdq(g, r, s, NULL, s, NULL, &q));
    tk_output(g, q);
}
static void graph_input_to_graph_output(ph_graph *g, ph_value *r)
{
    ph_value *x = tk_input(g, "x2", 2, TK_I64(4, 4)), *s = scale(g, "s", 0.25f);
    tk_output(g, qdq(g, x, s, NULL, s, NULL, NULL));
    tk_neg_output(g, r);
}

START_TEST(left_alone)
{
    kept(other_scale);
    kept(other_zero_point);
    kept(one_zero_point);
    kept(runtime_scale);
    kept(runtime_zero_point);
    kept(other_axis);
    kept(int_input);
    kept(other_output_dtype);
    kept(quantized_value_read_elsewhere);
    kept(quantized_value_is_graph_output);
    kept(graph_input_to_graph_output);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    char ops[64];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    /* scales of the main graph, read from the branches */
    ph_value *s = scale(g, "s", 0.25f), *s2 = scale(g, "s2", 0.5f);
    tk_output(then_g, tk_op1(then_g, "Neg", qdq(then_g, x, s, NULL, s, NULL, NULL)));
    tk_output(else_g, tk_op1(else_g, "Neg", qdq(else_g, x, s, NULL, s2, NULL, NULL)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Neg");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(then_g), 0), x);
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "QuantizeLinear,DequantizeLinear,Neg");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_qdq_pairs");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, pair_removed_within_half_a_step);
    tcase_add_test(tc, no_zero_points_graph_input_and_output);
    tcase_add_test(tc, descriptor_is_off_and_approximate);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
