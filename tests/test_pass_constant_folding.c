/* tests/test_pass_constant_folding.c - the constant_folding pass.
 *
 * Numeric checks use the SDK evaluator (ph_eval_run) before and after the
 * pass on the same seeded inputs and require bit-identical outputs: the
 * pass is exact, and folding runs the very kernels the evaluator runs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passrun.h"
#include "pbwire.h"
#include "testkit.h"

static tk_pass *pass;

static void setup(void) { pass = tk_pass_load("constant_folding"); }
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}


/* Like tk_assert_untouched, with a parameter and a log capture. */
static void assert_untouched_with(const tk_pass *p, ph_model *m, const char *param, const char *value,
                                  tk_logcap *cap)
{
    ph_graph *g = ph_model_graph(m);
    size_t nodes = ph_model_node_count(m), inits = ph_graph_initializer_count(g);
    char *before = tk_graph_sig(g);
    int rc = tk_run_with(p, m, param, value, cap);
    char *after = tk_graph_sig(g);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strcmp(before, after) == 0, "graph changed:\n--- before\n%s--- after\n%s", before, after);
    ck_assert_uint_eq(ph_model_node_count(m), nodes);
    ck_assert_uint_eq(ph_graph_initializer_count(g), inits);
    free(before);
    free(after);
}

static ph_value *i64_init(ph_graph *g, const char *name, size_t rank, const int64_t *dims, const int64_t *vals)
{
    ph_value *v = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_INT64, rank, dims, vals));
    ck_assert_ptr_nonnull(v);
    return v;
}

static ph_value *f32_init(ph_graph *g, const char *name, size_t rank, const int64_t *dims, const float *vals)
{
    ph_value *v = ph_graph_add_initializer(g, name, ph_tensor_new(PH_DT_FLOAT, rank, dims, vals));
    ck_assert_ptr_nonnull(v);
    return v;
}

/* A Constant node holding value_ints. */
static ph_value *const_ints(ph_graph *g, size_t n, const int64_t *vals)
{
    ph_node *c = ph_node_create(g, NULL, "Constant", 0, NULL, 1);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(ph_node_set_attr_ints(c, "value_ints", n, vals), 0);
    return ph_node_output(c, 0);
}

static const int64_t *const_data_i64(const ph_value *v, size_t *count)
{
    const ph_tensor *t = ph_value_const(v);
    ck_assert_msg(t != NULL, "'%s' is not a constant", ph_value_name(v));
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_INT64);
    *count = (size_t)ph_tensor_numel(t);
    return ph_tensor_data(t);
}

/* ------------------------------------------------------------ positive */

/* Add(w1, w2) -> Mul(., w3) -> Add(x, .): both constant nodes fold, the
 * three weights only fed them and are pruned. */
START_TEST(folds_constant_chain)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *w1 = tk_init(g, "w1", 2, TK_I64(2, 3), 1), *w2 = tk_init(g, "w2", 2, TK_I64(2, 3), 2);
    ph_value *w3 = tk_init(g, "w3", 1, TK_I64(3), 3);
    ph_value *c = tk_op2(g, "Mul", tk_op2(g, "Add", w1, w2), w3);
    tk_output(g, tk_op2(g, "Add", x, c));

    ck_assert_int_eq(tk_run_checked(pass, m, 11, NULL, NULL, NULL), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Add");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    ph_value *folded = ph_node_input(ph_graph_first_node(g), 1);
    ck_assert_ptr_nonnull(ph_value_const(folded));
    ck_assert_int_eq(ph_tensor_dim(ph_value_const(folded), 0), 2);
    ck_assert_int_eq(ph_tensor_dim(ph_value_const(folded), 1), 3);
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 0); /* fixpoint */
    ph_model_free(m);
}
END_TEST

/* The required case: Shape -> Gather -> Unsqueeze -> Concat ->
 * Reshape's shape input on a static shape.  The indices, axes and the -1
 * come from Constant nodes, so the whole chain folds in one call; the
 * Reshape's data is the graph input, so the Reshape stays. */
