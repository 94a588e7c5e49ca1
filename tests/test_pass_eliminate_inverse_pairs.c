/* tests/test_pass_eliminate_inverse_pairs.c - the eliminate_inverse_pairs pass. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("eliminate_inverse_pairs");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* Squeeze or Unsqueeze with n axes (n < 0: none given): an input from
 * opset 13, the attribute before. */
static ph_value *sq(ph_graph *g, const char *op, ph_value *x, int n, const int64_t *axes)
{
    if (n < 0)
        return tk_op1(g, op, x);
    if (ph_model_opset(ph_graph_model(g), "") >= 13)
        return tk_op2(g, op, x, tk_ints(g, "axes", (size_t)n, axes));
    ph_value *y = tk_op1(g, op, x);
    ck_assert_int_eq(ph_node_set_attr_ints(ph_value_producer(y), "axes", (size_t)n, axes), 0);
    return y;
}

static ph_value *reshape(ph_graph *g, ph_value *x, size_t n, const int64_t *target)
{
    return tk_op2(g, "Reshape", x, tk_ints(g, "shape", n, target));
}

static ph_value *cast(ph_graph *g, ph_value *x, int to)
{
    ph_value *y = tk_op1(g, "Cast", x);
    ck_assert_int_eq(ph_node_set_attr_int(ph_value_producer(y), "to", to), 0);
    return y;
}

static ph_value *concat(ph_graph *g, size_t n, ph_value *const *xs, int64_t axis)
{
    ph_node *c = tk_node(g, "Concat", n, xs);
    ck_assert_int_eq(ph_node_set_attr_int(c, "axis", axis), 0);
    return ph_node_output(c, 0);
}

/* ---- Squeeze / Unsqueeze */

START_TEST(squeeze_unsqueeze_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    /* [2,1,3] -> Squeeze [1] -> Unsqueeze [-2] (the same axis) */
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(2, 1, 3)));
    ph_value *s = sq(g, "Squeeze", r, 1, TK_I64(1));
    tk_output(g, tk_op1(g, "Neg", sq(g, "Unsqueeze", s, 1, TK_I64(-2))));
    /* [2,3] -> Unsqueeze [0,-1] -> Squeeze [3,0] */
    ph_value *t = tk_op1(g, "Sin", tk_input(g, "z", 2, TK_I64(2, 3)));
    ph_value *u = sq(g, "Unsqueeze", t, 2, TK_I64(0, -1));
    tk_output(g, tk_op1(g, "Neg", sq(g, "Squeeze", u, 2, TK_I64(3, 0))));
    /* [1,3,1] -> Squeeze (all ones) -> Unsqueeze [2,0] */
    ph_value *w = tk_op1(g, "Cos", tk_input(g, "w", 3, TK_I64(1, 3, 1)));
    tk_output(g, tk_op1(g, "Neg", sq(g, "Unsqueeze", sq(g, "Squeeze", w, -1, NULL), 2, TK_I64(2, 0))));
    /* [2,3] -> Unsqueeze [1] -> Squeeze (all ones: only the new one) */
    ph_value *v = tk_op1(g, "Abs", tk_input(g, "v", 2, TK_I64(2, 3)));
    tk_output(g, tk_op1(g, "Neg", sq(g, "Squeeze", sq(g, "Unsqueeze", v, 1, TK_I64(1)), -1, NULL)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 4);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg,Sin,Neg,Cos,Neg,Abs,Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0); /* the axes were pruned */
    tk_assert_untouched(pass, m);                         /* idempotent */
    ph_model_free(m);
}
END_TEST

/* Opset 11: axes are attributes. */
START_TEST(squeeze_unsqueeze_attribute_axes_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "", 11), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(2, 1, 3)));
    tk_output(g, tk_op1(g, "Neg", sq(g, "Unsqueeze", sq(g, "Squeeze", r, 1, TK_I64(-2)), 1, TK_I64(1))));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Each variant: x -> Relu -> Squeeze -> Unsqueeze (or the reverse) -> Neg. */
