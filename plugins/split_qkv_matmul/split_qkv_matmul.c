/* split_qkv_matmul - split the fused QKV projection of a transformer into
 * one MatMul per part (seed 000 KnowledgeSplitQKVMatmul), so the parts run
 * in parallel and the Gathers (or the Split) that cut the product go.
 *
 * Requires: P = MatMul(x, W) with W a constant [H, K] of a float dtype and
 *   x (not constant, W's dtype) of known rank; then 0 to 8 elementwise
 *   Add/Sub/Mul/Div, each with one constant operand (either side) of W's
 *   dtype whose dims are all 1 but the last, which is K or 1 (so it is per
 *   column or a scalar and widens nothing); then Reshape(shape) with
 *   `shape` a constant R whose trailing entries are positive and multiply
 *   to K, R[j..] (the product's last axis reshaped on its own: the leading
 *   entries may hold 0, copying a leading dim of P, or -1); then
 *   t = Transpose(perm T); every value on the way read only by the next
 *   node, no graph output, all in one graph.  With s = T[g] the axis the
 *   parts are cut from, in R[j..], and N = R[s]:
 *   - Gather form: every reader of t is a Gather on axis g with a constant
 *     index (a scalar, or [i]), distinct, at most N of them; a Gather whose
 *     output feeds only a Transpose has that Transpose merged;
 *   - Split form: t's only reader is a Split on axis g into 2 to 4 equal
 *     pieces (N = their number, sizes an attribute before opset 13, an
 *     input from 13, or absent: even).
 *   And N equals the parameter `parts` (unless 0: any N >= 2) and K / N is
 *   at least `min_hidden`.
 * Changes: for each Gather (index i) or Split piece (i of N), with the
 *   columns of W that land in part i (column k = (o * R[s] + d) * inner + u
 *   in mixed radix over R[j..]; part i keeps d in its range, in order):
 *     MatMul(x, W_i) -> the same elementwise ops on the same columns of
 *     their constants (a scalar or [.., 1] constant is shared) ->
 *     Reshape(R with R[s] = piece length, or without axis s for a scalar
 *     Gather) -> Transpose(T without g for a scalar Gather, composed with
 *     the merged Transpose; none when that is the identity)
 *   takes over the Gather's (merged Transpose's, Split piece's) output.
 *   The Gathers are rewritten one at a time; the shared MatMul chain goes
 *   with the last one.  A Gather or Split piece nobody reads gets no part.
 * Exact: fp (each part is the same dot products, in a MatMul of its own).
 */
#include <string.h>

#include <passhost/passhost.h>

#define MAX_R 16
#define MAX_CHAIN 8
#define MAX_PARTS 64

/* The analysis of a match, handed from the check to the rewrite. */
typedef struct qkv {
    ph_node *chain[MAX_CHAIN]; /* elementwise ops, MatMul side first */
    size_t at[MAX_CHAIN];      /* input of chain[k] that reads the chain */
    int n_chain;
    ph_value *x;
    const ph_tensor *w;
    int64_t K, R[MAX_R], T[MAX_R], T2[MAX_R]; /* T2: the merged Transpose's perm */
    int rp, q, j, s, g; /* P's rank; R's rank; suffix start; split axis in R; in t */
    int64_t start;      /* Gather: the piece taken; Split: the piece length */
    int squeeze;        /* Gather: its index is a scalar (the axis goes) */
} qkv;

/* v is read once, by a node of g, and is no graph output. */
static int single_use(const ph_value *v, const ph_graph *g)
{
    ph_node *c = ph_value_sole_consumer(v);
    return c && ph_node_graph(c) == g;
}

/* The common part: MatMul, elementwise chain, Reshape, Transpose; the axis
 * $axis of t that is cut (normalized here).  The elementwise chain has 0 to
 * 8 links, which a fixed pattern cannot say: it is walked up from e. */
