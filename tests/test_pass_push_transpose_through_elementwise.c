/* tests/test_pass_push_transpose_through_elementwise.c -
 * push_transpose_through_elementwise, alone and in a fixpoint with the
 * passes that cancel the Transposes it moves. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passrun.h"
#include "testkit.h"

#define NHWC TK_I64(0, 2, 3, 1)
#define NCHW TK_I64(0, 3, 1, 2)

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("push_transpose_through_elementwise");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

static void assert_perm(const ph_node *n, size_t rank, const int64_t *want)
{
    const int64_t *p;
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(ph_node_attr_ints(n, "perm", &p), (ptrdiff_t)rank);
    for (size_t i = 0; i < rank; i++)
        ck_assert_msg(p[i] == want[i], "perm[%zu] = %lld, want %lld", i, (long long)p[i],
                      (long long)want[i]);
}

/* Run the pass (numerically checked) until it changes nothing; the
 * rewrites it made in all. */
static int run_until_stable(ph_model *m, uint64_t seed)
{
    int total = 0, rc, runs = 0;
    while ((rc = tk_pass_run_eval(pass, m, seed, 0, NULL)) > 0) {
        total += rc;
        ck_assert_int_lt(++runs, 8);
    }
    return total;
}

/* Two inputs transposed the same way: two Transposes become one. */
START_TEST(binary_two_transposes_become_one)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_input(g, "a", 4, TK_I64(2, 3, 4, 5));
    ph_value *b = tk_input(g, "b", 4, TK_I64(2, 3, 1, 5)); /* broadcasts */
    ph_value *y = tk_op2(g, "Sub", tk_transpose(g, a, 4, NHWC), tk_transpose(g, b, 4, NHWC));
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Sub,Transpose");
    ph_node *sub = tk_find_op(g, PH_OP_Sub);
    ck_assert_ptr_eq(ph_node_input(sub, 0), a);
    ck_assert_ptr_eq(ph_node_input(sub, 1), b);
    assert_perm(tk_find_op(g, PH_OP_Transpose), 4, NHWC);
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name); /* output keeps its name */
    free(name);
    tk_assert_untouched(pass, m); /* idempotent: one Transpose left, nothing below */
    ph_model_free(m);
}
END_TEST

/* Transpose -> Mul(constant of lower rank) -> Relu -> Transpose: the
 * Transpose walks down (k = 1 with a Transpose below) through Mul, then
 * Relu; the constant is aligned to rank 4 and permuted. */
START_TEST(single_transpose_walks_to_the_next_one)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(2, 3, 4, 5));
    ph_value *t = tk_transpose(g, x, 4, NHWC);             /* [2,4,5,3] */
    ph_value *c = tk_init(g, "c", 2, TK_I64(5, 3), 3);      /* over W and C */
    ph_value *r = tk_op1(g, "Relu", tk_op2(g, "Mul", t, c));
    tk_output(g, tk_transpose(g, r, 4, NCHW));
    ck_assert_int_eq(run_until_stable(m, 2), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Mul,Relu,Transpose,Transpose");
    const ph_tensor *pc = ph_value_const(ph_node_input(tk_find_op(g, PH_OP_Mul), 1));
    ck_assert_ptr_nonnull(pc);
    ck_assert_uint_eq(ph_tensor_rank(pc), 4); /* [1,3,1,5] */
    ck_assert_int_eq(ph_tensor_dim(pc, 0), 1);
    ck_assert_int_eq(ph_tensor_dim(pc, 1), 3);
    ck_assert_int_eq(ph_tensor_dim(pc, 2), 1);
    ck_assert_int_eq(ph_tensor_dim(pc, 3), 5);
    ck_assert_ptr_null(ph_graph_find_value(g, "c")); /* the old constant is gone */
    tk_assert_untouched(pass, m); /* the two Transposes are for merge_consecutive_transpose */
    ph_model_free(m);
}
END_TEST

/* A one-element constant and a scalar stay as they are. */
START_TEST(one_element_constants_stay)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_input(g, "a", 3, TK_I64(2, 3, 4)), *b = tk_input(g, "b", 3, TK_I64(2, 3, 4));
    ph_value *lo = ph_graph_add_initializer(g, "lo", ph_tensor_new(PH_DT_FLOAT, 0, NULL, (float[]){-0.25f}));
    ph_value *one = tk_init(g, "one", 2, TK_I64(1, 1), 4);
    ph_value *s = tk_op2(g, "Add", tk_transpose(g, a, 3, TK_I64(2, 0, 1)), tk_transpose(g, b, 3, TK_I64(2, 0, 1)));
    ph_value *in[3] = {tk_op2(g, "Mul", s, one), lo, NULL};
    ph_value *cl = ph_node_output(tk_node(g, "Clip", 2, in), 0);
    tk_output(g, tk_transpose(g, cl, 3, TK_I64(1, 2, 0)));
    ck_assert_int_eq(run_until_stable(m, 3), 3); /* Add (k = 2), then Mul and Clip (k = 1) */
    char ops[256];
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Add,Mul,Clip,Transpose,Transpose");
    ck_assert_ptr_eq(ph_node_input(tk_find_op(g, PH_OP_Mul), 1), one);
    ck_assert_ptr_eq(ph_node_input(tk_find_op(g, PH_OP_Clip), 1), lo);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Concat of two transposed inputs and a constant: the axis moves from the
 * transposed channel axis 3 to axis P[3] = 1. */
