/* merge_consecutive_arith - fold two constant steps of arithmetic into one.
 *
 * Seed 003 operator merging: (in*W + b0) + b1 = in*W + (b0 + b1), and so on.
 *   (x + a) + b  ->  x + (a + b)        Sub by a constant: Add of -a
 *   (x * a) * b  ->  x * (a * b)        Div by a constant: Mul by 1/a, and
 *                                       x / a / b -> x / (a * b)
 *   (x + a) * b  ->  x * b + (a * b)    likewise with Sub and Div; puts the
 *                                       constant Add after the Mul, where
 *                                       the next Add or a Conv bias can
 *                                       take it
 *
 * Requires: default-domain Add/Sub/Mul/Div, opset >= 7 (before, these had
 *   legacy broadcast/axis attributes); in each, the second operand a
 *   constant (Sub(c, x) and Div(c, x) are not matched); the middle value
 *   read only by the second node and no graph output; a and b of one dtype:
 *   - float, double, float16, bfloat16: every constant element finite, no
 *     divisor 0; the folded constant is computed in double from the exact
 *     elements and rounded once (ph_tensor_from_f64), and must be finite,
 *     and a folded factor or divisor that is not 0 must stay a normal
 *     number of the dtype (x * 1e-30 * 1e-30 in float is not x * 0);
 *   - integers (not bool): Add/Sub chains, Mul chains and (x + a) * b,
 *     computed modulo 2^bits, which is what the original wraps to (no Div:
 *     integer division does not compose); a uint64 above INT64_MAX is not
 *     read.
 *   The folded constant has the broadcast shape of a and b, which must
 *   exist and hold no more elements than the larger of them (no blow-up
 *   from a [N,1] and a [1,N]).  Broadcasting is associative, so x op (a op
 *   b) has exactly the output shape and dtype of the original; x's shape
 *   is not needed.
 * Changes:  the two nodes become Add(x, c) or Mul(x, c) (Div(x, c) for two
 *   Divs), or Mul|Div(x, b) then Add(., c) for the third form (b is reused
 *   as it is; declarative results, the node that replaces y keeps y's
 *   name); the old nodes and constants only they read are removed.
 *   Main graph and every If/Loop/Scan body.
 * Exact:    fp: the folded constant rounds once where the original rounded
 *   twice; for integers the result is exact.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include <passhost/passhost.h>

#define MAX_RANK 16

static double min_normal(int dt)
{
    switch (dt) {
    case PH_DT_FLOAT16: return 0x1p-14;
    case PH_DT_DOUBLE: return DBL_MIN;
    default: return FLT_MIN; /* float and bfloat16 share float's exponent */
    }
}

/* The dtype $dt allows the fold (the rest is in the rewrite): a float, or
 * an integer (not bool) without Div. */
static int arith_ok(const ph_match *m, const ph_params *params)
{
    int dt = (int)ph_match_int(m, "dt", 0);
    ph_op o1 = ph_node_op(ph_match_node(m, "t")), o2 = ph_node_op(ph_match_root(m));
    return ph_dtype_is_float(dt) || (ph_dtype_is_numeric(dt) && dt != PH_DT_BOOL && o1 != PH_OP_Div && o2 != PH_OP_Div);
}

/* The broadcast shape of two tensors into (*rank, dims); 0, or -1. */
static int bcast(const ph_tensor *a, const ph_tensor *b, size_t *rank, int64_t *dims)
{
    size_t ra = ph_tensor_rank(a), rb = ph_tensor_rank(b), r = ra > rb ? ra : rb;
    if (r > MAX_RANK)
        return -1;
    for (size_t i = 0; i < r; i++) {
        int64_t da = i < r - ra ? 1 : ph_tensor_dim(a, i - (r - ra));
        int64_t db = i < r - rb ? 1 : ph_tensor_dim(b, i - (r - rb));
        if (da != db && da != 1 && db != 1)
            return -1;
        dims[i] = da == 1 ? db : da;
    }
    *rank = r;
    return 0;
}

/* An integer tensor from values modulo 2^64, each cut to the dtype's width
 * (little endian), which is the wrap-around of the original arithmetic. */
static ph_tensor *int_tensor(ph_rewriter *rw, int dt, size_t rank, const int64_t *dims, const uint64_t *v,
                             int64_t n)
{
    size_t es = ph_dtype_size(dt);
    unsigned char *buf = ph_rw_alloc(rw, (size_t)n * es + 1);
    if (!buf)
        return NULL;
    for (int64_t k = 0; k < n; k++)
        for (size_t j = 0; j < es; j++)
            buf[(size_t)k * es + j] = (unsigned char)(v[k] >> (8 * j));
    return ph_tensor_new(dt, rank, dims, buf);
}

typedef enum form { ADD_CHAIN, MUL_CHAIN, ADD_THEN_MUL } form;

/* The folded constant of shape (rank, dims), n elements, for form f; a
 * float result rounds once.  NULL when the fold is not allowed. */