START_TEST(folds_shape_gather_concat_reshape)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 4));
    ph_value *shape = tk_op1(g, "Shape", x);
    ph_value *d0 = tk_op2(g, "Gather", shape, const_ints(g, 1, TK_I64(0)));
    ph_value *d1 = tk_op2(g, "Gather", shape, const_ints(g, 1, TK_I64(1)));
    ph_value *prod = tk_op2(g, "Mul", d0, d1);
    ph_value *minus1 = const_ints(g, 1, TK_I64(-1));
    ph_value *cat_in[2] = {prod, minus1};
    ph_node *cat = tk_node(g, "Concat", 2, cat_in);
    ck_assert_int_eq(ph_node_set_attr_int(cat, "axis", 0), 0);
    ph_node *rs = tk_node(g, "Reshape", 2, (ph_value *[]){x, ph_node_output(cat, 0)});
    tk_output(g, tk_op1(g, "Relu", ph_node_output(rs, 0)));

    /* 3 Constants, Shape, 2 Gathers, Mul, Concat */
    ck_assert_int_eq(tk_run_checked(pass, m, 12, NULL, NULL, NULL), 8);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Reshape,Relu");
    ck_assert_ptr_eq(ph_node_input(rs, 0), x);
    size_t n;
    const int64_t *s = const_data_i64(ph_node_input(rs, 1), &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(s[0], 6);
    ck_assert_int_eq(s[1], -1);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 1);
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 0);
    ph_model_free(m);
}
END_TEST

/* The same chain behind a Relu whose output has no declared type: shape
 * inference supplies it, and the Reshape's data stays non-constant. */
START_TEST(folds_shape_chain_after_inference)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 4));
    ph_value *r = tk_op1(g, "Relu", x);
    ph_value *shape = tk_op1(g, "Shape", r);
    ph_value *d2 = tk_op2(g, "Gather", shape, i64_init(g, "idx", 0, NULL, TK_I64(2)));
    ph_node *uq = tk_node(g, "Unsqueeze", 2, (ph_value *[]){d2, i64_init(g, "axes", 1, TK_I64(1), TK_I64(0))});
    ph_value *cat_in[2] = {i64_init(g, "lead", 1, TK_I64(1), TK_I64(-1)), ph_node_output(uq, 0)};
    ph_node *cat = tk_node(g, "Concat", 2, cat_in);
    ck_assert_int_eq(ph_node_set_attr_int(cat, "axis", 0), 0);
    ph_node *rs = tk_node(g, "Reshape", 2, (ph_value *[]){r, ph_node_output(cat, 0)});
    tk_output(g, ph_node_output(rs, 0));

    ck_assert_int_eq(ph_value_rank(r), -1);
    assert_untouched_with(pass, m, NULL, NULL, NULL); /* shape of r unknown */
    ph_error err = {0};
    ck_assert_msg(ph_graph_infer_shapes(g, &err) == 0, "%s", err.message);
    ck_assert_int_eq(ph_value_shape_known(r), 1);

    ck_assert_int_eq(tk_run_checked(pass, m, 13, NULL, NULL, NULL), 4);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Reshape");
    size_t n;
    const int64_t *s = const_data_i64(ph_node_input(rs, 1), &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(s[0], -1);
    ck_assert_int_eq(s[1], 4);
    ph_model_free(m);
}
END_TEST

/* Shape with start: only dims 1.. must be known; Size needs all of them. */
START_TEST(shape_slice_of_partly_known_shape)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(-1, 3, 4));
    ph_node *sh = tk_node(g, "Shape", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_int(sh, "start", 1), 0);
    ph_value *sz = tk_op1(g, "Size", x);
    ph_node *full = tk_node(g, "Shape", 1, &x);
    ph_value *cat_in[3] = {ph_node_output(sh, 0), ph_node_output(full, 0),
                           tk_op1(g, "Shape", tk_op1(g, "Relu", x))};
    ph_node *cat = tk_node(g, "Concat", 3, cat_in);
    ck_assert_int_eq(ph_node_set_attr_int(cat, "axis", 0), 0);
    tk_output(g, ph_node_output(cat, 0));
    tk_output(g, tk_op2(g, "Add", sz, i64_init(g, "one", 0, NULL, TK_I64(1))));

    /* only Shape(start=1) folds: its dims are [3, 4] */
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Size,Shape,Relu,Shape,Concat,Add");
    size_t n;
    const int64_t *s = const_data_i64(ph_node_input(cat, 0), &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(s[0], 3);
    ck_assert_int_eq(s[1], 4);
    ph_model_free(m);
}
END_TEST

/* x[batch, 3, 4]: Gather(Shape(x), 2) is 4 whatever batch is; the chain
 * behind it folds, the Gather of dim 0 stays.
 *   Reshape(x, Concat([-1], Unsqueeze(Gather(Shape(x), 2))))   -> folds
 *   Concat(Gather(Shape(x), [0]), Gather(Shape(x), [1]))      -> 2nd Gather only */
