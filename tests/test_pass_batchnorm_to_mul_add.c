/* tests/test_pass_batchnorm_to_mul_add.c - batchnorm_to_mul_add (off by
 * default, loaded explicitly): inference BatchNormalization becomes Mul + Add. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("batchnorm_to_mul_add");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* BatchNormalization of x with C channels, random constant parameters and
 * a variance of 1 + |random| (var_sign -1: negative variances). */
static ph_node *bn(ph_graph *g, ph_value *x, int64_t C, const char *tag, int var_sign)
{
    char name[64];
    ph_value *p[5] = {x};
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%s_p%d", tag, i);
        p[i + 1] = tk_init(g, name, 1, TK_I64(C), 20 + (uint64_t)i);
    }
    double var[64];
    const ph_tensor *vt = ph_value_const(p[4]);
    ck_assert_int_eq(ph_tensor_read_f64(vt, 1, TK_I64(C), var), 0);
    for (int64_t c = 0; c < C; c++)
        var[c] = var_sign * (1.0 + (var[c] < 0 ? -var[c] : var[c]));
    ph_value *old = p[4];
    snprintf(name, sizeof name, "%s_var", tag);
    p[4] = ph_graph_add_initializer(g, name, ph_tensor_from_f64(PH_DT_FLOAT, 1, TK_I64(C), var));
    ph_value_prune(old);
    ph_node *n = tk_node(g, "BatchNormalization", 5, p);
    ph_node_set_attr_float(n, "epsilon", 1e-3f);
    return n;
}

static ph_value *bn_out(ph_graph *g, ph_value *x, int64_t C, const char *tag)
{
    return ph_node_output(bn(g, x, C, tag, 1), 0);
}

/* The shape of the constant input i of the first node of op. */
static void assert_const_shape(const ph_graph *g, ph_op op, size_t rank, const int64_t *dims)
{
    ph_node *n = tk_find_op(g, op);
    ck_assert_ptr_nonnull(n);
    const ph_tensor *t = ph_value_const(ph_node_input(n, 1));
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(ph_tensor_rank(t), rank);
    for (size_t i = 0; i < rank; i++)
        ck_assert_int_eq(ph_tensor_dim(t, i), dims[i]);
}

START_TEST(ranks_four_three_and_two)
{
    static const int64_t shapes[3][4] = {{2, 3, 4, 5}, {2, 4, 6}, {5, 6}};
    static const int ranks[3] = {4, 3, 2};
    char ops[256];
    for (int k = 0; k < 3; k++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", ranks[k], shapes[k]);
        int64_t C = shapes[k][1];
        ph_value *y = bn_out(g, tk_op1(g, "Relu", x), C, "a");
        tk_output(g, y);
        char *name = strdup(ph_value_name(y));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 7 + (uint64_t)k, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Mul,Add");
        ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name); /* keeps its name */
        int64_t dims[3] = {C, 1, 1};
        assert_const_shape(g, PH_OP_Mul, (size_t)ranks[k] - 1, dims);
        assert_const_shape(g, PH_OP_Add, (size_t)ranks[k] - 1, dims);
        ck_assert_uint_eq(ph_graph_initializer_count(g), 2); /* BN parameters pruned */
        tk_assert_untouched(pass, m);                         /* idempotent */
        free(name);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 9; variant++) {
        ph_model *m = ph_model_new(variant == 7 ? 6 : 17);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(2, 3, 4, 4));
        ph_node *n = NULL;
        switch (variant) {
        case 0: /* the scale is not constant */
            n = bn(g, x, 3, "a", 1);
            ph_node_set_input(n, 1, tk_input(g, "s", 1, TK_I64(3)));
            break;
        case 1: /* training mode */
            n = bn(g, x, 3, "a", 1);
            ph_node_set_attr_int(n, "training_mode", 1);
            break;
        case 2: /* x's rank unknown */
            n = bn(g, tk_input(g, "u", -1, NULL), 3, "a", 1);
            break;
        case 3: /* the channel dim unknown */
            n = bn(g, tk_input(g, "u", 4, TK_I64(2, -1, 4, 4)), 3, "a", 1);
            break;
        case 4: /* variance + epsilon < 0: no finite scale */
            n = bn(g, x, 3, "a", -1);
            break;
        case 5: /* the mean is a graph input */
            n = bn(g, x, 3, "a", 1);
            ph_node_set_input(n, 3, tk_input(g, "mean", 1, TK_I64(3)));
            break;
        case 6: /* integer input: not a float dtype */ {
            ph_node *c = tk_node(g, "Cast", 1, &x);
            ph_node_set_attr_int(c, "to", PH_DT_INT32);
            n = bn(g, ph_node_output(c, 0), 3, "a", 1);
            break;
        }
        case 7: /* opset 6 without is_test: training */
            n = bn(g, x, 3, "a", 1);
            break;
        case 8: { /* a training output is used */
            ph_node *b = bn(g, x, 3, "a", 1);
            ph_value *in[5];
            for (size_t i = 0; i < 5; i++)
                in[i] = ph_node_input(b, i);
            n = ph_node_create(g, NULL, "BatchNormalization", 5, in, 3);
            ph_node_remove(b);
            tk_output(g, ph_node_output(n, 1));
            break;
        }
        }
        tk_output(g, ph_node_output(n, 0));
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* opset 6 with is_test = 1 is inference */
START_TEST(opset6_is_test)
{
    ph_model *m = ph_model_new(6);
    ph_graph *g = ph_model_graph(m);
    ph_node *n = bn(g, tk_input(g, "x", 4, TK_I64(1, 3, 2, 2)), 3, "a", 1);
    ph_node_set_attr_int(n, "is_test", 1);
    tk_output(g, ph_node_output(n, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_BatchNormalization), 0);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 3, 2, 2));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, bn_out(then_g, x, 3, "t"));
    tk_output(else_g, bn_out(else_g, x, 3, "e"));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_BatchNormalization), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Add), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("batchnorm_to_mul_add");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, ranks_four_three_and_two);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, opset6_is_test);
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
