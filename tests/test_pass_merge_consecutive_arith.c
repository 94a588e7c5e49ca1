/* tests/test_pass_merge_consecutive_arith.c - merge_consecutive_arith. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passhost/testing.h"
#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("merge_consecutive_arith"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

#define F32(...) ((const float[]){__VA_ARGS__})

/* A float constant of the given shape and values. */
static ph_value *fc(ph_graph *g, size_t rank, const int64_t *dims, const float *vals)
{
    return ph_graph_add_initializer(g, "c", ph_tensor_new(PH_DT_FLOAT, rank, dims, vals));
}

static ph_value *fscalar(ph_graph *g, float v) { return fc(g, 0, NULL, &v); }

/* A constant of dtype dt from doubles (rounded once). */
static ph_value *dc(ph_graph *g, int dt, size_t rank, const int64_t *dims, const double *vals)
{
    ph_tensor *t = ph_tensor_from_f64(dt, rank, dims, vals);
    ck_assert_ptr_nonnull(t);
    return ph_graph_add_initializer(g, "c", t);
}

/* The only node of g with op `op` reads x and a constant equal to want
 * (n elements, read as doubles). */
static void assert_const_operand(ph_graph *g, ph_op op, ph_value *x, size_t n, const double *want)
{
    double got[64];
    ph_node *node = tk_find_op(g, op);
    ck_assert_ptr_nonnull(node);
    ck_assert_uint_eq(tk_count_op(g, op), 1);
    ck_assert_ptr_eq(ph_node_input(node, 0), x);
    const ph_tensor *t = ph_value_const(ph_node_input(node, 1));
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ph_tensor_numel(t), (int64_t)n);
    ck_assert_int_eq(ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), got), 0);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(got[k] == want[k], "constant[%zu] = %.17g, want %.17g", k, got[k], want[k]);
}

/* x + a + b, x - a + b, x + a - b, x - a - b, and a + x + b: one Add of
 * the signed sum. */
START_TEST(add_chains)
{
    char ops[256];
    static const char *const first[] = {"Add", "Sub", "Add", "Sub", "Add"};
    static const char *const second[] = {"Add", "Add", "Sub", "Sub", "Add"};
    static const double want[][3] = {{2.5, 3.5, 4.5},    {0.5, -0.5, -1.5}, {-0.5, 0.5, 1.5},
                                     {-2.5, -3.5, -4.5}, {2.5, 3.5, 4.5}};
    for (int k = 0; k < 5; k++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(2, 3)));
        ph_value *a = fc(g, 1, TK_I64(3), F32(1, 2, 3));
        ph_value *t = k == 4 ? tk_op2(g, "Add", a, x) : tk_op2(g, first[k], x, a);
        tk_output(g, tk_op1(g, "Neg", tk_op2(g, second[k], t, fscalar(g, 1.5f))));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 1 + (uint64_t)k, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Add,Neg");
        assert_const_operand(g, PH_OP_Add, x, 3, want[k]);
        ck_assert_uint_eq(ph_graph_initializer_count(g), 1); /* a and b are gone */
        tk_assert_untouched(pass, m);                        /* idempotent */
        ph_model_free(m);
    }
}
END_TEST

/* x*a*b -> x*(ab); x/a/b -> x/(ab); x/a*b -> x*(b/a); x*a/b -> x*(a/b). */
START_TEST(mul_chains)
{
    static const char *const first[] = {"Mul", "Div", "Div", "Mul"};
    static const char *const second[] = {"Mul", "Div", "Mul", "Div"};
    static const ph_op result[] = {PH_OP_Mul, PH_OP_Div, PH_OP_Mul, PH_OP_Mul};
    /* a = [2, 4, 0.5], b = 3, in double, rounded once to float */
    static const double want[][3] = {{6, 12, 1.5}, {6, 12, 1.5}, {(float)(3.0 / 2), (float)(3.0 / 4), 6},
                                     {(float)(2.0 / 3), (float)(4.0 / 3), (float)(0.5 / 3)}};
    for (int k = 0; k < 4; k++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(2, 3)));
        ph_value *t = tk_op2(g, first[k], x, fc(g, 2, TK_I64(1, 3), F32(2, 4, 0.5f)));
        tk_output(g, tk_op1(g, "Neg", tk_op2(g, second[k], t, fscalar(g, 3))));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 10 + (uint64_t)k, 0, NULL), 1);
        ck_assert_uint_eq(ph_graph_node_count(g), 3);
        assert_const_operand(g, result[k], x, 3, want[k]);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* (x + a) * b -> x * b + ab; (x - a) / b -> x / b + (-a / b). */
