/* tests/test_pass_simplify_layout_chain.c - simplify_layout_chain, and its
 * fixpoint with merge_consecutive_transpose, transpose_to_reshape,
 * merge_consecutive_reshape and eliminate_nop_reshape. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"

static tk_pass *pass;

static void setup(void)
{
    pass = tk_pass_load("simplify_layout_chain");
    pass->shapes = 1;
}
static void teardown(void)
{
    tk_pass_free(pass);
    pass = NULL;
}

/* ------------------------------------------------------------ builders */

static ph_value *reshape(ph_graph *g, ph_value *x, size_t n, const int64_t *shape)
{
    return tk_op2(g, "Reshape", x, tk_ints(g, "shape", n, shape));
}

static ph_value *flatten(ph_graph *g, ph_value *x, int64_t axis)
{
    ph_node *n = tk_node(g, "Flatten", 1, &x);
    ck_assert_int_eq(ph_node_set_attr_int(n, "axis", axis), 0);
    return ph_node_output(n, 0);
}

/* Squeeze/Unsqueeze with axes as an input (opset >= 13) or an attribute. */
static ph_value *sq(ph_graph *g, const char *op, ph_value *x, size_t n, const int64_t *axes)
{
    if (ph_model_opset(ph_graph_model(g), "") >= 13)
        return tk_op2(g, op, x, tk_ints(g, "axes", n, axes));
    ph_node *node = tk_node(g, op, 1, &x);
    ck_assert_int_eq(ph_node_set_attr_ints(node, "axes", n, axes), 0);
    return ph_node_output(node, 0);
}

static ph_value *relu_named(ph_graph *g, const char *name, int rank, const int64_t *dims)
{
    return tk_op1(g, "Relu", tk_input(g, name, rank, dims));
}

static ph_value *relu_input(ph_graph *g, int rank, const int64_t *dims)
{
    return relu_named(g, "x", rank, dims);
}

/* ShuffleNet channel shuffle of [N,C,H,W] in g groups. */
static ph_value *channel_shuffle(ph_graph *g, ph_value *x, int64_t n, int64_t c, int64_t h, int64_t w,
                                 int64_t groups)
{
    ph_value *r = reshape(g, x, 5, TK_I64(n, groups, c / groups, h, w));
    ph_value *t = tk_transpose(g, r, 5, TK_I64(0, 2, 1, 3, 4));
    return reshape(g, t, 4, TK_I64(n, c, h, w));
}

/* ------------------------------------------------------------ checks */

/* The i-th node of g (0-based). */
static ph_node *node_at(ph_graph *g, int i)
{
    ph_node *n = ph_graph_first_node(g);
    while (n && i-- > 0)
        n = ph_node_next(n);
    ck_assert_ptr_nonnull(n);
    return n;
}

static void assert_ints(const int64_t *got, ptrdiff_t n_got, size_t n, const int64_t *want, const char *what)
{
    ck_assert_msg(n_got == (ptrdiff_t)n, "%s: %td entries, want %zu", what, n_got, n);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(got[k] == want[k], "%s[%zu] = %lld, want %lld", what, k, (long long)got[k],
                      (long long)want[k]);
}

static void assert_reshape_to(const ph_node *r, size_t n, const int64_t *want)
{
    int64_t got[16];
    ck_assert_int_eq(ph_node_op(r), PH_OP_Reshape);
    assert_ints(got, ph_value_const_ints(ph_node_input(r, 1), got, NULL, 16), n, want, "shape");
}

static void assert_perm(const ph_node *t, size_t n, const int64_t *want)
{
    const int64_t *p;
    ck_assert_int_eq(ph_node_op(t), PH_OP_Transpose);
    assert_ints(p, ph_node_attr_ints(t, "perm", &p), n, want, "perm");
}

static void assert_ops(ph_graph *g, const char *want)
{
    char ops[512];
    ck_assert_str_eq(tk_ops(g, ops, sizeof ops), want);
}

/* ------------------------------------------------------------ positive */

