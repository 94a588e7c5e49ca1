/* tests/test_pass_conv1d_to_conv2d.c - conv1d_to_conv2d: connected Conv1d
 * and elementwise regions lifted to 2-D with H = 1. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("conv1d_to_conv2d");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Conv(x, w [M, C/group, k], b) {pads [1, 1]} */
static ph_node *conv1d(ph_graph *g, ph_value *x, int64_t C, int64_t M, int64_t k, int64_t group, const char *tag)
{
    char name[64];
    snprintf(name, sizeof name, "%s_w", tag);
    ph_value *in[3] = {x, tk_init(g, name, 3, TK_I64(M, C / group, k), 3)};
    snprintf(name, sizeof name, "%s_b", tag);
    in[2] = tk_init(g, name, 1, TK_I64(M), 4);
    ph_node *n = tk_node(g, "Conv", 3, in);
    ph_node_set_attr_ints(n, "pads", 2, TK_I64(k / 2, k / 2));
    if (group > 1)
        ph_node_set_attr_int(n, "group", group);
    return n;
}

/* Run the pass until it changes nothing, checking the numbers each round;
 * returns the total rewrites. */
static int run_all(ph_model *m, uint64_t seed, size_t n_sizes, const int64_t *sizes)
{
    int total = 0, rc, rounds = 0;
    while ((rc = tk_pass_run_eval(pass, m, seed, n_sizes, sizes)) > 0) {
        total += rc;
        ck_assert_int_lt(++rounds, 10);
    }
    tk_assert_untouched(pass, m);
    return total;
}

/* Every Conv of g reads a rank-4 value and no Squeeze/Unsqueeze sits
 * between two nodes of the region; returns the number of Squeezes. */
static size_t check_lifted(ph_graph *g)
{
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        if (ph_node_op(n) == PH_OP_Conv) {
            ck_assert_int_eq(ph_value_rank(ph_node_input(n, 0)), 4);
            ck_assert_int_eq(ph_tensor_rank(ph_value_const(ph_node_input(n, 1))), 4);
        }
    return tk_count_op(g, PH_OP_Squeeze);
}

START_TEST(single_conv1d)
{
    char ops[256];
    for (int v = 0; v < 3; v++) {
        ph_model *m = tk_model();
        if (v == 1)
            ph_model_set_opset(m, "", 11); /* axes as attributes */
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 3, TK_I64(2, 4, 11));
        ph_node *c = conv1d(g, x, 4, 6, 3, 2, "a");
        ph_node_set_attr_ints(c, "strides", 1, TK_I64(2));
        ph_node_set_attr_ints(c, "dilations", 1, TK_I64(2));
        ph_node_set_attr_ints(c, "kernel_shape", 1, TK_I64(3));
        ph_node_set_attr_ints(c, "pads", 2, TK_I64(1, 2));
        if (v == 2) { /* SAME_UPPER pads nothing on H = 1 */
            ph_node_remove_attr(c, "pads");
            ph_node_remove_attr(c, "dilations");
            ph_node_set_attr_string(c, "auto_pad", "SAME_UPPER");
        }
        ph_value *y = ph_node_output(c, 0);
        tk_output(g, y);
        char *name = strdup(ph_value_name(y));
        ck_assert_int_eq(run_all(m, 3, 0, NULL), 1);
        ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Unsqueeze,Conv,Squeeze");
        ph_node *conv = tk_find_op(g, PH_OP_Conv);
        const int64_t *a;
        if (v == 2) {
            ck_assert_str_eq(ph_node_attr_string(conv, "auto_pad", ""), "SAME_UPPER");
        } else {
            ck_assert_int_eq(ph_node_attr_ints(conv, "pads", &a), 4);
            ck_assert(a[0] == 0 && a[1] == 1 && a[2] == 0 && a[3] == 2);
        }
        ck_assert_int_eq(ph_node_attr_ints(conv, "strides", &a), 2);
        ck_assert(a[0] == 1 && a[1] == 2);
        ck_assert_int_eq(ph_node_attr_ints(conv, "kernel_shape", &a), 2);
        ck_assert(a[0] == 1 && a[1] == 3);
        ck_assert_int_eq(ph_node_attr_int(conv, "group", 1), 2);
        ck_assert_uint_eq(ph_node_input_count(tk_find_op(g, PH_OP_Squeeze)), v == 1 ? 1 : 2);
        ck_assert_uint_eq(check_lifted(g), 1);
        ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
        free(name);
        ph_model_free(m);
    }
}
END_TEST

