/* sdk/src/onnx/model.c - models: create, load, build the IR, free.
 *
 * Loading never copies initializer bytes.  The file is mapped read-only and
 * walked at the protobuf wire level; a "skeleton" copy of it without the
 * raw_data fields of the main graph's initializers is handed to protobuf-c
 * (which copies every bytes field it unpacks), and each initializer then
 * points into the mapping.  External-data files are mapped the same way. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

ph_node *phi_node_from_proto(ph_graph *g, Onnx__NodeProto *np, ph_error *err);

/* ---------------------------------------------------------- wire format */

typedef struct wbuf {
    uint8_t *d;
    size_t n, cap;
} wbuf;

static int wbuf_put(wbuf *b, const void *p, size_t len)
{
    if (phi_grow((void **)&b->d, &b->cap, b->n + len, 1))
        return PH_ENOMEM;
    memcpy(b->d + b->n, p, len);
    b->n += len;
    return 0;
}

static int wbuf_varint(wbuf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t k = 0;
    do {
        tmp[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[k] |= 0x80;
        k++;
    } while (v);
    return wbuf_put(b, tmp, k);
}

typedef struct wire_field {
    uint32_t num;
    int type;
    const uint8_t *start;   /* the tag */
    const uint8_t *payload; /* for length-delimited fields */
    size_t len;
    const uint8_t *end;     /* one past the field */
} wire_field;

static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return -1;
        uint8_t c = *(*p)++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* Read one field at *p; 0, or -1 when truncated or malformed. */
static int next_field(const uint8_t **p, const uint8_t *end, wire_field *f)
{
    uint64_t tag, v;
    f->start = *p;
    if (read_varint(p, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
        return -1;
    f->num = (uint32_t)(tag >> 3);
    f->type = (int)(tag & 7);
    f->payload = NULL;
    f->len = 0;
    switch (f->type) {
    case 0:
        if (read_varint(p, end, &v))
            return -1;
        break;
    case 1:
        if ((size_t)(end - *p) < 8)
            return -1;
        *p += 8;
        break;
    case 5:
        if ((size_t)(end - *p) < 4)
            return -1;
        *p += 4;
        break;
    case 2:
        if (read_varint(p, end, &v) || v > (uint64_t)(end - *p))
            return -1;
        f->payload = *p;
        f->len = (size_t)v;
        *p += v;
        break;
    default: /* groups (3, 4) are not used by ONNX; 6 and 7 do not exist */
        return -1;
    }
    f->end = *p;
    return 0;
}

typedef struct raw_ref {
    const uint8_t *data;
    size_t len;
    int present;
} raw_ref;

typedef struct skeleton {
    wbuf buf;
    raw_ref *refs; /* per main-graph initializer, in order */
    size_t n_refs, cap_refs;
    const uint8_t *base;
} skeleton;

static int skel_error(ph_error *err, const char *path, const skeleton *s, const uint8_t *at)
{
    return ph_error_set(err, PH_EPARSE,
                        "%s: not a valid ONNX model: protobuf data truncated or malformed at byte %zu",
                        path, (size_t)(at - s->base));
}

/* Copy a TensorProto without its raw_data, remembering where raw_data was. */
static int skel_tensor(skeleton *s, const wire_field *tf, wbuf *out, const char *path, ph_error *err)
{
    const uint8_t *p = tf->payload, *end = p + tf->len;
    wbuf t = {0};
    raw_ref ref = {0};
    while (p < end) {
        wire_field f;
        if (next_field(&p, end, &f)) {
            free(t.d);
            return skel_error(err, path, s, p);
        }
        if (f.num == 9 && f.type == 2) {
            ref = (raw_ref){f.payload, f.len, 1};
            continue;
        }
        if (wbuf_put(&t, f.start, (size_t)(f.end - f.start))) {
            free(t.d);
            return ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
        }
    }
    int rc = phi_grow((void **)&s->refs, &s->cap_refs, s->n_refs + 1, sizeof *s->refs);
    if (!rc)
        s->refs[s->n_refs++] = ref;
    if (!rc)
        rc = wbuf_varint(out, (5u << 3) | 2);
    if (!rc)
        rc = wbuf_varint(out, t.n);
    if (!rc && t.n)
        rc = wbuf_put(out, t.d, t.n);
    free(t.d);
    return rc ? ph_error_set(err, PH_ENOMEM, "%s: out of memory", path) : 0;
}

static int skel_graph(skeleton *s, const wire_field *gf, wbuf *out, const char *path, ph_error *err)
{
    const uint8_t *p = gf->payload, *end = p + gf->len;
    wbuf g = {0};
    int rc = 0;
    while (p < end && !rc) {
        wire_field f;
        if (next_field(&p, end, &f)) {
            rc = skel_error(err, path, s, p);
            break;
        }
        if (f.num == 5 && f.type == 2)
            rc = skel_tensor(s, &f, &g, path, err);
        else if (wbuf_put(&g, f.start, (size_t)(f.end - f.start)))
            rc = ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
    }
    if (!rc && (wbuf_varint(out, (7u << 3) | 2) || wbuf_varint(out, g.n) || (g.n && wbuf_put(out, g.d, g.n))))
        rc = ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
    free(g.d);
    return rc;
}

/* Build the skeleton of a ModelProto.  With more than one graph field (which
 * protobuf would merge) no skeleton is made and s->buf stays empty: the
 * caller then unpacks the file as it is. */
static int skel_model(skeleton *s, const uint8_t *data, size_t size, const char *path, ph_error *err)
{
    const uint8_t *p = data, *end = data + size;
    int graphs = 0;
    s->base = data;
    while (p < end) {
        wire_field f;
        if (next_field(&p, end, &f))
            return skel_error(err, path, s, p);
        if (f.num == 7)
            graphs++;
    }
    if (graphs != 1)
        return 0;
    p = data;
    while (p < end) {
        wire_field f;
        next_field(&p, end, &f);
        int rc;
        if (f.num == 7 && f.type == 2)
            rc = skel_graph(s, &f, &s->buf, path, err);
        else
            rc = wbuf_put(&s->buf, f.start, (size_t)(f.end - f.start)) ? ph_error_set(err, PH_ENOMEM, "out of memory") : 0;
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------ IR build */

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
    if (phi_grow((void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1, sizeof *g->inputs))
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    void *p = realloc(g->input_vi, g->cap_inputs * sizeof *g->input_vi);
    if (!p)
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    g->input_vi = p;
    ph_value *v = phi_value_new(g, name);
    if (!v)
        return ph_error_set(err, PH_EPARSE, "graph '%s': input '%s' is defined twice", ph_graph_name(g), name);
    v->is_input = 1;
    phi_value_parse_type(v, vi->type);
    g->inputs[g->n_inputs] = v;
    g->input_vi[g->n_inputs++] = vi;
    return 0;
}

static int take_initializer(ph_graph *g, Onnx__TensorProto *tp, const raw_ref *ref, ph_error *err)
{
    const char *name = tp->name ? tp->name : "";
    if (!*name) {
        protobuf_c_message_free_unpacked(&tp->base, NULL);
        return ph_error_set(err, PH_EPARSE, "graph '%s': an initializer has no name", ph_graph_name(g));
    }
    ph_tensor *t = phi_tensor_wrap(tp, 0);
    if (!t) {
        protobuf_c_message_free_unpacked(&tp->base, NULL);
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    /* room first: a value made below and then not stored would leak */
    if (phi_grow((void **)&g->inits, &g->cap_inits, g->n_inits + 1, sizeof *g->inits)) {
        ph_tensor_free(t);
        return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    ph_value *v = phi_graph_value(g, name);
    /* name lives in tp, which ph_tensor_free frees: report first */
    if (v && (!v->is_input || v->tensor)) {
        int rc = ph_error_set(err, PH_EPARSE, "graph '%s': initializer '%s' is defined twice", ph_graph_name(g), name);
        ph_tensor_free(t);
        return rc;
    }
    if (!v && !(v = phi_value_new(g, name))) {
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
    if (ref && ref->present) {
        char what[300];
        snprintf(what, sizeof what, "initializer '%s'", name);
        return phi_tensor_attach(t, ref->data, ref->len, err, what);
    }
    return 0; /* the data is checked once the model is built (check_tensors) */
}

static int resolve_inputs(ph_node *n, ph_error *err)
{
    Onnx__NodeProto *np = n->proto;
    for (size_t i = 0; i < np->n_input; i++) {
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
        if (phi_add_use(v, n, (uint32_t)i))
            return ph_error_set(err, PH_ENOMEM, "out of memory");
    }
    /* the names now live in the values: drop the copies */
    for (size_t i = 0; i < np->n_input; i++)
        free(np->input[i]);
    for (size_t i = 0; i < np->n_output; i++)
        free(np->output[i]);
    free(np->input);
    free(np->output);
    np->input = np->output = NULL;
    np->n_input = np->n_output = 0;
    return 0;
}

int phi_graph_build(ph_graph *g, ph_error *err)
{
    Onnx__GraphProto *gp = g->proto;
    int rc = 0;
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

    size_t i = 0;
    for (i = 0; i < n_ins && !rc; i++)
        rc = take_input_checked(g, ins[i], err);
    for (; i < n_ins; i++)
        protobuf_c_message_free_unpacked(&ins[i]->base, NULL);
    free(ins);

    for (i = 0; i < n_inits && !rc; i++)
        rc = take_initializer(g, inits[i], NULL, err);
    for (; i < n_inits; i++)
        protobuf_c_message_free_unpacked(&inits[i]->base, NULL);
    free(inits);

    /* nodes: outputs first (a model may list nodes out of order), then inputs */
    ph_node *first_new = NULL;
    for (i = 0; i < n_nodes && !rc; i++) {
        ph_node *n = phi_node_from_proto(g, nodes[i], err); /* owns nodes[i] even on failure */
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
        rc = resolve_inputs(n, err);
    for (ph_node *n = first_new; n && !rc; n = n->next)
        rc = phi_node_build_subgraphs(n, err);

    for (i = 0; i < n_outs; i++) {
        Onnx__ValueInfoProto *vi = outs[i];
        if (rc) {
            protobuf_c_message_free_unpacked(&vi->base, NULL);
            continue;
        }
        ph_value *v = vi->name ? ph_graph_find_value(g, vi->name) : NULL;
        if (!v || phi_grow((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1, sizeof *g->outputs)) {
            rc = ph_error_set(err, PH_EPARSE, "graph '%s': output '%s' is not produced by any node, input or initializer",
                              ph_graph_name(g), vi->name ? vi->name : "");
            protobuf_c_message_free_unpacked(&vi->base, NULL);
            continue;
        }
        g->outputs[g->n_outputs++] = (phi_output){v, vi};
        v->n_output_refs++;
        if (v->rank < 0 || !v->dtype)
            phi_value_parse_type(v, vi->type);
    }
    free(outs);
    for (i = 0; i < g->n_value_info && !rc; i++) {
        const Onnx__ValueInfoProto *vi = g->value_info[i];
        ph_value *v = vi->name ? phi_graph_value(g, vi->name) : NULL;
        if (v && v->rank < 0 && !v->dtype)
            phi_value_parse_type(v, vi->type);
    }
    if (!rc && ph_graph_toposort(g) != 0)
        rc = ph_error_set(err, PH_EPARSE, "graph '%s': the nodes form a cycle", ph_graph_name(g));
    return rc;
}

/* ----------------------------------------------------------- the model */

static ph_model *model_alloc(void)
{
    return calloc(1, sizeof(ph_model));
}

PH_API ph_model *ph_model_new(int64_t opset)
{
    ph_model *m = model_alloc();
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
    mp->producer_name = phi_strdup("passhost");
    op->has_version = 1;
    op->version = opset;
    ops[0] = op;
    mp->opset_import = ops;
    mp->n_opset_import = 1;
    gp->name = phi_strdup("main");
    mp->graph = gp;
    m->proto = mp;
    m->graph = phi_graph_new(m, NULL, gp);
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
    phi_model_collect(m);
    phi_graph_free(m->graph);
    phi_notify_model_freed(m);
    if (m->proto)
        protobuf_c_message_free_unpacked(&m->proto->base, NULL);
    while (m->mappings) {
        phi_mapping *next = m->mappings->next;
        phi_unmap_file(m->mappings);
        m->mappings = next;
    }
    for (size_t i = 0; i < m->n_strings; i++)
        free(m->strings[i]);
    free(m->strings);
    phi_map_free(&m->value_names);
    for (size_t i = 0; i < m->node_names.cap; i++) /* owned keys */
        if (m->node_names.slots[i].key && m->node_names.slots[i].val)
            free((char *)m->node_names.slots[i].key);
    phi_map_free(&m->node_names);
    free(m->source_path);
    free(m);
}

PH_API ph_graph *ph_model_graph(ph_model *m) { return m->graph; }
PH_API int64_t ph_model_ir_version(const ph_model *m) { return m->proto->ir_version; }

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
    if (!is_default_domain(domain) && !(op->domain = phi_strdup(domain))) {
        free(op);
        return PH_ENOMEM;
    }
    op->has_version = 1;
    op->version = version;
    arr[mp->n_opset_import++] = op;
    return 0;
}

/* ------------------------------------------------------------- loading */

static const char *find_entry(const Onnx__TensorProto *tp, const char *key)
{
    for (size_t i = 0; i < tp->n_external_data; i++)
        if (tp->external_data[i]->key && strcmp(tp->external_data[i]->key, key) == 0)
            return tp->external_data[i]->value;
    return NULL;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-')
        return -1;
    *out = v;
    return 0;
}

/* 1 when the relative path loc has a ".." component. */
static int has_dotdot(const char *loc)
{
    for (const char *p = loc; *p;) {
        size_t len = strcspn(p, "/");
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return 1;
        p += len;
        while (*p == '/')
            p++;
    }
    return 0;
}

/* Point an EXTERNAL initializer at a mapping of its data file.  The
 * location must stay inside the model's folder: no absolute path, no ".."
 * component, and once symbolic links are resolved the file must still lie
 * under the folder (a link to /etc/passwd is refused, not read). */
static int attach_external(ph_model *m, ph_tensor *t, const char *model_dir, ph_error *err)
{
    const Onnx__TensorProto *tp = t->proto;
    const char *loc = find_entry(tp, "location");
    const char *off_s = find_entry(tp, "offset"), *len_s = find_entry(tp, "length");
    const char *name = tp->name ? tp->name : "";
    if (!loc || !*loc)
        return ph_error_set(err, PH_EPARSE, "initializer '%s': external data without a location", name);
    if (tp->has_data_type && tp->data_type == PH_DT_STRING) /* external data is raw_data kept aside */
        return ph_error_set(err, PH_EPARSE, "initializer '%s': a STRING tensor cannot use external data", name);
    if (loc[0] == '/' || has_dotdot(loc))
        return ph_error_set(err, PH_EPARSE, "initializer '%s': external data location '%s' is not inside the model's "
                            "folder (absolute paths and '..' are refused)", name, loc);
    if (!model_dir)
        return ph_error_set(err, PH_EPARSE, "initializer '%s': external data ('%s') needs the model's file and "
                            "folder; this model was loaded from memory", name, loc);
    char path[PATH_MAX], real_dir[PATH_MAX], real[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", model_dir, loc) >= sizeof path)
        return ph_error_set(err, PH_EINVAL, "initializer '%s': external data path too long", name);
    if (!realpath(model_dir, real_dir))
        return ph_error_set(err, PH_EIO, "initializer '%s': %s: %s", name, model_dir, strerror(errno));
    if (!realpath(path, real))
        return ph_error_set(err, PH_EIO, "initializer '%s': external data '%s': cannot open: %s", name, loc,
                            strerror(errno));
    size_t dl = strlen(real_dir);
    if (strncmp(real, real_dir, dl) != 0 || (real[dl] != '/' && strcmp(real_dir, "/") != 0))
        return ph_error_set(err, PH_EPARSE, "initializer '%s': external data location '%s' leads outside the model's "
                            "folder (to %s); refused", name, loc, real);
    phi_mapping *map = m->mappings;
    for (; map; map = map->next)
        if (strcmp(map->path, real) == 0)
            break;
    if (!map) {
        ph_error me = {0};
        if (!(map = phi_map_file(real, &me)))
            return ph_error_set(err, me.code ? me.code : PH_EIO, "initializer '%s': external data '%s': %.400s",
                                name, loc, me.message);
        map->next = m->mappings;
        m->mappings = map;
    }
    uint64_t off = 0, len;
    int ok;
    len = phi_tensor_expected_bytes(tp, &ok);
    if (off_s && parse_u64(off_s, &off))
        return ph_error_set(err, PH_EPARSE, "initializer '%s': bad external data offset '%s'", name, off_s);
    if (len_s && parse_u64(len_s, &len))
        return ph_error_set(err, PH_EPARSE, "initializer '%s': bad external data length '%s'", name, len_s);
    if (off > map->size || len > map->size - off)
        return ph_error_set(err, PH_EPARSE, "initializer '%s': external data [%llu, +%llu) lies outside %s (%zu bytes)",
                            name, (unsigned long long)off, (unsigned long long)len, loc, map->size);
    char what[300];
    snprintf(what, sizeof what, "initializer '%s'", name);
    return phi_tensor_attach(t, map->data + off, (size_t)len, err, what);
}

/* Check every tensor the model holds but the main graph's initializers
 * (checked as they are attached): initializers of bodies, and TENSOR and
 * TENSORS attributes (Constant values) of every node, bodies included. */
static int check_tensors(const ph_graph *g, int inits, ph_error *err)
{
    char what[400];
    for (size_t i = 0; inits && i < g->n_inits; i++) {
        const ph_value *v = g->inits[i];
        if (!v)
            continue;
        snprintf(what, sizeof what, "not a valid ONNX model: graph '%s': initializer '%s'", ph_graph_name(g),
                 v->name);
        if (phi_tensor_check(v->tensor->proto, 0, 0, what, err))
            return PH_EPARSE;
    }
    for (const ph_node *n = g->first; n; n = n->next) {
        const Onnx__NodeProto *np = n->proto;
        for (size_t a = 0; a < np->n_attribute; a++) {
            const Onnx__AttributeProto *ap = np->attribute[a];
            size_t nt = ap->n_tensors + (ap->t != NULL);
            for (size_t k = 0; k < nt; k++) {
                const Onnx__TensorProto *tp = k < ap->n_tensors ? ap->tensors[k] : ap->t;
                snprintf(what, sizeof what, "not a valid ONNX model: node '%s' (%s): attribute '%s'", ph_node_name(n),
                         ph_node_op_type(n),
                         ap->name ? ap->name : "");
                if (phi_tensor_check(tp, 0, 0, what, err))
                    return PH_EPARSE;
            }
        }
        for (size_t k = 0; k < n->n_subgraphs; k++)
            if (check_tensors(n->subgraphs[k].graph, 1, err))
                return PH_EPARSE;
    }
    return 0;
}

/* 1 if a message of the tree holds an unknown field numbered 0, which no
 * valid protobuf encoding has: protobuf-c accepts its tag when the varint
 * is padded (0x81 0x00) but not when written plainly, so such a model would
 * save to bytes that no longer load.  Walks every sub-message once (the
 * nesting is as deep as protobuf-c's own unpack went). */
static int has_field_zero(const ProtobufCMessage *m)
{
    for (unsigned i = 0; i < m->n_unknown_fields; i++)
        if (m->unknown_fields[i].tag == 0)
            return 1;
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + fd->quantifier_offset);
            ProtobufCMessage *const *arr = *(ProtobufCMessage *const *const *)(base + fd->offset);
            for (size_t k = 0; k < n; k++)
                if (arr[k] && has_field_zero(arr[k]))
                    return 1;
            continue;
        }
        if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && *(const uint32_t *)(base + fd->quantifier_offset) != fd->id)
            continue; /* another member of the oneof is set */
        const ProtobufCMessage *sub = *(ProtobufCMessage *const *)(base + fd->offset);
        if (sub && has_field_zero(sub))
            return 1;
    }
    return 0;
}

/* Build a model from the mapping (owned from here on).  path names the
 * model in messages; dir is the folder of external data, NULL when the
 * model has no file (loaded from memory). */
static int load_mapping(phi_mapping *map, const char *path, const char *dir, ph_model **out, ph_error *err)
{
    if (map->size == 0) {
        phi_unmap_file(map);
        return ph_error_set(err, PH_EPARSE, "%s: empty file, not an ONNX model", path);
    }
    int rc = phi_check_nesting(map->data, map->size, path, err); /* before any recursion */
    if (rc) {
        phi_unmap_file(map);
        return rc;
    }
    skeleton s = {0};
    rc = skel_model(&s, map->data, map->size, path, err);
    if (rc) {
        free(s.buf.d);
        free(s.refs);
        phi_unmap_file(map);
        return rc;
    }
    Onnx__ModelProto *mp = s.buf.n ? onnx__model_proto__unpack(NULL, s.buf.n, s.buf.d)
                                   : onnx__model_proto__unpack(NULL, map->size, map->data);
    free(s.buf.d);
    if (!mp || !mp->graph || has_field_zero(&mp->base)) {
        const char *why = !mp ? "%s: not a valid ONNX model: protobuf parse failed"
                          : !mp->graph ? "%s: not an ONNX model: it has no graph"
                                       : "%s: not a valid ONNX model: a field numbered 0 (not valid protobuf)";
        if (mp)
            protobuf_c_message_free_unpacked(&mp->base, NULL);
        free(s.refs);
        phi_unmap_file(map);
        return ph_error_set(err, PH_EPARSE, why, path);
    }
    ph_model *m = model_alloc();
    if (!m) {
        protobuf_c_message_free_unpacked(&mp->base, NULL);
        free(s.refs);
        phi_unmap_file(map);
        return ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
    }
    m->proto = mp;
    m->mappings = map;
    struct stat st;
    if (dir && stat(path, &st) == 0) {
        m->source_dev = st.st_dev;
        m->source_ino = st.st_ino;
    }
    m->source_path = dir ? phi_strdup(path) : NULL;
    m->graph = phi_graph_new(m, NULL, mp->graph);
    if (!m->graph || (dir && !m->source_path)) {
        ph_model_free(m);
        free(s.refs);
        return ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
    }
    /* every initializer proto of the main graph, in order, for the refs */
    size_t n_inits = mp->graph->n_initializer;
    if (s.buf.n && s.n_refs != n_inits) {
        ph_model_free(m);
        free(s.refs);
        return ph_error_set(err, PH_EPARSE, "%s: initializer count mismatch while reading", path);
    }
    Onnx__TensorProto **init_protos = n_inits ? malloc(n_inits * sizeof *init_protos) : NULL;
    if (n_inits && !init_protos) {
        ph_model_free(m);
        free(s.refs);
        return ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
    }
    if (n_inits)
        memcpy(init_protos, mp->graph->initializer, n_inits * sizeof *init_protos);
    rc = phi_graph_build(m->graph, err);
    m->n_nodes_total = phi_graph_count_nodes(m->graph);
    m->order_dirty = 1; /* the file's order is checked by the first toposort */
    m->init_version++;
    /* attach mapped raw data and external data to the main graph's initializers */
    for (size_t i = 0; i < m->graph->n_inits && !rc; i++) {
        ph_value *v = m->graph->inits[i];
        ph_tensor *t = v->tensor;
        size_t k = i; /* initializers are taken over in order */
        int mapped = s.buf.n && k < s.n_refs && s.refs[k].present;
        char what[300];
        snprintf(what, sizeof what, "not a valid ONNX model: initializer '%s'", v->name);
        rc = phi_tensor_check(t->proto, mapped, mapped ? s.refs[k].len : 0, what, err);
        snprintf(what, sizeof what, "initializer '%s'", v->name);
        if (rc || (k < n_inits && t->proto != init_protos[k]))
            continue;
        if (mapped)
            rc = phi_tensor_attach(t, s.refs[k].data, s.refs[k].len, err, what);
        else if (t->external)
            rc = attach_external(m, t, dir, err);
    }
    if (!rc)
        rc = check_tensors(m->graph, 0, err);
    free(init_protos);
    free(s.refs);
    /* what loaded must also hold together (e.g. no attribute without a name) */
    ph_error verr = {0};
    if (!rc && phi_graph_verify(m->graph, 0, &verr) != 0) /* names: resolved by the build */
        rc = ph_error_set(err, PH_EPARSE, "not a valid ONNX model: %.400s", verr.message);
    if (!rc && m->alloc_failures) /* e.g. a declared type that could not be kept */
        rc = ph_error_set(err, PH_ENOMEM, "out of memory");
    /* The verifier refuses a node that reads a value of its own graph
     * defined after it, so without bodies (whose outer references it does
     * not order) the file's order is known good: the first toposort, a walk
     * of the whole graph, is not needed. */
    if (!rc && !m->loaded_bodies)
        m->order_dirty = 0;
    if (rc) {
        ph_model_free(m);
        if (err && !strstr(err->message, path)) {
            char msg[sizeof err->message + 300];
            snprintf(msg, sizeof msg, "%s: %s", path, err->message);
            snprintf(err->message, sizeof err->message, "%.*s", (int)sizeof err->message - 1, msg);
        }
        return rc;
    }
    *out = m;
    return 0;
}

PH_API int ph_model_load(const char *path, ph_model **out, ph_error *err)
{
    *out = NULL;
    if (err)
        err->code = 0, err->message[0] = 0;
    phi_mapping *map = phi_map_file(path, err);
    if (!map)
        return err ? err->code : PH_EIO;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    return load_mapping(map, path, dir, out, err);
}

PH_API int ph_model_load_memory(const void *data, size_t size, const char *name, ph_model **out, ph_error *err)
{
    *out = NULL;
    if (err)
        err->code = 0, err->message[0] = 0;
    if (!name || !*name)
        name = "<memory>";
    if (size == 0)
        return ph_error_set(err, PH_EPARSE, "%s: empty, not an ONNX model", name);
    phi_mapping *map = phi_map_memory(data, size, name, err);
    if (!map)
        return err ? err->code : PH_EIO;
    return load_mapping(map, name, NULL, out, err);
}