static void build_partial(ph_model *m)
{
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(-1, 3, 4));
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "batch"), 0);
    ph_value *shape = tk_op1(g, "Shape", x);
    ph_value *d2 = tk_op2(g, "Gather", shape, i64_init(g, "i2", 0, NULL, TK_I64(2)));
    ph_node *uq = tk_node(g, "Unsqueeze", 2, (ph_value *[]){d2, i64_init(g, "axes", 1, TK_I64(1), TK_I64(0))});
    ph_node *cat = tk_node(g, "Concat", 2, (ph_value *[]){i64_init(g, "m1", 1, TK_I64(1), TK_I64(-1)),
                                                          ph_node_output(uq, 0)});
    ck_assert_int_eq(ph_node_set_attr_int(cat, "axis", 0), 0);
    tk_output(g, ph_node_output(tk_node(g, "Reshape", 2, (ph_value *[]){x, ph_node_output(cat, 0)}), 0));
    ph_value *b = tk_op2(g, "Gather", shape, i64_init(g, "i0", 1, TK_I64(1), TK_I64(0)));
    ph_value *c = tk_op2(g, "Gather", shape, i64_init(g, "i1", 1, TK_I64(1), TK_I64(1)));
    ph_node *cat2 = tk_node(g, "Concat", 2, (ph_value *[]){b, c});
    ck_assert_int_eq(ph_node_set_attr_int(cat2, "axis", 0), 0);
    ph_node *cast = tk_node(g, "Cast", 1, (ph_value *[]){ph_node_output(cat2, 0)});
    ck_assert_int_eq(ph_node_set_attr_int(cast, "to", PH_DT_FLOAT), 0);
    tk_output(g, ph_node_output(cast, 0));
}

START_TEST(partly_known_shape_folds_known_dims)
{
    char ops[256];
    ph_model *m = tk_model(), *orig = tk_model();
    build_partial(m);
    build_partial(orig);
    ph_graph *g = ph_model_graph(m);
    /* Gather(., 2), Unsqueeze, Concat, Gather(., [1]) */
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 4);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Shape,Reshape,Gather,Concat,Cast");
    ph_node *rs = tk_find_op(g, PH_OP_Reshape);
    size_t n;
    const int64_t *v = const_data_i64(ph_node_input(rs, 1), &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(v[0], -1);
    ck_assert_int_eq(v[1], 4);
    v = const_data_i64(ph_node_input(tk_find_op(g, PH_OP_Concat), 1), &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(v[0], 3);
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 0);

    /* same results as the original at batch 5 */
    ph_error err = {0};
    ck_assert_int_eq(ph_graph_set_input_shape(g, "x", 3, TK_I64(5, 3, 4), &err), 0);
    ck_assert_int_eq(ph_graph_set_input_shape(ph_model_graph(orig), "x", 3, TK_I64(5, 3, 4), &err), 0);
    ph_tensor **before, **after;
    size_t nb = tk_eval_model(orig, 31, &before), na = tk_eval_model(m, 31, &after);
    tk_assert_same(before, nb, after, na);
    tk_free_outs(before, nb);
    tk_free_outs(after, na);
    ph_model_free(orig);
    ph_model_free(m);
}
END_TEST

START_TEST(size_of_static_shape)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 3, 4));
    ph_value *sz = tk_op1(g, "Size", x);
    ph_node *cast = tk_node(g, "Cast", 1, &sz);
    ck_assert_int_eq(ph_node_set_attr_int(cast, "to", PH_DT_FLOAT), 0);
    tk_output(g, tk_op2(g, "Mul", x, ph_node_output(cast, 0)));

    ck_assert_int_eq(tk_run_checked(pass, m, 14, NULL, NULL, NULL), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Mul");
    const ph_tensor *t = ph_value_const(ph_node_input(ph_graph_first_node(g), 1));
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ph_tensor_dtype(t), PH_DT_FLOAT);
    ck_assert_float_eq(*(const float *)ph_tensor_data(t), 24.0f);
    ph_model_free(m);
}
END_TEST

/* A constant input also read by a node that stays is kept; only what fed
 * the folded node alone is pruned. */
START_TEST(shared_constant_stays_for_other_consumers)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *w = tk_init(g, "w", 2, TK_I64(2, 3), 5);
    ph_value *neg = tk_op1(g, "Neg", w);
    tk_output(g, tk_op2(g, "Add", tk_op2(g, "Mul", x, w), neg));

    ck_assert_int_eq(tk_run_checked(pass, m, 15, NULL, NULL, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Mul,Add");
    ck_assert_ptr_eq(ph_node_input(ph_graph_first_node(g), 1), w);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 2);
    ph_model_free(m);
}
END_TEST

