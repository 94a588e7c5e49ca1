/* sdk/src/eval/eval_ops_random.c - random ops: RandomUniform,
 * RandomUniformLike, RandomNormal, RandomNormalLike, Bernoulli,
 * Multinomial, and Dropout in training mode.
 *
 * The numbers come from a splitmix64 generator seeded by the node's seed
 * attribute (its float bits), else by a fixed seed, so one node gives the
 * same values at every evaluation.  They cannot match another runtime's
 * generator: these ops are registered EVAL_KF_RANDOM, and
 * ph_eval_output_is_random tells which graph outputs depend on them (not
 * comparable between two models).  Outputs of any float dtype (halves
 * included) or, for Bernoulli and Multinomial, the integer dtypes the spec
 * allows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_more.h"

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *g)
{
    uint64_t z = (g->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double rng_uniform(rng *g)
{
    return (double)(rng_next(g) >> 11) * (1.0 / 9007199254740992.0);
}

static double rng_normal(rng *g)
{
    double u = rng_uniform(g), v = rng_uniform(g);
    return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

static rng rng_of(const ph_node *n)
{
    float seed = ph_node_attr_float(n, "seed", 0);
    uint32_t bits;
    memcpy(&bits, &seed, sizeof bits);
    return (rng){0x5eed5eed00000000ull ^ bits};
}

static int float_out(eval_kargs *a, int dt)
{
    if (!eval_dt_float(dt) && dt != PH_DT_FLOAT16 && dt != PH_DT_BFLOAT16)
        return eval_kbad_dtype(a, "output", dt);
    return 0;
}

/* RandomUniform/RandomNormal and their Like forms. */
static int random_fill(eval_kargs *a, int normal, int like)
{
    int64_t dims[EVAL_MAX_RANK];
    size_t rank;
    int dt, rc;
    if (like) {
        const ph_tensor *x;
        if ((rc = eval_need(a, 0, &x, NULL)) != 0)
            return rc;
        rank = ph_tensor_rank(x);
        if (rank > EVAL_MAX_RANK)
            return eval_kfail(a, PH_EUNSUPPORTED, "rank %zu", rank);
        memcpy(dims, ph_tensor_dims(x), rank * sizeof *dims);
        dt = (int)ph_node_attr_int(a->node, "dtype", ph_tensor_dtype(x));
    } else {
        const int64_t *s;
        ptrdiff_t n = ph_node_attr_ints(a->node, "shape", &s);
        if (n < 0 || n > EVAL_MAX_RANK)
            return eval_kfail(a, PH_EINVAL, "attribute shape is missing or too long");
        rank = (size_t)n;
        memcpy(dims, s, rank * sizeof *dims);
        dt = (int)ph_node_attr_int(a->node, "dtype", PH_DT_FLOAT);
    }
    if ((rc = float_out(a, dt)) != 0)
        return rc;
    void *o;
    if ((rc = eval_out(a, 0, dt, rank, dims, &o)) != 0 || !o)
        return rc;
    rng g = rng_of(a->node);
    double p0 = ph_node_attr_float(a->node, normal ? "mean" : "low", 0);
    double p1 = ph_node_attr_float(a->node, normal ? "scale" : "high", 1);
    int64_t n = eval_numel(rank, dims);
    for (int64_t e = 0; e < n; e++)
        eval_store_f64(o, dt, (size_t)e, normal ? p0 + p1 * rng_normal(&g) : p0 + (p1 - p0) * rng_uniform(&g));
    return 0;
}

int eval_k_random_uniform(eval_kargs *a)
{
    return random_fill(a, 0, ph_node_op(a->node) == PH_OP_RandomUniformLike);
}

int eval_k_random_normal(eval_kargs *a)
{
    return random_fill(a, 1, ph_node_op(a->node) == PH_OP_RandomNormalLike);
}

