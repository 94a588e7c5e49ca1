/* sdk/src/rulecheck/body.c - move an instance into a body, so that the
 * rule is checked where passes meet it inside control flow.  If: the main
 * graph keeps its inputs plus a bool `cond` input and holds one If whose
 * then and else branches are each a copy of the instance's nodes (its
 * constants copied in as the branch's initializers, its inputs read from
 * the outer scope); the If's outputs take the place of the outputs; the
 * evaluator runs either branch, as the random `cond` says.  Loop: one Loop
 * of one trip whose body is that copy, its outputs scan outputs squeezed
 * back to the original shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rulecheck/rulecheck.h"
#include "passhost/constant.h"

typedef struct vmap {
    const ph_value **from;
    ph_value **to;
    size_t n, cap;
} vmap;

static int vmap_put(vmap *m, const ph_value *from, ph_value *to)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        const ph_value **f = realloc(m->from, cap * sizeof *f);
        if (!f)
            return -1;
        m->from = f;
        ph_value **t = realloc(m->to, cap * sizeof *t);
        if (!t)
            return -1;
        m->to = t, m->cap = cap;
    }
    m->from[m->n] = from, m->to[m->n++] = to;
    return 0;
}

static ph_value *vmap_get(const vmap *m, const ph_value *from)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->from[i] == from)
            return m->to[i];
    return NULL;
}

/* Fill body b (tag names its initializers) with a copy of g's nodes and
 * g's outputs as its outputs, after `first` when not NULL (a Loop body's
 * condition).  0, or -1 (out of memory, or a node that cannot be copied). */
static int fill_body(ph_graph *b, const ph_graph *g, ph_node **nodes, size_t n_nodes, const char *tag,
                     ph_value *first)
{
    vmap m = {0};
    int rc = first && ph_graph_add_output(b, first) ? -1 : 0;
    for (size_t i = 0; i < ph_graph_initializer_count(g) && !rc; i++) {
        ph_value *v = ph_graph_initializer(g, i);
        char name[300];
        snprintf(name, sizeof name, "%.200s_%s", ph_value_name(v), tag);
        ph_tensor *t = ph_tensor_clone(ph_value_const(v));
        ph_value *c = t ? ph_graph_add_initializer(b, name, t) : NULL;
        rc = c && !vmap_put(&m, v, c) ? 0 : -1;
    }
    for (size_t k = 0; k < n_nodes && !rc; k++) {
        ph_node *n = nodes[k];
        size_t ni = ph_node_input_count(n), no = ph_node_output_count(n);
        ph_value **in = calloc(ni ? ni : 1, sizeof *in);
        if (!in) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < ni; i++) {
            ph_value *v = ph_node_input(n, i);
            ph_value *mv = v ? vmap_get(&m, v) : NULL;
            in[i] = v && !mv ? v : mv; /* a graph input: read from the outer scope */
        }
        ph_node *c = ph_node_create(b, NULL, ph_node_op_type(n), ni, in, no);
        free(in);
        if (!c || (ph_node_domain(n)[0] && ph_node_set_domain(c, ph_node_domain(n))) || ph_node_copy_attrs(c, n) < 0) {
            rc = -1;
            break;
        }
        for (size_t o = 0; o < no && !rc; o++) {
            ph_value *v = ph_node_output(n, o);
            if (v && ph_value_copy_type(ph_node_output(c, o), v))
                rc = -1;
            if (v && vmap_put(&m, v, ph_node_output(c, o)))
                rc = -1;
        }
    }
    for (size_t i = 0; i < ph_graph_output_count(g) && !rc; i++) {
        ph_value *v = vmap_get(&m, ph_graph_output(g, i));
        rc = v && ph_graph_add_output(b, v) == 0 ? 0 : -1;
    }
    free(m.from);
    free(m.to);
    return rc;
}

/* A Loop running once over the body: its outputs, of a leading axis of 1,
 * squeezed back.  The Loop's outputs in outs[0..n_out); 1 or -1. */