START_TEST(add_then_mul)
{
    char ops[256];
    for (int k = 0; k < 2; k++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(2, 3, 2)));
        ph_value *a = fc(g, 2, TK_I64(3, 1), F32(1, 2, 3));
        ph_value *b = fc(g, 2, TK_I64(3, 1), F32(0.5f, 4, -2));
        ph_value *t = tk_op2(g, k ? "Sub" : "Add", x, a);
        tk_output(g, tk_op1(g, "Neg", tk_op2(g, k ? "Div" : "Mul", t, b)));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 20 + (uint64_t)k, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), k ? "Relu,Div,Add,Neg" : "Relu,Mul,Add,Neg");
        ph_node *scale = tk_find_op(g, k ? PH_OP_Div : PH_OP_Mul);
        ck_assert_ptr_eq(ph_node_input(scale, 0), x);
        ck_assert_ptr_eq(ph_node_input(scale, 1), b); /* b is reused */
        assert_const_operand(g, PH_OP_Add, ph_node_output(scale, 0), 3,
                             k ? (const double[]){-2, -0.5, 1.5} : (const double[]){0.5, 8, -6});
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* ((x + a) * b + c) * d: folds to x * (bd) + e in one run or more. */
START_TEST(longer_chain)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(4, 3)));
    ph_value *v = tk_op2(g, "Add", x, fc(g, 1, TK_I64(3), F32(1, -2, 3)));
    v = tk_op2(g, "Mul", v, fscalar(g, 2));
    v = tk_op2(g, "Add", v, fc(g, 1, TK_I64(3), F32(0.25f, 0.5f, 0.75f)));
    v = tk_op2(g, "Mul", v, fscalar(g, -3));
    tk_output(g, tk_op1(g, "Neg", v));
    int total = 0, rc;
    while ((rc = tk_pass_run_eval(pass, m, 30, 0, NULL)) > 0)
        total += rc;
    ck_assert_int_ge(total, 3);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Mul,Add,Neg");
    assert_const_operand(g, PH_OP_Mul, x, 1, (const double[]){-6});
    /* ((x + a) * 2 + c) * -3 = -6x + (-6a - 3c) */
    assert_const_operand(g, PH_OP_Add, ph_node_output(tk_find_op(g, PH_OP_Mul), 0), 3,
                         (const double[]){-6.75, 10.5, -20.25});
    ph_model_free(m);
}
END_TEST

/* Integers: Add and Mul chains and (x + a) * b wrap exactly as before. */
START_TEST(integers_wrap_alike)
{
    for (int k = 0; k < 4; k++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        int dt = k == 3 ? PH_DT_INT64 : PH_DT_INT32;
        ph_value *x = tk_op1(g, "Neg", ph_graph_add_input(g, "x", dt, 2, TK_I64(2, 3)));
        double big = dt == PH_DT_INT32 ? 2147483647.0 : 9007199254740991.0;
        ph_value *t, *y;
        if (k == 0) { /* x + INT32_MAX + 5 */
            t = tk_op2(g, "Add", x, dc(g, dt, 1, TK_I64(3), (const double[]){big, 1, -7}));
            y = tk_op2(g, "Add", t, dc(g, dt, 0, NULL, (const double[]){5}));
        } else if (k == 1) { /* x * 65536 * 65536 wraps to x * 0 */
            t = tk_op2(g, "Mul", x, dc(g, dt, 0, NULL, (const double[]){65536}));
            y = tk_op2(g, "Mul", t, dc(g, dt, 1, TK_I64(3), (const double[]){65536, 3, -1}));
        } else if (k == 2) { /* (x - big) * 3 */
            t = tk_op2(g, "Sub", x, dc(g, dt, 0, NULL, (const double[]){big}));
            y = tk_op2(g, "Mul", t, dc(g, dt, 1, TK_I64(3), (const double[]){3, -2, 7}));
        } else { /* int64: x - a - b */
            t = tk_op2(g, "Sub", x, dc(g, dt, 0, NULL, (const double[]){big}));
            y = tk_op2(g, "Sub", t, dc(g, dt, 0, NULL, (const double[]){big}));
        }
        tk_output(g, y);
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 40 + (uint64_t)k, 0, NULL), 1);
        ck_assert_uint_eq(ph_graph_node_count(g), k == 2 ? 3 : 2);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* float16: the folded constant is rounded once from the exact sum. */
