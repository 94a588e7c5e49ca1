/* plugins/convert_opset/adapt_resize.c - Upsample and Resize across their
 * versions: Upsample's scales an attribute (7) then an input (9); Upsample
 * removed at 10 for Resize (10: X and scales, the "asymmetric" coordinates
 * and floor rounding of nearest); Resize 11 (roi, sizes, the coordinate
 * transformation and nearest modes, cubic), 13 (roi and scales optional),
 * 18 (axes, antialias, keep_aspect_ratio_policy) and 19
 * (half_pixel_symmetric).  Up keeps the old semantics by writing them out
 * (asymmetric, floor); down refuses what the older version cannot say. */
#include <math.h>
#include <string.h>

#include "convert_opset.h"

#define MAXR 16

static ph_value *empty_floats(ph_node *n, const char *hint)
{
    int64_t zero = 0;
    ph_tensor *t = ph_tensor_new(PH_DT_FLOAT, 1, &zero, NULL);
    return t ? ph_graph_add_initializer(ph_node_graph(n), hint, t) : NULL;
}

static ph_value *floats(ph_node *n, const char *hint, size_t count, const float *v)
{
    int64_t len = (int64_t)count;
    ph_tensor *t = ph_tensor_new(PH_DT_FLOAT, 1, &len, v);
    return t ? ph_graph_add_initializer(ph_node_graph(n), hint, t) : NULL;
}

/* The constant float scales of v into s: the count (0 for an empty
 * tensor), or -1 when v is not a constant float list. */
static ptrdiff_t const_floats(const ph_value *v, float *s, size_t max)
{
    const ph_tensor *t = ph_value_const_tensor(v);
    double d[MAXR];
    if (!t || ph_tensor_rank(t) != 1 || ph_tensor_numel(t) > (int64_t)max ||
        ph_tensor_read_f64(t, 1, ph_tensor_dims(t), d))
        return -1;
    for (int64_t i = 0; i < ph_tensor_numel(t); i++)
        s[i] = (float)d[i];
    return (ptrdiff_t)ph_tensor_numel(t);
}

static int up(cv *c, ph_node *n)
{
    int upsample = ph_node_op(n) == PH_OP_Upsample;
    if (upsample && cv_up(c, 9)) {
        const float *s;
        ptrdiff_t k = ph_node_attr_floats(n, "scales", &s);
        if (k < 0)
            return cv_refuse(c, n, "Upsample without scales");
        ph_value *v = floats(n, "scales", (size_t)k, s);
        if (!v || cv_set_input(n, 1, v) || ph_node_remove_attr(n, "scales") < 0)
            return PH_ENOMEM;
    }
    if (upsample && c->to >= 10 && ph_node_set_op_type(n, "Resize"))
        return PH_ENOMEM;
    if (cv_up(c, 11)) {
        /* Resize 10 (and Upsample): x_in = x_out / scale, nearest rounds down. */
        ph_value *scales = ph_node_input(n, 1);
        ph_value *roi = c->to < 13 ? empty_floats(n, "roi") : NULL;
        if ((c->to < 13 && !roi) || ph_node_set_input(n, 1, roi) || cv_set_input(n, 2, scales) ||
            ph_node_set_attr_string(n, "coordinate_transformation_mode", "asymmetric"))
            return PH_ENOMEM;
        if (!strcmp(ph_node_attr_string(n, "mode", "nearest"), "nearest") &&
            ph_node_set_attr_string(n, "nearest_mode", "floor"))
            return PH_ENOMEM;
    }
    return (upsample && (cv_up(c, 9) || c->to >= 10)) || cv_up(c, 11);
}