static int analyze(const ph_match *m, qkv *a)
{
    memset(a, 0, sizeof *a);
    ph_node *r = ph_match_node(m, "r"), *t = ph_match_node(m, "t");
    ph_graph *g = ph_node_graph(r);
    ph_value *v = ph_match_value(m, "e");
    ph_node *n;
    if (ph_value_graph_output_count(ph_node_output(t, 0)))
        return 0;
    for (;;) {
        n = ph_value_producer(v);
        if (!n || ph_node_graph(n) != g || !single_use(v, g) || ph_node_output_count(n) != 1)
            return 0;
        if (ph_node_op(n) == PH_OP_MatMul)
            break;
        ph_op op = ph_node_op(n);
        if ((op != PH_OP_Add && op != PH_OP_Sub && op != PH_OP_Mul && op != PH_OP_Div) ||
            ph_node_input_count(n) != 2 || a->n_chain == MAX_CHAIN)
            return 0;
        size_t at = ph_value_const(ph_node_input(n, 0)) ? 1 : 0;
        memmove(a->chain + 1, a->chain, (size_t)a->n_chain * sizeof *a->chain);
        memmove(a->at + 1, a->at, (size_t)a->n_chain * sizeof *a->at);
        a->chain[0] = n, a->at[0] = at, a->n_chain++;
        v = ph_node_input(n, at);
    }
    a->x = ph_node_input(n, 0);
    a->w = ph_value_const(ph_node_input(n, 1));
    int dt = a->w ? ph_tensor_dtype(a->w) : 0;
    a->rp = ph_value_rank(a->x);
    if (!a->w || ph_tensor_rank(a->w) != 2 || !ph_dtype_is_float(dt) || !a->x || ph_value_const(a->x) ||
        ph_value_dtype(a->x) != dt || a->rp < 1 || !ph_tensor_data(a->w) || ph_tensor_dim(a->w, 0) < 1)
        return 0;
    a->K = ph_tensor_dim(a->w, 1);
    for (int k = 0; k < a->n_chain; k++) {
        const ph_tensor *c = ph_value_const(ph_node_input(a->chain[k], 1 - a->at[k]));
        int rc = c ? (int)ph_tensor_rank(c) : -1;
        if (!c || ph_tensor_dtype(c) != dt || rc > a->rp || ph_node_attr_count(a->chain[k]) ||
            (rc > 0 && ph_tensor_dim(c, (size_t)rc - 1) != 1 && ph_tensor_dim(c, (size_t)rc - 1) != a->K))
            return 0;
        for (int d = 0; d + 1 < rc; d++)
            if (ph_tensor_dim(c, (size_t)d) != 1)
                return 0;
    }
    ptrdiff_t q = ph_value_const_ints(ph_match_value(m, "shape"), a->R, NULL, MAX_R);
    if (q < 1 || ph_node_transpose_perm(t, a->T, MAX_R) != q)
        return 0;
    a->q = (int)q;
    int64_t prod = 1;
    for (a->j = a->q; a->j > 0 && prod < a->K;) {
        if (a->R[--a->j] <= 0)
            return 0;
        prod *= a->R[a->j];
    }
    if (prod != a->K)
        return 0;
    for (int i = 0; i < a->j; i++)
        if (a->R[i] < -1 || (a->R[i] == 0 && (i >= a->rp - 1 || ph_match_int(m, "allowzero", 0))))
            return 0;
    int64_t axis = ph_match_int(m, "axis", 0);
    a->g = (int)(axis < 0 ? axis + a->q : axis);
    if (a->g < 0 || a->g >= a->q)
        return 0;
    a->s = (int)a->T[a->g];
    return a->s >= a->j;
}

/* N parts allowed by the parameters. */
static int parts_ok(const qkv *a, int64_t N, const ph_params *params)
{
    int64_t want = ph_params_int(params, "parts");
    return N >= 2 && N <= MAX_PARTS && (want <= 0 || N == want) && a->K / N >= ph_params_int(params, "min_hidden");
}

/* The piece of axis s a Gather takes: index into *start; 1 if its index is
 * a scalar (the axis goes).  -1 if it is no such Gather of t. */
static int gather_piece(const ph_node *ga, const qkv *a, int64_t *start)
{
    const ph_tensor *it = ph_value_const(ph_node_input(ga, 1));
    int64_t axis = ph_node_attr_int(ga, "axis", 0), N = a->R[a->s], one = 1;
    if (ph_node_op(ga) != PH_OP_Gather || ph_node_input_count(ga) != 2 || !it || ph_tensor_numel(it) != 1 ||
        ph_tensor_rank(it) > 1 || (axis < 0 ? axis + a->q : axis) != a->g ||
        ph_tensor_read_i64(it, ph_tensor_rank(it), &one, start))
        return -1;
    if (*start < 0)
        *start += N;
    return *start >= 0 && *start < N ? ph_tensor_rank(it) == 0 : -1;
}

/* Gather form: every reader of t is a Gather taking a distinct piece; the
 * merged Transpose z (when the form has one) fits.  The analysis goes to
 * the rewrite as the match's state. */
