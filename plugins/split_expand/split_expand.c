/* split_expand - an Expand that broadcasts more dims than the target can
 * at once becomes a chain of Expands, each broadcasting at most that many.
 *
 * Icraft SplitExpandPass (seed 004): "the Icraft Expand can only expand
 * one dim at a time"; the profile's Expand.max_broadcast_dims says how many.
 *
 * Requires: a default-domain Expand whose input and output shapes are
 *   known (every dim a number) and which broadcasts more than the
 *   parameter max_broadcast_dims (>= 1; the profile's key) dims: output
 *   dims that differ from the input's, the input aligned on the right (a
 *   dim the output adds counts).  At most 8 dims.
 * Changes:  Expand(x, shape) -> Expand(x, s1) -> ... -> Expand(., shape):
 *   s1 has the output's dims on the first max_broadcast_dims differing
 *   axes and the input's (1 where the output adds a dim) elsewhere, each
 *   next one max_broadcast_dims more.  The shapes are new int64
 *   initializers.  Main graph and every If/Loop/Scan body.
 * Exact:    yes; each step copies elements, the last one gives the output.
 */
#include <passhost/passhost.h>

#define MAX_RANK 8

static int too_many(const ph_match *m, const ph_params *params)
{
    const ph_value *x = ph_match_value(m, "x"), *y = ph_match_value(m, "y");
    int64_t limit = ph_params_int(params, "max_broadcast_dims");
    int rx = ph_value_rank(x), ry = ph_value_rank(y);
    if (limit < 1 || rx < 0 || ry < rx || ry > MAX_RANK)
        return 0;
    int64_t count = 0;
    for (int i = 0; i < ry; i++) {
        int j = i - (ry - rx);
        int64_t dy = ph_value_dim(y, i), dx = j >= 0 ? ph_value_dim(x, j) : 1;
        if (dy < 0 || dx < 0)
            return 0;
        count += dx != dy;
    }
    return count > limit;
}

static int chain(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x"), *y = ph_match_value(m, "y");
    int64_t limit = ph_params_int(ph_rw_params(rw), "max_broadcast_dims");
    int rx = ph_value_rank(x), ry = ph_value_rank(y);
    int64_t s[MAX_RANK];
    for (int i = 0; i < ry; i++)
        s[i] = i - (ry - rx) >= 0 ? ph_value_dim(x, i - (ry - rx)) : 1;
    ph_value *cur = x;
    int64_t done = 0;
    for (int i = 0; i < ry; i++) {
        if (s[i] == ph_value_dim(y, i))
            continue;
        s[i] = ph_value_dim(y, i);
        if (++done % limit)
            continue;
        int64_t r = ry;
        ph_value *shape = ph_rw_initializer(rw, "expand_shape", ph_tensor_new(PH_DT_INT64, 1, &r, s));
        ph_value *in[2] = {cur, shape};
        cur = shape ? ph_rw_op(rw, "Expand", 2, in) : NULL;
        if (!cur)
            return ph_rw_fail(rw, PH_ENOMEM);
    }
    if (done % limit) { /* the last few */
        ph_value *in[2] = {cur, ph_match_value(m, "shape")};
        cur = ph_rw_op(rw, "Expand", 2, in);
        if (!cur)
            return ph_rw_fail(rw, PH_ENOMEM);
    }
    return ph_rw_replace_root(rw, cur);
}

static const ph_rule rules[] = {{"split_expand", "y = Expand(x, shape)", too_many, chain}, {0}};

static const ph_param_def params[] = {
    {"max_broadcast_dims", PH_PARAM_INT, "1", "most dims one Expand may broadcast"},
    {NULL, 0, NULL, NULL},
};

static const ph_profile_key keys[] = {{"Expand.max_broadcast_dims", "max_broadcast_dims"}, {NULL, NULL}};

/* Examples for the rule checker: Expands broadcasting 2 and 3 dims. */
static const ph_rule_example examples[] = {
    {"split_expand", "x: <float|int64|bool>[<1,3,1|1,1,1|2,1,1>]\ns: int64[<R=3|4>] = [<R~2, 3, 4|2, 2, 3, 4>]\n"
                     "y = Expand(x, s)\nreturn y",
     (const char *const[]){"max_broadcast_dims=1", NULL}},
    {0}};

PH_PASS_DEFINE(
    .name = "split_expand",
    .summary = "Expand broadcasting several dims -> a chain of Expands, each broadcasting at most the target's limit",
    .stages = PH_STAGE_ADAPT,
    .exactness = PH_EXACT,
    .params = params,
    .rules = rules,
    .profile_keys = keys,
    .rule_examples = examples)
