/* tests/test_eval_float64.c - the evaluator's float64 reference mode
 * (ph_eval_options.float64): float32, float16 and bfloat16 tensors are
 * promoted to double (graph inputs, initializers, initializer defaults of
 * graph inputs, Constant values, kernel outputs), every kernel computes in
 * double, Casts to a float type stay double and Casts to integers convert
 * as usual; ops the spec allows only in float32 still compute; the normal
 * mode is unchanged. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/passhost.h"
#include "testkit.h"

/* Run m's graph once, normal (float64 0) or reference mode; outputs owned
 * by the caller. */
static int run(ph_model *m, int float64, const ph_tensor *const *in, size_t n_in, ph_tensor **out,
               size_t n_out, ph_error *err)
{
    ph_eval *e = NULL;
    ph_eval_options o = {.size = sizeof o, .float64 = float64};
    int rc = ph_eval_new_with(ph_model_graph(m), &o, &e, err);
    if (!rc)
        rc = ph_eval_run(e, in, n_in, out, n_out, err);
    ph_eval_free(e);
    return rc;
}

static ph_tensor *floats(size_t n, const float *v)
{
    ph_tensor *t = ph_tensor_new(PH_DT_FLOAT, 1, TK_I64((int64_t)n), v);
    ck_assert_ptr_nonnull(t);
    return t;
}

static double at(const ph_tensor *t, size_t i)
{
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_DOUBLE);
    return ((const double *)ph_tensor_data(t))[i];
}

/* x[3] * w + c, with w an initializer, c a Constant node: in float64 the
 * products and sums are the exact double ones of the float32 values. */
START_TEST(float_ops_compute_in_double)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(3));
    const float wv[3] = {0.1f, 1.0f / 3.0f, 7.7f};
    ph_value *w = ph_graph_add_initializer(g, "w", floats(3, wv));
    ph_node *c = tk_node(g, "Constant", 0, NULL);
    const float cv = 1e8f;
    ck_assert_int_eq(ph_node_set_attr_tensor(c, "value", ph_tensor_new(PH_DT_FLOAT, 0, NULL, &cv)), 0);
    ph_value *y = tk_op2(g, "Add", tk_op2(g, "Mul", x, w), ph_node_output(c, 0));
    tk_output(g, y);
    tk_infer(m);
    const float xv[3] = {0.3f, -2.5f, 1.0f / 7.0f};
    ph_tensor *in = floats(3, xv), *out32 = NULL, *out64 = NULL;
    ph_error err = {0};
    ck_assert_msg(run(m, 0, (const ph_tensor *const *)&in, 1, &out32, 1, &err) == 0, "%s", err.message);
    ck_assert_msg(run(m, 1, (const ph_tensor *const *)&in, 1, &out64, 1, &err) == 0, "%s", err.message);
    ck_assert_int_eq(ph_tensor_dtype(out32), PH_DT_FLOAT);
    for (size_t i = 0; i < 3; i++) {
        double want = (double)xv[i] * (double)wv[i] + (double)cv;
        ck_assert_msg(at(out64, i) == want, "element %zu: %.17g, want %.17g", i, at(out64, i), want);
        /* float32 rounds the sum to a multiple of 8 near 1e8: the reference keeps the fraction */
        ck_assert(((const float *)ph_tensor_data(out32))[i] == (float)((float)(xv[i] * wv[i]) + cv));
    }
    ck_assert(at(out64, 2) != (double)((const float *)ph_tensor_data(out32))[2]);
    ph_tensor_free(in);
    ph_tensor_free(out32);
    ph_tensor_free(out64);
    ph_model_free(m);
}
END_TEST

/* Cast to float / float16 stays double; Cast to int64 truncates as usual;
 * CastLike to a float tensor stays double. */
START_TEST(casts_to_float_types_stay_double)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_DOUBLE, 1, TK_I64(2));
    ph_value *like = tk_input(g, "like", 1, TK_I64(1));
    const int to[3] = {PH_DT_FLOAT, PH_DT_FLOAT16, PH_DT_INT64};
    for (size_t k = 0; k < 3; k++) {
        ph_node *c = tk_node(g, "Cast", 1, &x);
        ck_assert_int_eq(ph_node_set_attr_int(c, "to", to[k]), 0);
        tk_output(g, ph_node_output(c, 0));
    }
    tk_output(g, tk_op2(g, "CastLike", x, like));
    tk_infer(m);
    const double xv[2] = {0.1, -2.7};
    const float lv = 1;
    ph_tensor *in[2] = {ph_tensor_new(PH_DT_DOUBLE, 1, TK_I64(2), xv), floats(1, &lv)}, *out[4] = {0};
    ph_error err = {0};
    ck_assert_msg(run(m, 1, (const ph_tensor *const *)in, 2, out, 4, &err) == 0, "%s", err.message);
    for (size_t k = 0; k < 4; k++)
        if (k != 2)
            ck_assert_msg(at(out[k], 0) == 0.1 && at(out[k], 1) == -2.7, "output %zu rounded", k);
    ck_assert_int_eq(ph_tensor_dtype(out[2]), PH_DT_INT64);
    ck_assert(((const int64_t *)ph_tensor_data(out[2]))[1] == -2);
    for (size_t k = 0; k < 4; k++)
        ph_tensor_free(out[k]);
    /* the normal mode rounds as the model says */
    ck_assert_msg(run(m, 0, (const ph_tensor *const *)in, 2, out, 4, &err) == 0, "%s", err.message);
    ck_assert_int_eq(ph_tensor_dtype(out[0]), PH_DT_FLOAT);
    ck_assert_int_eq(ph_tensor_dtype(out[1]), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_tensor_dtype(out[3]), PH_DT_FLOAT);
    for (size_t k = 0; k < 4; k++)
        ph_tensor_free(out[k]);
    ph_tensor_free(in[0]);
    ph_tensor_free(in[1]);
    ph_model_free(m);
}
END_TEST

