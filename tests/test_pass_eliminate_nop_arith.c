/* tests/test_pass_eliminate_nop_arith.c - the eliminate_nop_arith pass. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("eliminate_nop_arith");
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
    ck_assert_int_le(n, 64);
    for (int64_t i = 0; i < n; i++)
        vals[i] = v;
    ph_value *c = ph_graph_add_initializer(g, "c", ph_tensor_from_f64(dt, rank, dims, vals));
    ck_assert_ptr_nonnull(c);
    return c;
}

static ph_value *fscalar(ph_graph *g, double v) { return cst(g, PH_DT_FLOAT, 0, NULL, v); }

/* x [2,3] -> Sin -> each no-op in turn -> Neg -> y.  Then the same on
 * Relu, whose negative inputs give -0.0, with the no-ops that keep -0.0
 * bit for bit (x + (+0.0) would make it +0.0: see the pass's header). */
START_TEST(float_identities_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *v = tk_op1(g, "Sin", x);
    v = tk_op2(g, "Add", v, fscalar(g, 0));
    v = tk_op2(g, "Add", cst(g, PH_DT_FLOAT, 1, TK_I64(3), 0), v); /* constant on the left */
    v = tk_op2(g, "Mul", cst(g, PH_DT_FLOAT, 2, TK_I64(2, 1), 1), v);
    tk_output(g, tk_op1(g, "Neg", v));
    v = tk_op1(g, "Relu", x);
    v = tk_op2(g, "Sub", v, cst(g, PH_DT_FLOAT, 2, TK_I64(1, 3), 0));
    v = tk_op2(g, "Div", v, fscalar(g, 1));
    v = tk_op2(g, "Pow", v, fscalar(g, 1));
    v = tk_op2(g, "Pow", v, cst(g, PH_DT_INT64, 1, TK_I64(1), 1)); /* exponent of another type */
    v = tk_op2(g, "Add", v, fscalar(g, -0.0));
    tk_output(g, tk_op1(g, "Neg", v));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 8);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Sin,Neg,Relu,Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0); /* the constants were pruned */
    tk_assert_untouched(pass, m);                         /* idempotent */
    ph_model_free(m);
}
END_TEST

START_TEST(integer_and_bool_identities_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT64, 2, TK_I64(2, 3));
    ph_value *v = tk_op1(g, "Neg", x);
    v = tk_op2(g, "Add", v, cst(g, PH_DT_INT64, 0, NULL, 0));
    v = tk_op2(g, "Mul", cst(g, PH_DT_INT64, 1, TK_I64(3), 1), v);
    v = tk_op2(g, "Div", v, cst(g, PH_DT_INT64, 0, NULL, 1));
    v = tk_op2(g, "Sub", v, cst(g, PH_DT_INT64, 0, NULL, 0));
    tk_output(g, tk_op1(g, "Abs", v));
    ph_value *b = ph_graph_add_input(g, "b", PH_DT_BOOL, 1, TK_I64(4));
    ph_value *w = tk_op1(g, "Not", b);
    w = tk_op2(g, "And", cst(g, PH_DT_BOOL, 0, NULL, 1), w);
    w = tk_op2(g, "Or", w, cst(g, PH_DT_BOOL, 1, TK_I64(4), 0));
    tk_output(g, tk_op1(g, "Not", w));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 6);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Neg,Abs,Not,Not");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A scalar cannot change the shape even when x's rank is unknown; a [1,3]
 * constant against [?,3] keeps the shape too. */
START_TEST(scalar_with_unknown_rank_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", -1, NULL));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Mul", r, fscalar(g, 1))));
    ph_value *s = tk_op1(g, "Relu", tk_input(g, "z", 2, TK_I64(-1, 3)));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Add", s, cst(g, PH_DT_FLOAT, 2, TK_I64(1, 3), 0))));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Mul) + tk_count_op(g, PH_OP_Add), 0);
    ph_model_free(m);
}
END_TEST

/* The output is a graph output and read by another node: the Relu output
 * takes its name, the reader follows. */
START_TEST(graph_output_keeps_its_name)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Sin", tk_input(g, "x", 2, TK_I64(2, 3)));
    ph_value *y = tk_op2(g, "Add", r, fscalar(g, 0));
    tk_output(g, y);
    tk_output(g, tk_op1(g, "Neg", y));
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Sin,Neg");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

