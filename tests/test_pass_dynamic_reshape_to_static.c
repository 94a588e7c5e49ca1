/* tests/test_pass_dynamic_reshape_to_static.c - the dynamic_reshape_to_static pass. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("dynamic_reshape_to_static");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Graph input x of float[dims] with names[i] naming dim i (NULL: static). */
static ph_value *sym_input(ph_graph *g, const char *name, int rank, const int64_t *dims, const char *const *names)
{
    ph_value *x = tk_input(g, name, rank, dims);
    for (int i = 0; i < rank; i++)
        if (names && names[i])
            ck_assert_int_eq(ph_value_set_dim_param(x, i, names[i]), 0);
    return x;
}

/* Unsqueeze(Gather(Shape(x), k), [0]): dim k of x as a 1-element vector, the
 * way PyTorch exports x.size(k). */
static ph_value *dim_of(ph_graph *g, ph_value *shape, int64_t k)
{
    ph_tensor *t = ph_tensor_new(PH_DT_INT64, 0, NULL, &k);
    ck_assert_ptr_nonnull(t);
    ph_value *idx = ph_graph_add_initializer(g, "idx", t);
    ck_assert_ptr_nonnull(idx);
    ph_value *s = tk_op2(g, "Gather", shape, idx);
    return tk_op2(g, "Unsqueeze", s, tk_ints(g, "axes", 1, TK_I64(0)));
}

static ph_value *concat0(ph_graph *g, size_t n, ph_value *const *in)
{
    ph_node *c = tk_node(g, "Concat", n, in);
    ck_assert_int_eq(ph_node_set_attr_int(c, "axis", 0), 0);
    return ph_node_output(c, 0);
}

/* The constant the Reshape reads now equals want (n entries). */
static void expect_target(const ph_node *reshape, size_t n, const int64_t *want)
{
    const ph_tensor *t = ph_value_const(ph_node_input(reshape, 1));
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_INT64);
    ck_assert_int_eq(ph_tensor_rank(t), 1);
    ck_assert_int_eq(ph_tensor_dim(t, 0), (int64_t)n);
    const int64_t *v = ph_tensor_data(t);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(v[i] == want[i], "target[%zu] = %lld, want %lld", i, (long long)v[i], (long long)want[i]);
}

/* x [batch,seq,8] -> Reshape(x, Concat(size(0), size(1), [2], [4])):
 * [0, 0, 2, 4], and the Shape/Gather/Unsqueeze/Concat chain goes. */
START_TEST(copied_dims_become_zero)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = sym_input(g, "x", 3, TK_I64(-1, -1, 8), (const char *[]){"batch", "seq", NULL});
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *shape = tk_op1(g, "Shape", r);
    ph_value *parts[3] = {dim_of(g, shape, 0), dim_of(g, shape, 1), tk_ints(g, "tail", 2, TK_I64(2, 4))};
    ph_node *re = tk_node(g, "Reshape", 2, (ph_value *[]){r, concat0(g, 3, parts)});
    tk_output(g, tk_op1(g, "Neg", ph_node_output(re, 0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 2, TK_I64(1, 3)), 1);
    expect_target(tk_find_op(g, PH_OP_Reshape), 4, TK_I64(0, 0, 2, 4)); /* the pass replaced it */
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Reshape,Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    ck_assert_int_eq(tk_pass_run(pass, m), 0);
    ph_model_free(m);
}
END_TEST

/* [batch*seq, 8] with allow_minus_one (the default): the product is not a
 * dim of x, so it becomes -1. */
