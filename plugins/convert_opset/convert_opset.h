/* plugins/convert_opset/convert_opset.h - what the adapters of convert_opset
 * share: the conversion in progress and the helpers that move an operand
 * between an attribute and an input.  Private to the pass. */
#ifndef CONVERT_OPSET_H
#define CONVERT_OPSET_H

#include <passhost/passhost.h>
#include <passhost/constant.h>

/* One conversion of the default domain from opset `from` to opset `to`. */
typedef struct cv {
    ph_ctx *ctx;
    int64_t from, to;
} cv;

/* 1 when the conversion crosses version v of an operator: one side is
 * below v, the other at or above it. */
static inline int cv_crosses(const cv *c, int64_t v) { return (c->from < v) != (c->to < v); }
/* 1 when it goes up across v (from below v to v or above). */
static inline int cv_up(const cv *c, int64_t v) { return c->from < v && c->to >= v; }
/* 1 when it goes down across v. */
static inline int cv_down(const cv *c, int64_t v) { return c->from >= v && c->to < v; }

/* Fail the pass: "NODE (OP): no faithful conversion from opset F to T: WHY".
 * Returns PH_EUNSUPPORTED. */
int cv_refuse(cv *c, const ph_node *n, const char *fmt, ...) PH_PRINTF(3, 4);

/* The first element of constant v as a double; 0 when v is constant, -1 not. */
int cv_const_scalar(const ph_value *v, double *out);

/* New initializers of n's graph: an int64 list, a one-element tensor of
 * dtype (rank 0, or rank 1 when one_d).  NULL on failure. */
ph_value *cv_ints(ph_node *n, const char *hint, size_t count, const int64_t *vals);
ph_value *cv_scalar(ph_node *n, const char *hint, int dtype, double v, int one_d);

/* Omit input i of n (an omitted optional input; trailing omitted inputs
 * are dropped) and prune what only it used. */
int cv_drop_input(ph_node *n, size_t i);
/* Set input i of n (inputs before it that do not exist are omitted). */
int cv_set_input(ph_node *n, size_t i, ph_value *v);

/* Attribute `attr` (ints) of n becomes int64 input i; 1 moved, 0 absent,
 * < 0 error. */
int cv_attr_to_input(cv *c, ph_node *n, const char *attr, size_t i);
/* Constant integer input i of n becomes attribute `attr`: 1 moved, 0 the
 * input is omitted, PH_EUNSUPPORTED (with the error naming the node) when
 * it is not constant. */
int cv_input_to_attr(cv *c, ph_node *n, size_t i, const char *attr);
/* Remove attribute attr of n when it equals dflt (absent: nothing to do);
 * else refuse, saying it does not exist at the target opset. */
int cv_drop_default_int(cv *c, ph_node *n, const char *attr, int64_t dflt);

/* n rebuilt with its first `keep` outputs only (attributes, name and
 * inputs kept): the others must be unused.  The new node (n is removed),
 * or NULL. */
ph_node *cv_keep_outputs(ph_node *n, size_t keep);

/* The adapters: each converts one node of its family, returns 1 when it
 * changed it, 0 when nothing was needed, or a negative PH_E* code after
 * ph_ctx_error (cv_refuse). */
int cv_adapt_operands(cv *c, ph_node *n);  /* adapt_operands.c */
int cv_adapt_resize(cv *c, ph_node *n);    /* adapt_resize.c */
int cv_adapt_semantics(cv *c, ph_node *n); /* adapt_semantics.c */

#endif