/* Multi-output node: Split of a constant; an unused output gets no
 * initializer. */
START_TEST(folds_split_outputs)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(2));
    ph_value *w = tk_init(g, "w", 1, TK_I64(6), 6);
    ph_node *sp = ph_node_create(g, NULL, "Split", 1, &w, 3);
    ck_assert_ptr_nonnull(sp);
    ck_assert_int_eq(ph_node_set_attr_int(sp, "axis", 0), 0);
    tk_output(g, tk_op2(g, "Add", x, ph_node_output(sp, 0)));
    tk_output(g, tk_op2(g, "Sub", x, ph_node_output(sp, 2)));

    ck_assert_int_eq(tk_run_checked(pass, m, 16, NULL, NULL, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Add,Sub");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 2);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ negative */

START_TEST(non_constant_operand_is_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *w = tk_init(g, "w", 2, TK_I64(2, 3), 7);
    tk_output(g, tk_op1(g, "Relu", tk_op2(g, "Add", x, w)));
    assert_untouched_with(pass, m, NULL, NULL, NULL);
    ph_model_free(m);
}
END_TEST

START_TEST(unknown_shape_is_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(-1, 3, 4));
    ph_value *shape = tk_op1(g, "Shape", x);
    ph_value *d0 = tk_op2(g, "Gather", shape, i64_init(g, "idx", 1, TK_I64(1), TK_I64(0)));
    ph_value *cat_in[2] = {d0, i64_init(g, "rest", 1, TK_I64(1), TK_I64(-1))};
    ph_node *cat = tk_node(g, "Concat", 2, cat_in);
    ck_assert_int_eq(ph_node_set_attr_int(cat, "axis", 0), 0);
    tk_output(g, ph_node_output(tk_node(g, "Reshape", 2, (ph_value *[]){x, ph_node_output(cat, 0)}), 0));
    tk_output(g, tk_op1(g, "Size", x));
    assert_untouched_with(pass, m, NULL, NULL, NULL);
    ph_model_free(m);
}
END_TEST

/* The folded node's output is a graph output: it keeps its node (and
 * name); the node reading it still folds from the computed value. */
START_TEST(graph_output_in_the_middle)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *w = tk_init(g, "w", 2, TK_I64(2, 3), 8);
    ph_value *neg = tk_op1(g, "Neg", w);
    tk_output(g, neg);
    tk_output(g, tk_op2(g, "Add", x, tk_op1(g, "Relu", neg)));
    char *name = strdup(ph_value_name(neg));

    ck_assert_int_eq(tk_run_checked(pass, m, 17, NULL, NULL, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Neg,Add");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    ck_assert_ptr_eq(ph_value_producer(ph_graph_output(g, 0)), ph_graph_first_node(g));
    ck_assert_ptr_nonnull(ph_value_const(ph_node_input(ph_graph_last_node(g), 1)));
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 0); /* stable */
    free(name);
    ph_model_free(m);
}
END_TEST

START_TEST(graph_output_alone_is_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    tk_output(g, tk_op1(g, "Relu", x));
    tk_output(g, tk_op1(g, "Neg", tk_init(g, "w", 2, TK_I64(2, 3), 9)));
    assert_untouched_with(pass, m, NULL, NULL, NULL);
    ph_model_free(m);
}
END_TEST

START_TEST(dead_node_is_left_to_dead_code_removal)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    tk_op1(g, "Neg", tk_init(g, "w", 2, TK_I64(2, 3), 10));
    tk_output(g, tk_op1(g, "Relu", x));
    assert_untouched_with(pass, m, NULL, NULL, NULL);
    ph_model_free(m);
}
END_TEST

/* 1024x1024 floats = 4 MiB: above the 1 MiB default, folded with no cap;
 * a small cap refuses even a 24-byte Add. */
