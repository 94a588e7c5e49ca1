/* sdk/src/infer/infer.h - internals shared by the shape inference files (infer_*.c).
 *
 * During inference a shape is a infer_shape: dtype, rank (-1 unknown) and dims
 * encoded as infer_dim: >= 0 a static dim, INFER_DIM_UNK (-1) unknown, and
 * <= -2 a symbolic dim whose name is interned in the model's symbol table
 * (infer_sym / infer_sym_name), so comparing two symbolic dims is comparing two
 * integers.
 *
 * Partial constants (infer_pc) are small int64 vectors computed from shapes
 * (Shape -> Gather -> Concat -> Reshape ...): each entry is a known number,
 * a symbolic dim, or unknown.  A value's partial constant is kept in its
 * value (ph_value.infer.pc) next to its cached type.
 *
 * The files call downward only, as eval/ does: infer_util.c, the helpers
 * below (symbols, shapes, types, constant inputs); one operator family per
 * file on top of them (infer_const.c, whose shape-constant arithmetic the
 * others use, then infer_elementwise.c, infer_shape.c, infer_nn.c,
 * infer_reduce.c, infer_control.c); infer_table.c, which family infers an
 * op; infer_core.c, the driver and the incremental update.  infer_query.c,
 * the public queries of shape.h, reads what the helpers keep.
 */
#ifndef PASSHOST_SDK_INFER_H
#define PASSHOST_SDK_INFER_H

#include <stdint.h>

#include "internal.h"
#include "passhost/shape.h"

#define INFER_MAXRANK 12
#define INFER_DIM_UNK ((infer_dim)-1)
#define INFER_PC_MAX 64

typedef int64_t infer_dim;

typedef struct infer_shape {
    int dtype; /* PH_DT_UNDEFINED when unknown */
    int rank;  /* -1 when unknown */
    infer_dim d[INFER_MAXRANK];
} infer_shape;

/* Entry kinds of a partial constant. */
enum { INFER_PC_NUM = 0, INFER_PC_SYM = 1, INFER_PC_UNK = 2 };

typedef struct infer_pc {
    int n; /* entries; -1 when the value is not tracked */
    int64_t v[INFER_PC_MAX]; /* the number (NUM) or the infer_dim (SYM) */
    uint8_t k[INFER_PC_MAX];
} infer_pc;

/* A value's stored partial constant (ph_value.infer.pc, owned): one block,
 * k points past v. */
struct infer_partial {
    int n;
    uint8_t *k;
    int64_t v[];
};

/* The distinct types of a model (open addressing; each entry owned). */
typedef struct infer_shape_table {
    infer_shape **slots;
    size_t cap, count;
    /* the last two distinct answers of infer_shape_intern, compared before
     * hashing: a node's output and its reader's are mostly of one type */
    const infer_shape *recent[2];
    const infer_shape *unknown; /* the unknown type's entry once interned (every
                                 * output before its first inference reads it) */
} infer_shape_table;

/* Per-model state (ph_model.infer, owned). */
struct infer_state {
    ir_dlink dirty; /* sentinel of the list of nodes to re-infer */
    int inferred;    /* a full inference has run: track changes */
    ir_map sym_ids; /* name -> id (as pointer) */
    char **sym_names;
    size_t n_syms, cap_syms;
    infer_shape_table shapes; /* what infer_value points to */
    ph_infer_stats stats;
};

/* An interned shape (its first member), with the IR's interned dims of a
 * value of that shape (unknown dims -1) once a value took it: setting a
 * value's type then needs no lookup.  NULL until then, and for a shape with
 * symbolic dims (a value of it has names, set one by one). */
typedef struct infer_shape_entry {
    infer_shape shape;
    const int64_t *ir_dims;
} infer_shape_entry;

/* The interned copy of s (borrowed from st until the model is freed), or
 * NULL when out of memory; an infer_shape_entry's shape. */
const infer_shape *infer_shape_intern(struct infer_state *st, const infer_shape *s);

typedef struct infer_istate infer_istate;

/* The node being inferred. */
typedef struct infer_ictx {
    struct infer_state *st;
    ph_node *n;
    int64_t opset;
    ph_error *err;
    size_t nin, nout;
    infer_shape *in;  /* nin: types of the inputs (unknown when omitted) */
    infer_shape *out; /* nout: filled by the operator (start unknown) */
    infer_pc **out_pc;     /* nout: NULL unless the operator made one */
    infer_pc in_pc_buf[6]; /* scratch for constant inputs */
    /* The driver's inference of a whole graph, for the bodies of If, Loop
     * and Scan (infer_control.c): set by the driver, so no family calls it. */
    int (*infer_graph)(struct infer_state *st, ph_graph *g, ph_error *err);
} infer_ictx;

typedef int (*infer_fn)(infer_ictx *c);

/* ---- symbols */
infer_dim infer_sym(struct infer_state *st, const char *name); /* INFER_DIM_UNK on OOM */
const char *infer_sym_name(const struct infer_state *st, infer_dim d);
static inline int infer_is_sym(infer_dim d) { return d <= -2; }

