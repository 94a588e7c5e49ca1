/* fold_input_preprocess - fold the per-channel preprocessing of a graph
 * input (scale, mean subtraction, channel reversal) into the first Conv
 * (seed 004 PreMethodOps2Conv2dPass: ChannelSwap, PreMean, PreScale).
 *
 * Requires: y = Conv(p, W, b?) with group 1, W a constant [M, C, k...] of a
 *   float dtype (rank >= 3), b absent or a constant [M] of W's dtype, and
 *   p = op(x) the only reader of p, where op is one of
 *     Mul(x, s) / Div(x, s)   s per channel: broadcast against x it varies
 *                             along axis 1 only, C or 1 values; finite; s of
 *                             W's dtype; for Div no s[c] = 0;
 *     Add(x, a) / Sub(x, a) / Sub(a, x)   a per channel likewise, finite;
 *                             only when the Conv pads nothing: pads absent
 *                             or 0 and auto_pad NOTSET or VALID, or SAME_*
 *                             with every kernel dim 1 (with padding the
 *                             border taps would read a where they read 0);
 *     Gather(x, idx) {axis 1} idx a constant 1-D permutation of 0..C-1
 *                             (negative entries count from the end), e.g.
 *                             the reversal [C-1..0] of RGB <-> BGR;
 *     Slice(x) on axis 1 only, step -1, selecting all C channels from C-1
 *                             down (the reversal written as a Slice).
 *   x has W's rank and dtype and a known dim 1 equal to C, and is a
 *   preprocessed graph input: following x upward through single-use values
 *   produced by Mul/Div/Add/Sub/Gather/Slice (at most 16) reaches a graph
 *   input (not an initializer) read by nothing else.
 * Changes: y = Conv(op(x), W, b) becomes Conv(x, W', b') (same attributes
 *   and name): Mul W'[:, c] = W[:, c] * s[c], Div W[:, c] / s[c];
 *   Add/Sub b'[m] = b[m] + sum over c, k of W[m, c, k] * a[c] (a negated for
 *   Sub(x, a); for Sub(a, x) also W' = -W); Gather/Slice W'[:, idx[j]] =
 *   W[:, j].  One op per rewrite, the one next to the Conv: a chain
 *   (Sub mean -> Div std -> Conv) folds in successive rounds of the stage.
 *   The op goes when nothing else reads it; the graph input stays.
 * Exact: fp (W' and b' are computed in double and rounded once; the bias
 *   sum runs in another order than the Conv's).
 */
#include <math.h>
#include <string.h>

#include <passhost/passhost.h>
#include <passhost/constant.h>

#define MAX_CHAIN 16

/* The data input of a preprocessing node (the non-constant operand). */
static ph_value *data_input(const ph_node *n)
{
    switch (ph_node_op(n)) {
    case PH_OP_Mul:
    case PH_OP_Add:
    case PH_OP_Sub:
        return ph_value_const(ph_node_input(n, 0)) ? ph_node_input(n, 1) : ph_node_input(n, 0);
    case PH_OP_Div:
    case PH_OP_Gather:
    case PH_OP_Slice:
        return ph_node_input(n, 0);
    default:
        return NULL;
    }
}

/* x reaches a graph input read only by this chain. */
static int from_graph_input(ph_value *x)
{
    for (int hops = 0; hops <= MAX_CHAIN; hops++) {
        ph_node *p = ph_value_producer(x);
        if (ph_value_use_count(x) != 1 || ph_value_graph_output_count(x))
            return 0;
        if (!p)
            return ph_value_is_graph_input(x) && !ph_value_const(x);
        if (ph_node_output_count(p) != 1 || !(x = data_input(p)))
            return 0;
    }
    return 0;
}

static int check(const ph_match *m, const ph_params *params)
{
    (void)params;
    ph_value *x = ph_match_value(m, "x");
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b");
    int r = (int)ph_tensor_rank(w);
    return r >= 3 && ph_value_rank(x) == r && ph_value_dim(x, 1) == ph_tensor_dim(w, 1) &&
           ph_tensor_dim(w, 0) >= 1 && ph_tensor_dim(w, 1) >= 1 && (!b || ph_tensor_dim(b, 0) == ph_tensor_dim(w, 0)) &&
           from_graph_input(x);
}

/* The channel permutation of a Gather or a reversing Slice into idx[C]. */
static int channel_perm(const ph_node *n, int rank, int64_t C, int64_t *idx, unsigned char *seen)
{
    if (ph_node_op(n) == PH_OP_Slice) {
        ph_slice_params sp;
        int64_t first;
        if (ph_node_slice_params(n, rank, &sp) || sp.n != 1 || sp.axis[0] != 1 || sp.step[0] != -1 ||
            sp.end_sym[0] || ph_slice_length(C, sp.start[0], sp.end[0], -1, &first) != C || first != C - 1)
            return 0;
        for (int64_t j = 0; j < C; j++)
            idx[j] = C - 1 - j;
        return 1;
    }
    int64_t axis = ph_node_attr_int(n, "axis", 0);
    const ph_tensor *t = ph_value_const(ph_node_input(n, 1));
    if ((axis < 0 ? axis + rank : axis) != 1 || !t || ph_tensor_rank(t) != 1 || ph_tensor_dim(t, 0) != C ||
        ph_tensor_read_i64(t, 1, &C, idx))
        return 0;
    for (int64_t j = 0; j < C; j++) {
        if (idx[j] < 0)
            idx[j] += C;
        if (idx[j] < 0 || idx[j] >= C || seen[idx[j]]++)
            return 0;
    }
    return 1;
}

