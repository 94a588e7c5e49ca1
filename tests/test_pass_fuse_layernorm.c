/* tests/test_pass_fuse_layernorm.c - fuse_layernorm: the decomposed layer
 * normalization becomes LayerNormalization (opset >= 17). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("fuse_layernorm");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* How to build the chain. */
typedef struct lnopt {
    int opset18;         /* axes as an input (else attribute) */
    int n_axes;          /* 0: axes absent (all axes) */
    int64_t axes[4];     /* of the first ReduceMean */
    int64_t axes2[4];    /* of the second (n_axes2 0: same as axes) */
    int n_axes2;
    int square;          /* Mul(d, d) instead of Pow(d, 2) */
    float exponent;      /* Pow exponent (0: 2) */
    int gamma_rank, beta_rank; /* 0: none; -1: scalar of rank 0 */
    int64_t gamma_dims[4], beta_dims[4];
    int keepdims0;       /* keepdims = 0 on the second ReduceMean */
} lnopt;

static ph_value *fconst(ph_graph *g, const char *name, int rank, const int64_t *dims, float v)
{
    float vals[64];
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    ck_assert_int_le(n, 64);
    for (int64_t i = 0; i < n; i++)
        vals[i] = v + (float)i / 8;
    ph_value *c = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, (size_t)rank, dims, vals));
    ck_assert_ptr_nonnull(c);
    return c;
}

static ph_value *reduce_mean(ph_graph *g, ph_value *x, const lnopt *o, int n, const int64_t *axes)
{
    ph_value *in[2] = {x, NULL};
    if (o->opset18 && n)
        in[1] = tk_ints(g, "axes", (size_t)n, axes);
    ph_node *rm = tk_node(g, "ReduceMean", in[1] ? 2 : 1, in);
    if (!o->opset18 && n)
        ph_node_set_attr_ints(rm, "axes", (size_t)n, axes);
    return ph_node_output(rm, 0);
}

/* Parts of a built chain, for the negative cases. */
typedef struct lnparts {
    ph_value *d, *mu;
    ph_node *add_eps;
} lnparts;

/* The chain on x; parts (may be NULL) gets some of its pieces. */
static ph_value *chain(ph_graph *g, ph_value *x, const lnopt *o, lnparts *parts)
{
    ph_value *mu = reduce_mean(g, x, o, o->n_axes, o->axes);
    ph_value *d = tk_op2(g, "Sub", x, mu);
    ph_value *q = o->square ? tk_op2(g, "Mul", d, d)
                            : tk_op2(g, "Pow", d, fconst(g, "two", 0, NULL, o->exponent ? o->exponent : 2.0f));
    ph_value *v = reduce_mean(g, q, o, o->n_axes2 ? o->n_axes2 : o->n_axes, o->n_axes2 ? o->axes2 : o->axes);
    if (o->keepdims0)
        ph_node_set_attr_int(ph_value_producer(v), "keepdims", 0);
    ph_value *ve = tk_op2(g, "Add", v, fconst(g, "eps", 0, NULL, 1e-5f));
    ph_value *y = tk_op2(g, "Div", d, tk_op1(g, "Sqrt", ve));
    if (o->gamma_rank)
        y = tk_op2(g, "Mul", y, fconst(g, "gamma", o->gamma_rank < 0 ? 0 : o->gamma_rank, o->gamma_dims, 0.75f));
    if (o->beta_rank)
        y = tk_op2(g, "Add", fconst(g, "beta", o->beta_rank < 0 ? 0 : o->beta_rank, o->beta_dims, -0.25f), y);
    if (parts)
        *parts = (lnparts){d, mu, ph_value_producer(ve)};
    return y;
}

static ph_model *model(int opset, int rank, const int64_t *dims, const lnopt *o, lnparts *parts)
{
    ph_model *m = ph_model_new(opset);
    ck_assert_ptr_nonnull(m);
    ph_graph *g = ph_model_graph(m);
    tk_output(g, tk_op1(g, "Neg", chain(g, tk_relu_input(g, rank, dims, rank > 0 && dims[0] < 0 ? "batch" : NULL), o, parts)));
    return m;
}