/* ---- shape helpers (infer_util.c, like everything down to the operator tables) */
void infer_shape_unknown(infer_shape *s);
void infer_shape_set(infer_shape *s, int dtype, int rank, const infer_dim *d);
/* Same dtype, rank and dims (inline: interning compares at every value). */
static inline int infer_shape_eq(const infer_shape *a, const infer_shape *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}
/* Format "float[batch,3,?]" into buf. */
const char *infer_shape_str(const struct infer_state *st, const infer_shape *s, char *buf, size_t size);
/* Product of the dims, -1 if any is not static. */
int64_t infer_shape_numel(const infer_shape *s);
/* Normalize axis a into [0, rank); -1 when out of range. */
int infer_inf_axis(int64_t a, int rank);
/* Bidirectional (numpy) broadcast of a and b into out (shape only). */
int infer_broadcast(infer_ictx *c, const infer_shape *a, const infer_shape *b, infer_shape *out);
/* Merge two dims that must be equal: the more precise one; INFER_DIM_UNK when
 * they differ symbolically; -2 - ... never.  *clash set when both static
 * and different. */
infer_dim infer_dim_merge(infer_dim a, infer_dim b, int *clash);
/* Join (for If branches / loop iterations): equal dims stay, others unknown. */
infer_dim infer_dim_join(infer_dim a, infer_dim b);
/* a * b, a + b on dims (-1 when not computable). */
infer_dim infer_dim_mul(infer_dim a, infer_dim b);
infer_dim infer_dim_add(infer_dim a, infer_dim b);

/* ---- errors: "node 'X' (Op): ..." with PH_EVERIFY */
int infer_fail(infer_ictx *c, const char *fmt, ...) PH_PRINTF(2, 3);

/* ---- inputs and attributes */
static inline const infer_shape *infer_in(infer_ictx *c, size_t i)
{
    static const infer_shape unknown = {0, -1, {0}};
    return i < c->nin ? &c->in[i] : &unknown;
}
static inline int infer_has_in(infer_ictx *c, size_t i)
{
    return i < c->nin && c->n->inputs[i] != NULL;
}
/* The constant tensor of input i (initializer, or Constant node's value). */
const ph_tensor *infer_in_tensor(infer_ictx *c, size_t i);
/* Partial constant of input i (from the producer, or an integer constant
 * tensor); NULL when not tracked.  Valid until the next call. */
const infer_pc *infer_in_pc(infer_ictx *c, size_t i);
/* All entries of input i's partial constant as known numbers into out
 * (max entries); count, or -1 when not fully known. */
int infer_in_ints(infer_ictx *c, size_t i, int64_t *out, int max);
/* Numeric constant input as doubles (any dtype); count or -1. */
int infer_in_doubles(infer_ictx *c, size_t i, double *out, int max);
/* Integer list from attribute or (opset >= from_opset) input in_idx.
 * Returns count, -1 when absent, -2 when present but not known. */
int infer_ints_attr_or_input(infer_ictx *c, const char *attr, size_t in_idx, int64_t from_opset, int64_t *out,
                           int max);
/* The dims named by a shape input (Expand, ConstantOfShape, Reshape,
 * Resize sizes): rank and dims from its shape constant, or only the rank
 * from its static length; rank -1 when not even that is known. */
void infer_dims_from_shape_input(infer_ictx *c, size_t i, infer_shape *out);
/* Output partial constant buffer (marks it present, n = 0). */
infer_pc *infer_out_pc(infer_ictx *c, size_t i);
/* Stored partial constant of a value into pc (n = -1 when none). */
void infer_value_pc(const ph_value *v, infer_pc *pc);

/* ---- the driver (infer_core.c) */
int infer_graph(struct infer_state *st, ph_graph *g, ph_error *err);
/* Queue n (its main-graph ancestor) for re-inference; O(1). */
void infer_touch(ph_node *n);

/* ---- value types */
/* Read a value's type (interned). */
void infer_read_type(struct infer_state *st, ph_value *v, infer_shape *s);
/* Write a value's type as inference result, merging with a declared type.
 * Returns 1 if it changed, 0 if not, <0 on contradiction (err filled). */
int infer_write_type(struct infer_state *st, ph_value *v, const infer_shape *s, const infer_pc *pc,
                   const ph_node *n, ph_error *err);

/* ---- operator tables: one per family file, and the one over them
 * (infer_table.c), NULL for an op no family infers */
infer_fn infer_op_fn(ph_op op);
infer_fn infer_elementwise_fn(ph_op op);
infer_fn infer_shape_fn(ph_op op);
infer_fn infer_nn_fn(ph_op op);
infer_fn infer_reduce_fn(ph_op op);
infer_fn infer_control_fn(ph_op op);
infer_fn infer_const_fn(ph_op op);

/* A dim as a shape-constant entry, and back (a negative number or an
 * unknown entry is INFER_DIM_UNK as a dim). */
static inline void infer_pc_put_dim(infer_pc *pc, int i, infer_dim d)
{
    pc->v[i] = d;
    pc->k[i] = d >= 0 ? INFER_PC_NUM : d <= -2 ? INFER_PC_SYM : INFER_PC_UNK;
}
static inline infer_dim infer_pc_dim(const infer_pc *pc, int i)
{
    if (pc->k[i] == INFER_PC_SYM || (pc->k[i] == INFER_PC_NUM && pc->v[i] >= 0))
        return pc->v[i];
    return INFER_DIM_UNK;
}
/* Shape constant of an integer tensor (rank <= 1, small); 1 if made. */
int infer_pc_from_tensor(const ph_tensor *t, infer_pc *pc);

/* Partial-constant arithmetic shared by the elementwise ops (infer_const.c):
 * computes out for Add/Sub/Mul/Div/Max/Min/Equal/Where/Neg/Abs/Cast... when the
 * inputs are tracked.  0 when nothing could be computed. */
int infer_pc_elementwise(infer_ictx *c);

#endif
