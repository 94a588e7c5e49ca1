/* passhost/pattern.h - declarative patterns, atomic rewrites and the rewrite
 * driver: a pass is a pattern, a condition and a replacement.
 *
 * A pattern is a small program of statements, separated by ';' or newlines,
 * each binding the outputs of one node:
 *
 *     c = Conv(x, w:const, b?:const)
 *     y = BatchNormalization(c, s:const, t:const, m:const, v:const)
 *
 * The last statement is the ROOT (the anchor): matching starts at nodes of
 * its op type, found through the graph's op-type index, and walks up through
 * the inputs.  Every other statement must feed the root.  Syntax:
 *
 *   statement  := outputs '=' ops '(' [args] ')' ['{' attrs '}']
 *   outputs    := out {',' out}        out := name [':shared'] | '_'
 *   ops        := op {'|' op}          op  := Name ['@' domain]   (alternatives)
 *   args       := arg {',' arg} [',' name '*'] | name '*'
 *   arg        := (name | '_') ['?'] {':' constraint}
 *   constraint := const | scalar | rank=N | dtype=T['|'T...] | shape=[d,...]
 *                 | perchannel=K | float            (d: a number or '*')
 *   attrs      := attr {',' attr}
 *   attr       := key '=' literal     present and equal
 *               | key '?=' literal    absent, or present and equal
 *               | '!' key             absent
 *   literal    := integer | float | "string" | '[' integers ']'
 *
 *  - A name used twice binds one value: that is how edges are written.  A
 *    name bound by a statement's outputs is an interior value; any other
 *    name is a leaf (an input of the match).  '_' matches anything.
 *  - 'x?' is an optional input: it may be omitted (ph_match_value gives
 *    NULL); its constraints apply when it is there.  'xs*' takes the
 *    remaining inputs, zero or more (ph_match_values).
 *  - Two-input commutative operators (Add Mul Max Min Sum And Or Xor Equal
 *    BitwiseAnd BitwiseOr BitwiseXor) match their inputs in either order.
 *  - Ops without '@' are of the default domain (ai.onnx).
 *  - Constraints: const = a constant tensor (ph_value_const); scalar = const
 *    with one element; rank, shape and dtype read the known type
 *    (ph_value_rank/dim/dtype; '*' is any dim, an unknown dim never equals a
 *    number); float = dtype float, float16, bfloat16 or double; perchannel=K
 *    = const whose shape, broadcast against the node's first output,
 *    varies along axis K only (K may be negative; the output rank must be
 *    known).
 *  - The engine refuses a match where an interior value has a consumer
 *    outside the match (a node of a subgraph counts) or is a graph output,
 *    unless that output is marked ':shared', and one where an output of the
 *    root that the pattern does not name (or names '_') is used: every
 *    output a rewrite must replace has a name.  Every node of a match is in
 *    the root's graph; values from enclosing graphs can only be leaves.
 *
 * Parsing reports a malformed pattern with its position:
 * "pattern 'c = Conv(x' at 11: expected ')'".
 *
 * Rewrites go through a ph_rewriter: build new nodes and initializers, then
 * say which value replaces each root output.  When the callback returns 1
 * the rewriter commits: every replacement is applied (graph outputs keep
 * their names), and matched nodes that became dead are removed.  When it
 * returns 0, fails, or a replacement cannot apply, everything it built is
 * removed and the graph is as before.  Change existing nodes only through
 * the rewriter; nodes it created may be changed freely.
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
/* Number of statements from the root to the farthest node (1 for one node). */
PH_API int ph_pattern_depth(const ph_pattern *p);

/* ---------------------------------------------------------------- matching */

/* A match buffer for p (borrowed; p must outlive it).  NULL on OOM. */
PH_API ph_match *ph_match_new(const ph_pattern *p);
PH_API void ph_match_free(ph_match *m);

/* Try to match p with root as the root node.  1 matched (m filled), 0 not.
 * Applies every structural rule above but not a rule's check callback. */
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
 * op may be "Op" or "Op@domain".  NULL on failure (the rewrite then fails). */
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
/* Scratch memory freed when this rewrite ends (committed or not).  NULL on
 * OOM. */
PH_API void *ph_rw_alloc(ph_rewriter *rw, size_t size);

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
    const char *pattern;     /* the pattern text */
    ph_rule_check_fn check;  /* may be NULL */
    ph_rule_rewrite_fn rewrite;
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

#ifdef __cplusplus
}
#endif
#endif
