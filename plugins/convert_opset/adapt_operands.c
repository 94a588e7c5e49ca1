/* plugins/convert_opset/adapt_operands.c - operands that moved between an
 * attribute and an input: Squeeze, Unsqueeze and ReduceSum (axes, 13), the
 * other Reduce* (axes, 18), Split (split 13, num_outputs 18), Clip (min and
 * max, 11), Pad (pads and value 11, axes 18), Slice (starts, ends, axes,
 * steps 10), TopK (K 10; largest and sorted 11), Dropout (ratio and
 * training_mode 12).  Up: the attribute becomes a constant input.  Down: a
 * constant input becomes the attribute; a computed one is refused. */
#include <string.h>

#include "convert_opset.h"

#define MAXR 64

static int is_reduce(const char *op)
{
    static const char *const ops[] = {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                                      "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", NULL};
    for (size_t i = 0; ops[i]; i++)
        if (!strcmp(op, ops[i]))
            return 1;
    return 0;
}

/* axes between attribute and input 1 at version v; noop_with_empty_axes
 * exists from v for the Reduce ops. */
static int axes_at(cv *c, ph_node *n, int64_t v, int reduce)
{
    int changed = 0, rc = 0;
    if (cv_up(c, v))
        return cv_attr_to_input(c, n, "axes", 1);
    if (!cv_down(c, v))
        return 0;
    if (reduce && ph_node_attr_int(n, "noop_with_empty_axes", 0)) {
        int64_t tmp[MAXR];
        if (!ph_node_input(n, 1) || ph_value_const_ints(ph_node_input(n, 1), tmp, NULL, MAXR) == 0)
            return cv_refuse(c, n, "noop_with_empty_axes = 1 with no axes (an identity) does not exist at opset %lld",
                             (long long)c->to);
    }
    if (reduce && (rc = cv_drop_default_int(c, n, "noop_with_empty_axes", 0)) < 0)
        return rc;
    changed |= rc > 0;
    /* An empty axes input is the default: no attribute. */
    int64_t tmp[1];
    if (ph_node_input(n, 1) && ph_value_const_ints(ph_node_input(n, 1), tmp, NULL, 1) == 0)
        return cv_drop_input(n, 1) ? PH_ENOMEM : 1;
    rc = cv_input_to_attr(c, n, 1, "axes");
    return rc < 0 ? rc : (changed | rc);
}

static int split(cv *c, ph_node *n)
{
    int changed = 0, rc;
    size_t outs = ph_node_output_count(n);
    if (cv_down(c, 18) && ph_node_attr_type(n, "num_outputs") != PH_ATTR_NONE) {
        /* num_outputs: parts of ceil(dim / n), the last smaller; equal parts
         * need no split list. */
        int64_t k = ph_node_attr_int(n, "num_outputs", 0), axis = ph_node_attr_int(n, "axis", 0);
        ph_value *x = ph_node_input(n, 0);
        int r = ph_value_rank(x);
        int64_t d = r > 0 ? ph_value_dim(x, (int)(axis < 0 ? axis + r : axis)) : -1;
        if (k < 1 || d < 0)
            return cv_refuse(c, n, "num_outputs over a dim that is not known has no split list at opset %lld",
                             (long long)c->to);
        if (d % k) {
            int64_t sizes[MAXR], part = (d + k - 1) / k;
            if (k > MAXR)
                return cv_refuse(c, n, "too many outputs");
            for (int64_t i = 0; i < k; i++)
                sizes[i] = i < k - 1 ? part : d - part * (k - 1);
            ph_value *v = c->to >= 13 ? cv_ints(n, "split", (size_t)k, sizes) : NULL;
            if (c->to >= 13 ? !v || cv_set_input(n, 1, v) : ph_node_set_attr_ints(n, "split", (size_t)k, sizes) < 0)
                return PH_ENOMEM;
        }
        if (ph_node_remove_attr(n, "num_outputs") < 0)
            return PH_ENOMEM;
        changed = 1;
    }
    if (cv_up(c, 13) && (rc = cv_attr_to_input(c, n, "split", 1)) != 0)
        return rc;
    if (cv_down(c, 13) && (rc = cv_input_to_attr(c, n, 1, "split")) != 0)
        return rc;
    if (cv_up(c, 18) && !ph_node_input(n, 1) && ph_node_attr_type(n, "num_outputs") == PH_ATTR_NONE) {
        /* From 18 a Split without split sizes says how many outputs. */
        if (ph_node_set_attr_int(n, "num_outputs", (int64_t)outs) < 0)
            return PH_ENOMEM;
        changed = 1;
    }
    return changed;
}

