/* tests/test_eval_ops.c - the evaluator's light kernels against hand-computed
 * values and the examples of the ONNX operator documentation: broadcasting,
 * negative axes, empty tensors, every supported dtype, and PH_EUNSUPPORTED
 * for what is not supported.  Also the core: graph runs, initializer
 * defaults, input checks and the float16/bfloat16 wrapper. */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evalcase.h"
#include "passhost/host.h"
#include "passhost/passhost.h"

/* op(x) for a 1-D float input: check against expected values. */
static void unary_f(const char *op, size_t n, const double *x, const double *want, double tol)
{
    tc *c = mk(17, op, 1, 1, T(PH_DT_FLOAT, 1, D((int64_t)n), x));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D((int64_t)n), want, tol);
    done(c);
}

static const int all_dtypes[] = {PH_DT_FLOAT, PH_DT_DOUBLE, PH_DT_FLOAT16, PH_DT_BFLOAT16, PH_DT_INT8,
                                 PH_DT_INT16, PH_DT_INT32, PH_DT_INT64, PH_DT_UINT8};
#define N_ALL (sizeof all_dtypes / sizeof all_dtypes[0])

/* ------------------------------------------------------------ unary */

START_TEST(test_unary_math)
{
    unary_f("Neg", 3, V(-4, 0, 2), V(4, 0, -2), 0);
    unary_f("Abs", 3, V(-4, 0, 2), V(4, 0, 2), 0);
    unary_f("Sqrt", 2, V(1, 4), V(1, 2), 0);
    unary_f("Exp", 3, V(-1, 0, 1), V(0.36787944, 1, 2.71828183), 1e-6);
    unary_f("Log", 2, V(1, 10), V(0, 2.30258509), 1e-6);
    unary_f("Erf", 3, V(-1, 0, 0.5), V(-0.84270079, 0, 0.52049988), 1e-6);
    unary_f("Reciprocal", 2, V(-4, 2), V(-0.25, 0.5), 0);
    unary_f("Floor", 3, V(-1.5, 1.2, 2), V(-2, 1, 2), 0);
    unary_f("Ceil", 3, V(-1.5, 1.2, 2), V(-1, 2, 2), 0);
    /* Round: half to even (spec example) */
    unary_f("Round", 8, V(0.1, 0.5, 0.9, 1.2, 1.5, 2.5, -1.5, -2.5), V(0, 0, 1, 1, 2, 2, -2, -2), 0);
    unary_f("Sin", 2, V(0, 1), V(0, 0.84147098), 1e-6);
    unary_f("Cos", 2, V(0, 1), V(1, 0.54030231), 1e-6);
    unary_f("Sign", 3, V(-3, 0, 7), V(-1, 0, 1), 0);
    unary_f("Softsign", 3, V(-1, 0, 1), V(-0.5, 0, 0.5), 1e-7);
    unary_f("Softplus", 3, V(-1, 0, 1), V(0.31326166, 0.69314718, 1.31326163), 1e-6);
    unary_f("Tanh", 3, V(-1, 0, 1), V(-0.76159416, 0, 0.76159416), 1e-6);
}
END_TEST

START_TEST(test_activations)
{
    unary_f("Relu", 3, V(-1, 0, 2), V(0, 0, 2), 0);
    unary_f("Sigmoid", 3, V(-1, 0, 1), V(0.26894142, 0.5, 0.73105858), 1e-6);
    unary_f("HardSwish", 3, V(-4, 1, 4), V(0, 0.6666667, 4), 1e-6);
    unary_f("LeakyRelu", 2, V(-1, 1), V(-0.01, 1), 1e-7);
    tc *c = mk(17, "LeakyRelu", 1, 1, TF(1, D(3), -1, 0, 1));
    ph_node_set_attr_float(c->n, "alpha", 0.1f);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(3), V(-0.1, 0, 1), 1e-7);
    done(c);
    c = mk(17, "HardSigmoid", 1, 1, TF(1, D(3), -1, 0, 1));
    ph_node_set_attr_float(c->n, "alpha", 0.5f);
    ph_node_set_attr_float(c->n, "beta", 0.6f);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(3), V(0.1, 0.6, 1), 1e-6);
    done(c);
    c = mk(17, "Selu", 1, 1, TF(1, D(3), -1, 0, 1));
    ph_node_set_attr_float(c->n, "alpha", 2);
    ph_node_set_attr_float(c->n, "gamma", 3);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(3), V(-3.79272318, 0, 3), 1e-6);
    done(c);
    c = mk(17, "Elu", 1, 1, TF(1, D(3), -1, 0, 1));
    ph_node_set_attr_float(c->n, "alpha", 2);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(3), V(-1.26424112, 0, 1), 1e-6);
    done(c);
    /* Gelu (opset 20, accepted): exact and tanh forms */
    unary_f("Gelu", 3, V(-1, 0, 1), V(-0.15865526, 0, 0.84134474), 1e-6);
    c = mk(17, "Gelu", 1, 1, TF(1, D(3), -1, 0, 1));
    ph_node_set_attr_string(c->n, "approximate", "tanh");
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(3), V(-0.15880801, 0, 0.84119199), 1e-6);
    done(c);
}
END_TEST

START_TEST(test_clip)
{
    /* opset 13: min/max as inputs, either omitted */
    tc *c = mk(13, "Clip", 1, 3, TF(1, D(3), -2, 0, 2), T(PH_DT_FLOAT, 0, NULL, V(-1)), T(PH_DT_FLOAT, 0, NULL, V(1)));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(3), V(-1, 0, 1), 0);
    done(c);
    c = mk(13, "Clip", 1, 3, TF(1, D(3), -2, 0, 2), NULL, T(PH_DT_FLOAT, 0, NULL, V(1)));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(3), V(-2, 0, 1), 0);
    done(c);
    /* opset 6 attributes */
    c = mk(6, "Clip", 1, 1, TF(1, D(3), -2, 0, 2));
    ph_node_set_attr_float(c->n, "min", -1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(3), V(-1, 0, 2), 0);
    done(c);
    /* integers */
    c = mk(13, "Clip", 1, 3, T(PH_DT_INT32, 1, D(4), V(-7, -1, 3, 9)), T(PH_DT_INT32, 0, NULL, V(-2)),
           T(PH_DT_INT32, 0, NULL, V(5)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 1, D(4), V(-2, -1, 3, 5), 0);
    done(c);
}
END_TEST

