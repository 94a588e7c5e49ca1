/* fuse_transpose_into_matmul - fold a last-two-dims Transpose into MatMul/Gemm.
 *
 * Seed 001 rule 2 (and Icraft MergeTranspose2InnerProductPass /
 * MergeTranspose2MatmulPass).  A "swap" is a default-domain Transpose whose
 * perm is [0, 1, ..., r-3, r-1, r-2] for some rank r >= 2 (a missing perm is
 * reversed dims: a swap only at rank 2, which must then be known from
 * ph_value_rank, or from the Gemm operand it feeds, which is 2-D by
 * definition).
 *
 * Requires and changes, per operand (A or B) of a default-domain node M:
 *   - M is Gemm, operand is a swap (of rank 2): toggle transA/transB and read
 *     the swap's input directly.
 *   - M is MatMul, operand is a swap of a constant x (ph_value_const, any
 *     rank >= 2) and M is the swap's only user: M reads a new initializer
 *     holding x with its last two dims swapped.  Works for N-D MatMul.  When
 *     the swap has other users the constant is left alone, so one weight never
 *     turns into several copies (constant folding handles that Transpose).
 *   - M is MatMul, operand is a swap of rank 2 of a non-constant: M becomes a
 *     Gemm (alpha 1, no C) with transA/transB set, reading the swap's input.
 *     Gemm takes only 2-D inputs, so both operands must be known to be 2-D,
 *     and the default opset must be >= 11 (Gemm without C).  For every opset
 *     >= 11 Gemm accepts every type MatMul does.  N-D MatMul with a
 *     non-constant swap is left alone.
 * A swap whose output has other users (or is a graph output) stays for them;
 * M alone stops reading it.  A swap nobody reads any more is removed, and the
 * old constant with it when unused.  Every precondition of a node is checked
 * before it is changed.  Main graph and every If/Loop/Scan body.
 * Exact:    yes: the same products summed in the same order; only where the
 *   operands are read from changes (alpha 1 and no C add nothing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_RANK 64

typedef enum fold_kind { FOLD_NONE, FOLD_CONST, FOLD_FLAG } fold_kind;

typedef struct operand {
    fold_kind kind;
    int rank;         /* rank of the swapped value */
    ph_value *v;      /* the swap's output, M's input */
    ph_value *x;      /* the swap's input */
    ph_tensor *folded; /* FOLD_CONST: x with the last two dims swapped (owned) */
} operand;

static int is_default(const ph_node *n, ph_op op)
{
    return n && ph_node_op(n) == op && ph_node_domain(n)[0] == '\0';
}

/* Rank r if t is a Transpose swapping the last two of r dims, else -1.
 * rank_hint: the rank its output must have (Gemm operand), or -1. */
static int swap_rank(const ph_node *t, int rank_hint)
{
    const int64_t *p;
    if (!is_default(t, PH_OP_Transpose) || ph_node_input_count(t) < 1 || !ph_node_input(t, 0))
        return -1;
    ph_attr_type at = ph_node_attr_type(t, "perm");
    if (at == PH_ATTR_NONE) {
        int r = ph_value_rank(ph_node_input(t, 0));
        if (r < 0)
            r = ph_value_rank(ph_node_output(t, 0));
        if (r < 0)
            r = rank_hint;
        return r == 2 ? 2 : -1;
    }
    if (at != PH_ATTR_INTS)
        return -1;
    ptrdiff_t r = ph_node_attr_ints(t, "perm", &p);
    if (r < 2 || r > MAX_RANK || (rank_hint >= 0 && r != rank_hint))
        return -1;
    for (ptrdiff_t i = 0; i < r - 2; i++)
        if (p[i] != i)
            return -1;
    return p[r - 2] == r - 1 && p[r - 1] == r - 2 ? (int)r : -1;
}

/* 1 if swap_last2 can copy t: rank 2..MAX_RANK, fixed-size elements, data
 * readable. */
static int swappable(const ph_tensor *t)
{
    size_t rank = ph_tensor_rank(t);
    return rank >= 2 && rank <= MAX_RANK && ph_dtype_size(ph_tensor_dtype(t)) > 0 &&
           (ph_tensor_nbytes(t) == 0 || ph_tensor_data(t) != NULL);
}

/* A copy of t (swappable) with its last two dims swapped; NULL when out of
 * memory.  Caller owns the result. */