/* float16 inputs and an initializer default of a graph input (as models of
 * ir_version < 4 list them) are promoted too; Celu, float32 only in the
 * spec, computes in double in the reference mode and refuses double in the
 * normal mode. */
START_TEST(halves_defaults_and_float_only_ops)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *h = ph_graph_add_input(g, "h", PH_DT_FLOAT16, 1, TK_I64(2));
    ph_value *d = tk_input(g, "d", 1, TK_I64(2));
    const float dv[2] = {0.25f, 1e-3f};
    ck_assert_int_eq(ph_graph_input_to_initializer(d, floats(2, dv)), 0);
    ph_node *cast = tk_node(g, "Cast", 1, &h);
    ck_assert_int_eq(ph_node_set_attr_int(cast, "to", PH_DT_FLOAT), 0);
    ph_value *sum = tk_op2(g, "Add", ph_node_output(cast, 0), d);
    tk_output(g, tk_op1(g, "Celu", sum));
    tk_output(g, tk_op1(g, "Neg", h));
    tk_infer(m);
    const uint16_t hv[2] = {ph_f64_to_f16_bits(0.333), ph_f64_to_f16_bits(-1.5)};
    ph_tensor *in = ph_tensor_new(PH_DT_FLOAT16, 1, TK_I64(2), hv), *out[2] = {0};
    ph_error err = {0};
    ck_assert_msg(run(m, 1, (const ph_tensor *const *)&in, 1, out, 2, &err) == 0, "%s", err.message);
    double s0 = ph_f16_bits_to_f64(hv[0]) + 0.25, s1 = ph_f16_bits_to_f64(hv[1]) + (double)1e-3f;
    ck_assert(at(out[0], 0) == s0);
    ck_assert(fabs(at(out[0], 1) - expm1(s1)) < 1e-15);
    ck_assert(at(out[1], 0) == -ph_f16_bits_to_f64(hv[0]));
    for (size_t k = 0; k < 2; k++)
        ph_tensor_free(out[k]);
    ck_assert_msg(run(m, 0, (const ph_tensor *const *)&in, 1, out, 2, &err) == 0, "%s", err.message);
    ck_assert_int_eq(ph_tensor_dtype(out[1]), PH_DT_FLOAT16);
    for (size_t k = 0; k < 2; k++)
        ph_tensor_free(out[k]);
    ph_tensor_free(in);
    /* Celu on double in the normal mode: refused, as the spec says */
    ph_model *m2 = tk_model();
    ph_graph *g2 = ph_model_graph(m2);
    tk_output(g2, tk_op1(g2, "Celu", ph_graph_add_input(g2, "x", PH_DT_DOUBLE, 1, TK_I64(1))));
    const double one = 1;
    ph_tensor *x = ph_tensor_new(PH_DT_DOUBLE, 1, TK_I64(1), &one), *y = NULL;
    ck_assert_int_eq(run(m2, 0, (const ph_tensor *const *)&x, 1, &y, 1, &err), PH_EUNSUPPORTED);
    ck_assert_msg(strstr(err.message, "Celu") && strstr(err.message, "double"), "%s", err.message);
    ck_assert_msg(run(m2, 1, (const ph_tensor *const *)&x, 1, &y, 1, &err) == 0, "%s", err.message);
    ph_tensor_free(y);
    ph_tensor_free(x);
    ph_model_free(m2);
    ph_model_free(m);
}
END_TEST

START_TEST(options_are_checked)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_output(g, tk_op1(g, "Neg", tk_input(g, "x", 1, TK_I64(1))));
    ph_eval *e = (ph_eval *)1;
    ph_error err = {0};
    ph_eval_options small = {.size = 1, .float64 = 1};
    ck_assert_int_eq(ph_eval_new_with(g, &small, &e, &err), PH_EINVAL);
    ck_assert_ptr_null(e);
    ck_assert_msg(strstr(err.message, "size"), "%s", err.message);
    ck_assert_int_eq(ph_eval_new_with(g, NULL, &e, &err), 0); /* NULL: the defaults */
    ph_eval_free(e);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("eval_float64");
    TCase *tc = tcase_create("reference mode");
    tcase_add_test(tc, float_ops_compute_in_double);
    tcase_add_test(tc, casts_to_float_types_stay_double);
    tcase_add_test(tc, halves_defaults_and_float_only_ops);
    tcase_add_test(tc, options_are_checked);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_set_fork_status(sr, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
