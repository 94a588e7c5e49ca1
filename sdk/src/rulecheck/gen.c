/* sdk/src/rulecheck/gen.c - build a small model that one form of a pattern
 * matches (or, for a negative instance, nearly matches).
 *
 * The form's statements are built producers first.  A leaf (a name no
 * statement binds) becomes a graph input, or an initializer when a
 * constraint wants a constant; its dtype, rank, shape and values come from
 * the constraints the pattern puts on it (const, scalar, rank, shape,
 * dtypes, perchannel, fits, value tests) and from what the operator it
 * feeds needs there (a Conv weight's channels, a BatchNormalization's
 * per-channel operands, a Reshape's shape, Slice and Pad operands, ...;
 * see `role`).  Attributes come from what the operator needs (a
 * Transpose's perm, a Cast's to, a Concat's axis, ...) and then from the
 * pattern's attribute tests (equal, in, comparisons, absent, defaults,
 * 'all').  Shape inference runs after each node: an instance it refuses
 * is dropped.  Every choice is drawn from the spec's seed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rulecheck/rulecheck.h"
#include "passhost/constant.h"
#include "passhost/shape.h"

#define RANK_MAX 6

typedef struct gen {
    const rc_spec *spec;
    const pat_form *f;
    uint64_t rng;
    ph_model *m;
    ph_graph *g;
    ph_value **sv;   /* per slot */
    int T;           /* the float dtype of the instance */
    int outside;     /* RC_VALUE_OUTSIDE: slot whose value test is broken, or -1 */
    int failed;      /* out of memory */
    int near;        /* a constant drawn inside a value test's tolerance */
} gen;