static ph_tensor *swap_last2(const ph_tensor *t)
{
    size_t rank = ph_tensor_rank(t), esz = ph_dtype_size(ph_tensor_dtype(t));
    const unsigned char *src = ph_tensor_data(t);
    int64_t dims[MAX_RANK];
    if (!swappable(t))
        return NULL;
    memcpy(dims, ph_tensor_dims(t), rank * sizeof *dims);
    int64_t rows = dims[rank - 2], cols = dims[rank - 1];
    dims[rank - 2] = cols;
    dims[rank - 1] = rows;
    size_t nbytes = ph_tensor_nbytes(t);
    unsigned char *dst = malloc(nbytes ? nbytes : 1);
    if (!dst)
        return NULL;
    int64_t plane = rows * cols, planes = plane ? ph_tensor_numel(t) / plane : 0;
    for (int64_t b = 0; b < planes; b++) {
        const unsigned char *s = src + (size_t)(b * plane) * esz;
        unsigned char *d = dst + (size_t)(b * plane) * esz;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                memcpy(d + (size_t)(j * rows + i) * esz, s + (size_t)(i * cols + j) * esz, esz);
    }
    ph_tensor *out = ph_tensor_new(ph_tensor_dtype(t), rank, dims, dst);
    free(dst);
    return out;
}

/* Describe operand i of M if it is fed by a swap; rank_hint as swap_rank. */
static operand find_swap(const ph_node *m, size_t i, int rank_hint)
{
    operand op = {FOLD_NONE, -1, NULL, NULL, NULL};
    ph_value *v = ph_node_input(m, i);
    ph_node *t = v ? ph_value_producer(v) : NULL;
    int r = swap_rank(t, rank_hint);
    if (r < 0)
        return op;
    op.rank = r;
    op.v = v;
    op.x = ph_node_input(t, 0);
    op.kind = FOLD_FLAG;
    return op;
}

/* Remove the swaps (and constants) nobody reads any more. */
static void prune_old(const operand *ops)
{
    if (ops[0].kind != FOLD_NONE)
        ph_value_prune(ops[0].v);
    if (ops[1].kind != FOLD_NONE && !(ops[0].kind != FOLD_NONE && ops[1].v == ops[0].v))
        ph_value_prune(ops[1].v);
}

/* Ask the host before folding operand op into m (one numbered rewrite per
 * operand): 1 to go ahead, 0 when the run's rewrite budget is used up. */
static int begin_fold(const ph_node *m, const operand *op, ph_ctx *ctx)
{
    char matched[512];
    snprintf(matched, sizeof matched, "%s, %s", ph_node_name(m),
             ph_node_name(ph_value_producer(op->v)));
    return ph_ctx_rewrite_begin(ctx, matched);
}

/* ---------------------------------------------------------------- Gemm */

static int fuse_gemm(ph_node *m, ph_ctx *ctx)
{
    static const char *const flag[2] = {"transA", "transB"};
    operand ops[2] = {find_swap(m, 0, 2), find_swap(m, 1, 2)};
    int count = 0;
    for (size_t i = 0; i < 2; i++) {
        if (ops[i].kind == FOLD_NONE)
            continue;
        if (!begin_fold(m, &ops[i], ctx)) {
            ops[i].kind = FOLD_NONE;
            break;
        }
        int64_t t = ph_node_attr_int(m, flag[i], 0) ? 0 : 1;
        int rc = ph_node_set_input(m, i, ops[i].x);
        if (rc == 0 && (rc = ph_node_set_attr_int(m, flag[i], t)) < 0)
            ph_node_set_input(m, i, ops[i].v); /* undo: keep the maths right */
        if (rc < 0)
            return ph_ctx_error(ctx, rc, "Gemm '%s': cannot fold its Transpose: %s",
                                ph_node_name(m), ph_strerror(rc));
        count++;
    }
    prune_old(ops);
    return count;
}

/* -------------------------------------------------------------- MatMul */

/* Choose how operand i of MatMul m folds (the Gemm check comes later). */
static operand plan_matmul_operand(const ph_node *m, size_t i)
{
    operand op = find_swap(m, i, -1);
    if (op.kind == FOLD_NONE)
        return op;
    const ph_tensor *ct = ph_value_const(op.x);
    if (ct && ph_value_sole_consumer(op.v) == m && (int)ph_tensor_rank(ct) == op.rank &&
        swappable(ct)) {
        op.kind = FOLD_CONST;
        return op;
    }
    if (ct || op.rank != 2)
        op.kind = FOLD_NONE;
    return op;
}

/* Known rank of MatMul input i, given the plan for it. */
static int input_rank(const ph_node *m, size_t i, const operand *op)
{
    return op->kind != FOLD_NONE ? op->rank : ph_value_rank(ph_node_input(m, i));
}

/* Drop FOLD_FLAG operands unless m can become a 2-D Gemm. */
static void check_gemm(const ph_node *m, operand *ops)
{
    if (ops[0].kind != FOLD_FLAG && ops[1].kind != FOLD_FLAG)
        return;
    int64_t opset = ph_model_opset(ph_graph_model(ph_node_graph(m)), "");
    int ok = opset >= 11 && input_rank(m, 0, &ops[0]) == 2 && input_rank(m, 1, &ops[1]) == 2 &&
             ph_node_output_count(m) == 1;
    for (size_t i = 0; i < 2 && !ok; i++)
        if (ops[i].kind == FOLD_FLAG)
            ops[i].kind = FOLD_NONE;
}

