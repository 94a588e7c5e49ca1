/* passhost/target.h - target profiles: what a target can run, and the check
 * of a model against it.
 *
 * A profile is what an INI file of docs/targets.md says about a target: the
 * operators it supports, their limits, the dtypes and ranks it accepts, the
 * opsets, whether it broadcasts implicitly.  Hosts read the file and build a
 * ph_target from its keys (ph_target_set); passes read it through their
 * parameters (a pass declares in its descriptor which profile keys set which
 * parameter: ph_profile_key, plugin.h) or whole through ph_ctx_profile;
 * ph_target_check lists every node that violates it.
 *
 * Keys are written as the profile's sections and keys joined by a dot, the
 * section without its "target." prefix:
 *
 *     max_rank                  [target]        max_rank = 4
 *     opset.ai.onnx             [target.opset]  ai.onnx = 11..17
 *     Conv.max_kernel_area      [target.Conv]   max_kernel_area = 2048
 *     FusedConv@com.microsoft.max_rank
 *
 * (an operator section's key never has a dot, so the key is what follows
 * the last dot; the opset section's key, a domain, is what follows
 * "opset.").  docs/targets.md lists every key.
 *
 * Values are kept normalized: integers in decimal, booleans "true" or
 * "false", lists as "a, b, c", opset ranges "11..17" ("11.." and "..17"
 * for open ends).
 *
 * Hosts give a context its profile and take the violations passes report
 * with ph_ctx_set_profile and ph_ctx_set_violation_hook (host.h).
 *
 * Ownership: a ph_target is owned by whoever made it (ph_target_free);
 * strings it returns are borrowed until it changes or is freed; strings
 * passed in are copied.  Nothing here keeps global state.
 */
#ifndef PASSHOST_TARGET_H
#define PASSHOST_TARGET_H

#include <stddef.h>

#include "passhost/error.h"
#include "passhost/ir.h"
#include "passhost/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ph_target ph_target;

/* ----------------------------------------------------------------- building
 * (for hosts) */

/* A profile with no key set: it constrains nothing.  NULL on OOM. */
PH_API ph_target *ph_target_new(void);
PH_API void ph_target_free(ph_target *t);

/* Set key `key` of section `section` ("" for [target], "opset", or an
 * operator: "Conv", "FusedConv@com.microsoft") from its INI text, replacing
 * an earlier value (a base profile's).  The text is checked and
 * normalized.  0, or PH_ENOTFOUND for a section or key the format does not
 * have, PH_EINVAL for a value of the wrong form; err says which, with the
 * closest names ("did you mean ..."), without a file or line (the caller
 * adds them).  [target] base and [target.passes] are the host's: not here. */
PH_API int ph_target_set(ph_target *t, const char *section, const char *key, const char *value,
                         ph_error *err);

/* 0 when `key` (dotted, as above) names a key of the format, else
 * PH_ENOTFOUND with err saying why (and the closest names).  For checking
 * the profile keys of a pass descriptor. */
PH_API int ph_target_key_check(const char *key, ph_error *err);

/* ------------------------------------------------------------------ reading */

/* The profile's [target] name, "" when not set. */
PH_API const char *ph_target_name(const ph_target *t);
/* The normalized value of a dotted key, or NULL when the profile does not
 * set it. */
PH_API const char *ph_target_value(const ph_target *t, const char *key);
/* 1 when the profile sets `key` to a value that restricts something: any
 * value of a limit or a list, "broadcast" other than "yes", "auto_pad"
 * false, "static_shapes" true, a TopK index_dtype other than int64,
 * noop_ops not empty.  0 otherwise.  The
 * host switches a pass on when the profile constrains a key the pass
 * declares (ph_profile_key). */
PH_API int ph_target_constrains(const ph_target *t, const char *key);
/* The keys set, in the order first set: for i < ph_target_count(t),
 * ph_target_key_at(t, i) (dotted; borrowed). */
PH_API size_t ph_target_count(const ph_target *t);
PH_API const char *ph_target_key_at(const ph_target *t, size_t i);

/* 1 when the normalized list value (", "-separated, as ph_target_value
 * gives it) has item, else 0 (also for a NULL list). */
PH_API int ph_target_list_has(const char *list, const char *item);

/* Whether the profile supports an operator (op_type of domain: "" or
 * "ai.onnx" is the default domain): [target] domains, ops and ops_except
 * (no such key: every operator).  1 or 0. */
PH_API int ph_target_supports_op(const ph_target *t, const char *domain, const char *op_type);

/* ------------------------------------------------------------------ checking */

/* One node (or graph input, or the model) that violates the profile.
 * Every string is borrowed for the call. */
typedef struct ph_violation {
    const ph_node *node;    /* NULL for a graph input or the model itself */
    const char *graph;      /* "" for the main graph, else the path of the
                               If/Loop/Scan body: "If_3/then_branch/Loop_1/body" */
    const char *name;       /* the node's name, the graph input's, or "" */
    const char *op;         /* "Conv", "FusedConv@com.microsoft"; "(input)", "(model)" */
    const char *key;        /* the constraint, a dotted key: "Conv.max_kernel_area" */
    const char *value;      /* what the node has: "4225", "int64", "LayerNormalization" */
    const char *limit;      /* what the profile allows: "2048", "float32, int32" */
} ph_violation;

/* Called once per violation; 0 to go on, a negative PH_E* code to stop
 * (ph_target_check then returns it). */
typedef int (*ph_violation_fn)(void *user, const ph_violation *v);

/* Check m against t: the opset imports, the main graph's inputs, then
 * every node of the main graph and of every If/Loop/Scan body in order
 * (a body's nodes before its node): supported operators, dtypes and ranks
 * of what each node computes (constants, whose values the target gets at
 * compile time, are not checked), implicit broadcasting, consecutive
 * no-instruction operators, and the per-operator limits (docs/targets.md
 * says how each is measured).  A value whose dtype, rank or dims are not
 * known is not checked for what it would take to know them.  Changes
 * nothing.  Returns the number of violations, or a negative PH_E* code
 * (fn's, or PH_ENOMEM).  Cost: linear in the nodes and their inputs. */
PH_API int ph_target_check(const ph_target *t, ph_model *m, ph_violation_fn fn, void *user);

/* -------------------------------------------------------- in a pass's context */

/* For passes: the adapt stage's profile, NULL in the optimize stage or
 * when the run has none.  Borrowed for the call of the pass. */
PH_API const ph_target *ph_ctx_profile(const ph_ctx *ctx);

/* For passes: report a violation to the host (a check that rewrites
 * nothing, check_target_constraints).  Without a hook it is logged as a
 * warning.  0, or the hook's negative code. */
PH_API int ph_ctx_violation(ph_ctx *ctx, const ph_violation *v);

#ifdef __cplusplus
}
#endif
#endif