static void squeeze_pair_kept(int variant)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 4, TK_I64(2, 1, 1, 3));
    ph_value *r = tk_op1(g, "Relu", x), *mid = NULL, *y = NULL;
    switch (variant) {
    case 0: /* other axes */
        mid = sq(g, "Squeeze", r, 1, TK_I64(1));
        y = sq(g, "Unsqueeze", mid, 1, TK_I64(2));
        break;
    case 1: /* the middle value has another reader */
        mid = sq(g, "Squeeze", r, 1, TK_I64(1));
        y = sq(g, "Unsqueeze", mid, 1, TK_I64(1));
        tk_output(g, tk_op1(g, "Abs", mid));
        break;
    case 2: /* the middle value is a graph output */
        mid = sq(g, "Squeeze", r, 1, TK_I64(1));
        y = sq(g, "Unsqueeze", mid, 1, TK_I64(1));
        tk_output(g, mid);
        break;
    case 3: { /* axes not constant */
        ph_value *a = ph_graph_add_input(g, "a", PH_DT_INT64, 1, TK_I64(1));
        mid = tk_op2(g, "Squeeze", r, a);
        y = sq(g, "Unsqueeze", mid, 1, TK_I64(1));
        break;
    }
    case 4: /* Squeeze of every 1 (two axes), Unsqueeze of one */
        mid = sq(g, "Squeeze", r, -1, NULL);
        y = sq(g, "Unsqueeze", mid, 1, TK_I64(1));
        break;
    case 5: /* Unsqueeze [0], Squeeze of every 1: also x's own */
        mid = sq(g, "Unsqueeze", r, 1, TK_I64(0));
        y = sq(g, "Squeeze", mid, -1, NULL);
        break;
    case 6: /* Unsqueeze [0] then Squeeze [1]: [1,2,1,1,3] -> [1,2,1,3], not x */
        mid = sq(g, "Unsqueeze", r, 1, TK_I64(0));
        y = sq(g, "Squeeze", mid, 1, TK_I64(2));
        break;
    case 7: /* x straight to a graph output */
        y = sq(g, "Unsqueeze", sq(g, "Squeeze", x, 1, TK_I64(1)), 1, TK_I64(1));
        tk_output(g, y);
        break;
    }
    if (variant != 7)
        tk_output(g, tk_op1(g, "Neg", y));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}

START_TEST(squeeze_pairs_left_alone)
{
    for (int variant = 0; variant <= 7; variant++)
        squeeze_pair_kept(variant);
}
END_TEST

/* Squeeze of every 1 needs every dim: [?,1,3] might squeeze dim 0 too.
 * Negative axes need the rank. */
START_TEST(unknown_dims_and_ranks_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(-1, 1, 3)));
    tk_output(g, tk_op1(g, "Neg", sq(g, "Unsqueeze", sq(g, "Squeeze", r, -1, NULL), 1, TK_I64(1))));
    ph_value *z = tk_op1(g, "Relu", tk_input(g, "z", -1, NULL));
    tk_output(g, tk_op1(g, "Neg", sq(g, "Unsqueeze", sq(g, "Squeeze", z, 1, TK_I64(-1)), 1, TK_I64(-1))));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ---- Reshape */

START_TEST(reshape_pair_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(2, 3, 4)));
    tk_output(g, tk_op1(g, "Neg", reshape(g, reshape(g, r, 2, TK_I64(6, 4)), 3, TK_I64(2, 3, 4))));
    ph_value *s = tk_op1(g, "Sin", tk_input(g, "z", 3, TK_I64(2, 3, 4)));
    tk_output(g, tk_op1(g, "Neg", reshape(g, tk_op1(g, "Flatten", s), 3, TK_I64(2, -1, 4))));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 2);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg,Sin,Neg");
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The same with a symbolic batch: [batch,3,4] -> [-1,12] -> [0,3,4]...
 * the inference keeps `batch` by name only through 0, so the second
 * target copies dim 0. */