START_TEST(one_unknown_becomes_minus_one)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = sym_input(g, "x", 3, TK_I64(-1, -1, 8), (const char *[]){"batch", "seq", NULL});
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *shape = tk_op1(g, "Shape", r);
    ph_value *bs = tk_op2(g, "Mul", dim_of(g, shape, 0), dim_of(g, shape, 1));
    ph_value *parts[2] = {bs, tk_ints(g, "c", 1, TK_I64(8))};
    ph_node *re = tk_node(g, "Reshape", 2, (ph_value *[]){r, concat0(g, 2, parts)});
    tk_output(g, tk_op1(g, "Neg", ph_node_output(re, 0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 3, TK_I64(1, 2, 5)), 1);
    expect_target(tk_find_op(g, PH_OP_Reshape), 2, TK_I64(-1, 8));
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Shape), 0);
    ph_model_free(m);
}
END_TEST

/* An OCR recognizer's x.reshape(b, c * h, w) on x [batch, 32, 2, width]:
 * Shape -> Gather -> Unsqueeze -> Concat of batch, 64 and width, where
 * width sits at another position than in x: [0, 64, -1] by default, and
 * the chain goes. */
START_TEST(crnn_reshape_chain_removed_by_default)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = sym_input(g, "x", 4, TK_I64(-1, 32, 2, -1), (const char *[]){"batch", NULL, NULL, "width"});
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *shape = tk_op1(g, "Shape", r);
    ph_value *parts[3] = {dim_of(g, shape, 0), tk_ints(g, "ch", 1, TK_I64(64)), dim_of(g, shape, 3)};
    ph_node *re = tk_node(g, "Reshape", 2, (ph_value *[]){r, concat0(g, 3, parts)});
    tk_output(g, tk_op1(g, "Neg", ph_node_output(re, 0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 2, TK_I64(1, 3)), 1);
    expect_target(tk_find_op(g, PH_OP_Reshape), 3, TK_I64(0, 64, -1));
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Reshape,Neg");
    ph_model_free(m);
}
END_TEST

/* Static input: every entry is a number. */
START_TEST(static_input_all_numbers)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(2, 3, 8)));
    ph_value *shape = tk_op1(g, "Shape", r);
    ph_value *parts[3] = {dim_of(g, shape, 1), dim_of(g, shape, 0), tk_ints(g, "c", 1, TK_I64(8))};
    ph_node *re = tk_node(g, "Reshape", 2, (ph_value *[]){r, concat0(g, 3, parts)});
    tk_output(g, tk_op1(g, "Neg", ph_node_output(re, 0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    expect_target(tk_find_op(g, PH_OP_Reshape), 3, TK_I64(3, 2, 8));
    ph_model_free(m);
}
END_TEST

/* allow_minus_one = false (for models run on empty tensors): the
 * [batch*seq, 8] target stays dynamic. */
START_TEST(minus_one_not_allowed_kept)
{
    static const char *const no_minus[] = {"allow_minus_one", "false", NULL};
    pass->params = no_minus;
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = sym_input(g, "x", 3, TK_I64(-1, -1, 8), (const char *[]){"batch", "seq", NULL});
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *shape = tk_op1(g, "Shape", r);
    ph_value *bs = tk_op2(g, "Mul", dim_of(g, shape, 0), dim_of(g, shape, 1));
    ph_value *parts[2] = {bs, tk_ints(g, "c", 1, TK_I64(8))};
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Reshape", r, concat0(g, 2, parts))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Two Reshapes share the computed shape; the shape is also a graph output,
 * so the chain stays for it while both Reshapes read constants. */
START_TEST(shared_shape_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = sym_input(g, "x", 2, TK_I64(-1, 8), (const char *[]){"batch", NULL});
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *parts[2] = {dim_of(g, tk_op1(g, "Shape", r), 0), tk_ints(g, "c", 2, TK_I64(2, 4))};
    ph_value *shape = concat0(g, 2, parts);
    ph_node *a = tk_node(g, "Reshape", 2, (ph_value *[]){r, shape});
    ph_node *b = tk_node(g, "Reshape", 2, (ph_value *[]){tk_op1(g, "Neg", r), shape});
    tk_output(g, ph_node_output(a, 0));
    tk_output(g, ph_node_output(b, 0));
    tk_output(g, shape);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 2, TK_I64(1, 3)), 2);
    expect_target(ph_value_producer(ph_graph_output(g, 0)), 3, TK_I64(0, 2, 4)); /* replaced */
    expect_target(ph_value_producer(ph_graph_output(g, 1)), 3, TK_I64(0, 2, 4));
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Shape), 1);
    ph_model_free(m);
}
END_TEST

