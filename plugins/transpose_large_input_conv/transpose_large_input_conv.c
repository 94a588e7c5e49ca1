/* transpose_large_input_conv - run a chain of Convs on a very wide input
 * with H and W swapped, between two Transposes.
 *
 * Seed 000 KnowledgeTransposeLargeInputConv: some audio models convolve
 * inputs of shape [N, C, small, huge]; an NPU tiles the H axis better than
 * W, so the convolutions are done on the input with H and W swapped
 * (Transpose [0,1,3,2] before), with kernels, strides, dilations and pads
 * swapped to match, and the result swapped back (the same Transpose after).
 * msit matches one fixed subgraph; here the region is a chain.
 *
 * Requires: a maximal chain of nodes, each reading the previous one's
 *   output (read by nothing else, no graph output, same graph), each
 *   either
 *   - a default-domain Conv of rank-4 data (2-D) with a constant rank-4
 *     weight, an optional bias and kernel_shape/strides/dilations of 2
 *     entries, pads of 4 when given (any auto_pad and group: SAME padding is
 *     decided per axis), the data its chain input, or
 *   - an elementwise node (ph_node_is_elementwise) whose other inputs are
 *     constants of rank <= 4;
 *   every value of the chain, and its input, of a known static rank-4 shape.
 *   It holds at least one Conv; every Conv's input has W >= H, and one has
 *   W >= min_width (default 20000, msit's threshold) and W > H.  After the
 *   rewrite every Conv has H >= W and one H > W, so the chain is never
 *   swapped back.
 * Changes:  Transpose(perm [0,1,3,2]) before the chain's first node; each
 *   node replaced by a copy (same name) on the swapped layout: Conv weights
 *   W[m, c, kh, kw] become W'[m, c, kw, kh] (new initializer), attribute
 *   pairs swapped (pads [hb, wb, he, we] -> [wb, hb, we, he]); constants of
 *   elementwise nodes aligned to rank 4 and swapped the same way (a
 *   one-element constant stays); the same Transpose after the last node,
 *   which takes over its output (a graph output keeps its name).  The old
 *   chain and what only it read are removed.  Main graph and every
 *   If/Loop/Scan body.
 * Pattern: the chain's last node alone (a chain's length varies, which a
 *   fixed pattern cannot say): the check walks the chain up from it and
 *   hands its first node to the rewrite, which walks it down (each node is
 *   read only by the next).  Each chain is walked from its end only.
 * Exact:    fp (each Conv sums the same products in another order).
 */
#include <string.h>

#include <passhost/passhost.h>

static const int64_t SWAP_HW[4] = {0, 1, 3, 2};

static int static4(const ph_value *v) { return v && ph_value_rank(v) == 4 && ph_value_shape_known(v); }

static int attr_len_ok(const ph_node *n, const char *name, ptrdiff_t want)
{
    const int64_t *p;
    ph_attr_type t = ph_node_attr_type(n, name);
    return t == PH_ATTR_NONE || (t == PH_ATTR_INTS && ph_node_attr_ints(n, name, &p) == want);
}

/* The value that carries the chain into n when n can be in a chain, else
 * NULL. */
static ph_value *chain_input(const ph_node *n)
{
    if (ph_node_output_count(n) != 1 || !static4(ph_node_output(n, 0)))
        return NULL;
    if (ph_node_op(n) == PH_OP_Conv) {
        const ph_tensor *w = ph_node_input_count(n) >= 2 ? ph_value_const(ph_node_input(n, 1)) : NULL;
        if (ph_node_input_count(n) > 3 || !w || ph_tensor_rank(w) != 4 || !attr_len_ok(n, "kernel_shape", 2) ||
            !attr_len_ok(n, "strides", 2) || !attr_len_ok(n, "dilations", 2) || !attr_len_ok(n, "pads", 4) ||
            !static4(ph_node_input(n, 0)))
            return NULL;
        return ph_node_input(n, 0);
    }
    if (!ph_node_is_elementwise(n))
        return NULL;
    ph_value *in = NULL;
    for (size_t i = 0; i < ph_node_input_count(n); i++) {
        ph_value *v = ph_node_input(n, i);
        const ph_tensor *c = v ? ph_value_const(v) : NULL;
        if (!v)
            continue;
        if (c ? ph_tensor_rank(c) > 4 : in != NULL)
            return NULL;
        if (!c)
            in = v;
    }
    return static4(in) ? in : NULL;
}

/* The chain node before n (producing its chain input), or NULL. */
static ph_node *chain_prev(const ph_node *n)
{
    ph_value *v = chain_input(n);
    ph_node *p = v ? ph_value_producer(v) : NULL;
    return p && ph_node_graph(p) == ph_node_graph(n) && ph_value_sole_consumer(v) == n && chain_input(p) ? p
                                                                                                           : NULL;
}

/* The first node of the chain ending at root, when root ends a chain worth
 * swapping, else NULL. */