START_TEST(fuses)
{
    static const lnopt cases[] = {
        {.n_axes = 1, .axes = {-1}, .gamma_rank = 1, .gamma_dims = {8}, .beta_rank = 1, .beta_dims = {8}},
        {.n_axes = 1, .axes = {2}, .square = 1},
        {.n_axes = 1, .axes = {-1}, .gamma_rank = 3, .gamma_dims = {1, 1, 8}},
        {.n_axes = 1, .axes = {2}, .square = 1, .beta_rank = 2, .beta_dims = {1, 8}},
        {.opset18 = 1, .n_axes = 1, .axes = {-1}, .gamma_rank = 1, .gamma_dims = {8}, .beta_rank = -1},
        {.n_axes = 2, .axes = {-1, 1}, .n_axes2 = 2, .axes2 = {1, 2}, .gamma_rank = 2, .gamma_dims = {3, 8}, .beta_rank = 1, .beta_dims = {8}},
        {.opset18 = 1, .n_axes = 2, .axes = {1, 2}, .square = 1, .gamma_rank = 1, .gamma_dims = {1}},
        {.n_axes = 0, .gamma_rank = 3, .gamma_dims = {2, 3, 8}}, /* all axes */
    };
    char ops[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const lnopt *o = &cases[i];
        ph_model *m = model(o->opset18 ? 18 : 17, 3, TK_I64(2, 3, 8), o, NULL);
        ph_graph *g = ph_model_graph(m);
        ck_assert_msg(tk_pass_run_eval(pass, m, 100 + i, 0, NULL) == 1, "case %zu", i);
        ck_assert_msg(strcmp(tk_ops(g, ops, sizeof ops), "Relu,LayerNormalization,Neg") == 0, "case %zu: %s", i, ops);
        ph_node *n = tk_find_op(g, PH_OP_LayerNormalization);
        int k = o->n_axes ? o->n_axes : 3;
        ck_assert_int_eq(ph_node_attr_int(n, "axis", 0), -k);
        ck_assert_float_eq(ph_node_attr_float(n, "epsilon", 0), 1e-5f);
        ck_assert_uint_eq(ph_node_input_count(n), o->beta_rank ? 3 : 2);
        const ph_tensor *scale = ph_value_const(ph_node_input(n, 1));
        ck_assert_ptr_nonnull(scale);
        ck_assert_uint_eq(ph_tensor_rank(scale), (size_t)k);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* A symbolic batch dim is fine: only the normalized dims must be known. */
START_TEST(symbolic_batch)
{
    lnopt o = {.n_axes = 1, .axes = {-1}, .gamma_rank = 1, .gamma_dims = {6}, .beta_rank = 1, .beta_dims = {6}};
    ph_model *m = model(17, 2, TK_I64(-1, 6), &o, NULL);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 7, 2, TK_I64(1, 4)), 1);
    ck_assert_uint_eq(tk_count_op(ph_model_graph(m), PH_OP_LayerNormalization), 1);
    ph_model_free(m);
}
END_TEST

