/* tests/test_pass_fuse_bn_mul_add.c - fuse_bn_mul_add: per-channel constant
 * Mul/Div/Add/Sub after an inference BatchNormalization folded into its
 * scale and bias. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("fuse_bn_mul_add");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* A float constant of the given shape filled from a fixed list (|k| in
 * [0.6, 1.9], well away from 0 for the divisions). */
static ph_value *konst(ph_graph *g, const char *name, int rank, const int64_t *dims)
{
    static const float f[6] = {0.7f, -1.3f, 1.9f, 0.85f, -0.6f, 1.1f};
    float vals[64];
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    ck_assert_int_le(n, 64);
    for (int64_t i = 0; i < n; i++)
        vals[i] = f[i % 6];
    return ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, (size_t)rank, dims, vals));
}

/* BN(x) over C channels with constant parameters (var = 1 + |random|). */
static ph_node *bn(ph_graph *g, ph_value *x, int64_t C, const char *tag)
{
    char name[64];
    ph_value *p[5] = {x};
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%s_bn%d", tag, i);
        p[i + 1] = tk_init(g, name, 1, TK_I64(C), 10 + (uint64_t)i);
    }
    const ph_tensor *vt = ph_value_const(p[4]);
    float vals[64];
    memcpy(vals, ph_tensor_data(vt), (size_t)C * sizeof *vals);
    for (int64_t i = 0; i < C; i++)
        vals[i] = 1.0f + (vals[i] < 0 ? -vals[i] : vals[i]);
    ck_assert_int_eq(ph_value_set_const(p[4], ph_tensor_new(PH_DT_FLOAT, 1, TK_I64(C), vals)), 0);
    ph_node *n = tk_node(g, "BatchNormalization", 5, p);
    ph_node_set_attr_float(n, "epsilon", 1e-3f);
    return n;
}