static int loop_once(ph_graph *g, ph_node **nodes, size_t k, size_t n_out, ph_value **outs)
{
    int64_t one = 1, zero = 0;
    ph_value *trips = ph_graph_add_initializer(g, "rulecheck_trips", ph_tensor_new(PH_DT_INT64, 0, NULL, &one));
    ph_value *in[2] = {trips, NULL};
    ph_node *loop = trips ? ph_node_create(g, NULL, "Loop", 2, in, n_out) : NULL;
    ph_graph *body = loop ? ph_node_add_subgraph(loop, "body") : NULL;
    ph_value *cond = body && ph_graph_add_input(body, "rulecheck_iter", PH_DT_INT64, 0, NULL)
                         ? ph_graph_add_input(body, "rulecheck_cond", PH_DT_BOOL, 0, NULL)
                         : NULL;
    ph_node *keep = cond ? ph_node_create(body, NULL, "Identity", 1, &cond, 1) : NULL;
    if (!keep || fill_body(body, g, nodes, k, "loop", ph_node_output(keep, 0)))
        return -1;
    int axes_input = ph_model_opset(ph_graph_model(g), "") >= 13;
    ph_value *axes = axes_input ? ph_graph_add_initializer(g, "rulecheck_axis0",
                                                           ph_tensor_new(PH_DT_INT64, 1, &one, &zero))
                                : NULL;
    for (size_t i = 0; i < n_out; i++) {
        ph_value *sq_in[2] = {ph_node_output(loop, i), axes};
        ph_node *sq = ph_node_create(g, NULL, "Squeeze", axes_input ? 2 : 1, sq_in, 1);
        if (!sq || (axes_input ? !axes : ph_node_set_attr_ints(sq, "axes", 1, &zero) < 0))
            return -1;
        outs[i] = ph_node_output(sq, 0);
    }
    return 1;
}

int rc_wrap_in_body(ph_model *model, int loop)
{
    ph_graph *g = ph_model_graph(model);
    size_t n_nodes = ph_graph_node_count(g), n_out = ph_graph_output_count(g), k = 0;
    ph_node **nodes = calloc(n_nodes ? n_nodes : 1, sizeof *nodes);
    if (!nodes)
        return -1;
    for (ph_node *n = ph_graph_first_node(g); n && k < n_nodes; n = ph_node_next(n))
        nodes[k++] = n;
    for (size_t i = 0; i < n_out; i++)
        if (!ph_value_producer(ph_graph_output(g, i))) { /* an input or constant returned as is: no body */
            free(nodes);
            return 0;
        }
    ph_value **outs = calloc(n_out ? n_out : 1, sizeof *outs);
    int rc = outs ? 1 : -1;
    if (rc == 1 && loop) {
        rc = loop_once(g, nodes, k, n_out, outs);
    } else if (rc == 1) {
        ph_value *cond = ph_graph_add_input(g, "cond", PH_DT_BOOL, 0, NULL);
        ph_node *iff = cond ? ph_node_create(g, NULL, "If", 1, &cond, n_out) : NULL;
        ph_graph *then_g = iff ? ph_node_add_subgraph(iff, "then_branch") : NULL;
        ph_graph *else_g = iff ? ph_node_add_subgraph(iff, "else_branch") : NULL;
        rc = then_g && else_g && !fill_body(then_g, g, nodes, k, "then", NULL) &&
                     !fill_body(else_g, g, nodes, k, "else", NULL)
                 ? 1
                 : -1;
        for (size_t i = 0; rc == 1 && i < n_out; i++)
            outs[i] = ph_node_output(iff, i);
    }
    free(nodes);
    for (size_t i = 0; rc == 1 && i < n_out; i++) {
        ph_value *old = ph_graph_output(g, i), *y = outs[i];
        if (ph_value_copy_type(y, old) || ph_value_replace(old, y))
            rc = -1;
    }
    free(outs);
    if (rc == 1)
        ph_graph_remove_dead(g);
    return rc;
}
