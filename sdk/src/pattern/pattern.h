/* sdk/src/pattern/pattern.h - internals of the pattern engine: the compiled
 * form of a pattern (parse.c), match state (match.c), the rewriter
 * (rewrite.c) and the change log the driver reads (driver.c). */
#ifndef PASSHOST_SDK_PATTERN_INTERNAL_H
#define PASSHOST_SDK_PATTERN_INTERNAL_H

#include "internal.h"

enum pat_cons_kind {
    PAT_CONST = 1,
    PAT_SCALAR,
    PAT_RANK,
    PAT_DTYPE,
    PAT_SHAPE,
    PAT_PERCHANNEL,
    PAT_FLOAT
};

#define PAT_ANY_DIM INT64_MIN /* '*' in shape=[...] */

typedef struct pat_cons {
    int kind;
    int64_t n;          /* rank, axis */
    uint32_t dtypes;    /* bit per ph_dtype */
    int64_t *dims;      /* shape=[...]: owned, n entries */
} pat_cons;

typedef struct pat_arg {
    int slot;           /* value slot, -1 for '_' */
    int optional;
    pat_cons *cons;     /* owned */
    int n_cons;
} pat_arg;

enum pat_attr_mode { PAT_ATTR_EQ = 1, PAT_ATTR_OPT_EQ, PAT_ATTR_ABSENT };
enum pat_lit { PAT_LIT_INT = 1, PAT_LIT_FLOAT, PAT_LIT_STRING, PAT_LIT_INTS };

typedef struct pat_attr {
    char *key;          /* owned */
    int mode;
    int lit;
    int64_t i;
    double f;
    char *s;            /* owned */
    int64_t *ints;      /* owned */
    size_t n_ints;
} pat_attr;

typedef struct pat_op {
    char *op_type;      /* owned */
    char *domain;       /* owned; "" for the default domain */
    ph_op op;           /* PH_OP_UNKNOWN for other domains */
} pat_op;

typedef struct pat_stmt {
    pat_op *ops;        /* owned alternatives */
    int n_ops;
    int *outs;          /* owned: slot per output, -1 for '_' */
    int *shared;        /* owned: per output, 1 when ':shared' */
    int n_outs;
    pat_arg *args;      /* owned */
    int n_args;
    int variadic_slot;  /* slot of 'name*', or -1 */
    pat_attr *attrs;    /* owned */
    int n_attrs;
} pat_stmt;

struct ph_pattern {
    char *text;         /* owned */
    char **names;       /* owned: slot names */
    int n_slots;
    int *slot_stmt;     /* owned: statement binding the slot as an output, or -1 */
    int *slot_variadic; /* owned: 1 for 'name*' slots */
    pat_stmt *stmts;    /* owned */
    int n_stmts;
    int depth;
};

struct ph_match {
    const ph_pattern *p;
    ph_value **vals;    /* per slot */
    unsigned char *bound; /* per slot */
    ph_value *const **var; /* per slot: variadic arrays (borrowed from nodes) */
    size_t *var_n;
    ph_node **nodes;    /* per statement */
    int *trail;         /* slots bound, for backtracking */
    int n_trail;
    char *why;          /* ph_pattern_explain: why the match failed (borrowed buffer), or NULL */
    size_t why_size;
    int why_stmt;       /* the statement the reason is about: the deepest one reached */
};

int pat_is_commutative(ph_op op);
int pat_slot(const ph_pattern *p, const char *name);
/* 1 if n's op is one of s's alternatives. */
int pat_op_matches(const pat_stmt *s, const ph_node *n);

/* The rewriter of one match (rewrite.c). */
struct ph_rewriter {
    ph_graph *g;
    const ph_match *m;
    const ph_params *params;
    ph_ctx *ctx;
    ph_node **created;
    size_t n_created, cap_created;
    ph_value **inits;
    size_t n_inits, cap_inits;
    ph_value **repl; /* pairs: old, with */
    size_t n_repl, cap_repl;
    void **scratch;
    size_t n_scratch, cap_scratch;
    int failed; /* 0, or the PH_E* code of the first ph_rw_* call that failed */
};

/* Build with fn and commit or roll back.  1 committed, 0 nothing changed
 * (declined, refused or over budget: *stop set when over budget), or a
 * negative PH_E* code (nothing changed). */
int pat_rewrite(ph_graph *g, const ph_match *m, ph_rule_rewrite_fn fn, const ph_params *params,
                ph_ctx *ctx, int *stop);

#endif
