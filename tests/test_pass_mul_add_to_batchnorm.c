/* tests/test_pass_mul_add_to_batchnorm.c - mul_add_to_batchnorm (adapt, off
 * by default, loaded explicitly): per-channel Mul then Add on 4-D becomes
 * BatchNormalization. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("mul_add_to_batchnorm");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Relu(x) * a + b with a and b random constants of the given shapes (rank
 * 0: a scalar); returns the Add output, *mul the Mul output. */
static ph_value *mul_add(ph_graph *g, ph_value *x, size_t ar, const int64_t *ad, size_t br, const int64_t *bd,
                         int swap, ph_value **mul)
{
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *a = tk_init(g, "a", (int)ar, ad, 11), *b = tk_init(g, "b", (int)br, bd, 12);
    ph_value *m = swap ? tk_op2(g, "Mul", a, r) : tk_op2(g, "Mul", r, a);
    if (mul)
        *mul = m;
    return swap ? tk_op2(g, "Add", b, m) : tk_op2(g, "Add", m, b);
}

static double bn_param(const ph_graph *g, size_t input, size_t c)
{
    ph_node *bn = tk_find_op(g, PH_OP_BatchNormalization);
    ck_assert_ptr_nonnull(bn);
    const ph_tensor *t = ph_value_const(ph_node_input(bn, input));
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(ph_tensor_rank(t), 1);
    double v[16];
    ck_assert_int_eq(ph_tensor_read_f64(t, 1, ph_tensor_dims(t), v), 0);
    return v[c];
}

START_TEST(per_channel_and_scalar_constants)
{
    char ops[256];
    for (int variant = 0; variant < 3; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(2, 3, 4, 5));
        ph_value *y = variant == 0   ? mul_add(g, x, 3, TK_I64(3, 1, 1), 4, TK_I64(1, 3, 1, 1), 0, NULL)
                      : variant == 1 ? mul_add(g, x, 0, NULL, 3, TK_I64(3, 1, 1), 1, NULL)
                                     : mul_add(g, x, 4, TK_I64(1, 1, 1, 1), 0, NULL, 0, NULL);
        tk_output(g, y);
        char *name = strdup(ph_value_name(y));
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 20 + (uint64_t)variant, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,BatchNormalization");
        ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
        ph_node *bn = tk_find_op(g, PH_OP_BatchNormalization);
        ck_assert(ph_node_attr_float(bn, "epsilon", -1) == 0.0f);
        ck_assert(bn_param(g, 3, 2) == 0.0 && bn_param(g, 4, 1) == 1.0); /* mean 0, var 1 */
        ck_assert_uint_eq(ph_graph_initializer_count(g), 4);             /* a and b pruned */
        tk_assert_untouched(pass, m);                                     /* idempotent */
        free(name);
        ph_model_free(m);
    }
}
END_TEST

/* with a positive epsilon the scale is compensated */
START_TEST(epsilon_parameter)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 3, 3, 3));
    tk_output(g, mul_add(g, x, 3, TK_I64(3, 1, 1), 3, TK_I64(3, 1, 1), 0, NULL));
    pass->params = (const char *const[]){"epsilon", "0.001", NULL};
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 30, 0, NULL), 1);
    ph_node *bn = tk_find_op(g, PH_OP_BatchNormalization);
    ck_assert(ph_node_attr_float(bn, "epsilon", -1) == 0.001f);
    ph_model_free(m);
}
END_TEST

static void keep_log(void *user, ph_log_level level, const char *pass_name, const char *message)
{
    if (level == PH_LOG_ERROR)
        snprintf(user, 512, "%s", message);
}