START_TEST(concat_axis_remapped)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_input(g, "a", 4, TK_I64(1, 2, 3, 4)), *b = tk_input(g, "b", 4, TK_I64(1, 5, 3, 4));
    ph_value *c = tk_init(g, "c", 4, TK_I64(1, 3, 4, 6), 5); /* NHWC constant */
    ph_value *in[3] = {tk_transpose(g, a, 4, NHWC), c, tk_transpose(g, b, 4, NHWC)};
    ph_node *cat = tk_node(g, "Concat", 3, in);
    ph_node_set_attr_int(cat, "axis", -1);
    tk_output(g, ph_node_output(cat, 0));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Concat,Transpose");
    cat = tk_find_op(g, PH_OP_Concat);
    ck_assert_int_eq(ph_node_attr_int(cat, "axis", -9), 1);
    const ph_tensor *pc = ph_value_const(ph_node_input(cat, 1));
    ck_assert_int_eq(ph_tensor_dim(pc, 1), 6);
    ck_assert_int_eq(ph_tensor_dim(pc, 3), 4);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Mul(t, t) reads one Transpose twice: k = 1, pushed towards the
 * Transpose below; a Concat of ten Transposes becomes one. */
START_TEST(one_transpose_twice_and_many_transposes)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 4));
    ph_value *t = tk_transpose(g, x, 3, TK_I64(1, 0, 2));
    tk_output(g, tk_transpose(g, tk_op2(g, "Mul", t, t), 3, TK_I64(1, 0, 2)));
    ph_value *in[10];
    for (int i = 0; i < 10; i++)
        in[i] = tk_transpose(g, tk_op1(g, "Relu", x), 3, TK_I64(2, 0, 1));
    ph_node *cat = tk_node(g, "Concat", 10, in);
    ph_node_set_attr_int(cat, "axis", 0);
    tk_output(g, ph_node_output(cat, 0));
    ck_assert_int_eq(run_until_stable(m, 6), 2);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 3);
    ph_node *mul = tk_find_op(g, PH_OP_Mul);
    ck_assert_ptr_eq(ph_node_input(mul, 0), x);
    ck_assert_ptr_eq(ph_node_input(mul, 1), x);
    ck_assert_int_eq(ph_node_attr_int(tk_find_op(g, PH_OP_Concat), "axis", -1), 2);
    ph_model_free(m);
}
END_TEST