static int clip(cv *c, ph_node *n)
{
    if (cv_up(c, 11)) {
        int dt = ph_value_dtype(ph_node_input(n, 0));
        float lo = ph_node_attr_float(n, "min", -3.402823466e38f), hi = ph_node_attr_float(n, "max", 3.402823466e38f);
        int has_lo = ph_node_attr_type(n, "min") != PH_ATTR_NONE, has_hi = ph_node_attr_type(n, "max") != PH_ATTR_NONE;
        if (!has_lo && !has_hi)
            return 0;
        if (dt == PH_DT_UNDEFINED)
            dt = PH_DT_FLOAT;
        ph_value *vlo = has_lo ? cv_scalar(n, "clip_min", dt, lo, 0) : NULL;
        ph_value *vhi = has_hi ? cv_scalar(n, "clip_max", dt, hi, 0) : NULL;
        if ((has_lo && (!vlo || cv_set_input(n, 1, vlo))) || (has_hi && (!vhi || cv_set_input(n, 2, vhi))))
            return PH_ENOMEM;
        ph_node_remove_attr(n, "min");
        ph_node_remove_attr(n, "max");
        return 1;
    }
    if (!cv_down(c, 11))
        return 0;
    static const char *const names[2] = {"min", "max"};
    int changed = 0;
    for (size_t i = 2; i >= 1; i--) {
        ph_value *v = ph_node_input(n, i);
        double d;
        if (!v)
            continue;
        if (cv_const_scalar(v, &d))
            return cv_refuse(c, n, "its %s ('%s') is computed, and at opset %lld it is a float attribute",
                             names[i - 1], ph_value_name(v), (long long)c->to);
        if (ph_node_set_attr_float(n, names[i - 1], (float)d) < 0 || cv_drop_input(n, i))
            return PH_ENOMEM;
        changed = 1;
    }
    return changed;
}

static int pad(cv *c, ph_node *n)
{
    int changed = 0, rc;
    ph_value *x = ph_node_input(n, 0);
    if (cv_down(c, 19) && !strcmp(ph_node_attr_string(n, "mode", "constant"), "wrap"))
        return cv_refuse(c, n, "mode 'wrap' does not exist at opset %lld", (long long)c->to);
    if (cv_down(c, 18) && ph_node_input(n, 3)) {
        /* axes: the pads of the other axes are 0. */
        int64_t axes[MAXR], pads[2 * MAXR], full[2 * MAXR] = {0};
        int r = ph_value_rank(x);
        ptrdiff_t na = ph_value_const_ints(ph_node_input(n, 3), axes, NULL, MAXR);
        ptrdiff_t np = ph_value_const_ints(ph_node_input(n, 1), pads, NULL, 2 * MAXR);
        if (na < 0 || np != 2 * na || r < 0 || r > MAXR)
            return cv_refuse(c, n, "its axes or pads are computed, or the rank is not known: the full pads list of "
                                   "opset %lld cannot be written", (long long)c->to);
        for (ptrdiff_t i = 0; i < na; i++) {
            int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
            if (a < 0 || a >= r)
                return cv_refuse(c, n, "axis %lld is out of range", (long long)axes[i]);
            full[a] = pads[i], full[a + r] = pads[i + na];
        }
        ph_value *v = cv_ints(n, "pads", (size_t)(2 * r), full);
        if (!v || cv_set_input(n, 1, v) || cv_drop_input(n, 3))
            return PH_ENOMEM;
        changed = 1;
    }
    if (cv_up(c, 11)) {
        if ((rc = cv_attr_to_input(c, n, "pads", 1)) < 0)
            return rc;
        changed |= rc;
        if (ph_node_attr_type(n, "value") != PH_ATTR_NONE) {
            int dt = ph_value_dtype(x);
            double v = ph_node_attr_float(n, "value", 0.0f);
            ph_value *cvv = cv_scalar(n, "pad_value", dt ? dt : PH_DT_FLOAT, v, 0);
            if (!cvv || cv_set_input(n, 2, cvv) || ph_node_remove_attr(n, "value") < 0)
                return PH_ENOMEM;
            changed = 1;
        }
        return changed;
    }
    if (!cv_down(c, 11))
        return changed;
    ph_value *cval = ph_node_input(n, 2);
    if (cval) {
        double d;
        if (cv_const_scalar(cval, &d))
            return cv_refuse(c, n, "its constant_value ('%s') is computed, and at opset %lld it is a float attribute",
                             ph_value_name(cval), (long long)c->to);
        if (ph_node_set_attr_float(n, "value", (float)d) < 0 || cv_drop_input(n, 2))
            return PH_ENOMEM;
    }
    rc = cv_input_to_attr(c, n, 1, "pads");
    return rc < 0 ? rc : 1;
}