START_TEST(test_unary_ints)
{
    int32_t mn = INT32_MIN;
    ph_tensor *x = ph_tensor_new(PH_DT_INT32, 1, D(3), (int32_t[]){mn, -5, 6});
    tc *c = mk(17, "Neg", 1, 1, x);
    run_ok(c);
    const int32_t *o = ph_tensor_data(c->out[0]);
    ck_assert_int_eq(o[0], INT32_MIN); /* wraps, no overflow */
    ck_assert_int_eq(o[1], 5);
    ck_assert_int_eq(o[2], -6);
    done(c);
    c = mk(17, "Abs", 1, 1, T(PH_DT_INT8, 1, D(3), V(-5, 0, 7)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT8, 1, D(3), V(5, 0, 7), 0);
    done(c);
    c = mk(17, "Relu", 1, 1, T(PH_DT_INT64, 1, D(3), V(-5, 0, 7)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(3), V(0, 0, 7), 0);
    done(c);
    c = mk(17, "Sign", 1, 1, T(PH_DT_INT16, 1, D(3), V(-5, 0, 7)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT16, 1, D(3), V(-1, 0, 1), 0);
    done(c);
}
END_TEST

START_TEST(test_unary_halves_and_double)
{
    static const int dts[] = {PH_DT_DOUBLE, PH_DT_FLOAT16, PH_DT_BFLOAT16};
    for (size_t k = 0; k < 3; k++) {
        tc *c = mk(17, "Relu", 1, 1, T(dts[k], 2, D(2, 2), V(-1, 2, -3, 0.5)));
        run_ok(c);
        expect(c->out[0], dts[k], 2, D(2, 2), V(0, 2, 0, 0.5), 0);
        done(c);
        c = mk(17, "Sqrt", 1, 1, T(dts[k], 1, D(2), V(4, 0.25)));
        run_ok(c);
        expect(c->out[0], dts[k], 1, D(2), V(2, 0.5), 0);
        done(c);
    }
}
END_TEST

START_TEST(test_unary_unsupported_dtype)
{
    tc *c = mk(17, "Sqrt", 1, 1, T(PH_DT_INT32, 1, D(2), V(4, 9)));
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(c->err.message, "Sqrt"));
    ck_assert_ptr_nonnull(strstr(c->err.message, "int32"));
    ck_assert_ptr_null(c->out[0]);
    done(c);
    c = mk(17, "Not", 1, 1, TF(1, D(1), 1));
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    done(c);
}
END_TEST

START_TEST(test_predicates)
{
    tc *c = mk(17, "Not", 1, 1, T(PH_DT_BOOL, 1, D(3), V(1, 0, 1)));
    run_ok(c);
    expect(c->out[0], PH_DT_BOOL, 1, D(3), V(0, 1, 0), 0);
    done(c);
    c = mk(17, "IsNaN", 1, 1, TF(1, D(3), 1, NAN, INFINITY));
    run_ok(c);
    expect(c->out[0], PH_DT_BOOL, 1, D(3), V(0, 1, 0), 0);
    done(c);
    c = mk(17, "IsInf", 1, 1, TF(1, D(4), 1, NAN, INFINITY, -INFINITY));
    ph_node_set_attr_int(c->n, "detect_negative", 0);
    run_ok(c);
    expect(c->out[0], PH_DT_BOOL, 1, D(4), V(0, 0, 1, 0), 0);
    done(c);
}
END_TEST

/* ------------------------------------------------------------ binary */

START_TEST(test_add_every_dtype_broadcast)
{
    for (size_t k = 0; k < N_ALL; k++) {
        int dt = all_dtypes[k];
        tc *c = mk(14, "Add", 1, 2, T(dt, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)), T(dt, 1, D(3), V(10, 20, 30)));
        run_ok(c);
        expect(c->out[0], dt, 2, D(2, 3), V(11, 22, 33, 14, 25, 36), 0);
        done(c);
    }
}
END_TEST

START_TEST(test_arith)
{
    /* [2,1] - [1,3] -> [2,3] */
    tc *c = mk(14, "Sub", 1, 2, TF(2, D(2, 1), 10, 20), TF(2, D(1, 3), 1, 2, 3));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 3), V(9, 8, 7, 19, 18, 17), 0);
    done(c);
    c = mk(14, "Mul", 1, 2, T(PH_DT_FLOAT, 0, NULL, V(2)), TF(2, D(1, 2), 3, 4));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(1, 2), V(6, 8), 0);
    done(c);
    c = mk(14, "Div", 1, 2, TF(1, D(2), 3, 4), TF(1, D(2), 2, 8));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(2), V(1.5, 0.5), 0);
    done(c);
    /* integer division truncates; wraps on overflow */
    c = mk(14, "Div", 1, 2, T(PH_DT_INT32, 1, D(3), V(-7, 7, -2147483648.0)), T(PH_DT_INT32, 1, D(3), V(2, -2, -1)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 1, D(3), V(-3, -3, -2147483648.0), 0);
    done(c);
    c = mk(14, "Div", 1, 2, T(PH_DT_INT64, 1, D(2), V(1, 2)), T(PH_DT_INT64, 1, D(2), V(1, 0)));
    ck_assert_int_eq(run(c), PH_EINVAL);
    ck_assert_ptr_nonnull(strstr(c->err.message, "division by zero"));
    done(c);
    c = mk(14, "Add", 1, 2, T(PH_DT_INT8, 1, D(1), V(127)), T(PH_DT_INT8, 1, D(1), V(1)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT8, 1, D(1), V(-128), 0);
    done(c);
    /* shapes that do not broadcast */
    c = mk(14, "Add", 1, 2, TF(1, D(2), 1, 2), TF(1, D(3), 1, 2, 3));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
    /* mixed dtypes */
    c = mk(14, "Add", 1, 2, TF(1, D(1), 1), T(PH_DT_DOUBLE, 1, D(1), V(1)));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
}
END_TEST

START_TEST(test_empty_broadcast)
{
    tc *c = mk(14, "Add", 1, 2, T(PH_DT_FLOAT, 2, D(0, 3), NULL), TF(1, D(3), 1, 2, 3));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(0, 3), NULL, 0);
    done(c);
    c = mk(14, "Mul", 1, 2, T(PH_DT_FLOAT, 2, D(2, 0), NULL), T(PH_DT_FLOAT, 2, D(1, 1), V(3)));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 0), NULL, 0);
    done(c);
}
END_TEST

START_TEST(test_mod_pow)
{
    /* spec: mod_mixed_sign_int32 and mod_mixed_sign_float32 (fmod=1) */
    tc *c = mk(13, "Mod", 1, 2, T(PH_DT_INT32, 1, D(6), V(-4, 7, 5, 4, -7, 8)),
               T(PH_DT_INT32, 1, D(6), V(2, -3, 8, -2, 3, 5)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 1, D(6), V(0, -2, 5, 0, 2, 3), 0);
    done(c);
    c = mk(13, "Mod", 1, 2, T(PH_DT_INT32, 1, D(6), V(-4, 7, 5, 4, -7, 8)),
           T(PH_DT_INT32, 1, D(6), V(2, -3, 8, -2, 3, 5)));
    ph_node_set_attr_int(c->n, "fmod", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 1, D(6), V(0, 1, 5, 0, -1, 3), 0);
    done(c);
    c = mk(13, "Mod", 1, 2, TF(1, D(6), -4.3, 7.2, 5.0, 4.3, -7.2, 8.0), TF(1, D(6), 2.1, -3.4, 8.0, -2.1, 3.4, 5.0));
    ph_node_set_attr_int(c->n, "fmod", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(6), V(-0.1, 0.4, 5, 0.1, -0.4, 3), 1e-5);
    done(c);
    /* spec: pow_bcast_array; pow with an int64 exponent; integer base */
    c = mk(15, "Pow", 1, 2, TF(2, D(2, 3), 1, 2, 3, 4, 5, 6), TF(1, D(3), 1, 2, 3));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 3), V(1, 4, 27, 4, 25, 216), 1e-6);
    done(c);
    c = mk(15, "Pow", 1, 2, TF(1, D(3), 1, 2, 3), TL(1, D(3), 4, 5, 6));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(3), V(1, 32, 729), 0);
    done(c);
    c = mk(15, "Pow", 1, 2, T(PH_DT_INT32, 1, D(3), V(1, 2, 3)), T(PH_DT_INT32, 1, D(3), V(4, 5, 6)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 1, D(3), V(1, 32, 729), 0);
    done(c);
}
END_TEST

START_TEST(test_compare_logic)
{
    static const char *ops[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
    static const double want[5][6] = {{0, 1, 0, 0, 0, 1}, {1, 0, 0, 1, 1, 0}, {0, 0, 1, 0, 0, 0},
                                      {1, 1, 0, 1, 1, 1}, {0, 1, 1, 0, 0, 1}};
    static const int dts[] = {PH_DT_FLOAT, PH_DT_INT64, PH_DT_INT32, PH_DT_UINT8, PH_DT_DOUBLE};
    for (size_t d = 0; d < 5; d++)
        for (size_t k = 0; k < 5; k++) {
            tc *c = mk(16, ops[k], 1, 2, T(dts[d], 2, D(2, 3), V(1, 2, 3, 1, 5, 6)), T(dts[d], 2, D(2, 1), V(2, 6)));
            run_ok(c);
            expect(c->out[0], PH_DT_BOOL, 2, D(2, 3), want[k], 0);
            done(c);
        }
    tc *c = mk(16, "Equal", 1, 2, T(PH_DT_BOOL, 1, D(2), V(1, 0)), T(PH_DT_BOOL, 1, D(2), V(1, 1)));
    run_ok(c);
    expect(c->out[0], PH_DT_BOOL, 1, D(2), V(1, 0), 0);
    done(c);
    static const char *lops[] = {"And", "Or", "Xor"};
    static const double lw[3][4] = {{0, 0, 0, 1}, {0, 1, 1, 1}, {0, 1, 1, 0}};
    for (size_t k = 0; k < 3; k++) {
        c = mk(7, lops[k], 1, 2, T(PH_DT_BOOL, 2, D(2, 2), V(0, 0, 1, 1)), T(PH_DT_BOOL, 2, D(2, 2), V(0, 1, 0, 1)));
        run_ok(c);
        expect(c->out[0], PH_DT_BOOL, 2, D(2, 2), lw[k], 0);
        done(c);
    }
    c = mk(7, "And", 1, 2, TF(1, D(1), 1), TF(1, D(1), 1));
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    done(c);
}
END_TEST

START_TEST(test_variadic)
{
    /* spec examples of Max, Min, Sum, Mean with three inputs */
    static const char *ops[] = {"Max", "Min", "Sum", "Mean"};
    static const double want[4][3] = {{3, 5, 4}, {1, 2, 1}, {6, 11, 8}, {2, 11.0 / 3, 8.0 / 3}};
    for (size_t k = 0; k < 4; k++) {
        tc *c = mk(13, ops[k], 1, 3, TF(1, D(3), 3, 2, 1), TF(1, D(3), 1, 4, 4), TF(1, D(3), 2, 5, 3));
        run_ok(c);
        expect(c->out[0], PH_DT_FLOAT, 1, D(3), want[k], 1e-6);
        done(c);
        c = mk(13, ops[k], 1, 1, TF(1, D(3), 3, 2, 1));
        run_ok(c);
        expect(c->out[0], PH_DT_FLOAT, 1, D(3), V(3, 2, 1), 0);
        done(c);
    }
    /* broadcasting across inputs, integers */
    tc *c = mk(13, "Max", 1, 2, T(PH_DT_INT64, 2, D(2, 1), V(1, 5)), T(PH_DT_INT64, 1, D(3), V(0, 3, 6)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 2, D(2, 3), V(1, 3, 6, 5, 5, 6), 0);
    done(c);
    c = mk(13, "Sum", 1, 3, TF(1, D(1), 1), TF(1, D(2), 1, 2), TF(2, D(2, 1), 10, 20));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 2), V(12, 13, 22, 23), 0);
    done(c);
    /* Sum and Mean are float-only in the schema */
    c = mk(13, "Sum", 1, 2, T(PH_DT_INT32, 1, D(1), V(1)), T(PH_DT_INT32, 1, D(2), V(1, 2)));
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(c->err.message, "int32"));
    done(c);
}
END_TEST