/* Each variant builds Relu(x [2,3]) -> one node -> Neg and must stay. */
static void one_node_kept(int variant)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *r = tk_op1(g, "Relu", x), *v = NULL;
    switch (variant) {
    case 0: v = tk_op2(g, "Add", r, fscalar(g, 1)); break;                              /* not 0 */
    case 1: v = tk_op2(g, "Mul", r, cst(g, PH_DT_FLOAT, 1, TK_I64(3), 0)); break;         /* by 0 */
    case 2: v = tk_op2(g, "Sub", fscalar(g, 0), r); break;                              /* 0 - x */
    case 3: v = tk_op2(g, "Div", fscalar(g, 1), r); break;                              /* 1 / x */
    case 4: v = tk_op2(g, "Pow", fscalar(g, 1), r); break;                              /* 1 ^ x */
    case 5: v = tk_op2(g, "Div", r, cst(g, PH_DT_FLOAT, 3, TK_I64(3, 1, 1), 1)); break;   /* -> [3,2,3] */
    case 6: v = tk_op2(g, "Add", r, cst(g, PH_DT_FLOAT, 3, TK_I64(1, 2, 3), 0)); break;   /* rank grows */
    case 7: v = tk_op2(g, "Mul", r, cst(g, PH_DT_FLOAT, 3, TK_I64(2, 1, 1), 1)); break;   /* shape grows */
    case 8: v = tk_op2(g, "Add", r, tk_input(g, "z", 0, NULL)); break;                  /* not constant */
    case 9: { /* a Constant node, not an initializer (constant_to_initializer's job) */
        ph_node *k = tk_node(g, "Constant", 0, NULL);
        double zero = 0;
        ph_node_set_attr_tensor(k, "value", ph_tensor_from_f64(PH_DT_FLOAT, 0, NULL, &zero));
        v = tk_op2(g, "Add", r, ph_node_output(k, 0));
        break;
    }
    case 10: { /* legacy broadcasting attribute */
        v = tk_op2(g, "Add", r, fscalar(g, 0));
        ph_node_set_attr_int(ph_value_producer(v), "broadcast", 1);
        break;
    }
    case 11: v = tk_op2(g, "Add", x, fscalar(g, 0)); break; /* input straight to output */
    case 12: {                                                 /* another domain */
        ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
        v = tk_op2(g, "Add", r, fscalar(g, 0));
        ph_node_set_domain(ph_value_producer(v), "com.example");
        tk_set_shape(v, 2, TK_I64(2, 3));
        break;
    }
    case 13: v = tk_op2(g, "Add", r, fscalar(g, NAN)); break; /* NaN */
    }
    if (variant == 11)
        tk_output(g, v);
    else
        tk_output(g, tk_op1(g, "Neg", v));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}

START_TEST(left_alone)
{
    for (int variant = 0; variant <= 13; variant++)
        one_node_kept(variant);
}
END_TEST

/* [?,3] + zeros [2,3]: the unknown dim might be 1, and then the output grows. */
START_TEST(unknown_dim_or_rank_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(-1, 3)));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Add", r, cst(g, PH_DT_FLOAT, 2, TK_I64(2, 3), 0))));
    ph_value *s = tk_op1(g, "Relu", tk_input(g, "z", -1, NULL));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Mul", s, cst(g, PH_DT_FLOAT, 1, TK_I64(1), 1))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
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
    ph_value *t = tk_op1(then_g, "Relu", x);
    tk_output(then_g, tk_op1(then_g, "Neg", tk_op2(then_g, "Add", t, fscalar(then_g, 0))));
    ph_value *e = tk_op1(else_g, "Sin", x);
    tk_output(else_g, tk_op1(else_g, "Neg", tk_op2(else_g, "Mul", fscalar(else_g, 1), e)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Add), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Mul), 0);
    ck_assert_uint_eq(ph_graph_node_count(then_g), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_nop_arith");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, float_identities_removed);
    tcase_add_test(tc, integer_and_bool_identities_removed);
    tcase_add_test(tc, scalar_with_unknown_rank_removed);
    tcase_add_test(tc, graph_output_keeps_its_name);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, unknown_dim_or_rank_kept);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