START_TEST(reshape_pair_symbolic_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(-1, 3, 4));
    ck_assert_int_eq(ph_value_set_dim_param(x, 0, "batch"), 0);
    ph_value *r = tk_op1(g, "Relu", x);
    tk_output(g, tk_op1(g, "Neg", reshape(g, reshape(g, r, 2, TK_I64(0, 12)), 3, TK_I64(0, 3, 4))));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 2, TK_I64(1, 3)), 1);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Reshape), 0);
    ph_model_free(m);
}
END_TEST

START_TEST(reshape_pairs_left_alone)
{
    /* another final shape */
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 3, TK_I64(2, 3, 4)));
    tk_output(g, tk_op1(g, "Neg", reshape(g, reshape(g, r, 2, TK_I64(6, 4)), 3, TK_I64(3, 2, 4))));
    /* a runtime target: the final shape is unknown */
    ph_value *s = tk_op1(g, "Relu", tk_input(g, "z", 2, TK_I64(3, 4)));
    ph_value *t = ph_graph_add_input(g, "t", PH_DT_INT64, 1, TK_I64(2));
    tk_output(g, tk_op1(g, "Neg", tk_op2(g, "Reshape", reshape(g, s, 1, TK_I64(12)), t)));
    /* the middle value has another reader */
    ph_value *w = tk_op1(g, "Relu", tk_input(g, "w", 2, TK_I64(3, 4)));
    ph_value *mid = reshape(g, w, 1, TK_I64(12));
    tk_output(g, tk_op1(g, "Neg", reshape(g, mid, 2, TK_I64(3, 4))));
    tk_output(g, tk_op1(g, "Abs", mid));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ---- Cast */

START_TEST(lossless_cast_pairs_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(2, 3)));
    tk_output(g, tk_op1(g, "Neg", cast(g, cast(g, r, PH_DT_DOUBLE), PH_DT_FLOAT)));
    ph_value *i = tk_op1(g, "Neg", ph_graph_add_input(g, "i", PH_DT_INT32, 1, TK_I64(5)));
    tk_output(g, tk_op1(g, "Abs", cast(g, cast(g, i, PH_DT_INT64), PH_DT_INT32)));
    /* float16 -> float -> float16, between two lossy casts that stay */
    ph_value *h = cast(g, tk_op1(g, "Sin", tk_input(g, "z", 1, TK_I64(4))), PH_DT_FLOAT16);
    tk_output(g, cast(g, cast(g, cast(g, h, PH_DT_FLOAT), PH_DT_FLOAT16), PH_DT_FLOAT));
    ph_value *b = tk_op1(g, "Not", ph_graph_add_input(g, "b", PH_DT_BOOL, 1, TK_I64(4)));
    tk_output(g, tk_op1(g, "Not", cast(g, cast(g, b, PH_DT_INT32), PH_DT_BOOL)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 4);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg,Neg,Abs,Sin,Cast,Cast,Not,Not");
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(lossy_cast_pairs_left_alone)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(2, 3)));
    tk_output(g, tk_op1(g, "Neg", cast(g, cast(g, r, PH_DT_INT32), PH_DT_FLOAT)));   /* float->int->float */
    tk_output(g, tk_op1(g, "Neg", cast(g, cast(g, r, PH_DT_FLOAT16), PH_DT_FLOAT))); /* narrower */
    tk_output(g, tk_op1(g, "Neg", cast(g, cast(g, r, PH_DT_DOUBLE), PH_DT_FLOAT16))); /* not back to A */
    ph_value *i = tk_op1(g, "Neg", ph_graph_add_input(g, "i", PH_DT_INT64, 1, TK_I64(5)));
    tk_output(g, tk_op1(g, "Abs", cast(g, cast(g, i, PH_DT_FLOAT), PH_DT_INT64)));  /* int64->float->int64 */
    tk_output(g, tk_op1(g, "Abs", cast(g, cast(g, i, PH_DT_DOUBLE), PH_DT_INT64))); /* 2^53 + 1 */
    ph_value *j = tk_op1(g, "Neg", ph_graph_add_input(g, "j", PH_DT_INT32, 1, TK_I64(5)));
    tk_output(g, tk_op1(g, "Abs", cast(g, cast(g, j, PH_DT_FLOAT), PH_DT_INT32)));  /* 2^24 + 1 */
    tk_output(g, tk_op1(g, "Abs", cast(g, cast(g, j, PH_DT_UINT32), PH_DT_INT32))); /* sign */
    /* the middle value has another reader */
    ph_value *mid = cast(g, r, PH_DT_DOUBLE);
    tk_output(g, tk_op1(g, "Neg", cast(g, mid, PH_DT_FLOAT)));
    tk_output(g, tk_op1(g, "Neg", mid));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The input's dtype is unknown: a runtime Reshape of an unknown type. */