static int slice(cv *c, ph_node *n)
{
    static const char *const names[4] = {"starts", "ends", "axes", "steps"};
    if (cv_up(c, 10)) {
        int rc = 0;
        for (size_t i = 0; i < 3 && rc >= 0; i++)
            rc = cv_attr_to_input(c, n, names[i], i + 1);
        return rc < 0 ? rc : 1;
    }
    if (!cv_down(c, 10))
        return 0;
    ph_value *steps = ph_node_input(n, 4);
    if (steps) {
        int64_t s[MAXR];
        ptrdiff_t k = ph_value_const_ints(steps, s, NULL, MAXR);
        for (ptrdiff_t i = 0; i < k; i++)
            if (s[i] != 1)
                k = -1;
        if (k < 0)
            return cv_refuse(c, n, "steps other than 1 (or computed) do not exist at opset %lld", (long long)c->to);
        if (cv_drop_input(n, 4))
            return PH_ENOMEM;
    }
    for (size_t i = 3; i >= 1; i--) {
        int rc = cv_input_to_attr(c, n, i, names[i - 1]);
        if (rc < 0)
            return rc;
    }
    return 1;
}

static int topk(cv *c, ph_node *n)
{
    int rc, changed = 0;
    if (cv_down(c, 11)) {
        if ((rc = cv_drop_default_int(c, n, "largest", 1)) < 0 || (changed = rc, rc = cv_drop_default_int(c, n, "sorted", 1)) < 0)
            return rc;
        changed |= rc;
    }
    if (cv_up(c, 10)) {
        int64_t k = ph_node_attr_int(n, "k", -1);
        if (k < 0)
            return 0;
        ph_value *v = cv_ints(n, "k", 1, &k);
        if (!v || cv_set_input(n, 1, v) || ph_node_remove_attr(n, "k") < 0)
            return PH_ENOMEM;
        return 1;
    }
    if (!cv_down(c, 10))
        return changed;
    int64_t k[1];
    if (ph_value_const_ints(ph_node_input(n, 1), k, NULL, 1) != 1)
        return cv_refuse(c, n, "its K ('%s') is computed, and at opset %lld it is the attribute k",
                         ph_value_name(ph_node_input(n, 1)), (long long)c->to);
    if (ph_node_set_attr_int(n, "k", k[0]) < 0 || cv_drop_input(n, 1))
        return PH_ENOMEM;
    return 1;
}

static int dropout(cv *c, ph_node *n)
{
    if (cv_up(c, 12)) {
        if (ph_node_attr_type(n, "ratio") == PH_ATTR_NONE)
            return 0;
        int dt = ph_value_dtype(ph_node_input(n, 0));
        ph_value *r = cv_scalar(n, "ratio", ph_dtype_is_float(dt) ? dt : PH_DT_FLOAT,
                                ph_node_attr_float(n, "ratio", 0.5f), 0);
        if (!r || cv_set_input(n, 1, r) || ph_node_remove_attr(n, "ratio") < 0)
            return PH_ENOMEM;
        return 1;
    }
    if (!cv_down(c, 12))
        return 0;
    ph_value *tm = ph_node_input(n, 2), *ratio = ph_node_input(n, 1);
    double d;
    if (tm && (cv_const_scalar(tm, &d) || d != 0))
        return cv_refuse(c, n, "training_mode is true or computed; before opset 12 Dropout is inference only");
    if (tm && cv_drop_input(n, 2))
        return PH_ENOMEM;
    if (ratio) {
        if (cv_const_scalar(ratio, &d))
            return cv_refuse(c, n, "its ratio ('%s') is computed, and at opset %lld it is a float attribute",
                             ph_value_name(ratio), (long long)c->to);
        if (ph_node_set_attr_float(n, "ratio", (float)d) < 0 || cv_drop_input(n, 1))
            return PH_ENOMEM;
    }
    return 1;
}

int cv_adapt_operands(cv *c, ph_node *n)
{
    const char *op = ph_node_op_type(n);
    if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze"))
        return axes_at(c, n, 13, 0);
    if (!strcmp(op, "ReduceSum"))
        return axes_at(c, n, 13, 1);
    if (is_reduce(op))
        return axes_at(c, n, 18, 1);
    if (!strcmp(op, "Split"))
        return split(c, n);
    if (!strcmp(op, "Clip"))
        return clip(c, n);
    if (!strcmp(op, "Pad"))
        return pad(c, n);
    if (!strcmp(op, "Slice"))
        return slice(c, n);
    if (!strcmp(op, "TopK"))
        return topk(c, n);
    if (!strcmp(op, "Dropout"))
        return dropout(c, n);
    return 0;
}
