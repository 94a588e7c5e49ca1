/* tests/test_pass_fuse_skip_layernorm.c - fuse_skip_layernorm: residual Add
 * (+ bias) + LayerNormalization, or its decomposed form, -> com.microsoft
 * SkipLayerNormalization.  The evaluator has no com.microsoft operators, so
 * these check structure; scripts/test_ort.sh checks the numbers in ONNX
 * Runtime. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("fuse_skip_layernorm");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

#define H 8

static ph_value *scalar(ph_graph *g, const char *name, float v)
{
    ph_value *s = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, 0, NULL, &v));
    ck_assert_ptr_nonnull(s);
    return s;
}

/* How the graph is built. */
typedef struct sln_spec {
    int bias;        /* s = (a + bias) + r */
    int decomposed;  /* ReduceMean/Sub/Pow/... instead of LayerNormalization;
                      * 2: ReduceMean's axes as an input (opset 18) */
    int no_beta;     /* LayerNormalization without beta */
    int axis;        /* LayerNormalization axis (0: -1); decomposed: ReduceMean axis */
    float two;       /* decomposed: the Pow exponent (0: 2) */
    int affine;      /* decomposed: 0 Mul gamma + Add beta, 1 gamma only, 2 beta only, 3 neither */
} sln_spec;

typedef struct sln_parts {
    ph_value *a, *r, *s, *t, *y;
    ph_node *ln; /* LayerNormalization, or the last Add */
} sln_parts;

/* Decomposed layer norm of s over its last axis (keepdims), opset 13 form. */
static ph_value *decomposed(ph_graph *g, ph_value *s, const sln_spec *sp, ph_value *gamma, ph_value *beta)
{
    int64_t axis = sp->axis ? sp->axis : -1;
    ph_value *in[2] = {s, sp->decomposed == 2 ? tk_ints(g, "axes", 1, &axis) : NULL};
    ph_node *mu = tk_node(g, "ReduceMean", in[1] ? 2 : 1, in);
    if (!in[1])
        ph_node_set_attr_ints(mu, "axes", 1, &axis);
    ph_value *d = tk_op2(g, "Sub", s, ph_node_output(mu, 0));
    in[0] = tk_op2(g, "Pow", d, scalar(g, "two", sp->two ? sp->two : 2.0f));
    ph_node *v = tk_node(g, "ReduceMean", in[1] ? 2 : 1, in);
    if (!in[1])
        ph_node_set_attr_ints(v, "axes", 1, &axis);
    ph_value *sd = tk_op1(g, "Sqrt", tk_op2(g, "Add", ph_node_output(v, 0), scalar(g, "eps", 1e-3f)));
    ph_value *n = tk_op2(g, "Div", d, sd);
    if (sp->affine == 0 || sp->affine == 1)
        n = tk_op2(g, "Mul", n, gamma);
    return sp->affine == 0 || sp->affine == 2 ? tk_op2(g, "Add", n, beta) : n;
}

/* a, r [2,4,H] (Relu outputs) -> residual Add -> layer norm; the result goes
 * through Neg to the output. */
static sln_parts build(ph_graph *g, const sln_spec *sp, const char *tag)
{
    char name[32];
    sln_parts p = {0};
    snprintf(name, sizeof name, "%s_a", tag);
    p.a = tk_op1(g, "Relu", tk_input(g, name, 3, TK_I64(2, 4, H)));
    snprintf(name, sizeof name, "%s_r", tag);
    p.r = tk_op1(g, "Relu", tk_input(g, name, 3, TK_I64(2, 4, H)));
    ph_value *left = p.a;
    if (sp->bias) {
        snprintf(name, sizeof name, "%s_bias", tag);
        left = p.t = tk_op2(g, "Add", p.a, tk_init(g, name, 1, TK_I64(H), 9));
    }
    p.s = tk_op2(g, "Add", p.r, left); /* residual first, as exporters often write */
    snprintf(name, sizeof name, "%s_gamma", tag);
    ph_value *gamma = tk_init(g, name, 1, TK_I64(H), 10);
    snprintf(name, sizeof name, "%s_beta", tag);
    ph_value *beta = tk_init(g, name, 1, TK_I64(H), 11);
    if (sp->decomposed) {
        p.y = decomposed(g, p.s, sp, gamma, beta);
        p.ln = ph_value_producer(p.y);
    } else {
        ph_value *in[3] = {p.s, gamma, beta};
        p.ln = tk_node(g, "LayerNormalization", sp->no_beta ? 2 : 3, in);
        ph_node_set_attr_float(p.ln, "epsilon", 1e-3f);
        if (sp->axis)
            ph_node_set_attr_int(p.ln, "axis", sp->axis);
        p.y = ph_node_output(p.ln, 0);
    }
    tk_neg_output(g, p.y);
    return p;
}