START_TEST(size_cap)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(1024, 1024));
    ph_value *big = tk_op1(g, "ConstantOfShape", i64_init(g, "shape", 1, TK_I64(2), TK_I64(1024, 1024)));
    tk_output(g, tk_op2(g, "Add", x, big));
    assert_untouched_with(pass, m, NULL, NULL, NULL);
    ck_assert_int_eq(tk_run_checked(pass, m, 18, "max_output_bytes", "0", NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Add");
    ph_model_free(m);

    m = tk_model();
    g = ph_model_graph(m);
    x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *s = tk_op2(g, "Add", tk_init(g, "a", 2, TK_I64(2, 3), 1), tk_init(g, "b", 2, TK_I64(2, 3), 2));
    tk_output(g, tk_op2(g, "Mul", x, s));
    assert_untouched_with(pass, m, "max_output_bytes", "16", NULL);
    ck_assert_int_eq(tk_run_with(pass, m, "max_output_bytes", "24", NULL), 1);
    ph_model_free(m);
}
END_TEST

/* Blow-ups are refused from the constant inputs, before evaluating (these
 * would need 40 GB and 8 GB). */
START_TEST(huge_outputs_refused_before_evaluation)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *big = tk_op1(g, "ConstantOfShape", i64_init(g, "shape", 1, TK_I64(2), TK_I64(100000, 100000)));
    ph_value *exp_in[2] = {tk_init(g, "w", 2, TK_I64(1, 1), 3),
                           i64_init(g, "eshape", 1, TK_I64(2), TK_I64(50000, 40000))};
    ph_value *ex = ph_node_output(tk_node(g, "Expand", 2, exp_in), 0);
    ph_value *tile_in[2] = {tk_init(g, "t", 1, TK_I64(2), 4), i64_init(g, "reps", 1, TK_I64(1), TK_I64(1000000000))};
    ph_value *tl = ph_node_output(tk_node(g, "Tile", 2, tile_in), 0);
    tk_output(g, tk_op2(g, "Add", x, big));
    tk_output(g, tk_op2(g, "Add", x, ex));
    tk_output(g, tk_op2(g, "Add", x, tl));
    assert_untouched_with(pass, m, NULL, NULL, NULL);
    ph_model_free(m);
}
END_TEST

START_TEST(nondeterministic_ops_are_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *w = tk_init(g, "w", 2, TK_I64(2, 3), 11);
    tk_output(g, tk_op2(g, "Add", x, tk_op1(g, "RandomNormalLike", w)));
    tk_output(g, tk_op2(g, "Add", x, tk_op1(g, "RandomUniformLike", w)));
    ph_node *ru = ph_node_create(g, NULL, "RandomUniform", 0, NULL, 1);
    ck_assert_int_eq(ph_node_set_attr_ints(ru, "shape", 2, TK_I64(2, 3)), 0);
    tk_output(g, tk_op2(g, "Add", x, ph_node_output(ru, 0)));
    ph_value *probs = tk_op1(g, "Sigmoid", w);
    tk_output(g, tk_op1(g, "Bernoulli", probs));
    ph_value *tm = ph_graph_add_initializer(g, "train", ph_tensor_new(PH_DT_BOOL, 0, NULL, (const unsigned char[]){1}));
    ph_value *dr_in[3] = {w, NULL, tm};
    tk_output(g, tk_op2(g, "Add", x, ph_node_output(tk_node(g, "Dropout", 3, dr_in), 0)));
    /* the Sigmoid before Bernoulli is deterministic: it alone folds */
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Sigmoid), 0);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Bernoulli), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Dropout), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_RandomUniform), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_RandomNormalLike), 1);
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 0);
    ph_model_free(m);
}
END_TEST

START_TEST(quantization_ops_are_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *w = tk_init(g, "w", 2, TK_I64(2, 3), 12);
    ph_value *scale = f32_init(g, "scale", 0, NULL, (const float[]){0.05f});
    ph_value *zp = ph_graph_add_initializer(g, "zp", ph_tensor_new(PH_DT_UINT8, 0, NULL, (const unsigned char[]){128}));
    ph_value *q = ph_node_output(tk_node(g, "QuantizeLinear", 3, (ph_value *[]){w, scale, zp}), 0);
    ph_value *dq = ph_node_output(tk_node(g, "DequantizeLinear", 3, (ph_value *[]){q, scale, zp}), 0);
    tk_output(g, tk_op2(g, "Add", x, dq));
    assert_untouched_with(pass, m, NULL, NULL, NULL);
    ph_model_free(m);
}
END_TEST

START_TEST(other_domain_is_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(2, 3));
    ph_value *w = tk_init(g, "w", 2, TK_I64(2, 3), 13);
    ph_node *n = tk_node(g, "Neg", 1, &w);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ck_assert_int_eq(ph_node_set_domain(n, "com.example"), 0);
    tk_output(g, tk_op2(g, "Add", x, ph_node_output(n, 0)));
    assert_untouched_with(pass, m, NULL, NULL, NULL);
    ph_model_free(m);
}
END_TEST

