/* sdk/src/onnx/build.c - the IR of a GraphProto: its inputs, initializers
 * and nodes taken over from the protobuf tree the loader unpacked, node
 * inputs resolved by name, and the bodies of If/Loop/Scan nodes built the
 * same way (onnx_graph_build and onnx_node_build_subgraphs call each other).
 * The main graph's nodes may come read in place (read_nodes.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "read_nodes.h"

/* Take over graph input vi (freed here on failure). */
static int take_input(ph_graph *g, Onnx__ValueInfoProto *vi, ph_error *err);
static int take_input_checked(ph_graph *g, Onnx__ValueInfoProto *vi, ph_error *err)
{
    int rc = take_input(g, vi, err);
    if (rc)
        protobuf_c_message_free_unpacked(&vi->base, NULL);
    return rc;
}

static int take_input(ph_graph *g, Onnx__ValueInfoProto *vi, ph_error *err)
{
    const char *name = vi->name ? vi->name : "";
    if (!*name)
        return ph_error_set(err, PH_EPARSE, "graph '%s': an input has no name", ph_graph_name(g));
    if (ir_grow((void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1, sizeof *g->inputs))
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    void *p = realloc(g->input_vi, g->cap_inputs * sizeof *g->input_vi);
    if (!p)
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    g->input_vi = p;
    ph_value *v = ir_value_new(g, name);
    if (!v)
        return ph_error_set(err, PH_EPARSE, "graph '%s': input '%s' is defined twice", ph_graph_name(g), name);
    v->is_input = 1;
    ir_value_parse_type(v, vi->type);
    g->inputs[g->n_inputs] = v;
    g->input_vi[g->n_inputs++] = vi;
    return 0;
}

/* Take over initializer tp; raw, when not NULL, is where the file holds its
 * raw_data (left out of tp).  *ready: 1 when its checks pass and its data
 * is attached (ir_tensor_check, ir_tensor_attach: what the loader would do
 * next, done now while tp is in the cache); else the loader does it. */
static int take_initializer(ph_graph *g, Onnx__TensorProto *tp, const onnx_raw_ref *raw, int *ready,
                            ph_error *err)
{
    *ready = 0;
    const char *name = tp->name ? tp->name : "";
    if (!*name) {
        protobuf_c_message_free_unpacked(&tp->base, NULL);
        return ph_error_set(err, PH_EPARSE, "graph '%s': an initializer has no name", ph_graph_name(g));
    }
    ph_tensor *t = ir_tensor_wrap(tp, 0);
    if (!t) {
        protobuf_c_message_free_unpacked(&tp->base, NULL);
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    /* room first: a value made below and then not stored would leak */
    if (ir_grow((void **)&g->inits, &g->cap_inits, g->n_inits + 1, sizeof *g->inits)) {
        ph_tensor_free(t);
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    ph_value *v = ir_graph_value(g, name);
    /* name lives in tp, which ph_tensor_free frees: report first */
    if (v && (!v->is_input || v->tensor)) {
        int rc = ph_error_set(err, PH_EPARSE, "graph '%s': initializer '%s' is defined twice", ph_graph_name(g), name);
        ph_tensor_free(t);
        return rc;
    }
    if (!v && !(v = ir_value_new(g, name))) {
        int rc = ph_error_set(err, PH_EPARSE, "graph '%s': initializer '%s' clashes with another value name",
                              ph_graph_name(g), name);
        ph_tensor_free(t);
        return rc;
    }
    v->tensor = t;
    v->init_pos = g->n_inits;
    g->inits[g->n_inits++] = v;
    if (v->rank < 0 || !v->dtype) {
        ph_value_set_type(v, tp->data_type, (int)tp->n_dims, tp->dims);
        v->type_dirty = 0; /* what the file says, not an edit */
    }
    int mapped = raw && raw->present;
    if (!ir_tensor_check(tp, mapped, mapped ? raw->len : 0, "", NULL))
        *ready = mapped ? !ir_tensor_attach(t, raw->data, raw->len, NULL, "") : !t->external;
    return 0;
}

int onnx_node_resolve_inputs(ph_node *n, ph_error *err)
{
    Onnx__NodeProto *np = ir_node_unknown(n); /* the message protobuf-c unpacked, until settled */
    for (size_t i = 0; np && i < np->n_input; i++) {
        const char *name = np->input[i];
        n->inputs[i] = NULL;
        n->n_inputs = i + 1;
        if (!name[0])
            continue;
        ph_value *v = ph_graph_find_value(n->graph, name);
        if (!v)
            return ph_error_set(err, PH_EPARSE, "node '%s' (%s): input '%s' is not defined", ph_node_name(n),
                                ph_node_op_type(n), name);
        n->inputs[i] = v;
        if (ir_add_use(v, n, (uint32_t)i))
            return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    /* the names now live in the values: drop the copies */
    ir_node_settle(n);
    return 0;
}

/* main: NULL for a body */
static int graph_build(ph_graph *g, const onnx_main_graph *main, onnx_build_facts *facts, ph_error *err)
{
    Onnx__GraphProto *gp = g->proto;
    int rc = 0;
    onnx_node_src *src = main ? main->nodes : NULL;
    size_t n_src = main ? main->n_nodes : 0;
    *facts = (onnx_build_facts){0};
    /* take the arrays over */
    Onnx__NodeProto **nodes = gp->node;
    size_t n_nodes = gp->n_node;
    Onnx__TensorProto **inits = gp->initializer;
    size_t n_inits = gp->n_initializer;
    Onnx__ValueInfoProto **ins = gp->input, **outs = gp->output;
    size_t n_ins = gp->n_input, n_outs = gp->n_output;
    g->value_info = gp->value_info;
    g->n_value_info = g->cap_value_info = gp->n_value_info;
    gp->node = NULL;
    gp->initializer = NULL;
    gp->input = gp->output = gp->value_info = NULL;
    gp->n_node = gp->n_initializer = gp->n_input = gp->n_output = gp->n_value_info = 0;

    /* the name map sized once for the values to come (most nodes have one
     * output), not grown step by step: each growth reads every value again */
    if (n_src && ir_names_presize(&g->model->value_names, g->model->value_names.count + n_ins + n_inits + n_src))
        rc = ph_error_set(err, PH_ENOMEM, "out of memory");
    size_t i = 0;
    for (i = 0; i < n_ins && !rc; i++)
        rc = take_input_checked(g, ins[i], err);
    for (; i < n_ins; i++)
        protobuf_c_message_free_unpacked(&ins[i]->base, NULL);
    free(ins);

    /* a main graph's initializers are checked and attached as they are
     * taken (while their messages are in the cache), as long as all pass */
    size_t ready = 0;
    for (i = 0; i < n_inits && !rc; i++) {
        int ok;
        rc = take_initializer(g, inits[i], main && main->raw && i < main->n_raw ? &main->raw[i] : NULL, &ok, err);
        ready += main && ok && ready == i;
    }
    for (; i < n_inits; i++)
        protobuf_c_message_free_unpacked(&inits[i]->base, NULL);
    free(inits);

    /* nodes: outputs first (a model may list nodes out of order), then inputs */
    onnx_build_facts built = {.in_order = 1};
    if (src && !rc)
        rc = onnx_nodes_build(g, src, n_src, main->behind, &built, err);
    ph_node *first_new = NULL;
    for (i = 0; i < n_nodes && !rc; i++) {
        ph_node *n = ir_node_from_proto(g, nodes[i], err); /* owns nodes[i] even on failure */
        if (!n) {
            rc = err && err->code ? err->code : PH_ENOMEM;
            i++;
            break;
        }
        if (!first_new)
            first_new = n;
    }
    for (; i < n_nodes; i++)
        protobuf_c_message_free_unpacked(&nodes[i]->base, NULL);
    free(nodes);
    for (ph_node *n = first_new; n && !rc; n = n->next)
        rc = onnx_node_resolve_inputs(n, err);
    for (ph_node *n = first_new; n && !rc; n = n->next)
        rc = onnx_node_build_subgraphs(n, err);

    for (i = 0; i < n_outs; i++) {
        Onnx__ValueInfoProto *vi = outs[i];
        if (rc) {
            protobuf_c_message_free_unpacked(&vi->base, NULL);
            continue;
        }
        ph_value *v = vi->name ? ph_graph_find_value(g, vi->name) : NULL;
        if (!v || ir_grow((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1, sizeof *g->outputs)) {
            rc = ph_error_set(err, PH_EPARSE, "graph '%s': output '%s' is not produced by any node, input or initializer",
                              ph_graph_name(g), vi->name ? vi->name : "");
            protobuf_c_message_free_unpacked(&vi->base, NULL);
            continue;
        }
        g->outputs[g->n_outputs++] = (ir_output){v, vi};
        v->n_output_refs++;
        if (v->rank < 0 || !v->dtype)
            ir_value_parse_type(v, vi->type);
    }
    free(outs);
    for (i = 0; i < g->n_value_info && !rc; i++) {
        const Onnx__ValueInfoProto *vi = g->value_info[i];
        ph_value *v = vi->name ? ir_graph_value(g, vi->name) : NULL;
        if (v && v->rank < 0 && !v->dtype)
            ir_value_parse_type(v, vi->type);
    }
    if (!rc && ph_graph_toposort(g) != 0)
        rc = ph_error_set(err, PH_EPARSE, "graph '%s': the nodes form a cycle", ph_graph_name(g));
    if (!rc && built.in_order && !n_nodes)
        *facts = built;
    facts->inits_ready = ready;
    return rc;
}

int onnx_graph_build_main(ph_graph *g, const onnx_main_graph *main, onnx_build_facts *facts, ph_error *err)
{
    return graph_build(g, main, facts, err);
}

int onnx_graph_build(ph_graph *g, ph_error *err)
{
    onnx_build_facts facts;
    return graph_build(g, NULL, &facts, err);
}

/* Build the IR of every GRAPH/GRAPHS attribute of n. */
int onnx_node_build_subgraphs(ph_node *n, ph_error *err)
{
    size_t count = 0;
    for (size_t i = 0; i < n->n_attrs; i++) {
        Onnx__AttributeProto *a = n->attrs[i];
        int rc = ir_attr_normalize(a);
        if (rc)
            return ph_error_set(err, rc, "out of memory");
        if (a->g)
            count++;
        count += a->n_graphs;
    }
    if (!count)
        return 0;
    ir_node_rare *r = ir_node_rare_get(n);
    if (!r || !(r->subgraphs = calloc(count, sizeof *r->subgraphs)))
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    for (size_t i = 0; i < n->n_attrs; i++) {
        Onnx__AttributeProto *a = n->attrs[i];
        for (size_t k = 0; k < (a->g ? 1 : 0) + a->n_graphs; k++) {
            Onnx__GraphProto *gp = a->g && k == 0 ? a->g : a->graphs[k - (a->g ? 1 : 0)];
            ph_graph *sub = ir_graph_new(n->graph->model, n, gp);
            if (!sub)
                return ph_error_set(err, PH_ENOMEM, "out of memory");
            r->subgraphs[r->n_subgraphs++] = (ir_subgraph){a, k, sub};
            int rc = onnx_graph_build(sub, err);
            if (rc)
                return rc;
        }
    }
    return 0;
}
