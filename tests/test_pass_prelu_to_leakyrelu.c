/* tests/test_pass_prelu_to_leakyrelu.c - prelu_to_leakyrelu: PRelu with one
 * slope value becomes LeakyRelu. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("prelu_to_leakyrelu");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* A constant of dtype dt and shape dims, every element v. */
static ph_value *cst(ph_graph *g, int dt, size_t rank, const int64_t *dims, double v)
{
    double vals[64];
    int64_t n = 1;
    for (size_t i = 0; i < rank; i++)
        n *= dims[i];
    for (int64_t i = 0; i < n; i++)
        vals[i] = v;
    ph_value *c = ph_graph_add_initializer(g, "slope", ph_tensor_from_f64(dt, rank, dims, vals));
    ck_assert_ptr_nonnull(c);
    return c;
}

static ph_value *cast(ph_graph *g, ph_value *x, int dt)
{
    ph_node *n = tk_node(g, "Cast", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_int(n, "to", dt), 0);
    return ph_node_output(n, 0);
}

static ph_value *prelu(ph_graph *g, ph_value *x, ph_value *slope) { return tk_op2(g, "PRelu", x, slope); }

START_TEST(float_slopes_of_one_value)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 3, 4, 4));
    tk_output(g, prelu(g, x, cst(g, PH_DT_FLOAT, 0, NULL, 0.1)));
    tk_output(g, prelu(g, x, cst(g, PH_DT_FLOAT, 3, TK_I64(1, 1, 1), -0.3)));
    ph_value *y = prelu(g, x, cst(g, PH_DT_FLOAT, 4, TK_I64(1, 1, 1, 1), 2.5));
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 3);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "LeakyRelu,LeakyRelu,LeakyRelu");
    ph_node *first = tk_find_op(g, PH_OP_LeakyRelu);
    ck_assert(ph_node_attr_float(first, "alpha", 0) == 0.1f);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 2)), name);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0); /* slopes pruned */
    tk_assert_untouched(pass, m);                         /* idempotent */
    free(name);
    ph_model_free(m);
}
END_TEST

/* double when the slope is a float value; float16 always */
START_TEST(double_and_float16)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(4, 6));
    ph_value *d = cast(g, x, PH_DT_DOUBLE), *h = cast(g, x, PH_DT_FLOAT16);
    tk_output(g, prelu(g, d, cst(g, PH_DT_DOUBLE, 1, TK_I64(1), 0.375)));
    tk_output(g, prelu(g, d, cst(g, PH_DT_DOUBLE, 0, NULL, 0.1))); /* 0.1 is no float */
    tk_output(g, cast(g, prelu(g, h, cst(g, PH_DT_FLOAT16, 0, NULL, 0.1)), PH_DT_FLOAT));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 0, NULL), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Cast,Cast,LeakyRelu,PRelu,LeakyRelu,Cast");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 6; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 3, TK_I64(3, 2, 2)), *y = NULL;
        switch (variant) {
        case 0: /* the slope is not constant */
            y = prelu(g, x, tk_input(g, "s", 0, NULL));
            break;
        case 1: /* a slope per channel */
            y = prelu(g, x, tk_init(g, "s", 3, TK_I64(3, 1, 1), 3));
            break;
        case 2: /* a slope of higher rank would widen the output */
            y = prelu(g, x, cst(g, PH_DT_FLOAT, 4, TK_I64(1, 1, 1, 1), 0.5));
            break;
        case 3: /* x's rank unknown */
            y = prelu(g, tk_input(g, "u", -1, NULL), cst(g, PH_DT_FLOAT, 1, TK_I64(1), 0.5));
            break;
        case 4: /* integer PRelu: no integer LeakyRelu */
            y = prelu(g, cast(g, x, PH_DT_INT32), cst(g, PH_DT_INT32, 0, NULL, 2));
            break;
        case 5: /* a NaN slope */
            y = prelu(g, x, cst(g, PH_DT_FLOAT, 0, NULL, NAN));
            break;
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
    tk_output(then_g, prelu(then_g, x, cst(then_g, PH_DT_FLOAT, 0, NULL, 0.2)));
    tk_output(else_g, prelu(else_g, x, tk_init(else_g, "s", 1, TK_I64(3), 9)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1); /* the evaluator has no If: structure only */
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_LeakyRelu), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_PRelu), 1); /* three slopes stay */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("prelu_to_leakyrelu");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, float_slopes_of_one_value);
    tcase_add_test(tc, double_and_float16);
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