/* A bare channel shuffle is already the shortest form: untouched. */
START_TEST(channel_shuffle_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    tk_neg_output(g, channel_shuffle(g, relu_input(g, 4, TK_I64(1, 8, 4, 4)), 1, 8, 4, 4, 2));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A channel shuffle with an Unsqueeze/Squeeze pair after it: five nodes
 * become R -> T -> R over the blocks [2, 4, 16] (N = 1 and H*W merged). */
START_TEST(channel_shuffle_longer_chain)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 4, TK_I64(1, 8, 4, 4));
    ph_value *c = channel_shuffle(g, x, 1, 8, 4, 4, 2);
    tk_neg_output(g, sq(g, "Squeeze", sq(g, "Unsqueeze", c, 1, TK_I64(0)), 1, TK_I64(0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 1, 0, NULL), 1);
    assert_ops(g, "Relu,Reshape,Transpose,Reshape,Neg");
    ck_assert_ptr_eq(ph_node_input(node_at(g, 1), 0), x);
    assert_reshape_to(node_at(g, 1), 3, TK_I64(2, 4, 16));
    assert_perm(node_at(g, 2), 3, TK_I64(1, 0, 2));
    assert_reshape_to(node_at(g, 3), 4, TK_I64(1, 8, 4, 4));
    tk_assert_untouched(pass, m); /* idempotent */
    ph_model_free(m);
}
END_TEST

/* One group: the shuffle moves nothing and disappears. */
START_TEST(channel_shuffle_one_group_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 4, TK_I64(1, 8, 4, 4));
    tk_neg_output(g, channel_shuffle(g, x, 1, 8, 4, 4, 1));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 2, 0, NULL), 1);
    assert_ops(g, "Relu,Neg");
    ck_assert_ptr_eq(ph_node_input(node_at(g, 1), 0), x);
    ph_model_free(m);
}
END_TEST

/* ViT: x.flatten(2).transpose(1, 2) then back to an image in NHWC = one
 * Transpose (0,2,3,1). */
START_TEST(vit_tokens_to_nhwc_one_transpose)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 4, TK_I64(2, 6, 3, 5));
    ph_value *t = tk_transpose(g, reshape(g, x, 3, TK_I64(2, 6, 15)), 3, TK_I64(0, 2, 1));
    tk_neg_output(g, reshape(g, t, 4, TK_I64(2, 3, 5, 6)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 3, 0, NULL), 1);
    assert_ops(g, "Relu,Transpose,Neg");
    assert_perm(node_at(g, 1), 4, TK_I64(0, 2, 3, 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ViT patchify without a Conv: [B,C,H,W] -> [B,C,h,p,w,p] -> (0,2,4,3,5,1)
 * -> [B,h*w,p*p*C], then tokens transposed to [B,D,T] and unsqueezed: five
 * nodes, at most R -> T -> R after. */
START_TEST(vit_patchify_chain)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 4, TK_I64(2, 3, 8, 8));
    ph_value *p = reshape(g, x, 6, TK_I64(2, 3, 2, 4, 2, 4));
    p = tk_transpose(g, p, 6, TK_I64(0, 2, 4, 3, 5, 1));
    p = reshape(g, p, 3, TK_I64(2, 4, 48));
    p = tk_transpose(g, p, 3, TK_I64(0, 2, 1));
    tk_neg_output(g, sq(g, "Unsqueeze", p, 1, TK_I64(1)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 4, 0, NULL), 1);
    ck_assert_uint_le(ph_graph_node_count(g), 5);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 1);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* The patchify R -> T -> R alone is already the shortest form. */
