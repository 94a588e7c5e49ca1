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
 *   - M is Gemm, operand is a swap (of rank 2: perm [1, 0] or none): toggle
 *     transA/transB and read the swap's input directly (a declarative
 *     result; the rewrite only computes the toggled flags).
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
#include <string.h>

#include <passhost/passhost.h>

typedef enum fold_kind { FOLD_NONE, FOLD_CONST, FOLD_FLAG } fold_kind;

typedef struct operand {
    fold_kind kind;
    int rank;    /* rank of the swapped value */
    ph_value *x; /* the swap's input */
} operand;

/* Gemm: the swaps toggle transA/transB, which the result reads as $na, $nb. */
static int toggle_flags(ph_rewriter *rw, const ph_match *m)
{
    ph_rw_bind_int(rw, "na", !ph_match_int(m, "fa", 0));
    ph_rw_bind_int(rw, "nb", !ph_match_int(m, "fb", 0));
    return 1;
}

/* How the operand fed by the Transpose bound to `t` folds into the MatMul. */
static operand plan(const ph_match *m, const char *t)
{
    ph_node *tr = ph_match_node(m, t);
    operand op = {FOLD_NONE, tr ? ph_node_transpose_swap_rank(tr) : 0, tr ? ph_node_input(tr, 0) : NULL};
    const ph_tensor *ct = op.x ? ph_value_const(op.x) : NULL;
    if (op.rank && ct && ph_value_sole_consumer(ph_match_value(m, t)) == ph_match_root(m) &&
        (int)ph_tensor_rank(ct) == op.rank)
        op.kind = FOLD_CONST;
    else if (op.rank == 2 && !ct)
        op.kind = FOLD_FLAG;
    return op;
}

/* MatMul: plan both operands into the match's state for the rewrite; a
 * flag needs the MatMul to become a Gemm: both operands 2-D, opset >= 11
 * (Gemm without C). */
static int matmul_ok(const ph_match *m, const ph_params *params)
{
    operand *ops = ph_match_state(m, 2 * sizeof *ops);
    if (!ops)
        return PH_ENOMEM;
    ops[0] = plan(m, "ta"), ops[1] = plan(m, "tb");
    int gemm_ok = ph_node_opset(ph_match_root(m)) >= 11;
    for (size_t i = 0; i < 2; i++)
        gemm_ok &= (ops[i].kind != FOLD_NONE ? ops[i].rank : ph_value_rank(ph_node_input(ph_match_root(m), i))) == 2;
    for (size_t i = 0; i < 2; i++)
        if (ops[i].kind == FOLD_FLAG && !gemm_ok)
            ops[i].kind = FOLD_NONE;
    return ops[0].kind != FOLD_NONE || ops[1].kind != FOLD_NONE;
}

/* Replace the MatMul by a MatMul or Gemm of the same name reading the
 * swaps' inputs or the transposed constants. */
static int fold(ph_rewriter *rw, const ph_match *m)
{
    static const char *const flag[2] = {"transA", "transB"};
    const operand *ops = ph_match_state(m, 2 * sizeof *ops);
    ph_node *root = ph_match_root(m);
    ph_value *in[2] = {ph_node_input(root, 0), ph_node_input(root, 1)};
    for (size_t i = 0; i < 2; i++) {
        int64_t perm[64];
        for (int k = 0; k < ops[i].rank; k++)
            perm[k] = k < ops[i].rank - 2 ? k : 2 * ops[i].rank - 3 - k;
        const char *base = ops[i].kind == FOLD_CONST ? ph_value_name(ops[i].x) : NULL;
        char *name = base ? ph_rw_alloc(rw, strlen(base) + 3) : NULL;
        if (ops[i].kind == FOLD_FLAG)
            in[i] = ops[i].x;
        else if (name)
            in[i] = ph_rw_initializer(rw, strcat(strcpy(name, base), "_T"),
                                      ph_tensor_transpose(ph_value_const(ops[i].x), (size_t)ops[i].rank, perm));
    }
    int gemm = ops[0].kind == FOLD_FLAG || ops[1].kind == FOLD_FLAG;
    ph_node *n = ph_rw_clone(rw, root, gemm ? "Gemm" : "MatMul", 2, in);
    for (size_t i = 0; i < 2; i++)
        if (ops[i].kind == FOLD_FLAG)
            ph_node_set_attr_int(n, flag[i], 1);
    return ph_rw_replace_root(rw, ph_node_output(n, 0));
}

/* The swaps are ':shared': one with other readers stays for them.  Two
 * operands fed by one Transpose match only the single-operand rules.  A
 * Gemm operand is 2-D: its swap is perm [1, 0] or no perm. */
#define SWAP(t, x) t ":shared = Transpose(" x ") {perm?=[1,0]}; "
static const ph_rule rules[] = {
    {"gemm_both",
     SWAP("ta", "a") SWAP("tb", "b") "y = Gemm(ta, tb, c?) {transA(0)=$fa, transB(0)=$fb}\n"
                                     "=> y = Gemm(a, b, c?) like y {transA=$na, transB=$nb}",
     NULL, toggle_flags},
    {"gemm_a", SWAP("ta", "a") "y = Gemm(ta, b, c?) {transA(0)=$fa}\n=> y = Gemm(a, b, c?) like y {transA=$na}",
     NULL, toggle_flags},
    {"gemm_b", SWAP("tb", "b") "y = Gemm(a, tb, c?) {transB(0)=$fb}\n=> y = Gemm(a, b, c?) like y {transB=$nb}",
     NULL, toggle_flags},
    {"both", "ta:shared = Transpose(a); tb:shared = Transpose(b); y = MatMul(ta, tb)", matmul_ok, fold},
    {"a", "ta:shared = Transpose(a); y = MatMul(ta, b)", matmul_ok, fold},
    {"b", "tb:shared = Transpose(b); y = MatMul(a, tb)", matmul_ok, fold},
    {0}};

/* Let Transpose pairs cancel (and Identities between them go) first: folding
 * the second of a cancelling pair into a flag would keep the first one. */
static const char *const run_after[] = {"eliminate_identity", "merge_consecutive_transpose",
                                        NULL};

/* Examples for the rule checker: transposed operands. */
static const ph_rule_example examples[] = {
    {"both", "a: <T=float|double>[4,<3|1>]\nb: <T>[<5|2>,4]\nta = Transpose(a) {perm=[1,0]}\n"
             "tb = Transpose(b) {perm=[1,0]}\ny = MatMul(ta, tb)\nreturn y", NULL},
    {"gemm_both", "a: <T=float|double>[4,<3|1>]\nb: <T>[<5|2>,4]\nta = Transpose(a) {perm=[1,0]}\n"
                  "tb = Transpose(b)\ny = Gemm(ta, tb) {transB=<0|1>}\nreturn y", NULL},
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
