/* sdk/src/infer/infer.h - internals shared by the shape inference files (infer_*.c).
 *
 * During inference a shape is a phi_shape: dtype, rank (-1 unknown) and dims
 * encoded as phi_dim: >= 0 a static dim, PHI_DIM_UNK (-1) unknown, and
 * <= -2 a symbolic dim whose name is interned in the model's symbol table
 * (phi_sym / phi_sym_name), so comparing two symbolic dims is comparing two
 * integers.
 *
 * Partial constants (phi_pc) are small int64 vectors computed from shapes
 * (Shape -> Gather -> Concat -> Reshape ...): each entry is a known number,
 * a symbolic dim, or unknown.  A value's partial constant is kept in its
 * phi_vinfer next to a cached copy of its type.
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

#define PHI_MAXRANK 12
#define PHI_DIM_UNK ((phi_dim)-1)
#define PHI_PC_MAX 64

typedef int64_t phi_dim;

typedef struct phi_shape {
    int dtype; /* PH_DT_UNDEFINED when unknown */
    int rank;  /* -1 when unknown */
    phi_dim d[PHI_MAXRANK];
} phi_shape;

/* Entry kinds of a partial constant. */
enum { PHI_PC_NUM = 0, PHI_PC_SYM = 1, PHI_PC_UNK = 2 };

typedef struct phi_pc {
    int n; /* entries; -1 when the value is not tracked */
    int64_t v[PHI_PC_MAX]; /* the number (NUM) or the phi_dim (SYM) */
    uint8_t k[PHI_PC_MAX];
} phi_pc;

/* What inference keeps on a value (ph_value.infer, owned).  The types are
 * interned (phi_shape_intern): a graph has few distinct types, so a million
 * values share a few hundred of them. */
struct phi_vinfer {
    const phi_shape *shape; /* the type, valid while ph_value.infer_fresh (never NULL then) */
    const phi_shape *decl;  /* the type last set outside inference (model, pass, user), or NULL */
    int by_infer;    /* the value's type was written by inference */
    int pc_n;        /* partial constant entries, -1 none */
    int64_t *pc_v;
    uint8_t *pc_k;
};

/* The distinct types of a model (open addressing; each entry owned). */
typedef struct phi_shape_table {
    phi_shape **slots;
    size_t cap, count;
} phi_shape_table;

/* Per-model state (ph_model.infer, owned). */
struct phi_infer_state {
    phi_dlink dirty; /* sentinel of the list of nodes to re-infer */
    int inferred;    /* a full inference has run: track changes */
    phi_map sym_ids; /* name -> id (as pointer) */
    char **sym_names;
    size_t n_syms, cap_syms;
    phi_shape_table shapes; /* what phi_vinfer points to */
    ph_infer_stats stats;
};

/* The interned copy of s (borrowed from st until the model is freed), or
 * NULL when out of memory. */
const phi_shape *phi_shape_intern(struct phi_infer_state *st, const phi_shape *s);

typedef struct phi_istate phi_istate;

/* The node being inferred. */
typedef struct phi_ictx {
    struct phi_infer_state *st;
    ph_node *n;
    int64_t opset;
    ph_error *err;
    size_t nin, nout;
    phi_shape *in;  /* nin: types of the inputs (unknown when omitted) */
    phi_shape *out; /* nout: filled by the operator (start unknown) */
    phi_pc **out_pc;     /* nout: NULL unless the operator made one */
    phi_pc in_pc_buf[6]; /* scratch for constant inputs */
    /* The driver's inference of a whole graph, for the bodies of If, Loop
     * and Scan (infer_control.c): set by the driver, so no family calls it. */
    int (*infer_graph)(struct phi_infer_state *st, ph_graph *g, ph_error *err);
} phi_ictx;

typedef int (*phi_infer_fn)(phi_ictx *c);

/* ---- symbols */
phi_dim phi_sym(struct phi_infer_state *st, const char *name); /* PHI_DIM_UNK on OOM */
const char *phi_sym_name(const struct phi_infer_state *st, phi_dim d);
static inline int phi_is_sym(phi_dim d) { return d <= -2; }

/* ---- shape helpers (infer_util.c, like everything down to the operator tables) */
void phi_shape_unknown(phi_shape *s);
void phi_shape_set(phi_shape *s, int dtype, int rank, const phi_dim *d);
int phi_shape_eq(const phi_shape *a, const phi_shape *b);
/* Format "float[batch,3,?]" into buf. */
const char *phi_shape_str(const struct phi_infer_state *st, const phi_shape *s, char *buf, size_t size);
/* Product of the dims, -1 if any is not static. */
int64_t phi_shape_numel(const phi_shape *s);
/* Normalize axis a into [0, rank); -1 when out of range. */
int phi_inf_axis(int64_t a, int rank);
/* Bidirectional (numpy) broadcast of a and b into out (shape only). */
int phi_broadcast(phi_ictx *c, const phi_shape *a, const phi_shape *b, phi_shape *out);
/* Merge two dims that must be equal: the more precise one; PHI_DIM_UNK when
 * they differ symbolically; -2 - ... never.  *clash set when both static
 * and different. */
