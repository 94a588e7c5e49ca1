/* sdk/src/ir/verify.c - the IR verifier: everything a pass could get wrong.
 *
 * Checks, for a graph and its subgraphs: nodes linked and counted right;
 * every input defined in scope, before its use (for values of the same
 * graph); use lists exactly mirror the input slots; every output value is
 * produced by its node (SSA); names map back to their values; graph outputs
 * alive and in scope; attributes named, unique and well typed; every
 * operator's domain imported by the model; and an operator ONNX defines
 * (passhost/schema.h, the schemas of libonnx) has the input slots and the
 * attributes its schema requires at the model's opset, each attribute of
 * the type the schema gives it (a Transpose whose perm is a STRING would
 * otherwise be read as having none).
 *
 * The loader's check of a model it built in order from nodes it read in
 * place (ir_graph_verify_loaded) is of what the file decides only: op
 * types, attributes, schemas.  The rest (lists, use lists, definition
 * before use, outputs pointing back) the build makes so, and the first
 * failure of the whole check on such a graph is always one of these. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "passhost/schema.h"

/* What check_schema reads of an operator's schema, read once per operator
 * and call (the schema's accessors are calls into its table). */
typedef struct op_facts {
    const ph_schema *s; /* NULL: no schema */
    int min_in;
    uint32_t formal;      /* formal inputs */
    uint64_t single;      /* bit i: formal input i (i < 64) is PH_PARAM_SINGLE */
    uint8_t n_required;   /* required attributes, REQUIRED_ALL: more than fit in required[] */
    uint16_t required[6]; /* their indices in the schema */
} op_facts;
#define REQUIRED_ALL 0xff

typedef struct vctx {
    ph_error *err;
    size_t pos; /* running node position, for definition-before-use */
    int names;  /* also check that every name resolves to its value */
    const ph_model *model; /* for the opsets of other domains (NULL: a graph alone) */
    int64_t opset; /* of the default domain (-1: not imported) */
    size_t nodes; /* nodes of the graphs verified so far, bodies included */
    /* Counting mode (a whole model): instead of visiting the reader of every
     * use list entry, count the entries (uses) of the values whose lists the
     * full check would walk, and the input slots (slots) that read one of
     * those values, each slot having checked its own entry.  The slots map
     * to distinct entries, so equal counts prove that every entry is some
     * live slot's: what the full check would find.  Any doubt (a slot whose
     * value cannot be shown to be counted, counts that differ, any failure)
     * and the full check runs instead, so results and messages are its. */
    int counting;
    int unsure;
    size_t uses, slots;
    /* A graph as the loader built it (ir_graph_verify_loaded): only what
     * the file decides is checked, the structure holding by construction. */
    int built;
    /* the schema of each ph_op at that opset, looked up once per call */
    op_facts by_op[PH_OP__COUNT];
    unsigned char looked[PH_OP__COUNT];
} vctx;

/* v is not the value its name resolves to (when names are checked).
 *
 * The counting pass checks only that v's name hashes to the hash the map
 * entered it under, which a lookup of the name needs to find v, and reads
 * no map slot (a lookup per value was a cache miss in a map of 16 MB on a
 * million values).  The rest of what the lookup shows holds by
 * construction: the map is the SDK's own (ir/names.c, changed only by
 * ir/graph.c), every value is entered under its name when it is made,
 * a second value of a name is refused, and a value leaves the map before
 * its name changes (ph_value_replace's swap) or it is freed.  What a pass can
 * do behind the SDK's back is write a value's name: that changes its hash
 * (but for a name of the same 32-bit hash), the counting pass fails, and
 * the full check looks every name up and gives the message. */
static int name_wrong(const vctx *c, const ph_graph *g, const ph_value *v)
{
    if (!c->names)
        return 0;
    if (c->counting)
        return !ir_names_value_hash_agrees(v);
    return ir_graph_value(g, v->name) != v;
}

static int fail(vctx *c, const ph_graph *g, const ph_node *n, const char *what, const char *detail)
{
    if (n)
        return ph_error_set(c->err, PH_EVERIFY, "graph '%s', node '%s' (%s): %s%s%s", ph_graph_name(g),
                            ph_node_name(n), ph_node_op_type(n), what, detail ? ": " : "", detail ? detail : "");
    return ph_error_set(c->err, PH_EVERIFY, "graph '%s': %s%s%s", ph_graph_name(g), what, detail ? ": " : "",
                        detail ? detail : "");
}