/* Build the swapped constants; 0 or PH_ENOMEM (nothing changed). */
static int build_constants(operand *ops)
{
    for (size_t i = 0; i < 2; i++) {
        if (ops[i].kind != FOLD_CONST)
            continue;
        ops[i].folded = swap_last2(ph_value_const(ops[i].x));
        if (!ops[i].folded)
            return PH_ENOMEM;
    }
    return 0;
}

static void free_constants(operand *ops)
{
    for (size_t i = 0; i < 2; i++) {
        ph_tensor_free(ops[i].folded);
        ops[i].folded = NULL;
    }
}

/* Add the swapped constants to m's graph; ops[i].x becomes the new value.
 * On failure the ones already added are pruned again. */
static int add_constants(ph_node *m, operand *ops, ph_ctx *ctx)
{
    ph_graph *g = ph_node_graph(m);
    ph_value *added[2] = {NULL, NULL};
    for (size_t i = 0; i < 2; i++) {
        if (ops[i].kind != FOLD_CONST)
            continue;
        const char *base = ph_value_name(ops[i].x);
        char *name = ph_ctx_alloc(ctx, strlen(base) + 3);
        ph_tensor *t = ops[i].folded;
        ops[i].folded = NULL;
        if (name) {
            strcpy(name, base);
            strcat(name, "_T");
        }
        added[i] = ph_graph_add_initializer(g, name ? name : "transposed", t);
        if (!added[i]) {
            for (size_t j = 0; j < i; j++)
                if (added[j])
                    ph_value_prune(added[j]);
            return PH_ENOMEM;
        }
    }
    for (size_t i = 0; i < 2; i++)
        if (added[i])
            ops[i].x = added[i];
    return 0;
}

static int rewrite_matmul(ph_node *m, operand *ops)
{
    int to_gemm = ops[0].kind == FOLD_FLAG || ops[1].kind == FOLD_FLAG;
    int rc = 0;
    if (to_gemm) {
        rc = ph_node_set_op_type(m, "Gemm");
        for (size_t i = 0; i < 2 && rc == 0; i++)
            if (ops[i].kind == FOLD_FLAG)
                rc = ph_node_set_attr_int(m, i ? "transB" : "transA", 1);
    }
    for (size_t i = 0; i < 2 && rc == 0; i++)
        if (ops[i].kind != FOLD_NONE)
            rc = ph_node_set_input(m, i, ops[i].x);
    return rc;
}

static int fuse_matmul(ph_node *m, ph_ctx *ctx)
{
    if (ph_node_input_count(m) != 2)
        return 0;
    operand ops[2] = {plan_matmul_operand(m, 0), plan_matmul_operand(m, 1)};
    check_gemm(m, ops);
    if (ops[0].kind == FOLD_NONE && ops[1].kind == FOLD_NONE)
        return 0;
    for (size_t i = 0; i < 2; i++)
        if (ops[i].kind != FOLD_NONE && !begin_fold(m, &ops[i], ctx))
            ops[i].kind = FOLD_NONE;
    if (ops[0].kind == FOLD_NONE && ops[1].kind == FOLD_NONE)
        return 0;
    int rc = build_constants(ops);
    if (rc == 0)
        rc = add_constants(m, ops, ctx);
    free_constants(ops);
    if (rc == 0)
        rc = rewrite_matmul(m, ops);
    if (rc < 0)
        return ph_ctx_error(ctx, rc, "MatMul '%s': cannot fold its Transpose: %s",
                            ph_node_name(m), ph_strerror(rc));
    prune_old(ops);
    return (ops[0].kind != FOLD_NONE) + (ops[1].kind != FOLD_NONE);
}

/* --------------------------------------------------------------- walk */

/* One node of the walk: fold the Transposes feeding a Gemm or MatMul. */
static int visit(ph_node *n, void *ctx)
{
    if (is_default(n, PH_OP_Gemm) && ph_node_input_count(n) >= 2)
        return fuse_gemm(n, ctx);
    if (is_default(n, PH_OP_MatMul))
        return fuse_matmul(n, ctx);
    return 0;
}

static int run(ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    return ph_graph_walk(g, visit, ctx);
}

/* Let Transpose pairs cancel (and Identities between them go) first: folding
 * the second of a cancelling pair into a flag would keep the first one. */
static const char *const run_after[] = {"eliminate_identity", "merge_consecutive_transpose",
                                        NULL};

PH_PASS_DEFINE(
    .name = "fuse_transpose_into_matmul",
    .summary = "last-two-dims Transpose into MatMul/Gemm: transA/transB or a transposed constant",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .run_after = run_after,
    .run = run)