START_TEST(test_prelu_where)
{
    tc *c = mk(16, "PRelu", 1, 2, TF(2, D(2, 3), -1, 2, -3, 4, -5, 6), TF(1, D(3), 0.1, 0.2, 0.3));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 3), V(-0.1, 2, -0.9, 4, -1, 6), 1e-6);
    done(c);
    /* opset 6: a 1-D slope of the channel count is per channel (dim 1), not
       numpy-broadcast along the last dim; shape inference agrees */
    c = mk(6, "PRelu", 1, 2, TF(3, D(1, 3, 2), -1, -2, -3, 4, -5, -6), TF(1, D(3), 0.1, 0.2, 0.3));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 3, D(1, 3, 2), V(-0.1, -0.2, -0.6, 4, -1.5, -1.8), 1e-6);
    ph_graph_add_output(ph_model_graph(c->m), ph_node_output(c->n, 0));
    ck_assert_msg(ph_graph_infer_shapes(ph_model_graph(c->m), &c->err) == 0, "%s", c->err.message);
    ck_assert_int_eq(ph_value_rank(ph_node_output(c->n, 0)), 3);
    ck_assert_int_eq(ph_value_dim(ph_node_output(c->n, 0), 2), 2);
    done(c);
    /* opset 7: the same shapes do not broadcast */
    c = mk(7, "PRelu", 1, 2, TF(3, D(1, 3, 2), -1, -2, -3, 4, -5, -6), TF(1, D(3), 0.1, 0.2, 0.3));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
    /* spec where_example and a broadcast one; float16 goes through untouched */
    c = mk(16, "Where", 1, 3, T(PH_DT_BOOL, 2, D(2, 2), V(1, 0, 1, 1)), TF(2, D(2, 2), 1, 2, 3, 4),
           TF(2, D(2, 2), 9, 8, 7, 6));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 2), V(1, 8, 3, 4), 0);
    done(c);
    c = mk(16, "Where", 1, 3, T(PH_DT_BOOL, 2, D(2, 1), V(1, 0)), T(PH_DT_FLOAT16, 1, D(3), V(1, 2, 3)),
           T(PH_DT_FLOAT16, 0, NULL, V(-1)));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT16, 2, D(2, 3), V(1, 2, 3, -1, -1, -1), 0);
    done(c);
    c = mk(16, "Where", 1, 3, T(PH_DT_BOOL, 1, D(2), V(1, 0)), T(PH_DT_INT64, 1, D(2), V(1, 2)),
           T(PH_DT_INT64, 1, D(2), V(3, 4)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(2), V(1, 4), 0);
    done(c);
}
END_TEST

/* ------------------------------------------------------------ softmax family */

START_TEST(test_softmax)
{
    tc *c = mk(13, "Softmax", 1, 1, TF(2, D(1, 3), -1, 0, 1));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(1, 3), V(0.09003057, 0.24472847, 0.66524096), 1e-6);
    done(c);
    c = mk(13, "LogSoftmax", 1, 1, TF(2, D(1, 3), -1, 0, 1));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(1, 3), V(-2.40760596, -1.40760596, -0.40760596), 1e-6);
    done(c);
    /* opset 13, axis 1 of [1,2,2]: along one axis */
    c = mk(13, "Softmax", 1, 1, TF(3, D(1, 2, 2), 0, 0, 1, 0));
    ph_node_set_attr_int(c->n, "axis", 1);
    run_ok(c);
    double e = exp(1.0);
    expect(c->out[0], PH_DT_FLOAT, 3, D(1, 2, 2), V(1 / (1 + e), 0.5, e / (1 + e), 0.5), 1e-6);
    done(c);
    /* opset 11, axis 1 of [1,2,2]: the 2-D coercion, one row of 4 */
    c = mk(11, "Softmax", 1, 1, TF(3, D(1, 2, 2), 0, 0, 1, 0));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 3, D(1, 2, 2), V(1 / (3 + e), 1 / (3 + e), e / (3 + e), 1 / (3 + e)), 1e-6);
    done(c);
    /* large values stay finite; double and float16 */
    c = mk(13, "Softmax", 1, 1, T(PH_DT_DOUBLE, 1, D(2), V(1000, 1000)));
    run_ok(c);
    expect(c->out[0], PH_DT_DOUBLE, 1, D(2), V(0.5, 0.5), 1e-12);
    done(c);
    c = mk(13, "Softmax", 1, 1, T(PH_DT_FLOAT16, 1, D(2), V(1, 1)));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT16, 1, D(2), V(0.5, 0.5), 0);
    done(c);
    c = mk(13, "Softmax", 1, 1, T(PH_DT_INT32, 1, D(2), V(1, 1)));
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    done(c);
}
END_TEST

/* ------------------------------------------------------------ cast, identity, shapes */

START_TEST(test_cast)
{
    tc *c = mk(13, "Cast", 1, 1, TF(1, D(4), 1.7, -1.7, 0, 300));
    ph_node_set_attr_int(c->n, "to", PH_DT_INT32);
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 1, D(4), V(1, -1, 0, 300), 0);
    done(c);
    c = mk(13, "Cast", 1, 1, TF(1, D(3), 0.5, 0, -2));
    ph_node_set_attr_int(c->n, "to", PH_DT_BOOL);
    run_ok(c);
    expect(c->out[0], PH_DT_BOOL, 1, D(3), V(1, 0, 1), 0);
    done(c);
    c = mk(13, "Cast", 1, 1, TL(1, D(2), 123456789, -5));
    ph_node_set_attr_int(c->n, "to", PH_DT_DOUBLE);
    run_ok(c);
    expect(c->out[0], PH_DT_DOUBLE, 1, D(2), V(123456789, -5), 0);
    done(c);
    c = mk(13, "Cast", 1, 1, TF(1, D(3), 0.5, -2, 65504));
    ph_node_set_attr_int(c->n, "to", PH_DT_FLOAT16);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT16, 1, D(3), V(0.5, -2, 65504), 0);
    done(c);
    c = mk(13, "Cast", 1, 1, T(PH_DT_BFLOAT16, 1, D(2), V(1.5, -3)));
    ph_node_set_attr_int(c->n, "to", PH_DT_FLOAT);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(2), V(1.5, -3), 0);
    done(c);
    c = mk(13, "Cast", 1, 1, T(PH_DT_BOOL, 1, D(2), V(1, 0)));
    ph_node_set_attr_int(c->n, "to", PH_DT_INT64);
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(2), V(1, 0), 0);
    done(c);
    c = mk(13, "Cast", 1, 1, TF(1, D(1), 1));
    ph_node_set_attr_int(c->n, "to", PH_DT_STRING);
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(c->err.message, "string"));
    done(c);
    c = mk(15, "CastLike", 1, 2, TF(1, D(2), 2.5, -1), T(PH_DT_INT8, 0, NULL, V(0)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT8, 1, D(2), V(2, -1), 0);
    done(c);
}
END_TEST

START_TEST(test_identity_dropout_shape_size)
{
    tc *c = mk(13, "Identity", 1, 1, T(PH_DT_UINT8, 2, D(1, 2), V(7, 9)));
    run_ok(c);
    expect(c->out[0], PH_DT_UINT8, 2, D(1, 2), V(7, 9), 0);
    done(c);
    c = mk(13, "Dropout", 2, 1, TF(1, D(3), 1, 2, 3));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(3), V(1, 2, 3), 0);
    expect(c->out[1], PH_DT_BOOL, 1, D(3), V(1, 1, 1), 0);
    done(c);
    /* training mode: random (eval_ops_random.c); each element kept and
       scaled by 1 / (1 - ratio), or zero, as the mask says */
    c = mk(13, "Dropout", 2, 3, TF(1, D(8), 1, 1, 1, 1, 1, 1, 1, 1), TF(0, NULL, 0.5), T(PH_DT_BOOL, 0, NULL, V(1)));
    run_ok(c);
    for (size_t i = 0; i < 8; i++) {
        float y = ((const float *)ph_tensor_data(c->out[0]))[i];
        uint8_t k = ((const uint8_t *)ph_tensor_data(c->out[1]))[i];
        ck_assert_msg(y == (k ? 2.0f : 0.0f), "element %zu: %g with mask %d", i, y, k);
    }
    done(c);
    c = mk(13, "Shape", 1, 1, T(PH_DT_FLOAT, 3, D(2, 3, 4), NULL));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(3), V(2, 3, 4), 0);
    done(c);
    /* opset 15 start/end, negative and clamped (spec shape_start_negative etc.) */
    c = mk(15, "Shape", 1, 1, T(PH_DT_FLOAT, 3, D(2, 3, 4), NULL));
    ph_node_set_attr_int(c->n, "start", -1);
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(1), V(4), 0);
    done(c);
    c = mk(15, "Shape", 1, 1, T(PH_DT_FLOAT, 3, D(2, 3, 4), NULL));
    ph_node_set_attr_int(c->n, "start", 1);
    ph_node_set_attr_int(c->n, "end", 10);
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(2), V(3, 4), 0);
    done(c);
    c = mk(13, "Size", 1, 1, T(PH_DT_FLOAT, 2, D(0, 3), NULL));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 0, NULL, V(0), 0);
    done(c);
}
END_TEST