static ph_node *chain_start(ph_node *root, int64_t min_width)
{
    ph_node *next = ph_value_sole_consumer(ph_node_output(root, 0)), *first = NULL;
    if (!chain_input(root) || (next && chain_prev(next) == root))
        return NULL; /* not the end of a chain */
    int wide = 0, convs = 0;
    for (ph_node *c = root; c; c = chain_prev(c)) {
        first = c;
        if (ph_node_op(c) == PH_OP_Conv) {
            const ph_value *x = ph_node_input(c, 0);
            int64_t h = ph_value_dim(x, 2), w = ph_value_dim(x, 3);
            if (w < h)
                return NULL;
            wide |= w >= min_width && w > h;
            convs++;
        }
    }
    return convs && wide ? first : NULL;
}

/* Worth it: the chain's first node goes to the rewrite. */
static int worth_it(const ph_match *m, const ph_params *params)
{
    ph_node **first = ph_match_state(m, sizeof *first);
    if (!first)
        return PH_ENOMEM;
    return (*first = chain_start(ph_match_root(m), ph_params_int(params, "min_width"))) != NULL;
}

/* Swap entries i and j of attribute `name` of n when it has one. */
static void swap_attr(ph_node *n, const char *name, int i, int j)
{
    const int64_t *p;
    int64_t v[4];
    ptrdiff_t len = ph_node_attr_ints(n, name, &p);
    if (len < 0)
        return;
    memcpy(v, p, (size_t)len * sizeof *v);
    v[i] = p[j], v[j] = p[i];
    ph_node_set_attr_ints(n, name, (size_t)len, v);
}

/* The copy of chain node n reading x on the swapped layout: its output, or
 * NULL (failed; *declined set when the rewrite should just not happen). */
static ph_value *swapped_copy(ph_rewriter *rw, const ph_node *n, ph_value *x, int *declined)
{
    size_t n_in = ph_node_input_count(n);
    ph_value **in = ph_rw_alloc(rw, n_in * sizeof *in), *chain_in = chain_input(n);
    int conv = ph_node_op(n) == PH_OP_Conv;
    for (size_t i = 0; in && i < n_in; i++) {
        ph_value *v = ph_node_input(n, i);
        const ph_tensor *c = v ? ph_value_const(v) : NULL;
        ph_tensor *sc = NULL;
        if (v == chain_in && (!conv || i == 0))
            in[i] = x;
        else if (!c || (conv && i == 2) || (!conv && ph_tensor_numel(c) == 1))
            in[i] = v; /* absent, the bias, or one element */
        else if (!(sc = ph_tensor_transpose(c, 4, SWAP_HW)))
            return *declined = 1, NULL; /* a string constant, or unreadable data */
        else
            in[i] = ph_rw_initializer(rw, ph_value_name(v), sc);
    }
    ph_node *copy = in ? ph_rw_clone(rw, n, NULL, n_in, in) : NULL;
    if (!copy)
        return NULL;
    if (conv) {
        swap_attr(copy, "kernel_shape", 0, 1), swap_attr(copy, "strides", 0, 1);
        swap_attr(copy, "dilations", 0, 1), swap_attr(copy, "pads", 0, 1), swap_attr(copy, "pads", 2, 3);
    }
    ph_value_set_type_transposed(ph_node_output(copy, 0), ph_node_output(n, 0), 4, SWAP_HW);
    return ph_node_output(copy, 0);
}

static int swap(ph_rewriter *rw, const ph_match *m)
{
    ph_node *root = ph_match_root(m), *const *first = ph_match_state(m, sizeof *first);
    ph_value *x = ph_rw_transpose(rw, chain_input(*first), 4, SWAP_HW);
    int declined = 0;
    for (ph_node *c = *first; x; c = ph_value_sole_consumer(ph_node_output(c, 0))) {
        x = swapped_copy(rw, c, x, &declined);
        if (c == root)
            break;
    }
    return declined ? 0 : ph_rw_replace_root(rw, ph_rw_transpose(rw, x, 4, SWAP_HW));
}

static const ph_rule rules[] = {
    {"large_input_conv_chain",
     "y = Conv|" PH_ELEMENTWISE_OPS "(xs*)",
     worth_it, swap},
    {0}};

static const ph_param_def params[] = {
    {"min_width", PH_PARAM_INT, "20000",
     "swap H and W around a Conv chain when a Conv's input is at least this wide (and wider than high)"},
    {NULL, 0, NULL, NULL}};

/* Examples for the rule checker: a wide input (W >= min_width). */
static const ph_rule_example examples[] = {
    {"large_input_conv_chain",
     "x: <T=float|double>[1,<C=1|2>,<2|3>,<20000|20003>]\nw: const <T>[<M=1|2>,<C>,<1|2>,<3|5>]\n"
     "b: const <T>[<M>]\nc1 = Conv(x, w<, b|>) {< strides=[1,2]| pads=[0,1,0,2]| auto_pad=\"SAME_UPPER\"|"
     " dilations=[1,2]>}\nk: const <T>[<M~1,1,1|2,1,1>]\ny = <Add|Mul>(c1, k)\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "transpose_large_input_conv",
    .summary = "Conv chain on a very wide input -> the same chain with H and W swapped between two Transposes",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_FP,
    .params = params,
    .rules = rules,
    .rule_examples = examples)
