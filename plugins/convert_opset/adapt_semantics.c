/* plugins/convert_opset/adapt_semantics.c - operators whose semantics or
 * outputs changed: Softmax, LogSoftmax and Hardmax (13: one axis instead of
 * the input coerced to 2-D at axis), BatchNormalization (9: spatial
 * removed; 14: one output in inference, training_mode), Gemm (11: C
 * optional), ArgMax/ArgMin (12: select_last_index), MaxPool (8:
 * storage_order; 10: ceil_mode, dilations), AveragePool (10: ceil_mode;
 * 19: dilations), Scatter (removed at 11 for ScatterElements), Constant
 * (12: value_float, value_ints...), Reshape (14: allowzero) and the negative axes allowed from 11. */
#include <string.h>

#include "convert_opset.h"

#define MAXR 16

static int is_softmax(const char *op)
{
    return !strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax") || !strcmp(op, "Hardmax");
}

/* Replace n's output by `with` (which takes its type) and remove n. */
static int replace_node(ph_node *n, ph_value *with)
{
    ph_value *y = ph_node_output(n, 0);
    if (!with || ph_value_copy_type(with, y) || ph_value_replace(y, with))
        return PH_ENOMEM;
    char name[256];
    strncpy(name, ph_node_name(n), sizeof name - 1);
    name[sizeof name - 1] = 0;
    ph_node *p = ph_value_producer(with);
    return ph_node_remove(n) || (p && ph_node_set_name(p, name)) ? PH_ENOMEM : 1;
}

/* A new node of op before n reading in[0..k) with one output. */
static ph_node *before(ph_node *n, const char *op, size_t k, ph_value *const *in)
{
    return ph_node_create(ph_node_graph(n), n, op, k, in, 1);
}

static int softmax(cv *c, ph_node *n)
{
    if (!cv_crosses(c, 13))
        return 0;
    ph_value *x = ph_node_input(n, 0);
    int r = ph_value_rank(x);
    int64_t dflt = c->from < 13 ? 1 : -1, a = ph_node_attr_int(n, "axis", dflt);
    if (r < 0)
        return cv_refuse(c, n, "the rank of its input is not known, and the meaning of axis changed at opset 13");
    a += a < 0 ? r : 0;
    if (r == 0 || a == r - 1)
        return ph_node_set_attr_int(n, "axis", r > 0 ? r - 1 : 0) < 0 ? PH_ENOMEM : 1;
    if (a < 0 || a >= r)
        return cv_refuse(c, n, "axis %lld is out of range for rank %d", (long long)a, r);
    ph_node *sm;
    if (c->from < 13) {
        /* Before 13: over the dims from axis on, flattened. */
        ph_node *fl = before(n, "Flatten", 1, &x);
        ph_node *shape = before(n, "Shape", 1, &x);
        ph_value *fo = fl ? ph_node_output(fl, 0) : NULL;
        if (!fl || !shape || ph_node_set_attr_int(fl, "axis", a) || !(sm = before(n, ph_node_op_type(n), 1, &fo)) ||
            ph_node_set_attr_int(sm, "axis", 1))
            return PH_ENOMEM;
        ph_value *in[2] = {ph_node_output(sm, 0), ph_node_output(shape, 0)};
        ph_node *rs = before(n, "Reshape", 2, in);
        return replace_node(n, rs ? ph_node_output(rs, 0) : NULL);
    }
    /* From 13, down: over one axis; moved last by a Transpose and back. */
    int64_t perm[MAXR];
    if (r > MAXR)
        return cv_refuse(c, n, "rank %d", r);
    for (int i = 0; i < r; i++)
        perm[i] = i;
    perm[a] = r - 1, perm[r - 1] = a;
    ph_node *t1 = before(n, "Transpose", 1, &x);
    ph_value *to = t1 ? ph_node_output(t1, 0) : NULL;
    if (!t1 || ph_node_set_attr_ints(t1, "perm", (size_t)r, perm) || !(sm = before(n, ph_node_op_type(n), 1, &to)) ||
        ph_node_set_attr_int(sm, "axis", r - 1))
        return PH_ENOMEM;
    ph_value *so = ph_node_output(sm, 0);
    ph_node *t2 = before(n, "Transpose", 1, &so);
    if (!t2 || ph_node_set_attr_ints(t2, "perm", (size_t)r, perm))
        return PH_ENOMEM;
    return replace_node(n, ph_node_output(t2, 0));
}

static int batchnorm(cv *c, ph_node *n)
{
    int changed = 0, rc;
    if (cv_up(c, 9)) {
        if (ph_node_attr_int(n, "spatial", 1) == 0)
            return cv_refuse(c, n, "spatial = 0 (statistics per element, not per channel) does not exist from opset 9");
        changed = ph_node_remove_attr(n, "spatial") > 0;
    }
    if (cv_up(c, 14) && ph_node_output_count(n) > 1) {
        for (size_t o = 1; o < ph_node_output_count(n); o++)
            if (ph_value_use_count(ph_node_output(n, o)) || ph_value_graph_output_count(ph_node_output(n, o)))
                return cv_refuse(c, n, "its output %zu (running statistics of training) is used; from opset 14 "
                                       "an inference BatchNormalization has one output", o);
        return cv_keep_outputs(n, 1) ? 1 : PH_ENOMEM;
    }
    if (cv_down(c, 14) && (rc = cv_drop_default_int(c, n, "training_mode", 0)) != 0)
        return rc;
    return changed;
}

