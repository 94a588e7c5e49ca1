/* passhost/pattern.h - declarative patterns, atomic rewrites and the rewrite
 * driver: a pass is a pattern, a condition and a replacement.
 *
 * A pattern is a small program of statements, separated by ';' or newlines,
 * each binding the outputs of one node:
 *
 *     c = Conv(x, w:const, b?:const)
 *     y = BatchNormalization(c, s:const, t:const, m:const, v:const) {epsilon(1e-5) = $eps}
 *     =>
 *     y = Conv(x, w2, b2) like c
 *
 * The last statement before '=>' is the ROOT (the anchor): matching starts
 * at nodes of its op type, found through the graph's op-type index, and
 * walks up through the inputs.  Every other statement must feed the root.
 * After '=>' comes the optional RESULT: the nodes that replace the match.
 * Syntax ('#' starts a comment):
 *
 *   rule       := item {sep item} ['=>' {result}]
 *   item       := statement | negative | directive | '(' items {'|' items} ')'
 *   directive  := 'benefit' N | 'opset' ['@' domain] cmp N
 *   statement  := outputs '=' ops '(' [args] ')' ['{' attrs '}']
 *   negative   := '!' ['all'] ops '(' args ')' ['{' attrs '}']
 *   outputs    := out {',' out} [',' name '*'] | name '*'
 *   out        := name [':shared'] | '_'
 *   ops        := op {'|' op}          op  := Name ['@' domain]   (alternatives)
 *   args       := arg {',' arg} [',' name '*'] | name '*'
 *   arg        := (name | '_') ['?'] {':' constraint}
 *   constraint := const | ints | scalar | rank=N | shape=[d,...] | perchannel=K
 *               | dtypes | dtype=dtypes | dtype=$t | fits(name)
 *               | scalar=V | scalar~V | all=V | all~V    (V~: within tolerance;
 *                                                          V~+-T: absolute T)
 *               | scalar=$v       (binds the value of a finite one-element constant)
 *   dtypes     := dtype {'|' dtype}    dtype := float32 | float16 | bfloat16
 *               | double | float64 | int8 ... uint64 | bool | string | floating
 *   attrs      := attr {',' attr}
 *   attr       := key [ '?' | '(' literal ')' ] ['all'] cmp rhs
 *               | key             present
 *               | '!' key         absent
 *   cmp        := '=' | '!=' | '<' | '<=' | '>' | '>=' | 'in'
 *   rhs        := literal | '$' name
 *   literal    := integer | float | "string" | '[' numbers or strings ']'
 *   result     := routs '=' (Op ['@' domain] | '_') '(' [rargs] ')' ['like' name]
 *                 ['{' rattr {',' rattr} '}']
 *               | name '=' name                     (an alias: y is x)
 *   routs      := rout {',' rout} [',' name '*'] | name '*'    rout := name | '_'
 *   rargs      := rarg {',' rarg} [',' name '*'] | name '*'
 *   rarg       := name ['?'] | '_'
 *   rattr      := key '=' (literal | '$' name) | '...' name
 *
 *  - A name used twice binds one value: that is how edges are written.  A
 *    name bound by a statement's outputs is an interior value; any other
 *    name is a leaf (an input of the match).  '_' matches anything.
 *  - 'x?' is an optional input: it may be omitted (ph_match_value gives
 *    NULL); its constraints apply when it is there.  'xs*' takes the
 *    remaining inputs, zero or more (ph_match_values).  'ys*' among the
 *    outputs likewise takes the outputs after the named ones (a Split of
 *    any number of pieces: 'ys* = Split(a, qs*)'); like every output of an
 *    interior node they must have no reader outside the match.  A list is
 *    read whole (ph_match_values, a result's 'xs*'), never as an input.
 *  - Two-input commutative operators (Add Mul Max Min Sum And Or Xor Equal
 *    BitwiseAnd BitwiseOr BitwiseXor) match their inputs in either order.
 *  - Ops without '@' are of the default domain (ai.onnx).
 *  - Constraints: const = a constant tensor (ph_value_const); ints = up to
 *    64 constant integers as ph_value_const_ints reads them (a 0-D or 1-D
 *    int32/int64 initializer or Constant, or a shape constant, whose
 *    entries may be symbolic dims: a Reshape's shape, a Slice's starts);
 *    scalar = const with one element; rank, shape and dtype read the known type
 *    (ph_value_rank/dim/dtype; '*' is any dim, an unknown dim never equals a
 *    number).  Dtypes are ONNX's names with their width: float32 (ONNX's
 *    "float"), float16, bfloat16, double or float64, the integers, bool,
 *    string; 'floating' is any of float16, bfloat16, float32 and double.
 *    "float" alone is refused as ambiguous (it once meant "any float" as
 *    ':float' but float32 as ':dtype=float').  perchannel=K = const whose
 *    shape, broadcast against the node's first output, varies along axis K
 *    only (K may be negative; the output rank must be known).  fits(x) =
 *    the value's shape (a constant's, else the known one) broadcasts to x's
 *    known shape without widening it: rank at most x's, each dim 1 or x's.
 *    dtype=$t binds the known dtype to the variable t (an integer, the
 *    ph_dtype; used again, it must be equal).
 *  - Value tests on constants: scalar=V (one element, exactly V), scalar~V
 *    (one element within a relative 1e-4 of V; an absolute 1e-4 when V is
 *    0), scalar~V+-T (within T), all=V, all~V, all~V+-T (at least one
 *    element, every one of them).  Any numeric dtype; NaN never matches.
 *    scalar=$v: a one-element constant whose value is finite, bound to the
 *    variable v (a float: ph_match_float; a result attribute {eps=$v}).
 *  - Attributes: 'key=lit' present and equal; 'key?=lit' absent, or present
 *    and equal; 'key(d)=lit' the attribute, or d when absent (exporters
 *    leave attributes at their default out), compared; '!key' absent;
 *    'key' present.  Numbers compare by value (a float attribute holds a
 *    float32: the other side is rounded to float first), lists element by
 *    element, strings exactly; <, <=, >, >= compare numbers; 'in [a, b]'
 *    one of; 'all' applies the comparison to every element of a list
 *    ('strides? all=1').  'key=$v' BINDS the value to the variable v: the
 *    condition reads it (ph_match_int, ph_match_float, ph_match_ints,
 *    ph_match_string), the result writes it ('alpha=$v'); a variable used
 *    twice must be equal (dtype=$t and {to=$t} also compare).  An absent
 *    attribute without default leaves its variable unbound.
 *  - Alternatives between statements: '( a | b )' where a and b are one or
 *    more statements (or directives): the rule matches when any choice
 *    matches.  Each choice of a branch in every group is one FORM of the
 *    pattern (at most 256), with its own root; a name a form does not bind
 *    reads as absent (ph_match_value gives NULL).
 *  - Benefit: every form has one, 'benefit N' or by default its number of
 *    statements.  At a node the forms of a pass's rules are tried greatest
 *    benefit first (then in table order), and a match gives way to a larger
 *    one: before it is rewritten, the forms of the same pass with a greater
 *    benefit are tried at the nodes downstream of its root (within the
 *    pass's depth); one that matches there, holds the root and passes its
 *    condition is rewritten instead.  So the longest form wins, whatever
 *    order the nodes are visited in, without a look-ahead in the pass.
 *  - 'opset >= 17' (==, !=, <, <=, >) is a guard: the form matches only in
 *    a model whose default-domain opset (or 'opset@domain') is so.
 *  - Negative statements: '!Op(x, ...) {attrs}' refuses the match when a
 *    node outside it reads x (the first value named; in the root's graph)
 *    and matches the statement (op, attributes, inputs): "no reader is
 *    X".  '!all Op(x)' refuses it when every reader outside the match (in
 *    any graph) matches, x being no graph output (a value nobody reads is
 *    refused too): "not every reader is X", e.g. a rewrite already done
 *    ('!all Cast(i) {to=6}').  Their inputs are '_' or values bound before.
 *  - The engine refuses a match where an interior value has a consumer
 *    outside the match (a node of a subgraph counts) or is a graph output,
 *    unless that output is marked ':shared', and one where an output of the
 *    root that the pattern does not name (or names '_') is used: every
 *    output a rewrite must replace has a name.  Every node of a match is in
 *    the root's graph; values from enclosing graphs can only be leaves.
 *
 * The result: each statement makes one node in the root's graph.  Inputs
 * are values of the match, outputs of earlier result statements, or values
 * the rule's rewrite callback binds with ph_rw_bind (a rule may have both:
 * the callback runs first, computes, binds and may decline).  'x?' leaves
 * the input out when x is absent; trailing omitted inputs are dropped.
 * Attributes are literals, variables ('$eps': the pattern's, or bound by
 * the callback with ph_rw_bind_int/_float/_ints/_floats/_string; unbound: left out)
 * and '...c', every attribute of the matched node that makes c.  'like c'
 * makes the node a copy of c's (ph_rw_clone: attributes and name); its
 * op may be '_', c's own op.  A list 'xs*' of the pattern as the last
 * input is read whole (omitted entries kept in place), and an output list
 * 'ys*' replaces the pattern's 'ys*' value by value (the node gets as many
 * outputs), so 'c = Identity(a); ys* = _(c, qs*) like ys' rebuilds a
 * matched node, whatever its op and number of outputs, with another first
 * input.  An output named like a value the matched nodes make replaces
 * that value and takes its type; the node that replaces the root's first
 * output takes the root's name (unless 'like' names another).  'y = x' replaces y by x.  An
 * op of another domain makes the model import that domain (version 1).
 *
 * Parsing reports a malformed pattern with its position:
 * "pattern 'c = Conv(x' at offset 10 (line 1, column 11): expected ')'".
 *
 * Rewrites go through a ph_rewriter: build new nodes and initializers, then
 * say which value replaces each root output.  When the callback returns 1
 * the rewriter commits: every replacement is applied (graph outputs keep
 * their names), and matched nodes that became dead are removed.  When it
 * returns 0, fails, or a replacement cannot apply, everything it built is
 * removed and the graph is as before.  Change existing nodes only through
 * the rewriter; nodes it created may be changed freely.  Errors are
 * sticky: the first failure of a ph_rw_* call or of a setter (attributes,
 * names, domains, inputs, types, opset imports) during the callback is
 * kept, and fails the rewrite when the callback returns 1, so a callback
 * is a sequence of calls and one final 'return 1' (or ph_rw_done).
 *
 * Ownership: patterns, rule sets and matches are owned by their creator and
 * freed with their _free function; a ph_match passed to a callback is
 * borrowed for the call.  Values and nodes from a match are borrowed from
 * the graph.  Strings passed in are copied, except a ph_rule table and its
 * strings, which are borrowed and must outlive the rule set (static tables).
 */