START_TEST(vit_patchify_minimal_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *p = reshape(g, relu_input(g, 4, TK_I64(2, 3, 8, 8)), 6, TK_I64(2, 3, 2, 4, 2, 4));
    p = tk_transpose(g, p, 6, TK_I64(0, 2, 4, 3, 5, 1));
    tk_neg_output(g, reshape(g, p, 3, TK_I64(2, 4, 48)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Unsqueeze -> Transpose -> Squeeze around a 2-D tensor = Transpose(1,0);
 * opset 17 (axes as inputs) and opset 11 (attributes). */
static void squeeze_transpose(int64_t opset)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "", opset), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 2, TK_I64(3, 5));
    ph_value *u = sq(g, "Unsqueeze", x, 1, TK_I64(0));
    ph_value *t = tk_transpose(g, u, 3, TK_I64(0, 2, 1));
    tk_neg_output(g, sq(g, "Squeeze", t, 1, TK_I64(0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 1);
    assert_ops(g, "Relu,Transpose,Neg");
    assert_perm(node_at(g, 1), 2, TK_I64(1, 0));
    ck_assert_uint_eq(ph_graph_initializer_count(g), 0); /* the axes went with the chain */
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}

START_TEST(squeeze_transpose_opset17) { squeeze_transpose(17); }
END_TEST

START_TEST(squeeze_transpose_opset11) { squeeze_transpose(11); }
END_TEST

/* Unsqueeze then Squeeze of the same axis: nothing. */
START_TEST(unsqueeze_squeeze_pair_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 3, TK_I64(2, 3, 4));
    tk_neg_output(g, sq(g, "Squeeze", sq(g, "Unsqueeze", x, 1, TK_I64(1)), 1, TK_I64(1)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 6, 0, NULL), 1);
    assert_ops(g, "Relu,Neg");
    ph_model_free(m);
}
END_TEST

/* Two cancelling Transposes and a Flatten: one Reshape. */
START_TEST(flatten_after_cancelling_transposes)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 3, TK_I64(2, 3, 4));
    ph_value *t = tk_transpose(g, tk_transpose(g, x, 3, TK_I64(1, 0, 2)), 3, TK_I64(1, 0, 2));
    tk_neg_output(g, flatten(g, t, 1));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 7, 0, NULL), 1);
    assert_ops(g, "Relu,Reshape,Neg");
    assert_reshape_to(node_at(g, 1), 2, TK_I64(2, 12));
    ph_model_free(m);
}
END_TEST

/* Flatten then a Reshape back: nothing. */
START_TEST(flatten_and_back_removed)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 3, TK_I64(2, 3, 4));
    tk_neg_output(g, reshape(g, flatten(g, x, 2), 3, TK_I64(2, 3, 4)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 8, 0, NULL), 1);
    assert_ops(g, "Relu,Neg");
    ph_model_free(m);
}
END_TEST

/* [6,4] -> [2,3,4] -> (2,0,1) -> [4,6]: one Transpose (1,0). */
START_TEST(split_transpose_merge_one_transpose)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 2, TK_I64(6, 4));
    ph_value *t = tk_transpose(g, reshape(g, x, 3, TK_I64(2, 3, 4)), 3, TK_I64(2, 0, 1));
    tk_neg_output(g, reshape(g, t, 2, TK_I64(4, 6)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 9, 0, NULL), 1);
    assert_ops(g, "Relu,Transpose,Neg");
    assert_perm(node_at(g, 1), 2, TK_I64(1, 0));
    ph_model_free(m);
}
END_TEST

/* [6,4] -> [2,3,4] -> (2,0,1) -> Unsqueeze -> [1,4,2,3]: the blocks are
 * whole input dims, so Transpose(1,0) -> Reshape. */