static int check_value_uses(vctx *c, const ph_graph *g, const ph_value *v)
{
    if (c->counting) {
        c->uses += v->n_uses;
        return 0;
    }
    for (size_t i = 0; i < v->n_uses; i++) {
        const ir_use *u = &v->uses[i];
        if (!u->node || u->node->removed)
            return fail(c, g, NULL, "a value is used by a removed node", v->name);
        if (u->index >= u->node->n_inputs || u->node->inputs[u->index] != v || u->node->use_pos[u->index] != i)
            return fail(c, g, u->node, "use list out of step with the node's inputs", v->name);
    }
    return 0;
}

/* 1 when the use list of v (read by a slot that passed its checks) is
 * one the check walks: an output its producer points back to, an
 * initializer its graph's list holds, an input among a few of its graph's
 * inputs.  v's graph is verified (in scope of one, the whole model is). */
static int counted(const ph_value *v)
{
    const ph_node *p = v->producer;
    if (p)
        return p->graph == v->graph && v->out_index < p->n_outputs && p->outputs[v->out_index] == v;
    if (v->is_input == !!v->tensor) /* neither, or both: an input listed twice (ir_version < 4) */
        return 0;
    const ph_graph *g = v->graph;
    if (v->tensor)
        return v->init_pos < g->n_inits && g->inits[v->init_pos] == v;
    for (size_t i = 0; i < g->n_inputs && i < 16; i++)
        if (g->inputs[i] == v)
            return 1;
    return 0;
}

/* The type an attribute holds: its type field, or for IR version < 2
 * (no type field) the one value field that is set. */
static int attr_type_of(const Onnx__AttributeProto *a)
{
    if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
        return (int)a->type;
    return a->has_f ? 1 : a->has_i ? 2 : a->has_s ? 3 : a->t ? 4 : a->g ? 5 : a->n_floats ? 6 : a->n_ints ? 7
           : a->n_strings ? 8 : a->n_tensors ? 9 : a->n_graphs ? 10 : 0;
}

static int is_default_domain(const char *d) { return !d || !*d || strcmp(d, "ai.onnx") == 0; }

static void facts_of(const ph_schema *s, op_facts *f)
{
    memset(f, 0, sizeof *f);
    if (!(f->s = s))
        return;
    int max_in;
    ph_schema_input_range(s, &f->min_in, &max_in);
    f->formal = (uint32_t)ph_schema_input_count(s);
    for (uint32_t i = 0; i < f->formal && i < 64; i++)
        if (ph_schema_input_option(s, i) == PH_PARAM_SINGLE)
            f->single |= (uint64_t)1 << i;
    for (size_t k = 0; k < ph_schema_attr_count(s); k++) {
        if (!ph_schema_attr_required(s, k))
            continue;
        if (f->n_required == sizeof f->required / sizeof f->required[0]) {
            f->n_required = REQUIRED_ALL;
            break;
        }
        f->required[f->n_required++] = (uint16_t)k;
    }
}

/* The schema of n's operator at the model's opset of its domain, with what
 * check_schema reads of it (f->s NULL: an operator ONNX does not define,
 * or a domain without opset import).  Points into c or at *local. */
static const op_facts *schema_of(vctx *c, const ph_node *n, op_facts *local)
{
    const char *domain = ir_node_domain(n);
    if (is_default_domain(domain) && n->op > PH_OP_UNKNOWN && n->op < PH_OP__COUNT) {
        if (!c->looked[n->op]) {
            facts_of(c->opset > 0 ? ph_schema_find("", ir_node_op_type(n), c->opset) : NULL, &c->by_op[n->op]);
            c->looked[n->op] = 1;
        }
        return &c->by_op[n->op];
    }
    int64_t opset = is_default_domain(domain) ? c->opset : c->model ? ph_model_opset(c->model, domain) : -1;
    facts_of(opset > 0 ? ph_schema_find(domain, ir_node_op_type(n), opset) : NULL, local);
    return local;
}

/* The inputs and attributes the operator's schema requires, attributes of
 * the schema's types. */