#ifndef PASSHOST_PATTERN_H
#define PASSHOST_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/error.h"
#include "passhost/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ph_pattern ph_pattern;
typedef struct ph_match ph_match;
typedef struct ph_rewriter ph_rewriter;
typedef struct ph_params ph_params;
typedef struct ph_ctx ph_ctx;

/* ---------------------------------------------------------------- patterns */

/* Parse a pattern.  NULL with err (code PH_EINVAL) naming the position. */
PH_API ph_pattern *ph_pattern_parse(const char *text, ph_error *err);
PH_API void ph_pattern_free(ph_pattern *p);
/* The text it was parsed from (borrowed). */
PH_API const char *ph_pattern_text(const ph_pattern *p);
/* Number of statements from the root to the farthest node (1 for one
 * node), the greatest over the forms. */
PH_API int ph_pattern_depth(const ph_pattern *p);
/* Forms: one per choice of the alternatives '( | )' (1 without any); the
 * benefit of form i (-1 past the end). */
PH_API size_t ph_pattern_form_count(const ph_pattern *p);
PH_API int ph_pattern_benefit(const ph_pattern *p, size_t form);

/* ---------------------------------------------------------------- matching */

/* A match buffer for p (borrowed; p must outlive it).  NULL on OOM. */
PH_API ph_match *ph_match_new(const ph_pattern *p);
PH_API void ph_match_free(ph_match *m);