/* ---- negative cases */

/* [seq, batch, 8] on x [batch, seq, 8]: both symbols sit at other
 * positions, two unknowns. */
START_TEST(swapped_symbols_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = sym_input(g, "x", 3, TK_I64(-1, -1, 8), (const char *[]){"batch", "seq", NULL});
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *shape = tk_op1(g, "Shape", r);
    ph_value *parts[3] = {dim_of(g, shape, 1), dim_of(g, shape, 0), tk_ints(g, "c", 1, TK_I64(8))};
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Reshape", r, concat0(g, 3, parts))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* allowzero = 1: a symbolic entry cannot become 0, and two are left. */
START_TEST(allowzero_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = sym_input(g, "x", 3, TK_I64(-1, -1, 8), (const char *[]){"batch", "seq", NULL});
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *shape = tk_op1(g, "Shape", r);
    ph_value *parts[3] = {dim_of(g, shape, 0), dim_of(g, shape, 1), tk_ints(g, "c", 1, TK_I64(8))};
    ph_node *re = tk_node(g, "Reshape", 2, (ph_value *[]){r, concat0(g, 3, parts)});
    ck_assert_int_eq(ph_node_set_attr_int(re, "allowzero", 1), 0);
    tk_output(g, tk_op1(g, "Neg", ph_node_output(re, 0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* One unknown besides a -1 already there. */
START_TEST(unknown_next_to_minus_one_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = sym_input(g, "x", 3, TK_I64(-1, -1, 8), (const char *[]){"batch", "seq", NULL});
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *shape = tk_op1(g, "Shape", r);
    ph_value *parts[2] = {dim_of(g, shape, 1), tk_ints(g, "c", 1, TK_I64(-1))};
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Reshape", r, concat0(g, 2, parts))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(runtime_shape_input_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(2, 8)));
    ph_value *t = ph_graph_add_input(g, "t", PH_DT_INT64, 1, TK_I64(2));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Reshape", r, t)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Computed from a run-time value, not from shapes. */
START_TEST(data_dependent_shape_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(2, 8)));
    ph_value *t = ph_graph_add_input(g, "t", PH_DT_INT64, 1, TK_I64(2));
    ph_value *t2 = tk_op2(g, "Add", t, tk_ints(g, "zero", 2, TK_I64(0, 0)));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Reshape", r, t2)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(already_constant_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(2, 8)));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Reshape", r, tk_ints(g, "t", 2, TK_I64(4, 4)))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* x of unknown rank: Shape(x) has unknown length. */
START_TEST(unknown_rank_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", -1, NULL));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Reshape", r, tk_op1(g, "Shape", r))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_dynamic_reshape_to_static");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, copied_dims_become_zero);
    tcase_add_test(tc, one_unknown_becomes_minus_one);
    tcase_add_test(tc, crnn_reshape_chain_removed_by_default);
    tcase_add_test(tc, static_input_all_numbers);
    tcase_add_test(tc, shared_shape_graph_output_kept);
    tcase_add_test(tc, minus_one_not_allowed_kept);
    tcase_add_test(tc, swapped_symbols_kept);
    tcase_add_test(tc, allowzero_kept);
    tcase_add_test(tc, unknown_next_to_minus_one_kept);
    tcase_add_test(tc, runtime_shape_input_kept);
    tcase_add_test(tc, data_dependent_shape_kept);
    tcase_add_test(tc, already_constant_kept);
    tcase_add_test(tc, unknown_rank_kept);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