static int fold(ph_rewriter *rw, const ph_match *m)
{
    ph_node *conv = ph_match_root(m), *pre = ph_match_node(m, "p");
    const ph_tensor *w = ph_match_const(m, "w"), *b = ph_match_const(m, "b");
    int r = (int)ph_tensor_rank(w), dt = ph_tensor_dtype(w);
    ph_op op = ph_node_op(pre);
    int64_t M = ph_tensor_dim(w, 0), C = ph_tensor_dim(w, 1), n = ph_tensor_numel(w), K = n / (M * C), mv[1] = {M};
    double *W = ph_rw_alloc(rw, (size_t)(2 * n + M + C) * sizeof *W), *W2 = W + n, *B = W2 + n, *V = B + M;
    int64_t *idx = ph_rw_alloc(rw, (size_t)C * sizeof *idx);
    unsigned char *seen = ph_rw_alloc(rw, (size_t)C);
    if (!W || !idx || !seen)
        return PH_ENOMEM;
    if (ph_tensor_read_f64(w, (size_t)r, ph_tensor_dims(w), W) || (b && ph_tensor_read_f64(b, 1, mv, B)))
        return 0;
    int bias = b != NULL;
    if (op == PH_OP_Gather || op == PH_OP_Slice) {
        if (!channel_perm(pre, r, C, idx, seen))
            return 0;
        for (int64_t o = 0; o < M; o++)
            for (int64_t j = 0; j < C; j++)
                memcpy(W2 + (o * C + idx[j]) * K, W + (o * C + j) * K, (size_t)K * sizeof *W);
        W = W2;
    } else {
        const ph_tensor *s = ph_match_const(m, "s");
        int negate = op == PH_OP_Sub && ph_match_value(m, "x") == ph_node_input(pre, 1); /* a - x */
        if (ph_const_channel_values(s, r, 1, C, V))
            return 0;
        for (int64_t c = 0; c < C; c++)
            if (!isfinite(V[c]) || (op == PH_OP_Div && V[c] == 0))
                return 0;
        if (op == PH_OP_Mul || op == PH_OP_Div) {
            for (int64_t k = 0; k < n; k++)
                W[k] = op == PH_OP_Mul ? W[k] * V[k / K % C] : W[k] / V[k / K % C];
        } else {
            if (!ph_conv_adds_no_padding(conv, w))
                return 0;
            for (int64_t o = 0; o < M; o++) {
                double acc = bias ? B[o] : 0.0;
                for (int64_t k = o * C * K; k < (o + 1) * C * K; k++)
                    acc += W[k] * (op == PH_OP_Sub && !negate ? -V[k / K % C] : V[k / K % C]);
                B[o] = acc;
            }
            for (int64_t k = 0; negate && k < n; k++)
                W[k] = -W[k];
            bias = 1;
        }
    }
    ph_rw_bind(rw, "w2", ph_rw_initializer(rw, "preprocess_w", ph_tensor_from_f64(dt, (size_t)r, ph_tensor_dims(w), W)));
    if (bias)
        ph_rw_bind(rw, "b2", ph_rw_initializer(rw, "preprocess_b", ph_tensor_from_f64(dt, 1, mv, B)));
    return ph_rw_done(rw);
}

/* One rule: the op before the Conv is one of the forms; the result is the
 * Conv on x with the weights the rewrite computes. */
static const ph_rule rules[] = {
    {"preprocess",
     "( p = Mul|Div|Add|Sub(x:dtype=$t, s:const:dtype=$t) | p = Sub(s:const:dtype=$t, x:dtype=$t)\n"
     "| p = Gather(x:dtype=$t, idx:const) | p = Slice(x:dtype=$t, params*) )\n"
     "y = Conv(p, w:const:floating:dtype=$t, b?:const:rank=1:dtype=$t) {group?=1}\n"
     "=> y = Conv(x, w2, b2?) like y",
     check, fold},
    {0}};

/* Examples for the rule checker: preprocessing of a graph input. */
#define FIP_CONV "w: const <T>[<2|4>,3,<1|3>,<1|3>]\nb: const <T>[<2|4>]\n"
static const ph_rule_example examples[] = {
    {"preprocess", "x: <T=float|double>[1,3,5,5]\n" FIP_CONV "a: const <T>[1,3,1,1]\np = Sub(a, x)\n"
                 "y = Conv(p, w<, b|>)\nreturn y", NULL},
    {"preprocess", "x: <T=float|double>[1,3,5,5]\n" FIP_CONV "i: int64[3] = [<2, 1, 0|1, 2, 0|-1, 0, 1>]\n"
                        "p = Gather(x, i) {axis=1}\ny = Conv(p, w<, b|>)\nreturn y", NULL},
    {"preprocess", "x: <T=float|double>[1,3,5,5]\n" FIP_CONV "st: int64[1] = [<-1|2>]\n"
                         "en: int64[1] = [<-4|-9223372036854775807>]\nax: int64[1] = [1]\nsp: int64[1] = [-1]\n"
                         "p = Slice(x, st, en, ax, sp)\ny = Conv(p, w<, b|>)\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "fold_input_preprocess",
    .summary = "per-channel Mul/Div/Add/Sub and channel reversal of a graph input feeding the first Conv "
               "-> folded into its W and B (Add/Sub only when that Conv has no padding)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules,
    .rule_examples = examples)