START_TEST(unknown_dtype_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_node *k = tk_node(g, "Mystery", 1, (ph_value *[]){tk_input(g, "x", 1, TK_I64(4))});
    ck_assert_int_eq(ph_node_set_domain(k, "com.example"), 0);
    ph_value *y = cast(g, cast(g, ph_node_output(k, 0), PH_DT_DOUBLE), PH_DT_FLOAT);
    tk_output(g, tk_op1(g, "Neg", y));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ---- Concat then Slice */

START_TEST(concat_slice_removed)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_op1(g, "Relu", tk_input(g, "a", 2, TK_I64(2, 3)));
    ph_value *b = tk_op1(g, "Sin", tk_input(g, "b", 2, TK_I64(2, 4)));
    ph_value *c = tk_op1(g, "Cos", tk_input(g, "c", 2, TK_I64(2, 5)));
    /* the middle input, by positive indices */
    ph_value *c1 = concat(g, 3, (ph_value *[]){a, b, c}, 1);
    tk_output(g, tk_op1(g, "Neg", tk_slice(g, c1, 1, TK_I64(3), TK_I64(7), TK_I64(1), NULL)));
    /* the last one, by a negative start, an end past the dim, and a whole axis 0 */
    ph_value *c2 = concat(g, 3, (ph_value *[]){a, b, c}, -1);
    tk_output(g, tk_op1(g, "Neg", tk_slice(g, c2, 2, TK_I64(0, -5), TK_I64(INT64_MAX, 100), TK_I64(0, 1),
                                           TK_I64(1, 1))));
    /* the first one, along axis 0, axis 1 sliced over its known length */
    ph_value *c3 = concat(g, 2, (ph_value *[]){b, b}, 0);
    tk_output(g, tk_op1(g, "Neg", tk_slice(g, c3, 2, TK_I64(0, 0), TK_I64(2, 4), TK_I64(0, 1), NULL)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 0, NULL), 3);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Sin,Cos,Neg,Neg,Neg"); /* a fed only the Concats */
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Each variant: Concat(a [2,3], b [2,4]) on axis 1 -> one Slice -> Neg. */
static void concat_slice_kept(int variant)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *a = tk_op1(g, "Relu", tk_input(g, "a", 2, TK_I64(2, 3)));
    ph_value *b = tk_op1(g, "Sin", tk_input(g, "b", 2, TK_I64(2, variant == 5 ? -1 : 4)));
    ph_value *c = concat(g, 2, (ph_value *[]){a, b}, 1), *y = NULL;
    switch (variant) {
    case 0: y = tk_slice(g, c, 1, TK_I64(2), TK_I64(7), TK_I64(1), NULL); break;          /* two inputs */
    case 1: y = tk_slice(g, c, 1, TK_I64(0), TK_I64(2), TK_I64(1), NULL); break;          /* part of one */
    case 2: y = tk_slice(g, c, 1, TK_I64(3), TK_I64(7), TK_I64(1), TK_I64(2)); break;     /* step 2 */
    case 3: y = tk_slice(g, c, 2, TK_I64(3, 0), TK_I64(7, 1), TK_I64(1, 0), NULL); break; /* cuts axis 0 */
    case 4:                                                                             /* c has another reader */
        y = tk_slice(g, c, 1, TK_I64(3), TK_I64(7), TK_I64(1), NULL);
        tk_output(g, tk_op1(g, "Abs", c));
        break;
    case 5: y = tk_slice(g, c, 1, TK_I64(3), TK_I64(INT64_MAX), TK_I64(1), NULL); break; /* b's length unknown */
    case 6: y = tk_slice(g, c, 1, TK_I64(3), TK_I64(7), TK_I64(0), NULL); break;          /* another axis */
    case 7: {                                                                           /* starts not constant */
        ph_value *st = ph_graph_add_input(g, "st", PH_DT_INT64, 1, TK_I64(1));
        ph_value *in[4] = {c, st, tk_ints(g, "e", 1, TK_I64(7)), tk_ints(g, "ax", 1, TK_I64(1))};
        y = ph_node_output(tk_node(g, "Slice", 4, in), 0);
        break;
    }
    }
    tk_output(g, tk_op1(g, "Neg", y));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}