START_TEST(test_reshape_flatten)
{
    tc *c = mk(14, "Reshape", 1, 2, TF(3, D(2, 3, 1), 1, 2, 3, 4, 5, 6), TL(1, D(2), 0, -1));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 3), V(1, 2, 3, 4, 5, 6), 0);
    done(c);
    c = mk(14, "Reshape", 1, 2, T(PH_DT_FLOAT, 2, D(0, 3), NULL), TL(1, D(2), 3, 0));
    ph_node_set_attr_int(c->n, "allowzero", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(3, 0), NULL, 0);
    done(c);
    c = mk(14, "Reshape", 1, 2, TF(1, D(4), 1, 2, 3, 4), TL(1, D(2), 3, -1));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
    /* spec flatten: [2,3,4,5] at each axis; here axis 0, 2 and -1 */
    static const struct { int64_t axis, a, b; } fl[] = {{0, 1, 120}, {2, 6, 20}, {-1, 24, 5}};
    for (size_t k = 0; k < 3; k++) {
        c = mk(13, "Flatten", 1, 1, T(PH_DT_INT16, 4, D(2, 3, 4, 5), NULL));
        ph_node_set_attr_int(c->n, "axis", fl[k].axis);
        run_ok(c);
        ck_assert_int_eq(ph_tensor_dim(c->out[0], 0), fl[k].a);
        ck_assert_int_eq(ph_tensor_dim(c->out[0], 1), fl[k].b);
        done(c);
    }
}
END_TEST

START_TEST(test_squeeze_unsqueeze)
{
    tc *c = mk(13, "Squeeze", 1, 2, TF(3, D(1, 2, 1), 1, 2), TL(1, D(1), -1));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(1, 2), V(1, 2), 0);
    done(c);
    c = mk(13, "Squeeze", 1, 1, TF(3, D(1, 2, 1), 1, 2));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(2), V(1, 2), 0);
    done(c);
    c = mk(11, "Squeeze", 1, 1, TF(3, D(1, 2, 1), 1, 2));
    ph_node_set_attr_ints(c->n, "axes", 1, D(0));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 1), V(1, 2), 0);
    done(c);
    c = mk(13, "Squeeze", 1, 2, TF(2, D(1, 2), 1, 2), TL(1, D(1), 1));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
    /* spec unsqueeze_negative_axes: [1,3,1,5] with axes [-2] -> [1,3,1,1,5] */
    c = mk(13, "Unsqueeze", 1, 2, T(PH_DT_FLOAT, 4, D(1, 3, 1, 5), NULL), TL(1, D(1), -2));
    run_ok(c);
    ck_assert_uint_eq(ph_tensor_rank(c->out[0]), 5);
    ck_assert_int_eq(ph_tensor_dim(c->out[0], 3), 1);
    ck_assert_int_eq(ph_tensor_dim(c->out[0], 4), 5);
    done(c);
    /* spec unsqueeze_unsorted_axes: [3,4,5] axes [5,4,2] -> [3,4,1,5,1,1] */
    c = mk(13, "Unsqueeze", 1, 2, T(PH_DT_FLOAT, 3, D(3, 4, 5), NULL), TL(1, D(3), 5, 4, 2));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 6, D(3, 4, 1, 5, 1, 1), (double[60]){0}, 0);
    done(c);
    c = mk(11, "Unsqueeze", 1, 1, T(PH_DT_INT64, 0, NULL, V(7)));
    ph_node_set_attr_ints(c->n, "axes", 1, D(0));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(1), V(7), 0);
    done(c);
}
END_TEST

START_TEST(test_constants_range)
{
    tc *c = mk(13, "Constant", 1, 0);
    ph_node_set_attr_tensor(c->n, "value", T(PH_DT_INT32, 1, D(2), V(4, 5)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 1, D(2), V(4, 5), 0);
    done(c);
    c = mk(13, "Constant", 1, 0);
    ph_node_set_attr_float(c->n, "value_float", 2.5f);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 0, NULL, V(2.5), 0);
    done(c);
    c = mk(13, "Constant", 1, 0);
    ph_node_set_attr_ints(c->n, "value_ints", 3, D(1, -2, 3));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(3), V(1, -2, 3), 0);
    done(c);
    c = mk(13, "Constant", 1, 0);
    ph_node_set_attr_string(c->n, "value_string", "x");
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    done(c);
    c = mk(13, "ConstantOfShape", 1, 1, TL(1, D(2), 2, 3));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 3), V(0, 0, 0, 0, 0, 0), 0);
    done(c);
    c = mk(13, "ConstantOfShape", 1, 1, TL(1, D(1), 3));
    ph_node_set_attr_tensor(c->n, "value", T(PH_DT_INT32, 1, D(1), V(-7)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 1, D(3), V(-7, -7, -7), 0);
    done(c);
    c = mk(13, "ConstantOfShape", 1, 1, T(PH_DT_INT64, 1, D(0), NULL));
    ph_node_set_attr_tensor(c->n, "value", T(PH_DT_FLOAT16, 1, D(1), V(1.5)));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT16, 0, NULL, V(1.5), 0);
    done(c);
    /* spec range_float_type_positive_delta and range_int32_type_negative_delta */
    c = mk(11, "Range", 1, 3, TF(0, NULL, 1), TF(0, NULL, 5), TF(0, NULL, 2));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(2), V(1, 3), 0);
    done(c);
    c = mk(11, "Range", 1, 3, T(PH_DT_INT32, 0, NULL, V(10)), T(PH_DT_INT32, 0, NULL, V(6)),
           T(PH_DT_INT32, 0, NULL, V(-3)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 1, D(2), V(10, 7), 0);
    done(c);
    c = mk(11, "Range", 1, 3, TL(0, NULL, 5), TL(0, NULL, 1), TL(0, NULL, 1));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(0), NULL, 0);
    done(c);
}
END_TEST

/* ------------------------------------------------------------ data movement */

START_TEST(test_transpose_expand_tile)
{
    tc *c = mk(13, "Transpose", 1, 1, TF(2, D(2, 3), 1, 2, 3, 4, 5, 6));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(3, 2), V(1, 4, 2, 5, 3, 6), 0);
    done(c);
    c = mk(13, "Transpose", 1, 1, T(PH_DT_INT64, 3, D(1, 2, 3), V(1, 2, 3, 4, 5, 6)));
    ph_node_set_attr_ints(c->n, "perm", 3, D(2, 0, 1));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 3, D(3, 1, 2), V(1, 4, 2, 5, 3, 6), 0);
    done(c);
    /* spec expand_dim_changed: [3,1] to [2,1,6] */
    c = mk(13, "Expand", 1, 2, TF(2, D(3, 1), 1, 2, 3), TL(1, D(3), 2, 1, 6));
    run_ok(c);
    double w[36];
    for (int i = 0; i < 36; i++)
        w[i] = 1 + (i / 6) % 3;
    expect(c->out[0], PH_DT_FLOAT, 3, D(2, 3, 6), w, 0);
    done(c);
    /* spec expand_dim_unchanged: [3,1] to [3,4] */
    c = mk(13, "Expand", 1, 2, T(PH_DT_FLOAT16, 2, D(3, 1), V(1, 2, 3)), TL(1, D(2), 3, 4));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT16, 2, D(3, 4), V(1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3), 0);
    done(c);
    c = mk(13, "Tile", 1, 2, TF(2, D(2, 2), 0, 1, 2, 3), TL(1, D(2), 2, 2));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(4, 4), V(0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3), 0);
    done(c);
    c = mk(13, "Tile", 1, 2, T(PH_DT_BOOL, 1, D(2), V(1, 0)), TL(1, D(1), 0));
    run_ok(c);
    expect(c->out[0], PH_DT_BOOL, 1, D(0), NULL, 0);
    done(c);
}
END_TEST