static ph_tensor *fold(ph_rewriter *rw, const ph_match *m, form f, size_t rank, const int64_t *dims,
                       int64_t n)
{
    const ph_tensor *a = ph_match_const(m, "a"), *b = ph_match_const(m, "b");
    int dt = ph_tensor_dtype(a);
    ph_op o1 = ph_node_op(ph_match_node(m, "t")), o2 = ph_node_op(ph_match_root(m));
    int s1 = o1 == PH_OP_Sub || o1 == PH_OP_Div, s2 = o2 == PH_OP_Sub || o2 == PH_OP_Div;
    if (!ph_dtype_is_float(dt)) { /* an integer: no Div here (arith_ok) */
        int64_t *A = ph_rw_alloc(rw, (size_t)n * sizeof *A), *B = ph_rw_alloc(rw, (size_t)n * sizeof *B);
        uint64_t *C = ph_rw_alloc(rw, (size_t)n * sizeof *C);
        if (!A || !B || !C || ph_tensor_read_i64(a, rank, dims, A) || ph_tensor_read_i64(b, rank, dims, B))
            return NULL;
        for (int64_t k = 0; k < n; k++) {
            uint64_t ua = s1 ? 0 - (uint64_t)A[k] : (uint64_t)A[k];
            uint64_t ub = s2 ? 0 - (uint64_t)B[k] : (uint64_t)B[k];
            C[k] = f == ADD_CHAIN ? ua + ub : ua * ub;
        }
        return int_tensor(rw, dt, rank, dims, C, n);
    }
    double *A = ph_rw_alloc(rw, (size_t)n * sizeof *A), *B = ph_rw_alloc(rw, (size_t)n * sizeof *B);
    double *C = ph_rw_alloc(rw, (size_t)n * sizeof *C);
    if (!A || !B || !C || ph_tensor_read_f64(a, rank, dims, A) || ph_tensor_read_f64(b, rank, dims, B))
        return NULL;
    for (int64_t k = 0; k < n; k++) {
        double x = A[k], y = B[k];
        if (!isfinite(x) || !isfinite(y) || (f == MUL_CHAIN && s1 && x == 0) || (f != ADD_CHAIN && s2 && y == 0))
            return NULL;
        if (f == ADD_CHAIN)
            C[k] = (s1 ? -x : x) + (s2 ? -y : y);
        else if (f == ADD_THEN_MUL)
            C[k] = s2 ? (s1 ? -x : x) / y : (s1 ? -x : x) * y;
        else /* x*a*b, x/a/b = x/(a*b), x/a*b = x*(b/a), x*a/b = x*(a/b) */
            C[k] = s1 == s2 ? x * y : s1 ? y / x : x / y;
    }
    ph_tensor *t = ph_tensor_from_f64(dt, rank, dims, C);
    if (!t || ph_tensor_read_f64(t, rank, dims, A)) { /* A: the rounded values */
        ph_tensor_free(t);
        return NULL;
    }
    for (int64_t k = 0; k < n; k++)
        if (!isfinite(A[k]) || (f == MUL_CHAIN && C[k] != 0 && fabs(A[k]) < min_normal(dt))) {
            ph_tensor_free(t);
            return NULL;
        }
    return t;
}

/* Binds c, the folded constant, for the result; 0 when the fold is not
 * allowed. */
static int fold_constants(ph_rewriter *rw, const ph_match *m)
{
    const ph_tensor *a = ph_match_const(m, "a"), *b = ph_match_const(m, "b");
    ph_op o1 = ph_node_op(ph_match_node(m, "t")), o2 = ph_node_op(ph_match_root(m));
    form f = o2 == PH_OP_Add || o2 == PH_OP_Sub ? ADD_CHAIN : o1 == PH_OP_Mul || o1 == PH_OP_Div ? MUL_CHAIN
                                                                                               : ADD_THEN_MUL;
    size_t rank;
    int64_t dims[MAX_RANK], n = 1, na = ph_tensor_numel(a), nb = ph_tensor_numel(b);
    if (bcast(a, b, &rank, dims))
        return 0;
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] && n > (na > nb ? na : nb) / dims[i])
            return 0; /* the folded constant would be larger than both */
        n *= dims[i];
    }
    ph_tensor *c = fold(rw, m, f, rank, dims, n);
    if (!c)
        return 0;
    ph_rw_bind(rw, "c", ph_rw_initializer(rw, "merged_const", c));
    return 1;
}

/* a and b share the dtype $dt; x / a / b folds to a Div, any other Mul and
 * Div chain to a Mul. */
static const ph_rule rules[] = {
    {"add_chain", "opset >= 7; t = Add|Sub(x, a:const:dtype=$dt); y = Add|Sub(t, b:const:dtype=$dt)\n=> y = Add(x, c)",
     arith_ok, fold_constants},
    {"div_chain", "opset >= 7; t = Div(x, a:const:dtype=$dt); y = Div(t, b:const:dtype=$dt)\n=> y = Div(x, c)",
     arith_ok, fold_constants},
    {"mul_chain",
     "opset >= 7\n( t = Mul(x, a:const:dtype=$dt); y = Mul|Div(t, b:const:dtype=$dt)\n"
     "| t = Div(x, a:const:dtype=$dt); y = Mul(t, b:const:dtype=$dt) )\n=> y = Mul(x, c)",
     arith_ok, fold_constants},
    {"add_then_mul",
     "opset >= 7; t = Add|Sub(x, a:const:dtype=$dt); y = Mul(t, b:const:dtype=$dt)\n=> s = Mul(x, b); y = Add(s, c)",
     arith_ok, fold_constants},
    {"add_then_div",
     "opset >= 7; t = Add|Sub(x, a:const:dtype=$dt); y = Div(t, b:const:dtype=$dt)\n=> s = Div(x, b); y = Add(s, c)",
     arith_ok, fold_constants},
    {0}};

PH_PASS_DEFINE(
    .name = "merge_consecutive_arith",
    .summary = "(x op a) op b with constants a, b -> x op (a op b) for Add/Mul (Sub/Div normalised); "
               "(x + a) * b -> x * b + a * b",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules)