static int gemm(cv *c, ph_node *n)
{
    if (!cv_down(c, 11) || ph_node_input(n, 2))
        return 0;
    int dt = ph_value_dtype(ph_node_input(n, 0));
    ph_value *zero = cv_scalar(n, "gemm_c", dt ? dt : PH_DT_FLOAT, 0.0, 0);
    return zero && !cv_set_input(n, 2, zero) ? 1 : PH_ENOMEM;
}

/* Attribute attr (ints) of n when every entry is 1 is dropped; else refused. */
static int drop_ones(cv *c, ph_node *n, const char *attr)
{
    const int64_t *v;
    ptrdiff_t k = ph_node_attr_ints(n, attr, &v);
    for (ptrdiff_t i = 0; i < k; i++)
        if (v[i] != 1)
            return cv_refuse(c, n, "%s other than 1 do not exist at opset %lld", attr, (long long)c->to);
    return k < 0 ? 0 : ph_node_remove_attr(n, attr) < 0 ? PH_ENOMEM : 1;
}

static int pool(cv *c, ph_node *n, int max)
{
    int changed = 0, rc = 0;
    if (cv_down(c, 10) && (rc = cv_drop_default_int(c, n, "ceil_mode", 0)) < 0)
        return rc;
    changed |= rc;
    if ((max ? cv_down(c, 10) : cv_down(c, 19)) && (rc = drop_ones(c, n, "dilations")) < 0)
        return rc;
    changed |= rc;
    if (max && cv_down(c, 8) && (rc = cv_drop_default_int(c, n, "storage_order", 0)) < 0)
        return rc;
    return changed | rc;
}

static int constant(cv *c, ph_node *n)
{
    static const char *const forms[] = {"value_float", "value_int", "value_floats", "value_ints"};
    if (!cv_down(c, 12) || ph_node_attr_type(n, "value") != PH_ATTR_NONE)
        return 0;
    ph_tensor *t = NULL;
    int rc = ph_constant_node_tensor(n, &t);
    if (rc == PH_ENOTFOUND)
        return 0; /* a string / sparse value the final check names */
    if (rc || ph_node_set_attr_tensor(n, "value", t))
        return PH_ENOMEM;
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        if (ph_node_remove_attr(n, forms[i]) < 0)
            return PH_ENOMEM;
    return 1;
}

/* Before 11 an axis is never negative: written from the rank, when known. */
static int positive_axis(cv *c, ph_node *n, int out_rank)
{
    if (!cv_down(c, 11) || ph_node_attr_type(n, "axis") != PH_ATTR_INT || ph_node_attr_int(n, "axis", 0) >= 0)
        return 0;
    int r = out_rank ? ph_value_rank(ph_node_output(n, 0)) : ph_value_rank(ph_node_input(n, 0));
    if (r < 0)
        return cv_refuse(c, n, "a negative axis needs the rank, which is not known, before opset 11");
    return ph_node_set_attr_int(n, "axis", ph_node_attr_int(n, "axis", 0) + r) < 0 ? PH_ENOMEM : 1;
}

int cv_adapt_semantics(cv *c, ph_node *n)
{
    const char *op = ph_node_op_type(n);
    int rc;
    if (is_softmax(op))
        return softmax(c, n);
    if (!strcmp(op, "BatchNormalization"))
        return batchnorm(c, n);
    if (!strcmp(op, "Gemm"))
        return gemm(c, n);
    if (!strcmp(op, "ArgMax") || !strcmp(op, "ArgMin")) {
        if (cv_down(c, 12) && (rc = cv_drop_default_int(c, n, "select_last_index", 0)) < 0)
            return rc;
        return positive_axis(c, n, 0);
    }
    if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool"))
        return pool(c, n, op[0] == 'M');
    if (!strcmp(op, "Scatter") && cv_up(c, 11))
        return ph_node_set_op_type(n, "ScatterElements") ? PH_ENOMEM : 1;
    if (!strcmp(op, "ScatterElements") && cv_down(c, 11)) {
        if (cv_down(c, 16) && (rc = strcmp(ph_node_attr_string(n, "reduction", "none"), "none")) != 0)
            return cv_refuse(c, n, "reduction '%s' does not exist at opset %lld",
                             ph_node_attr_string(n, "reduction", "none"), (long long)c->to);
        ph_node_remove_attr(n, "reduction");
        return ph_node_set_op_type(n, "Scatter") ? PH_ENOMEM : 1;
    }
    if (!strcmp(op, "Constant"))
        return constant(c, n);
    if (!strcmp(op, "Reshape") && cv_down(c, 14) && ph_node_attr_type(n, "allowzero") != PH_ATTR_NONE) {
        /* allowzero = 1 differs only where the shape has a 0. */
        int64_t shape[64];
        ptrdiff_t k = ph_node_attr_int(n, "allowzero", 0) ? ph_value_const_ints(ph_node_input(n, 1), shape, NULL, 64) : 0;
        for (ptrdiff_t i = 0; i < k; i++)
            if (shape[i] == 0)
                k = -1;
        if (k < 0)
            return cv_refuse(c, n, "allowzero = 1 with a shape that has (or may have) a 0 does not exist before opset 14");
        return ph_node_remove_attr(n, "allowzero") < 0 ? PH_ENOMEM : 1;
    }
    if (!strcmp(op, "Concat") || !strcmp(op, "Gather") || !strcmp(op, "Flatten") || !strcmp(op, "Split") ||
        !strcmp(op, "Compress") || !strcmp(op, "OneHot"))
        return positive_axis(c, n, 0);
    return 0;
}
