/* host/check/rule_trace.h - `passhost --trace-rule PASS[:RULE] MODEL`: one
 * pattern pass's rules tried at every candidate node of a model, each with
 * the outcome: a match (and whether the rule's check accepts it), or why not
 * (ph_pattern_explain: the statement, node and constraint that failed).
 * For authors of rules: a rule `{beta=0.5}` that never matches because the
 * exporter leaves beta out at its default says so here.
 *
 * The model is the one a run would start from (loaded, cut by --inputs and
 * --outputs, input shapes applied, shapes inferred): the rules are tried
 * before any pass, so a match that needs another pass first (constant
 * folding) shows as a miss.  Nothing is written. */
#ifndef PASSHOST_HOST_RULE_TRACE_H
#define PASSHOST_HOST_RULE_TRACE_H

#include <stdio.h>

#include "config/loader.h"
#include "passhost/passhost.h"

/* Candidates shown per rule; the rest are counted. */
#define HOST_TRACE_RULE_SHOWN 40

/* Trace spec ("PASS" or "PASS:RULE", RULE a rule's name or its 1-based
 * index) on m with the pass's parameters params (borrowed; NULL: its
 * defaults); print on out.  0, or HOST_EXIT_CONFIG (no such pass or rule, a
 * pass without rules) or HOST_EXIT_PASS (a rule's check failed). */
int host_trace_rule(FILE *out, const host_registry *reg, const char *spec, const ph_params *params,
                    ph_model *m, const char *model_name, ph_error *err);

#endif