static int down(cv *c, ph_node *n)
{
    int changed = 0;
    if (ph_node_op(n) == PH_OP_Upsample) {
        /* Upsample 9 -> 7: scales an attribute. */
        float s[MAXR];
        ptrdiff_t k = cv_down(c, 9) ? const_floats(ph_node_input(n, 1), s, MAXR) : 0;
        if (!cv_down(c, 9))
            return 0;
        if (k < 0)
            return cv_refuse(c, n, "its scales are computed; before opset 9 they are an attribute");
        return ph_node_set_attr_floats(n, "scales", (size_t)k, s) || cv_drop_input(n, 1) ? PH_ENOMEM : 1;
    }
    if (ph_node_op(n) != PH_OP_Resize)
        return 0;
    const char *ctm = ph_node_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    if (cv_down(c, 19) && !strcmp(ctm, "half_pixel_symmetric"))
        return cv_refuse(c, n, "coordinate_transformation_mode 'half_pixel_symmetric' does not exist at opset %lld",
                         (long long)c->to);
    if (cv_down(c, 18)) {
        int rc;
        if (ph_node_attr_type(n, "axes") != PH_ATTR_NONE)
            return cv_refuse(c, n, "attribute axes does not exist at opset %lld", (long long)c->to);
        if (strcmp(ph_node_attr_string(n, "keep_aspect_ratio_policy", "stretch"), "stretch"))
            return cv_refuse(c, n, "keep_aspect_ratio_policy other than 'stretch' does not exist at opset %lld",
                             (long long)c->to);
        ph_node_remove_attr(n, "keep_aspect_ratio_policy");
        if ((rc = cv_drop_default_int(c, n, "antialias", 0)) < 0)
            return rc;
        changed = 1;
    }
    if (cv_down(c, 13) && c->to >= 11) {
        /* roi and scales are required inputs before 13 (empty when unused). */
        for (size_t i = 1; i <= 2; i++)
            if (!ph_node_input(n, i)) {
                ph_value *e = empty_floats(n, i == 1 ? "roi" : "scales");
                if (!e || cv_set_input(n, i, e))
                    return PH_ENOMEM;
                changed = 1;
            }
    }
    if (!cv_down(c, 11))
        return changed;
    /* Resize 10: asymmetric coordinates, nearest rounding down, scales only. */
    const char *mode = ph_node_attr_string(n, "mode", "nearest");
    if (strcmp(ctm, "asymmetric"))
        return cv_refuse(c, n, "coordinate_transformation_mode '%s': before opset 11 Resize is 'asymmetric' only", ctm);
    if (!strcmp(mode, "cubic"))
        return cv_refuse(c, n, "mode 'cubic' does not exist before opset 11");
    if (!strcmp(mode, "nearest") && strcmp(ph_node_attr_string(n, "nearest_mode", "round_prefer_floor"), "floor"))
        return cv_refuse(c, n, "nearest_mode '%s': before opset 11 nearest rounds down ('floor') only",
                         ph_node_attr_string(n, "nearest_mode", "round_prefer_floor"));
    if (ph_node_attr_int(n, "exclude_outside", 0))
        return cv_refuse(c, n, "exclude_outside = 1 does not exist before opset 11");
    float s[MAXR];
    ph_value *x = ph_node_input(n, 0), *scales = ph_node_input(n, 2), *sizes = ph_node_input(n, 3);
    ptrdiff_t k = scales ? const_floats(scales, s, MAXR) : 0;
    if (k < 0)
        return cv_refuse(c, n, "its scales ('%s') are computed; before opset 11 Resize needs them constant",
                         ph_value_name(scales));
    if (k == 0) {
        int64_t sz[MAXR];
        int r = ph_value_rank(x);
        k = sizes ? ph_value_const_ints(sizes, sz, NULL, MAXR) : -1;
        if (k < 0 || k != r)
            return cv_refuse(c, n, "its sizes are computed or the input's rank is not known: no scales for opset %lld",
                             (long long)c->to);
        for (ptrdiff_t i = 0; i < k; i++) {
            int64_t d = ph_value_dim(x, (int)i);
            if (d <= 0 || (int64_t)floorf((float)d * (s[i] = (float)sz[i] / (float)d)) != sz[i])
                return cv_refuse(c, n, "sizes over an input dim that is not known (or no float scale gives it)");
        }
    }
    ph_value *sv = floats(n, "scales", (size_t)k, s);
    if (!sv)
        return PH_ENOMEM;
    ph_value *roi = ph_node_input(n, 1);
    while (ph_node_input_count(n) > 1)
        if (ph_node_remove_input(n, ph_node_input_count(n) - 1))
            return PH_ENOMEM;
    if (ph_node_set_input(n, 1, sv))
        return PH_ENOMEM;
    if (roi)
        ph_value_prune(roi);
    if (scales)
        ph_value_prune(scales);
    if (sizes)
        ph_value_prune(sizes);
    static const char *const gone[] = {"coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
                                       "exclude_outside", "extrapolation_value"};
    for (size_t i = 0; i < sizeof gone / sizeof *gone; i++)
        ph_node_remove_attr(n, gone[i]);
    if (c->to < 10) {
        /* Upsample: scales an input from 9, an attribute before. */
        if (ph_node_set_op_type(n, "Upsample"))
            return PH_ENOMEM;
        if (c->to < 9 && (ph_node_set_attr_floats(n, "scales", (size_t)k, s) || cv_drop_input(n, 1)))
            return PH_ENOMEM;
    }
    return 1;
}

int cv_adapt_resize(cv *c, ph_node *n)
{
    ph_op op = ph_node_op(n);
    if (op != PH_OP_Resize && op != PH_OP_Upsample)
        return 0;
    if (c->to > c->from)
        return up(c, n);
    return down(c, n);
}