START_TEST(to_transpose_then_reshape)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 2, TK_I64(6, 4));
    ph_value *t = tk_transpose(g, reshape(g, x, 3, TK_I64(2, 3, 4)), 3, TK_I64(2, 0, 1));
    tk_neg_output(g, sq(g, "Unsqueeze", t, 1, TK_I64(0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 10, 0, NULL), 1);
    assert_ops(g, "Relu,Transpose,Reshape,Neg");
    assert_perm(node_at(g, 1), 2, TK_I64(1, 0));
    assert_reshape_to(node_at(g, 2), 4, TK_I64(1, 4, 2, 3));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* [24] -> [4,6] -> (1,0) -> Unsqueeze -> [1,6,4]: the blocks are whole
 * output dims, so Reshape [4,6,1] -> Transpose (2,1,0). */
START_TEST(to_reshape_then_transpose)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 1, TK_I64(24));
    ph_value *t = tk_transpose(g, reshape(g, x, 2, TK_I64(4, 6)), 2, TK_I64(1, 0));
    tk_neg_output(g, sq(g, "Unsqueeze", t, 1, TK_I64(0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 11, 0, NULL), 1);
    assert_ops(g, "Relu,Reshape,Transpose,Neg");
    assert_reshape_to(node_at(g, 1), 3, TK_I64(4, 6, 1));
    assert_perm(node_at(g, 2), 3, TK_I64(2, 1, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A 4-cycle of blocks that do not merge: Unsqueeze -> (0,2,4,1,3) ->
 * Squeeze = one Transpose (1,3,0,2). */
START_TEST(four_cycle_one_transpose)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 4, TK_I64(2, 3, 4, 5));
    ph_value *t = tk_transpose(g, sq(g, "Unsqueeze", x, 1, TK_I64(0)), 5, TK_I64(0, 2, 4, 1, 3));
    tk_neg_output(g, sq(g, "Squeeze", t, 1, TK_I64(0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 20, 0, NULL), 1);
    assert_ops(g, "Relu,Transpose,Neg");
    assert_perm(node_at(g, 1), 4, TK_I64(1, 3, 0, 2));
    ph_model_free(m);
}
END_TEST

/* [24,5] -> [2,3,4,5] -> (2,0,3,1) -> [8,15] -> Unsqueeze: four blocks in
 * a 4-cycle, aligned with neither side: R [2,3,4,5] -> T -> R [1,8,15]. */
START_TEST(four_cycle_reshape_transpose_reshape)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 2, TK_I64(24, 5));
    ph_value *t = tk_transpose(g, reshape(g, x, 4, TK_I64(2, 3, 4, 5)), 4, TK_I64(2, 0, 3, 1));
    tk_neg_output(g, sq(g, "Unsqueeze", reshape(g, t, 2, TK_I64(8, 15)), 1, TK_I64(0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 21, 0, NULL), 1);
    assert_ops(g, "Relu,Reshape,Transpose,Reshape,Neg");
    assert_reshape_to(node_at(g, 1), 4, TK_I64(2, 3, 4, 5));
    assert_perm(node_at(g, 2), 4, TK_I64(2, 0, 3, 1));
    assert_reshape_to(node_at(g, 3), 3, TK_I64(1, 8, 15));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A long chain of twelve nodes folds in one rewrite. */
START_TEST(long_chain_one_rewrite)
{
    /* NCHW -> NHWC -> flattened -> unsqueezed -> reshaped, four times */
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *v = relu_input(g, 4, TK_I64(2, 3, 4, 5));
    int64_t dims[4] = {2, 3, 4, 5};
    for (int i = 0; i < 4; i++) { /* rotate the last three dims each time */
        v = tk_transpose(g, v, 4, TK_I64(0, 2, 3, 1));
        int64_t d1 = dims[1];
        dims[1] = dims[2], dims[2] = dims[3], dims[3] = d1;
        v = flatten(g, v, 1);
        v = sq(g, "Unsqueeze", v, 1, TK_I64(1));
        v = reshape(g, v, 4, dims);
    }
    /* 4 rotations of 3 dims: (0,2,3,1)^4 = (0,2,3,1); 16 nodes -> one Transpose */
    tk_neg_output(g, v);
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 12, 0, NULL), 1);
    assert_ops(g, "Relu,Transpose,Neg");
    assert_perm(node_at(g, 1), 4, TK_I64(0, 2, 3, 1));
    ph_model_free(m);
}
END_TEST

/* The chain's last value is a graph output: it keeps its name. */
START_TEST(graph_output_keeps_name)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 2, TK_I64(3, 5));
    ph_value *y = sq(g, "Squeeze", tk_transpose(g, sq(g, "Unsqueeze", x, 1, TK_I64(2)), 3, TK_I64(1, 0, 2)),
                     1, TK_I64(2));
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 13, 0, NULL), 1);
    assert_ops(g, "Relu,Transpose");
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    free(name);
    ph_model_free(m);
}
END_TEST

/* Identity from a graph input to a graph output: the output cannot take
 * the input's place, so one Reshape keeps its name; it then stays. */