static ph_node *find_sln(ph_graph *g)
{
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        if (strcmp(ph_node_op_type(n), "SkipLayerNormalization") == 0 &&
            strcmp(ph_node_domain(n), "com.microsoft") == 0)
            return n;
    return NULL;
}

/* The graph became Relu, Relu, SkipLayerNormalization(a, r or r, a, ...), Neg. */
static ph_node *assert_fused(ph_graph *g, const sln_parts *p, size_t n_in, size_t n_out)
{
    ph_node *n = find_sln(g);
    ck_assert_ptr_nonnull(n);
    ck_assert_uint_eq(ph_node_input_count(n), n_in);
    ck_assert_uint_eq(ph_node_output_count(n), n_out);
    ph_value *i0 = ph_node_input(n, 0), *i1 = ph_node_input(n, 1);
    ck_assert((i0 == p->a && i1 == p->r) || (i0 == p->r && i1 == p->a));
    ck_assert(ph_node_attr_float(n, "epsilon", 0) == 1e-3f);
    ck_assert_int_eq(ph_model_opset(ph_graph_model(g), "com.microsoft"), 1);
    ph_value *y = ph_node_output(n, 0);
    ck_assert_int_eq(ph_value_rank(y), 3);
    ck_assert_int_eq(ph_value_dim(y, 2), H);
    return n;
}

START_TEST(fuses_layernorm_and_decomposed)
{
    for (int decomposed = 0; decomposed < 3; decomposed++)
        for (int bias = 0; bias < 2; bias++) {
            sln_spec sp = {.bias = bias, .decomposed = decomposed, .axis = decomposed && bias ? 2 : 0};
            ph_model *m = tk_model();
            if (decomposed)
                ph_model_set_opset(m, "", decomposed == 2 ? 18 : 13);
            ph_graph *g = ph_model_graph(m);
            sln_parts p = build(g, &sp, "x");
            ck_assert_int_eq(tk_pass_run(pass, m), 1);
            char ops[128];
            ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Relu,SkipLayerNormalization,Neg");
            ph_node *n = assert_fused(g, &p, bias ? 5 : 4, 1);
            if (decomposed) /* eps came from the Add's constant */
                ck_assert(ph_node_attr_float(n, "epsilon", 0) == 1e-3f);
            tk_assert_untouched(pass, m); /* idempotent */
            ph_model_free(m);
        }
}
END_TEST

/* Decomposed without gamma and/or beta (eliminate_nop_arith drops a gamma of
 * ones and a beta of zeros): one SkipLayerNormalization, gamma of ones made
 * when missing. */
START_TEST(decomposed_affine_tails)
{
    for (int affine = 1; affine < 4; affine++)
        for (int bias = 0; bias < 2; bias++) {
            sln_spec sp = {.bias = bias, .decomposed = 1, .affine = affine};
            ph_model *m = tk_model();
            ph_model_set_opset(m, "", 13);
            ph_graph *g = ph_model_graph(m);
            sln_parts p = build(g, &sp, "x");
            ph_graph_remove_dead(g); /* gamma/beta the tail does not read */
            ck_assert_int_eq(tk_pass_run(pass, m), 1);
            char ops[128];
            ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Relu,SkipLayerNormalization,Neg");
            ph_node *n = assert_fused(g, &p, bias ? 5 : 4, 1);
            ck_assert_int_eq(ph_node_input(n, 3) != NULL, affine == 2);
            const ph_tensor *gamma = ph_value_const(ph_node_input(n, 2));
            ck_assert_ptr_nonnull(gamma);
            ck_assert_int_eq(ph_tensor_dim(gamma, 0), H);
            if (affine != 1) { /* made: all ones */
                float v[H];
                memcpy(v, ph_tensor_data(gamma), sizeof v);
                for (int i = 0; i < H; i++)
                    ck_assert(v[i] == 1.0f);
            }
            tk_assert_untouched(pass, m);
            ph_model_free(m);
        }
}
END_TEST

