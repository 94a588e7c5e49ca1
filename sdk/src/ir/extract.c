/* sdk/src/ir/extract.c - the part of a model between some of its values
 * (ph_graph_extract, ir.h), as onnx.utils.extract_model and Polygraphy's
 * `surgeon extract` cut it.
 *
 * A walk back from the outputs, stopping at the given inputs, finds the
 * nodes the outputs need (with what their bodies read from the main graph)
 * and checks the cut: every value reached is a given input, a constant or
 * computed by a node reached; every given input is reached.  Only then does
 * the graph change: the given inputs become its inputs (a node output gives
 * its value to the new input and gets a fresh one), the given outputs its
 * outputs, and what is left unreachable goes.  Cost: the graph, once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct cut {
    ph_graph *g;
    ph_value **in, **out;
    size_t n_in, n_out;
    char *in_used;        /* per input: an output depends on it */
    ph_node **stack;      /* nodes to visit */
    size_t n_stack, cap_stack;
    ph_error *err;
    int rc;
} cut;

static ptrdiff_t index_in(ph_value *const *list, size_t n, const ph_value *v)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == v)
            return (ptrdiff_t)i;
    return -1;
}

/* A value of the main graph by name; an error naming the option otherwise. */
static ph_value *resolve(cut *c, const char *what, const char *name)
{
    ph_value *v = name ? ir_graph_value(c->g, name) : NULL;
    if (v)
        return v;
    ph_value *any = name ? ir_names_get(&c->g->model->value_names, name) : NULL;
    if (!any) {
        c->rc = ph_error_set(c->err, PH_ENOTFOUND, "%s '%s': no value of that name in the model", what,
                             name ? name : "");
        return NULL;
    }
    c->rc = ph_error_set(c->err, PH_EINVAL, "%s '%s': a value inside an If/Loop/Scan body, not of "
                         "the main graph", what, name);
    return NULL;
}

/* v is read by a node the outputs need: a given input, a constant, a node
 * output (its node is needed too), or the cut misses it. */
static void need(cut *c, const ph_value *v, const ph_node *reader)
{
    if (c->rc || !v || v->graph != c->g)
        return; /* a body's own value: its node carries it */
    ptrdiff_t k = index_in(c->in, c->n_in, v);
    if (k >= 0) {
        c->in_used[k] = 1;
        return;
    }
    if (v->producer) {
        ph_node *p = v->producer;
        if (p->mark)
            return;
        p->mark = 1;
        if (ir_grow((void **)&c->stack, &c->cap_stack, c->n_stack + 1, sizeof *c->stack)) {
            c->rc = ph_error_set(c->err, PH_ENOMEM, "out of memory");
            return;
        }
        c->stack[c->n_stack++] = p;
        return;
    }
    if (v->tensor)
        return; /* an initializer (or an input with a default: it becomes a constant) */
    c->rc = ph_error_set(c->err, PH_EINVAL,
                         "the cut leaves '%s' unreachable: node '%s' (%s) needs it and it is a "
                         "graph input not among the inputs given; add it to them",
                         v->name, ph_node_name(reader), ph_node_op_type(reader));
}

/* The values n and its bodies read from the main graph. */
static void need_inputs(cut *c, const ph_node *n, const ph_node *reader)
{
    for (size_t i = 0; i < n->n_inputs && !c->rc; i++)
        need(c, n->inputs[i], reader);
    for (size_t s = 0; s < ir_node_n_subgraphs(n) && !c->rc; s++)
        for (const ph_node *k = ir_node_subgraphs(n)[s].graph->first; k && !c->rc; k = k->next)
            need_inputs(c, k, reader);
}

/* Give v (a node output) to a new graph input; its node gets a fresh,
 * unused output value in its place. */
static int make_input(ph_graph *g, ph_value *v, Onnx__ValueInfoProto **vi)
{
    ph_node *p = v->producer;
    char hint[300];
    snprintf(hint, sizeof hint, "%s__cut", v->name);
    const char *name = ph_graph_unique_name(g, hint);
    ph_value *repl = name ? ir_value_new(g, name) : NULL;
    if (!repl)
        return PH_ENOMEM;
    repl->producer = p;
    repl->out_index = v->out_index;
    p->outputs[v->out_index] = repl;
    v->producer = NULL;
    v->out_index = 0;
    v->is_input = 1;
    *vi = ir_value_info_new(v);
    return *vi ? 0 : PH_ENOMEM;
}

