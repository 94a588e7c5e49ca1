/* merge_consecutive_cast - one Cast where two do the same work.
 *
 * Seed 000 KnowledgeMergeCasts, methods 1 and 2 (method 3, a Cast to the
 * type its input has, is eliminate_nop_cast):
 *   - sibling Casts of one value to the same type are one Cast;
 *   - a Cast chain A -> B -> C is one Cast A -> C when it gives the same
 *     values: B holds every value of A exactly (ph_dtype_holds), or C is B
 *     (the second Cast changes nothing).
 *
 * Requires: default-domain Casts whose `to` is an INT attribute (Cast-1,
 *   before opset 6, named the type by a string: left alone).
 *   Siblings: the other Cast reads the same value, is in the same graph,
 *     and has the same `to` and `saturate` (default 1) and no other
 *     attribute; the first such reader of the value is the one kept (when
 *     both outputs are graph outputs, both stay).
 *   Chain: the middle value read only by the second Cast and no graph
 *     output; A, the dtype of the first input, known (from inference or
 *     the declared type); A, B and C numeric or BOOL (no strings: a Cast to
 *     string formats by the source dtype; no float8).  B lossless for A is
 *     not enough when B is a float and C an integer: a float out of C's
 *     range converts as the runtime pleases, while an integer wraps, so A
 *     must then fit C (ph_dtype_holds(A, C)); e.g. int16 -> float -> int8
 *     is left alone, int16 -> int32 -> int8 merged.  float -> float16 ->
 *     float rounds and is left alone.
 * Changes:  siblings: the readers of the second Cast's output read the
 *   kept one's, and the second is removed.  Chain: the pair becomes one
 *   Cast of the first input to C (the second Cast's attributes and name),
 *   or the first input itself when C is A and the output can be
 *   redirected.  Main graph and every If/Loop/Scan body.
 * Cost:     a sibling search reads the use list of the Cast's input up to
 *   the first Cast that matches.
 * Exact:    yes; each value is converted from the same number to the same
 *   type.
 */
#include <passhost/passhost.h>

/* `to` of Cast n, or -1 when it is no INT attribute (Cast-1's string). */
static int64_t cast_to(const ph_node *n)
{
    return ph_node_attr_type(n, "to") == PH_ATTR_INT ? ph_node_attr_int(n, "to", -1) : -1;
}

/* A dtype a Cast here may produce or read: numeric or BOOL. */
static int plain(int64_t dt) { return dt > 0 && dt < 64 && (ph_dtype_is_numeric((int)dt) || dt == PH_DT_BOOL); }

static int chain_ok(const ph_match *m, const ph_params *params)
{
    int a = ph_value_dtype(ph_match_value(m, "x"));
    int64_t b = cast_to(ph_match_node(m, "t")), c = cast_to(ph_match_root(m));
    if (!plain(a) || !plain(b) || !plain(c))
        return 0;
    if (c == b)
        return 1;
    if (!ph_dtype_holds(a, (int)b))
        return 0;
    int c_int = !ph_dtype_is_float((int)c) && c != PH_DT_BOOL;
    return !ph_dtype_is_float((int)b) || !c_int || ph_dtype_is_float(a) || ph_dtype_holds(a, (int)c);
}

static int merge_chain(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x"), *y = ph_match_value(m, "y");
    if (cast_to(ph_match_root(m)) == ph_value_dtype(x) && ph_value_can_replace(y, x))
        return ph_rw_replace(rw, y, x) ? PH_ENOMEM : 1;
    ph_node *c = ph_rw_clone(rw, ph_match_root(m), NULL, 1, &x);
    return c && !ph_rw_replace(rw, y, ph_node_output(c, 0)) ? 1 : PH_ENOMEM;
}

/* 1 if Casts a and b convert alike: same `to`, same saturate, nothing else. */
static int same_cast(const ph_node *a, const ph_node *b)
{
    size_t na = 1 + (ph_node_attr_type(a, "saturate") != PH_ATTR_NONE);
    size_t nb = 1 + (ph_node_attr_type(b, "saturate") != PH_ATTR_NONE);
    return cast_to(a) >= 0 && cast_to(a) == cast_to(b) && ph_node_attr_count(a) == na &&
           ph_node_attr_count(b) == nb &&
           ph_node_attr_int(a, "saturate", 1) == ph_node_attr_int(b, "saturate", 1);
}

/* The first Cast reading x, in root's graph, that converts as root does
 * (root itself when it is the first). */
static ph_node *first_twin(const ph_node *root, const ph_value *x)
{
    for (size_t u = 0; u < ph_value_use_count(x); u++) {
        ph_node *n = ph_value_use(x, u, NULL);
        if (n == root)
            return n;
        if (ph_node_op(n) == PH_OP_Cast && ph_node_graph(n) == ph_node_graph(root) &&
            ph_node_input(n, 0) == x && same_cast(n, root))
            return n;
    }
    return NULL;
}

static int has_twin(const ph_match *m, const ph_params *params)
{
    ph_node *twin = first_twin(ph_match_root(m), ph_match_value(m, "x"));
    return twin && twin != ph_match_root(m) &&
           ph_value_can_replace(ph_match_value(m, "y"), ph_node_output(twin, 0));
}

static int merge_twin(ph_rewriter *rw, const ph_match *m)
{
    ph_node *twin = first_twin(ph_match_root(m), ph_match_value(m, "x"));
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(twin, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"cast_chain", "t = Cast(x); y = Cast(t)", chain_ok, merge_chain},
    {"sibling_casts", "y = Cast(x)", has_twin, merge_twin},
    {0}};

/* Examples for the rule checker: two Casts of one value to one dtype. */
static const ph_rule_example examples[] = {
    {"sibling_casts", "x: <float|int32|double>[<2|1>,3]\na = Cast(x) {to=<TO=1|7|11>}\nb = Cast(x) {to=<TO>}\n"
                      "y = Add(a, b)\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "merge_consecutive_cast",
    .summary = "sibling Casts to one type -> one Cast; Cast chain -> one Cast when the middle type loses nothing",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_EXACT,
    .rules = rules,
    .rule_examples = examples)
