/* split_large_pool - a pool whose kernel is larger than the target allows
 * becomes a chain of smaller pools.
 *
 * msit's KnowledgeAvgPoolSplit (seed 000): "AvgPool's kernel size cannot
 * exceed 255" on Ascend; an AveragePool {kernel [32, 64], stride [32, 64]}
 * is AveragePool {[8, 16]} then AveragePool {[4, 4]}.  Icraft's
 * ConvertBigPool2SmallPoolPass (seed 004) does the same.
 *
 * Requires: a default-domain MaxPool or AveragePool with kernel_shape equal
 *   to its strides on every axis (non-overlapping windows), no padding
 *   (pads absent or 0, auto_pad absent, NOTSET or VALID), dilations 1,
 *   ceil_mode 0, one output (MaxPool's indices unused), every spatial input
 *   dim known and a multiple of its kernel (no partial window), a kernel
 *   above the parameter max_kernel (the profile's OP.max_kernel) on some
 *   axis, and every kernel a product of factors <= max_kernel (the largest
 *   such factor is taken first).  At most 8 spatial axes and 16 steps.
 * Changes:  the pool becomes a chain of pools of the same op, step i with
 *   kernel = strides = the i-th factor of each axis (1 when an axis has no
 *   more); the last step keeps the pool's name, the others get new ones.  Main graph and every If/Loop/Scan body.
 * Exact:    fp: MaxPool is exact; an AveragePool's mean of means is the
 *   mean, rounded differently.
 */
#include <string.h>

#include <passhost/passhost.h>

#define MAX_SP 8
#define MAX_STEPS 16

typedef struct plan {
    int nsp, steps;
    int64_t k[MAX_STEPS][MAX_SP];
} plan;

/* Factors of k, each <= limit, largest first, into f; their count, or -1. */
static int ints_all(const ph_node *n, const char *name, int64_t want, int len)
{
    const int64_t *v;
    ptrdiff_t k = ph_node_attr_ints(n, name, &v);
    if (k < 0)
        return 1;
    if (k != len)
        return 0;
    for (ptrdiff_t i = 0; i < k; i++)
        if (v[i] != want)
            return 0;
    return 1;
}

static int too_large(const ph_match *m, const ph_params *params)
{
    const ph_node *n = ph_match_root(m);
    const ph_value *x = ph_match_value(m, "x");
    int64_t limit = ph_params_int(params, ph_node_op(n) == PH_OP_MaxPool ? "max_kernel_maxpool" : "max_kernel");
    const int64_t *k, *s;
    ptrdiff_t nk = ph_node_attr_ints(n, "kernel_shape", &k);
    if (limit < 1 || nk < 1 || nk > MAX_SP || ph_node_attr_ints(n, "strides", &s) != nk ||
        ph_value_rank(x) != nk + 2 || ph_node_output_count(n) != 1)
        return 0;
    const char *ap = ph_node_attr_string(n, "auto_pad", "NOTSET");
    if ((strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) || ph_node_attr_int(n, "ceil_mode", 0) ||
        !ints_all(n, "pads", 0, (int)(2 * nk)) || !ints_all(n, "dilations", 1, (int)nk))
        return 0;
    plan *p = ph_match_state(m, sizeof *p);
    if (!p)
        return PH_ENOMEM;
    memset(p, 0, sizeof *p);
    p->nsp = (int)nk;
    int over = 0;
    for (int a = 0; a < nk; a++) {
        int64_t d = ph_value_dim(x, a + 2), f[MAX_STEPS];
        if (k[a] != s[a] || k[a] < 1 || d < 0 || d % k[a])
            return 0;
        over |= k[a] > limit;
        int c = ph_factor_within(k[a], limit, f, MAX_STEPS);
        if (c < 0)
            return 0;
        for (int i = 0; i < MAX_STEPS; i++)
            p->k[i][a] = i < c ? f[i] : 1;
        p->steps = c > p->steps ? c : p->steps;
    }
    return over && p->steps > 1;
}

static int to_chain(ph_rewriter *rw, const ph_match *m)
{
    const plan *p = ph_match_state(m, sizeof *p);
    ph_node *root = ph_match_root(m);
    ph_value *cur = ph_match_value(m, "x");
    for (int i = 0; p && i < p->steps && cur; i++) {
        ph_node *step = ph_rw_clone(rw, root, NULL, 1, &cur);
        if (!step)
            break;
        if (i + 1 < p->steps) /* the last step keeps the pool's name, the others their own */
            ph_node_set_name(step, ph_graph_unique_name(ph_rw_graph(rw), ph_node_name(root)));
        ph_node_remove_attr(step, "pads");
        ph_node_remove_attr(step, "auto_pad");
        ph_node_set_attr_ints(step, "kernel_shape", (size_t)p->nsp, p->k[i]);
        ph_node_set_attr_ints(step, "strides", (size_t)p->nsp, p->k[i]);
        cur = ph_node_output(step, 0);
    }
    return p && cur ? ph_rw_replace_root(rw, cur) : ph_rw_fail(rw, PH_ENOMEM);
}

static const ph_rule rules[] = {{"split_large_pool", "y = MaxPool|AveragePool(x)", too_large, to_chain}, {0}};

static const ph_param_def params[] = {
    {"max_kernel", PH_PARAM_INT, "0", "largest AveragePool kernel along an axis (0: no limit)"},
    {"max_kernel_maxpool", PH_PARAM_INT, "0", "largest MaxPool kernel along an axis (0: no limit)"},
    {NULL, 0, NULL, NULL},
};

static const ph_profile_key keys[] = {
    {"AveragePool.max_kernel", "max_kernel"},
    {"MaxPool.max_kernel", "max_kernel_maxpool"},
    {NULL, NULL},
};

/* Examples for the rule checker: pools with kernels above max_kernel. */
static const ph_rule_example examples[] = {
    {"split_large_pool", "x: <float|double>[<1|2>,<2|3>,<8|16>,<4|12>]\n"
                         "y = <MaxPool|AveragePool>(x) {kernel_shape=[<4|8>,4], strides=[<4|8>,4]}\nreturn y",
     (const char *const[]){"max_kernel=2", "max_kernel_maxpool=2", NULL}},
    {0}};

PH_PASS_DEFINE(
    .name = "split_large_pool",
    .summary = "MaxPool/AveragePool with kernel = stride above the target's limit -> a chain of smaller pools",
    .stages = PH_STAGE_ADAPT,
    .exactness = PH_FP,
    .params = params,
    .rules = rules,
    .profile_keys = keys,
    .rule_examples = examples)