START_TEST(float16)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(8));
    ph_node *c = tk_node(g, "Cast", 1, &x);
    ph_node_set_attr_int(c, "to", PH_DT_FLOAT16);
    ph_value *h = ph_node_output(c, 0);
    h = tk_op2(g, "Add", h, dc(g, PH_DT_FLOAT16, 0, NULL, (const double[]){0.1}));
    h = tk_op2(g, "Add", h, dc(g, PH_DT_FLOAT16, 0, NULL, (const double[]){0.2}));
    tk_output(g, h);
    /* the SDK's checked run compares float16 with float16's tolerance */
    ph_test_options o = {.seed = 50};
    ph_test_result res;
    ph_error err = {0};
    int rc = ph_test_run_checked(pass->desc, m, &o, &res, &err);
    ck_assert_msg(rc == 1, "%d: %s", rc, err.message);
    const ph_tensor *k = ph_value_const(ph_node_input(tk_find_op(g, PH_OP_Add), 1));
    double got, want = ph_f16_bits_to_f64(ph_f64_to_f16_bits(ph_f16_bits_to_f64(ph_f64_to_f16_bits(0.1)) +
                                                             ph_f16_bits_to_f64(ph_f64_to_f16_bits(0.2))));
    ck_assert_int_eq(ph_tensor_dtype(k), PH_DT_FLOAT16);
    ck_assert_int_eq(ph_tensor_read_f64(k, 0, NULL, &got), 0);
    ck_assert(got == want);
    ph_model_free(m);
}
END_TEST

