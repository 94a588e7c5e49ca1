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
 * Pattern: the top Add alone; the check and the rewrite walk the tree (its
 *   size varies, which a fixed pattern cannot say).  Cost: each tree is
 *   walked from its top only, so every Add is visited O(1) times.
 * Exact:    fp (the additions are reassociated; exact for integers).
 */
#include <stdlib.h>

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

/* 1 if input i of n is the output of an Add (the cheapest test first). */
static int made_by_add(const ph_node *n, size_t i)
{
    const ph_value *v = i < ph_node_input_count(n) ? ph_node_input(n, i) : NULL;
    const ph_node *p = v ? ph_value_producer(v) : NULL;
    return p && ph_node_op(p) == PH_OP_Add;
}

/* Grow *arr (of *cap elements of size elem) to hold n + 1; 0 or -1. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    void *p = realloc(*arr, 2 * *cap * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap *= 2;
    return 0;
}

/* 1 if top is the top of a tree that is not a chain; with `leaves`, its
 * leaves in operand order go into a malloc'd array (caller frees) and *n
 * gets their count.  0 otherwise, -1 out of memory. */
static int walk(ph_node *top, ph_value ***leaves, size_t *n)
{
    if (!made_by_add(top, 0) && !made_by_add(top, 1))
        return 0; /* a lone Add, the common case: decided before any other look */
    ph_node *up = ph_value_sole_consumer(ph_node_output(top, 0));
    if (!tree_add(top) || (up && ph_node_graph(up) == ph_node_graph(top) && tree_add(up)))
        return 0;
    if (!inner_add(ph_node_input(top, 0), top) && !inner_add(ph_node_input(top, 1), top))
        return 0; /* no Add of the tree below: no walk, no memory */
    /* depth-first, left input first: each entry is an Add and the input to
     * visit next, so leaves come out left to right */
    size_t cap = 16, lcap = 16, sp = 0, nl = 0;
    ph_node **stack = malloc(cap * sizeof *stack);
    size_t *next = malloc(cap * sizeof *next);
    ph_value **out = malloc(lcap * sizeof *out);
    int branching = 0, rc = -1;
    if (!stack || !next || !out)
        goto done;
    stack[sp] = top;
    next[sp++] = 0;
    while (sp) {
        ph_node *a = stack[sp - 1];
        size_t i = next[sp - 1]++;
        if (i == 2) {
            sp--;
            continue;
        }
        if (i == 0)
            branching |= inner_add(ph_node_input(a, 0), a) && inner_add(ph_node_input(a, 1), a);
        ph_value *v = ph_node_input(a, i);
        ph_node *p = inner_add(v, a);
        if (p) {
            size_t c2 = cap;
            if (grow((void **)&stack, &c2, sp, sizeof *stack) || grow((void **)&next, &cap, sp, sizeof *next))
                goto done;
            stack[sp] = p;
            next[sp++] = 0;
        } else if (leaves) {
            if (grow((void **)&out, &lcap, nl, sizeof *out))
                goto done;
            out[nl++] = v;
        }
    }
    rc = branching;
    if (leaves && rc) {
        *leaves = out;
        *n = nl;
        out = NULL;
    }
done:
    free(stack);
    free(next);
    free(out);
    return rc;
}

static int not_a_chain(const ph_match *m, const ph_params *params)
{
    int r = walk(ph_match_root(m), NULL, NULL);
    return r < 0 ? PH_ENOMEM : r;
}

/* The producer of v when it is a node of g, else NULL. */
static ph_node *producer_in(const ph_value *v, const ph_graph *g)
{
    ph_node *p = ph_value_producer(v);
    return p && ph_node_graph(p) == g ? p : NULL;
}

static int to_chain(ph_rewriter *rw, const ph_match *m)
{
    ph_node *top = ph_match_root(m);
    ph_graph *g = ph_node_graph(top);
    ph_value *y = ph_node_output(top, 0), **leaf = NULL;
    size_t n = 0;
    int rc = walk(top, &leaf, &n);
    if (rc <= 0)
        return rc < 0 ? PH_ENOMEM : 0;
    ph_value *acc = leaf[0];
    ph_node *after = producer_in(leaf[0], g), *used = NULL, *prev = NULL;
    for (size_t k = 1; k < n && rc > 0; k++) {
        ph_value *in[2] = {acc, leaf[k]};
        ph_node *p = producer_in(leaf[k], g), *add;
        if (k + 1 == n) {
            add = ph_rw_clone(rw, top, NULL, 2, in); /* the last one: the top's name and place */
        } else {
            if (p && p != used)
                after = used = p;
            else if (prev)
                after = prev;
            add = ph_rw_node_after(rw, after, "Add", 2, in, 1);
        }
        if (!add) {
            rc = PH_ENOMEM;
            break;
        }
        acc = ph_node_output(add, 0);
        ph_value_copy_type(acc, y);
        prev = add;
    }
    free(leaf);
    if (rc <= 0)
        return rc;
    return ph_rw_replace(rw, y, acc) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {{"add_tree", "y = Add(a, b)", not_a_chain, to_chain}, {0}};

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