START_TEST(identity_input_to_output_one_reshape)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(3, 5));
    ph_value *y = sq(g, "Squeeze", sq(g, "Unsqueeze", x, 1, TK_I64(0)), 1, TK_I64(0));
    tk_output(g, y);
    char *name = strdup(ph_value_name(y));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 14, 0, NULL), 1);
    assert_ops(g, "Reshape");
    assert_reshape_to(node_at(g, 0), 2, TK_I64(3, 5));
    ck_assert_str_eq(ph_value_name(ph_graph_output(g, 0)), name);
    tk_assert_untouched(pass, m);
    free(name);
    ph_model_free(m);
}
END_TEST

/* Transposes that only move size-1 dims need no simulation: done even with
 * max_elements = 1. */
START_TEST(size_one_moves_need_no_simulation)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 3, TK_I64(2, 1, 3));
    ph_value *t = tk_transpose(g, tk_transpose(g, x, 3, TK_I64(1, 0, 2)), 3, TK_I64(1, 2, 0));
    tk_neg_output(g, t); /* [2,1,3] -> [1,2,3] -> [2,3,1] */
    pass->params = (const char *const[]){"max_elements", "1", NULL};
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 15, 0, NULL), 1);
    assert_ops(g, "Relu,Reshape,Neg");
    assert_reshape_to(node_at(g, 1), 3, TK_I64(2, 3, 1));
    ph_model_free(m);
}
END_TEST

/* Integer data moves the same way. */
START_TEST(int64_data)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = ph_graph_add_input(g, "x", PH_DT_INT64, 2, TK_I64(6, 4));
    ph_value *t = tk_transpose(g, reshape(g, x, 3, TK_I64(2, 3, 4)), 3, TK_I64(2, 0, 1));
    tk_neg_output(g, reshape(g, t, 2, TK_I64(4, 6)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 16, 0, NULL), 1);
    assert_ops(g, "Transpose,Neg");
    ph_model_free(m);
}
END_TEST

/* Chains of equal shapes and perms share one verdict within a call: three
 * Transpose pairs over [4, 4, 4] whose signatures differ only in their
 * perms, each twice.  (1,0,2) twice is nothing; (1,0,2) then (0,2,1) is one
 * Transpose (1,2,0); (2,1,0) then (1,2,0) is one Transpose (1,0,2) too,
 * composed differently.  A wrong share shows in the perms and the outputs. */
START_TEST(equal_chains_share_a_verdict)
{
    static const int64_t second[3][3] = {{1, 0, 2}, {0, 2, 1}, {1, 2, 0}};
    static const int64_t first[3][3] = {{1, 0, 2}, {1, 0, 2}, {2, 1, 0}};
    static const int64_t want[3][3] = {{0, 1, 2}, {1, 2, 0}, {1, 0, 2}};
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 3, TK_I64(4, 4, 4));
    for (int copy = 0; copy < 2; copy++)
        for (int v = 0; v < 3; v++)
            tk_neg_output(g, tk_transpose(g, tk_transpose(g, x, 3, first[v]), 3, second[v]));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 5, 0, NULL), 6);
    ck_assert_uint_eq(tk_count_op(g, PH_OP_Transpose), 4);
    for (int i = 0; i < 6; i++) { /* the Neg of output i reads x or one Transpose of x */
        ph_node *neg = ph_value_producer(ph_graph_output(g, (size_t)i));
        ph_node *t = ph_value_producer(ph_node_input(neg, 0));
        int v = i % 3;
        if (v == 0) {
            ck_assert_ptr_eq(ph_node_input(neg, 0), x);
            continue;
        }
        ck_assert_ptr_eq(ph_node_input(t, 0), x);
        assert_perm(t, 3, want[v]);
    }
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ negative */

/* The middle value has another consumer: the chain is cut there into two
 * single nodes, which stay. */
