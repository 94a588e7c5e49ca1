/* sdk/src/ir/observe.c - change notification: the IR calls whoever registered
 * on the model (shape inference, the rewrite driver) without knowing them. */
#include "internal.h"

/* The listeners of each hot event, from observers[] (in its order). */
static void listen_update(ph_model *m)
{
    for (int e = 0; e < IR_EV__COUNT; e++)
        m->listen[e][0] = 0;
    for (int i = 0; i < m->n_observers; i++) {
        const ir_observer_ops *ops = m->observers[i].ops;
        int on[IR_EV__COUNT] = {
            [IR_EV_NODE_CHANGED] = ops->node_changed != NULL,
            [IR_EV_INPUT_REPLACED] = ops->input_replaced || ops->node_changed,
            [IR_EV_USES_CHANGED] = ops->uses_changed != NULL,
            [IR_EV_NODE_REMOVED] = ops->node_removed != NULL,
        };
        for (int e = 0; e < IR_EV__COUNT; e++)
            if (on[e])
                m->listen[e][1 + m->listen[e][0]++] = (unsigned char)i;
    }
}

int ir_observer_add(ph_model *m, const ir_observer_ops *ops, void *self)
{
    for (int i = 0; i < m->n_observers; i++)
        if (m->observers[i].ops == ops && m->observers[i].self == self)
            return 0;
    if (m->n_observers == IR_MAX_OBSERVERS)
        return PH_ENOMEM;
    m->observers[m->n_observers++] = (ir_observer){ops, self};
    listen_update(m);
    return 0;
}

void ir_observer_remove(ph_model *m, const ir_observer_ops *ops, void *self)
{
    for (int i = 0; i < m->n_observers; i++)
        if (m->observers[i].ops == ops && m->observers[i].self == self) {
            m->observers[i] = m->observers[--m->n_observers];
            listen_update(m);
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

/* The listeners of hot event e (IR_EV_*), each called as CALL(o) with o
 * its ir_observer. */
#define NOTIFY_HOT(model, e, CALL)                                             \
    do {                                                                       \
        ph_model *m_ = (model);                                                \
        if (!m_)                                                               \
            break;                                                             \
        const unsigned char *l_ = m_->listen[e];                               \
        for (int i_ = 1; i_ <= l_[0]; i_++) {                                  \
            const ir_observer *o = &m_->observers[l_[i_]];                     \
            CALL;                                                              \
        }                                                                      \
    } while (0)

void ir_notify_node_changed(ph_node *n)
{
    NOTIFY_HOT(model_of_graph(n->graph), IR_EV_NODE_CHANGED, o->ops->node_changed(o->self, n));
}

void ir_notify_input_replaced(ph_node *n, const ph_value *old, const ph_value *repl)
{
    NOTIFY_HOT(model_of_graph(n->graph), IR_EV_INPUT_REPLACED,
               o->ops->input_replaced ? o->ops->input_replaced(o->self, n, old, repl)
                                      : o->ops->node_changed(o->self, n));
}

void ir_notify_uses_changed(ph_value *v)
{
    NOTIFY_HOT(model_of_graph(v->graph), IR_EV_USES_CHANGED, o->ops->uses_changed(o->self, v));
}

void ir_notify_node_removed(ph_model *m, ph_node *n)
{
    NOTIFY_HOT(m, IR_EV_NODE_REMOVED, o->ops->node_removed(o->self, n));
}

void ir_notify_node_freed(ph_model *m, ph_node *n) { NOTIFY(m, node_freed, n); }
void ir_notify_value_freed(ph_model *m, ph_value *v) { NOTIFY(m, value_freed, v); }
void ir_notify_graph_freed(ph_graph *g) { NOTIFY(g->model, graph_freed, g); }
void ir_notify_type_changed(ph_value *v) { NOTIFY(model_of_graph(v->graph), type_changed, v); }
void ir_notify_model_freed(ph_model *m) { NOTIFY(m, model_freed, m); }
