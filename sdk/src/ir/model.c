/* sdk/src/ir/model.c - the model: a new empty one, free, its main graph,
 * ir_version, node count and the opsets it imports. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

ph_model *ir_model_alloc(void)
{
    ph_model *m = calloc(1, sizeof(ph_model));
    if (m) {
        ir_names_init(&m->value_names, 0);
        ir_names_init(&m->node_names, 1);
    }
    return m;
}

PH_API ph_model *ph_model_new(int64_t opset)
{
    ph_model *m = ir_model_alloc();
    Onnx__ModelProto *mp = malloc(sizeof *mp);
    Onnx__GraphProto *gp = malloc(sizeof *gp);
    Onnx__OperatorSetIdProto *op = malloc(sizeof *op);
    Onnx__OperatorSetIdProto **ops = malloc(sizeof *ops);
    if (!m || !mp || !gp || !op || !ops) {
        free(m);
        free(mp);
        free(gp);
        free(op);
        free(ops);
        return NULL;
    }
    onnx__model_proto__init(mp);
    onnx__graph_proto__init(gp);
    onnx__operator_set_id_proto__init(op);
    mp->has_ir_version = 1;
    mp->ir_version = 8;
    mp->producer_name = ir_strdup("passhost");
    op->has_version = 1;
    op->version = opset;
    ops[0] = op;
    mp->opset_import = ops;
    mp->n_opset_import = 1;
    gp->name = ir_strdup("main");
    mp->graph = gp;
    m->proto = mp;
    m->graph = ir_graph_new(m, NULL, gp);
    if (!m->graph || !mp->producer_name || !gp->name) {
        ph_model_free(m);
        return NULL;
    }
    return m;
}

PH_API void ph_model_free(ph_model *m)
{
    if (!m)
        return;
    ir_model_collect(m);
    /* first: the nodes and values freed below need not leave the maps */
    ir_names_free(&m->value_names);
    ir_names_free(&m->node_names);
    ir_graph_free(m->graph);
    ir_notify_model_freed(m);
    if (m->proto)
        protobuf_c_message_free_unpacked(&m->proto->base, NULL);
    while (m->mappings) {
        ir_mapping *next = m->mappings->next;
        ir_unmap_file(m->mappings);
        m->mappings = next;
    }
    for (size_t i = 0; i < m->n_strings; i++)
        free(m->strings[i]);
    free(m->strings);
    free(m->source_path);
    ir_dims_free(m);
    ir_arena_free(m->arena); /* last: what was freed above asked it what it owns */
    free(m);
}

PH_API ph_graph *ph_model_graph(ph_model *m) { return m->graph; }
PH_API int64_t ph_model_ir_version(const ph_model *m) { return m->proto->ir_version; }

PH_API int ph_model_require_ir_version(ph_model *m, int64_t opset)
{
    /* the first opset of IR versions 3 to 10 (onnx/helper.py's table) */
    static const int64_t first_opset[] = {1, 1, 1, 1, 9, 10, 11, 12, 15, 19, 21};
    if (!m)
        return PH_EINVAL;
    int64_t ir = 3;
    for (int64_t v = 4; v <= 10; v++)
        if (opset >= first_opset[v])
            ir = v;
    if (m->proto->ir_version < ir) {
        m->proto->ir_version = ir;
        m->proto->has_ir_version = 1;
    }
    return 0;
}

PH_API size_t ph_model_node_count(const ph_model *m) { return m->n_nodes_total; }

static int is_default_domain(const char *d) { return !d || !*d || strcmp(d, "ai.onnx") == 0; }

PH_API int64_t ph_model_opset(const ph_model *m, const char *domain)
{
    for (size_t i = 0; i < m->proto->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = m->proto->opset_import[i];
        const char *d = op->domain ? op->domain : "";
        if (is_default_domain(domain) ? is_default_domain(d) : strcmp(d, domain) == 0)
            return op->version;
    }
    return -1;
}

PH_API int ph_model_set_opset(ph_model *m, const char *domain, int64_t version)
{
    Onnx__ModelProto *mp = m->proto;
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        Onnx__OperatorSetIdProto *op = mp->opset_import[i];
        const char *d = op->domain ? op->domain : "";
        if (is_default_domain(domain) ? is_default_domain(d) : strcmp(d, domain) == 0) {
            op->has_version = 1;
            op->version = version;
            return 0;
        }
    }
    Onnx__OperatorSetIdProto *op = malloc(sizeof *op);
    Onnx__OperatorSetIdProto **arr = realloc(mp->opset_import, (mp->n_opset_import + 1) * sizeof *arr);
    if (!op || !arr) {
        free(op);
        if (arr)
            mp->opset_import = arr;
        return PH_ENOMEM;
    }
    mp->opset_import = arr;
    onnx__operator_set_id_proto__init(op);
    if (!is_default_domain(domain) && !(op->domain = ir_strdup(domain))) {
        free(op);
        return PH_ENOMEM;
    }
    op->has_version = 1;
    op->version = version;
    arr[mp->n_opset_import++] = op;
    return 0;
}