phi_dim phi_dim_merge(phi_dim a, phi_dim b, int *clash);
/* Join (for If branches / loop iterations): equal dims stay, others unknown. */
phi_dim phi_dim_join(phi_dim a, phi_dim b);
/* a * b, a + b on dims (-1 when not computable). */
phi_dim phi_dim_mul(phi_dim a, phi_dim b);
phi_dim phi_dim_add(phi_dim a, phi_dim b);

/* ---- errors: "node 'X' (Op): ..." with PH_EVERIFY */
int phi_fail(phi_ictx *c, const char *fmt, ...) PH_PRINTF(2, 3);

/* ---- inputs and attributes */
static inline const phi_shape *phi_in(phi_ictx *c, size_t i)
{
    static const phi_shape unknown = {0, -1, {0}};
    return i < c->nin ? &c->in[i] : &unknown;
}
static inline int phi_has_in(phi_ictx *c, size_t i)
{
    return i < c->nin && c->n->inputs[i] != NULL;
}
/* The constant tensor of input i (initializer, or Constant node's value). */
const ph_tensor *phi_in_tensor(phi_ictx *c, size_t i);
/* Partial constant of input i (from the producer, or an integer constant
 * tensor); NULL when not tracked.  Valid until the next call. */
const phi_pc *phi_in_pc(phi_ictx *c, size_t i);
/* All entries of input i's partial constant as known numbers into out
 * (max entries); count, or -1 when not fully known. */
int phi_in_ints(phi_ictx *c, size_t i, int64_t *out, int max);
/* Numeric constant input as doubles (any dtype); count or -1. */
int phi_in_doubles(phi_ictx *c, size_t i, double *out, int max);
/* Integer list from attribute or (opset >= from_opset) input in_idx.
 * Returns count, -1 when absent, -2 when present but not known. */
int phi_ints_attr_or_input(phi_ictx *c, const char *attr, size_t in_idx, int64_t from_opset, int64_t *out,
                           int max);
/* The dims named by a shape input (Expand, ConstantOfShape, Reshape,
 * Resize sizes): rank and dims from its shape constant, or only the rank
 * from its static length; rank -1 when not even that is known. */
void phi_dims_from_shape_input(phi_ictx *c, size_t i, phi_shape *out);
/* Output partial constant buffer (marks it present, n = 0). */
phi_pc *phi_out_pc(phi_ictx *c, size_t i);
/* Stored partial constant of a value into pc (n = -1 when none). */
void phi_value_pc(const ph_value *v, phi_pc *pc);

/* ---- the driver (infer_core.c) */
int phi_infer_graph(struct phi_infer_state *st, ph_graph *g, ph_error *err);
/* Queue n (its main-graph ancestor) for re-inference; O(1). */
void phi_infer_touch(ph_node *n);

/* ---- value types */
/* Read a value's type (interned). */
void phi_read_type(struct phi_infer_state *st, ph_value *v, phi_shape *s);
/* Write a value's type as inference result, merging with a declared type.
 * Returns 1 if it changed, 0 if not, <0 on contradiction (err filled). */
int phi_write_type(struct phi_infer_state *st, ph_value *v, const phi_shape *s, const phi_pc *pc,
                   const ph_node *n, ph_error *err);

/* ---- operator tables: one per family file, and the one over them
 * (infer_table.c), NULL for an op no family infers */
phi_infer_fn phi_infer_op_fn(ph_op op);
phi_infer_fn phi_infer_elementwise_fn(ph_op op);
phi_infer_fn phi_infer_shape_fn(ph_op op);
phi_infer_fn phi_infer_nn_fn(ph_op op);
phi_infer_fn phi_infer_reduce_fn(ph_op op);
phi_infer_fn phi_infer_control_fn(ph_op op);
phi_infer_fn phi_infer_const_fn(ph_op op);

/* A dim as a shape-constant entry, and back (a negative number or an
 * unknown entry is PHI_DIM_UNK as a dim). */
static inline void phi_pc_put_dim(phi_pc *pc, int i, phi_dim d)
{
    pc->v[i] = d;
    pc->k[i] = d >= 0 ? PHI_PC_NUM : d <= -2 ? PHI_PC_SYM : PHI_PC_UNK;
}
static inline phi_dim phi_pc_dim(const phi_pc *pc, int i)
{
    if (pc->k[i] == PHI_PC_SYM || (pc->k[i] == PHI_PC_NUM && pc->v[i] >= 0))
        return pc->v[i];
    return PHI_DIM_UNK;
}
/* Shape constant of an integer tensor (rank <= 1, small); 1 if made. */
int phi_pc_from_tensor(const ph_tensor *t, phi_pc *pc);

/* Partial-constant arithmetic shared by the elementwise ops (infer_const.c):
 * computes out for Add/Sub/Mul/Div/Max/Min/Equal/Where/Neg/Abs/Cast... when the
 * inputs are tracked.  0 when nothing could be computed. */
int phi_pc_elementwise(phi_ictx *c);

#endif