START_TEST(bad_epsilon_fails)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_output(g, mul_add(g, tk_input(g, "x", 4, TK_I64(1, 3, 3, 3)), 0, NULL, 0, NULL, 0, NULL));
    ph_error err = {0};
    ph_params *params = ph_params_new(pass->desc->params, &err);
    ck_assert_int_eq(ph_params_set(params, "epsilon", "-1", &err), 0);
    char logged[512] = "";
    ph_ctx *ctx = ph_ctx_new(keep_log, logged);
    tk_infer(m);
    ph_ctx_begin_pass(ctx, pass->desc->name, "");
    ck_assert_int_eq(host_plugin_run(pass->plugin, g, params, ctx), PH_EINVAL);
    ck_assert_msg(strstr(ph_ctx_last_error(ctx), "parameter epsilon is -1") != NULL, "error: %s",
                  ph_ctx_last_error(ctx));
    ph_ctx_end_pass(ctx);
    ph_ctx_free(ctx);
    ph_params_free(params);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Mul), 1); /* nothing changed */
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 10; variant++) {
        ph_model *m = ph_model_new(variant == 9 ? 6 : 17);
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 4, TK_I64(2, 3, 4, 4)), *mul = NULL, *y = NULL;
        switch (variant) {
        case 0: /* the Mul output has another consumer */
            y = mul_add(g, x, 3, TK_I64(3, 1, 1), 3, TK_I64(3, 1, 1), 0, &mul);
            tk_output(g, tk_op1(g, "Neg", mul));
            break;
        case 1: /* the Mul output is a graph output */
            y = mul_add(g, x, 3, TK_I64(3, 1, 1), 3, TK_I64(3, 1, 1), 0, &mul);
            tk_output(g, mul);
            break;
        case 2: { /* the scale is not constant */
            ph_value *a = tk_input(g, "a", 3, TK_I64(3, 1, 1));
            y = tk_op2(g, "Add", tk_op2(g, "Mul", tk_op1(g, "Relu", x), a), tk_init(g, "b", 3, TK_I64(3, 1, 1), 3));
            break;
        }
        case 3: /* rank 3 */
            y = mul_add(g, tk_input(g, "u", 3, TK_I64(3, 4, 4)), 2, TK_I64(4, 1), 2, TK_I64(4, 1), 0, NULL);
            break;
        case 4: /* the channel dim unknown */
            y = mul_add(g, tk_input(g, "u", 4, TK_I64(2, -1, 4, 4)), 3, TK_I64(3, 1, 1), 0, NULL, 0, NULL);
            break;
        case 5: /* the constant varies along another axis */
            y = mul_add(g, x, 2, TK_I64(4, 1), 0, NULL, 0, NULL);
            break;
        case 6: /* the Mul would widen a channel dim of 1 to 3 */
            y = mul_add(g, tk_input(g, "u", 4, TK_I64(2, 1, 4, 4)), 3, TK_I64(3, 1, 1), 0, NULL, 0, NULL);
            break;
        case 7: /* Add then Mul is another pattern */
            y = tk_op2(g, "Mul", tk_op2(g, "Add", x, tk_init(g, "b", 0, NULL, 1)), tk_init(g, "a", 0, NULL, 2));
            break;
        case 8: { /* integers */
            ph_node *c = tk_node(g, "Cast", 1, &x);
            ph_node_set_attr_int(c, "to", PH_DT_INT32);
            ph_value *one = ph_graph_add_initializer(g, "one", ph_tensor_from_f64(PH_DT_INT32, 0, NULL, (const double[]){2}));
            y = tk_op2(g, "Add", tk_op2(g, "Mul", ph_node_output(c, 0), one), one);
            break;
        }
        case 9: /* opset 6 */
            y = mul_add(g, x, 3, TK_I64(3, 1, 1), 3, TK_I64(3, 1, 1), 0, NULL);
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
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 3, 2, 2));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, mul_add(then_g, x, 3, TK_I64(3, 1, 1), 3, TK_I64(3, 1, 1), 0, NULL));
    tk_output(else_g, mul_add(else_g, x, 0, NULL, 0, NULL, 1, NULL));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_BatchNormalization), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_BatchNormalization), 1);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Mul), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mul_add_to_batchnorm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, per_channel_and_scalar_constants);
    tcase_add_test(tc, epsilon_parameter);
    tcase_add_test(tc, bad_epsilon_fails);
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