/* Decomposed, the normalized value also read elsewhere: the plain form fuses
 * and the Mul gamma / Add beta stay, reading its output. */
START_TEST(decomposed_normalized_read_elsewhere)
{
    sln_spec sp = {.decomposed = 1};
    ph_model *m = tk_model();
    ph_model_set_opset(m, "", 13);
    ph_graph *g = ph_model_graph(m);
    sln_parts p = build(g, &sp, "x");
    ph_value *n = ph_node_input(ph_value_producer(ph_node_input(p.ln, 0)), 0);
    tk_neg_output(g, n);
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    char ops[128];
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Relu,SkipLayerNormalization,Mul,Add,Neg,Neg");
    ph_node *sln = assert_fused(g, &p, 4, 1);
    ck_assert_ptr_null(ph_node_input(sln, 3));
    ck_assert_uint_eq(ph_value_use_count(ph_node_output(sln, 0)), 2);
    ph_model_free(m);
}
END_TEST

START_TEST(without_beta)
{
    sln_spec sp = {.no_beta = 1};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    sln_parts p = build(g, &sp, "x");
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ph_node *n = assert_fused(g, &p, 4, 1);
    ck_assert_ptr_null(ph_node_input(n, 3));
    ph_model_free(m);
}
END_TEST

/* The residual sum has other readers: they read output 3 (input_skip_bias_sum). */
START_TEST(sum_read_elsewhere)
{
    for (int variant = 0; variant < 3; variant++) {
        sln_spec sp = {.decomposed = variant == 2};
        ph_model *m = tk_model();
        if (sp.decomposed)
            ph_model_set_opset(m, "", 13);
        ph_graph *g = ph_model_graph(m);
        sln_parts p = build(g, &sp, "x");
        char sname[64];
        snprintf(sname, sizeof sname, "%s", ph_value_name(p.s));
        if (variant == 1)
            tk_output(g, p.s);
        else
            tk_neg_output(g, p.s);
        ck_assert_int_eq(tk_pass_run(pass, m), 1);
        ph_node *n = assert_fused(g, &p, 4, 4);
        ph_value *sum = ph_node_output(n, 3);
        if (variant == 1) {
            ck_assert_str_eq(ph_value_name(sum), sname); /* the graph output keeps its name */
            ck_assert_ptr_eq(ph_graph_output(g, 1), sum);
        } else {
            ck_assert_uint_eq(ph_value_use_count(sum), 1);
            ck_assert_int_eq(ph_node_op(ph_value_use(sum, 0, NULL)), PH_OP_Neg);
        }
        ck_assert_int_eq(ph_value_rank(sum), 3);
        ck_assert_uint_eq(tk_count_op(g, PH_OP_Add), 0);
        ph_model_free(m);
    }
}
END_TEST