START_TEST(concat_slice_left_alone)
{
    for (int variant = 0; variant <= 7; variant++)
        concat_slice_kept(variant);
}
END_TEST

/* ---- interface and bodies */

START_TEST(graph_output_keeps_its_name)
{
    char ops[256];
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *r = tk_op1(g, "Relu", tk_input(g, "x", 2, TK_I64(2, 3)));
    ph_value *y = cast(g, cast(g, r, PH_DT_DOUBLE), PH_DT_FLOAT);
    tk_output(g, y);
    tk_output(g, tk_op1(g, "Neg", y));
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 7, 0, NULL), 1);
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), "Relu,Neg");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 3, TK_I64(2, 1, 3));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *then_g = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *else_g = ph_node_add_subgraph(iff, "else_branch");
    ph_value *t = tk_op1(then_g, "Relu", x);
    tk_output(then_g, tk_op1(then_g, "Neg", sq(then_g, "Unsqueeze", sq(then_g, "Squeeze", t, 1, TK_I64(1)), 1,
                                               TK_I64(1))));
    ph_value *e = tk_op1(else_g, "Sin", x);
    tk_output(else_g, tk_op1(else_g, "Neg", cast(else_g, cast(else_g, e, PH_DT_DOUBLE), PH_DT_FLOAT)));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 2); /* the evaluator has no If: structure only */
    ck_assert_uint_eq(ph_graph_node_count(then_g), 2);
    ck_assert_uint_eq(ph_graph_node_count(else_g), 2);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_eliminate_inverse_pairs");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, squeeze_unsqueeze_removed);
    tcase_add_test(tc, squeeze_unsqueeze_attribute_axes_removed);
    tcase_add_test(tc, squeeze_pairs_left_alone);
    tcase_add_test(tc, unknown_dims_and_ranks_kept);
    tcase_add_test(tc, reshape_pair_removed);
    tcase_add_test(tc, reshape_pair_symbolic_removed);
    tcase_add_test(tc, reshape_pairs_left_alone);
    tcase_add_test(tc, lossless_cast_pairs_removed);
    tcase_add_test(tc, lossy_cast_pairs_left_alone);
    tcase_add_test(tc, unknown_dtype_kept);
    tcase_add_test(tc, concat_slice_removed);
    tcase_add_test(tc, concat_slice_left_alone);
    tcase_add_test(tc, graph_output_keeps_its_name);
    tcase_add_test(tc, inside_an_if_branch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