/* Try to match p with root as the root node, form by form, greatest
 * benefit first.  1 matched (m filled), 0 not.  Applies every structural
 * rule above but not a rule's check callback. */
PH_API int ph_pattern_match_at(const ph_pattern *p, ph_node *root, ph_match *m);

/* ph_pattern_match_at, telling why not: 1 matched (m holds the match, as
 * from ph_pattern_match_at); 0 no match, with a one-line reason in why
 * (size bytes) about the deepest statement the match reached ("statement 1
 * (Gemm): attribute beta is absent; the pattern wants beta = 0.5 ..."); -1
 * root is not a candidate (not of the root statement's op; why is "").
 * PH_EINVAL for a NULL argument.  For rule authors (passhost --trace-rule);
 * slower than ph_pattern_match_at only by the formatting. */
PH_API int ph_pattern_explain(const ph_pattern *p, ph_node *root, ph_match *m, char *why, size_t size);

/* The value bound to name: an input or output of a statement.  NULL for an
 * omitted optional input or a name the pattern does not have. */
PH_API ph_value *ph_match_value(const ph_match *m, const char *name);
/* The values bound to a variadic 'name*' (borrowed array); their count. */
PH_API size_t ph_match_values(const ph_match *m, const char *name, ph_value *const **vals);
/* The constant of a bound value (ph_value_const), NULL if not constant. */
PH_API const ph_tensor *ph_match_const(const ph_match *m, const char *name);
/* The node of the statement that binds output `name`.  NULL if none. */
PH_API ph_node *ph_match_node(const ph_match *m, const char *name);
/* The root node, and every matched node in statement order. */
PH_API ph_node *ph_match_root(const ph_match *m);
PH_API size_t ph_match_node_count(const ph_match *m);
PH_API ph_node *ph_match_node_at(const ph_match *m, size_t i);
/* The form that matched (ph_pattern_form_count). */
PH_API size_t ph_match_form(const ph_match *m);
/* Variables ('$name' in the pattern; name given with or without '$'): the
 * value bound by the match, or dflt when unbound or of another kind.
 * Integers read as floats too.  Strings and lists are borrowed from the
 * node's attribute (or the pattern's default) for the match's lifetime. */
