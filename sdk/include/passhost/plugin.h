/* passhost/plugin.h - the pass plugin ABI.
 *
 * A pass is a shared object exporting one function, PH_PASS_ENTRY_SYMBOL,
 * that returns a pointer to a constant descriptor the plugin owns (it must
 * stay valid while the plugin is loaded).  Write the descriptor with
 * PH_PASS_DEFINE so the ABI fields are filled in for you:
 *
 *     static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx) { ... }
 *     PH_PASS_DEFINE(
 *         .name = "my_pass",
 *         .summary = "what it does, in one line",
 *         .stages = PH_STAGE_OPTIMIZE,
 *         .exactness = PH_EXACT,
 *         .run = run)
 *
 * The host reads `abi_major` first and refuses another major version; it
 * reads only the first `struct_size` bytes, so a plugin built against an
 * older minor version (a shorter descriptor) still loads.  Fields are only
 * ever appended within a major version.
 *
 * run() returns the number of rewrites it made (0 = graph unchanged) or a
 * negative PH_E* code after reporting the problem with ph_ctx_error().  A pass
 * whose preconditions are not met leaves the graph untouched and returns 0.
 *
 * A pattern pass (ABI 1.1) gives `.rules`, a table of pattern rules
 * (passhost/pattern.h), instead of run: the host compiles the patterns when
 * it loads the plugin (a malformed pattern is a load error) and runs them
 * with ph_ruleset_run.  Since 1.2 the pattern language has benefits,
 * attribute and dtype variables, value tests, opset guards, alternatives
 * between statements and declarative results (a rule's rewrite may then
 * be NULL); the descriptor itself did not change.
 *
 * Numbered rewrites: every rewrite of a run has a global index.  A pass asks
 * ph_ctx_rewrite_begin() before each rewrite and skips it when told no, so
 * the host can stop a run between any two rewrites (--max-rewrites,
 * --bisect).  Pattern passes do this without a line of code.
 */
#ifndef PASSHOST_PLUGIN_H
#define PASSHOST_PLUGIN_H

#include <stdint.h>

#include "passhost/error.h"
#include "passhost/ir.h"
#include "passhost/pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PH_ABI_MAJOR 1
#define PH_ABI_MINOR 4

/* The one symbol the host looks up in every plugin. */
#define PH_PASS_ENTRY_SYMBOL "passhost_pass_descriptor"

typedef enum ph_stage {
    PH_STAGE_OPTIMIZE = 1u << 0,
    PH_STAGE_ADAPT = 1u << 1
} ph_stage;

typedef enum ph_exactness {
    PH_EXACT = 0,   /* bit-identical results */
    PH_FP = 1,      /* same maths; float rounding may differ by a few ulp */
    PH_APPROX = 2   /* changes results by design; refused unless allowed */
} ph_exactness;

typedef enum ph_param_type {
    PH_PARAM_INT = 1,
    PH_PARAM_FLOAT = 2,
    PH_PARAM_BOOL = 3,
    PH_PARAM_STRING = 4
} ph_param_type;

/* One row of a pass's parameter table; the table ends with a row whose name
 * is NULL.  default_value is text in the INI syntax ("3", "0.5", "true"). */
typedef struct ph_param_def {
    const char *name;
    ph_param_type type;
    const char *default_value;
    const char *help;
} ph_param_def;


/* A hand-written pass's run function (ph_pass_desc.run). */
typedef int (*ph_pass_run_fn)(ph_graph *g, const ph_params *params, ph_ctx *ctx);

/* One target-profile key a pass reads (since 1.3; docs/targets.md): `key`
 * is a dotted profile key ("Conv.max_kernel_area", "broadcast",
 * "noop_ops"); `param`, when not NULL, a parameter of the pass's table
 * that takes the profile's value (as INI text) before the config's
 * [pass.NAME] settings apply.  In the adapt stage with a profile, a pass
 * whose keys the profile constrains (ph_target_constrains) is on, unless
 * pass_off or [target.passes] says otherwise.  The table ends with a row
 * whose key is NULL.  The host checks the keys and parameters at load. */