START_TEST(test_concat_split)
{
    tc *c = mk(13, "Concat", 1, 3, TF(2, D(2, 1), 1, 2), T(PH_DT_FLOAT, 2, D(2, 0), NULL), TF(2, D(2, 2), 3, 4, 5, 6));
    ph_node_set_attr_int(c->n, "axis", -1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 3), V(1, 3, 4, 2, 5, 6), 0);
    done(c);
    c = mk(13, "Concat", 1, 2, TL(1, D(2), 1, 2), TL(1, D(1), 3));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(3), V(1, 2, 3), 0);
    done(c);
    c = mk(13, "Concat", 1, 2, TF(2, D(1, 2), 1, 2), TF(2, D(1, 3), 1, 2, 3));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
    /* opset 13: split as input; spec split_variable_parts_1d */
    c = mk(13, "Split", 2, 2, TF(1, D(6), 1, 2, 3, 4, 5, 6), TL(1, D(2), 2, 4));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(2), V(1, 2), 0);
    expect(c->out[1], PH_DT_FLOAT, 1, D(4), V(3, 4, 5, 6), 0);
    done(c);
    /* opset 11: split attribute, axis -1 of [2,3] */
    c = mk(11, "Split", 2, 1, TF(2, D(2, 3), 1, 2, 3, 4, 5, 6));
    ph_node_set_attr_int(c->n, "axis", -1);
    ph_node_set_attr_ints(c->n, "split", 2, D(1, 2));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 1), V(1, 4), 0);
    expect(c->out[1], PH_DT_FLOAT, 2, D(2, 2), V(2, 3, 5, 6), 0);
    done(c);
    /* equal parts; num_outputs (opset 18) with a smaller last part */
    c = mk(13, "Split", 3, 1, T(PH_DT_INT32, 1, D(6), V(1, 2, 3, 4, 5, 6)));
    run_ok(c);
    expect(c->out[2], PH_DT_INT32, 1, D(2), V(5, 6), 0);
    done(c);
    c = mk(18, "Split", 4, 1, TF(1, D(7), 1, 2, 3, 4, 5, 6, 7));
    ph_node_set_attr_int(c->n, "num_outputs", 4);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(2), V(1, 2), 0);
    expect(c->out[3], PH_DT_FLOAT, 1, D(1), V(7), 0);
    done(c);
    c = mk(13, "Split", 2, 1, TF(1, D(3), 1, 2, 3));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
}
END_TEST

START_TEST(test_slice)
{
    /* spec slice: data [[1,2,3,4],[5,6,7,8]], starts [1,0] ends [2,3] steps [1,2] */
    tc *c = mk(13, "Slice", 1, 5, TF(2, D(2, 4), 1, 2, 3, 4, 5, 6, 7, 8), TL(1, D(2), 1, 0), TL(1, D(2), 2, 3),
               TL(1, D(2), 0, 1), TL(1, D(2), 1, 2));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(1, 2), V(5, 7), 0);
    done(c);
    /* ends past the dim and -1; axes omitted */
    c = mk(13, "Slice", 1, 3, TF(2, D(2, 4), 1, 2, 3, 4, 5, 6, 7, 8), TL(1, D(2), 0, 1), TL(1, D(2), -1, 1000));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(1, 3), V(2, 3, 4), 0);
    done(c);
    /* negative steps and axes, clamped start */
    c = mk(13, "Slice", 1, 5, T(PH_DT_INT32, 1, D(10), V(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)), TL(1, D(1), 100),
           TL(1, D(1), -1000), TL(1, D(1), -1), TL(1, D(1), -3));
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 1, D(4), V(9, 6, 3, 0), 0);
    done(c);
    /* INT64 max end, int32 index inputs; empty result */
    c = mk(13, "Slice", 1, 3, TF(1, D(3), 1, 2, 3), T(PH_DT_INT32, 1, D(1), V(1)), T(PH_DT_INT32, 1, D(1), V(2147483647)));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(2), V(2, 3), 0);
    done(c);
    c = mk(13, "Slice", 1, 3, TF(1, D(3), 1, 2, 3), TL(1, D(1), 2), TL(1, D(1), 1));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(0), NULL, 0);
    done(c);
    c = mk(13, "Slice", 1, 5, TF(1, D(3), 1, 2, 3), TL(1, D(1), 0), TL(1, D(1), 3), NULL, TL(1, D(1), 0));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
}
END_TEST

START_TEST(test_gather)
{
    /* spec gather_0 (smaller): data [3,2], indices [[0,1],[1,2]] */
    tc *c = mk(13, "Gather", 1, 2, TF(2, D(3, 2), 1, 1.2, 2.3, 3.4, 4.5, 5.7), TL(2, D(2, 2), 0, 1, 1, 2));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 3, D(2, 2, 2), V(1, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7), 1e-7);
    done(c);
    /* axis 1, negative index, int32 indices, scalar index */
    c = mk(13, "Gather", 1, 2, TF(2, D(2, 3), 1, 2, 3, 4, 5, 6), T(PH_DT_INT32, 1, D(2), V(-1, 0)));
    ph_node_set_attr_int(c->n, "axis", -1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 2), V(3, 1, 6, 4), 0);
    done(c);
    c = mk(13, "Gather", 1, 2, TL(1, D(3), 7, 8, 9), TL(0, NULL, 1));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 0, NULL, V(8), 0);
    done(c);
    c = mk(13, "Gather", 1, 2, TL(1, D(3), 7, 8, 9), TL(1, D(1), 3));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
    /* spec gather_elements_0 and _1 */
    c = mk(13, "GatherElements", 1, 2, TF(2, D(2, 2), 1, 2, 3, 4), TL(2, D(2, 2), 0, 0, 1, 0));
    ph_node_set_attr_int(c->n, "axis", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 2), V(1, 1, 4, 3), 0);
    done(c);
    c = mk(13, "GatherElements", 1, 2, TF(2, D(3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9), T(PH_DT_INT32, 2, D(2, 3), V(1, 2, 0, 2, 0, 0)));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 3), V(4, 8, 3, 7, 2, 3), 0);
    done(c);
    /* spec gather_elements_negative_indices */
    c = mk(13, "GatherElements", 1, 2, TF(2, D(3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9), TL(2, D(2, 3), -1, -2, 0, -2, 0, 0));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 3), V(7, 5, 3, 4, 2, 3), 0);
    done(c);
}
END_TEST

START_TEST(test_pad)
{
    /* spec pad examples (constant, reflect, edge) on [[1,1.2],[2.3,3.4],[4.5,5.7]] with pads [0,2,0,0] */
    static const char *modes[] = {"constant", "reflect", "edge"};
    static const double want[3][12] = {{0, 0, 1, 1.2, 0, 0, 2.3, 3.4, 0, 0, 4.5, 5.7},
                                       {1, 1.2, 1, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7, 4.5, 5.7},
                                       {1, 1, 1, 1.2, 2.3, 2.3, 2.3, 3.4, 4.5, 4.5, 4.5, 5.7}};
    for (size_t k = 0; k < 3; k++) {
        tc *c = mk(13, "Pad", 1, 2, TF(2, D(3, 2), 1, 1.2, 2.3, 3.4, 4.5, 5.7), TL(1, D(4), 0, 2, 0, 0));
        ph_node_set_attr_string(c->n, "mode", modes[k]);
        run_ok(c);
        expect(c->out[0], PH_DT_FLOAT, 2, D(3, 4), want[k], 1e-7);
        done(c);
    }
    /* constant value, negative pads (crop), int dtype */
    tc *c = mk(13, "Pad", 1, 3, T(PH_DT_INT32, 2, D(2, 2), V(1, 2, 3, 4)), TL(1, D(4), 1, -1, 0, 0),
               T(PH_DT_INT32, 0, NULL, V(9)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 2, D(3, 1), V(9, 2, 4), 0);
    done(c);
    /* opset 2 attributes */
    c = mk(2, "Pad", 1, 1, TF(1, D(2), 1, 2));
    ph_node_set_attr_ints(c->n, "pads", 2, D(1, 1));
    ph_node_set_attr_float(c->n, "value", -1);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 1, D(4), V(-1, 1, 2, -1), 0);
    done(c);
    c = mk(13, "Pad", 1, 2, TF(1, D(2), 1, 2), TL(1, D(2), 1, 1));
    ph_node_set_attr_string(c->n, "mode", "mirror");
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    done(c);
}
END_TEST

START_TEST(test_depth_space)
{
    double x[48], w_dcr[48], w_crd[48];
    for (int i = 0; i < 48; i++)
        x[i] = i;
    /* out[0, c, h*2+i, w*2+j] from in[0, (i*2+j)*2+c, h, w] (DCR) or in[0, c*4+i*2+j, h, w] (CRD) */
    for (int c = 0; c < 2; c++)
        for (int h = 0; h < 2; h++)
            for (int w = 0; w < 3; w++)
                for (int i = 0; i < 2; i++)
                    for (int j = 0; j < 2; j++) {
                        int o = c * 24 + (h * 2 + i) * 6 + w * 2 + j;
                        w_dcr[o] = ((i * 2 + j) * 2 + c) * 6 + h * 3 + w;
                        w_crd[o] = (c * 4 + i * 2 + j) * 6 + h * 3 + w;
                    }
    tc *c = mk(13, "DepthToSpace", 1, 1, T(PH_DT_FLOAT, 4, D(1, 8, 2, 3), x));
    ph_node_set_attr_int(c->n, "blocksize", 2);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 4, D(1, 2, 4, 6), w_dcr, 0);
    done(c);
    c = mk(13, "DepthToSpace", 1, 1, T(PH_DT_FLOAT, 4, D(1, 8, 2, 3), x));
    ph_node_set_attr_int(c->n, "blocksize", 2);
    ph_node_set_attr_string(c->n, "mode", "CRD");
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 4, D(1, 2, 4, 6), w_crd, 0);
    done(c);
    /* spec spacetodepth_example */
    c = mk(13, "SpaceToDepth", 1, 1, TF(4, D(1, 1, 4, 6), 0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20, 3, 9, 4, 10, 5,
                                       11, 15, 21, 16, 22, 17, 23));
    ph_node_set_attr_int(c->n, "blocksize", 2);
    run_ok(c);
    double w[24];
    for (int i = 0; i < 24; i++)
        w[i] = i;
    expect(c->out[0], PH_DT_FLOAT, 4, D(1, 4, 2, 3), w, 0);
    done(c);
}
END_TEST

