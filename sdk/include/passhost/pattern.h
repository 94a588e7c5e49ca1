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
typedef struct ph_ruleset ph_ruleset;
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

/* Compile a rule table (borrowed: must outlive the set).  NULL with err
 * naming the rule, the pattern text and the position of the first error. */
PH_API ph_ruleset *ph_ruleset_new(const ph_rule *rules, ph_error *err);
PH_API void ph_ruleset_free(ph_ruleset *rs);
/* Number of rules; greatest pattern depth. */
PH_API size_t ph_ruleset_count(const ph_ruleset *rs);
PH_API int ph_ruleset_depth(const ph_ruleset *rs);

/* Apply the rules to g and every If/Loop/Scan body in it, one pass over the
 * candidates: each node of a root's op type, tried rule by rule in table
 * order; the first rule that commits wins for that node.  The first call on
 * a model visits every node of the root op types (via the op-type index);
 * later calls visit only nodes within the patterns' depth downstream of what
 * changed since this rule set last ran on the model (any mutation through
 * ir.h, by any pass, is recorded).  Every rewrite is counted through
 * ph_ctx_rewrite_begin, so --max-rewrites stops it between two rewrites.
 * Returns the number of rewrites, or a negative PH_E* code. */
PH_API int ph_ruleset_run(ph_ruleset *rs, ph_graph *g, const ph_params *params, ph_ctx *ctx);
/* Forget what this rule set has seen: the next run visits every candidate. */
PH_API void ph_ruleset_reset(ph_ruleset *rs);

/* ------------------------------------------------ sibling readers -> Split
 * (sdk/src/ops/split_siblings.c; used by slices_to_split and
 * gathers_to_split.)  A pattern grows upward from one root; this groups the
 * sibling readers of one value instead. */

/* A reader of x described as a piece of x: elements [start, start + len) of
 * axis `axis`, every other axis whole; squeeze: the reader's output lacks
 * that axis (len is then 1). */
typedef struct ph_split_piece {
    int axis;
    int64_t start, len;
    int squeeze;
} ph_split_piece;

/* Fill *piece and return 1 if node n (of the op walked, reading x as its
 * input 0; x's rank, `rank`, is known) is a piece of x; else return 0. */
typedef int (*ph_split_piece_fn)(const ph_node *n, const ph_value *x, int rank, ph_split_piece *piece);

/* In g and every If/Loop/Scan body: for each value x read as input 0 by
 * default-domain nodes of op `op` (with one output) of one graph, the
 * readers fn describes as pieces of x along one axis, when there are at
 * least two, x's dim on that axis is a known number, and ordered by start
 * they cover the axis exactly (contiguous, disjoint, from 0 to the dim, each
 * len >= 1), are replaced by one Split of x on that axis (sizes an input
 * from opset 13, an attribute before) and a Squeeze after each squeezed
 * piece (axes likewise); graph outputs keep their names, and the readers and
 * the operands only they used are pruned.  Readers fn refuses, or of
 * another axis, are left as they are.  Each rewrite is asked for with
 * ph_ctx_rewrite_begin (the walk stops when refused).  Cost: the nodes of
 * op and the uses of their input 0, each once.  Returns the number of
 * rewrites, or a negative PH_E* code. */
PH_API int ph_graph_siblings_to_split(ph_graph *g, ph_op op, ph_split_piece_fn fn, ph_ctx *ctx);

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

/* ------------------------------------------------ layout ops, constant operands
 * (sdk/src/ops/rw_shape_ops.c; added for conv_after_gap_to_gemm,
 * conv_to_matmul, conv1d_to_conv2d and conv3d_to_conv2d.)  Each builds one
 * new default-domain node through the rewriter, its constant operands as new
 * int64 initializers, in the form the model's default-domain opset wants;
 * the output value is returned (its type is not set).  NULL on failure (the
 * rewrite then fails).  Arrays borrowed. */

/* Reshape(x, shape[0..rank)) (entries as Reshape reads them: 0 copies the
 * input's dim, -1 is inferred).  Opset >= 5. */
PH_API ph_value *ph_rw_reshape(ph_rewriter *rw, ph_value *x, size_t rank, const int64_t *shape);
/* op "Squeeze" or "Unsqueeze" of x on axes[0..n), n >= 1: an input from
 * opset 13, the "axes" attribute before. */
PH_API ph_value *ph_rw_axes_op(ph_rewriter *rw, const char *op, ph_value *x, size_t n, const int64_t *axes);
/* Slice of x on n axes: inputs from opset 10 (steps may be NULL: omitted);
 * attributes before, where steps must be NULL or all 1. */
PH_API ph_value *ph_rw_slice(ph_rewriter *rw, ph_value *x, size_t n, const int64_t *starts, const int64_t *ends,
                             const int64_t *axes, const int64_t *steps);

#ifdef __cplusplus
}
#endif
#endif
