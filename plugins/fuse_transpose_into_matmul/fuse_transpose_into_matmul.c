/* fuse_transpose_into_matmul - fold a last-two-dims Transpose into MatMul/Gemm.
 *
 * Seed 001 rule 2 (and Icraft MergeTranspose2InnerProductPass /
 * MergeTranspose2MatmulPass).  A "swap" is a default-domain Transpose whose
 * perm is [0, 1, ..., r-3, r-1, r-2] for some rank r >= 2 (a missing perm is
 * reversed dims: a swap only at rank 2, which must then be known from
 * ph_value_rank, or from the Gemm operand it feeds, which is 2-D by
 * definition).
 *
 * Requires and changes, per operand (A or B) of a default-domain node M
 * whose operand is produced by a Transpose of M's graph:
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
 * Both operands fold in one rewrite: M is replaced by a MatMul or Gemm of
 * the same name (its output value gets a new name unless it is a graph
 * output).  A swap whose output has other users (or is a graph output) stays
 * for them (':shared'); M alone stops reading it.  A swap nobody reads any
 * more is removed, and the old constant with it when unused.  When both
 * operands are one Transpose, A folds first and B in the next round.  Main
 * graph and every If/Loop/Scan body.
 * Exact:    yes: the same products summed in the same order; only where the
 *   operands are read from changes (alpha 1 and no C add nothing).
 */
#include <stdlib.h>
#include <string.h>

#include <passhost/passhost.h>

#define MAX_RANK 64

typedef enum fold_kind { FOLD_NONE, FOLD_CONST, FOLD_FLAG } fold_kind;

typedef struct operand {
    fold_kind kind;
    int rank;    /* rank of the swapped value */
    ph_value *x; /* the swap's input */
} operand;

/* Rank r if Transpose t swaps the last two of r dims, else -1.
 * rank_hint: the rank its output must have (Gemm operand), or -1. */
static int swap_rank(const ph_node *t, int rank_hint)
{
    const int64_t *p;
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

/* How the operand fed by the Transpose bound to `t` folds into the root
 * (MatMul: before the Gemm check). */
static operand plan(const ph_match *m, const char *t, int gemm)
{
    operand op = {FOLD_NONE, -1, NULL};
    ph_node *tr = ph_match_node(m, t);
    if (!tr || (op.rank = swap_rank(tr, gemm ? 2 : -1)) < 0)
        return op;
    op.x = ph_node_input(tr, 0);
    const ph_tensor *ct = ph_value_const(op.x);
    if (gemm)
        op.kind = FOLD_FLAG;
    else if (ct && ph_value_sole_consumer(ph_match_value(m, t)) == ph_match_root(m) &&
             (int)ph_tensor_rank(ct) == op.rank && swappable(ct))
        op.kind = FOLD_CONST;
    else if (!ct && op.rank == 2)
        op.kind = FOLD_FLAG;
    return op;
}

/* 1 if MatMul mm may become a Gemm: both operands 2-D, Gemm without C. */
static int gemm_ok(const ph_node *mm, const operand *ops)
{
    for (size_t i = 0; i < 2; i++)
        if ((ops[i].kind != FOLD_NONE ? ops[i].rank : ph_value_rank(ph_node_input(mm, i))) != 2)
            return 0;
    return ph_node_opset(mm) >= 11;
}

/* Replace the root by a MatMul or Gemm of the same name reading the swaps'
 * inputs. */
static int fold(ph_rewriter *rw, const ph_match *m)
{
    static const char *const flag[2] = {"transA", "transB"};
    ph_node *root = ph_match_root(m);
    int gemm = ph_node_op(root) == PH_OP_Gemm;
    size_t n_in = ph_node_input_count(root);
    if (!gemm && n_in != 2)
        return 0;
    operand ops[2] = {plan(m, "ta", gemm), plan(m, "tb", gemm)};
    int to_gemm = gemm || ops[0].kind == FOLD_FLAG || ops[1].kind == FOLD_FLAG;
    if (to_gemm && !gemm && !gemm_ok(root, ops)) {
        to_gemm = 0;
        for (size_t i = 0; i < 2; i++)
            if (ops[i].kind == FOLD_FLAG)
                ops[i].kind = FOLD_NONE;
    }
    if (ops[0].kind == FOLD_NONE && ops[1].kind == FOLD_NONE)
        return 0;
    ph_value *in[3] = {ph_node_input(root, 0), ph_node_input(root, 1), ph_node_input(root, 2)};
    for (size_t i = 0; i < 2; i++) {
        if (ops[i].kind == FOLD_FLAG)
            in[i] = ops[i].x;
        if (ops[i].kind != FOLD_CONST)
            continue;
        const char *base = ph_value_name(ops[i].x);
        char *name = ph_rw_alloc(rw, strlen(base) + 3);
        if (!name)
            return PH_ENOMEM;
        strcat(strcpy(name, base), "_T");
        if (!(in[i] = ph_rw_initializer(rw, name, swap_last2(ph_value_const(ops[i].x)))))
            return PH_ENOMEM;
    }
    ph_node *n = ph_rw_clone(rw, root, to_gemm ? "Gemm" : "MatMul", n_in, in);
    if (!n)
        return PH_ENOMEM;
    for (size_t i = 0; i < 2; i++)
        if (ops[i].kind == FOLD_FLAG && ph_node_set_attr_int(n, flag[i], !ph_node_attr_int(root, flag[i], 0)) < 0)
            return PH_ENOMEM;
    return ph_rw_replace(rw, ph_match_value(m, "y"), ph_node_output(n, 0)) ? PH_ENOMEM : 1;
}

/* The swaps are ':shared': one with other readers stays for them.  Two
 * operands fed by one Transpose match only the single-operand rules. */
static const ph_rule rules[] = {
    {"both", "ta:shared = Transpose(a); tb:shared = Transpose(b); y = MatMul|Gemm(ta, tb, c?)", NULL, fold},
    {"a", "ta:shared = Transpose(a); y = MatMul|Gemm(ta, b, c?)", NULL, fold},
    {"b", "tb:shared = Transpose(b); y = MatMul|Gemm(a, tb, c?)", NULL, fold},
    {0}};

/* Let Transpose pairs cancel (and Identities between them go) first: folding
 * the second of a cancelling pair into a flag would keep the first one. */
static const char *const run_after[] = {"eliminate_identity", "merge_consecutive_transpose",
                                        NULL};

/* Examples for the rule checker: transposed operands. */
static const ph_rule_example examples[] = {
    {"both", "a: <T=float|double>[4,<3|1>]\nb: <T>[<5|2>,4]\nta = Transpose(a) {perm=[1,0]}\n"
             "tb = Transpose(b) {perm=[1,0]}\ny = <MatMul(ta, tb)|Gemm(ta, tb)>\nreturn y", NULL},
    {"b", "a: <T=float|double>[<3|1>,4]\nb: <T>[<5|2>,4]\ntb = Transpose(b) {perm=[1,0]}\ny = MatMul(a, tb)\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "fuse_transpose_into_matmul",
    .summary = "last-two-dims Transpose into MatMul/Gemm: transA/transB or a transposed constant",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .run_once = 0,
    .exactness = PH_EXACT,
    .run_after = run_after,
    .rules = rules,
    .rule_examples = examples)