typedef struct ph_profile_key {
    const char *key;
    const char *param;
} ph_profile_key;

/* An example graph for the rule checker (since 1.4; rulecheck.h,
 * docs/sdk.md "Checking rules"): a graph in the text form of testing.h
 * (ph_test_model_text) where the rule named `rule` fires, for rules whose
 * conditions the checker's generator cannot meet from the pattern alone
 * (a callback's tests on shapes, values or the graph around the match).
 * The text is a template: each instance replaces `<a|b|c>` by one of the
 * alternatives, `<name=a|b>` likewise and remembers the choice as `name`,
 * `<name>` by the choice made for `name`, `<name~c|d>` by the alternative
 * of the index chosen for `name` (c when name took a, d when b); no
 * nesting; initializers declared `const`
 * (random values) get new random values.  The table ends with a row whose
 * rule is NULL. */
typedef struct ph_rule_example {
    const char *rule;
    const char *graph;
    /* Parameter overrides for the example's run, "name=value" ending with
     * NULL (a rule that fires only with a target profile's limits), or
     * NULL for the defaults. */
    const char *const *params;
} ph_rule_example;

typedef struct ph_pass_desc {
    /* ABI header: set by PH_PASS_DEFINE, never by hand. */
    uint32_t abi_major;
    uint32_t abi_minor;
    uint32_t struct_size;

    const char *name;     /* the name used in INI files: [a-z0-9_.]+ */
    const char *summary;  /* one line for --list-passes */
    unsigned stages;      /* PH_STAGE_* bits: stages the pass may run in */
    int on_by_default;    /* in the stage's default ("integral") list */
    int run_once;         /* run once after the fixpoint, not in it */
    ph_exactness exactness;
    /* Targets the pass applies to, separated by ';' (e.g. "ort;npu"); NULL
     * or "" = every target, and no target; "*" = every target profile, but
     * not a stage without one.  A pass on by default is on only for these. */
    const char *targets;
    /* Ordering hints: NULL-terminated lists of pass names, or NULL. */
    const char *const *run_after;
    const char *const *run_before;
    /* Parameter table ending with a row whose name is NULL, or NULL. */
    const ph_param_def *params;
    int (*run)(ph_graph *g, const ph_params *params, ph_ctx *ctx);
    /* Since 1.1: the rules of a pattern pass, ending with a row whose
     * pattern is NULL (run is then NULL), or NULL. */
    const ph_rule *rules;
    /* Since 1.3: the target-profile keys the pass reads (ph_profile_key),
     * or NULL. */
    const ph_profile_key *profile_keys;
    /* Since 1.4: the stages (PH_STAGE_* bits) in which on_by_default holds;
     * 0: every stage of .stages.  A pass on by default in the optimize
     * stage that a profile switches on in the adapt stage (explicit_pads)
     * gives PH_STAGE_OPTIMIZE here and PH_STAGE_OPTIMIZE | PH_STAGE_ADAPT
     * in .stages. */
    unsigned default_stages;
    /* Since 1.4: example graphs for the rule checker (ph_rule_example), or
     * NULL.  Read only by the rule checker. */
    const ph_rule_example *rule_examples;
    /* Since 1.4: the float dtype the pass makes the model compute in when
     * it is less precise than the model's own (PH_DT_FLOAT16 for a pass
     * converting float32 to float16), or 0.  --verify then allows the
     * rounding of that dtype (docs/verify.md, "Error budgets").  Only for
     * PH_APPROX passes. */
    int precision;
} ph_pass_desc;

typedef const ph_pass_desc *(*ph_pass_entry_fn)(void);

#if defined(__GNUC__)
#define PH_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define PH_PLUGIN_EXPORT
#endif

/* Define the descriptor and the entry symbol in one go.  The arguments are
 * designated initializers of the ph_pass_desc fields after the ABI header. */