static int check_gather(const ph_match *m, const ph_params *params)
{
    qkv *a = ph_match_state(m, sizeof *a);
    if (!a)
        return PH_ENOMEM;
    ph_value *t = ph_match_value(m, "t"), *out = ph_node_output(ph_match_root(m), 0);
    ph_node *z = ph_match_node(m, "z");
    if ((!ph_value_use_count(out) && !ph_value_graph_output_count(out)) || !analyze(m, a) ||
        !parts_ok(a, a->R[a->s], params))
        return 0;
    uint64_t seen = 0;
    size_t n = ph_value_use_count(t);
    if (n > (size_t)a->R[a->s])
        return 0;
    for (size_t u = 0; u < n; u++) {
        size_t at;
        ph_node *c = ph_value_use(t, u, &at);
        int64_t i;
        if (at != 0 || ph_node_graph(c) != ph_node_graph(ph_match_root(m)) || gather_piece(c, a, &i) < 0 ||
            (seen >> i & 1))
            return 0;
        seen |= (uint64_t)1 << i;
    }
    a->squeeze = gather_piece(ph_match_node(m, "y"), a, &a->start);
    return !z || ph_node_transpose_perm(z, a->T2, MAX_R) == a->q - a->squeeze;
}

/* Part [start, start + len) of axis s: the new chain's output (NULL on
 * failure).  squeeze drops the axis; T2 (or NULL) is a Transpose after. */
static ph_value *build_part(ph_rewriter *rw, const qkv *a, int64_t start, int64_t len, int squeeze,
                            const int64_t *T2)
{
    int64_t inner = 1, D = a->R[a->s];
    for (int i = a->s + 1; i < a->q; i++)
        inner *= a->R[i];
    ph_value *in[2] = {a->x, ph_rw_initializer(rw, "qkv_w", ph_tensor_slice_columns(a->w, D, inner, start, len))};
    ph_value *v = ph_rw_op(rw, "MatMul", 2, in);
    for (int k = 0; k < a->n_chain && v; k++) {
        ph_value *cv = ph_node_input(a->chain[k], 1 - a->at[k]), *ein[2];
        const ph_tensor *c = ph_value_const(cv);
        size_t rc = ph_tensor_rank(c);
        if (rc > 0 && ph_tensor_dim(c, rc - 1) == a->K && a->K != 1) /* per column: its block */
            cv = ph_rw_initializer(rw, "qkv_c", ph_tensor_slice_columns(c, D, inner, start, len));
        ein[a->at[k]] = v, ein[1 - a->at[k]] = cv;
        v = ph_rw_op(rw, ph_node_op_type(a->chain[k]), 2, ein);
    }
    int64_t Ri[MAX_R], F[MAX_R], Tp[MAX_R];
    int qi = 0, identity = 1;
    for (int i = 0; i < a->q; i++)
        if (i != a->s || !squeeze)
            Ri[qi++] = i == a->s ? len : a->R[i];
    for (int k = 0, o = 0; k < a->q; k++)
        if (k != a->g || !squeeze)
            Tp[o++] = squeeze && a->T[k] > a->s ? a->T[k] - 1 : a->T[k];
    for (int k = 0; k < qi; k++)
        identity &= (F[k] = T2 ? Tp[T2[k]] : Tp[k]) == k;
    v = v ? ph_rw_reshape(rw, v, (size_t)qi, Ri) : NULL;
    return identity ? v : ph_rw_transpose(rw, v, (size_t)qi, F);
}

static int split_gather(ph_rewriter *rw, const ph_match *m)
{
    const qkv *a = ph_match_state(m, sizeof *a);
    return ph_rw_replace_root(rw, build_part(rw, a, a->start, 1, a->squeeze, ph_match_node(m, "z") ? a->T2 : NULL));
}

/* The piece length of the Split (every piece the same), or 0. */
static int64_t split_len(const ph_match *m, const qkv *a)
{
    int64_t sizes[MAX_PARTS], D = a->R[a->s], N = (int64_t)ph_node_output_count(ph_match_root(m));
    const int64_t *attr;
    ptrdiff_t n = ph_match_ints(m, "split", &attr);
    if (n >= 0) {
        if (n > MAX_PARTS)
            return 0;
        memcpy(sizes, attr, (size_t)n * sizeof *sizes);
    } else if (ph_match_value(m, "sp")) {
        n = ph_value_const_ints(ph_match_value(m, "sp"), sizes, NULL, MAX_PARTS);
    } else {
        for (n = 0; n < N; n++)
            sizes[n] = D % N ? 0 : D / N;
    }
    if (n != N)
        return 0;
    for (ptrdiff_t k = 0; k < n; k++)
        if (sizes[k] != sizes[0] || sizes[k] < 1)
            return 0;
    return sizes[0] * N == D ? sizes[0] : 0;
}

/* Split form: the pieces are even and their number allowed. */
static int check_split(const ph_match *m, const ph_params *params)
{
    qkv *a = ph_match_state(m, sizeof *a);
    if (!a)
        return PH_ENOMEM;
    return analyze(m, a) && (a->start = split_len(m, a)) &&
           parts_ok(a, (int64_t)ph_node_output_count(ph_match_root(m)), params);
}