/* The seed's example: P -> C1 -> LeakyRelu -> C2; P -> C3; C2 + C3. */
START_TEST(region_of_the_seed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *p = tk_relu_input(g, 3, TK_I64(-1, 4, 9), "N");
    ph_value *c1 = ph_node_output(conv1d(g, p, 4, 6, 3, 1, "c1"), 0);
    ph_value *l = tk_op1(g, "LeakyRelu", c1);
    ph_value *c2 = ph_node_output(conv1d(g, l, 6, 5, 3, 1, "c2"), 0);
    ph_value *c3 = ph_node_output(conv1d(g, p, 4, 5, 1, 1, "c3"), 0);
    tk_output(g, tk_op2(g, "Add", c2, c3));
    ck_assert_int_gt(run_all(m, 5, 2, TK_I64(1, 2)), 0);
    ck_assert_uint_eq(check_lifted(g), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Unsqueeze), 2); /* one per Conv reading P */
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Conv), 3);
    ck_assert_int_eq(ph_value_rank(ph_node_input(tk_find_op(g, PH_OP_LeakyRelu), 0)), 4);
    ck_assert_int_eq(ph_value_rank(ph_node_input(tk_find_op(g, PH_OP_Add), 0)), 4);
    ck_assert_str_eq(ph_value_dim_param(ph_graph_output(g, 0), 0), "N");
    ph_model_free(m);
}
END_TEST

/* Constants and other operands at the region's border. */
START_TEST(operands_at_the_border)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 8));
    ph_value *z = tk_input(g, "z", 3, TK_I64(2, 1, 8)); /* broadcast along channels */
    ph_value *c = ph_node_output(conv1d(g, x, 3, 4, 3, 1, "a"), 0);
    ph_value *v = tk_op2(g, "Mul", tk_init(g, "scale", 2, TK_I64(4, 1), 7), c); /* per channel */
    v = tk_op2(g, "Add", v, tk_init(g, "row", 1, TK_I64(8), 8));               /* along L */
    ph_value *clip_in[3] = {v, ph_graph_add_initializer(g, "lo", ph_tensor_new(PH_DT_FLOAT, 0, NULL, (float[]){-0.5f})),
                            ph_graph_add_initializer(g, "hi", ph_tensor_new(PH_DT_FLOAT, 0, NULL, (float[]){0.75f}))};
    v = ph_node_output(tk_node(g, "Clip", 3, clip_in), 0);
    v = tk_op2(g, "Sub", tk_init(g, "full", 3, TK_I64(1, 4, 8), 9), v); /* the region on the right */
    v = tk_op2(g, "Div", v, tk_op1(g, "Exp", z));                         /* a computed operand */
    tk_output(g, v);
    ck_assert_int_gt(run_all(m, 6, 0, NULL), 0);
    ck_assert_uint_eq(check_lifted(g), 1);
    ck_assert_int_eq(ph_value_rank(ph_node_input(tk_find_op(g, PH_OP_Div), 1)), 4);
    ck_assert_int_eq(ph_value_rank(ph_node_input(tk_find_op(g, PH_OP_Clip), 0)), 4);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Unsqueeze), 2); /* x and Exp(z) */
    ph_model_free(m);
}
END_TEST