#define PH_PASS_DEFINE(...)                                                    \
    static const ph_pass_desc ph_pass_descriptor_ = {                          \
        .abi_major = PH_ABI_MAJOR,                                             \
        .abi_minor = PH_ABI_MINOR,                                             \
        .struct_size = (uint32_t)sizeof(ph_pass_desc),                         \
        __VA_ARGS__};                                                          \
    PH_PLUGIN_EXPORT const ph_pass_desc *passhost_pass_descriptor(void);       \
    PH_PLUGIN_EXPORT const ph_pass_desc *passhost_pass_descriptor(void)        \
    {                                                                          \
        return &ph_pass_descriptor_;                                           \
    }

/* ------------------------------------------------------------- parameters */

/* Values of the pass's declared parameters, validated by the host.  Asking
 * for a name the table does not declare, or with the wrong type, returns the
 * zero value.  Strings are borrowed for the duration of run(). */
PH_API int64_t ph_params_int(const ph_params *p, const char *name);
PH_API double ph_params_float(const ph_params *p, const char *name);
PH_API int ph_params_bool(const ph_params *p, const char *name);
PH_API const char *ph_params_string(const ph_params *p, const char *name);

/* ---------------------------------------------------------------- context */

typedef enum ph_log_level {
    PH_LOG_ERROR = 0,
    PH_LOG_WARN = 1,
    PH_LOG_INFO = 2,
    PH_LOG_DEBUG = 3
} ph_log_level;

/* Receives every message; user is the pointer given to ph_ctx_new. */
typedef void (*ph_log_fn)(void *user, ph_log_level level, const char *pass, const char *message);

/* For passes: the first failure of a setter since the pass began (0:
 * none), when the host watches (ph_ctx_run in passhost/host.h; passhost
 * always does). */
PH_API int ph_ctx_status(const ph_ctx *ctx);

/* For passes: log a message tagged with the pass name. */
PH_API void ph_log(ph_ctx *ctx, ph_log_level level, const char *fmt, ...) PH_PRINTF(3, 4);
/* For passes: record why run() fails; returns code for `return ph_ctx_error(...)`. */
PH_API int ph_ctx_error(ph_ctx *ctx, int code, const char *fmt, ...) PH_PRINTF(3, 4);
/* For passes: the adapt stage's target ("" in the optimize stage). */
PH_API const char *ph_ctx_target(const ph_ctx *ctx);
/* For passes: zeroed scratch memory freed automatically when run() returns.
 * NULL when out of memory. */
PH_API void *ph_ctx_alloc(ph_ctx *ctx, size_t size);
/* For passes: one word the pass keeps from one call to the next within the
 * run (0 at its first call), e.g. the ph_model_initializers_version it
 * last saw.  Owned by the context; NULL when out of memory. */
PH_API uint64_t *ph_ctx_pass_memo(ph_ctx *ctx);
/* For passes that look at every node: the nodes of m that changed since
 * this pass's previous call of this function on m, so that a call can look
 * at those (and what they lead to) instead of the whole graph.
 *
 * Returns 1 with *nodes (an array of *n live nodes, in no particular
 * order, owned by the context and valid until run() returns) when it can
 * say: then every node of any graph of m to which one of these happened
 * since that previous call (including what the pass itself did after it)
 * is listed:
 *   - it was created, or an input, an attribute or its op changed (an
 *     input replaced by ph_value_replace, a constant it reads given new
 *     data by ph_value_set_const, a graph input it reads made an
 *     initializer);
 *   - an output gained or lost a reader or a graph-output slot (so a node
 *     that a removal left without readers is listed; the removed node is
 *     not);
 *   - the known type of one of its inputs or outputs changed.
 * Not listed: nodes removed since; initializers and graph inputs
 * themselves (a value with no producer that gains or loses readers: see
 * ph_model_initializers_version for added, removed or rewritten
 * initializers).  A node may in rare cases be listed twice.
 * Returns 0 when the pass must look at the whole graph: its first call on
 * m, a call on another model before this one, or changes that may have
 * gone unrecorded (an allocation failure of the IR since, counted by
 * ph_model_alloc_failures).  Each call, whatever it returns, starts the
 * period the next call reports.  PH_ENOMEM (counted in the model's or the
 * context's allocation failures, so the run fails; the next call returns
 * 0) or PH_EINVAL (m NULL). */
