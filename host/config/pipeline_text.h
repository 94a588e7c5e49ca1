/* host/config/pipeline_text.h - a run's pipeline as one line of text: what
 * --print-pipeline prints and --passes= reads (in the manner of LLVM's
 * `opt -passes=` and `-print-pipeline-passes`).
 *
 *   optimize(constant_to_initializer,constant_folding<max_output_bytes=0>),adapt<target=ort>(fuse_gelu)
 *
 *   value   := names | stage (',' stage)*
 *   names   := NAME ((',' | ';') NAME)*          the optimize stage only
 *   stage   := ('optimize' | 'adapt') options? '(' [pass (',' pass)*] ')'
 *   pass    := NAME options?
 *   options := '<' KEY '=' VAL (',' KEY '=' VAL)* '>'
 *   VAL     := characters other than , < > ( ) " and blanks, or a "quoted"
 *              text in which \" and \\ stand for " and \
 * Blanks around the parts are ignored.
 *
 * A stage the value names runs exactly the passes listed, in that order
 * (no_integral = true, keep_order = true, pass_on = the list; `adapt()`
 * runs none); a stage it does not name is left as configured.  A pass's
 * options are its [pass.NAME] parameters in that stage; a stage's options
 * are its keys max_iterations, allow_approximate and (adapt) target.  Both
 * apply as --set values do, after every --set.
 *
 * host_pipeline_text prints both stages of a plan: every pass in run
 * order, each parameter whose value differs from the pass's default, and
 * the stage keys that differ from the defaults (allow_approximate only when
 * an approx pass runs).  Given to --passes with the same passes found, it
 * runs the same pipeline: the same output, byte for byte.
 */
#ifndef PASSHOST_HOST_PIPELINE_TEXT_H
#define PASSHOST_HOST_PIPELINE_TEXT_H

#include "config.h"
#include "plan.h"

/* Apply a --passes value to cfg.  0, HOST_EXIT_USAGE for a value that does
 * not parse (the message names the character), or HOST_EXIT_CONFIG for an
 * option the stage does not have or a value its key refuses.  Pass names
 * are checked when the plan is built. */
int host_pipeline_text_apply(host_config *cfg, const char *value, ph_error *err);

/* The plan as a --passes value (without "--passes="); caller frees. */
char *host_pipeline_text(const host_plan *plan);

#endif