/* gamma/beta that do not fit stay as Mul/Add after the LayerNormalization. */
START_TEST(unfit_affine_stays)
{
    static const lnopt cases[] = {
        /* gamma varies along axis 1, which is not normalized */
        {.n_axes = 1, .axes = {-1}, .gamma_rank = 2, .gamma_dims = {3, 1}, .beta_rank = 1, .beta_dims = {8}},
        /* beta widens the output to rank 4 */
        {.n_axes = 1, .axes = {-1}, .gamma_rank = 1, .gamma_dims = {8}, .beta_rank = 4, .beta_dims = {2, 1, 1, 8}},
    };
    static const char *const want[] = {"Relu,LayerNormalization,Mul,Add,Neg", "Relu,LayerNormalization,Add,Neg"};
    char ops[256];
    for (size_t i = 0; i < 2; i++) {
        ph_model *m = model(17, 3, TK_I64(2, 3, 8), &cases[i], NULL);
        ph_graph *g = ph_model_graph(m);
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 200 + i, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), want[i]);
        ph_node *n = tk_find_op(g, PH_OP_LayerNormalization);
        ck_assert_uint_eq(ph_node_input_count(n), 2);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(graph_output_keeps_its_name)
{
    lnopt o = {.n_axes = 1, .axes = {-1}, .gamma_rank = 1, .gamma_dims = {4}, .beta_rank = 1, .beta_dims = {4}};
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    ph_value *y = chain(g, tk_relu_input(g, 2, TK_I64(3, 4), NULL), &o, NULL);
    tk_output(g, y);
    char name[64];
    snprintf(name, sizeof name, "%s", ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 9, 0, NULL), 1);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(g, 0)), tk_find_op(g, PH_OP_LayerNormalization));
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int v = 0; v < 13; v++) {
        lnopt o = {.n_axes = 1, .axes = {-1}, .gamma_rank = 1, .gamma_dims = {8}, .beta_rank = 1, .beta_dims = {8}};
        int opset = 17;
        int64_t dims[3] = {2, 3, 8};
        switch (v) {
        case 0: opset = 16; break;                                     /* no LayerNormalization yet */
        case 1: o.keepdims0 = 1; break;                                /* keepdims 0 ([8, 8] below) */
        case 2: o.axes[0] = 1; break;                                  /* not the last axis */
        case 3: o.n_axes2 = 1; o.axes2[0] = 1; break;                  /* the two means differ */
        case 4: o.exponent = 3; break;                                 /* Pow 3 */
        case 5: dims[2] = -1; break;                                   /* normalized dim unknown */
        case 6: o.opset18 = 1; opset = 18; break;                      /* axes input made non-constant below */
        case 7: o.n_axes = 2; o.axes[0] = 0; o.axes[1] = 2; break;     /* axes {0, 2}: not trailing */
        default: break;
        }
        lnparts pt;
        ph_model *m = v == 1 ? model(opset, 2, TK_I64(8, 8), &o, &pt) : model(opset, 3, dims, &o, &pt);
        ph_value *d = pt.d, *mu = pt.mu;
        ph_graph *g = ph_model_graph(m);
        switch (v) {
        case 6: /* the axes of the first mean come from a graph input */
            ph_node_set_input(ph_value_producer(mu), 1, ph_graph_add_input(g, "ax", PH_DT_INT64, 1, TK_I64(1)));
            break;
        case 8: /* the Sub output has a third consumer */
            tk_output(g, d);
            break;
        case 9: /* the first mean is a graph output */
            tk_output(g, mu);
            break;
        case 10: /* eps is not constant */
            ph_node_set_input(pt.add_eps, 1, tk_input(g, "e", 0, NULL));
            break;
        case 11: /* the Sub reads another value than the mean's input */
        {
            ph_node *sub = ph_value_producer(d);
            ph_value *in = ph_node_input(sub, 0);
            ph_node *neg = ph_node_create(g, sub, "Neg", 1, &in, 1);
            ph_node_set_input(sub, 0, ph_node_output(neg, 0));
        }
            break;
        case 12: /* opset 18 with the axes still an attribute (an opset-17 model relabelled) */
            ph_model_set_opset(m, "", 18);
            break;
        default:
            break;
        }
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* double: LayerNormalization would compute in float32. */
START_TEST(double_left_alone)
{
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_op1(g, "Relu", ph_graph_add_input(g, "x", PH_DT_DOUBLE, 2, TK_I64(3, 4)));
    ph_node *mu = tk_node(g, "ReduceMean", 1, &x);
    ph_node_set_attr_ints(mu, "axes", 1, TK_I64(-1));
    ph_value *d = tk_op2(g, "Sub", x, ph_node_output(mu, 0));
    double two = 2, eps = 1e-5;
    ph_value *q = tk_op2(g, "Pow", d, ph_graph_add_initializer(g, "two", ph_tensor_new(PH_DT_DOUBLE, 0, NULL, &two)));
    ph_node *var = tk_node(g, "ReduceMean", 1, &q);
    ph_node_set_attr_ints(var, "axes", 1, TK_I64(-1));
    ph_value *e = ph_graph_add_initializer(g, "eps", ph_tensor_new(PH_DT_DOUBLE, 0, NULL, &eps));
    tk_output(g, tk_op2(g, "Div", d, tk_op1(g, "Sqrt", tk_op2(g, "Add", ph_node_output(var, 0), e))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    lnopt o = {.n_axes = 1, .axes = {-1}, .gamma_rank = 1, .gamma_dims = {4}, .beta_rank = 1, .beta_dims = {4}};
    lnopt p = {.n_axes = 1, .axes = {-1}, .square = 1};
    ph_model *m = ph_model_new(17);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_relu_input(g, 2, TK_I64(3, 4), NULL);
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, chain(then_g, x, &o, NULL));
    tk_output(else_g, chain(else_g, x, &p, NULL));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    char ops[256];
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "LayerNormalization");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "LayerNormalization");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_layernorm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, fuses);
    tcase_add_test(tc, symbolic_batch);
    tcase_add_test(tc, unfit_affine_stays);
    tcase_add_test(tc, graph_output_keeps_its_name);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, double_left_alone);
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
