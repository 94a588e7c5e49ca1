/* sdk/src/pattern/rw_place.c - a rewrite's new node at a chosen place in the
 * node list (see ph_rw_node_after in pattern.h). */
#include <string.h>

#include "pattern.h"

PH_API ph_node *ph_rw_node_after(ph_rewriter *rw, ph_node *after, const char *op, size_t n_in,
                                 ph_value *const *inputs, size_t n_out)
{
    if (!after)
        return ph_rw_node(rw, op, n_in, inputs, n_out);
    if (ph_node_graph(after) != rw->g || ph_node_is_removed(after) || strchr(op, '@') ||
        pat_rw_room((void **)&rw->created, &rw->cap_created, rw->n_created + 1, sizeof *rw->created,
                    rw->created_own)) {
        rw->failed = PH_EINVAL;
        return NULL;
    }
    ph_node *n = ph_node_create(rw->g, ph_node_next(after), op, n_in, inputs, n_out);
    if (!n) {
        rw->failed = PH_EINVAL; /* an input out of scope, or out of memory */
        return NULL;
    }
    rw->created[rw->n_created++] = n;
    return n;
}