static int check_schema(vctx *c, const ph_graph *g, const ph_node *n)
{
    const char *domain = ir_node_domain(n);
    if (!is_default_domain(domain) && c->model && ph_model_opset(c->model, domain) < 0)
        return fail(c, g, n, "the model imports no opset of the operator's domain", domain);
    op_facts local;
    const op_facts *f = schema_of(c, n, &local);
    const ph_schema *s = f->s;
    if (!s)
        return 0;
    char what[200];
    int64_t opset = is_default_domain(domain) ? c->opset : ph_model_opset(c->model, domain);
    if (n->n_inputs < (size_t)f->min_in) {
        snprintf(what, sizeof what, "%zu inputs, the operator needs at least %d at opset %lld", (size_t)n->n_inputs,
                 f->min_in, (long long)opset);
        return fail(c, g, n, what, NULL);
    }
    for (size_t i = 0; i < n->n_inputs && i < f->formal; i++)
        if (!n->inputs[i] && (i < 64 ? f->single >> i & 1 : ph_schema_input_option(s, i) == PH_PARAM_SINGLE)) {
            snprintf(what, sizeof what, "required input %zu is missing", i);
            return fail(c, g, n, what, NULL);
        }
    for (size_t i = 0; i < n->n_attrs; i++) {
        const Onnx__AttributeProto *a = n->attrs[i];
        long k = a->ref_attr_name ? -1 : ph_schema_attr_find(s, a->name);
        int want = k >= 0 ? ph_schema_attr_type(s, (size_t)k) : 0, have = attr_type_of(a);
        if (k >= 0 && have != want) {
            snprintf(what, sizeof what, "attribute '%.60s' is %s %s, the operator expects %s at opset %lld", a->name,
                     have == 1 || have == 2 || have == 3 ? "a" : "of type", ph_attr_type_name(have),
                     ph_attr_type_name(want), (long long)opset);
            return fail(c, g, n, what, NULL);
        }
    }
    size_t n_req = f->n_required == REQUIRED_ALL ? ph_schema_attr_count(s) : f->n_required;
    for (size_t r = 0; r < n_req; r++) {
        size_t k = f->n_required == REQUIRED_ALL ? r : f->required[r];
        if (!ph_schema_attr_required(s, k))
            continue;
        const char *name = ph_schema_attr_name(s, k);
        size_t i = 0;
        while (i < n->n_attrs && strcmp(n->attrs[i]->name, name) != 0)
            i++;
        if (i == n->n_attrs) {
            snprintf(what, sizeof what, "required attribute '%s' (%s) is missing at opset %lld", name,
                     ph_attr_type_name(ph_schema_attr_type(s, k)), (long long)opset);
            return fail(c, g, n, what, NULL);
        }
    }
    return 0;
}

static int check_attrs(vctx *c, const ph_graph *g, const ph_node *n)
{
    for (size_t i = 0; i < n->n_attrs; i++) {
        const Onnx__AttributeProto *a = n->attrs[i];
        if (!a->name || !*a->name)
            return fail(c, g, n, "an attribute has no name", NULL);
        for (size_t k = 0; k < i; k++)
            if (n->attrs[k]->name && strcmp(n->attrs[k]->name, a->name) == 0)
                return fail(c, g, n, "attribute given twice", a->name);
        int ok = 1;
        switch (a->type) {
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: ok = a->has_f; break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: ok = a->has_i; break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: ok = a->has_s; break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: ok = a->t != NULL; break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: ok = a->g != NULL; break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: ok = !a->n_ints && !a->n_strings; break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: ok = !a->n_floats && !a->n_strings; break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: ok = !a->n_floats && !a->n_ints; break;
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED:
            /* IR version < 2 had no type field: accept when exactly one value is set */
            ok = a->ref_attr_name || (a->has_f + a->has_i + a->has_s + (a->t != NULL) + (a->g != NULL) +
                                      (a->n_floats > 0) + (a->n_ints > 0) + (a->n_strings > 0)) <= 1;
            break;
        default: break;
        }
        if (!ok)
            return fail(c, g, n, "attribute value does not match its type", a->name);
    }
    return 0;
}

static int verify_graph(vctx *c, const ph_graph *g);

/* What the file decides of a node the loader built: its op_type, its
 * attributes, its schema (check_node's checks of them, in its order). */
static int check_node_built(vctx *c, const ph_graph *g, const ph_node *n)
{
    const char *op_type = ir_node_op_type(n);
    if (!op_type || !*op_type)
        return fail(c, g, n, "node has no op_type", NULL);
    int rc = check_attrs(c, g, n);
    return rc ? rc : check_schema(c, g, n);
}