/* The bias Add has another reader: no bias input, the biased value is the input. */
START_TEST(bias_add_read_elsewhere)
{
    sln_spec sp = {.bias = 1};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    sln_parts p = build(g, &sp, "x");
    tk_neg_output(g, p.t);
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    ph_node *n = find_sln(g);
    ck_assert_ptr_nonnull(n);
    ck_assert_uint_eq(ph_node_input_count(n), 4);
    ck_assert(ph_node_input(n, 0) == p.t || ph_node_input(n, 1) == p.t);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 12; variant++) {
        sln_spec sp = {.decomposed = variant >= 9, .axis = variant == 2 ? 1 : variant == 10 ? 1 : 0,
                       .two = variant == 9 ? 3.0f : 0};
        ph_model *m = tk_model();
        if (sp.decomposed)
            ph_model_set_opset(m, "", 13);
        ph_graph *g = ph_model_graph(m);
        sln_parts p = build(g, &sp, "x");
        switch (variant) {
        case 0: /* the residual operands differ in shape (r broadcasts) */
            ph_node_set_input(ph_value_producer(p.s), 0,
                              tk_op1(g, "Relu", tk_input(g, "r1", 3, TK_I64(1, 4, H))));
            break;
        case 1: /* rank 2 */
            ph_node_set_input(ph_value_producer(p.s), 0, tk_op1(g, "Relu", tk_input(g, "r2", 2, TK_I64(4, H))));
            ph_node_set_input(ph_value_producer(p.s), 1, tk_op1(g, "Relu", tk_input(g, "a2", 2, TK_I64(4, H))));
            break;
        case 3: /* gamma is not constant */
            ph_node_set_input(p.ln, 1, tk_input(g, "gamma_in", 1, TK_I64(H)));
            break;
        case 4: { /* the LayerNormalization's Mean output is used */
            ph_value *in[3] = {p.s, ph_node_input(p.ln, 1), ph_node_input(p.ln, 2)};
            ph_node *ln = ph_node_create(g, NULL, "LayerNormalization", 3, in, 2);
            ck_assert_int_eq(ph_value_replace(p.y, ph_node_output(ln, 0)), 0);
            ck_assert_int_eq(ph_node_remove(p.ln), 0);
            tk_neg_output(g, ph_node_output(ln, 1));
            break;
        }
        case 5: { /* H unknown (one symbolic dim: a and r provably of one shape) */
            ph_value *r3 = tk_input(g, "r3", 3, TK_I64(2, 4, -1)), *a3 = tk_input(g, "a3", 3, TK_I64(2, 4, -1));
            ph_value_set_dim_param(r3, 2, "hidden");
            ph_value_set_dim_param(a3, 2, "hidden");
            ph_node_set_input(ph_value_producer(p.s), 0, tk_op1(g, "Relu", r3));
            ph_node_set_input(ph_value_producer(p.s), 1, tk_op1(g, "Relu", a3));
            ph_graph_remove_dead(g);
            break;
        }
        case 6: { /* double */
            ph_value *a = ph_graph_add_input(g, "ad", PH_DT_DOUBLE, 3, TK_I64(2, 4, H));
            ph_value *r = ph_graph_add_input(g, "rd", PH_DT_DOUBLE, 3, TK_I64(2, 4, H));
            double gv[H] = {1, 1, 1, 1, 1, 1, 1, 1};
            ph_node_set_input(ph_value_producer(p.s), 0, a);
            ph_node_set_input(ph_value_producer(p.s), 1, r);
            ph_node_set_input(p.ln, 1, ph_graph_add_initializer(g, "gd", ph_tensor_new(PH_DT_DOUBLE, 1, TK_I64(H), gv)));
            ph_node_set_input(p.ln, 2, ph_graph_add_initializer(g, "bd", ph_tensor_new(PH_DT_DOUBLE, 1, TK_I64(H), gv)));
            ph_graph_remove_dead(g);
            break;
        }
        case 7: /* the residual sum is no Add but a Sub */
            ph_node_set_op_type(ph_value_producer(p.s), "Sub");
            break;
        case 8: /* gamma of another length than H (broadcast [1]) */
            ph_node_set_input(p.ln, 1, tk_init(g, "g1", 1, TK_I64(1), 12));
            break;
        case 11: { /* decomposed: s - mean read elsewhere */
            ph_node *div = ph_value_producer(ph_node_input(ph_value_producer(ph_node_input(p.ln, 0)), 0));
            tk_neg_output(g, ph_node_input(div, 0));
            break;
        }
        default: /* 2: axis 1; 9: Pow 3; 10: ReduceMean over axis 1 */
            break;
        }
        ck_assert_int_eq(ph_graph_toposort(g), 0); /* nodes added out of order above */
        tk_assert_untouched(pass, m);
        ck_assert_int_eq(ph_model_opset(m, "com.microsoft"), -1);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    sln_spec plain = {0}, bias = {.bias = 1};
    build(then_g, &plain, "t");
    build(else_g, &bias, "e");
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2);
    ck_assert_ptr_nonnull(find_sln(then_g));
    ck_assert_uint_eq(ph_node_input_count(find_sln(else_g)), 5);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fuse_skip_layernorm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, fuses_layernorm_and_decomposed);
    tcase_add_test(tc, decomposed_affine_tails);
    tcase_add_test(tc, decomposed_normalized_read_elsewhere);
    tcase_add_test(tc, without_beta);
    tcase_add_test(tc, sum_read_elsewhere);
    tcase_add_test(tc, bias_add_read_elsewhere);
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