/* A region value that is also a graph output, or read outside the region. */
START_TEST(shared_values)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(1, 2, 6));
    ph_value *c = ph_node_output(conv1d(g, x, 2, 3, 3, 1, "a"), 0);
    tk_output(g, c);
    ph_value *r = tk_op1(g, "Relu", c);
    tk_output(g, tk_op1(g, "Sigmoid", r));
    tk_output(g, tk_op2(g, "MatMul", r, tk_init(g, "w", 2, TK_I64(6, 2), 5))); /* not elementwise */
    char *name = strdup(ph_value_name(c));
    ck_assert_int_gt(run_all(m, 7, 0, NULL), 0);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_int_eq(ph_value_rank(ph_graph_output(g, 0)), 3);
    ck_assert_int_eq(ph_value_rank(ph_node_input(tk_find_op(g, PH_OP_Sigmoid), 0)), 4);
    ck_assert_int_eq(ph_value_rank(ph_node_input(tk_find_op(g, PH_OP_MatMul), 0)), 3);
    free(name);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int v = 0; v < 6; v++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *x = tk_input(g, "x", 3, TK_I64(1, 2, 6));
        switch (v) {
        case 0: /* a 2-D Conv */
            tk_output(g, ph_node_output(tk_node(g, "Conv", 2, (ph_value *[]){tk_input(g, "x4", 4, TK_I64(1, 2, 3, 3)),
                                                                          tk_init(g, "w", 4, TK_I64(2, 2, 1, 1), 3)}),
                                        0));
            break;
        case 1: /* the weight is not constant */
            tk_output(g, tk_op2(g, "Conv", x, tk_input(g, "w", 3, TK_I64(3, 2, 3))));
            break;
        case 2: /* unknown rank */
            tk_output(g, tk_op2(g, "Conv", tk_input(g, "xu", -1, NULL), tk_init(g, "w", 3, TK_I64(3, 2, 3), 3)));
            break;
        case 3: { /* a Squeeze of axis 1 before an elementwise op */
            ph_value *t = tk_op1(g, "Relu", tk_input(g, "x4", 4, TK_I64(1, 1, 2, 6)));
            tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Squeeze", t, tk_ints(g, "axes", 1, TK_I64(1)))));
            break;
        }
        case 4: { /* a Squeeze of axis 2 of a graph input: no region there */
            ph_value *t = tk_input(g, "x4", 4, TK_I64(1, 2, 1, 6));
            tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Squeeze", t, tk_ints(g, "axes", 1, TK_I64(2)))));
            break;
        }
        case 5: { /* a Squeeze without axes (drops every dim of 1) */
            ph_value *t = tk_op1(g, "Relu", tk_input(g, "x4", 4, TK_I64(1, 2, 1, 6)));
            tk_output(g, tk_op1(g, "Neg", tk_op1(g, "Squeeze", t)));
            break;
        }
        }
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

/* An operand that widens the result (rank 4) stops the region. */
START_TEST(broadcast_to_higher_rank_stops)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(1, 2, 6));
    ph_value *c = ph_node_output(conv1d(g, x, 2, 3, 3, 1, "a"), 0);
    tk_output(g, tk_op2(g, "Add", c, tk_init(g, "wide", 4, TK_I64(2, 1, 3, 6), 5)));
    ck_assert_int_eq(run_all(m, 9, 0, NULL), 1);
    ph_node *add = tk_find_op(g, PH_OP_Add);
    ck_assert_int_eq(ph_node_op(ph_value_producer(ph_node_input(add, 0))), PH_OP_Squeeze);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(1, 2, 6));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    tk_output(then_g, ph_node_output(conv1d(then_g, x, 2, 3, 3, 1, "t"), 0));
    tk_output(else_g, tk_op1(else_g, "Relu", ph_node_output(conv1d(else_g, x, 2, 3, 3, 1, "e"), 0)));
    tk_output(g, ph_node_output(iff, 0));
    /* the evaluator has no If: structure only.  Two Convs, and the Relu
     * (visited after the Convs) in the same run */
    ck_assert_int_eq(tk_pass_run(pass, m), 3);
    check_lifted(then_g);
    check_lifted(else_g);
    ck_assert_int_eq(ph_value_rank(ph_node_input(tk_find_op(else_g, PH_OP_Relu), 0)), 4);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("conv1d_to_conv2d");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, single_conv1d);
    tcase_add_test(tc, region_of_the_seed);
    tcase_add_test(tc, operands_at_the_border);
    tcase_add_test(tc, shared_values);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, broadcast_to_higher_rank_stops);
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