static int split_split(ph_rewriter *rw, const ph_match *m)
{
    const qkv *a = ph_match_state(m, sizeof *a);
    ph_node *sp = ph_match_root(m);
    for (size_t k = 0; k < ph_node_output_count(sp); k++) {
        ph_value *y = ph_node_output(sp, k);
        if (y && (ph_value_use_count(y) || ph_value_graph_output_count(y))) /* a piece nobody reads: no part */
            ph_rw_replace(rw, y, build_part(rw, a, (int64_t)k * a->start, a->start, 0, NULL));
    }
    return ph_rw_done(rw);
}

#define CHAIN "r = Reshape(e, shape:const) {allowzero(0)=$allowzero}\n"

static const ph_rule rules[] = {
    {"qkv_gather", CHAIN "t:shared = Transpose(r)\n"
     "( y = Gather(t, i:const) {axis(0)=$axis} | y = Gather(t, i:const) {axis(0)=$axis}; z = Transpose(y) )",
     check_gather, split_gather},
    {"qkv_split", CHAIN "t = Transpose(r)\n"
     "( y0, y1 = Split(t, sp?:const) {axis(0)=$axis, split?=$split}\n"
     "| y0, y1, y2 = Split(t, sp?:const) {axis(0)=$axis, split?=$split}\n"
     "| y0, y1, y2, y3 = Split(t, sp?:const) {axis(0)=$axis, split?=$split} )",
     check_split, split_split},
    {0}};

static const ph_param_def params[] = {
    {"parts", PH_PARAM_INT, "3", "split only into this many parts (Q, K, V: 3); 0 for any number from 2"},
    {"min_hidden", PH_PARAM_INT, "1", "split only when each part keeps at least this many weight columns"},
    {NULL, 0, NULL, NULL}};

/* Examples for the rule checker: a fused QKV projection cut by Gathers or
 * a Split (3 parts, the default). */
#define QKV_HEAD "x: <T=float|double>[<B=1|2>,<S=3|4>,<H=4|6>]\nw: const <T>[<H>,<HD=12|24>]\n" \
                 "bias: const <T>[<HD>]\np = MatMul(x, w)\ne = Add(p, bias)\n"
static const ph_rule_example examples[] = {
    {"qkv_gather", QKV_HEAD "sh: int64[5] = [0, 0, 3, 2, <HD~2|4>]\nr = Reshape(e, sh)\n"
                   "t = Transpose(r) {perm=[2,0,3,1,4]}\ni0: int64[] = [0]\ni1: int64[] = [1]\ni2: int64[] = [2]\n"
                   "q = Gather(t, i0) {axis=0}\nk = Gather(t, i1) {axis=0}\nv = Gather(t, i2) {axis=0}\n"
                   "return q, k, v", NULL},
    {"qkv_gather", QKV_HEAD "sh: int64[5] = [0, 0, 3, 2, <HD~2|4>]\nr = Reshape(e, sh)\n"
                   "t = Transpose(r) {perm=[2,0,3,1,4]}\ni0: int64[] = [0]\ni1: int64[] = [1]\ni2: int64[] = [2]\n"
                   "q = Gather(t, i0) {axis=0}\nk0 = Gather(t, i1) {axis=0}\nk = Transpose(k0) {perm=[0,1,3,2]}\n"
                   "v = Gather(t, i2) {axis=0}\nreturn q, k, v", NULL},
    {"qkv_split", "opset <13|17>\n" QKV_HEAD "sh: int64[5] = [0, 0, 3, 2, <HD~2|4>]\nr = Reshape(e, sh)\n"
                   "t = Transpose(r) {perm=[2,0,3,1,4]}\n"
                   "q, k, v = Split(t) {axis=0}\nreturn q, k, v", NULL},
    {"qkv_split", "opset <13|17>\n" QKV_HEAD "sh: int64[5] = [0, 0, 2, 3, <HD~2|4>]\nr = Reshape(e, sh)\n"
                   "t = Transpose(r) {perm=[2,0,3,1,4]}\nq, k = Split(t) {axis=0}\nreturn q, k",
     (const char *const[]){"parts=2", NULL}},
    {"qkv_split", "opset <13|17>\n" QKV_HEAD "sh: int64[5] = [0, 0, 4, 3, <HD~1|2>]\nr = Reshape(e, sh)\n"
                   "t = Transpose(r) {perm=[2,0,3,1,4]}\nq, k, v, o = Split(t) {axis=0}\nreturn q, k, v, o",
     (const char *const[]){"parts=0", NULL}},
    {0}};

PH_PASS_DEFINE(
    .name = "split_qkv_matmul",
    .summary = "MatMul -> elementwise* -> Reshape -> Transpose -> Gather x N (or Split) cutting the product "
               "evenly -> N MatMuls on column blocks of W, Transposes merged",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 0,
    .exactness = PH_FP,
    .params = params,
    .rules = rules,
    .rule_examples = examples)