int eval_k_bernoulli(eval_kargs *a)
{
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need(a, 0, &x, &xd);
    if (rc)
        return rc;
    int xdt = ph_tensor_dtype(x), dt = (int)ph_node_attr_int(a->node, "dtype", xdt);
    if (!ph_dtype_size(dt) || dt == PH_DT_STRING)
        return eval_kbad_dtype(a, "output", dt);
    void *o;
    if ((rc = eval_out(a, 0, dt, ph_tensor_rank(x), ph_tensor_dims(x), &o)) != 0 || !o)
        return rc;
    rng g = rng_of(a->node);
    int64_t n = ph_tensor_numel(x);
    for (int64_t e = 0; e < n; e++)
        eval_store_f64(o, dt, (size_t)e, rng_uniform(&g) < eval_load_f64(xd, xdt, (size_t)e) ? 1 : 0);
    return 0;
}

int eval_k_multinomial(eval_kargs *a)
{
    const ph_tensor *x;
    const void *xd;
    int rc = eval_need(a, 0, &x, &xd);
    if (rc)
        return rc;
    int xdt = ph_tensor_dtype(x), dt = (int)ph_node_attr_int(a->node, "dtype", PH_DT_INT32);
    if (dt != PH_DT_INT32 && dt != PH_DT_INT64)
        return eval_kbad_dtype(a, "output", dt);
    if (ph_tensor_rank(x) != 2)
        return eval_kfail(a, PH_EINVAL, "the input must be [batch, classes]");
    int64_t B = ph_tensor_dim(x, 0), C = ph_tensor_dim(x, 1), S = ph_node_attr_int(a->node, "sample_size", 1);
    int64_t od[2] = {B, S};
    if (S < 1 || C < 1)
        return eval_kfail(a, PH_EINVAL, "sample_size and the class count must be positive");
    void *o;
    if ((rc = eval_out(a, 0, dt, 2, od, &o)) != 0 || !o)
        return rc;
    rng g = rng_of(a->node);
    for (int64_t b = 0; b < B; b++) {
        double mx = -INFINITY, tot = 0;
        for (int64_t c = 0; c < C; c++)
            mx = fmax(mx, eval_load_f64(xd, xdt, (size_t)(b * C + c)));
        for (int64_t c = 0; c < C; c++)
            tot += exp(eval_load_f64(xd, xdt, (size_t)(b * C + c)) - mx);
        for (int64_t s = 0; s < S; s++) {
            double u = rng_uniform(&g) * tot, acc = 0;
            int64_t pick = C - 1;
            for (int64_t c = 0; c < C; c++) {
                acc += exp(eval_load_f64(xd, xdt, (size_t)(b * C + c)) - mx);
                if (u < acc) {
                    pick = c;
                    break;
                }
            }
            eval_store_i64(o, dt, (size_t)(b * S + s), pick);
        }
    }
    return 0;
}

/* Dropout with training_mode true: each element kept with probability
 * 1 - ratio and scaled by 1 / (1 - ratio); the mask says which. */
int eval_k_dropout_training(eval_kargs *a)
{
    const ph_tensor *x, *rt = eval_in(a, 1);
    const void *xd;
    int rc = eval_need(a, 0, &x, &xd);
    if (rc)
        return rc;
    int dt = ph_tensor_dtype(x);
    if ((rc = float_out(a, dt)) != 0)
        return rc;
    double ratio = 0.5;
    if (rt) {
        const void *rd;
        if ((rc = eval_need(a, 1, &rt, &rd)) != 0)
            return rc;
        if (ph_tensor_numel(rt) != 1)
            return eval_kfail(a, PH_EINVAL, "ratio must be one value");
        ratio = eval_load_f64(rd, ph_tensor_dtype(rt), 0);
    }
    if (!(ratio >= 0 && ratio < 1))
        return eval_kfail(a, PH_EINVAL, "ratio must be in [0, 1)");
    void *o;
    uint8_t *m;
    size_t r = ph_tensor_rank(x);
    if ((rc = eval_out(a, 0, dt, r, ph_tensor_dims(x), &o)) != 0 ||
        (rc = eval_out(a, 1, PH_DT_BOOL, r, ph_tensor_dims(x), (void **)&m)) != 0)
        return rc;
    rng g = rng_of(a->node);
    int64_t n = ph_tensor_numel(x);
    for (int64_t e = 0; e < n; e++) {
        int keep = rng_uniform(&g) >= ratio;
        if (o)
            eval_store_f64(o, dt, (size_t)e, keep ? eval_load_f64(xd, dt, (size_t)e) / (1 - ratio) : 0);
        if (m)
            m[e] = (uint8_t)keep;
    }
    return 0;
}