START_TEST(middle_with_other_consumer_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 2, TK_I64(3, 5));
    ph_value *u = sq(g, "Unsqueeze", x, 1, TK_I64(0));
    tk_neg_output(g, sq(g, "Squeeze", u, 1, TK_I64(0)));
    tk_neg_output(g, u);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(middle_graph_output_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 2, TK_I64(3, 5));
    ph_value *u = tk_transpose(g, x, 2, TK_I64(1, 0));
    tk_output(g, u);
    tk_neg_output(g, tk_transpose(g, u, 2, TK_I64(1, 0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A cut keeps the parts apart: with a graph output in the middle of a
 * four-node chain, each two-node half is simplified on its own. */
START_TEST(cut_chain_halves_simplified_apart)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 2, TK_I64(3, 5));
    ph_value *u = tk_transpose(g, tk_transpose(g, x, 2, TK_I64(1, 0)), 2, TK_I64(1, 0));
    tk_output(g, u);
    tk_neg_output(g, sq(g, "Squeeze", sq(g, "Unsqueeze", u, 1, TK_I64(0)), 1, TK_I64(0)));
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 17, 0, NULL), 2);
    assert_ops(g, "Relu,Neg");
    ck_assert_ptr_eq(ph_graph_output(g, 0), x);
    ph_model_free(m);
}
END_TEST

START_TEST(unknown_shape_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *in = tk_input(g, "x", 3, TK_I64(-1, 3, 4));
    ck_assert_int_eq(ph_value_set_dim_param(in, 0, "N"), 0);
    ph_value *x = tk_op1(g, "Relu", in);
    ph_value *t = tk_transpose(g, tk_transpose(g, x, 3, TK_I64(0, 2, 1)), 3, TK_I64(0, 2, 1));
    tk_neg_output(g, t);
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(unknown_rank_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, -1, NULL);
    tk_neg_output(g, tk_transpose(g, tk_transpose(g, x, 2, TK_I64(1, 0)), 2, TK_I64(1, 0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Elements moved and more of them than max_elements: left alone. */
START_TEST(too_large_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 2, TK_I64(4, 8));
    tk_neg_output(g, tk_transpose(g, tk_transpose(g, x, 2, TK_I64(1, 0)), 2, TK_I64(1, 0)));
    pass->params = (const char *const[]){"max_elements", "31", NULL};
    tk_assert_untouched(pass, m);
    pass->params = (const char *const[]){"max_elements", "32", NULL};
    ck_assert_int_eq(tk_pass_run_eval(pass, m, 18, 0, NULL), 1);
    assert_ops(g, "Relu,Neg");
    ph_model_free(m);
}
END_TEST

/* [2,3] -> (1,0) -> [3,2] read as [2,3] -> (1,0): the composite is no
 * transpose of blocks; no shorter form, left alone. */
START_TEST(not_a_block_permutation_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 2, TK_I64(2, 3));
    ph_value *t = reshape(g, tk_transpose(g, x, 2, TK_I64(1, 0)), 2, TK_I64(2, 3));
    tk_neg_output(g, tk_transpose(g, t, 2, TK_I64(1, 0)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* Transpose -> Flatten is already the shortest form. */
START_TEST(transpose_flatten_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 3, TK_I64(2, 3, 4));
    tk_neg_output(g, flatten(g, tk_transpose(g, x, 3, TK_I64(0, 2, 1)), 1));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

START_TEST(single_nodes_kept)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 3, TK_I64(2, 3, 4));
    ph_value *t = tk_transpose(g, x, 3, TK_I64(0, 1, 2));
    tk_neg_output(g, reshape(g, tk_op1(g, "Relu", t), 2, TK_I64(6, 4)));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* A node of another domain in the middle cuts the chain. */
START_TEST(other_domain_cuts_chain)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "com.example", 1), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 2, TK_I64(3, 5));
    ph_value *t = tk_transpose(g, x, 2, TK_I64(1, 0));
    ph_value *u = tk_transpose(g, t, 2, TK_I64(1, 0));
    ck_assert_int_eq(ph_node_set_domain(ph_value_producer(u), "com.example"), 0);
    tk_set_shape(u, 2, TK_I64(3, 5));
    tk_neg_output(g, tk_transpose(g, tk_transpose(g, u, 2, TK_I64(1, 0)), 2, TK_I64(1, 0)));
    ck_assert_int_eq(tk_pass_run(pass, m), 1); /* only the pair after it */
    assert_ops(g, "Relu,Transpose,Transpose,Neg");
    ph_model_free(m);
}
END_TEST

/* Before opset 5 Reshape took its shape as an attribute: no Reshape is
 * emitted, but a plan of one Transpose is. */
START_TEST(opset4_no_reshape)
{
    ph_model *m = tk_model();
    ck_assert_int_eq(ph_model_set_opset(m, "", 4), 0);
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 2, TK_I64(3, 5));
    /* [3,5] -> [1,3,5] -> [3,1,5]: one Reshape would do, but not at opset 4 */
    tk_neg_output(g, tk_transpose(g, sq(g, "Unsqueeze", x, 1, TK_I64(0)), 3, TK_I64(1, 0, 2)));
    /* (1,0) twice: nothing, which needs no Reshape */
    tk_neg_output(g, tk_transpose(g, tk_transpose(g, x, 2, TK_I64(1, 0)), 2, TK_I64(1, 0)));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    assert_ops(g, "Relu,Unsqueeze,Transpose,Neg,Neg");
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ If branch */

START_TEST(inside_an_if_branch)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = tk_input(g, "x", 2, TK_I64(6, 4));
    ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
    ph_node *iff = tk_node(g, "If", 1, &cond);
    ph_graph *tg = ph_node_add_subgraph(iff, "then_branch");
    ph_graph *eg = ph_node_add_subgraph(iff, "else_branch");
    ph_value *t = tk_transpose(tg, reshape(tg, x, 3, TK_I64(2, 3, 4)), 3, TK_I64(2, 0, 1));
    tk_output(tg, tk_op1(tg, "Neg", reshape(tg, t, 2, TK_I64(4, 6))));
    tk_output(eg, tk_op1(eg, "Neg", tk_transpose(eg, x, 2, TK_I64(1, 0))));
    tk_output(g, ph_node_output(iff, 0));
    ck_assert_int_eq(tk_pass_run(pass, m), 1);
    assert_ops(tg, "Transpose,Neg");
    ck_assert_ptr_eq(ph_node_input(node_at(tg, 0), 0), x);
    assert_perm(node_at(tg, 0), 2, TK_I64(1, 0));
    tk_assert_untouched(pass, m);
    ph_model_free(m);
}
END_TEST

