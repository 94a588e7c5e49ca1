/* push_transpose_through_elementwise - move Transposes below an elementwise
 * op or a Concat, so they meet the next Transpose and cancel.
 *
 * Seed 004 TurnTransposeOrderPass / ConvertDimFreeOpLayoutPass /
 * TurnDimFreeOpLocationPass, in the direction seed 001 makes canonical
 * (down): op(Transpose(a, P), Transpose(b, P), c) computes the same elements
 * as Transpose(op(a, b, c'), P), because an elementwise op does not care
 * where an element sits; c' is constant c aligned to rank r (leading 1s)
 * and transposed by P's inverse.  For Concat the axis moves: axis k of the
 * transposed inputs is axis P[k] of the untransposed ones.
 *
 * Requires: a default-domain node of one output that is elementwise
 *   (ph_node_is_elementwise: Relu, Sigmoid, Tanh, Neg, Abs, Exp, Log, Sqrt,
 *   Erf, Cast, Clip, LeakyRelu, ...; Add, Sub, Mul, Div, Pow, Max, Min, Sum,
 *   Mean, comparisons, Where, PRelu, ...) or a Concat, each of whose inputs
 *   is either
 *   - the output of a default-domain Transpose of its graph with a valid,
 *     non-identity perm P (one P for all of them, rank r), read by nothing
 *     but this node and no graph output (single use: a shared Transpose
 *     would stay and its work be done twice), or
 *   - a constant (initializer) of rank <= r (exactly r for Concat; a larger
 *     rank would broadcast the output to more dims), or absent.
 *   At least one input is transposed.  Termination: pushing never adds a
 *   Transpose.  With k >= 2 distinct input Transposes, k become 1: always
 *   done.  With k = 1 the count stays, so it is done only when the push
 *   leads somewhere: following the output down through single-use values
 *   (no graph output, same graph), each reader being a node this rule would
 *   push through with only constants besides, within 64 nodes the path
 *   reaches a Transpose (merge_consecutive_transpose then composes or
 *   cancels the pair) or a node whose other inputs are Transposes by P (a
 *   k >= 2 push).  Every k = 1 push moves the Transpose one node closer to
 *   that place, and nothing in the default passes moves Transposes up, so
 *   the stage reaches its fixpoint.
 * Changes:  the node is replaced by a copy (same name and attributes; a
 *   Concat's axis remapped) reading the Transposes' inputs and the permuted
 *   constants (new initializers; a one-element constant stays as it is),
 *   followed by Transpose(P), which takes over the node's output (a graph
 *   output keeps its name).  The input Transposes and constants nothing
 *   else reads are removed.  Main graph and every If/Loop/Scan body.
 * Pattern: the root alone (`y = Relu|...|Concat(xs*)`): which inputs are
 *   Transposes varies with the node, which the pattern language cannot say
 *   with a fixed set of statements, so the check reads the producers and
 *   hands the perm to the rewrite (ph_match_state); the commit's pruning
 *   removes the Transposes the old node alone read.
 * Exact:    yes; the same operations on the same elements.
 */
#include <string.h>

#include <passhost/passhost.h>

#define MAX_RANK 64
#define LOOKAHEAD 64

typedef struct perm_info {
    int rank; /* 0 until the first Transpose fixes it */
    int64_t perm[MAX_RANK];
} perm_info;

/* The Transpose producing v when it qualifies as a transposed input of n
 * with perm pi (fixed by the first one); NULL otherwise. */
static ph_node *input_transpose(const ph_value *v, const ph_node *n, perm_info *pi)
{
    ph_node *t = ph_value_producer(v);
    int64_t p[MAX_RANK];
    if (!t || ph_node_op(t) != PH_OP_Transpose || ph_node_graph(t) != ph_node_graph(n) ||
        ph_value_only_reader(v) != n)
        return NULL;
    int r = ph_node_transpose_perm(t, p, MAX_RANK), identity = 1;
    if (r < 1)
        return NULL;
    for (int i = 0; i < r; i++)
        identity &= p[i] == i;
    if (identity || (pi->rank && (r != pi->rank || memcmp(p, pi->perm, (size_t)r * sizeof *p))))
        return NULL;
    pi->rank = r;
    memcpy(pi->perm, p, (size_t)r * sizeof *p);
    return t;
}

/* How many distinct Transposes (counting `moved`, a value a push above will
 * transpose by pi, as one) feed n when n can be pushed through; -1 when it
 * cannot.  Constants are checked against the rank once it is known. */
static int classify(const ph_node *n, const ph_value *moved, perm_info *pi)
{
    int concat = ph_node_op(n) == PH_OP_Concat && ph_node_output_count(n) == 1;
    if (!concat && !ph_node_is_elementwise(n))
        return -1;
    int k = 0, moved_seen = 0;
    for (size_t i = 0; i < ph_node_input_count(n); i++) {
        const ph_value *v = ph_node_input(n, i);
        if (!v || ph_value_const(v))
            continue;
        if (v == moved) {
            k += !moved_seen;
            moved_seen = 1;
            continue;
        }
        if (!input_transpose(v, n, pi))
            return -1;
        size_t j = 0;
        while (ph_node_input(n, j) != v)
            j++;
        k += j == i; /* a Transpose read twice counts once */
    }
    if (k < 1 || pi->rank < 1)
        return -1;
    for (size_t i = 0; i < ph_node_input_count(n); i++) {
        const ph_tensor *c = ph_node_input(n, i) ? ph_value_const(ph_node_input(n, i)) : NULL;
        if (c && (concat ? ph_tensor_rank(c) != (size_t)pi->rank : ph_tensor_rank(c) > (size_t)pi->rank))
            return -1;
    }
    if (concat) {
        int64_t axis = ph_node_attr_int(n, "axis", INT64_MIN);
        if (ph_node_attr_type(n, "axis") != PH_ATTR_INT || axis < -pi->rank || axis >= pi->rank)
            return -1;
    }
    return k;
}

