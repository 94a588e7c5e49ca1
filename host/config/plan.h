/* host/config/plan.h - from a config and the loaded passes to what will run:
 * the plugin search path, and per stage an ordered list of passes with their
 * validated parameters.
 *
 * A stage's list is: the passes on by default whose stages include it and
 * whose targets are empty or name the stage's target (unless no_integral),
 * plus pass_on, minus pass_off; in the stage's run order (order.h: the
 * pipeline file beside the passes, then the hints of passes it does not
 * list), which does not depend on which passes are on; with keep_order
 * (--passes), in pass_on's order.  Parameters: the pass's defaults, then the
 * [pass.NAME] settings by priority (file < custom_config < --set).
 *
 * The adapt stage's target ([adapt] target: a shipped profile's name or a
 * file; profile.h) takes part: a pass on by default is on when its
 * targets list names the profile or one of its bases; a pass whose
 * profile keys (ph_profile_key) the profile constrains is on, and takes
 * the profile's values of those keys as parameters; the profile's
 * [target.passes] switch passes on or off and [target.pass.NAME] sets
 * parameters; pass_on, pass_off and [pass.NAME] of the config come after
 * (they override the profile).
 *
 * The stage runner, and anything that orders the work of a stage (a
 * worklist shared by the rule passes of a stage), takes the order from
 * host_stage_plan.steps: step i comes before step i + 1, in every round and
 * among the run-once steps after the fixpoint.  Nothing else orders passes.
 */
#ifndef PASSHOST_HOST_PLAN_H
#define PASSHOST_HOST_PLAN_H

#include <stddef.h>

#include "config.h"
#include "loader.h"

/* One pass to run: plugin borrowed from the registry, params owned. */
typedef struct host_step {
    const host_plugin *plugin;
    ph_params *params;
} host_step;

typedef struct host_stage_plan {
    int stage;          /* HOST_STAGE_* */
    char *target;       /* the profile's name; "" when none */
    struct host_profile *profile; /* owned: the adapt stage's target profile, NULL: none */
    int max_iterations;
    int allow_approximate; /* as configured (for --print-pipeline) */
    host_step *steps;   /* owned array, in run order: step i before step i + 1 */
    size_t count;
} host_stage_plan;

typedef struct host_plan {
    host_stage_plan stage[HOST_STAGE_COUNT];
} host_plan;

/* Load plugins from, in order: plugin_dir (may be NULL; must exist when
 * given), each folder of PASSHOST_PLUGIN_PATH (':'-separated; missing ones
 * skipped), then host_default_plugin_dirs() (missing ones skipped).  A folder
 * met twice is read once.  0 or HOST_EXIT_PLUGIN with the loader's message. */
int host_load_plugins(host_registry *reg, const char *plugin_dir, ph_error *err);

/* Build the plan (the registry must outlive it; the config need not).  0, or
 * HOST_EXIT_CONFIG (unknown pass, on+off, stage, approx, parameters, the
 * pipeline file) or HOST_EXIT_PASS (order hints contradict the pipeline
 * file or form a cycle), with a one-line message. */
int host_plan_build(host_plan *plan, const host_config *cfg, const host_registry *reg,
                    ph_error *err);
void host_plan_free(host_plan *plan);

/* The registry name closest to name (edit distance at most 1/3 of its
 * length, at least 2), or NULL.  Borrowed. */
const char *host_closest_pass(const host_registry *reg, const char *name);
/* Up to max registry names within that distance of name, nearest first,
 * into out (borrowed strings); returns how many. */
size_t host_close_passes(const host_registry *reg, const char *name, const char **out, size_t max);

#endif
