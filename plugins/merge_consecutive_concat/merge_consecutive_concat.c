/* merge_consecutive_concat - splice Concats into the Concat they feed.
 *
 * Seed 000 KnowledgeMergeConsecutiveConcat, 004 MergeMultipleConcatPass:
 * Concat(a, Concat(b, c), d) on one axis is Concat(a, b, c, d).
 *
 * Requires: an outer default-domain Concat; an input c of it produced by a
 *   default-domain Concat of the same graph, on the same axis, where every
 *   use of c is an input of the outer Concat (it may read c more than once)
 *   and c is no graph output.  Axes are equal when the attributes are
 *   equal, or equal after normalising a negative axis with the known rank
 *   (unknown rank and different signs: not merged).  A missing axis is 1
 *   below opset 4 (Concat-1), malformed from opset 4.
 * Changes:  the outer Concat is replaced by one Concat (same attributes and
 *   name) whose inputs are the outer's with every such c replaced, in
 *   place, by the inputs of its Concat - recursively, so a tree of Concats
 *   becomes one node in one rewrite, made at its top (a Concat that is
 *   itself to be spliced waits for its reader); the spliced Concats are
 *   removed.
 *   Main graph and every If/Loop/Scan body.
 * Rules:    the two-statement rule is the common case (a Concat as first
 *   input) and gives the rule set depth 2, so a Concat is looked at again
 *   when a Concat feeding it changes (e.g. loses its other reader); the
 *   one-statement rule finds an inner Concat at any input position, which
 *   the pattern language cannot name.
 * Exact:    yes; only data movement.
 */
#include <stdlib.h>

#include <passhost/passhost.h>

/* The axis of Concat n, normalised with rank when negative; 0, or -1 when
 * missing, malformed or not normalisable. */
static int concat_axis(const ph_node *n, int rank, int64_t *axis)
{
    ph_attr_type t = ph_node_attr_type(n, "axis");
    if (t == PH_ATTR_NONE && ph_node_opset(n) < 4) {
        *axis = 1;
        return 0;
    }
    if (t != PH_ATTR_INT)
        return -1;
    *axis = ph_node_attr_int(n, "axis", 0);
    if (*axis < 0 && rank >= 0)
        *axis += rank;
    return *axis < 0 || (rank >= 0 && *axis >= rank) ? -1 : 0;
}

/* 1 if v is produced by a Concat on `outer`'s axis that only `reader`
 * reads: its inputs may be spliced into reader's place. */
static int splicable(const ph_value *v, const ph_node *reader, const ph_node *outer, int rank)
{
    ph_node *p = v ? ph_value_producer(v) : NULL;
    if (!p || ph_node_op(p) != PH_OP_Concat || ph_node_graph(p) != ph_node_graph(reader) ||
        ph_value_only_reader(v) != reader || !ph_node_input_count(p))
        return 0;
    if (ph_node_attr_type(p, "axis") == PH_ATTR_INT && ph_node_attr_type(outer, "axis") == PH_ATTR_INT &&
        ph_node_attr_int(p, "axis", 0) == ph_node_attr_int(outer, "axis", 0))
        return 1;
    int64_t a, b;
    return !concat_axis(p, rank, &a) && !concat_axis(outer, rank, &b) && a == b;
}

static int rank_of(const ph_node *n)
{
    int r = ph_value_rank(ph_node_output(n, 0));
    for (size_t i = 0; r < 0 && i < ph_node_input_count(n); i++)
        if (ph_node_input(n, i)) /* an omitted input (malformed) has no rank */
            r = ph_value_rank(ph_node_input(n, i));
    return r;
}

/* 1 if root has an input to splice and is the top of its tree: a Concat
 * that will itself be spliced into its reader leaves the work to that
 * reader (visited in the same run), so a chain of k Concats is one rewrite
 * of cost k, not k rewrites of growing cost. */
static int has_inner(const ph_match *m, const ph_params *params)
{
    const ph_node *root = ph_match_root(m);
    int rank = rank_of(root);
    ph_value *y = ph_node_output(root, 0);
    const ph_node *reader = ph_value_use_count(y) ? ph_value_use(y, 0, NULL) : NULL;
    if (reader && ph_node_op(reader) == PH_OP_Concat && splicable(y, reader, reader, rank))
        return 0;
    for (size_t i = 0; i < ph_node_input_count(root); i++)
        if (splicable(ph_node_input(root, i), root, root, rank))
            return 1;
    return 0;
}

/* A growable array of (value, reader) pairs. */
typedef struct item {
    ph_value *v;
    const ph_node *reader;
} item;

static int push(item **a, size_t *n, size_t *cap, ph_value *v, const ph_node *reader)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        item *p = realloc(*a, c * sizeof *p);
        if (!p)
            return PH_ENOMEM;
        *a = p;
        *cap = c;
    }
    (*a)[(*n)++] = (item){v, reader};
    return 0;
}

/* Push n's inputs in reverse, so they pop in order. */
static int push_inputs(item **a, size_t *n, size_t *cap, const ph_node *node)
{
    for (size_t i = ph_node_input_count(node); i-- > 0;)
        if (push(a, n, cap, ph_node_input(node, i), node))
            return PH_ENOMEM;
    return 0;
}

/* y = Concat(..., c, ...) -> one Concat with every splicable c (depth
 * first, an explicit stack: a long chain costs no recursion) expanded. */
static int merge(ph_rewriter *rw, const ph_match *m)
{
    ph_node *root = ph_match_root(m);
    int rank = rank_of(root), rc = PH_ENOMEM;
    item *stack = NULL;
    size_t n_stack = 0, cap_stack = 0, n_out = 0, cap_out = 0;
    ph_value **out = NULL;
    if (push_inputs(&stack, &n_stack, &cap_stack, root))
        goto done;
    while (n_stack) {
        item it = stack[--n_stack];
        if (!it.v) {
            rc = 0; /* an omitted input: not a Concat we understand */
            goto done;
        }
        if (splicable(it.v, it.reader, root, rank)) {
            if (push_inputs(&stack, &n_stack, &cap_stack, ph_value_producer(it.v)))
                goto done;
            continue;
        }
        if (n_out == cap_out) {
            cap_out = cap_out ? 2 * cap_out : 16;
            ph_value **p = realloc(out, cap_out * sizeof *p);
            if (!p)
                goto done;
            out = p;
        }
        out[n_out++] = it.v;
    }
    ph_node *c = ph_rw_clone(rw, root, NULL, n_out, out);
    rc = c && !ph_rw_replace(rw, ph_node_output(root, 0), ph_node_output(c, 0)) ? 1 : PH_ENOMEM;
done:
    free(stack);
    free(out);
    return rc;
}

static const ph_rule rules[] = {
    {"concat_into_first_input", "c = Concat(cs*); y = Concat(c, xs*)", has_inner, merge},
    {"concat_into_any_input", "y = Concat(xs*)", has_inner, merge},
    {0}};

/* Examples for the rule checker: a Concat into a later input of another. */
static const ph_rule_example examples[] = {
    {"concat_into_any_input", "a: <T=float|int64>[2,<3|1>]\nb: <T>[2,<2|4>]\nc: <T>[2,3]\n"
                              "i = Concat(b, c) {axis=<1|-1>}\ny = Concat(a, i) {axis=1}\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "merge_consecutive_concat",
    .summary = "Concat feeding only another Concat on the same axis -> one Concat",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules,
    .rule_examples = examples)
