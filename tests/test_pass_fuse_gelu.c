/* tests/test_pass_fuse_gelu.c - fuse_gelu: the Erf and Tanh GELU subgraphs
 * -> com.microsoft Gelu/FastGelu, or the default-domain Gelu at opset >= 20.
 * The evaluator has no com.microsoft operators, so below opset 20 these
 * check structure (scripts/test_ort.sh checks the numbers in ONNX Runtime);
 * at opset 20 the evaluator compares before and after. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("fuse_gelu");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* What each test changes in the subgraph. */
typedef struct gelu_spec {
    int tanh_form; /* 0: Erf form, 1: Tanh form */
    int alt;       /* Erf: 1 = Mul by 1/sqrt(2) (else Div by sqrt(2)); Tanh: 1 = Pow (else x*(x*x)) */
    int half;      /* 0: 0.5 last, 1: on x, 2: on (1 + ...), 3: no 0.5 (folded away) */
    float k, one, h, three, kappa, beta; /* 0: the exporters' value */
    int const_rank;                      /* rank of the 0.5 constant */
} gelu_spec;

static ph_value *scalar(ph_graph *g, float v, int rank)
{
    static const int64_t ones[4] = {1, 1, 1, 1};
    ph_value *s = ph_graph_add_initializer(g, "c", ph_tensor_new(PH_DT_FLOAT, (size_t)rank, ones, &v));
    ck_assert_ptr_nonnull(s);
    return s;
}

static float or_default(float v, float dflt) { return v != 0 ? v : dflt; }

/* Inner values of a built subgraph. */
typedef struct gelu_parts {
    ph_value *a;    /* 1 + Erf(...) or 1 + Tanh(...) */
    ph_value *cube; /* Tanh form: x^3 */
    ph_value *xa;   /* 0.5 last: x * a */
} gelu_parts;

/* The subgraph on x (parts may be NULL). */
static ph_value *gelu(ph_graph *g, ph_value *x, const gelu_spec *s, gelu_parts *parts)
{
    gelu_parts p = {0};
    ph_value *a;
    if (!s->tanh_form) {
        ph_value *d = s->alt ? tk_op2(g, "Mul", x, scalar(g, or_default(s->k, 0.7071067690849304f), 0))
                             : tk_op2(g, "Div", x, scalar(g, or_default(s->k, 1.4142135381698608f), 0));
        a = tk_op2(g, "Add", tk_op1(g, "Erf", d), scalar(g, or_default(s->one, 1.0f), 0));
    } else {
        ph_value *cube = s->alt ? tk_op2(g, "Pow", x, scalar(g, or_default(s->three, 3.0f), 0))
                                : tk_op2(g, "Mul", x, tk_op2(g, "Mul", x, x));
        p.cube = cube;
        ph_value *inner_sum = tk_op2(g, "Add", x, tk_op2(g, "Mul", scalar(g, or_default(s->kappa, 0.044715f), 0), cube));
        ph_value *u = tk_op2(g, "Mul", scalar(g, or_default(s->beta, 0.7978845834732056f), 0), inner_sum);
        a = tk_op2(g, "Add", scalar(g, or_default(s->one, 1.0f), 0), tk_op1(g, "Tanh", u));
    }
    p.a = a;
    ph_value *h = scalar(g, or_default(s->h, 0.5f), s->const_rank), *y;
    switch (s->half) {
    case 0: y = tk_op2(g, "Mul", p.xa = tk_op2(g, "Mul", x, a), h); break;
    case 1: y = tk_op2(g, "Mul", tk_op2(g, "Mul", h, x), a); break;
    case 2: y = tk_op2(g, "Mul", x, tk_op2(g, "Mul", a, h)); break;
    default: y = tk_op2(g, "Mul", x, a); ph_value_prune(h); break;
    }
    if (parts)
        *parts = p;
    return y;
}

/* x [2,5] -> Relu -> gelu -> output. */
static ph_model *model(int opset, const gelu_spec *s)
{
    ph_model *m = tk_model();
    ph_model_set_opset(m, "", opset);
    ph_graph *g = ph_model_graph(m);
    tk_output(g, gelu(g, tk_relu_input(g, 2, TK_I64(2, 5), NULL), s, NULL));
    return m;
}