PH_API int ph_ctx_changed_nodes(ph_ctx *ctx, ph_model *m, ph_node ***nodes, size_t *n);
/* ph_graph_remove_dead_gated for a pass that knows what changed since the
 * last sweep of g left no dead node (ph_ctx_changed_nodes, and a sweep
 * that was not stopped by its gate): the nodes among nodes[0..n) that are
 * dead, and transitively the producers that removals leave dead, are
 * removed in the order the full sweep would remove them (the latest
 * first), then every unused initializer of g as the full sweep does.
 * When g is not the main graph, its model holds a body (a graph
 * attribute, even one without nodes: the full sweep also looks at the
 * bodies' initializers), or n is a quarter of g's nodes or more (then the
 * walk along the list costs less), this is the full sweep.  Returns how many were removed, or PH_ENOMEM. */
PH_API int ph_graph_remove_dead_near(ph_graph *g, ph_node *const *nodes, size_t n, ph_dead_gate gate, void *user);

/* A set of nodes of one graph taken out in the graph's order (or the
 * reverse), for a pass that visits a few nodes as a walk of the whole
 * graph would meet them.  Each node comes out once however often it was
 * pushed; a node pushed behind the one taken last (where a walk has
 * passed), of another graph, or removed is not taken.  Owned by the
 * caller (ph_node_heap_free); NULL when out of memory. */
typedef struct ph_node_heap ph_node_heap;
PH_API ph_node_heap *ph_node_heap_new(int latest_first);
PH_API void ph_node_heap_free(ph_node_heap *h);
/* 0, or PH_ENOMEM. */
PH_API int ph_node_heap_push(ph_node_heap *h, ph_node *n);
/* The next node in order, NULL when none is left. */
PH_API ph_node *ph_node_heap_pop(ph_node_heap *h);
/* The node ph_node_heap_pop would return next, left in the heap; NULL when
 * none is left.  For a pass that merges the heap with nodes it already
 * holds in order. */
PH_API ph_node *ph_node_heap_peek(ph_node_heap *h);
/* Hold the nodes that read n's outputs now (replacing what was held), so
 * that they can be pushed after a rewrite moved them to other values:
 * ph_node_heap_push_held pushes them and empties the hold.  Both return 0
 * or PH_ENOMEM. */
PH_API int ph_node_heap_hold_readers(ph_node_heap *h, const ph_node *n);
PH_API int ph_node_heap_push_held(ph_node_heap *h);
/* 1 if a comes before b in their graph's node list (the order of
 * ph_graph_walk), 0 otherwise or when they are of different graphs. */
PH_API int ph_node_before(const ph_node *a, const ph_node *b);
/* How many live nodes of op `op` the graphs of m hold (what
 * ph_graph_walk_ops over them costs); 0 for PH_OP_UNKNOWN. */
PH_API size_t ph_model_op_count(const ph_model *m, ph_op op);
/* -------------------------------------------------------- numbered rewrites */

/* For passes: ask before each rewrite.  1: go ahead, the rewrite now has
 * the next global index; 0: the run's budget (--max-rewrites) is used up,
 * so leave the graph as it is (and normally return).  `matched` names what
 * the rewrite matched (copied; NULL allowed). */
PH_API int ph_ctx_rewrite_begin(ph_ctx *ctx, const char *matched);
/* For passes, optional, after the rewrite just begun: the nodes it removed
 * and added (copied; NULL allowed), for --print-changes and dumps. */
PH_API void ph_ctx_rewrite_end(ph_ctx *ctx, const char *removed, const char *added);
/* For passes: 1 while the budget allows another rewrite. */
PH_API int ph_ctx_rewrite_allowed(const ph_ctx *ctx);
/* For passes: 1 when the host reads the names given to
 * ph_ctx_rewrite_begin/end (--print-changes, --dump-dir, --bisect), so a
 * pass in a hot loop can skip formatting them (and pass NULL). */
PH_API int ph_ctx_wants_names(const ph_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
