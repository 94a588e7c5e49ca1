/* sdk/src/pattern/pattern.h - internals of the pattern engine: the compiled
 * form of a pattern (parse.c), match state (match.c), the rewriter
 * (rewrite.c), declarative results (result.c), rule sets (ruleset.c), the
 * change log (changelog.c) and the worklist that drives them (driver.c).
 *
 * A pattern text compiles to one or more FORMS: its alternatives between
 * statements, "( a | b )", expanded (each form takes one branch of every
 * group).  A form is what the matcher matches: statements, their value and
 * attribute variables, opset guards, a benefit and an optional result. */
#ifndef PASSHOST_SDK_PATTERN_INTERNAL_H
#define PASSHOST_SDK_PATTERN_INTERNAL_H

#include "internal.h"

enum pat_cons_kind {
    PAT_CONST = 1,
    PAT_SCALAR,     /* one element */
    PAT_RANK,
    PAT_DTYPE,      /* dtypes: one of a set */
    PAT_SHAPE,
    PAT_PERCHANNEL,
    PAT_VALUE,      /* scalar= / scalar~ / all= / all~ */
    PAT_FITS,       /* fits(x): broadcasts to x's shape without widening it */
    PAT_DTYPE_VAR,  /* dtype=$t: the known dtype, bound to variable t */
    PAT_SCALAR_VAR, /* scalar=$v: a finite one-element constant, its value bound to v */
    PAT_INTS        /* ints: constant integers as ph_value_const_ints reads them (shape constants too) */
};

#define PAT_INTS_MAX 64       /* ':ints': at most this many entries */
#define PAT_ANY_DIM INT64_MIN /* '*' in shape=[...] */

typedef struct pat_cons {
    int kind;
    int64_t n;          /* rank, axis; PAT_VALUE: 1 for all elements, 0 for one */
    uint32_t dtypes;    /* bit per ph_dtype */
    int64_t *dims;      /* shape=[...]: owned, n entries */
    double v;           /* PAT_VALUE: the value */
    double tol;         /* PAT_VALUE: < 0 exact; else the tolerance */
    int rel;            /* PAT_VALUE: the tolerance is relative to |v| */
    int ref;            /* PAT_FITS: slot; PAT_DTYPE_VAR, PAT_SCALAR_VAR: variable */
} pat_cons;

typedef struct pat_arg {
    int slot;           /* value slot, -1 for '_' */
    int optional;
    pat_cons *cons;     /* owned */
    int n_cons;
    size_t at;          /* offset in the text, for messages */
} pat_arg;

/* A literal of the language: numbers, strings and lists of them. */
enum pat_lit_kind { PAT_LIT_INT = 1, PAT_LIT_FLOAT, PAT_LIT_STRING, PAT_LIT_INTS, PAT_LIT_FLOATS, PAT_LIT_STRINGS };

typedef struct pat_lit {
    int kind;
    int64_t i;
    double f;
    char *s;            /* owned */
    int64_t *ints;      /* owned; PAT_LIT_INTS */
    double *floats;     /* owned; PAT_LIT_FLOATS */
    char **strs;        /* owned; PAT_LIT_STRINGS */
    size_t n;           /* list length */
} pat_lit;

/* A variable's value while matching: numbers, a string or a list
 * (borrowed from the node's attribute or the pattern's default). */
typedef struct pat_val {
    int kind;           /* 0 unbound, else a pat_lit_kind */
    int64_t i;
    double f;
    const char *s;
    const int64_t *ints;
    const float *floats32; /* an attribute's FLOATS */
    const double *floats;  /* a literal's list */
    const char *const *strs; /* a literal's list of strings */
    size_t n;
    int f32;            /* the number is a float attribute's (a float32) */
} pat_val;

/* Attribute tests.  Absent attribute: `absent` says what happens, unless a
 * default stands in for it. */
enum pat_attr_op { PAT_OP_PRESENT = 1, PAT_OP_ABSENT, PAT_OP_EQ, PAT_OP_NE, PAT_OP_LT, PAT_OP_LE, PAT_OP_GT,
                   PAT_OP_GE, PAT_OP_IN };

typedef struct pat_attr {
    char *key;          /* owned */
    int op;             /* pat_attr_op */
    int all;            /* 'all': the test applies to every element of a list */
    int absent_ok;      /* 'key?': an absent attribute passes */
    int has_default;    /* 'key(default)' */
    pat_lit dflt;
    int var;            /* rhs '$name' (op EQ only), or -1 */
    pat_lit rhs;        /* literal rhs; PAT_OP_IN: a list */
    /* read off the literals once (parse.c), for the matcher */
    pat_val rhs_val, dflt_val;
} pat_attr;