/* An op the evaluator does not know, and a node it fails on: a warning
 * each, no failure, graph untouched. */
START_TEST(unsupported_op_warns)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 1, TK_I64(6));
    ph_value *w = tk_init(g, "w", 1, TK_I64(6), 14);
    tk_output(g, tk_op2(g, "Add", x, tk_op1(g, "StringNormalizer", w)));
    tk_logcap cap = {0, ""};
    assert_untouched_with(pass, m, NULL, NULL, &cap);
    ck_assert_int_eq(cap.warnings, 1);
    ck_assert_msg(strstr(cap.last, "StringNormalizer") != NULL, "warning: %s", cap.last);
    ph_model_free(m);

    m = tk_model();
    g = ph_model_graph(m);
    x = tk_input(g, "x", 1, TK_I64(4));
    w = tk_init(g, "w", 1, TK_I64(6), 15);
    ph_value *bad = ph_node_output(tk_node(g, "Reshape", 2, (ph_value *[]){w, i64_init(g, "s", 1, TK_I64(1), TK_I64(4))}), 0);
    tk_output(g, tk_op2(g, "Add", x, bad));
    cap = (tk_logcap){0, ""};
    assert_untouched_with(pass, m, NULL, NULL, &cap);
    ck_assert_int_eq(cap.warnings, 1);
    ck_assert_msg(strstr(cap.last, "Reshape") != NULL, "warning: %s", cap.last);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ subgraphs */












/* x int64[3], flag bool[] -> If -> y int64[3].
 *   then: Constant [1,2,3] -> c; Neg(c) -> nc; Add(x, nc) -> then_out
 *   else: Constant [4,5,6] -> else_out (a body output: kept)   */
static ph_model *load_if_model(void)
{
    const int64_t d[1] = {3};
    pb then_g = {0}, else_g = {0}, attrs = {0}, graph = {0}, opset = {0}, model = {0}, ca = {0}, cb = {0};
    pb_ints_attr(&ca, "value_ints", 3, (const int64_t[]){1, 2, 3});
    pb_node(&then_g, "Constant", NULL, NULL, "c", &ca);
    pb_node(&then_g, "Neg", "c", NULL, "nc", NULL);
    pb_node(&then_g, "Add", "x", "nc", "then_out", NULL);
    pb_str(&then_g, 2, "then_branch");
    pb_value_info(&then_g, 12, "then_out", PH_DT_INT64, 1, d);
    pb_ints_attr(&cb, "value_ints", 3, (const int64_t[]){4, 5, 6});
    pb_node(&else_g, "Constant", NULL, NULL, "else_out", &cb);
    pb_str(&else_g, 2, "else_branch");
    pb_value_info(&else_g, 12, "else_out", PH_DT_INT64, 1, d);
    pb_graph_attr(&attrs, "then_branch", &then_g);
    pb_graph_attr(&attrs, "else_branch", &else_g);
    pb_node(&graph, "If", "flag", NULL, "y", &attrs);
    pb_str(&graph, 2, "main");
    pb_value_info(&graph, 11, "x", PH_DT_INT64, 1, d);
    pb_value_info(&graph, 11, "flag", PH_DT_BOOL, 0, NULL);
    pb_value_info(&graph, 12, "y", PH_DT_INT64, 1, d);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 17);
    pb_int(&model, 1, 8);
    pb_msg(&model, 7, &graph);
    pb_msg(&model, 8, &opset);
    return pb_load(&model);
}

/* x float[3], w float[3] with initializer w = [1,2,3] (a default the user
 * can override): Neg(w) -> n; Add(x, n) -> y.  Nothing is constant. */
static ph_model *load_input_default_model(void)
{
    const int64_t d[1] = {3};
    const float w[3] = {1, 2, 3};
    pb graph = {0}, opset = {0}, model = {0}, init = {0};
    pb_int(&init, 1, 3);
    pb_int(&init, 2, PH_DT_FLOAT);
    pb_str(&init, 8, "w");
    pb_bytes(&init, 9, w, sizeof w);
    pb_node(&graph, "Neg", "w", NULL, "n", NULL);
    pb_node(&graph, "Add", "x", "n", "y", NULL);
    pb_str(&graph, 2, "main");
    pb_msg(&graph, 5, &init);
    pb_value_info(&graph, 11, "x", PH_DT_FLOAT, 1, d);
    pb_value_info(&graph, 11, "w", PH_DT_FLOAT, 1, d);
    pb_value_info(&graph, 12, "y", PH_DT_FLOAT, 1, d);
    pb_str(&opset, 1, "");
    pb_int(&opset, 2, 17);
    pb_int(&model, 1, 8);
    pb_msg(&model, 7, &graph);
    pb_msg(&model, 8, &opset);
    return pb_load(&model);
}