START_TEST(fuses_every_form)
{
    for (int tanh_form = 0; tanh_form < 2; tanh_form++)
        for (int alt = 0; alt < 2; alt++)
            for (int half = 0; half < 3; half++) {
                gelu_spec s = {.tanh_form = tanh_form, .alt = alt, .half = half};
                ph_model *m = model(17, &s);
                ph_graph *g = ph_model_graph(m);
                ck_assert_int_eq(tk_pass_run(pass, m), 1);
                char ops[64];
                ck_assert_str_eq(tk_ops(g, ops, sizeof ops), tanh_form ? "Relu,FastGelu" : "Relu,Gelu");
                ph_node *n = ph_node_next(ph_graph_first_node(g));
                ck_assert_str_eq(ph_node_domain(n), "com.microsoft");
                ck_assert_uint_eq(ph_node_input_count(n), 1);
                ck_assert_ptr_eq(ph_node_input(n, 0), ph_node_output(ph_graph_first_node(g), 0));
                ck_assert_uint_eq(ph_graph_initializer_count(g), 0); /* the constants went with it */
                ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), 1);
                ck_assert_int_eq(ph_value_rank(ph_graph_output(g, 0)), 2);
                tk_assert_untouched(pass, m); /* idempotent */
                ph_model_free(m);
            }
}
END_TEST

/* At opset 20 the default-domain Gelu: the evaluator checks the numbers. */
START_TEST(opset20_default_domain)
{
    for (int tanh_form = 0; tanh_form < 2; tanh_form++) {
        gelu_spec s = {.tanh_form = tanh_form, .alt = 1, .half = 1};
        ph_model *m = model(20, &s);
        ph_graph *g = ph_model_graph(m);
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 7, 0, NULL), 1);
        ph_node *n = tk_find_op(g, PH_OP_Gelu);
        ck_assert_ptr_nonnull(n);
        ck_assert_str_eq(ph_node_domain(n), "");
        ck_assert_str_eq(ph_node_attr_string(n, "approximate", ""), tanh_form ? "tanh" : "none");
        ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), -1);
        ph_model_free(m);
    }
}
END_TEST

/* Constants within 1e-4 (relative) of the exact ones are accepted. */
/* x * (1 + ...) without the 0.5, as left when the optimize stage folded the
 * 0.5 into the next MatMul: Mul(Gelu(x), 2). */
