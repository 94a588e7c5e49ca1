/* host/check/target_report.h - the violations of a target profile a run
 * found (check_target_constraints after the adapt stage, or --check-target
 * alone): collected from the pass context's hook, given the passes that
 * could fix each (the loaded passes that declare its profile key), and
 * printed as a table; report_json.c and report_html.c write the same.
 *
 * Ownership: a host_violations owns copies of every string.
 */
#ifndef PASSHOST_HOST_TARGET_REPORT_H
#define PASSHOST_HOST_TARGET_REPORT_H

#include <stdio.h>

#include "config/loader.h"
#include "passhost/target.h"

/* The pass that checks a model against the adapt stage's profile. */
#define HOST_TARGET_CHECK_PASS "check_target_constraints"

typedef struct host_violation {
    char *graph; /* "" for the main graph, else the body's path */
    char *node;  /* the node's (or graph input's) name; "" when unnamed */
    char *op;    /* "Conv", "(input)", "(model)" */
    char *key;   /* the constraint: a dotted profile key */
    char *value; /* what the node has */
    char *limit; /* what the profile allows */
    char *fix;   /* the passes that could fix it, ", "-separated; "" when none */
} host_violation;

typedef struct host_violations {
    host_violation *items;
    size_t count, cap;
    const char *target; /* borrowed: the profile's name, NULL when no profile */
    int checked;        /* a check ran (the pass, or --check-target) */
} host_violations;

/* A ph_violation_fn appending a copy of v to the host_violations user. */
int host_violations_hook(void *user, const ph_violation *v);
/* Forget every violation (before a new check). */
void host_violations_clear(host_violations *vs);
/* Fill each violation's fix from the passes of reg that declare its key
 * (or, for OP.max_rank and OP.dtypes, the model-wide key). */
void host_violations_fixers(host_violations *vs, const host_registry *reg);
/* The table: one line per violation (path/node, op, constraint, value,
 * limit, fix), or "no violations". */
void host_violations_print(FILE *out, const host_violations *vs);

#endif