/* Where: a transposed bool condition, two transposed branches. */
START_TEST(where_with_three_transposes)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 3, TK_I64(2, 3, 4));
    ph_value *a = tk_input(g, "a", 3, TK_I64(2, 3, 4)), *b = tk_input(g, "b", 3, TK_I64(2, 1, 4));
    const int64_t *p = TK_I64(1, 2, 0);
    ph_value *in[3] = {tk_transpose(g, cond, 3, p), tk_transpose(g, a, 3, p), tk_transpose(g, b, 3, p)};
    tk_output(g, ph_node_output(tk_node(g, "Where", 3, in), 0));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(left_alone)
{
    for (int variant = 0; variant < 10; variant++) {
        ph_model *m = tk_model();
        ph_graph *g = ph_model_graph(m);
        ph_value *a = tk_input(g, "a", 4, TK_I64(2, 3, 4, 5)), *b = tk_input(g, "b", 4, TK_I64(2, 3, 4, 5));
        ph_value *ta = tk_transpose(g, a, 4, NHWC), *tb = tk_transpose(g, b, 4, NHWC);
        switch (variant) {
        case 0: /* a Transpose has another consumer */
            tk_output(g, tk_op2(g, "Add", ta, tb));
            tk_output(g, tk_op1(g, "Neg", ta));
            break;
        case 1: /* a Transpose output is a graph output */
            tk_output(g, tk_op2(g, "Add", ta, tb));
            tk_output(g, tb);
            break;
        case 2: /* different perms */
            tk_output(g, tk_op2(g, "Add", ta, tk_transpose(g, tk_input(g, "c", 4, TK_I64(2, 3, 5, 4)), 4,
                                                           TK_I64(0, 3, 2, 1))));
            break;
        case 3: /* an input neither transposed nor constant */
            tk_output(g, tk_op2(g, "Add", ta, tk_input(g, "c", 4, TK_I64(2, 4, 5, 3))));
            break;
        case 4: /* one Transpose and nothing below to meet: no gain */
            tk_output(g, tk_op1(g, "Relu", tk_op2(g, "Add", ta, tk_init(g, "c", 1, TK_I64(3), 1))));
            break;
        case 5: /* a constant of higher rank broadcasts the output up */
            tk_output(g, tk_transpose(g, tk_op2(g, "Add", ta, tk_init(g, "c", 5, TK_I64(2, 1, 1, 1, 3), 1)),
                                      5, TK_I64(0, 1, 4, 2, 3)));
            break;
        case 6: /* not elementwise */
            tk_output(g, tk_transpose(g, tk_op1(g, "Softmax", ta), 4, NCHW));
            break;
        case 7: /* the identity perm is for eliminate_nop_transpose */
            tk_output(g, tk_op2(g, "Add", tk_transpose(g, a, 4, TK_I64(0, 1, 2, 3)),
                                tk_transpose(g, b, 4, TK_I64(0, 1, 2, 3))));
            break;
        case 8: { /* no perm and unknown rank */
            ph_value *u = tk_input(g, "u", -1, NULL), *w = tk_input(g, "w", -1, NULL);
            tk_output(g, tk_op2(g, "Add", tk_transpose(g, u, 0, NULL), tk_transpose(g, w, 0, NULL)));
            break;
        }
        case 9: /* the path down has a second reader before the Transpose */
        {
            ph_value *r = tk_op1(g, "Relu", ta);
            tk_output(g, tk_transpose(g, r, 4, NCHW));
            tk_output(g, tk_op1(g, "Neg", r));
            tk_output(g, tb);
            break;
        }
        }
        tk_assert_untouched(pass, m);
        ph_model_free(m);
    }
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_input(g, "a", 3, TK_I64(2, 3, 4)), *b = tk_input(g, "b", 3, TK_I64(2, 3, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    const int64_t *p = TK_I64(0, 2, 1);
    ph_value *mul = tk_op2(then_g, "Mul", tk_transpose(then_g, a, 3, p), tk_transpose(then_g, b, 3, p));
    tk_output(then_g, tk_transpose(then_g, mul, 3, p));
    tk_output(else_g, tk_transpose(else_g, tk_op1(else_g, "Tanh", tk_transpose(else_g, a, 3, p)), 3, p));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    char ops[256];
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Mul,Transpose,Transpose");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Tanh,Transpose,Transpose");
    ck_assert_ptr_eq(ph_node_input(tk_find_op(then_g, PH_OP_Mul), 0), a);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The pass with the passes that remove what it brings together, run in
 * turns until none changes anything: Transpose -> Add(constant) -> Relu ->
 * inverse Transpose ends with no Transpose at all, in a few rounds. */
START_TEST(fixpoint_with_transpose_cleanup)
{
    static const char *const names[] = {"push_transpose_through_elementwise", "merge_consecutive_transpose",
                                         "eliminate_nop_transpose", "simplify_layout_chain"};
    tk_pass *passes[4] = {pass, NULL, NULL, NULL};
    size_t n = 1;
    for (size_t i = 1; i < 4; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/plugins/%s.so", PH_BUILD_DIR, names[i]);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue; /* not built in this tree: skip it */
        fclose(f);
        passes[n] = tk_pass_load(names[i]);
        passes[n++]->shapes = 1;
    }
    ck_assert_msg(n >= 2, "merge_consecutive_transpose must be built");
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(1, 3, 4, 5));
    ph_value *t = tk_transpose(g, x, 4, NHWC);
    ph_value *add = tk_op2(g, "Add", t, tk_init(g, "bias", 1, TK_I64(3), 9));
    tk_output(g, tk_transpose(g, tk_op1(g, "Relu", add), 4, NCHW));

    ph_tensor **before, **after;
    size_t nb = tk_eval_model(m, 10, &before);
    int rounds = 0, changed = 1;
    while (changed) {
        ck_assert_msg(rounds < 6, "no fixpoint after %d rounds", rounds);
        changed = 0;
        for (size_t i = 0; i < n; i++)
            changed += tk_pass_run(passes[i], m);
        rounds++;
    }
    char ops[256];
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 0);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Add,Relu");
    ck_assert_int_le(rounds, 4);
    size_t na = tk_eval_model(m, 10, &after);
    tk_assert_same(before, nb, after, na);
    tk_free_outs(before, nb);
    tk_free_outs(after, na);
    ph_model_free(m);
    for (size_t i = 1; i < n; i++)
        tk_pass_free(passes[i]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("push_transpose_through_elementwise");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, binary_two_transposes_become_one);
    tcase_add_test(tc, single_transpose_walks_to_the_next_one);
    tcase_add_test(tc, one_element_constants_stay);
    tcase_add_test(tc, concat_axis_remapped);
    tcase_add_test(tc, one_transpose_twice_and_many_transposes);
    tcase_add_test(tc, where_with_three_transposes);
    tcase_add_test(tc, left_alone);
    tcase_add_test(tc, inside_an_if_branch);
    tcase_add_test(tc, fixpoint_with_transpose_cleanup);
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