static int check_node(vctx *c, const ph_graph *g, ph_node *n)
{
    if (n->removed)
        return fail(c, g, n, "a removed node is still linked", NULL);
    if (n->graph != g)
        return fail(c, g, n, "node linked into the wrong graph", NULL);
    const char *op_type = ir_node_op_type(n);
    if (!op_type || !*op_type)
        return fail(c, g, n, "node has no op_type", NULL);
    for (size_t i = 0; i < n->n_inputs; i++) {
        const ph_value *v = n->inputs[i];
        if (!v)
            continue;
        if (v->dead)
            return fail(c, g, n, "input is a removed value", v->name);
        if (!ir_in_scope(v, g))
            return fail(c, g, n, "input is not in scope", v->name);
        if (v->n_uses <= n->use_pos[i] || v->uses[n->use_pos[i]].node != n || v->uses[n->use_pos[i]].index != i)
            return fail(c, g, n, "input slot missing from the value's use list", v->name);
        if (v->producer) {
            if (v->producer->removed)
                return fail(c, g, n, "input is produced by a removed node", v->name);
            if (v->graph == g && (c->counting ? v->producer->order >= n->order : v->producer->mark >= c->pos))
                return fail(c, g, n, "input is used before it is defined", v->name);
        } else if (!v->is_input && !v->tensor) {
            return fail(c, g, n, "input has no producer, is no graph input and no initializer", v->name);
        }
        if (c->counting && !c->unsure && !(counted(v) && ++c->slots))
            c->unsure = 1;
    }
    for (size_t i = 0; i < n->n_outputs; i++) {
        const ph_value *v = n->outputs[i];
        if (!v)
            continue;
        if (v->dead || v->producer != n || v->out_index != i || v->graph != g)
            return fail(c, g, n, "output value does not point back to its node", v->name);
        if (name_wrong(c, g, v))
            return fail(c, g, n, "output name does not resolve to its value", v->name);
        int rc = check_value_uses(c, g, v);
        if (rc)
            return rc;
    }
    int rc = check_attrs(c, g, n);
    if (!rc)
        rc = check_schema(c, g, n); /* the attributes are named and typed by now */
    for (size_t s = 0; s < ir_node_n_subgraphs(n) && !rc; s++) {
        const ph_graph *sub = ir_node_subgraphs(n)[s].graph;
        if (sub->parent != n)
            return fail(c, g, n, "subgraph does not point back to its node", NULL);
        rc = verify_graph(c, sub);
    }
    return rc;
}

static int check_graph_values(vctx *c, const ph_graph *g);
static int check_graph_outputs(vctx *c, const ph_graph *g);

/* The counting pass over g: the checks of verify_graph in one walk of the
 * node list instead of two.  A node's position is its order key
 * (ph_node.order), which the IR keeps increasing along the list: the walk
 * checks that it does, so a producer's key below its reader's says what
 * the positions say.  (A list the SDK made always passes; one that fails
 * here is checked again by verify_graph, for its message.) */
static int verify_graph_once(vctx *c, const ph_graph *g)
{
    int rc = check_graph_values(c, g);
    size_t count = 0;
    const ph_node *prev = NULL;
    for (ph_node *n = g->first; n && !rc; n = n->next) {
        if (n->prev != prev || (prev && !(prev->order < n->order)))
            return fail(c, g, n, "node list links broken", NULL);
        prev = n;
        count++;
        __builtin_prefetch(n->next);
        rc = check_node(c, g, n);
    }
    if (rc)
        return rc;
    if (prev != g->last || count != g->n_nodes)
        return fail(c, g, NULL, "node count or list tail wrong", NULL);
    c->nodes += count;
    return check_graph_outputs(c, g);
}

static int verify_graph(vctx *c, const ph_graph *g)
{
    if (c->built) {
        for (const ph_node *n = g->first; n; n = n->next) {
            int rc = check_node_built(c, g, n);
            if (rc)
                return rc;
        }
        return 0;
    }
    if (c->counting)
        return verify_graph_once(c, g);
    /* one walk over the list: its links, its length, and each node's
     * definition position (the checks below walk it once more) */
    size_t count = 0;
    const ph_node *prev = NULL;
    for (ph_node *n = g->first; n; n = n->next) {
        if (n->prev != prev)
            return fail(c, g, n, "node list links broken", NULL);
        prev = n;
        n->mark = ++count;
    }
    if (prev != g->last || count != g->n_nodes)
        return fail(c, g, NULL, "node count or list tail wrong", NULL);
    c->nodes += count;
    int rc = check_graph_values(c, g);
    if (rc)
        return rc;
    for (ph_node *n = g->first; n; n = n->next) {
        c->pos = n->mark;
        /* subgraph verification reuses marks: keep this graph's positions */
        size_t saved = c->pos;
        rc = check_node(c, g, n);
        if (rc)
            return rc;
        c->pos = saved;
    }
    return check_graph_outputs(c, g);
}

