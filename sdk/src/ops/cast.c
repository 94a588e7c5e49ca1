/* sdk/src/ops/cast.c - a Cast of a value to another dtype, typed like the
 * value (see ph_cast_create in op_helpers.h).  Added for convert_float16,
 * type_cast_narrow and topk_int32_fix, which each built it by hand. */
#include "passhost/passhost.h"

/* Cast node n (reading x): to = dtype, its output typed like x with dtype
 * to.  0 or PH_ENOMEM. */
static int make_cast(ph_node *n, ph_value *x, int to)
{
    ph_value *y = ph_node_output(n, 0);
    if (ph_node_set_attr_int(n, "to", to) || ph_value_copy_type(y, x) || ph_value_set_dtype(y, to))
        return PH_ENOMEM;
    return 0;
}

PH_API ph_value *ph_cast_create(ph_graph *g, ph_node *before, ph_value *x, int to)
{
    if (!g || !x)
        return NULL;
    ph_node *n = ph_node_create(g, before, "Cast", 1, &x, 1);
    if (!n)
        return NULL;
    if (make_cast(n, x, to)) {
        ph_node_remove(n);
        return NULL;
    }
    return ph_node_output(n, 0);
}

PH_API ph_value *ph_rw_cast(ph_rewriter *rw, ph_value *x, int to)
{
    ph_node *n = x ? ph_rw_node(rw, "Cast", 1, &x, 1) : NULL;
    if (!n || make_cast(n, x, to)) {
        ph_rw_fail(rw, x ? PH_ENOMEM : PH_EINVAL);
        return NULL;
    }
    return ph_node_output(n, 0);
}
