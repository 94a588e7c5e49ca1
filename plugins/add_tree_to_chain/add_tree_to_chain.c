/* add_tree_to_chain - a tree of Adds becomes a chain, each Add taking the
 * running sum and the next operand, so operands are consumed as they come.
 *
 * Seed 004 TurnOpOrderPass: an addition tree (e.g. (a + b) + (c + d), as
 * left by splitting a big Conv into partial sums) keeps every partial sum
 * alive until the tree's top; the daisy chain ((a + b) + c) + d needs only
 * the running sum and the newest operand.
 *
 * Requires: a tree of default-domain Adds: each Add has two inputs and one
 *   output, all of one known dtype and one known shape (no broadcasting;
 *   symbolic dims equal by name), and each Add below the top produces a
 *   value read only by its parent Add (one use, no graph output, same
 *   graph).  The top is an Add whose output is not such a value.  Leaves
 *   are the other inputs, in operand order (left to right).  At least one
 *   Add has two Adds of the tree as inputs (it is not a chain already): a
 *   chain, of any shape, is left alone, which is what makes the pass stop.
 * Changes:  the tree is replaced by a left-deep chain over the same leaves,
 *   in the same order: s1 = l0 + l1, s2 = s1 + l2, ...  Each chain Add but
 *   the last is placed right after the producer of its new leaf (or after
 *   the previous chain Add when that leaf has no producer here or the same
 *   one), so it runs as soon as the leaf is ready; the last takes the top's
 *   name and place.  The top's output is replaced (a graph output keeps its
 *   name); the tree's Adds are removed.  Main graph and every If/Loop/Scan
 *   body.
 * Pattern: an Add reading an Add (the tree's top and one Add below it);
 *   the check and the rewrite walk the tree (its size varies, which a
 *   fixed pattern cannot say), without a stack: an inner Add's parent is
 *   the one reader of its output.  Cost: each tree is walked from its top
 *   only, so every Add is visited O(1) times; no memory.
 * Exact:    fp (the additions are reassociated; exact for integers).
 */
#include <passhost/passhost.h>

/* An Add of one dtype and shape on both inputs and the output. */
static int tree_add(const ph_node *n)
{
    if (!n || ph_node_op(n) != PH_OP_Add || ph_node_input_count(n) != 2 || ph_node_output_count(n) != 1)
        return 0;
    const ph_value *y = ph_node_output(n, 0), *a = ph_node_input(n, 0), *b = ph_node_input(n, 1);
    int dt = ph_value_dtype(y);
    return a && b && dt != PH_DT_UNDEFINED && ph_value_dtype(a) == dt && ph_value_dtype(b) == dt &&
           ph_value_same_shape(a, y) && ph_value_same_shape(b, y);
}

/* The Add of the tree producing v, an input of tree Add `reader`; NULL when
 * v is a leaf. */
static ph_node *inner_add(const ph_value *v, const ph_node *reader)
{
    ph_node *p = ph_value_producer(v);
    return p && ph_node_graph(p) == ph_node_graph(reader) && ph_value_sole_consumer(v) == reader &&
                   tree_add(p)
               ? p
               : NULL;
}

/* A walk over the leaves of the tree under top, left to right. */
typedef struct walk {
    ph_node *top, *a; /* the Add being visited */
    size_t i;         /* its input to visit next (2: done, go up) */
    int branching;    /* an Add with two Adds of the tree as inputs was seen */
} walk;

/* The next leaf, or NULL when the walk is over. */
static ph_value *next_leaf(walk *w)
{
    for (;;) {
        if (w->i == 2) {
            if (w->a == w->top)
                return NULL;
            ph_value *y = ph_node_output(w->a, 0);
            w->a = ph_value_sole_consumer(y);
            w->i = ph_node_input(w->a, 0) == y ? 1 : 2;
            continue;
        }
        ph_value *v = ph_node_input(w->a, w->i);
        ph_node *below = inner_add(v, w->a);
        w->branching |= w->i == 0 && below && inner_add(ph_node_input(w->a, 1), w->a);
        if (below) {
            w->a = below, w->i = 0;
            continue;
        }
        w->i++;
        return v;
    }
}

/* The top is a tree Add that no tree Add reads, and the tree branches. */
static int not_a_chain(const ph_match *m, const ph_params *params)
{
    ph_node *top = ph_match_root(m), *up = ph_value_sole_consumer(ph_node_output(top, 0));
    if (!tree_add(top) || (up && ph_node_graph(up) == ph_node_graph(top) && tree_add(up)))
        return 0;
    walk w = {top, top, 0, 0};
    while (next_leaf(&w))
        ;
    return w.branching;
}

/* The producer of v when it is a node of g, else NULL. */
static ph_node *producer_in(const ph_value *v, const ph_graph *g)
{
    ph_node *p = ph_value_producer(v);
    return p && ph_node_graph(p) == g ? p : NULL;
}

/* The chain over the leaves; one leaf behind the walk, so the last one
 * (read by a copy of the top: its name and place) is known. */
static int to_chain(ph_rewriter *rw, const ph_match *m)
{
    ph_node *top = ph_match_root(m), *used = NULL, *prev = NULL;
    ph_graph *g = ph_node_graph(top);
    walk w = {top, top, 0, 0};
    ph_value *y = ph_node_output(top, 0), *acc = next_leaf(&w), *leaf = next_leaf(&w), *next;
    ph_node *after = producer_in(acc, g);
    for (; (next = next_leaf(&w)) && ph_rw_status(rw) == 0; leaf = next) {
        ph_value *in[2] = {acc, leaf};
        ph_node *p = producer_in(leaf, g);
        if (p && p != used)
            after = used = p;
        else if (prev)
            after = prev;
        if ((prev = ph_rw_node_after(rw, after, "Add", 2, in, 1)))
            ph_value_copy_type(acc = ph_node_output(prev, 0), y);
    }
    ph_node *last = ph_rw_clone(rw, top, NULL, 2, (ph_value *[]){acc, leaf});
    return ph_rw_replace_root(rw, last ? ph_node_output(last, 0) : NULL);
}

static const ph_rule rules[] = {{"add_tree", "s = Add(_, _)\ny = Add(s, b)", not_a_chain, to_chain}, {0}};

/* Examples for the rule checker: trees of 4 and 6 leaves. */
static const ph_rule_example examples[] = {
    {"add_tree", "x0: <T=float|double|float16|int32>[<S=2,3|4|1,5|batch,2>]\n"
                 "x1: <T>[<S>]\nx2: <T>[<S>]\nx3: const <T>[<S>]\n"
                 "s1 = Add(x0, x1)\ns2 = Add(x2, x3)\ny = Add(<s1, s2|s2, s1>)\nreturn y", NULL},
    {"add_tree", "x0: <T=float|double>[<S=3,2|5>]\nx1: <T>[<S>]\nx2: <T>[<S>]\nx3: <T>[<S>]\n"
                 "x4: <T>[<S>]\nx5: <T>[<S>]\n"
                 "s1 = Add(x0, x1)\ns2 = Add(s1, x2)\ns3 = Add(x3, x4)\ns4 = Add(<x5, s3|s3, x5>)\n"
                 "y = Add(s2, s4)\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "add_tree_to_chain",
    .summary = "tree of Adds (no broadcasting) -> a chain adding one operand at a time (less live memory)",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules,
    .rule_examples = examples)