static uint64_t rnd(gen *G)
{
    uint64_t z = (G->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int rint_(gen *G, int lo, int hi) { return lo + (int)(rnd(G) % (uint64_t)(hi - lo + 1)); }
static double runi(gen *G) { return (double)(rnd(G) >> 11) * 0x1p-53; }
static int chance(gen *G, int pct) { return rint_(G, 0, 99) < pct; }
static int64_t rdim(gen *G) { return rint_(G, 1, G->spec->max_dim > 0 ? G->spec->max_dim : 4); }

/* ------------------------------------------------------------ leaf summary */

typedef struct leaf_info {
    int is_const, scalar, rank, has_shape, perchannel, value, value_all, scalar_var;
    int64_t shape[RANK_MAX], axis;
    uint32_t dtypes;
    double v, tol;
    int rel;
    int fits;        /* slot, or -1 */
} leaf_info;

static void leaf_summary(const pat_form *f, int slot, leaf_info *li)
{
    memset(li, 0, sizeof *li);
    li->rank = -1;
    li->fits = -1;
    for (int s = 0; s < f->n_stmts; s++)
        for (int a = 0; a < f->stmts[s].n_args; a++) {
            const pat_arg *arg = &f->stmts[s].args[a];
            if (arg->slot != slot)
                continue;
            for (int c = 0; c < arg->n_cons; c++) {
                const pat_cons *k = &arg->cons[c];
                switch (k->kind) {
                case PAT_CONST:
                case PAT_INTS: li->is_const = 1; break;
                case PAT_SCALAR: li->is_const = li->scalar = 1; break;
                case PAT_RANK: li->rank = (int)k->n; break;
                case PAT_DTYPE: li->dtypes = li->dtypes ? li->dtypes & k->dtypes : k->dtypes; break;
                case PAT_SHAPE:
                    if (k->n <= RANK_MAX) {
                        li->has_shape = 1;
                        li->rank = (int)k->n;
                        memcpy(li->shape, k->dims, (size_t)k->n * sizeof *k->dims);
                    }
                    break;
                case PAT_PERCHANNEL: li->is_const = li->perchannel = 1; li->axis = k->n; break;
                case PAT_VALUE:
                    li->is_const = li->value = 1;
                    li->value_all = k->n == 1;
                    li->scalar |= k->n == 0;
                    li->v = k->v;
                    li->tol = k->tol;
                    li->rel = k->rel;
                    break;
                case PAT_FITS: li->fits = k->ref; break;
                case PAT_SCALAR_VAR: li->is_const = li->scalar = li->scalar_var = 1; break;
                default: break;
                }
            }
        }
}

/* ------------------------------------------------------------ tensors */

static ph_value *add_const(gen *G, const char *name, int dt, int rank, const int64_t *dims, const double *vals)
{
    ph_tensor *t = ph_tensor_from_f64(dt, (size_t)rank, dims, vals);
    ph_value *v = t ? ph_graph_add_initializer(G->g, name, t) : NULL;
    if (!v)
        G->failed = 1;
    return v;
}

static ph_value *add_ints(gen *G, const char *name, size_t n, const int64_t *vals)
{
    double d[16];
    for (size_t i = 0; i < n && i < 16; i++)
        d[i] = (double)vals[i];
    int64_t len = (int64_t)n;
    return add_const(G, name, PH_DT_INT64, 1, &len, d);
}

static int64_t numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

/* Random values: uniform in [-1, 1) away from 0 (a divisor, a scale),
 * positive for a variance. */
static ph_value *add_random(gen *G, const char *name, int dt, int rank, const int64_t *dims, int positive)
{
    int64_t n = numel(rank, dims);
    double *vals = malloc((size_t)(n ? n : 1) * sizeof *vals);
    if (!vals) {
        G->failed = 1;
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        double x = 0.25 + 0.75 * runi(G);
        if (dt == PH_DT_BOOL)
            x = (double)rint_(G, 0, 1);
        else if (!ph_dtype_is_float(dt))
            x = (double)rint_(G, positive ? 1 : -2, 3);
        else if (!positive && chance(G, 50))
            x = -x;
        vals[i] = x;
    }
    ph_value *v = add_const(G, name, dt, rank, dims, vals);
    free(vals);
    return v;
}

/* A constant that passes (or, outside, fails) a value test. */
static ph_value *add_valued(gen *G, const char *name, int dt, int rank, const int64_t *dims, const leaf_info *li,
                            int outside)
{
    int64_t n = numel(rank, dims);
    double *vals = malloc((size_t)(n ? n : 1) * sizeof *vals);
    if (!vals) {
        G->failed = 1;
        return NULL;
    }
    double eff = li->tol < 0 ? 0 : li->rel && li->v != 0 ? li->tol * fabs(li->v) : li->tol;
    for (int64_t i = 0; i < n; i++) {
        double x = li->v;
        if (eff > 0 && chance(G, 50)) {
            double dx = (runi(G) - 0.5) * eff; /* inside the tolerance */
            if (!G->spec->values_exact && dx != 0) {
                x += dx;
                G->near = 1;
            }
        }
        vals[i] = x;
    }
    if (outside && n > 0) {
        int64_t k = rint_(G, 0, (int)(n - 1));
        vals[k] = eff > 0 ? li->v + 8 * eff * (chance(G, 50) ? 1 : -1) : li->v + (li->v != 0 ? 0.5 * li->v : 0.5);
    }
    ph_value *v = add_const(G, name, dt, rank, dims, vals);
    free(vals);
    return v;
}

/* An op none of the rule's forms names (spec->avoid), for the nodes the
 * generator adds around a match; NULL when all are taken. */
static const char *outside_op(const gen *G)
{
    static const char *ops[] = {"Neg", "Abs", "Softsign", "Identity", "Relu"};
    for (int i = 0; i < 5; i++) {
        char key[32];
        snprintf(key, sizeof key, " %s ", ops[i]);
        if (!G->spec->avoid || !strstr(G->spec->avoid, key))
            return ops[i];
    }
    return NULL;
}

/* A graph input; half the time read through a node outside the match
 * (so the leaf is a value some node makes, as it mostly is in a model:
 * a rule that replaces its root by a leaf then has a node to rename). */
static ph_value *add_input(gen *G, const char *name, int dt, int rank, const int64_t *dims)
{
    ph_value *v = ph_graph_add_input(G->g, ph_graph_unique_name(G->g, name), dt, rank, dims);
    if (!v) {
        G->failed = 1;
        return NULL;
    }
    const char *op = outside_op(G);
    if (op && ph_dtype_is_float(dt) && chance(G, 50)) {
        ph_node *n = ph_node_create(G->g, NULL, op, 1, &v, 1);
        if (!n || ph_value_copy_type(ph_node_output(n, 0), v) < 0) { /* elementwise: v's type */
            G->failed = 1;
            return NULL;
        }
        return ph_node_output(n, 0);
    }
    return v;
}

/* ------------------------------------------------------------ roles */

/* What an operator reads at input `idx`. */
enum role {
    R_DATA = 0,       /* a tensor of T, shaped like input 0 or broadcast to it */
    R_SHAPE,          /* Reshape / Expand: int64 shape */
    R_AXES,           /* Squeeze / Unsqueeze / reductions: int64 axes */
    R_SLICE,          /* Slice operand idx (1 starts .. 4 steps) */
    R_PADS,           /* Pad: int64 pads */
    R_PAD_VALUE,      /* Pad's value, Clip's bounds: a scalar of T */
    R_PAD_AXES,
    R_INDICES,        /* Gather: int64 indices */
    R_SPLIT,          /* Split: int64 sizes */
    R_WEIGHT,         /* Conv: [M, C/group, k...] */
    R_CONV_BIAS,      /* Conv: [M] */
    R_CHANNEL,        /* BatchNormalization: [C] */
    R_VARIANCE,       /* BatchNormalization: [C], positive */
    R_MATMUL_B,       /* MatMul / Gemm B */
    R_GEMM_C,         /* Gemm C */
    R_RATIO,          /* Dropout ratio */
    R_TRAINING,       /* Dropout training_mode */
    R_QSCALE,         /* Quantize/DequantizeLinear scale */
    R_QZERO,          /* their zero point */
    R_ROI,            /* Resize roi: omitted */
    R_SCALES,         /* Resize scales */
    R_SIZES,          /* Resize sizes: omitted */
    R_LN_PARAM,       /* LayerNormalization scale / bias */
    R_CAST_LIKE       /* CastLike's target */
};

static int op_is(const char *op, const char *name) { return strcmp(op, name) == 0; }

static int role(const char *op, int idx)
{
    if (idx == 0)
        return R_DATA;
    if (op_is(op, "Reshape") || op_is(op, "Expand"))
        return R_SHAPE;
    if (op_is(op, "Squeeze") || op_is(op, "Unsqueeze") || !strncmp(op, "Reduce", 6))
        return R_AXES; /* a reduction's axes are an input from opset 18 only: see make_leaf */
    if (op_is(op, "Slice"))
        return R_SLICE;
    if (op_is(op, "Pad"))
        return idx == 1 ? R_PADS : idx == 2 ? R_PAD_VALUE : R_PAD_AXES;
    if (op_is(op, "Clip"))
        return R_PAD_VALUE;
    if (op_is(op, "Gather"))
        return R_INDICES;
    if (op_is(op, "Split"))
        return R_SPLIT;
    if (op_is(op, "Conv"))
        return idx == 1 ? R_WEIGHT : R_CONV_BIAS;
    if (op_is(op, "BatchNormalization"))
        return idx == 4 ? R_VARIANCE : R_CHANNEL;
    if (op_is(op, "MatMul") || op_is(op, "Gemm"))
        return idx == 1 ? R_MATMUL_B : R_GEMM_C;
    if (op_is(op, "Dropout"))
        return idx == 1 ? R_RATIO : R_TRAINING;
    if (op_is(op, "QuantizeLinear") || op_is(op, "DequantizeLinear"))
        return idx == 1 ? R_QSCALE : R_QZERO;
    if (op_is(op, "Resize"))
        return idx == 1 ? R_ROI : idx == 2 ? R_SCALES : R_SIZES;
    if (op_is(op, "LayerNormalization"))
        return R_LN_PARAM;
    if (op_is(op, "CastLike"))
        return R_CAST_LIKE;
    return R_DATA;
}

/* The rank a fresh input 0 of op gets when the pattern does not say. */
static int default_rank(gen *G, const char *op)
{
    if (op_is(op, "Conv") || op_is(op, "BatchNormalization") || strstr(op, "Pool") || op_is(op, "DepthToSpace") ||
        op_is(op, "SpaceToDepth") || op_is(op, "Resize") || op_is(op, "InstanceNormalization"))
        return 4;
    if (op_is(op, "Gemm") || op_is(op, "Flatten"))
        return 2;
    if (op_is(op, "MatMul"))
        return rint_(G, 2, 3);
    return rint_(G, 1, 4);
}

/* The shape of a tensor feeding input 0 of op, where the op needs one. */
static void fix_input0(gen *G, const char *op, int rank, int64_t *d, int n_outs)
{
    if ((op_is(op, "DepthToSpace")) && rank == 4)
        d[1] = 4 * rint_(G, 1, 2);
    if (op_is(op, "SpaceToDepth") && rank == 4) {
        d[2] = 2 * rint_(G, 1, 2);
        d[3] = 2 * rint_(G, 1, 2);
    }
    if (op_is(op, "Squeeze") && rank > 0)
        d[rint_(G, 0, rank - 1)] = 1;
    if (op_is(op, "Split") && rank > 0)
        d[0] = (int64_t)(n_outs > 1 ? n_outs : 2) * rint_(G, 1, 2);
    if (op_is(op, "Reshape") && rank == 4 && chance(G, 50)) {
        d[1] = 4 * rint_(G, 1, 2);
        d[2] = 2 * rint_(G, 1, 2);
        d[3] = 2 * rint_(G, 1, 2);
    }
    if (op_is(op, "Conv") && rank >= 3)
        for (int i = 2; i < rank; i++)
            d[i] = rint_(G, 2, 5);
}

/* A shape broadcast to (or fitting) rank/dims: a scalar, a suffix, or dims
 * with some set to 1. */
static int broadcast_shape(gen *G, int rank, const int64_t *dims, int64_t *out)
{
    int pick = rint_(G, 0, 3);
    if (pick == 0 || rank == 0)
        return 0;
    int r = pick == 1 ? rint_(G, 1, rank) : rank;
    for (int i = 0; i < r; i++) {
        int64_t d = dims[rank - r + i];
        out[i] = pick == 3 && chance(G, 50) ? 1 : d;
    }
    return r;
}

/* The known shape of v into dims; its rank, or -1. */
static int shape_of(const ph_value *v, int64_t *dims)
{
    int r = v ? ph_value_rank(v) : -1;
    if (r < 0 || r > RANK_MAX)
        return -1;
    for (int i = 0; i < r; i++) {
        dims[i] = ph_value_dim(v, i);
        if (dims[i] < 0)
            return -1;
    }
    return r;
}

static int pick_dtype(gen *G, uint32_t mask)
{
    if (!mask || (mask >> G->T) & 1)
        return G->T;
    for (int dt = 1; dt < 32; dt++)
        if ((mask >> dt) & 1)
            return dt;
    return G->T;
}

/* Make leaf `slot` feeding input idx of a node of op whose input 0 is x0
 * (NULL when input 0 is this leaf).  `node` is NULL: the node is made
 * after its inputs; attributes it will have are not known yet. */
static ph_value *make_leaf(gen *G, int slot, const char *name, const char *op, int idx, const ph_value *x0,
                           int n_outs)
{
    const pat_form *f = G->f;
    leaf_info li;
    if (slot >= 0)
        leaf_summary(f, slot, &li);
    else {
        memset(&li, 0, sizeof li);
        li.rank = -1;
        li.fits = -1;
    }
    int64_t xd[RANK_MAX] = {0}, d[RANK_MAX];
    int xr = x0 ? shape_of(x0, xd) : -1;
    int dt = pick_dtype(G, li.dtypes);
    int rl = role(op, idx);
    int rank = 0;
    int outside = slot >= 0 && slot == G->outside;

    if (li.scalar) {
        rank = chance(G, 50) ? 0 : 1;
        d[0] = 1;
        if (li.value)
            return add_valued(G, name, dt, rank, d, &li, outside);
        return add_random(G, name, dt, rank, d, 0);
    }
    switch (rl) {
    case R_DATA:
    case R_CAST_LIKE:
        if (li.has_shape) {
            rank = li.rank;
            for (int i = 0; i < rank; i++)
                d[i] = li.shape[i] == PAT_ANY_DIM ? rdim(G) : li.shape[i];
        } else if (li.fits >= 0) {
            int64_t fd[RANK_MAX];
            int fr = shape_of(G->sv[li.fits], fd);
            rank = fr > 0 ? broadcast_shape(G, fr, fd, d) : 0;
        } else if (li.perchannel) {
            rank = xr > 0 ? xr : 4;
            int64_t ax = li.axis < 0 ? li.axis + rank : li.axis;
            for (int i = 0; i < rank; i++)
                d[i] = 1;
            if (ax >= 0 && ax < rank)
                d[ax] = xr > 0 ? xd[ax] : rdim(G);
            if (chance(G, 50) && ax > 0) { /* drop leading ones */
                memmove(d, d + ax, (size_t)(rank - ax) * sizeof *d);
                rank -= (int)ax;
            }
        } else if (xr >= 0) {
            if (li.rank >= 0 && li.rank != xr) {
                rank = li.rank;
                for (int i = 0; i < rank; i++)
                    d[i] = i < xr ? xd[xr - rank + i >= 0 ? xr - rank + i : 0] : rdim(G);
                if (rank > xr)
                    for (int i = 0; i < rank; i++)
                        d[i] = i < rank - xr ? 1 : xd[i - (rank - xr)];
            } else if (li.is_const || chance(G, 40)) {
                rank = broadcast_shape(G, xr, xd, d);
            } else {
                rank = xr;
                memcpy(d, xd, (size_t)xr * sizeof *d);
            }
        } else {
            rank = li.rank >= 0 ? li.rank : default_rank(G, op);
            if (rank > RANK_MAX)
                return NULL;
            for (int i = 0; i < rank; i++)
                d[i] = rdim(G);
            fix_input0(G, op, rank, d, n_outs);
        }
        if (rl == R_CAST_LIKE)
            dt = chance(G, 50) ? G->T : PH_DT_DOUBLE;
        if (li.value)
            return add_valued(G, name, dt, rank, d, &li, outside);
        if (li.is_const || li.scalar_var)
            return add_random(G, name, dt, rank, d, 0);
        return add_input(G, name, dt, rank, d);
    case R_SHAPE: {
        if (xr < 0)
            return NULL;
        int64_t s[RANK_MAX + 1];
        size_t n = 0;
        int pick = rint_(G, 0, 3);
        if (op_is(op, "Expand")) {
            for (int i = 0; i < xr; i++)
                s[n++] = xd[i];
            if (pick == 0 && xr < RANK_MAX) {
                memmove(s + 1, s, n * sizeof *s);
                s[0] = 2;
                n++;
            }
        } else if (xr == 4 && chance(G, 40) && xd[1] % 2 == 0) {
            /* split the channels (a channel shuffle, DepthToSpace's DCR
             * and CRD forms) or the spatial dims (SpaceToDepth's) */
            int six = xd[1] % 4 == 0 && chance(G, 60);
            int spatial = six && xd[2] % 2 == 0 && xd[3] % 2 == 0 && chance(G, 50);
            s[n++] = xd[0];
            if (spatial) {
                int64_t tail[] = {xd[1], xd[2] / 2, 2, xd[3] / 2, 2};
                memcpy(s + n, tail, sizeof tail);
                n += 5;
            } else {
                s[n++] = 2;
                if (six)
                    s[n++] = 2;
                s[n++] = xd[1] / (six ? 4 : 2);
                s[n++] = xd[2];
                s[n++] = xd[3];
            }
        } else if (xr >= 5 && chance(G, 60)) {
            /* back to rank 4: merge 1..xr-3, or pairs (2,3) and (4,5) */
            s[n++] = xd[0];
            if (xr == 6 && chance(G, 50)) {
                s[n++] = xd[1];
                s[n++] = xd[2] * xd[3];
                s[n++] = xd[4] * xd[5];
            } else {
                int64_t m = 1;
                for (int i = 1; i <= xr - 3; i++)
                    m *= xd[i];
                s[n++] = m;
                s[n++] = xd[xr - 2];
                s[n++] = xd[xr - 1];
            }
        } else if (pick == 0) {
            s[n++] = -1;
        } else if (pick == 1 && xr >= 1) {
            s[n++] = xd[0];
            s[n++] = -1;
        } else if (pick == 2) {
            for (int i = 0; i < xr; i++)
                s[n++] = chance(G, 30) ? 0 : xd[i];
        } else {
            for (int i = xr - 1; i >= 0; i--)
                s[n++] = xd[i];
        }
        return add_ints(G, name, n, s);
    }
    case R_AXES: {
        if (xr < 0 || (!strncmp(op, "Reduce", 6) && ph_model_opset(G->m, "") < 18))
            return NULL;
        int64_t ax[RANK_MAX];
        size_t n = 0;
        if (op_is(op, "Squeeze")) {
            for (int i = 0; i < xr; i++)
                if (xd[i] == 1)
                    ax[n++] = chance(G, 30) ? i - xr : i;
        } else if (op_is(op, "Unsqueeze")) {
            ax[n++] = rint_(G, 0, xr);
        } else {
            for (int i = 0; i < xr; i++)
                if (chance(G, 50))
                    ax[n++] = i;
            if (!n && xr)
                ax[n++] = xr - 1;
        }
        return n ? add_ints(G, name, n, ax) : NULL;
    }
    case R_SLICE: {
        if (xr < 1)
            return NULL;
        /* starts, ends, axes, steps of one axis, drawn from the rng's
         * state at input 1 so the four agree */
        uint64_t keep = G->rng;
        G->rng = G->spec->seed ^ 0x51ce;
        int ax = rint_(G, 0, xr - 1);
        int64_t dim = xd[ax];
        int64_t st = rint_(G, 0, (int)dim - 1), en = rint_(G, (int)st + 1, (int)dim);
        if (chance(G, 25)) {
            st = 0;
            en = INT64_MAX;
        }
        G->rng = keep;
        int64_t v = idx == 1 ? st : idx == 2 ? en : idx == 3 ? ax : 1;
        return add_ints(G, name, 1, &v);
    }
    case R_PADS: {
        if (xr < 0)
            return NULL;
        int64_t p[2 * RANK_MAX];
        int zero = chance(G, 50);
        for (int i = 0; i < 2 * xr; i++)
            p[i] = zero || i % xr < xr - 2 ? 0 : rint_(G, 0, 1);
        return add_ints(G, name, (size_t)(2 * xr), p);
    }
    case R_PAD_VALUE:
        rank = 0;
        if (op_is(op, "Clip")) {
            double b = idx == 1 ? -0.5 : 0.5;
            return add_const(G, name, dt, 0, d, &b);
        }
        return add_random(G, name, dt, 0, d, 0);
    case R_PAD_AXES:
        return NULL;
    case R_INDICES: {
        if (xr < 1)
            return NULL;
        int n = rint_(G, 1, 3);
        int64_t ix[3];
        for (int i = 0; i < n; i++)
            ix[i] = rint_(G, 0, (int)xd[0] - 1);
        if (chance(G, 30)) {
            double v = (double)ix[0];
            return add_const(G, name, PH_DT_INT64, 0, d, &v);
        }
        return add_ints(G, name, (size_t)n, ix);
    }
    case R_SPLIT: {
        if (xr < 1)
            return NULL;
        int k = n_outs > 1 ? n_outs : 2;
        if (xd[0] < k)
            return NULL;
        int64_t s[8];
        int64_t left = xd[0];
        for (int i = 0; i < k - 1 && i < 7; i++) {
            s[i] = rint_(G, 1, (int)(left - (k - 1 - i)));
            left -= s[i];
        }
        s[k - 1] = left;
        return add_ints(G, name, (size_t)k, s);
    }
    case R_WEIGHT: {
        if (xr < 3)
            return NULL;
        rank = li.rank >= 0 ? li.rank : xr;
        d[0] = rint_(G, 1, 4);
        d[1] = xd[1];
        for (int i = 2; i < rank; i++)
            d[i] = chance(G, 50) ? 1 : rint_(G, 1, (int)(xd[i] < 3 ? xd[i] : 3));
        return li.is_const || chance(G, 80) ? add_random(G, name, dt, rank, d, 0) : add_input(G, name, dt, rank, d);
    }
    case R_CONV_BIAS:
    case R_CHANNEL:
    case R_VARIANCE:
    case R_LN_PARAM: {
        if (xr < 1)
            return NULL;
        rank = 1;
        if (rl == R_CONV_BIAS) {
            /* the weight is input 1: its first dim */
            return NULL;
        }
        if (rl == R_LN_PARAM)
            d[0] = xd[xr - 1];
        else
            d[0] = xr > 1 ? xd[1] : xd[0];
        if (li.value)
            return add_valued(G, name, dt, rank, d, &li, outside);
        if (li.is_const || rl == R_VARIANCE || chance(G, 80))
            return add_random(G, name, dt, rank, d, rl == R_VARIANCE);
        return add_input(G, name, dt, rank, d);
    }
    case R_MATMUL_B: {
        if (xr < 1)
            return NULL;
        rank = 2;
        d[0] = xd[xr - 1];
        d[1] = rdim(G);
        if (op_is(op, "Gemm") && xr == 2)
            d[0] = xd[1];
        return li.is_const || chance(G, 50) ? add_random(G, name, dt, rank, d, 0) : add_input(G, name, dt, rank, d);
    }
    case R_GEMM_C:
        return NULL; /* made with the node: it needs B's shape */
    case R_RATIO: {
        double r = 0.5;
        return add_const(G, name, G->T, 0, d, &r);
    }
    case R_TRAINING: {
        double t = 0;
        return add_const(G, name, PH_DT_BOOL, 0, d, &t);
    }
    case R_QSCALE: {
        double s = 0.0078125 * rint_(G, 1, 8);
        return add_const(G, name, G->T, 0, d, &s);
    }
    case R_QZERO: {
        double z = rint_(G, 0, 8);
        return add_const(G, name, PH_DT_UINT8, 0, d, &z);
    }
    case R_SCALES: {
        if (xr < 1)
            return NULL;
        double s[RANK_MAX];
        int64_t n = xr;
        for (int i = 0; i < xr; i++)
            s[i] = i < 2 ? 1 : rint_(G, 1, 2);
        return add_const(G, name, PH_DT_FLOAT, 1, &n, s);
    }
    default:
        return NULL;
    }
}

/* ------------------------------------------------------------ attributes */

static void set_lit(ph_node *n, const char *key, const pat_lit *l)
{
    switch (l->kind) {
    case PAT_LIT_INT:
        if (ph_node_attr_type(n, key) == PH_ATTR_FLOAT)
            ph_node_set_attr_float(n, key, (float)l->i);
        else
            ph_node_set_attr_int(n, key, l->i);
        break;
    case PAT_LIT_FLOAT: ph_node_set_attr_float(n, key, (float)l->f); break;
    case PAT_LIT_STRING: ph_node_set_attr_string(n, key, l->s); break;
    case PAT_LIT_INTS: ph_node_set_attr_ints(n, key, l->n, l->ints); break;
    case PAT_LIT_FLOATS: {
        float fl[64];
        size_t k = l->n < 64 ? l->n : 64;
        for (size_t i = 0; i < k; i++)
            fl[i] = (float)l->floats[i];
        ph_node_set_attr_floats(n, key, k, fl);
        break;
    }
    default: break;
    }
}

/* What the operator needs before the pattern's tests. */
static void op_attrs(gen *G, ph_node *n, const char *op)
{
    int64_t xd[RANK_MAX];
    int xr = shape_of(ph_node_input(n, 0), xd);
    if (op_is(op, "Transpose") && xr > 0) {
        int64_t perm[RANK_MAX];
        for (int i = 0; i < xr; i++)
            perm[i] = i;
        if (!chance(G, 30))
            for (int i = xr - 1; i > 0; i--) {
                int j = rint_(G, 0, i);
                int64_t t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
        ph_node_set_attr_ints(n, "perm", (size_t)xr, perm);
    } else if (op_is(op, "Cast")) {
        static const int to[] = {PH_DT_FLOAT, PH_DT_DOUBLE, PH_DT_FLOAT16, PH_DT_INT32, PH_DT_INT64};
        ph_node_set_attr_int(n, "to", chance(G, 30) ? G->T : to[rint_(G, 0, 4)]);
    } else if (op_is(op, "Concat") && xr > 0) {
        ph_node_set_attr_int(n, "axis", rint_(G, 0, xr - 1));
    } else if (op_is(op, "DepthToSpace") || op_is(op, "SpaceToDepth")) {
        ph_node_set_attr_int(n, "blocksize", 2);
        if (op_is(op, "DepthToSpace") && chance(G, 50))
            ph_node_set_attr_string(n, "mode", chance(G, 50) ? "DCR" : "CRD");
    } else if ((op_is(op, "AveragePool") || op_is(op, "MaxPool")) && xr > 2) {
        int64_t k[RANK_MAX];
        int one = chance(G, 60);
        for (int i = 0; i < xr - 2; i++)
            k[i] = one ? 1 : 2;
        ph_node_set_attr_ints(n, "kernel_shape", (size_t)(xr - 2), k);
    } else if (op_is(op, "Flatten") && xr >= 0 && chance(G, 50)) {
        ph_node_set_attr_int(n, "axis", rint_(G, 0, xr));
    } else if (!strncmp(op, "Reduce", 6) && xr > 0 && ph_model_opset(G->m, "") < 18) {
        int64_t ax[RANK_MAX];
        size_t k = 0;
        for (int i = 0; i < xr; i++)
            if (chance(G, 50))
                ax[k++] = i;
        if (k && chance(G, 80))
            ph_node_set_attr_ints(n, "axes", k, ax);
        if (chance(G, 50))
            ph_node_set_attr_int(n, "keepdims", rint_(G, 0, 1));
    } else if (op_is(op, "Einsum") && xr > 0 && xr <= 4) {
        /* inputs of one shape: a transpose, a reduction, a product */
        char in[5] = "abcd", eq[64];
        in[xr] = 0;
        size_t k = ph_node_input_count(n);
        int kind = rint_(G, 0, 2);
        size_t p = 0;
        for (size_t i = 0; i < k; i++)
            p += (size_t)snprintf(eq + p, sizeof eq - p, "%s%s", i ? "," : "", in);
        if (kind == 0) { /* reversed axes */
            char out[5];
            for (int i = 0; i < xr; i++)
                out[i] = in[xr - 1 - i];
            out[xr] = 0;
            snprintf(eq + p, sizeof eq - p, "->%s", out);
        } else if (kind == 1) {
            snprintf(eq + p, sizeof eq - p, "->%c", in[0]);
        } else {
            snprintf(eq + p, sizeof eq - p, "->%s", in);
        }
        ph_node_set_attr_string(n, "equation", eq);
    } else if (op_is(op, "LeakyRelu") && chance(G, 50)) {
        ph_node_set_attr_float(n, "alpha", (float)(0.05 * rint_(G, 1, 6)));
    } else if (op_is(op, "Gemm") && chance(G, 30)) {
        ph_node_set_attr_float(n, "alpha", 0.5f);
    }
}

static int lit_int(const pat_lit *l) { return l->kind == PAT_LIT_INT ? (int)l->i : (int)l->f; }

/* The pattern's tests on one attribute, satisfied. */
static void pattern_attr(gen *G, ph_node *n, const pat_attr *a)
{
    int have = ph_node_attr_type(n, a->key) != PH_ATTR_NONE;
    if (a->op == PAT_OP_ABSENT) {
        ph_node_remove_attr(n, a->key);
        return;
    }
    if (a->absent_ok && chance(G, 40)) {
        ph_node_remove_attr(n, a->key);
        return;
    }
    if (a->has_default && chance(G, 40) && a->op == PAT_OP_EQ && a->var < 0) {
        /* leave it out when the default passes the test, or set the default */
        int same = a->dflt.kind == a->rhs.kind &&
                   ((a->dflt.kind == PAT_LIT_INT && a->dflt.i == a->rhs.i) ||
                    (a->dflt.kind == PAT_LIT_FLOAT && a->dflt.f == a->rhs.f) ||
                    (a->dflt.kind == PAT_LIT_STRING && !strcmp(a->dflt.s, a->rhs.s)));
        if (same) {
            ph_node_remove_attr(n, a->key);
            return;
        }
    }
    if (a->var >= 0) {
        if (!have && a->has_default && chance(G, 50))
            set_lit(n, a->key, &a->dflt);
        return;
    }
    switch (a->op) {
    case PAT_OP_PRESENT:
        if (!have)
            ph_node_set_attr_int(n, a->key, 1);
        break;
    case PAT_OP_EQ:
        if (a->all) {
            int64_t vals[RANK_MAX];
            size_t k = 0;
            const int64_t *cur;
            if (ph_node_attr_type(n, a->key) == PH_ATTR_INTS) {
                ptrdiff_t c = ph_node_attr_ints(n, a->key, &cur);
                k = c > 0 && c <= RANK_MAX ? (size_t)c : 0;
            }
            if (!k) {
                int64_t xd[RANK_MAX];
                int xr = shape_of(ph_node_input(n, 0), xd);
                k = xr > 2 ? (size_t)(xr - 2) : 2;
                if (!strcmp(a->key, "pads"))
                    k *= 2;
            }
            for (size_t i = 0; i < k; i++)
                vals[i] = lit_int(&a->rhs);
            ph_node_set_attr_ints(n, a->key, k, vals);
        } else {
            set_lit(n, a->key, &a->rhs);
        }
        break;
    case PAT_OP_IN:
        if (a->rhs.n) {
            size_t i = (size_t)rint_(G, 0, (int)a->rhs.n - 1);
            if (a->rhs.kind == PAT_LIT_STRINGS)
                ph_node_set_attr_string(n, a->key, a->rhs.strs[i]);
            else if (a->rhs.kind == PAT_LIT_INTS)
                ph_node_set_attr_int(n, a->key, a->rhs.ints[i]);
            else
                ph_node_set_attr_float(n, a->key, (float)a->rhs.floats[i]);
        }
        break;
    case PAT_OP_NE:
    case PAT_OP_GT:
    case PAT_OP_GE:
    case PAT_OP_LT:
    case PAT_OP_LE: {
        if (have && a->op != PAT_OP_NE)
            break;
        double v = a->rhs.kind == PAT_LIT_INT ? (double)a->rhs.i : a->rhs.f;
        double w = a->op == PAT_OP_LT || a->op == PAT_OP_LE ? v - 1 : v + 1;
        if (a->rhs.kind == PAT_LIT_INT)
            ph_node_set_attr_int(n, a->key, (int64_t)w);
        else
            ph_node_set_attr_float(n, a->key, (float)w);
        break;
    }
    default: break;
    }
}

/* ------------------------------------------------------------ statements */

static int64_t pick_opset(gen *G)
{
    /* 17 mostly, 18 one time in 5 (axes of reductions, Pad and Split as
     * inputs), unless a guard wants an older one */
    static const int64_t pref[] = {18, 17, 13, 11, 7};
    int first = chance(G, 20) ? 0 : 1;
    for (int k = first; k < 5; k++) {
        int64_t v = pref[k];
        int ok = 1;
        for (int i = 0; i < G->f->n_guards && ok; i++) {
            const pat_guard *gd = &G->f->guards[i];
            if (gd->domain && *gd->domain)
                continue;
            switch (gd->op) {
            case PAT_OP_EQ: ok = v == gd->version; break;
            case PAT_OP_NE: ok = v != gd->version; break;
            case PAT_OP_LT: ok = v < gd->version; break;
            case PAT_OP_LE: ok = v <= gd->version; break;
            case PAT_OP_GT: ok = v > gd->version; break;
            case PAT_OP_GE: ok = v >= gd->version; break;
            }
        }
        if (ok)
            return v;
    }
    return 17;
}

static int pick_float(gen *G)
{
    uint32_t mask = ~0u;
    for (int s = 0; s < G->f->n_slots; s++) {
        if (G->f->slot_stmt[s] >= 0)
            continue;
        leaf_info li;
        leaf_summary(G->f, s, &li);
        if (li.dtypes)
            mask &= li.dtypes;
    }
    int r = rint_(G, 0, 99);
    int want = r < 75 ? PH_DT_FLOAT : r < 90 ? PH_DT_DOUBLE : PH_DT_FLOAT16;
    if ((mask >> want) & 1)
        return want;
    if ((mask >> PH_DT_FLOAT) & 1)
        return PH_DT_FLOAT;
    for (int dt = 1; dt < 32; dt++)
        if ((mask >> dt) & 1)
            return dt;
    return PH_DT_FLOAT;
}

/* 1 if every input slot of statement s is built (or a leaf). */
static int ready(const gen *G, const pat_stmt *st)
{
    for (int a = 0; a < st->n_args; a++) {
        int sl = st->args[a].slot;
        if (sl >= 0 && G->f->slot_stmt[sl] >= 0 && !G->sv[sl])
            return 0;
    }
    return 1;
}

static int leaf_slot_for_value_test(gen *G)
{
    int cand[64], n = 0;
    for (int s = 0; s < G->f->n_slots && n < 64; s++) {
        if (G->f->slot_stmt[s] >= 0)
            continue;
        leaf_info li;
        leaf_summary(G->f, s, &li);
        if (li.value)
            cand[n++] = s;
    }
    return n ? cand[rint_(G, 0, n - 1)] : -1;
}

static int interior_slots(const pat_form *f, int *out, int cap)
{
    int n = 0;
    const pat_stmt *root = pat_root(f);
    for (int s = 0; s < f->n_stmts; s++) {
        const pat_stmt *st = &f->stmts[s];
        if (st == root)
            continue;
        for (int o = 0; o < st->n_outs; o++)
            if (st->outs[o] >= 0 && !st->shared[o] && n < cap)
                out[n++] = st->outs[o];
    }
    return n;
}

int rc_has_kind(const pat_form *f, int kind)
{
    int tmp[64];
    if (kind == RC_EXTRA_CONSUMER || kind == RC_OUTPUT_MIDDLE)
        return interior_slots(f, tmp, 64) > 0;
    if (kind == RC_VALUE_OUTSIDE) {
        for (int s = 0; s < f->n_slots; s++) {
            leaf_info li;
            if (f->slot_stmt[s] >= 0)
                continue;
            leaf_summary(f, s, &li);
            if (li.value)
                return 1;
        }
        return 0;
    }
    return 1;
}

/* Build statement st.  1 done, 0 not possible. */
static int build_stmt(gen *G, const pat_stmt *st)
{
    const pat_op *po = &st->ops[rint_(G, 0, st->n_ops - 1)];
    const char *op = po->op_type;
    ph_value *in[16] = {0};
    int n_in = 0;
    int n_outs = st->n_outs > 0 ? st->n_outs : 1;
    const ph_value *x0 = NULL;
    for (int a = 0; a < st->n_args && n_in < 12; a++) {
        const pat_arg *arg = &st->args[a];
        int sl = arg->slot;
        ph_value *v = sl >= 0 ? G->sv[sl] : NULL;
        if (!v && arg->optional && (G->spec->drop_optional || chance(G, 40))) {
            in[n_in++] = NULL;
            continue;
        }
        if (!v) {
            char name[80];
            snprintf(name, sizeof name, "%s", sl >= 0 ? G->f->names[sl] : "any");
            v = make_leaf(G, sl, name, op, n_in, n_in ? x0 : NULL, n_outs);
            if (!v && G->failed)
                return -1;
            if (!v && op_is(op, "Conv") && n_in == 2 && in[1]) { /* Conv bias: [M] */
                int64_t m = ph_value_dim(in[1], 0);
                v = add_random(G, name, ph_value_dtype(in[1]), 1, &m, 0);
            } else if (!v && op_is(op, "Gemm") && n_in == 2 && in[1]) {
                int64_t cd[2] = {1, ph_value_dim(in[1], 1)};
                int r = chance(G, 50) ? 1 : 2;
                v = add_random(G, name, G->T, r, r == 1 ? cd + 1 : cd, 0);
            }
            if (!v && arg->optional) {
                in[n_in++] = NULL;
                continue;
            }
            if (!v) {
                return 0;
            }
            if (sl >= 0)
                G->sv[sl] = v;
        }
        if (n_in == 0)
            x0 = v;
        in[n_in++] = v;
    }
    if (st->variadic_slot >= 0) {
        int k = op_is(op, "Slice") ? rint_(G, 2, 4) : op_is(op, "Pad") ? 1 : op_is(op, "Resize") ? 2 : rint_(G, 0, 2);
        if (n_in == 0)
            k = k ? k : 1;
        for (int i = 0; i < k && n_in < 12; i++) {
            char name[80];
            snprintf(name, sizeof name, "%s_%d", G->f->names[st->variadic_slot], i);
            int idx = n_in;
            ph_value *v;
            if (role(op, idx) == R_ROI) {
                v = NULL;
            } else if (role(op, idx) == R_DATA && x0) {
                int64_t d[RANK_MAX];
                int r = shape_of(x0, d);
                if (r < 0)
                    return 0;
                v = add_input(G, name, ph_value_dtype(x0), r, d);
            } else {
                v = make_leaf(G, -1, name, op, idx, x0, n_outs);
                if (!v && G->failed)
                    return -1;
                if (!v)
                    return 0;
            }
            if (idx == 0)
                x0 = v;
            in[n_in++] = v;
        }
    }
    while (n_in > 0 && !in[n_in - 1])
        n_in--;
    ph_node *n = ph_node_create(G->g, NULL, op, (size_t)n_in, in, (size_t)n_outs);
    if (!n) {
        G->failed = 1;
        return -1;
    }
    if (po->domain && *po->domain) {
        ph_node_set_domain(n, po->domain);
        ph_model_require_opset(G->m, po->domain, 1);
    }
    op_attrs(G, n, op);
    for (int i = 0; i < st->n_attrs; i++)
        pattern_attr(G, n, &st->attrs[i]);
    if (op_is(op, "Constant") && ph_node_attr_type(n, "value") == PH_ATTR_NONE) {
        int64_t d = rdim(G);
        double vals[8];
        for (int i = 0; i < d; i++)
            vals[i] = runi(G);
        ph_node_set_attr_tensor(n, "value", ph_tensor_from_f64(G->T, 1, &d, vals));
    }
    for (int o = 0; o < st->n_outs; o++)
        if (st->outs[o] >= 0)
            G->sv[st->outs[o]] = ph_node_output(n, (size_t)o);
    ph_error err = {0};
    if (ph_graph_update_shapes(G->g, &err) < 0) {
        return 0;
    }
    for (int o = 0; o < n_outs; o++) {
        const ph_value *v = ph_node_output(n, (size_t)o);
        if (ph_value_dtype(v) == PH_DT_UNDEFINED || ph_value_rank(v) < 0)
            return 0;
        for (int i = 0; i < ph_value_rank(v); i++)
            if (ph_value_dim(v, i) < 0)
                return 0;
    }
    return 1;
}

void rc_node_sig(const ph_node *n, char *buf, size_t size)
{
    /* not its inputs: a smaller form of the rule may rightly rewrite what
     * feeds the root, and a fusion's node keeps the root's name */
    snprintf(buf, size, "%s = %s@%s with %zu attributes", ph_node_name(n), ph_node_op_type(n), ph_node_domain(n),
             ph_node_attr_count(n));
}

int rc_build(const rc_spec *spec, rc_instance *inst)
{
    if (spec->in_body) {
        rc_spec flat = *spec;
        flat.in_body = 0;
        int rc = rc_build(&flat, inst);
        if (rc != 1)
            return rc;
        ph_error err = {0};
        rc = rc_wrap_in_body(inst->m, spec->in_body == 2);
        if (rc == 1 && (ph_graph_update_shapes(ph_model_graph(inst->m), &err) < 0 ||
                        ph_graph_verify(ph_model_graph(inst->m), &err) < 0))
            rc = 0;
        if (rc != 1) {
            ph_model_free(inst->m);
            memset(inst, 0, sizeof *inst);
            return rc < 0 ? PH_ENOMEM : 0;
        }
        inst->root_out[0] = inst->root_sig[0] = 0;
        return 1;
    }
    if (spec->example)
        return rc_build_example(spec, inst);
    memset(inst, 0, sizeof *inst);
    const pat_form *f = &spec->p->forms[spec->form];
    if (!rc_has_kind(f, spec->kind))
        return 0;
    gen G = {.spec = spec, .f = f, .rng = spec->seed, .outside = -1};
    G.T = pick_float(&G);
    G.m = ph_model_new(pick_opset(&G));
    G.sv = calloc((size_t)(f->n_slots ? f->n_slots : 1), sizeof *G.sv);
    if (!G.m || !G.sv) {
        ph_model_free(G.m);
        free(G.sv);
        return PH_ENOMEM;
    }
    G.g = ph_model_graph(G.m);
    if (spec->kind == RC_VALUE_OUTSIDE)
        G.outside = leaf_slot_for_value_test(&G);
    int rc = 1;
    char *done = calloc((size_t)f->n_stmts, 1);
    if (!done)
        rc = PH_ENOMEM;
    for (int left = f->n_stmts; rc == 1 && left > 0;) {
        int progressed = 0;
        for (int s = 0; s < f->n_stmts && rc == 1; s++) {
            if (done[s] || !ready(&G, &f->stmts[s]))
                continue;
            if (s == f->n_stmts - 1 && left > 1)
                continue; /* the root last */
            rc = build_stmt(&G, &f->stmts[s]);
            done[s] = 1;
            left--;
            progressed = 1;
        }
        if (!progressed)
            rc = 0;
    }
    free(done);
    const pat_stmt *root = pat_root(f);
    ph_node *rn = NULL;
    for (int o = 0; rc == 1 && o < root->n_outs; o++) {
        ph_value *v = root->outs[o] >= 0 ? G.sv[root->outs[o]] : NULL;
        if (v) {
            rn = ph_value_producer(v);
            if (!inst->root_out[0])
                snprintf(inst->root_out, sizeof inst->root_out, "%s", ph_value_name(v));
            if (ph_graph_add_output(G.g, v) < 0)
                rc = PH_ENOMEM;
        }
    }
    if (rc == 1 && !rn)
        rc = 0;
    if (rc == 1 && (spec->kind == RC_EXTRA_CONSUMER || spec->kind == RC_OUTPUT_MIDDLE)) {
        int cand[64];
        int n = interior_slots(f, cand, 64);
        ph_value *v = n ? G.sv[cand[rint_(&G, 0, n - 1)]] : NULL;
        if (!v) {
            rc = 0;
        } else if (spec->kind == RC_OUTPUT_MIDDLE) {
            rc = ph_graph_add_output(G.g, v) < 0 ? PH_ENOMEM : 1;
        } else {
            const char *op = outside_op(&G);
            ph_node *r = op ? ph_node_create(G.g, NULL, op, 1, &v, 1) : NULL;
            rc = r && ph_graph_add_output(G.g, ph_node_output(r, 0)) == 0 ? 1 : 0;
        }
    }
    ph_error err = {0};
    if (rc == 1 && (G.failed || ph_graph_update_shapes(G.g, &err) < 0 || ph_graph_verify(G.g, &err) < 0))
        rc = G.failed ? PH_ENOMEM : 0;
    if (rc == 1)
        rc_node_sig(rn, inst->root_sig, sizeof inst->root_sig);
    free(G.sv);
    if (rc != 1) {
        ph_model_free(G.m);
        memset(inst, 0, sizeof *inst);
        return rc;
    }
    inst->m = G.m;
    inst->near_values = G.near;
    return 1;
}
