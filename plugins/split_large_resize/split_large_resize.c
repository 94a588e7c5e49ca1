/* split_large_resize - a nearest Resize with an integer scale above the
 * target's limit becomes a cascade of smaller Resizes.
 *
 * Icraft SplitUpsamplePass (seed 004): an upsample whose W_times or H_times
 * is above 22 is split into cascaded upsamples, each below it (exact for
 * nearest; Icraft also splits bilinear ones, which changes the borders:
 * not done here).
 *
 * Requires: a default-domain Resize (opset >= 11) with mode nearest, a
 *   constant scales input of whole numbers >= 1 (no sizes input), every
 *   input dim known, and coordinate_transformation_mode asymmetric with
 *   nearest_mode floor, or half_pixel / pytorch_half_pixel with
 *   round_prefer_floor or round_prefer_ceil (with a whole scale s each of
 *   these reads input floor(o / s)); a scale above the parameter max_scale
 *   (the profile's Resize.max_scale), each scale a product of whole factors
 *   <= max_scale (largest first).  At most 8 dims and 16 steps.
 * Changes:  the Resize becomes a chain of Resizes of the same attributes,
 *   step i scaling each axis by its i-th factor (1 when it has no more);
 *   new scales initializers; the last step keeps the name.  Main graph and
 *   every If/Loop/Scan body.
 * Exact:    yes; floor(floor(o / a) / b) = floor(o / (a * b)).
 */
#include <string.h>

#include <passhost/passhost.h>

#define MAX_RANK 8
#define MAX_STEPS 16

typedef struct plan {
    int rank, steps;
    float s[MAX_STEPS][MAX_RANK];
} plan;

static int floor_reads(const ph_node *n)
{
    const char *ctm = ph_node_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    const char *nm = ph_node_attr_string(n, "nearest_mode", "round_prefer_floor");
    if (!strcmp(ctm, "asymmetric"))
        return !strcmp(nm, "floor");
    if (!strcmp(ctm, "half_pixel") || !strcmp(ctm, "pytorch_half_pixel"))
        return !strcmp(nm, "round_prefer_floor") || !strcmp(nm, "round_prefer_ceil");
    return 0;
}

static int too_large(const ph_match *m, const ph_params *params)
{
    const ph_node *n = ph_match_root(m);
    const ph_value *x = ph_match_value(m, "x");
    int64_t limit = ph_params_int(params, "max_scale");
    int rank = ph_value_rank(x);
    if (limit < 1 || rank < 1 || rank > MAX_RANK || ph_match_value(m, "sizes") ||
        strcmp(ph_node_attr_string(n, "mode", "nearest"), "nearest") || !floor_reads(n))
        return 0;
    const ph_tensor *t = ph_match_const(m, "scales");
    double sc[MAX_RANK];
    int64_t dims[1] = {rank};
    if (!t || ph_tensor_numel(t) != rank || ph_tensor_read_f64(t, 1, dims, sc))
        return 0;
    plan *p = ph_match_state(m, sizeof *p);
    if (!p)
        return PH_ENOMEM;
    memset(p, 0, sizeof *p);
    p->rank = rank;
    int over = 0;
    for (int a = 0; a < rank; a++) {
        int64_t s = (int64_t)sc[a], f[MAX_STEPS];
        if ((double)s != sc[a] || s < 1 || ph_value_dim(x, a) < 0)
            return 0;
        over |= s > limit;
        int c = ph_factor_within(s, limit, f, MAX_STEPS);
        if (c < 0)
            return 0;
        for (int i = 0; i < MAX_STEPS; i++)
            p->s[i][a] = (float)(i < c ? f[i] : 1);
        p->steps = c > p->steps ? c : p->steps;
    }
    return over && p->steps > 1;
}

static int to_cascade(ph_rewriter *rw, const ph_match *m)
{
    const plan *p = ph_match_state(m, sizeof *p);
    ph_node *root = ph_match_root(m);
    ph_value *cur = ph_match_value(m, "x");
    for (int i = 0; p && i < p->steps && cur; i++) {
        int64_t r = p->rank;
        ph_value *sc = ph_rw_initializer(rw, "resize_scales", ph_tensor_new(PH_DT_FLOAT, 1, &r, p->s[i]));
        ph_value *in[3] = {cur, ph_match_value(m, "roi"), sc};
        ph_node *step = sc ? ph_rw_clone(rw, root, NULL, 3, in) : NULL;
        if (!step) {
            cur = NULL;
            break;
        }
        if (i + 1 < p->steps)
            ph_node_set_name(step, ph_graph_unique_name(ph_rw_graph(rw), ph_node_name(root)));
        cur = ph_node_output(step, 0);
    }
    return p && cur ? ph_rw_replace_root(rw, cur) : ph_rw_fail(rw, PH_ENOMEM);
}

static const ph_rule rules[] = {
    {"split_large_resize", "opset >= 11; y = Resize(x, roi?, scales:const, sizes?)", too_large, to_cascade},
    {0},
};

static const ph_param_def params[] = {
    {"max_scale", PH_PARAM_INT, "0", "largest scale along an axis (0: no limit)"},
    {NULL, 0, NULL, NULL},
};

static const ph_profile_key keys[] = {{"Resize.max_scale", "max_scale"}, {NULL, NULL}};

/* Examples for the rule checker: nearest Resizes by scales above max_scale. */
static const ph_rule_example examples[] = {
    {"split_large_resize", "opset <13|17>\nx: <float|int64>[1,<2|3>,<2|3>,<1|2>]\nsc: float[4] = [1, 1, <4|6|8>, <2|4>]\n"
                           "y = Resize(x, _, sc) {mode=\"nearest\", coordinate_transformation_mode="
                           "\"<M=asymmetric|half_pixel>\", nearest_mode=\"<M~floor|round_prefer_ceil>\"}\nreturn y",
     (const char *const[]){"max_scale=2", NULL}},
    {0}};

PH_PASS_DEFINE(
    .name = "split_large_resize",
    .summary = "nearest Resize with a whole scale above the target's limit -> a cascade of smaller Resizes",
    .stages = PH_STAGE_ADAPT,
    .exactness = PH_EXACT,
    .params = params,
    .rules = rules,
    .profile_keys = keys,
    .rule_examples = examples)
