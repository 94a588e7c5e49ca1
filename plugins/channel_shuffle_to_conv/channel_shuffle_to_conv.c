/* channel_shuffle_to_conv - a channel shuffle (ShuffleNet v2) written as
 * Reshape + Transpose + Reshape becomes a 1x1 Conv with a permutation weight.
 *
 * Requires: Reshape(x, s1) -> Transpose {perm = [0,2,1,3,4]} ->
 *   Reshape(., s2), the middle values read by nothing else and no graph
 *   outputs, s1 and s2 constant (initializer, Constant or shape constant),
 *   x [N, C, H, W] of dtype float, float16 or double with C a known number
 *   > 0, the view [N, g, C/g, H, W] and y [N, C, H, W] (as inferred or
 *   declared; N, H and W provably the same dims throughout).
 * Changes: the three nodes become Conv(x, w) {kernel_shape = [1, 1]} with
 *   w [C, C, 1, 1] holding 1 at (o, (o % g) * (C/g) + o / g) and 0
 *   elsewhere: output channel o is input channel (o % g) * (C/g) + o / g,
 *   as the shuffle moves it, named as the last Reshape.
 * Exact: fp.  For finite inputs each output is one input times 1.0 plus
 *   products by 0.0, all exact, but a -0.0 input comes out as +0.0 (-0 + 0
 *   is +0), which is not bit-identical: declared exact until the rule
 *   checker found such an instance (1000 instances x seeds 5, 6).  An
 *   infinite or NaN input gives 0 * Inf = NaN in every other output channel
 *   of its pixel, which the shuffle would not.
 */

#include <passhost/passhost.h>

static int to_conv(ph_rewriter *rw, const ph_match *m)
{
    ph_value *x = ph_match_value(m, "x"), *r = ph_match_value(m, "r"), *y = ph_match_value(m, "y");
    int64_t C = ph_value_dim(x, 1), g = ph_value_dim(r, 1), N = PH_DIM_OF(0), H = PH_DIM_OF(2), W = PH_DIM_OF(3);
    if (C <= 0 || g <= 0 || C % g || !ph_value_dims_are(r, 5, (int64_t[]){N, g, C / g, H, W}, x) ||
        !ph_value_dims_are(y, 4, (int64_t[]){N, C, H, W}, x))
        return 0;
    double *w = ph_rw_alloc(rw, (size_t)(C * C) * sizeof *w); /* zeroed */
    for (int64_t o = 0; w && o < C; o++)
        w[o * C + (o % g) * (C / g) + o / g] = 1;
    if (w)
        ph_rw_bind(rw, "w", ph_rw_initializer(rw, "shuffle_w", ph_tensor_from_f64(ph_value_dtype(x), 4,
                                                                                  (int64_t[]){C, C, 1, 1}, w)));
    return 1;
}

static const ph_rule rules[] = {{"channel_shuffle",
                                 "r = Reshape(x:float32|float16|double:rank=4, s1:ints)\n"
                                 "t = Transpose(r:rank=5) {perm=[0,2,1,3,4]}\n"
                                 "y = Reshape(t, s2:ints)\n"
                                 "=>\n"
                                 "y = Conv(x, w) {kernel_shape=[1,1]}",
                                 NULL, to_conv},
                                {0}};

/* A target that limits the rank (a profile's max_rank) cannot run the
 * shuffle's 5-D view: the profile switches this pass on. */
static const ph_profile_key keys[] = {{"max_rank", NULL}, {NULL, NULL}};

PH_PASS_DEFINE(
    .name = "channel_shuffle_to_conv",
    .summary = "Reshape-Transpose-Reshape channel shuffle -> 1x1 Conv with a permutation weight",
    .stages = PH_STAGE_ADAPT,
    .on_by_default = 0,
    .exactness = PH_FP,
    .rules = rules,
    .profile_keys = keys)