PH_API int64_t ph_match_int(const ph_match *m, const char *name, int64_t dflt);
PH_API double ph_match_float(const ph_match *m, const char *name, double dflt);
PH_API const char *ph_match_string(const ph_match *m, const char *name, const char *dflt);
/* A list of integers: its length (vals set), or -1. */
PH_API ptrdiff_t ph_match_ints(const ph_match *m, const char *name, const int64_t **vals);
/* 1 when the variable is bound. */
PH_API int ph_match_has(const ph_match *m, const char *name);
/* 1 when the value bound to name is a graph output or has a reader
 * outside the match (only possible for ':shared' values and leaves). */
PH_API int ph_match_escapes(const ph_match *m, const char *name);
/* State a condition hands to its rewrite: `size` bytes owned by the match,
 * zeroed at the first call after each new match, the same block for every
 * later call until the next match (so the check fills it, the rewrite
 * reads it).  NULL when out of memory. */
PH_API void *ph_match_state(const ph_match *m, size_t size);
/* The matched nodes' names, ", "-separated, written into buf (always
 * NUL-terminated; truncated to size).  Returns buf. */
PH_API char *ph_match_describe(const ph_match *m, char *buf, size_t size);

/* ---------------------------------------------------------------- rewriting */

/* Context of the rewrite: the pass's parameters and context (borrowed). */
PH_API const ph_params *ph_rw_params(const ph_rewriter *rw);
PH_API ph_ctx *ph_rw_ctx(const ph_rewriter *rw);
PH_API ph_graph *ph_rw_graph(const ph_rewriter *rw);

/* A new node in the root's graph, just before the root, with n_out outputs
 * of fresh unique names (inputs may be NULL for omitted optional ones).  The
 * op may be "Op" or "Op@domain" (the commit makes the model import a domain
 * it lacks, version 1).  NULL on failure (the rewrite then fails). */
PH_API ph_node *ph_rw_node(ph_rewriter *rw, const char *op, size_t n_in,
                           ph_value *const *inputs, size_t n_out);
/* ph_rw_node with one output, returned directly (NULL on failure). */
PH_API ph_value *ph_rw_op(ph_rewriter *rw, const char *op, size_t n_in, ph_value *const *inputs);
/* A copy of `like` (a node of the match, usually the root) that reads
 * `inputs`: the same op (or `op` when not NULL, "Op" or "Op@domain"), the
 * same attributes (not subgraphs), the same name (the two share it until
 * the commit removes the old node) and as many outputs.  For rewrites that
 * change a node's inputs or attributes: change the copy, then replace the
 * old node's outputs by the copy's.  NULL on failure. */
PH_API ph_node *ph_rw_clone(ph_rewriter *rw, const ph_node *like, const char *op, size_t n_in,
                            ph_value *const *inputs);
/* A new initializer of the root's graph, named from hint (made unique);
 * takes ownership of t even on failure.  NULL on failure. */
PH_API ph_value *ph_rw_initializer(ph_rewriter *rw, const char *hint, ph_tensor *t);
/* Replace value `old` (an output of a matched node) by `with` when the
 * rewrite commits.  Recorded now, applied at commit.  PH_EINVAL if old is
 * not an output of a matched node. */
PH_API int ph_rw_replace(ph_rewriter *rw, ph_value *old, ph_value *with);
/* Make this rewrite fail with code (a negative PH_E* code): it is not
 * committed, nothing it built stays, and when the callback still returns 1
 * the pass fails with code (as when a ph_rw_* call fails).  Returns code,
 * for `return ph_rw_fail(rw, PH_EINVAL)`.  (For helpers that build through
 * the rewriter, such as op_helpers.h's ph_rw_reshape.) */