/* 1 if, after a k = 1 push of the Transpose onto v, the path down from v
 * reaches a Transpose or a node with another Transpose by the same perm. */
static int leads_to_transpose(const ph_value *v, const perm_info *pi)
{
    for (int d = 0; d < LOOKAHEAD; d++) {
        ph_node *c = ph_value_sole_consumer(v);
        if (!c || ph_node_graph(c) != ph_value_graph(v))
            return 0;
        if (ph_node_op(c) == PH_OP_Transpose)
            return 1;
        perm_info pc = *pi;
        int k = classify(c, v, &pc);
        if (k != 1)
            return k > 1;
        v = ph_node_output(c, 0);
    }
    return 0;
}

/* The perm is found on the stack and handed to the rewrite only for a push
 * (most nodes asked have no Transpose above them). */
static int worth_it(const ph_match *m, const ph_params *params)
{
    perm_info found;
    found.rank = 0;
    ph_node *n = ph_match_root(m);
    int k = classify(n, NULL, &found);
    if (!(k >= 2 || (k == 1 && leads_to_transpose(ph_node_output(n, 0), &found))))
        return 0;
    perm_info *pi = ph_match_state(m, sizeof *pi);
    if (!pi)
        return PH_ENOMEM;
    pi->rank = found.rank;
    memcpy(pi->perm, found.perm, (size_t)found.rank * sizeof *pi->perm);
    return 1;
}

static int push(ph_rewriter *rw, const ph_match *m)
{
    ph_node *n = ph_match_root(m);
    ph_value *y = ph_node_output(n, 0);
    const perm_info *pi = ph_match_state(m, sizeof *pi);
    int r = pi->rank, concat = ph_node_op(n) == PH_OP_Concat;
    int64_t inv[MAX_RANK];
    for (int i = 0; i < r; i++)
        inv[pi->perm[i]] = i;
    size_t n_in = ph_node_input_count(n);
    ph_value **in = ph_rw_alloc(rw, (n_in ? n_in : 1) * sizeof *in);
    for (size_t i = 0; in && i < n_in; i++) {
        ph_value *v = ph_node_input(n, i);
        const ph_tensor *c = v ? ph_value_const(v) : NULL;
        ph_tensor *pc = NULL;
        if (!v || (c && !concat && ph_tensor_numel(c) == 1))
            in[i] = v; /* absent, or one element: broadcasts the same either way */
        else if (!c)
            in[i] = ph_node_input(ph_value_producer(v), 0);
        else if (!(pc = ph_tensor_transpose(c, (size_t)r, inv)))
            return 0; /* a string constant, or unreadable data */
        else
            in[i] = ph_rw_initializer(rw, ph_value_name(v), pc);
    }
    ph_node *op = in ? ph_rw_clone(rw, n, NULL, n_in, in) : NULL;
    if (concat) {
        int64_t axis = ph_node_attr_int(n, "axis", 0);
        ph_node_set_attr_int(op, "axis", pi->perm[axis < 0 ? axis + r : axis]);
    }
    ph_value *z = op ? ph_node_output(op, 0) : NULL;
    ph_value_set_type_transposed(z, y, r, inv); /* the new value's type: y's, untransposed */
    return ph_rw_replace_root(rw, ph_rw_transpose(rw, z, (size_t)r, pi->perm));
}

static const ph_rule rules[] = {
    {"push_transpose",
     "y = " PH_ELEMENTWISE_OPS "|Concat(xs*)",
     worth_it, push},
    {0}};

/* Examples for the rule checker: two Transposes by one perm into an
 * elementwise op or a Concat, and one followed by another Transpose. */
static const ph_rule_example examples[] = {
    {"push_transpose", "a: <T=float|double|int32>[<2|1>,3,4]\nb: <T>[<2|1>,3,4]\n"
                       "ta = Transpose(a) {perm=[<P=2,0,1|1,2,0|0,2,1>]}\ntb = Transpose(b) {perm=[<P>]}\n"
                       "y = <Add|Mul|Sub|Max>(ta, tb)\nreturn y", NULL},
    {"push_transpose", "a: <T=float|double>[2,3,4]\nb: <T>[2,3,4]\nc: const <T>[<1,1|4,1|1,2>]\n"
                       "ta = Transpose(a) {perm=[2,0,1]}\ntb = Transpose(b) {perm=[2,0,1]}\n"
                       "y = Concat(ta, tb) {axis=<0|1|-1>}\nz = <Relu|Neg|Abs>(y)\nw = Add(z, c)\n"
                       "o = Transpose(w) {perm=[1,2,0]}\nreturn o", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "push_transpose_through_elementwise",
    .summary = "the same Transpose on every input of an elementwise op or Concat (constants permuted) "
               "-> one Transpose after it, where it can cancel",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules,
    .rule_examples = examples)
