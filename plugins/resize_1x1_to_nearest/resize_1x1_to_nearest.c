/* resize_1x1_to_nearest - linear/cubic Resize of a 1x1 input -> nearest.
 *
 * Icraft ConvertUpsampleBili2NearestPass (seed 004): interpolating an axis
 * that has a single element gives that element everywhere, in any mode, so
 * the cheaper nearest mode computes the same result.
 *
 * Requires: a default-domain Resize (opset >= 10) with mode "linear" or
 *   "cubic", antialias 0, a coordinate_transformation_mode other than
 *   tf_crop_and_resize (it writes extrapolation_value outside the crop: left
 *   alone), a known input rank, and constant scales (float) or sizes (int64)
 *   with keep_aspect_ratio_policy "stretch".  Every axis either has an input
 *   dim of exactly 1, or is left as it is: not in `axes` (opset 18), or
 *   scale exactly 1, or size equal to its known input dim; for such an axis
 *   of input dim other than 1 the coordinate mode must map o to o (every
 *   mode but tf_half_pixel_for_nn, whose o + 0.5 linear would interpolate).
 *   At least one axis of input dim 1 is resized.
 * Changes: mode becomes "nearest" (cubic_coeff_a, exclude_outside and
 *   antialias are dropped; nearest_mode and the inputs are kept: on an axis
 *   of one element every index clamps to 0, and on an unchanged axis the
 *   coordinates are whole numbers).  Main graph and every If/Loop/Scan body.
 * Exact: fp.  In real arithmetic the interpolation weights of a single
 *   element sum to 1 and the result is that element; in floating point the
 *   weighted sum (cubic's four weights, linear's two) can differ from it in
 *   the last bit, while nearest returns it exactly.  (It was declared exact
 *   until the rule checker found a double cubic instance off by one ulp.)
 */
#include <string.h>

#include <passhost/passhost.h>
#include <passhost/constant.h>

#define MAXR 16

static int single_pixel(const ph_match *m, const ph_params *params)
{
    ph_node *n = ph_match_root(m);
    ph_value *x = ph_match_value(m, "x");
    const char *mode = ph_node_attr_string(n, "mode", "nearest");
    const char *ctm = ph_node_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    int64_t opset = ph_node_opset(n), axes[MAXR], sizes[MAXR];
    int r = ph_value_rank(x);
    if ((strcmp(mode, "linear") && strcmp(mode, "cubic")) || !strcmp(ctm, "tf_crop_and_resize") ||
        ph_node_attr_int(n, "antialias", 0) || opset < 10 || r < 1 || r > MAXR ||
        strcmp(ph_node_attr_string(n, "keep_aspect_ratio_policy", "stretch"), "stretch"))
        return 0;
    const int64_t *av;
    ptrdiff_t nax = ph_node_attr_ints(n, "axes", &av);
    if (nax < 0) {
        nax = r;
        for (int i = 0; i < r; i++)
            axes[i] = i;
    } else if (nax > r) {
        return 0;
    } else {
        for (ptrdiff_t i = 0; i < nax; i++)
            if ((axes[i] = av[i] < 0 ? av[i] + r : av[i]) < 0 || axes[i] >= r)
                return 0;
    }
    ph_value *sv = ph_node_input(n, opset < 11 ? 1 : 2), *zv = opset < 11 ? NULL : ph_node_input(n, 3);
    const ph_tensor *st = sv ? ph_value_const(sv) : NULL;
    double scales[MAXR];
    int use_scales = st && ph_tensor_numel(st) > 0;
    if (use_scales ? ph_tensor_numel(st) != nax || ph_tensor_read_f64(st, 1, (int64_t[]){nax}, scales)
                   : !zv || ph_value_const_ints(zv, sizes, NULL, MAXR) != nax)
        return 0;
    int keeps[MAXR], resized = 0;
    for (int i = 0; i < r; i++)
        keeps[i] = 1;
    for (ptrdiff_t i = 0; i < nax; i++)
        keeps[axes[i]] = use_scales ? scales[i] == 1.0 : sizes[i] == ph_value_dim(x, (int)axes[i]);
    for (int i = 0; i < r; i++) {
        int one = ph_value_dim(x, i) == 1;
        if (!one && (!keeps[i] || !strcmp(ctm, "tf_half_pixel_for_nn")))
            return 0;
        resized |= one && !keeps[i];
    }
    return resized;
}

static int to_nearest(ph_rewriter *rw, const ph_match *m)
{
    ph_node *n = ph_match_root(m);
    size_t k = ph_node_input_count(n);
    ph_value **in = ph_rw_alloc(rw, (k + 1) * sizeof *in);
    if (!in)
        return PH_ENOMEM;
    for (size_t i = 0; i < k; i++)
        in[i] = ph_node_input(n, i);
    ph_node *c = ph_rw_clone(rw, n, NULL, k, in);
    if (!c || ph_node_set_attr_string(c, "mode", "nearest"))
        return PH_ENOMEM;
    ph_node_remove_attr(c, "cubic_coeff_a");
    ph_node_remove_attr(c, "exclude_outside");
    ph_node_remove_attr(c, "antialias");
    ph_value *y = ph_match_value(m, "y");
    if (ph_value_copy_type(ph_node_output(c, 0), y))
        return PH_ENOMEM;
    return ph_rw_replace(rw, y, ph_node_output(c, 0)) ? PH_ENOMEM : 1;
}

static const ph_rule rules[] = {
    {"resize_1x1_to_nearest", "y = Resize(x, rest*)", single_pixel, to_nearest},
    {0}};

/* Examples for the rule checker: 1x1 spatial inputs, scales or sizes. */
static const ph_rule_example examples[] = {
    {"resize_1x1_to_nearest",
     "opset <13|17>\nx: <T=float|double>[<N=1|2>,<C=2|3>,1,1]\nsc: float[4] = [1, 1, <2|3|4>, <2|5>]\n"
     "y = Resize(x, _, sc) {mode=\"<linear|cubic>\", coordinate_transformation_mode=\""
     "<half_pixel|asymmetric|align_corners|pytorch_half_pixel>\"}\nreturn y", NULL},
    {"resize_1x1_to_nearest",
     "opset <13|17>\nx: <T=float|double>[<N=1|2>,<C=2|3>,1,<W=1|4>]\nsz: int64[4] = [<N>, <C>, <3|4>, <W>]\n"
     "y = Resize(x, _, _, sz) {mode=\"<linear|cubic>\", coordinate_transformation_mode=\""
     "<half_pixel|asymmetric|align_corners>\"}\nreturn y", NULL},
    {0}};

PH_PASS_DEFINE(
    .name = "resize_1x1_to_nearest",
    .summary = "linear/cubic Resize of a 1x1 spatial input -> nearest",
    .stages = PH_STAGE_OPTIMIZE,
    .on_by_default = 1,
    .exactness = PH_FP,
    .rules = rules,
    .rule_examples = examples)