PH_API int ph_rw_fail(ph_rewriter *rw, int code);
/* Scratch memory, zeroed, freed when this rewrite ends (committed or not).
 * NULL on OOM. */
PH_API void *ph_rw_alloc(ph_rewriter *rw, size_t size);
/* The first failure so far (0: none); 1 when none, else that failure: the
 * one final check of a rewrite ('return ph_rw_done(rw);'). */
PH_API int ph_rw_status(const ph_rewriter *rw);
PH_API int ph_rw_done(const ph_rewriter *rw);
/* The model's default-domain opset. */
PH_API int64_t ph_rw_opset(const ph_rewriter *rw);
/* Replace the root's first output by `with` (which takes its type): the
 * common end of a rewrite.  Returns ph_rw_done(rw). */
PH_API int ph_rw_replace_root(ph_rewriter *rw, ph_value *with);
/* For a rule with a result: bind a value the result reads (a name neither
 * the pattern nor an earlier result statement gives), or a variable the
 * result's attributes read ('$name'; overrides the match's).  Copied. */
PH_API int ph_rw_bind(ph_rewriter *rw, const char *name, ph_value *v);
PH_API int ph_rw_bind_int(ph_rewriter *rw, const char *name, int64_t v);
PH_API int ph_rw_bind_float(ph_rewriter *rw, const char *name, double v);
PH_API int ph_rw_bind_string(ph_rewriter *rw, const char *name, const char *v);
PH_API int ph_rw_bind_ints(ph_rewriter *rw, const char *name, size_t n, const int64_t *v);
PH_API int ph_rw_bind_floats(ph_rewriter *rw, const char *name, size_t n, const float *v);

/* A ready-made rewrite for eliminate passes: the root's first output is
 * replaced by the root's first input (a graph output keeps its name; when
 * it cannot, e.g. the input is a graph input, nothing changes). */
PH_API int ph_rewrite_bypass(ph_rewriter *rw, const ph_match *m);

/* ------------------------------------------------------------------- rules */

/* Extra condition on a match: 1 to go on, 0 to refuse, or a negative PH_E*
 * code when it cannot tell (out of memory): the pass fails with it. */
typedef int (*ph_rule_check_fn)(const ph_match *m, const ph_params *params);
/* Build the replacement: 1 to commit, 0 to decline (nothing changes), or a
 * negative PH_E* code (nothing changes; the pass fails with it). */
typedef int (*ph_rule_rewrite_fn)(ph_rewriter *rw, const ph_match *m);

/* One rule of a pattern pass.  A table of rules ends with a row whose
 * pattern is NULL. */
typedef struct ph_rule {
    const char *name;        /* for messages; NULL: the pattern text */
    const char *pattern;     /* the pattern text (and its result, after '=>') */
    ph_rule_check_fn check;  /* may be NULL */
    ph_rule_rewrite_fn rewrite; /* may be NULL when the pattern has a result */
} ph_rule;

/* ------------------------------------------------ placing new nodes
 * (sdk/src/pattern/rw_place.c; added for add_tree_to_chain.) */

/* ph_rw_node, but the node goes right after `after` (a live node of the
 * root's graph) instead of just before the root; NULL `after` is
 * ph_rw_node.  For rewrites whose new nodes should run early, where their
 * inputs become ready (e.g. to shorten how long values stay live).  The
 * order need not be topological: an input defined later marks the graph
 * for the host's stable sort, which then emits that input's producers (and
 * what they need) just before the node.
 * Default-domain op only (no "@domain").  NULL on failure (the rewrite then
 * fails). */
PH_API ph_node *ph_rw_node_after(ph_rewriter *rw, ph_node *after, const char *op, size_t n_in,
                                 ph_value *const *inputs, size_t n_out);

/* ------------------------------------------------ constants of a shape
 * (sdk/src/pattern/rw_const.c; added for fuse_layernorm and
 * fuse_skip_layernorm.) */

/* A new initializer of `dtype` and shape dims[0..rank) (named from hint):
 * the constant of `from` broadcast to that shape (numpy's rule; leading
 * dims of size 1 beyond rank are dropped), or every element `fill` when
 * from is NULL; `from` itself when its constant already has that dtype and
 * shape.  Computed in double, rounded once.  NULL on failure (from not
 * constant, a shape that does not broadcast: the rewrite then fails). */
PH_API ph_value *ph_rw_constant(ph_rewriter *rw, const char *hint, ph_value *from, int dtype, size_t rank,
                                const int64_t *dims, double fill);

#ifdef __cplusplus
}
#endif
#endif