/* ------------------------------------------------------------ reductions */

START_TEST(test_reduce)
{
    /* spec reduce_mean_keepdims: axes [1] of [3,2,2] */
    const double data[12] = {5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2};
    tc *c = mk(13, "ReduceMean", 1, 1, T(PH_DT_FLOAT, 3, D(3, 2, 2), data));
    ph_node_set_attr_ints(c->n, "axes", 1, D(1));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 3, D(3, 1, 2), V(12.5, 1.5, 35, 1.5, 57.5, 1.5), 1e-6);
    done(c);
    /* ReduceSum opset 13: axes input, negative, keepdims 0 */
    c = mk(13, "ReduceSum", 1, 2, T(PH_DT_FLOAT, 3, D(3, 2, 2), data), TL(1, D(1), -2));
    ph_node_set_attr_int(c->n, "keepdims", 0);
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(3, 2), V(25, 3, 70, 3, 115, 3), 0);
    done(c);
    /* all axes; noop_with_empty_axes */
    c = mk(13, "ReduceSum", 1, 1, T(PH_DT_INT64, 2, D(2, 2), V(1, 2, 3, 4)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 2, D(1, 1), V(10), 0);
    done(c);
    c = mk(13, "ReduceSum", 1, 2, T(PH_DT_INT32, 2, D(2, 2), V(1, 2, 3, 4)), T(PH_DT_INT64, 1, D(0), NULL));
    ph_node_set_attr_int(c->n, "noop_with_empty_axes", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_INT32, 2, D(2, 2), V(1, 2, 3, 4), 0);
    done(c);
    /* the others, over axes [0, 2] of data */
    static const struct { const char *op; double w[2]; } rs[] = {
        {"ReduceMax", {55, 60}},         {"ReduceMin", {1, 2}},         {"ReduceProd", {5 * 30 * 55, 20 * 40 * 60 * 8}},
        {"ReduceSumSquare", {25 + 1 + 900 + 1 + 3025 + 1, 400 + 4 + 1600 + 4 + 3600 + 4}},
        {"ReduceL1", {93, 126}},         {"ReduceL2", {sqrt(3953.0), sqrt(5612.0)}},
        {"ReduceLogSum", {log(93.0), log(126.0)}},
        {"ReduceLogSumExp", {55 + log(1 + exp(-25.0) + exp(-50.0) + 3 * exp(-54.0)), 60 + log(1 + exp(-20.0) + exp(-40.0) + 3 * exp(-58.0))}},
    };
    for (size_t k = 0; k < sizeof rs / sizeof rs[0]; k++) {
        c = mk(13, rs[k].op, 1, 1, T(PH_DT_DOUBLE, 3, D(3, 2, 2), data));
        ph_node_set_attr_ints(c->n, "axes", 2, D(0, -1));
        ph_node_set_attr_int(c->n, "keepdims", 0);
        run_ok(c);
        expect(c->out[0], PH_DT_DOUBLE, 1, D(2), rs[k].w, 1e-12);
        done(c);
    }
    /* empty input: sum 0, keepdims over the empty axis */
    c = mk(13, "ReduceSum", 1, 2, T(PH_DT_FLOAT, 2, D(2, 0), NULL), TL(1, D(1), 1));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(2, 1), V(0, 0), 0);
    done(c);
    c = mk(13, "ReduceMax", 1, 1, T(PH_DT_INT8, 1, D(3), V(-5, 7, 2)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT8, 1, D(1), V(7), 0);
    done(c);
    c = mk(13, "ReduceMean", 1, 1, T(PH_DT_FLOAT16, 1, D(4), V(1, 2, 3, 4)));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT16, 1, D(1), V(2.5), 0);
    done(c);
    c = mk(13, "ReduceSum", 1, 1, T(PH_DT_BOOL, 1, D(2), V(1, 1)));
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    done(c);
}
END_TEST

START_TEST(test_argmax_topk_nonzero)
{
    /* spec argmax_keepdims_example / select_last_index / argmin */
    tc *c = mk(13, "ArgMax", 1, 1, TF(2, D(2, 2), 2, 1, 3, 10));
    ph_node_set_attr_int(c->n, "axis", 1);
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 2, D(2, 1), V(0, 1), 0);
    done(c);
    c = mk(13, "ArgMax", 1, 1, TF(2, D(2, 2), 2, 2, 3, 10));
    ph_node_set_attr_int(c->n, "axis", -1);
    ph_node_set_attr_int(c->n, "select_last_index", 1);
    ph_node_set_attr_int(c->n, "keepdims", 0);
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 1, D(2), V(1, 1), 0);
    done(c);
    c = mk(13, "ArgMin", 1, 1, T(PH_DT_INT32, 2, D(2, 2), V(2, 1, 3, 10)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 2, D(1, 2), V(0, 0), 0);
    done(c);
    /* spec top_k: K=3 of [[0..3],[4..7],[8..11]] */
    double x[12];
    for (int i = 0; i < 12; i++)
        x[i] = i;
    c = mk(11, "TopK", 2, 2, T(PH_DT_FLOAT, 2, D(3, 4), x), TL(1, D(1), 3));
    run_ok(c);
    expect(c->out[0], PH_DT_FLOAT, 2, D(3, 3), V(3, 2, 1, 7, 6, 5, 11, 10, 9), 0);
    expect(c->out[1], PH_DT_INT64, 2, D(3, 3), V(3, 2, 1, 3, 2, 1, 3, 2, 1), 0);
    done(c);
    /* smallest along axis 0, ties keep the lower index first */
    c = mk(11, "TopK", 2, 2, T(PH_DT_INT64, 2, D(3, 2), V(5, 1, 5, 1, 2, 0)), TL(1, D(1), 2));
    ph_node_set_attr_int(c->n, "axis", 0);
    ph_node_set_attr_int(c->n, "largest", 0);
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 2, D(2, 2), V(2, 0, 5, 1), 0);
    expect(c->out[1], PH_DT_INT64, 2, D(2, 2), V(2, 2, 0, 0), 0);
    done(c);
    c = mk(11, "TopK", 2, 2, TF(1, D(3), 1, 3, 3), TL(1, D(1), 2));
    run_ok(c);
    expect(c->out[1], PH_DT_INT64, 1, D(2), V(1, 2), 0);
    done(c);
    c = mk(11, "TopK", 2, 2, TF(1, D(2), 1, 2), TL(1, D(1), 3));
    ck_assert_int_eq(run(c), PH_EINVAL);
    done(c);
    /* spec nonzero */
    c = mk(13, "NonZero", 1, 1, T(PH_DT_BOOL, 2, D(2, 2), V(1, 0, 1, 1)));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 2, D(2, 3), V(0, 1, 1, 0, 0, 1), 0);
    done(c);
    c = mk(13, "NonZero", 1, 1, TF(1, D(3), 0, 0, 0));
    run_ok(c);
    expect(c->out[0], PH_DT_INT64, 2, D(1, 0), NULL, 0);
    done(c);
}
END_TEST

/* ------------------------------------------------------------ the core */

START_TEST(test_unsupported_op)
{
    tc *c = mk(13, "StringNormalizer", 1, 1, TF(1, D(1), 1));
    ck_assert(!ph_eval_supports(c->n));
    ck_assert_int_eq(run(c), PH_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(c->err.message, "StringNormalizer"));
    ph_graph *g = ph_model_graph(c->m);
    ph_graph_add_output(g, ph_node_output(c->n, 0));
    ph_eval *e = (ph_eval *)1;
    ph_error err = {0, ""};
    ck_assert_int_eq(ph_eval_new(g, &e, &err), PH_EUNSUPPORTED);
    ck_assert_ptr_null(e);
    ck_assert_ptr_nonnull(strstr(err.message, "StringNormalizer"));
    ck_assert_ptr_nonnull(strstr(err.message, ph_node_name(c->n)));
    done(c);
    c = mk(13, "Relu", 1, 1, TF(1, D(1), 1));
    ck_assert(ph_eval_supports(c->n));
    ph_node_set_domain(c->n, "com.example");
    ck_assert(!ph_eval_supports(c->n));
    done(c);
}
END_TEST

/* ------------------------------------------------------------ a hand-encoded model
 * The builder API cannot give a graph input an initializer of the same name
 * (an overridable default), so that model is written as protobuf bytes. */