START_TEST(folds_into_scale_and_bias)
{
    char ops[256];
    for (int v = 0; v < 8; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = v == 5 ? tk_input(g, "x", 2, TK_I64(2, 6)) : tk_input(g, "x", 4, TK_I64(1, 6, 3, 4));
        ph_node *b = bn(g, x, 6, "a");
        ph_value *y = ph_node_output(b, 0), *z;
        switch (v) {
        case 0: z = tk_op2(g, "Mul", y, konst(g, "k", 3, TK_I64(6, 1, 1))); break;
        case 1: z = tk_op2(g, "Add", y, konst(g, "k", 4, TK_I64(1, 6, 1, 1))); break;
        case 2: z = tk_op2(g, "Sub", y, konst(g, "k", 0, NULL)); break;
        case 3: z = tk_op2(g, "Div", y, konst(g, "k", 3, TK_I64(6, 1, 1))); break;
        case 4: z = tk_op2(g, "Mul", konst(g, "k", 1, TK_I64(1)), y); break;
        case 5: z = tk_op2(g, "Add", konst(g, "k", 1, TK_I64(6)), y); break; /* [N, C] */
        case 6: /* a chain: Mul, then Add */
            z = tk_op2(g, "Add", tk_op2(g, "Mul", y, konst(g, "k", 3, TK_I64(6, 1, 1))),
                       konst(g, "k2", 3, TK_I64(6, 1, 1)));
            break;
        default: { /* mean and var computed at run time: only scale and bias need be constant */
            ph_value *absv = tk_op1(g, "Abs", tk_input(g, "v", 1, TK_I64(6)));
            ph_value *var = tk_op2(g, "Add", absv, konst(g, "floor", 0, NULL)); /* >= 0.7 */
            ph_node_set_input(b, 3, tk_input(g, "mean", 1, TK_I64(6)));
            ph_node_set_input(b, 4, var);
            z = tk_op2(g, "Mul", y, konst(g, "k", 3, TK_I64(6, 1, 1)));
            ck_assert_int_eq(ph_graph_toposort(g), 0); /* var's nodes were added after the BN */
            break;
        }
        }
        tk_output(g, tk_op1(g, "Relu", z));
        int rc = tk_pass_run_eval(pass, m, 80 + (uint64_t)v, 0, NULL);
        if (v == 6 && rc == 1) /* the Add may be seen in the next round */
            rc += tk_pass_run_eval(pass, m, 90, 0, NULL);
        ck_assert_int_eq(rc, v == 6 ? 2 : 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops),
                         v == 7 ? "Abs,Add,BatchNormalization,Relu" : "BatchNormalization,Relu");
        ph_node *n = tk_find_op(g, PH_OP_BatchNormalization);
        ck_assert_ptr_eq(ph_node_input(n, 0), x);
        ck_assert_float_eq(ph_node_attr_float(n, "epsilon", 0), 1e-3f);
        tk_assert_untouched(pass, m); /* idempotent */
        ph_model_free(m);
    }
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 6, 3, 3));
    ph_value *z = tk_op2(g, "Mul", ph_node_output(bn(g, x, 6, "a"), 0), konst(g, "k", 3, TK_I64(6, 1, 1)));
    tk_output(g, z);
    char *name = strdup(ph_value_name(z));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 40, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int v = 0; v < 16; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = v == 7 ? tk_input(g, "x", -1, NULL) : tk_input(g, "x", 4, TK_I64(1, 6, 3, 4));
        ph_node *b = bn(g, x, 6, "a");
        ph_value *y = ph_node_output(b, 0), *k;
        const char *op = "Mul";
        switch (v) {
        case 2: k = tk_input(g, "k", 3, TK_I64(6, 1, 1)); break;        /* not constant */
        case 3: k = konst(g, "k", 4, TK_I64(1, 1, 1, 4)); break;        /* varies along W */
        case 4: k = konst(g, "k", 4, TK_I64(2, 6, 1, 1)); break;        /* widens N */
        case 5: k = konst(g, "k", 5, TK_I64(1, 1, 6, 1, 1)); break;     /* widens the rank */
        case 6: { /* an integer constant */
            int64_t vals[6] = {1, 2, 3, 4, 5, 6};
            k = ph_graph_add_initializer(g, "k", ph_tensor_new(PH_DT_INT64, 3, TK_I64(6, 1, 1), vals));
            break;
        }
        case 10: case 11: { /* a zero divisor; an infinite factor */
            float vals[6] = {1, 2, 3, 4, 5, v == 10 ? 0.0f : 1.0f / 0.0f};
            k = ph_graph_add_initializer(g, "k", ph_tensor_new(PH_DT_FLOAT, 3, TK_I64(6, 1, 1), vals));
            op = v == 10 ? "Div" : "Mul";
            break;
        }
        case 14: { /* a double constant: not the BN's dtype */
            double vals[6] = {1, 2, 3, 4, 5, 6};
            k = ph_graph_add_initializer(g, "k", ph_tensor_new(PH_DT_DOUBLE, 3, TK_I64(6, 1, 1), vals));
            break;
        }
        default: k = konst(g, "k", 3, TK_I64(6, 1, 1)); break;
        }
        if (v == 12 || v == 13) /* constant first: k / y and k - y are not folds of y */
            tk_output(g, tk_op2(g, v == 12 ? "Div" : "Sub", k, y));
        else
            tk_output(g, tk_op2(g, op, y, k));
        switch (v) {
        case 0: tk_output(g, tk_op1(g, "Relu", y)); break; /* another consumer */
        case 1: tk_output(g, y); break;                    /* a graph output */
        case 8: ph_node_set_attr_int(b, "training_mode", 1); break;
        case 9: ph_node_set_input(b, 1, tk_input(g, "s", 1, TK_I64(6))); break; /* scale not constant */
        case 15: /* legacy broadcasting (opset < 7) aligns at an axis */
            ph_node_set_attr_int(ph_value_use(y, 0, NULL), "broadcast", 1);
            ph_node_set_attr_int(ph_value_use(y, 0, NULL), "axis", 1);
            break;
        }
        if (v == 6 || v == 14) { /* such a model does not pass shape inference: declare Y's shape */
            pass->shapes = 0;
            tk_set_shape(y, 4, TK_I64(1, 6, 3, 4));
        }
        tk_assert_untouched(pass, m);
        pass->shapes = 1;
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 6, 3, 3));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    ph_value *ty = ph_node_output(bn(then_g, x, 6, "t"), 0), *ey = ph_node_output(bn(else_g, x, 6, "e"), 0);
    tk_output(then_g, tk_op2(then_g, "Mul", ty, konst(then_g, "tk", 3, TK_I64(6, 1, 1))));
    tk_output(else_g, tk_op2(else_g, "Add", ey, konst(else_g, "ek", 4, TK_I64(1, 1, 3, 1))));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1); /* the else branch's constant varies along H */
    ck_assert_uint_eq(tk_count_op(then_g, PH_OP_Mul), 0);
    ck_assert_uint_eq(tk_count_op(else_g, PH_OP_Add), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_bn_mul_add");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, folds_into_scale_and_bias);
    tcase_add_test(tc, graph_output_keeps_its_name);
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
