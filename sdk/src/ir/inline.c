/* sdk/src/ir/inline.c - a body's nodes in place of the node that holds it
 * (ph_node_inline_subgraph, ir.h; added for inline_constant_if).
 *
 * The body's nodes, initializers and value_info move into the node's graph
 * just before it: value names are unique in the whole model, so they keep
 * their names; a node name another node of the model also has is made
 * unique.  The node's outputs are then replaced by the body's outputs and
 * the node, with the bodies it still holds, is removed.  Cost: the moved
 * nodes and the node's outputs. */
#include <stdlib.h>

#include "internal.h"

/* Output i of n takes the value b (a body output, now in n's graph or
 * around it); an Identity stands between when b cannot take the place
 * (b is a graph input, an outer value where a graph output needs a node,
 * an initializer as a body output, or already another output). */
static int take_output(ph_node *n, size_t i, ph_value *b)
{
    ph_value *o = n->outputs[i];
    if (!o)
        return 0;
    if (ph_value_can_replace(o, b))
        return ph_value_replace(o, b);
    if (o == b)
        return PH_EINVAL;
    ph_node *id = ph_node_create(n->graph, n, "Identity", 1, &b, 1);
    if (!id)
        return PH_ENOMEM;
    ph_value *y = ph_node_output(id, 0);
    int rc = ph_value_copy_type(y, o);
    return rc ? rc : ph_value_replace(o, y);
}

PH_API int ph_node_inline_subgraph(ph_node *n, size_t index)
{
    if (!n || n->removed || index >= ir_node_n_subgraphs(n))
        return PH_EINVAL;
    ph_graph *g = n->graph, *body = ir_node_subgraphs(n)[index].graph;
    if (body->n_inputs || body->n_outputs != n->n_outputs)
        return PH_EINVAL;
    for (size_t i = 0; i < body->n_outputs; i++)
        if (!body->outputs[i].value || body->outputs[i].value->dead)
            return PH_EINVAL;
    /* room first: nothing below fails before the graph changes */
    ph_value **outs = malloc((body->n_outputs ? body->n_outputs : 1) * sizeof *outs);
    if (!outs || ir_grow((void **)&g->inits, &g->cap_inits, g->n_inits + body->n_inits, sizeof *g->inits) ||
        ir_grow((void **)&g->value_info, &g->cap_value_info, g->n_value_info + body->n_value_info,
                 sizeof *g->value_info)) {
        free(outs);
        return PH_ENOMEM;
    }
    int moved = 0;
    for (size_t i = 0; i < body->n_inits; i++) {
        ph_value *v = body->inits[i];
        if (!v)
            continue;
        body->inits[i] = NULL;
        v->graph = g;
        v->init_pos = g->n_inits;
        g->inits[g->n_inits++] = v;
        moved = 1;
    }
    body->inits_holes = body->n_inits > 0;
    if (moved)
        g->model->init_version++;
    for (size_t i = 0; i < body->n_value_info; i++)
        g->value_info[g->n_value_info++] = body->value_info[i];
    body->n_value_info = 0;
    for (ph_node *k = body->first, *next; k; k = next) {
        next = k->next;
        ir_node_move(k, g, n);
        if (ir_node_name_count(g->model, k->name) > 1) {
            const char *name = ph_graph_unique_name(g, k->name);
            if (!name || ph_node_set_name(k, name))
                ir_alloc_failed(g->model); /* a duplicate node name is still a valid model */
        }
    }
    /* the body's output slots let go of their values */
    for (size_t i = 0; i < body->n_outputs; i++) {
        outs[i] = body->outputs[i].value;
        outs[i]->n_output_refs--;
        protobuf_c_message_free_unpacked(&body->outputs[i].vi->base, NULL);
        ir_notify_uses_changed(outs[i]);
    }
    size_t n_outs = body->n_outputs;
    body->n_outputs = 0;
    int rc = 0;
    for (size_t i = 0; i < n_outs && !rc; i++)
        rc = take_output(n, i, outs[i]);
    free(outs);
    return rc ? rc : ph_node_remove(n);
}
