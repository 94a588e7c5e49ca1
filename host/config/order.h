/* host/config/order.h - the run order of each stage: one list in one data
 * file, pipeline.txt, beside the passes, and the ordering hints of passes
 * that file does not list.
 *
 * The file (plugins/pipeline.txt in the source tree):
 *
 *     # a comment ('#' to the end of the line)
 *     [optimize]
 *     constant_to_initializer
 *     constant_folding          # one pass name a line
 *     [adapt]
 *     ...
 *
 * The first folder of the plugin search path that holds a pipeline.txt
 * provides it (host_registry_pipeline_path): the folder of the built-in
 * passes, unless an earlier folder brings its own.
 *
 * The order of a stage, over the passes that run in it:
 *   - the passes the stage's section lists, in the order listed;
 *   - a pass it does not list (a third-party pass) right after the last
 *     listed pass it must run after (its run_after, or a listed pass's
 *     run_before naming it), else right before the first listed pass it must
 *     run before, else after every listed pass; passes that land on the same
 *     spot in name order.  These places count every listed pass, run or
 *     not, so no pass's place depends on which others are switched on, and
 *     none on a file name;
 *   - every run_after / run_before hint between passes that run holds.
 * Without a pipeline file every pass is unlisted: hints, then names.
 *
 * Errors: the file cannot be read, a line is no section and no pass name,
 * an unknown section, a name given twice in a section, a name that is no
 * loaded pass or a pass that does not declare the section's stage
 * (HOST_EXIT_CONFIG, "pipeline.txt:LINE: ..."); a hint that contradicts the
 * listed order, or hints that form a cycle (HOST_EXIT_PASS).
 */
#ifndef PASSHOST_HOST_ORDER_H
#define PASSHOST_HOST_ORDER_H

#include <stddef.h>

#include "config.h"
#include "loader.h"
#include "passhost/error.h"

/* The file name looked for in each plugin folder. */
#define HOST_PIPELINE_FILE "pipeline.txt"

/* The run order of stage (HOST_STAGE_*) over the loaded passes that
 * declare it and, when only is not NULL, have only[registry index] set:
 * their registry indices, first to run first.  *out is allocated (caller
 * frees).  0 or an error as above. */
int host_stage_order(const host_registry *reg, int stage, const char *only, size_t **out,
                     size_t *count, ph_error *err);

/* Every loaded pass once, in run order: the optimize stage's passes, then
 * the adapt stage's that do not run in optimize.  As host_stage_order. */
int host_catalogue_order(const host_registry *reg, size_t **out, size_t *count, ph_error *err);

/* 1 when the hints of passes a and b say a must run before b. */
int host_pass_precedes(const ph_pass_desc *a, const ph_pass_desc *b);

#endif