static int check_names(cut *c, const char *const *inputs, const char *const *outputs)
{
    for (size_t i = 0; i < c->n_out && !c->rc; i++) {
        c->out[i] = resolve(c, "output", outputs[i]);
        if (c->out[i] && index_in(c->out, i, c->out[i]) >= 0)
            c->rc = ph_error_set(c->err, PH_EINVAL, "output '%s' is given twice", outputs[i]);
    }
    for (size_t i = 0; i < c->n_in && inputs && !c->rc; i++) {
        ph_value *v = c->in[i] = resolve(c, "input", inputs[i]);
        if (v && index_in(c->in, i, v) >= 0)
            c->rc = ph_error_set(c->err, PH_EINVAL, "input '%s' is given twice", inputs[i]);
        else if (v && !v->is_input && !v->producer)
            c->rc = ph_error_set(c->err, PH_EINVAL,
                                 "input '%s' is an initializer: an input of the cut is a graph "
                                 "input or a value a node computes", inputs[i]);
    }
    return c->rc;
}

PH_API int ph_graph_extract(ph_graph *g, const char *const *inputs, size_t n_inputs,
                            const char *const *outputs, size_t n_outputs, ph_error *err)
{
    if (!g || g->parent || !n_outputs || (n_inputs && !inputs) || !outputs)
        return ph_error_set(err, PH_EINVAL, "extract: the main graph and at least one output");
    int auto_inputs = n_inputs == 0; /* the graph's own inputs the outputs need */
    if (auto_inputs)
        n_inputs = g->n_inputs;
    cut c = {.g = g, .n_in = n_inputs, .n_out = n_outputs, .err = err};
    c.in = calloc(n_inputs ? n_inputs : 1, sizeof *c.in);
    c.out = calloc(n_outputs, sizeof *c.out);
    c.in_used = calloc(n_inputs ? n_inputs : 1, 1);
    Onnx__ValueInfoProto **in_vi = calloc(n_inputs ? n_inputs : 1, sizeof *in_vi);
    if (!c.in || !c.out || !c.in_used || !in_vi)
        c.rc = ph_error_set(err, PH_ENOMEM, "out of memory");
    if (!c.rc && auto_inputs) {
        size_t k = 0;
        for (size_t i = 0; i < g->n_inputs; i++)
            if (!g->inputs[i]->tensor)
                c.in[k++] = g->inputs[i];
        c.n_in = n_inputs = k;
        inputs = NULL;
    }
    if (!c.rc)
        check_names(&c, auto_inputs ? NULL : inputs, outputs);
    /* the types of new inputs must be known */
    for (size_t i = 0; i < n_inputs && !auto_inputs && !c.rc; i++)
        if (c.in[i]->producer && !c.in[i]->dtype)
            c.rc = ph_error_set(err, PH_EINVAL, "input '%s': its type is unknown (neither the "
                                "model nor shape inference says it)", inputs[i]);
    /* what the outputs need */
    for (ph_node *n = g->first; n; n = n->next)
        n->mark = 0;
    for (size_t i = 0; i < n_outputs && !c.rc; i++) {
        ph_value *v = c.out[i];
        ptrdiff_t k = index_in(c.in, n_inputs, v);
        if (k >= 0)
            c.in_used[k] = 1;
        else if (v->producer && !v->producer->mark) {
            v->producer->mark = 1;
            if (ir_grow((void **)&c.stack, &c.cap_stack, c.n_stack + 1, sizeof *c.stack))
                c.rc = ph_error_set(err, PH_ENOMEM, "out of memory");
            else
                c.stack[c.n_stack++] = v->producer;
        } else if (!v->producer && !v->tensor && !v->is_input) {
            c.rc = ph_error_set(err, PH_EINVAL, "output '%s' has no value", outputs[i]);
        } else if (v->is_input && !v->tensor) {
            c.rc = ph_error_set(err, PH_EINVAL,
                                "output '%s' is a graph input not among the inputs given; add it "
                                "to them", outputs[i]);
        }
    }
    while (c.n_stack && !c.rc) {
        ph_node *n = c.stack[--c.n_stack];
        need_inputs(&c, n, n);
    }
    for (size_t i = 0; i < n_inputs && !c.rc; i++)
        if (!c.in_used[i] && !auto_inputs)
            c.rc = ph_error_set(err, PH_EINVAL,
                                "input '%s' is unreachable: none of the outputs given depends on it",
                                inputs[i]);
    if (auto_inputs) { /* keep the used ones, in the graph's order */
        size_t k = 0;
        for (size_t i = 0; i < n_inputs; i++)
            if (c.in_used[i])
                c.in[k++] = c.in[i];
        c.n_in = n_inputs = k;
    }
    /* the cut holds: change the graph */
    for (size_t i = 0; i < n_inputs && !c.rc; i++) {
        ph_value *v = c.in[i];
        if (v->producer) {
            c.rc = make_input(g, v, &in_vi[i]);
            if (c.rc)
                ph_error_set(err, c.rc, "out of memory");
        } else {
            for (size_t k = 0; k < g->n_inputs; k++)
                if (g->inputs[k] == v)
                    in_vi[i] = g->input_vi[k], g->input_vi[k] = NULL;
        }
    }
    ph_value **dropped = NULL;
    size_t n_dropped = 0;
    if (!c.rc) {
        /* inputs: exactly the ones given, in their order; the others leave */
        dropped = calloc(g->n_inputs ? g->n_inputs : 1, sizeof *dropped);
        if (!dropped || ir_grow((void **)&g->inputs, &g->cap_inputs, n_inputs, sizeof *g->inputs) ||
            !(g->input_vi = realloc(g->input_vi, g->cap_inputs * sizeof *g->input_vi)))
            c.rc = ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    if (!c.rc) {
        for (size_t k = 0; k < g->n_inputs; k++) {
            ph_value *v = g->inputs[k];
            if (index_in(c.in, n_inputs, v) >= 0)
                continue;
            v->is_input = 0;
            if (g->input_vi[k])
                protobuf_c_message_free_unpacked(&g->input_vi[k]->base, NULL);
            if (!v->tensor)
                dropped[n_dropped++] = v;
        }
        for (size_t i = 0; i < n_inputs; i++) {
            g->inputs[i] = c.in[i];
            g->input_vi[i] = in_vi[i];
            in_vi[i] = NULL;
        }
        g->n_inputs = n_inputs;
        /* outputs: exactly the ones given */
        ir_output *outs = calloc(n_outputs, sizeof *outs);
        if (!outs) {
            c.rc = ph_error_set(err, PH_ENOMEM, "out of memory");
        } else {
            for (size_t i = 0; i < n_outputs; i++) {
                outs[i].value = c.out[i];
                for (size_t k = 0; k < g->n_outputs && !outs[i].vi; k++)
                    if (g->outputs[k].value == c.out[i])
                        outs[i].vi = g->outputs[k].vi, g->outputs[k].vi = NULL;
                if (!outs[i].vi && !(outs[i].vi = ir_value_info_new(c.out[i])))
                    ir_alloc_failed(g->model);
            }
            for (size_t k = 0; k < g->n_outputs; k++) {
                g->outputs[k].value->n_output_refs--;
                ir_notify_uses_changed(g->outputs[k].value);
                if (g->outputs[k].vi)
                    protobuf_c_message_free_unpacked(&g->outputs[k].vi->base, NULL);
            }
            free(g->outputs);
            g->outputs = outs;
            g->n_outputs = g->cap_outputs = n_outputs;
            for (size_t i = 0; i < n_outputs; i++) {
                c.out[i]->n_output_refs++;
                ir_notify_uses_changed(c.out[i]);
            }
            g->model->init_version++;
            ph_graph_remove_dead(g);
            for (size_t i = 0; i < n_dropped; i++)
                if (!dropped[i]->n_uses)
                    ir_value_bury(dropped[i]);
        }
    }
    for (size_t i = 0; i < n_inputs; i++)
        if (in_vi[i])
            protobuf_c_message_free_unpacked(&in_vi[i]->base, NULL);
    free(in_vi);
    free(dropped);
    free(c.in);
    free(c.out);
    free(c.in_used);
    free(c.stack);
    return c.rc;
}