START_TEST(input_with_default_is_not_constant)
{
    ph_model *m = load_input_default_model();
    ph_value *w = ph_graph_find_value(ph_model_graph(m), "w");
    ck_assert_int_eq(ph_value_is_initializer(w), 1);
    ck_assert_int_eq(ph_value_is_graph_input(w), 1);
    assert_untouched_with(pass, m, NULL, NULL, NULL);
    ph_model_free(m);
}
END_TEST

START_TEST(folds_inside_if_body)
{
    char ops[256];
    ph_model *m = load_if_model();
    ph_graph *g = ph_model_graph(m);
    ph_node *iff = ph_graph_first_node(g);
    ph_graph *then_g = ph_node_subgraph(iff, 0), *else_g = ph_node_subgraph(iff, 1);
    if (strcmp(ph_graph_name(then_g), "then_branch") != 0) {
        ph_graph *t = then_g;
        then_g = else_g;
        else_g = t;
    }
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 2); /* Constant, Neg */
    ck_assert_str_eq(tk_ops(then_g, ops, sizeof ops), "Add");
    ck_assert_str_eq(tk_ops(else_g, ops, sizeof ops), "Constant");
    ck_assert_uint_eq(ph_graph_initializer_count(then_g), 1);
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    size_t n;
    const int64_t *v = const_data_i64(ph_node_input(ph_graph_first_node(then_g), 1), &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(v[0], -1);
    ck_assert_int_eq(v[2], -3);
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 0);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ models */

static int run_all(tk_pass *const *p, size_t np, ph_model *m)
{
    int total = 0;
    for (int round = 0; round < 10; round++) {
        int changed = 0;
        for (size_t i = 0; i < np; i++)
            changed += tk_run_with(p[i], m, NULL, NULL, NULL);
        total += changed;
        if (!changed)
            return total;
    }
    ck_abort_msg("passes still changing the graph after 10 rounds");
    return total;
}

/* The bundled transformer block with batch = 2 and seq = 5: the three
 * passes fold every shape computation (no Shape, Concat left; each
 * Reshape reads an initializer) and the outputs stay bit-identical. */
START_TEST(transformer_block_static_shapes)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/models/transformer_block.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ck_assert_msg(ph_graph_set_input_shape(g, "tokens", 3, TK_I64(2, 5, 64), &err) == 0, "%s", err.message);
    ck_assert_msg(ph_graph_infer_shapes(g, &err) == 0, "%s", err.message);
    size_t nodes = ph_model_node_count(m);
    ck_assert_uint_gt(tk_count_op(g, PH_OP_Shape), 0);

    tk_pass *p[3] = {tk_pass_load("constant_to_initializer"), pass,
                     tk_pass_load("eliminate_duplicate_initializer")};
    ph_tensor **before, **after;
    size_t nb = tk_eval_model(m, 21, &before);
    int total = run_all(p, 3, m);
    size_t na = tk_eval_model(m, 21, &after);
    tk_assert_same(before, nb, after, na);
    tk_free_outs(before, nb);
    tk_free_outs(after, na);

    ck_assert_int_gt(total, 0);
    ck_assert_uint_lt(ph_model_node_count(m), nodes);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Constant), 0);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Shape), 0);
    /* the one Gather left picks a row of the hidden state (data) */
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Gather), 1);
    ck_assert_ptr_null(ph_value_const(ph_node_input(tk_find_op(g, PH_OP_Gather), 0)));
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Concat), 0);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Unsqueeze), 0);
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        if (ph_node_op(n) == PH_OP_Reshape)
            ck_assert_msg(ph_value_const(ph_node_input(n, 1)) != NULL, "Reshape '%s' shape not folded",
                          ph_node_name(n));
    /* no two initializers hold the same data */
    for (size_t i = 0; i < ph_graph_initializer_count(g); i++)
        for (size_t j = i + 1; j < ph_graph_initializer_count(g); j++)
            ck_assert(!ph_tensor_equal(ph_value_const(ph_graph_initializer(g, i)),
                                       ph_value_const(ph_graph_initializer(g, j))));
    tk_pass_free(p[0]);
    tk_pass_free(p[2]);
    ph_model_free(m);
}
END_TEST