typedef struct pat_op {
    char *op_type;      /* owned */
    char *domain;       /* owned; "" for the default domain */
    ph_op op;           /* PH_OP_UNKNOWN for other domains */
} pat_op;

typedef struct pat_stmt {
    pat_op *ops;        /* owned alternatives */
    int n_ops;
    /* the alternatives' known ops as bits (op_bits[op / 64] bit op % 64), and
     * how many are of other domains (matched by name): pat_op_matches */
    uint64_t op_bits[(PH_OP__COUNT + 63) / 64];
    int n_named_ops;
    int *outs;          /* owned: slot per output, -1 for '_' */
    int *shared;        /* owned: per output, 1 when ':shared' */
    int n_outs;
    pat_arg *args;      /* owned */
    int n_args;
    int variadic_slot;  /* slot of 'name*', or -1 */
    int variadic_out;   /* slot of an output list 'name*' (the outputs after the named ones), or -1 */
    pat_attr *attrs;    /* owned */
    int n_attrs;
    int every;          /* negative statement '!all': refused when every reader matches */
} pat_stmt;

/* `opset[@domain] CMP N` */
typedef struct pat_guard {
    char *domain;       /* owned; "" default */
    int op;             /* PAT_OP_EQ .. PAT_OP_GE */
    int64_t version;
} pat_guard;

/* One attribute a result statement gives its node. */
typedef struct pat_rattr {
    char *key;          /* owned; NULL for a spread '...name' */
    int var;            /* '$name', or -1 */
    int spread;         /* slot whose producer's attributes are copied */
    pat_lit lit;        /* when var < 0 and key != NULL */
} pat_rattr;

/* A statement of the result (after '=>'). */
typedef struct pat_rstmt {
    int *outs;          /* owned: slot per output, -1 for '_' */
    int n_outs;
    char *op;           /* owned "Op" or "Op@domain"; NULL: an alias 'y = x', or '_' */
    int same_op;        /* '_': the op of the node 'like' copies */
    int variadic_out;   /* 'ys*' last: the pattern's output list it replaces, or -1 */
    int variadic_arg;   /* 'xs*' last: the pattern's list it reads, or -1 */
    int *args;          /* owned: slots (-1 for '_': an omitted input) */
    int *arg_optional;  /* owned: 1 for 'name?' */
    size_t *arg_at;     /* owned: text offsets */
    int n_args;
    int like;           /* 'like c': slot whose producer is copied, or -1 */
    pat_rattr *attrs;   /* owned */
    int n_attrs;
} pat_rstmt;

/* Slot kinds. */
enum { PAT_SLOT_LEAF = 0, PAT_SLOT_RESULT = 1 /* made by a result statement */ };

typedef struct pat_form {
    char **names;       /* owned: slot names */
    int n_slots;
    int *slot_stmt;     /* owned: statement binding the slot as an output, or -1 */
    int *slot_variadic; /* owned: 1 for 'name*' slots */
    int *slot_kind;     /* owned: PAT_SLOT_* */
    int *slot_rstmt;    /* owned: result statement making the slot, or -1 */
    pat_stmt *stmts;    /* owned */
    int n_stmts;
    pat_stmt *nacs;     /* owned: '!Op(...)': no reader of the values they name may match;
                         * '!all Op(...)': not every reader may match */
    int n_nacs;
    int depth;
    char **vars;        /* owned: '$' variable names (without '$') */
    int n_vars;
    int benefit;        /* 'benefit N', else the number of statements */
    int has_benefit;
    pat_guard *guards;  /* owned */
    int n_guards;
    pat_rstmt *result;  /* owned; has_result: after '=>' (maybe no statement) */
    int n_result;
    int has_result;
    int deferred;       /* some constraint reads another slot (fits): checked at the end */
} pat_form;

struct ph_pattern {
    char *text;         /* owned */
    pat_form *forms;    /* owned */
    int n_forms;
    int *order;         /* owned: form indices by benefit, greatest first (stable) */
    int depth;          /* greatest over the forms */
    int has_result;     /* every form has a result */
};

