/* sdk/src/rulecheck/rulecheck.h - internals of the rule checker: the
 * instance generator (gen.c) and the checker that runs a rule on its
 * instances (check.c).  See passhost/rulecheck.h. */
#ifndef PASSHOST_SDK_RULECHECK_INTERNAL_H
#define PASSHOST_SDK_RULECHECK_INTERNAL_H

#include "pattern/pattern.h"
#include "passhost/rulecheck.h"

/* What kind of instance to build. */
enum rc_kind {
    RC_POSITIVE = 0,     /* the pattern matches; the rule may fire */
    RC_EXTRA_CONSUMER,   /* an interior value gets a reader outside the match */
    RC_OUTPUT_MIDDLE,    /* an interior value is also a graph output */
    RC_VALUE_OUTSIDE     /* a value test's constant just outside it */
};

typedef struct rc_spec {
    const ph_pattern *p;
    int form;            /* form of p to build */
    int kind;            /* rc_kind */
    uint64_t seed;       /* the instance's random choices */
    int max_dim;         /* dims drawn in [1, max_dim] */
    int drop_optional;   /* 1: every optional input left out */
    const char *avoid;   /* ops (space-separated, padded) the extra reader must not be */
    int values_exact;    /* 1: a value test's constants take its value V, where
                          * they are otherwise drawn inside its tolerance half
                          * the time (same random choices otherwise) */
    const char *example; /* an example graph's template (ph_rule_example):
                          * the instance is built from it (rc_build_example)
                          * instead of from the form; kinds RC_POSITIVE,
                          * RC_EXTRA_CONSUMER, RC_OUTPUT_MIDDLE */
    const char *const *params; /* the example's parameter overrides, or NULL */
    int in_body;         /* 1: the instance is moved into both branches of an
                          * If, 2: into a Loop's body (rc_wrap_in_body); its
                          * root is then not named */
} rc_spec;

/* A built instance: the model (owned) and the name of the root's first
 * output. */
typedef struct rc_instance {
    ph_model *m;
    char root_out[256];
    char root_sig[512];  /* the root node: rc_node_sig */
    int near_values;     /* a constant was drawn inside a value test's tolerance, not at V */
} rc_instance;

/* Build the instance spec describes.  1 built (inst filled, shapes
 * inferred), 0 not possible for this spec (a case it has no room for: no
 * interior value, no value test; or a model shape inference refuses),
 * negative PH_E* on out of memory. */
int rc_build(const rc_spec *spec, rc_instance *inst);
/* The instance of an example graph (spec->example): as rc_build.  The
 * root is not named (root_out and root_sig empty). */
int rc_build_example(const rc_spec *spec, rc_instance *inst);
/* The example template with its choices drawn from seed (malloc'd, caller
 * frees), or NULL when malformed or out of memory. */
char *rc_example_text(const char *tpl, uint64_t seed);
/* Move the model's nodes into both branches of an If reading a new bool
 * graph input `cond`, or (loop) into the body of a Loop of one trip
 * (body.c).  1 done, 0 not possible (an output made by no node), -1 out of
 * memory. */
int rc_wrap_in_body(ph_model *m, int loop);
/* 1 if the form has a case for this kind of negative instance. */
int rc_has_kind(const pat_form *f, int kind);
/* A node's signature: its name, op@domain and attribute count. */
void rc_node_sig(const ph_node *n, char *buf, size_t size);
/* The model as text: its inputs and constants as comments, then one
 * statement per node in the pattern language's form.  Returns 0 or -1
 * (cannot write). */
int rc_write_text(const ph_model *m, const char *path);

#endif
