/* sdk/src/ir/observe.c - change notification: the IR calls whoever registered
 * on the model (shape inference, the rewrite driver) without knowing them. */
#include "internal.h"

int ir_observer_add(ph_model *m, const ir_observer_ops *ops, void *self)
{
    for (int i = 0; i < m->n_observers; i++)
        if (m->observers[i].ops == ops && m->observers[i].self == self)
            return 0;
    if (m->n_observers == IR_MAX_OBSERVERS)
        return PH_ENOMEM;
    m->observers[m->n_observers++] = (ir_observer){ops, self};
    return 0;
}

void ir_observer_remove(ph_model *m, const ir_observer_ops *ops, void *self)
{
    for (int i = 0; i < m->n_observers; i++)
        if (m->observers[i].ops == ops && m->observers[i].self == self) {
            m->observers[i] = m->observers[--m->n_observers];
            return;
        }
}

static ph_model *model_of_graph(const ph_graph *g) { return g ? g->model : NULL; }

#define NOTIFY(model, fn, arg)                                                 \
    do {                                                                       \
        ph_model *m_ = (model);                                                \
        if (!m_)                                                               \
            break;                                                             \
        for (int i_ = 0; i_ < m_->n_observers; i_++)                           \
            if (m_->observers[i_].ops->fn)                                     \
                m_->observers[i_].ops->fn(m_->observers[i_].self, arg);        \
    } while (0)

void ir_notify_node_changed(ph_node *n) { NOTIFY(model_of_graph(n->graph), node_changed, n); }
void ir_notify_input_replaced(ph_node *n, const ph_value *old, const ph_value *repl)
{
    ph_model *m = model_of_graph(n->graph);
    for (int i = 0; m && i < m->n_observers; i++) {
        const ir_observer_ops *ops = m->observers[i].ops;
        if (ops->input_replaced)
            ops->input_replaced(m->observers[i].self, n, old, repl);
        else if (ops->node_changed)
            ops->node_changed(m->observers[i].self, n);
    }
}

void ir_notify_uses_changed(ph_value *v) { NOTIFY(model_of_graph(v->graph), uses_changed, v); }
void ir_notify_node_freed(ph_model *m, ph_node *n) { NOTIFY(m, node_freed, n); }
void ir_notify_value_freed(ph_model *m, ph_value *v) { NOTIFY(m, value_freed, v); }
void ir_notify_graph_freed(ph_graph *g) { NOTIFY(g->model, graph_freed, g); }
void ir_notify_type_changed(ph_value *v) { NOTIFY(model_of_graph(v->graph), type_changed, v); }
void ir_notify_model_freed(ph_model *m) { NOTIFY(m, model_freed, m); }