/* ------------------------------------------------------------ fixpoint */

/* Run the layout passes round after round until none changes anything;
 * the outputs must not change and the rounds must stay few. */
static void fixpoint(ph_model *m, uint64_t seed)
{
    static const char *const names[] = {"simplify_layout_chain", "merge_consecutive_transpose",
                                        "transpose_to_reshape", "merge_consecutive_reshape",
                                        "eliminate_nop_reshape"};
    enum { N_PASSES = sizeof names / sizeof names[0] };
    tk_pass *ps[N_PASSES];
    for (int i = 0; i < N_PASSES; i++) {
        ps[i] = tk_pass_load(names[i]);
        ps[i]->shapes = 1;
    }
    int rounds = 0, changed;
    do {
        changed = 0;
        for (int i = 0; i < N_PASSES; i++)
            changed += tk_pass_run_eval(ps[i], m, seed, 0, NULL);
        rounds++;
        ck_assert_msg(rounds <= 4, "no fixpoint after %d rounds", rounds);
    } while (changed);
    for (int i = 0; i < N_PASSES; i++)
        tk_pass_free(ps[i]);
}

START_TEST(fixpoint_with_other_layout_passes)
{
    ph_model *m = tk_model();
    ph_graph *g = ph_model_graph(m);
    ph_value *x = relu_input(g, 4, TK_I64(1, 8, 4, 4));
    /* channel shuffle twice with a size-1 transpose and reshapes between */
    ph_value *v = channel_shuffle(g, x, 1, 8, 4, 4, 2);
    v = tk_transpose(g, sq(g, "Unsqueeze", v, 1, TK_I64(4)), 5, TK_I64(0, 1, 2, 4, 3));
    v = reshape(g, v, 4, TK_I64(1, 8, 4, 4));
    v = channel_shuffle(g, v, 1, 8, 4, 4, 4);
    tk_neg_output(g, v);
    /* ViT tokens and back with a stray Transpose pair */
    ph_value *y = relu_named(g, "y", 4, TK_I64(2, 6, 3, 5));
    ph_value *t = tk_transpose(g, reshape(g, y, 3, TK_I64(2, 6, 15)), 3, TK_I64(0, 2, 1));
    t = tk_transpose(g, tk_transpose(g, t, 3, TK_I64(1, 0, 2)), 3, TK_I64(1, 0, 2));
    tk_neg_output(g, reshape(g, t, 4, TK_I64(2, 3, 5, 6)));
    /* a size-1 Transpose alone, for transpose_to_reshape */
    tk_neg_output(g, tk_transpose(g, relu_named(g, "z", 3, TK_I64(2, 1, 3)), 3, TK_I64(1, 0, 2)));
    /* a channel shuffle alone */
    tk_neg_output(g, channel_shuffle(g, relu_named(g, "w", 4, TK_I64(2, 6, 2, 2)), 2, 6, 2, 2, 3));
    fixpoint(m, 19);
    /* the two shuffles cancel; the ViT chain is one Transpose; the size-1
     * Transpose is a Reshape; the lone shuffle stays R -> T -> R */
    assert_ops(g, "Relu,Neg,Relu,Transpose,Neg,Relu,Reshape,Neg,Relu,Reshape,Transpose,Reshape,Neg");
    ph_model_free(m);
}
END_TEST

