/* tests/test_pass_div_const_to_mul.c - div_const_to_mul: Div by a float
 * constant becomes Mul by its reciprocal. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("div_const_to_mul"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* A constant of dtype dt and shape dims holding vals. */
static ph_value *cst(ph_graph *g, int dt, size_t rank, const int64_t *dims, const double *vals)
{
    ph_value *c = ph_graph_add_initializer(g, "c", ph_tensor_from_f64(dt, rank, dims, vals));
    ck_assert_ptr_nonnull(c);
    return c;
}

static ph_value *cast(ph_graph *g, ph_value *x, int dt)
{
    ph_node *n = tk_node(g, "Cast", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_int(n, "to", dt), 0);
    return ph_node_output(n, 0);
}

/* The reciprocal initializer the Mul reads. */
static double mul_const(const ph_graph *g, size_t k)
{
    ph_node *mul = tk_find_op(g, PH_OP_Mul);
    ck_assert_ptr_nonnull(mul);
    const ph_tensor *t = ph_value_const(ph_node_input(mul, 1));
    ck_assert_ptr_nonnull(t);
    double *v = malloc((size_t)ph_tensor_numel(t) * sizeof *v);
    ck_assert_int_eq(ph_tensor_read_f64(t, ph_tensor_rank(t), ph_tensor_dims(t), v), 0);
    double r = v[k];
    free(v);
    return r;
}

START_TEST(float_vector_and_scalar)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 4));
    ph_value *v = tk_op2(g, "Div", x, cst(g, PH_DT_FLOAT, 1, TK_I64(4), (const double[]){3, 0.5, -7, 1e-3}));
    v = tk_op2(g, "Div", v, cst(g, PH_DT_FLOAT, 0, NULL, (const double[]){10}));
    tk_output(g, v);
    char *name = strdup(ph_value_name(v));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Mul,Mul");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name); /* the output keeps its name */
    ck_assert(mul_const(g, 1) == 2.0);
    ck_assert(mul_const(g, 2) == (double)(float)(-1.0 / 7));
    ck_assert_uint_eq(ph_graph_initializer_count(g), 2); /* the divisors were pruned */
    tk_assert_untouched(pass, m);                         /* idempotent */
    free(name);
    ph_model_free(m);
}
END_TEST

/* double through Casts (the kit feeds float inputs), float16 with an exact
 * reciprocal; a divisor another node reads stays for it. */
START_TEST(double_float16_and_shared_divisor)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 5));
    ph_value *d = cast(g, x, PH_DT_DOUBLE);
    ph_value *c = cst(g, PH_DT_DOUBLE, 1, TK_I64(5), (const double[]){3, 0.1, -9, 1e5, 0.25});
    tk_output(g, cast(g, tk_op2(g, "Div", d, c), PH_DT_FLOAT));
    tk_output(g, cast(g, tk_op2(g, "Add", d, c), PH_DT_FLOAT));
    ph_value *h = cast(g, x, PH_DT_FLOAT16);
    tk_output(g, cast(g, tk_op2(g, "Div", h, cst(g, PH_DT_FLOAT16, 0, NULL, (const double[]){-4})), PH_DT_FLOAT));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Cast,Mul,Cast,Add,Cast,Cast,Mul,Cast");
    ck_assert(mul_const(g, 1) == 1.0 / 0.1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Div), 0);
    ck_assert_ptr_eq(ph_node_input(tk_find_op(g, PH_OP_Add), 1), c); /* still there for the Add */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 9; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3)), *y = NULL;
        switch (variant) {
        case 0: /* the divisor is not constant */
            y = tk_op2(g, "Div", x, tk_input(g, "c", 1, TK_I64(3)));
            break;
        case 1: /* integer division */
            y = tk_op2(g, "Div", cast(g, x, PH_DT_INT32), cst(g, PH_DT_INT32, 0, NULL, (const double[]){2}));
            break;
        case 2: /* a zero divisor */
            y = tk_op2(g, "Div", x, cst(g, PH_DT_FLOAT, 1, TK_I64(3), (const double[]){1, 0, 2}));
            break;
        case 3: /* an infinite divisor */
            y = tk_op2(g, "Div", x, cst(g, PH_DT_FLOAT, 0, NULL, (const double[]){INFINITY}));
            break;
        case 4: /* NaN */
            y = tk_op2(g, "Div", x, cst(g, PH_DT_FLOAT, 0, NULL, (const double[]){NAN}));
            break;
        case 5: /* the reciprocal would be subnormal in float */
            y = tk_op2(g, "Div", x, cst(g, PH_DT_FLOAT, 0, NULL, (const double[]){3e38}));
            break;
        case 6: /* the reciprocal overflows float16 */
            y = tk_op2(g, "Div", cast(g, x, PH_DT_FLOAT16), cst(g, PH_DT_FLOAT16, 0, NULL, (const double[]){1e-7}));
            break;
        case 7: /* the constant is the dividend: c / x is no product */
            y = tk_op2(g, "Div", cst(g, PH_DT_FLOAT, 0, NULL, (const double[]){2}), x);
            break;
        case 8: { /* x of another dtype than the constant (an invalid model) */
            ph_value *d = cast(g, x, PH_DT_DOUBLE);
            ck_assert_int_eq(ph_value_set_type(d, PH_DT_DOUBLE, 2, TK_I64(2, 3)), 0);
            y = tk_op2(g, "Div", d, cst(g, PH_DT_FLOAT, 0, NULL, (const double[]){2}));
            break;
        }
        }
        tk_output(g, y);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, tk_op2(then_g, "Div", x, cst(then_g, PH_DT_FLOAT, 0, NULL, (const double[]){8})));
    tk_output(else_g, tk_op2(else_g, "Div", x, cst(else_g, PH_DT_FLOAT, 0, NULL, (const double[]){0})));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1); /* the evaluator has no If: structure only */
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Mul), 1);
    ck_assert(mul_const(then_g, 0) == 0.125);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Div), 1); /* division by zero stays */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("div_const_to_mul");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, float_vector_and_scalar);
    tcase_add_test(tc, double_float16_and_shared_divisor);
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