/* With symbolic batch/seq nothing shape-dependent may fold, and the model
 * still computes the same (evaluated at batch 2, seq 5). */
START_TEST(transformer_block_symbolic_shapes)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/models/transformer_block.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ck_assert_msg(ph_graph_infer_shapes(g, &err) == 0, "%s", err.message);
    size_t shapes = tk_count_op(g, PH_OP_Shape);
    tk_pass *p[3] = {tk_pass_load("constant_to_initializer"), pass,
                     tk_pass_load("eliminate_duplicate_initializer")};
    run_all(p, 3, m);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Shape), shapes);
    /* now fix the shapes for the evaluator and compare with the original */
    ph_model *orig = NULL;
    ck_assert_int_eq(ph_model_load(PH_SOURCE_DIR "/models/transformer_block.onnx", &orig, &err), 0);
    ck_assert_int_eq(ph_graph_set_input_shape(g, "tokens", 3, TK_I64(2, 5, 64), &err), 0);
    ck_assert_int_eq(ph_graph_set_input_shape(ph_model_graph(orig), "tokens", 3, TK_I64(2, 5, 64), &err), 0);
    ph_tensor **before, **after;
    size_t nb = tk_eval_model(orig, 22, &before);
    size_t na = tk_eval_model(m, 22, &after);
    tk_assert_same(before, nb, after, na);
    tk_free_outs(before, nb);
    tk_free_outs(after, na);
    tk_pass_free(p[0]);
    tk_pass_free(p[2]);
    ph_model_free(orig);
    ph_model_free(m);
}
END_TEST

/* Ops whose output is a sequence or an optional stay: no initializer can
 * hold one (SequenceEmpty once became an initializer of data_type 0 that
 * the written file could not load back with). */
START_TEST(sequences_are_not_folded)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_node *se = ph_node_create(g, NULL, "SequenceEmpty", 0, NULL, 1);
    ph_node *len = ph_node_create(g, NULL, "SequenceLength", 1, (ph_value *[]){ph_node_output(se, 0)}, 1);
    ph_node *opt = ph_node_create(g, NULL, "Optional", 1, (ph_value *[]){ph_node_output(len, 0)}, 1);
    ph_node *has = ph_node_create(g, NULL, "OptionalHasElement", 1, (ph_value *[]){ph_node_output(opt, 0)}, 1);
    tk_output(g, ph_node_output(len, 0));
    tk_output(g, ph_node_output(has, 0));
    ck_assert_int_eq(tk_run_with(pass, m, NULL, NULL, NULL), 0);
    char ops[256];
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "SequenceEmpty,SequenceLength,Optional,OptionalHasElement");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    ph_model *back = tk_reload(m);
    ph_tensor **outs;
    size_t n = tk_eval_model(back, 1, &outs);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(*(const int64_t *)ph_tensor_data(outs[0]), 0);
    ck_assert_int_eq(*(const uint8_t *)ph_tensor_data(outs[1]), 1);
    tk_free_outs(outs, n);
    ph_model_free(back);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_constant_folding");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, folds_constant_chain);
    tcase_add_test(tc, folds_shape_gather_concat_reshape);
    tcase_add_test(tc, folds_shape_chain_after_inference);
    tcase_add_test(tc, shape_slice_of_partly_known_shape);
    tcase_add_test(tc, partly_known_shape_folds_known_dims);
    tcase_add_test(tc, size_of_static_shape);
    tcase_add_test(tc, shared_constant_stays_for_other_consumers);
    tcase_add_test(tc, folds_split_outputs);
    tcase_add_test(tc, non_constant_operand_is_kept);
    tcase_add_test(tc, unknown_shape_is_kept);
    tcase_add_test(tc, graph_output_in_the_middle);
    tcase_add_test(tc, graph_output_alone_is_kept);
    tcase_add_test(tc, dead_node_is_left_to_dead_code_removal);
    tcase_add_test(tc, size_cap);
    tcase_add_test(tc, huge_outputs_refused_before_evaluation);
    tcase_add_test(tc, nondeterministic_ops_are_kept);
    tcase_add_test(tc, quantization_ops_are_kept);
    tcase_add_test(tc, other_domain_is_kept);
    tcase_add_test(tc, unsupported_op_warns);
    tcase_add_test(tc, folds_inside_if_body);
    tcase_add_test(tc, input_with_default_is_not_constant);
    tcase_add_test(tc, transformer_block_static_shapes);
    tcase_add_test(tc, transformer_block_symbolic_shapes);
    tcase_add_test(tc, sequences_are_not_folded);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