typedef struct pb {
    unsigned char b[2048];
    size_t n;
} pb;

static void pb_varint(pb *p, uint64_t v)
{
    do {
        ck_assert_uint_lt(p->n, sizeof p->b);
        p->b[p->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}
static void pb_int(pb *p, unsigned field, uint64_t v)
{
    pb_varint(p, field << 3);
    pb_varint(p, v);
}
static void pb_bytes(pb *p, unsigned field, const void *d, size_t n)
{
    pb_varint(p, field << 3 | 2);
    pb_varint(p, n);
    ck_assert_uint_le(p->n + n, sizeof p->b);
    memcpy(p->b + p->n, d, n);
    p->n += n;
}
static void pb_str(pb *p, unsigned field, const char *s) { pb_bytes(p, field, s, strlen(s)); }
static void pb_msg(pb *p, unsigned field, const pb *m) { pb_bytes(p, field, m->b, m->n); }

/* ValueInfoProto name: float[d0, d1] (d < 0: symbolic "N"). */
static void pb_vi(pb *g, unsigned field, const char *name, int rank, const int64_t *dims)
{
    pb shape = {0}, tt = {0}, ty = {0}, vi = {0};
    for (int i = 0; i < rank; i++) {
        pb dim = {0};
        if (dims[i] < 0)
            pb_str(&dim, 2, "N");
        else
            pb_int(&dim, 1, (uint64_t)dims[i]);
        pb_msg(&shape, 1, &dim);
    }
    pb_int(&tt, 1, PH_DT_FLOAT);
    pb_msg(&tt, 2, &shape);
    pb_msg(&ty, 1, &tt);
    pb_str(&vi, 1, name);
    pb_msg(&vi, 2, &ty);
    pb_msg(g, field, &vi);
}

/* y = Relu(x * w + b), t = Transpose(x) listed twice, x itself as an output,
 * and an unused Neg branch; b is a graph input with initializer [1,-10,0.5],
 * w a plain initializer 2.  x is float[N,3]. */
static ph_model *make_graph(void)
{
    pb g = {0}, n = {0}, t = {0}, m = {0}, op = {0};
    static const struct { const char *op, *in[2], *out; } nodes[] = {
        {"Mul", {"x", "w"}, "xw"}, {"Neg", {"xw", NULL}, "dead"}, {"Add", {"xw", "b"}, "s"},
        {"Relu", {"s", NULL}, "y"}, {"Transpose", {"x", NULL}, "t"}};
    for (size_t i = 0; i < 5; i++) {
        n.n = 0;
        for (size_t k = 0; k < 2 && nodes[i].in[k]; k++)
            pb_str(&n, 1, nodes[i].in[k]);
        pb_str(&n, 2, nodes[i].out);
        pb_str(&n, 4, nodes[i].op);
        pb_msg(&g, 1, &n);
    }
    pb_str(&g, 2, "g");
    const float bv[3] = {1, -10, 0.5f}, wv = 2;
    pb_int(&t, 1, 3);
    pb_int(&t, 2, PH_DT_FLOAT);
    pb_str(&t, 8, "b");
    pb_bytes(&t, 9, bv, sizeof bv);
    pb_msg(&g, 5, &t);
    t.n = 0;
    pb_int(&t, 2, PH_DT_FLOAT);
    pb_str(&t, 8, "w");
    pb_bytes(&t, 9, &wv, sizeof wv);
    pb_msg(&g, 5, &t);
    pb_vi(&g, 11, "x", 2, D(-1, 3));
    pb_vi(&g, 11, "b", 1, D(3));
    pb_vi(&g, 12, "y", 2, D(-1, 3));
    pb_vi(&g, 12, "t", 2, D(3, -1));
    pb_vi(&g, 12, "t", 2, D(3, -1));
    pb_vi(&g, 12, "x", 2, D(-1, 3));
    pb_int(&m, 1, 8);
    pb_int(&op, 2, 13);
    pb_msg(&m, 8, &op);
    pb_msg(&m, 7, &g);
    char path[] = "/tmp/test_eval_ops_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, m.b, m.n), (ssize_t)m.n);
    close(fd);
    ph_model *model = NULL;
    ph_error err = {0, ""};
    int rc = ph_model_load(path, &model, &err);
    unlink(path);
    ck_assert_msg(rc == 0, "load: %s", err.message);
    return model;
}

START_TEST(test_graph_run)
{
    ph_model *m = make_graph();
    ph_eval *e;
    ph_error err = {0, ""};
    int rc = ph_eval_new(ph_model_graph(m), &e, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ph_tensor *x = TF(2, D(2, 3), 1, 2, 3, -1, 6, -2);
    ph_tensor *out[4];
    for (int rep = 0; rep < 2; rep++) { /* an evaluator can run repeatedly */
        rc = ph_eval_run(e, (const ph_tensor *[]){x, NULL}, 2, out, 4, &err);
        ck_assert_msg(rc == 0, "%s", err.message);
        expect(out[0], PH_DT_FLOAT, 2, D(2, 3), V(3, 0, 6.5, 0, 2, 0), 0);
        expect(out[1], PH_DT_FLOAT, 2, D(3, 2), V(1, -1, 2, 6, 3, -2), 0);
        expect(out[2], PH_DT_FLOAT, 2, D(3, 2), V(1, -1, 2, 6, 3, -2), 0);
        ck_assert_ptr_ne(out[1], out[2]);
        expect(out[3], PH_DT_FLOAT, 2, D(2, 3), V(1, 2, 3, -1, 6, -2), 0);
        ck_assert_ptr_ne(out[3], x);
        for (int i = 0; i < 4; i++)
            ph_tensor_free(out[i]);
    }
    /* the initializer is only a default: b can be overridden; fewer inputs
       given means the rest are NULL */
    ph_tensor *b = TF(1, D(3), 0, 0, 0);
    rc = ph_eval_run(e, (const ph_tensor *[]){x, b}, 2, out, 1, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    expect(out[0], PH_DT_FLOAT, 2, D(2, 3), V(2, 4, 6, 0, 12, 0), 0);
    ph_tensor_free(out[0]);
    rc = ph_eval_run(e, (const ph_tensor *[]){x}, 1, out, 1, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    expect(out[0], PH_DT_FLOAT, 2, D(2, 3), V(3, 0, 6.5, 0, 2, 0), 0);
    ph_tensor_free(out[0]);
    ph_tensor_free(b);
    ph_tensor_free(x);
    ph_eval_free(e);
    ph_model_free(m);
}
END_TEST

/* float16 and bfloat16 through the core's wrapper: x -> Mul(w) -> Add(b) -> Relu. */
START_TEST(test_graph_halves)
{
    static const int dts[] = {PH_DT_FLOAT16, PH_DT_BFLOAT16, PH_DT_DOUBLE};
    for (size_t k = 0; k < 3; k++) {
        int dt = dts[k];
        ph_model *m = ph_model_new(13);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = ph_graph_add_input(g, "x", dt, 2, D(2, 3));
        ph_value *w = ph_graph_add_initializer(g, "w", T(dt, 0, NULL, V(2)));
        ph_value *b = ph_graph_add_initializer(g, "b", T(dt, 1, D(3), V(1, -10, 0.5)));
        ph_node *mul = ph_node_create(g, NULL, "Mul", 2, (ph_value *[]){x, w}, 1);
        ph_node *add = ph_node_create(g, NULL, "Add", 2, (ph_value *[]){ph_node_output(mul, 0), b}, 1);
        ph_node *relu = ph_node_create(g, NULL, "Relu", 1, (ph_value *[]){ph_node_output(add, 0)}, 1);
        ph_graph_add_output(g, ph_node_output(relu, 0));
        ph_eval *e;
        ph_error err = {0, ""};
        int rc = ph_eval_new(g, &e, &err);
        ck_assert_msg(rc == 0, "%s", err.message);
        ph_tensor *xt = T(dt, 2, D(2, 3), V(1, 2, 3, -1, 6, -2)), *out;
        rc = ph_eval_run(e, (const ph_tensor *[]){xt}, 1, &out, 1, &err);
        ck_assert_msg(rc == 0, "%s", err.message);
        expect(out, dt, 2, D(2, 3), V(3, 0, 6.5, 0, 2, 0), 0);
        ph_tensor_free(out);
        ph_tensor_free(xt);
        ph_eval_free(e);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(test_graph_input_checks)
{
    ph_model *m = make_graph();
    ph_eval *e;
    ph_error err = {0, ""};
    ck_assert_int_eq(ph_eval_new(ph_model_graph(m), &e, &err), 0);
    ph_tensor *out[5] = {(ph_tensor *)1, NULL, NULL, NULL, NULL};
    ph_tensor *xd = T(PH_DT_DOUBLE, 2, D(2, 3), NULL), *x4 = T(PH_DT_FLOAT, 2, D(2, 4), NULL);
    ph_tensor *x1 = T(PH_DT_FLOAT, 1, D(3), NULL);
    ck_assert_int_eq(ph_eval_run(e, (const ph_tensor *[]){xd}, 1, out, 4, &err), PH_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "'x'"));
    ck_assert_ptr_nonnull(strstr(err.message, "double"));
    ck_assert_ptr_null(out[0]);
    ck_assert_int_eq(ph_eval_run(e, (const ph_tensor *[]){x4}, 1, out, 4, &err), PH_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "dim 1"));
    ck_assert_int_eq(ph_eval_run(e, (const ph_tensor *[]){x1}, 1, out, 4, &err), PH_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "rank"));
    ck_assert_int_eq(ph_eval_run(e, NULL, 0, out, 4, &err), PH_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "no tensor"));
    ck_assert_int_eq(ph_eval_run(e, (const ph_tensor *[]){x1, x1, x1}, 3, out, 4, &err), PH_EINVAL);
    ck_assert_int_eq(ph_eval_run(e, (const ph_tensor *[]){x1}, 1, out, 5, &err), PH_EINVAL);
    ph_tensor_free(xd);
    ph_tensor_free(x4);
    ph_tensor_free(x1);
    ph_eval_free(e);
    ph_model_free(m);
}
END_TEST

/* A kernel error names the node; outputs are left NULL and nothing leaks. */
START_TEST(test_graph_kernel_error)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT64, 1, D(2));
    ph_value *z = ph_graph_add_initializer(g, "z", TL(1, D(2), 1, 0));
    ph_node *r = ph_node_create(g, NULL, "Relu", 1, (ph_value *[]){x}, 1);
    ph_node *d = ph_node_create(g, NULL, "Div", 2, (ph_value *[]){ph_node_output(r, 0), z}, 1);
    ph_node_set_name(d, "the_div");
    ph_graph_add_output(g, ph_node_output(r, 0));
    ph_graph_add_output(g, ph_node_output(d, 0));
    ph_eval *e;
    ph_error err = {0, ""};
    ck_assert_int_eq(ph_eval_new(g, &e, &err), 0);
    ph_tensor *xt = TL(1, D(2), 4, 5), *out[2];
    ck_assert_int_eq(ph_eval_run(e, (const ph_tensor *[]){xt}, 1, out, 2, &err), PH_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "the_div"));
    ck_assert_ptr_null(out[0]);
    ck_assert_ptr_null(out[1]);
    ph_tensor_free(xt);
    ph_eval_free(e);
    ph_model_free(m);
}
END_TEST