struct ph_match {
    const ph_pattern *p;
    int form;           /* the form matched (valid after a match) */
    size_t cap_slots, cap_stmts, cap_vars;
    ph_value **vals;    /* per slot */
    unsigned char *bound; /* per slot */
    ph_value *const **var; /* per slot: variadic arrays (borrowed from nodes) */
    size_t *var_n;
    ph_node **nodes;    /* per statement */
    int *trail;         /* slots bound, for backtracking */
    int n_trail;
    pat_val *vv;        /* per variable */
    int *vtrail;        /* variables bound, for backtracking */
    int n_vtrail;
    void *state;        /* ph_match_state: owned */
    size_t state_size;
    int state_fresh;    /* state zeroed for this match */
    int dirty;          /* the last match held: its bindings are still set (a failed
                         * one unbinds everything as it backtracks) */
    char *why;          /* ph_pattern_explain: why the match failed (borrowed buffer), or NULL */
    size_t why_size;
    int why_stmt;       /* the statement of the form the reason is about: the deepest one reached */
    int has_variadic;   /* some form has a 'name*' slot (var_n to clear between matches) */
    /* per form, read off the pattern once (ph_match_new): need[0 .. n_need)
     * the statements whose op must make some input of the root (its
     * required arguments bound by another statement), leaves[0 ..
     * n_leaves) the slots no statement binds as an output */
    struct pat_form_pre {
        const int *need, *leaves;
        int n_need, n_leaves;
    } *pre;             /* owned, one per form */
    int *pre_ints;      /* owned: what pre points into */
    /* names the accessors were asked for (ph_match_value, ph_match_int...):
     * a small cache of (name pointer, form, kind) -> slot or variable,
     * each hit confirmed by comparing the text */
    struct pat_name_hit {
        const char *name;
        int form, kind, index;
    } names[8];
};

int pat_is_commutative(ph_op op);
int pat_slot(const pat_form *f, const char *name);
int pat_var(const pat_form *f, const char *name);
/* The alternatives of other domains, by name (pat_op_matches). */
int pat_op_matches_named(const pat_stmt *s, const ph_node *n);
/* 1 if n's op is one of statement s's alternatives. */
static inline int pat_op_matches(const pat_stmt *s, const ph_node *n)
{
    if ((s->op_bits[(unsigned)n->op / 64] >> ((unsigned)n->op % 64)) & 1)
        return 1;
    return s->n_named_ops ? pat_op_matches_named(s, n) : 0;
}
/* The root statement of a form. */
static inline const pat_stmt *pat_root(const pat_form *f) { return &f->stmts[f->n_stmts - 1]; }
/* Match form fi of p with root as the root: 1 matched (m filled), 0 not. */
int pat_match_form(const ph_pattern *p, int fi, ph_node *root, ph_match *m);
/* pat_match_form for a caller that has found the form's opset guards to
 * hold in root's model (pat_guards_hold) since the model last changed. */
int pat_match_form_guards_held(const ph_pattern *p, int fi, ph_node *root, ph_match *m);
/* 1 when every opset guard of f holds in model. */
int pat_guards_hold(const pat_form *f, const ph_model *model);
/* 1 if node n is one of m's matched nodes. */
int pat_match_has(const ph_match *m, const ph_node *n);
/* A literal as a variable value (borrowed). */
void pat_lit_val(const pat_lit *l, pat_val *out);

/* The rewriter of one match (rewrite.c). */
typedef struct pat_bound {
    int slot;           /* of the matched form: a value the callback binds */
    ph_value *v;
} pat_bound;

typedef struct pat_vbound {
    char *name;         /* owned */
    pat_lit lit;        /* owned */
} pat_vbound;

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
    pat_bound *binds;   /* ph_rw_bind */
    size_t n_binds, cap_binds;
    pat_vbound *vbinds; /* ph_rw_bind_int, ... */
    size_t n_vbinds, cap_vbinds;
    char **domains;     /* non-default domains of result ops: imported at commit */
    size_t n_domains, cap_domains;
    int failed; /* 0, or the PH_E* code of the first call that failed */
    /* the first room of created, inits and repl, in the rewriter itself
     * (most rewrites need no more): pat_rw_room.  Last: pat_rewrite sets
     * the fields before them one by one and leaves the rooms as they are. */
    ph_node *created_own[8];
    ph_value *inits_own[4];
    ph_value *repl_own[8];
};

/* Room for `need` elements of `size` bytes in *arr (capacity *cap), whose
 * storage is `own` (the rewriter's, never freed) until it outgrows it.
 * 0 or PH_ENOMEM. */
int pat_rw_room(void **arr, size_t *cap, size_t need, size_t size, void *own);

/* Build with fn (may be NULL) and then the form's result (when it has
 * one), and commit or roll back.  1 committed, 0 nothing changed (declined,
 * refused or over budget: *stop set when over budget), or a negative PH_E*
 * code (nothing changed). */