/* The graph's inputs and initializers. */
static int check_graph_values(vctx *c, const ph_graph *g)
{
    for (size_t i = 0; i < g->n_inputs; i++) {
        const ph_value *v = g->inputs[i];
        if (v->dead || !v->is_input || v->graph != g || name_wrong(c, g, v))
            return fail(c, g, NULL, "graph input broken", v->name);
        int rc = check_value_uses(c, g, v);
        if (rc)
            return rc;
    }
    int64_t ir = g->model->proto->ir_version;
    for (size_t i = 0; i < g->n_inits; i++) {
        const ph_value *v = g->inits[i];
        if (!v)
            continue;
        if (v->dead || !v->tensor || v->producer || v->graph != g || v->init_pos != i ||
            name_wrong(c, g, v))
            return fail(c, g, NULL, "initializer broken", v->name);
        /* ir_version <= 3 lists every initializer as an input of its graph:
         * the save lists the main graph's, a body's cannot be (If branches
         * take no inputs, Loop/Scan bodies have fixed ones) */
        if (g->parent && !v->is_input && ir >= 1 && ir <= 3)
            return fail(c, g, NULL, "initializer of a body in a model of ir_version < 4 (it must be a graph input)",
                        v->name);
        int rc = check_value_uses(c, g, v);
        if (rc)
            return rc;
    }
    return 0;
}

/* The graph's outputs. */
static int check_graph_outputs(vctx *c, const ph_graph *g)
{
    for (size_t i = 0; i < g->n_outputs; i++) {
        const ph_value *v = g->outputs[i].value;
        size_t refs = 0;
        for (size_t k = 0; v && k < g->n_outputs; k++)
            refs += g->outputs[k].value == v;
        if (v && v->graph == g && v->n_output_refs != refs)
            return fail(c, g, NULL, "graph output count of a value is wrong", v->name);
        if (!v || v->dead)
            return fail(c, g, NULL, "graph output reads a removed value", v ? v->name : "");
        if (!ir_in_scope(v, g))
            return fail(c, g, NULL, "graph output is not in scope", v->name);
        if (v->producer && v->producer->removed)
            return fail(c, g, NULL, "graph output is produced by a removed node", v->name);
    }
    return 0;
}

int ir_graph_verify(const ph_graph *g, int names, ph_error *err)
{
    vctx c = {.err = err, .names = names, .model = g->model, .opset = g->model ? ph_model_opset(g->model, "") : -1};
    if (g->model && g->model->graph == g) { /* a whole model: counting first */
        ph_error quiet = {0};
        vctx fast = c;
        fast.err = &quiet;
        fast.counting = 1;
        if (verify_graph(&fast, g) == 0 && !fast.unsure && fast.slots == fast.uses &&
            fast.nodes == g->model->n_nodes_total)
            return 0;
    }
    int rc = verify_graph(&c, g);
    /* c.nodes: every node of g and of its bodies, each list walked above */
    if (!rc && g->model && g->model->graph == g && c.nodes != g->model->n_nodes_total)
        return ph_error_set(err, PH_EVERIFY, "the model counts %zu nodes but has %zu", g->model->n_nodes_total,
                            c.nodes);
    return rc;
}

struct ir_file_check {
    vctx c;
    ph_error quiet; /* written only on a failure, then dropped */
};

ir_file_check *ir_file_check_new(const ph_model *m)
{
    ir_file_check *fc = calloc(1, sizeof *fc);
    if (fc)
        fc->c = (vctx){.err = &fc->quiet, .model = m, .opset = ph_model_opset(m, ""), .built = 1};
    return fc;
}

int ir_file_check_node(ir_file_check *fc, const ph_node *n)
{
    return check_node_built(&fc->c, n->graph, n) == 0;
}

void ir_file_check_free(ir_file_check *fc) { free(fc); }

int ir_graph_verify_loaded(const ph_model *m, const ph_node *from, ph_error *err)
{
    vctx c = {.err = err, .model = m, .opset = ph_model_opset(m, ""), .built = 1};
    for (const ph_node *n = from; n; n = n->next) {
        int rc = check_node_built(&c, m->graph, n);
        if (rc)
            return rc;
    }
    return 0;
}

PH_API int ph_graph_verify(const ph_graph *g, ph_error *err) { return ir_graph_verify(g, 1, err); }
PH_API int ph_graph_verify_fast(const ph_graph *g, ph_error *err) { return ir_graph_verify(g, 0, err); }