/* A longer shape subgraph (Shape -> Gather -> Unsqueeze -> Concat -> Reshape)
 * like the ones constant folding meets. */
START_TEST(test_graph_shape_chain)
{
    ph_model *m = ph_model_new(13);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_FLOAT, 3, D(2, 3, 4));
    ph_value *i0 = ph_graph_add_initializer(g, "i0", TL(0, NULL, 0));
    ph_value *ax = ph_graph_add_initializer(g, "ax", TL(1, D(1), 0));
    ph_value *m1 = ph_graph_add_initializer(g, "m1", TL(1, D(1), -1));
    ph_node *sh = ph_node_create(g, NULL, "Shape", 1, &x, 1);
    ph_node *ga = ph_node_create(g, NULL, "Gather", 2, (ph_value *[]){ph_node_output(sh, 0), i0}, 1);
    ph_node *un = ph_node_create(g, NULL, "Unsqueeze", 2, (ph_value *[]){ph_node_output(ga, 0), ax}, 1);
    ph_node *cc = ph_node_create(g, NULL, "Concat", 2, (ph_value *[]){ph_node_output(un, 0), m1}, 1);
    ph_node_set_attr_int(cc, "axis", 0);
    ph_node *rs = ph_node_create(g, NULL, "Reshape", 2, (ph_value *[]){x, ph_node_output(cc, 0)}, 1);
    ph_graph_add_output(g, ph_node_output(rs, 0));
    ph_eval *e;
    ph_error err = {0, ""};
    ck_assert_int_eq(ph_eval_new(g, &e, &err), 0);
    ph_tensor *xt = T(PH_DT_FLOAT, 3, D(2, 3, 4), NULL), *out;
    ck_assert_int_eq(ph_eval_run(e, (const ph_tensor *[]){xt}, 1, &out, 1, &err), 0);
    ck_assert_uint_eq(ph_tensor_rank(out), 2);
    ck_assert_int_eq(ph_tensor_dim(out, 0), 2);
    ck_assert_int_eq(ph_tensor_dim(out, 1), 12);
    ph_tensor_free(out);
    ph_tensor_free(xt);
    ph_eval_free(e);
    ph_model_free(m);
}

/* ph_eval_fold: a node folds; the cap refuses an output before evaluating
 * (ConstantOfShape asking for 4 GB: nothing is allocated) and after (Add of
 * 16 bytes under a cap of 8); an op the evaluator does not know; a sequence
 * output.  Refusals return 0 with every output NULL. */
START_TEST(test_eval_fold_limits)
{
    ph_error why = {0};
    tc *c = mk(17, "Add", 1, 2, T(PH_DT_FLOAT, 1, D(4), (const double[]){1, 2, 3, 4}),
               T(PH_DT_FLOAT, 1, D(4), (const double[]){10, 20, 30, 40}));
    ck_assert_int_eq(ph_eval_fold(c->n, 17, (const ph_tensor *const *)c->in, 0, c->out, &why), 1);
    expect(c->out[0], PH_DT_FLOAT, 1, D(4), (const double[]){11, 22, 33, 44}, 0);
    ph_tensor_free(c->out[0]);
    c->out[0] = NULL;
    ck_assert_int_eq(ph_eval_fold(c->n, 17, (const ph_tensor *const *)c->in, 8, c->out, &why), 0);
    ck_assert_int_eq(why.code, PH_ERANGE);
    ck_assert_ptr_null(c->out[0]);
    ck_assert_msg(strstr(why.message, "not folded: output 0 takes 16 bytes (max_output_bytes 8)"), "%s",
                  why.message);
    done(c);

    c = mk(17, "ConstantOfShape", 1, 1, T(PH_DT_INT64, 1, D(2), (const double[]){65536, 16384}));
    ck_assert_int_eq(ph_eval_fold(c->n, 17, (const ph_tensor *const *)c->in, 1 << 20, c->out, &why), 0);
    ck_assert_int_eq(why.code, PH_ERANGE);
    ck_assert_ptr_null(c->out[0]);
    ck_assert_msg(strstr(why.message, "would take 4294967296 bytes"), "%s", why.message);
    done(c);

    c = mk(17, "NoSuchOp", 1, 1, T(PH_DT_FLOAT, 1, D(1), (const double[]){1}));
    ck_assert_int_eq(ph_eval_fold(c->n, 17, (const ph_tensor *const *)c->in, 0, c->out, &why), 0);
    ck_assert_int_eq(why.code, PH_EUNSUPPORTED);
    done(c);

    c = mk(17, "SequenceConstruct", 1, 1, T(PH_DT_FLOAT, 1, D(1), (const double[]){1}));
    ck_assert_int_eq(ph_eval_fold(c->n, 17, (const ph_tensor *const *)c->in, 0, c->out, NULL), 0);
    ck_assert_ptr_null(c->out[0]);
    done(c);
}
END_TEST

END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("eval_ops");
    TCase *t = tcase_create("ops");
    tcase_add_test(t, test_unary_math);
    tcase_add_test(t, test_activations);
    tcase_add_test(t, test_clip);
    tcase_add_test(t, test_unary_ints);
    tcase_add_test(t, test_unary_halves_and_double);
    tcase_add_test(t, test_unary_unsupported_dtype);
    tcase_add_test(t, test_predicates);
    tcase_add_test(t, test_add_every_dtype_broadcast);
    tcase_add_test(t, test_arith);
    tcase_add_test(t, test_empty_broadcast);
    tcase_add_test(t, test_mod_pow);
    tcase_add_test(t, test_compare_logic);
    tcase_add_test(t, test_variadic);
    tcase_add_test(t, test_prelu_where);
    tcase_add_test(t, test_softmax);
    tcase_add_test(t, test_cast);
    tcase_add_test(t, test_identity_dropout_shape_size);
    tcase_add_test(t, test_reshape_flatten);
    tcase_add_test(t, test_squeeze_unsqueeze);
    tcase_add_test(t, test_constants_range);
    tcase_add_test(t, test_transpose_expand_tile);
    tcase_add_test(t, test_concat_split);
    tcase_add_test(t, test_slice);
    tcase_add_test(t, test_gather);
    tcase_add_test(t, test_pad);
    tcase_add_test(t, test_depth_space);
    tcase_add_test(t, test_reduce);
    tcase_add_test(t, test_argmax_topk_nonzero);
    suite_add_tcase(s, t);
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_unsupported_op);
    tcase_add_test(core, test_graph_run);
    tcase_add_test(core, test_graph_halves);
    tcase_add_test(core, test_graph_input_checks);
    tcase_add_test(core, test_graph_kernel_error);
    tcase_add_test(core, test_graph_shape_chain);
    tcase_add_test(core, test_eval_fold_limits);
    suite_add_tcase(s, core);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    srunner_set_fork_status(r, CK_NOFORK); /* cases that only compute share one process */
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