int pat_rewrite(ph_graph *g, const ph_match *m, ph_rule_rewrite_fn fn, const ph_params *params,
                ph_ctx *ctx, int *stop);
/* ------------------------------------------------ change log (changelog.c) */

struct pat_changelog {
    /* entries base .. n-1 (positions count every entry ever logged) in
     * items[0 .. n-base): NULL holes where a node was logged again or freed */
    ph_node **items;
    size_t base, n, cap;
    size_t sealed;   /* entries below this were taken by a reader */
    size_t lost;     /* 1 + index where an append failed (out of memory), or 0 */
    uint64_t birth;  /* tells this log from one at a reused address */
    ph_node **held;  /* nodes worklists hold (NULL once freed); node->held_pos */
    size_t n_held, cap_held;
    ph_worklist **attached; /* the worklists reading this log */
    size_t n_attached, cap_attached;
};

/* The entry at position i (base <= i < n). */
static inline ph_node *pat_log_at(const struct pat_changelog *log, size_t i) { return log->items[i - log->base]; }
/* The model's change log, made (and observing) on first use; NULL when out
 * of memory (counted). */
struct pat_changelog *pat_log_get(ph_model *m);
/* The held-table index of n (an existing entry, or a new one).  0 or
 * PH_ENOMEM. */
int pat_log_hold(struct pat_changelog *log, ph_node *n, uint32_t *index);
/* A worklist starts or stops reading the log; on release (after a run) the
 * held table is emptied when no attached worklist has anything pending. */
int pat_log_attach(struct pat_changelog *log, ph_worklist *wl);
void pat_log_detach(struct pat_changelog *log, ph_worklist *wl);
void pat_log_release(struct pat_changelog *log);

/* ------------------------------------------------- worklists (driver.c) */

/* The model the worklist read was freed: it forgets it. */
void pat_worklist_detached(ph_worklist *wl);
/* Forget the model read so far: the next run looks at everything. */
void pat_worklist_reset(ph_worklist *wl);
/* 1 when an agenda holds nodes. */
int pat_worklist_pending(const ph_worklist *wl);
/* The log position up to which the worklist has read. */
size_t pat_worklist_pos(const ph_worklist *wl);

/* -------------------------------------------------- rule sets (ruleset.c) */

/* 1 when a form of rs has a root of op `op`. */
int pat_ruleset_anchored(const ph_ruleset *rs, ph_op op);
/* Mark the forms of rs that can match in m (each statement has an op with
 * nodes in m); the greatest depth among them (0: none can). */
int pat_ruleset_reach(ph_ruleset *rs, const ph_model *m);
/* Answers of pat_match_form at one node, shared by the rule sets of a
 * worklist: a form is a pure function of its pattern's text, so two sets
 * holding the same text (one pass's rules given twice, or a form two
 * passes share) match it once a node.  ids[e], for the set's entry e, is
 * its key: one number per distinct (text, form) in the worklist.  A
 * key's answer holds while stamp[key] == now; the caller advances now for
 * each node (or after any change to the graph).  A form no other entry
 * holds has the key PAT_FORM_UNSHARED: matched directly, not remembered. */
#define PAT_FORM_UNSHARED UINT32_MAX
typedef struct pat_form_memo {
    uint64_t *stamp;       /* owned by the caller, one per key */
    unsigned char *answer; /* one per key */
    uint64_t now;
} pat_form_memo;
/* 1 when a form of rs marked possible, anchored on n's op, matches at n
 * (no condition); each form's answer taken from or left in memo. */
int pat_ruleset_may_match_memo(ph_ruleset *rs, ph_node *n, const uint32_t *ids, pat_form_memo *memo);
/* The entries of rs (pairs of a rule and a form, listed under each root
 * op) and, for entry e, its pattern's text and its form. */
size_t pat_ruleset_n_entries(const ph_ruleset *rs);
void pat_ruleset_entry(const ph_ruleset *rs, size_t e, const char **text, uint32_t *form);
/* The entries of rs rooted on op: lo .. hi - 1. */
void pat_ruleset_op_entries(const ph_ruleset *rs, ph_op op, size_t *lo, size_t *hi);
/* Try rs's forms at n and rewrite the first that passes (the larger match
 * winning): 1, 0, or a negative PH_E* code; *stop when the budget ends. */
int pat_ruleset_try(ph_ruleset *rs, ph_node *n, const ph_params *params, ph_ctx *ctx, int *stop);

/* Instantiate the matched form's result (result.c).  0 or a PH_E* code. */
int pat_result_build(ph_rewriter *rw);
/* Free a literal's owned parts. */
void pat_lit_free(pat_lit *l);

#endif