/* The last output is a graph output: it keeps its name. */
START_TEST(graph_output_keeps_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    ph_value *y = tk_op2(g, "Mul", tk_op2(g, "Mul", x, fscalar(g, 2)), fscalar(g, 3));
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 60, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

START_TEST(middle_with_other_consumer_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    ph_value *t = tk_op2(g, "Add", x, fscalar(g, 1));
    tk_output(g, tk_op2(g, "Add", t, fscalar(g, 2)));
    tk_output(g, tk_op1(g, "Neg", t));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(middle_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    ph_value *t = tk_op2(g, "Mul", x, fscalar(g, 2));
    tk_output(g, tk_op2(g, "Mul", t, fscalar(g, 2)));
    tk_output(g, t);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* b is a graph input; a is computed. */
START_TEST(non_constant_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    ph_value *b = tk_input(g, "b", 0, NULL);
    tk_output(g, tk_op2(g, "Add", tk_op2(g, "Add", x, fscalar(g, 1)), b));
    ph_value *a = tk_op1(g, "Neg", fscalar(g, 2));
    tk_output(g, tk_op2(g, "Mul", tk_op2(g, "Mul", x, a), fscalar(g, 1)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Sub(c, x) and Div(c, x) are not x op c. */
START_TEST(constant_first_operand_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    tk_output(g, tk_op2(g, "Add", tk_op2(g, "Sub", fscalar(g, 1), x), fscalar(g, 2)));
    tk_output(g, tk_op2(g, "Mul", tk_op2(g, "Div", fscalar(g, 1), x), fscalar(g, 2)));
    tk_output(g, tk_op2(g, "Sub", fscalar(g, 1), tk_op2(g, "Add", x, fscalar(g, 2))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Opset 6: Add/Mul had legacy broadcast attributes. */
START_TEST(opset6_kept)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "", 6), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_node *a = tk_node(g, "Add", 2, (ph_value *const[]){x, fc(g, 1, TK_I64(2), F32(1, 2))});
    ph_node_set_attr_int(a, "broadcast", 1);
    ph_node_set_attr_int(a, "axis", 0);
    tk_output(g, tk_op2(g, "Add", ph_node_output(a, 0), fscalar(g, 1)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Integer division does not compose. */
START_TEST(integer_div_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT32, 1, TK_I64(4));
    ph_value *two = dc(g, PH_DT_INT32, 0, NULL, (const double[]){2});
    tk_output(g, tk_op2(g, "Div", tk_op2(g, "Div", x, two), two));
    tk_output(g, tk_op2(g, "Mul", tk_op2(g, "Div", x, two), two));
    tk_output(g, tk_op2(g, "Div", tk_op2(g, "Add", x, two), two));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Non-finite constants, a divisor 0, a folded factor that overflows or
 * underflows float: all left alone. */
START_TEST(unsafe_constants_kept)
{
    static const struct {
        const char *o1, *o2;
        float a, b;
    } cases[] = {
        {"Add", "Add", INFINITY, 1},  {"Mul", "Mul", NAN, 2},      {"Div", "Mul", 0, 2},
        {"Mul", "Div", 2, 0},         {"Add", "Div", 1, 0},        {"Mul", "Mul", 1e30f, 1e30f},
        {"Mul", "Mul", 1e-30f, 1e-30f}, {"Div", "Div", 1e-30f, 1e-30f}, {"Add", "Mul", 1e30f, 1e30f},
        {"Add", "Add", 3e38f, 3e38f},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 1, TK_I64(4));
        ph_value *t = tk_op2(g, cases[k].o1, x, fscalar(g, cases[k].a));
        tk_output(g, tk_op2(g, cases[k].o2, t, fscalar(g, cases[k].b)));
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* a [N,1] and b [1,N] would fold into an [N,N] constant. */
START_TEST(constant_blow_up_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 3));
    ph_value *t = tk_op2(g, "Add", x, fc(g, 2, TK_I64(3, 1), F32(1, 2, 3)));
    tk_output(g, tk_op2(g, "Add", t, fc(g, 2, TK_I64(1, 3), F32(1, 2, 3))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ... while a [1,3] and b [3] fold to [1,3], and x [3] keeps its output
 * shape [1,3]. */
START_TEST(broadcast_rank_kept_right)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", tk_input(g, "x", 1, TK_I64(3)));
    ph_value *t = tk_op2(g, "Mul", x, fc(g, 2, TK_I64(1, 3), F32(1, 2, 3)));
    tk_output(g, tk_op2(g, "Mul", t, fc(g, 1, TK_I64(3), F32(3, 2, 1))));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 70, 0, NULL), 1);
    const ph_tensor *k = ph_value_const(ph_node_input(tk_find_op(g, PH_OP_Mul), 1));
    ck_assert_uint_eq(ph_tensor_rank(k), 2);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *tg = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *eg = ph_node_add_subgraph(iff, "else_branch");
    tk_output(tg, tk_op2(tg, "Sub", tk_op2(tg, "Add", x, fscalar(tg, 1)), fscalar(tg, 3)));
    tk_output(eg, tk_op2(eg, "Mul", tk_op2(eg, "Add", x, fscalar(eg, 1)), fscalar(eg, 3)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_str_eq(tk_ops(tg, ops, sizeof ops), "Add");
    assert_const_operand(tg, PH_OP_Add, x, 1, (const double[]){-2});
    ck_assert_str_eq(tk_ops(eg, ops, sizeof ops), "Mul,Add");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_merge_consecutive_arith");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, add_chains);
    tcase_add_test(tc, mul_chains);
    tcase_add_test(tc, add_then_mul);
    tcase_add_test(tc, longer_chain);
    tcase_add_test(tc, integers_wrap_alike);
    tcase_add_test(tc, float16);
    tcase_add_test(tc, graph_output_keeps_name);
    tcase_add_test(tc, middle_with_other_consumer_kept);
    tcase_add_test(tc, middle_graph_output_kept);
    tcase_add_test(tc, non_constant_kept);
    tcase_add_test(tc, constant_first_operand_kept);
    tcase_add_test(tc, opset6_kept);
    tcase_add_test(tc, integer_div_kept);
    tcase_add_test(tc, unsafe_constants_kept);
    tcase_add_test(tc, constant_blow_up_kept);
    tcase_add_test(tc, broadcast_rank_kept_right);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
