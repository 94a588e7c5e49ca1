/* sdk/src/ir/input_init.c - a graph input of the main graph becomes an
 * initializer (user-given constant inputs; fold_constant_inputs). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

PH_API int ph_graph_input_to_initializer(ph_value *v, ph_tensor *t)
{
    if (!t)
        return PH_EINVAL;
    ph_graph *g = v && !v->dead && v->is_input ? v->graph : NULL;
    size_t pos = 0;
    while (g && pos < g->n_inputs && g->inputs[pos] != v)
        pos++;
    if (!g || g->parent || pos == g->n_inputs) {
        ph_tensor_free(t);
        return PH_EINVAL;
    }
    if (!v->tensor && ir_grow((void **)&g->inits, &g->cap_inits, g->n_inits + 1, sizeof *g->inits)) {
        ph_tensor_free(t);
        return PH_ENOMEM;
    }
    int rc = ph_value_set_type(v, ph_tensor_dtype(t), (int)ph_tensor_rank(t), ph_tensor_dims(t));
    if (rc) {
        ph_tensor_free(t);
        return rc;
    }
    if (v->tensor) { /* it had a default: the new data takes its place */
        ph_tensor_free(v->tensor);
        v->tensor = t;
    } else {
        v->tensor = t;
        v->init_pos = g->n_inits;
        g->inits[g->n_inits++] = v;
    }
    protobuf_c_message_free_unpacked(&g->input_vi[pos]->base, NULL);
    memmove(g->inputs + pos, g->inputs + pos + 1, (g->n_inputs - pos - 1) * sizeof *g->inputs);
    memmove(g->input_vi + pos, g->input_vi + pos + 1, (g->n_inputs - pos - 1) * sizeof *g->input_vi);
    g->n_inputs--;
    v->is_input = 0;
    g->model->init_version++;
    for (size_t i = 0; i < v->n_uses; i++)
        ir_notify_node_changed(v->uses[i].node);
    ir_notify_uses_changed(v);
    return 0;
}