/* The demo transformer with static shapes: its layout chains reach a
 * fixpoint with the other layout passes, the outputs stay the same and no
 * node is added. */
START_TEST(transformer_block_fixpoint)
{
    ph_model *m = NULL;
    ph_error err = {0};
    int rc = ph_model_load(PH_SOURCE_DIR "/tests/models/transformer_block.onnx", &m, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    ph_graph *g = ph_model_graph(m);
    ck_assert_int_eq(ph_graph_set_input_shape(g, "tokens", 3, TK_I64(2, 5, 64), &err), 0);
    tk_infer(m);
    size_t before = ph_model_node_count(m);
    fixpoint(m, 22);
    ck_assert_uint_lt(ph_model_node_count(m), before);
    ph_model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pass_simplify_layout_chain");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, channel_shuffle_kept);
    tcase_add_test(tc, channel_shuffle_longer_chain);
    tcase_add_test(tc, channel_shuffle_one_group_removed);
    tcase_add_test(tc, vit_tokens_to_nhwc_one_transpose);
    tcase_add_test(tc, vit_patchify_chain);
    tcase_add_test(tc, vit_patchify_minimal_kept);
    tcase_add_test(tc, squeeze_transpose_opset17);
    tcase_add_test(tc, squeeze_transpose_opset11);
    tcase_add_test(tc, unsqueeze_squeeze_pair_removed);
    tcase_add_test(tc, flatten_after_cancelling_transposes);
    tcase_add_test(tc, flatten_and_back_removed);
    tcase_add_test(tc, split_transpose_merge_one_transpose);
    tcase_add_test(tc, to_transpose_then_reshape);
    tcase_add_test(tc, to_reshape_then_transpose);
    tcase_add_test(tc, four_cycle_one_transpose);
    tcase_add_test(tc, four_cycle_reshape_transpose_reshape);
    tcase_add_test(tc, long_chain_one_rewrite);
    tcase_add_test(tc, graph_output_keeps_name);
    tcase_add_test(tc, identity_input_to_output_one_reshape);
    tcase_add_test(tc, size_one_moves_need_no_simulation);
    tcase_add_test(tc, equal_chains_share_a_verdict);
    tcase_add_test(tc, int64_data);
    tcase_add_test(tc, middle_with_other_consumer_kept);
    tcase_add_test(tc, middle_graph_output_kept);
    tcase_add_test(tc, cut_chain_halves_simplified_apart);
    tcase_add_test(tc, unknown_shape_kept);
    tcase_add_test(tc, unknown_rank_kept);
    tcase_add_test(tc, too_large_kept);
    tcase_add_test(tc, not_a_block_permutation_kept);
    tcase_add_test(tc, transpose_flatten_kept);
    tcase_add_test(tc, single_nodes_kept);
    tcase_add_test(tc, other_domain_cuts_chain);
    tcase_add_test(tc, opset4_no_reshape);
    tcase_add_test(tc, inside_an_if_branch);
    tcase_add_test(tc, fixpoint_with_other_layout_passes);
    tcase_add_test(tc, transformer_block_fixpoint);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
