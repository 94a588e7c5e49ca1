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
 * Pattern: the chain's last node alone; the check and the rewrite walk the
 *   chain up (its length varies).  Each chain is walked from its end only.
 * Exact:    fp (each Conv sums the same products in another order).
 */
#include <string.h>

#include <passhost/passhost.h>

#define MAX_CHAIN 4096

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

/* The length of the chain ending at root when root ends a chain worth
 * swapping, else 0; with nodes (room for MAX_CHAIN), the chain's nodes,
 * first node first. */
static size_t chain(ph_node *root, int64_t min_width, ph_node **nodes)
{
    ph_node *next = ph_value_sole_consumer(ph_node_output(root, 0));
    if (!chain_input(root) || (next && chain_prev(next) == root))
        return 0; /* not the end of a chain */
    size_t n = 0;
    int wide = 0, convs = 0;
    for (ph_node *c = root; c; c = chain_prev(c)) {
        if (n == MAX_CHAIN)
            return 0;
        if (nodes)
            nodes[n] = c;
        n++;
        if (ph_node_op(c) == PH_OP_Conv) {
            const ph_value *x = ph_node_input(c, 0);
            int64_t h = ph_value_dim(x, 2), w = ph_value_dim(x, 3);
            if (w < h)
                return 0;
            wide |= w >= min_width && w > h;
            convs++;
        }
    }
    if (!convs || !wide)
        return 0;
    for (size_t i = 0; nodes && i < n / 2; i++) {
        ph_node *t = nodes[i];
        nodes[i] = nodes[n - 1 - i];
        nodes[n - 1 - i] = t;
    }
    return n;
}

static int worth_it(const ph_match *m, const ph_params *params)
{
    return chain(ph_match_root(m), ph_params_int(params, "min_width"), NULL) > 0;
}

/* Swap entries i and j of attribute `name` of n when it has one. */
static int swap_attr(ph_node *n, const char *name, int i, int j)
{
    const int64_t *p;
    ptrdiff_t len = ph_node_attr_ints(n, name, &p);
    if (len < 0)
        return 0;
    int64_t v[4];
    memcpy(v, p, (size_t)len * sizeof *v);
    int64_t t = v[i];
    v[i] = v[j];
    v[j] = t;
    return ph_node_set_attr_ints(n, name, (size_t)len, v);
}

/* The copy of chain node n reading x on the swapped layout; NULL on
 * failure, with *declined set when the rewrite should just not happen. */
static ph_node *swapped_copy(ph_rewriter *rw, const ph_node *n, ph_value *x, int *declined)
{
    size_t n_in = ph_node_input_count(n);
    ph_value **in = ph_rw_alloc(rw, n_in * sizeof *in);
    ph_value *chain_in = chain_input(n);
    int conv = ph_node_op(n) == PH_OP_Conv;
    if (!in)
        return NULL;
    for (size_t i = 0; i < n_in; i++) {
        ph_value *v = ph_node_input(n, i);
        const ph_tensor *c = v ? ph_value_const(v) : NULL;
        ph_tensor *sc = NULL;
        if (v == chain_in && (!conv || i == 0))
            in[i] = x;
        else if (!c || (conv && i == 2) || (!conv && ph_tensor_numel(c) == 1))
            in[i] = v; /* absent, the bias, or one element */
        else if (!(sc = ph_tensor_transpose(c, 4, SWAP_HW)))
            return *declined = 1, NULL; /* a string constant, or unreadable data */
        else if (!(in[i] = ph_rw_initializer(rw, ph_value_name(v), sc)))
            return NULL;
    }
    ph_node *copy = ph_rw_clone(rw, n, NULL, n_in, in);
    if (!copy)
        return NULL;
    if (conv && (swap_attr(copy, "kernel_shape", 0, 1) < 0 || swap_attr(copy, "strides", 0, 1) < 0 ||
                 swap_attr(copy, "dilations", 0, 1) < 0 || swap_attr(copy, "pads", 0, 1) < 0 ||
                 swap_attr(copy, "pads", 2, 3) < 0))
        return NULL;
    const ph_value *y = ph_node_output(n, 0);
    int64_t d[4] = {ph_value_dim(y, 0), ph_value_dim(y, 1), ph_value_dim(y, 3), ph_value_dim(y, 2)};
    ph_value_set_type(ph_node_output(copy, 0), ph_value_dtype(y), 4, d);
    return copy;
}

static int swap(ph_rewriter *rw, const ph_match *m)
{
    ph_node *root = ph_match_root(m);
    ph_node **nodes = ph_rw_alloc(rw, MAX_CHAIN * sizeof *nodes);
    if (!nodes)
        return PH_ENOMEM;
    size_t n = chain(root, ph_params_int(ph_rw_params(rw), "min_width"), nodes);
    if (!n)
        return 0;
    ph_value *x = chain_input(nodes[0]);
    ph_node *t = ph_rw_node(rw, "Transpose", 1, &x, 1);
    if (!t || ph_node_set_attr_ints(t, "perm", 4, SWAP_HW) < 0)
        return PH_ENOMEM;
    x = ph_node_output(t, 0);
    for (size_t i = 0; i < n; i++) {
        int declined = 0;
        ph_node *copy = swapped_copy(rw, nodes[i], x, &declined);
        if (!copy)
            return declined ? 0 : PH_ENOMEM;
        x = ph_node_output(copy, 0);
    }
    t = ph_rw_node(rw, "Transpose", 1, &x, 1);
    if (!t || ph_node_set_attr_ints(t, "perm", 4, SWAP_HW) < 0)
        return PH_ENOMEM;
    ph_value_copy_type(ph_node_output(t, 0), ph_node_output(root, 0));
    return ph_rw_replace(rw, ph_node_output(root, 0), ph_node_output(t, 0)) ? PH_ENOMEM : 1;
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