START_TEST(without_the_half)
{
    for (int tanh_form = 0; tanh_form < 2; tanh_form++)
        for (int alt = 0; alt < 2; alt++) {
            gelu_spec s = {.tanh_form = tanh_form, .alt = alt, .half = 3};
            ph_model *m = model(17, &s);
            ph_graph *g = ph_model_graph(m);
            ck_assert_int_eq(tk_pass_run(pass, m), 1);
            char ops[64];
            ck_assert_str_eq(tk_ops(g, ops, sizeof ops), tanh_form ? "Relu,FastGelu,Mul" : "Relu,Gelu,Mul");
            ph_node *mul = ph_graph_last_node(g);
            const ph_tensor *two = ph_value_const(ph_node_input(mul, 1));
            ck_assert_ptr_nonnull(two);
            float v;
            memcpy(&v, ph_tensor_data(two), sizeof v);
            ck_assert(v == 2.0f);
            tk_assert_untouched(pass, m);
            ph_model_free(m);
        }
    /* x * (1 + Erf) * 0.6: no GELU with its 0.5, but twice one, scaled */
    gelu_spec s6 = {.h = 0.6f};
    ph_model *m6 = model(17, &s6);
    ck_assert_int_eq(tk_pass_run(pass, m6), 1);
    char ops6[64];
    ck_assert_str_eq(tk_ops(ph_model_graph(m6), ops6, sizeof ops6), "Relu,Gelu,Mul,Mul");
    ph_model_free(m6);
    /* at opset 20 the evaluator checks the numbers */
    for (int tanh_form = 0; tanh_form < 2; tanh_form++) {
        gelu_spec s = {.tanh_form = tanh_form, .half = 3};
        ph_model *m = model(20, &s);
        ck_assert_int_eq(tk_pass_run_eval(pass, m, 9, 0, NULL), 1);
        ck_assert_uint_eq(tk_count_op(ph_model_graph(m), PH_OP_Gelu), 1);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(tolerance)
{
    gelu_spec ok[] = {
        {.k = 1.41421f},
        {.tanh_form = 1, .beta = 0.79788f, .kappa = 0.0447151f},
        {.h = 0.50004f},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ph_model *m = model(17, &ok[i]);
        ck_assert_int_eq(tk_pass_run(pass, m), 1);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(left_alone)
{
    gelu_spec bad[] = {
        {.h = 0.6f, .half = 1},                     /* not 0.5 (on x) */
        {.h = 0.6f, .half = 2},                     /* not 0.5 (on 1 + Erf) */
        {.k = 1.5f},                                /* not sqrt(2) */
        {.alt = 1, .k = 1.4142135f},                /* Mul by sqrt(2) instead of 1/sqrt(2) */
        {.one = 1.001f},                            /* outside the tolerance */
        {.tanh_form = 1, .kappa = 0.05f},           /* not 0.044715 */
        {.tanh_form = 1, .beta = 0.8f},             /* not sqrt(2/pi) */
        {.tanh_form = 1, .alt = 1, .three = 3.0001f}, /* Pow exponent must be exactly 3 */
        {.const_rank = 3},                          /* 0.5 of shape [1,1,1] broadcasts [2,5] up */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ph_model *m = model(17, &bad[i]);
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
    for (int variant = 0; variant < 5; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        gelu_spec s = {.tanh_form = variant == 4};
        ph_value *x = variant == 2 ? ph_graph_add_input(g, "x", PH_DT_UNDEFINED, -1, NULL)
                                   : tk_relu_input(g, 2, TK_I64(2, 5), NULL);
        gelu_parts parts;
        tk_output(g, gelu(g, x, &s, &parts));
        switch (variant) {
        case 0: /* an intermediate value has another consumer */
            tk_neg_output(g, parts.a);
            break;
        case 1: /* an intermediate value is a graph output */
            tk_output(g, parts.a);
            break;
        case 3: /* x * a * 0.5 where the x multiplied is another value than the one in Erf */
            ph_node_set_input(ph_value_producer(parts.xa), 0, tk_input(g, "other", 2, TK_I64(2, 5)));
            break;
        case 4: /* the Tanh form with the cube read elsewhere */
            tk_neg_output(g, parts.cube);
            break;
        default: /* 2: dtype unknown */
            break;
        }
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(double_is_left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_DOUBLE, 2, TK_I64(2, 5));
    double k = 1.4142135623730951, one = 1, h = 0.5;
    ph_value *d = tk_op2(g, "Div", x, ph_graph_add_initializer(g, "k", ph_tensor_new(PH_DT_DOUBLE, 0, NULL, &k)));
    ph_value *a = tk_op2(g, "Add", tk_op1(g, "Erf", d),
                         ph_graph_add_initializer(g, "one", ph_tensor_new(PH_DT_DOUBLE, 0, NULL, &one)));
    ph_value *y = tk_op2(g, "Mul", tk_op2(g, "Mul", x, a),
                         ph_graph_add_initializer(g, "h", ph_tensor_new(PH_DT_DOUBLE, 0, NULL, &h)));
    tk_output(g, y);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 5));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    gelu_spec erf = {.half = 2}, tanh_spec = {.tanh_form = 1, .alt = 1};
    tk_output(then_g, gelu(then_g, x, &erf, NULL));
    tk_output(else_g, gelu(else_g, x, &tanh_spec, NULL));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    char ops[64];
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Gelu");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "FastGelu");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(then_g), 0), x);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_gelu");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, fuses_every_form);
    tcase_add_test(tc, opset20_default_domain);
    tcase_add_test(tc, without_the_half);
    tcase_add_test(tc, tolerance);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, double_is_left_alone);
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
