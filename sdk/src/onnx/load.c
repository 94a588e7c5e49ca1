/* sdk/src/onnx/load.c - loading a model: map the file, unpack it, build the
 * IR (build.c), attach the initializers' data.
 *
 * Loading never copies initializer bytes.  The file is mapped read-only and
 * walked at the protobuf wire level; a "skeleton" copy of it without the
 * raw_data fields of the main graph's initializers and without its nodes is
 * handed to protobuf-c (which copies every bytes field it unpacks), and
 * each initializer then points into the mapping.  The nodes are read in
 * place (read_nodes.c).  External-data files are mapped the same way. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "build.h"
#include "internal.h"
#include "order.h"
#include "read_nodes.h"
#include "wire.h"

/* ---------------------------------------------------------- wire format */

typedef struct wbuf {
    uint8_t *d;
    size_t n, cap;
} wbuf;

static int wbuf_put(wbuf *b, const void *p, size_t len)
{
    if (ir_grow((void **)&b->d, &b->cap, b->n + len, 1))
        return PH_ENOMEM;
    memcpy(b->d + b->n, p, len);
    b->n += len;
    return 0;
}

static int wbuf_varint(wbuf *b, uint64_t v)
{
    uint8_t tmp[10];
    return wbuf_put(b, tmp, onnx_wire_put_varint(tmp, v));
}

/* The ModelProto fields a model file starts with: number and wire type. */
static int model_field_ok(uint64_t num, int type)
{
    switch (num) {
    case 1: case 5: /* ir_version, model_version */
        return type == 0;
    case 2: case 3: case 4: case 6: case 7: case 8: case 14: case 20: case 25:
        return type == 2; /* strings, graph, opset_import, metadata_props, training_info, functions */
    }
    return 0;
}

PH_API int ph_model_sniff(const void *data, size_t n, uint64_t file_size)
{
    const uint8_t *p = data, *end = p + n;
    int fields = 0;
    if (!data || n == 0 || file_size < n)
        return 0;
    while (p < end && fields < 32) {
        uint64_t tag, v;
        if (onnx_wire_varint(&p, end, &tag))
            return fields > 0 && n < file_size; /* cut by the end of what was read */
        if (!model_field_ok(tag >> 3, (int)(tag & 7)))
            return 0;
        if (onnx_wire_varint(&p, end, &v))
            return fields > 0 && n < file_size;
        if ((tag & 7) == 2) {
            uint64_t offset = (uint64_t)(p - (const uint8_t *)data);
            if (v > file_size - offset)
                return 0;
            if (v >= (uint64_t)(end - p))
                return 1; /* longer than what was read, inside the file */
            p += v;
        }
        fields++;
    }
    return fields > 0;
}

typedef struct skeleton {
    wbuf buf;
    onnx_raw_ref *refs; /* per main-graph initializer, in order */
    size_t n_refs, cap_refs;
    onnx_node_src *nodes; /* the main graph's nodes, left out of buf (read_nodes.c) */
    size_t n_nodes, cap_nodes;
    const uint8_t *base;
} skeleton;

static int skel_error(ph_error *err, const char *path, const skeleton *s, const uint8_t *at)
{
    return ph_error_set(err, PH_EPARSE,
                        "%s: not a valid ONNX model: protobuf data truncated or malformed at byte %zu",
                        path, (size_t)(at - s->base));
}

/* Copy a TensorProto without its raw_data fields into out, remembering
 * where the last one (the one protobuf keeps) was: its fields are read
 * once to find them and size the copy, then the runs between them are
 * copied. */
static int skel_tensor(skeleton *s, const onnx_wire_field *tf, wbuf *out, const char *path, ph_error *err)
{
    const uint8_t *p = tf->payload, *end = p + tf->len;
    onnx_raw_ref ref = {0};
    size_t kept = tf->len, n_raw = 0;
    while (p < end) {
        onnx_wire_field f;
        if (onnx_wire_next(&p, end, &f))
            return skel_error(err, path, s, p);
        if (f.num == 9 && f.type == 2) {
            ref = (onnx_raw_ref){f.payload, f.len, 1};
            kept -= (size_t)(f.end - f.start);
            n_raw++;
        }
    }
    int rc = ir_grow((void **)&s->refs, &s->cap_refs, s->n_refs + 1, sizeof *s->refs);
    if (!rc)
        s->refs[s->n_refs++] = ref;
    if (!rc)
        rc = wbuf_varint(out, (5u << 3) | 2);
    if (!rc)
        rc = wbuf_varint(out, kept);
    const uint8_t *run = tf->payload; /* the start of the fields not copied yet */
    for (p = tf->payload; !rc && n_raw && p < end;) {
        onnx_wire_field f;
        onnx_wire_next(&p, end, &f); /* read above */
        if (f.num == 9 && f.type == 2) {
            rc = f.start > run ? wbuf_put(out, run, (size_t)(f.start - run)) : 0;
            run = f.end;
        }
    }
    if (!rc && end > run)
        rc = wbuf_put(out, run, (size_t)(end - run));
    return rc ? ph_error_set(err, PH_ENOMEM, "%s: out of memory", path) : 0;
}

static int skel_graph(skeleton *s, const onnx_wire_field *gf, wbuf *out, const char *path, ph_error *err)
{
    const uint8_t *p = gf->payload, *end = p + gf->len;
    wbuf g = {0};
    int rc = 0;
    while (p < end && !rc) {
        onnx_wire_field f;
        if (onnx_wire_next(&p, end, &f)) {
            rc = skel_error(err, path, s, p);
            break;
        }
        if (f.num == 5 && f.type == 2)
            rc = skel_tensor(s, &f, &g, path, err);
        else if (f.num == 1 && f.type == 2) /* a node: read in place later */
            rc = ir_grow((void **)&s->nodes, &s->cap_nodes, s->n_nodes + 1, sizeof *s->nodes)
                     ? ph_error_set(err, PH_ENOMEM, "%s: out of memory", path)
                     : (s->nodes[s->n_nodes++] = (onnx_node_src){.data = f.payload, .len = f.len, .op = -1}, 0);
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
        onnx_wire_field f;
        if (onnx_wire_next(&p, end, &f))
            return skel_error(err, path, s, p);
        if (f.num == 7)
            graphs++;
    }
    if (graphs != 1)
        return 0;
    p = data;
    while (p < end) {
        onnx_wire_field f;
        onnx_wire_next(&p, end, &f);
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
    ir_mapping *map = m->mappings;
    for (; map; map = map->next)
        if (strcmp(map->path, real) == 0)
            break;
    if (!map) {
        ph_error me = {0};
        if (!(map = ir_map_file(real, &me)))
            return ph_error_set(err, me.code ? me.code : PH_EIO, "initializer '%s': external data '%s': %.400s",
                                name, loc, me.message);
        map->next = m->mappings;
        m->mappings = map;
    }
    uint64_t off = 0, len;
    int ok;
    len = ir_tensor_expected_bytes(tp, &ok);
    if (off_s && parse_u64(off_s, &off))
        return ph_error_set(err, PH_EPARSE, "initializer '%s': bad external data offset '%s'", name, off_s);
    if (len_s && parse_u64(len_s, &len))
        return ph_error_set(err, PH_EPARSE, "initializer '%s': bad external data length '%s'", name, len_s);
    if (off > map->size || len > map->size - off)
        return ph_error_set(err, PH_EPARSE, "initializer '%s': external data [%llu, +%llu) lies outside %s (%zu bytes)",
                            name, (unsigned long long)off, (unsigned long long)len, loc, map->size);
    char what[300];
    snprintf(what, sizeof what, "initializer '%s'", name);
    return ir_tensor_attach(t, map->data + off, (size_t)len, err, what);
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
        if (ir_tensor_check(v->tensor->proto, 0, 0, what, err))
            return PH_EPARSE;
    }
    for (const ph_node *n = g->first; n; n = n->next) {
        for (size_t a = 0; a < n->n_attrs; a++) {
            const Onnx__AttributeProto *ap = n->attrs[a];
            size_t nt = ap->n_tensors + (ap->t != NULL);
            for (size_t k = 0; k < nt; k++) {
                const Onnx__TensorProto *tp = k < ap->n_tensors ? ap->tensors[k] : ap->t;
                snprintf(what, sizeof what, "not a valid ONNX model: node '%s' (%s): attribute '%s'", ph_node_name(n),
                         ph_node_op_type(n),
                         ap->name ? ap->name : "");
                if (ir_tensor_check(tp, 0, 0, what, err))
                    return PH_EPARSE;
            }
        }
        for (size_t k = 0; k < ir_node_n_subgraphs(n); k++)
            if (check_tensors(ir_node_subgraphs(n)[k].graph, 1, err))
                return PH_EPARSE;
    }
    return 0;
}

/* Build a model from the mapping (owned from here on).  path names the
 * model in messages; dir is the folder of external data, NULL when the
 * model has no file (loaded from memory). */
static int load_mapping(ir_mapping *map, const char *path, const char *dir, ph_model **out, ph_error *err)
{
    if (map->size == 0) {
        ir_unmap_file(map);
        return ph_error_set(err, PH_EPARSE, "%s: empty file, not an ONNX model", path);
    }
    /* How deep the messages nest is checked before any recursion: here for
     * what protobuf-c unpacks at once (the skeleton: the file but the main
     * graph's nodes, and raw data, which holds no message; else the whole
     * file), each node as it is read (read_nodes.c).  Making the skeleton
     * does not recurse. */
    skeleton s = {0};
    int rc = skel_model(&s, map->data, map->size, path, err);
    if (!rc)
        rc = s.buf.n ? onnx_check_nesting(s.buf.d, s.buf.n, path, err)
                     : onnx_check_nesting(map->data, map->size, path, err);
    if (rc) {
        free(s.buf.d);
        free(s.refs);
        free(s.nodes);
        ir_unmap_file(map);
        return rc;
    }
    Onnx__ModelProto *mp = s.buf.n ? onnx__model_proto__unpack(NULL, s.buf.n, s.buf.d)
                                   : onnx__model_proto__unpack(NULL, map->size, map->data);
    free(s.buf.d);
    if (!mp || !mp->graph || onnx_has_field_zero(&mp->base)) {
        const char *why = !mp ? "%s: not a valid ONNX model: protobuf parse failed"
                          : !mp->graph ? "%s: not an ONNX model: it has no graph"
                                       : "%s: not a valid ONNX model: a field numbered 0 (not valid protobuf)";
        if (mp)
            protobuf_c_message_free_unpacked(&mp->base, NULL);
        free(s.refs);
        free(s.nodes);
        ir_unmap_file(map);
        return ph_error_set(err, PH_EPARSE, why, path);
    }
    ph_model *m = ir_model_alloc();
    if (!m) {
        protobuf_c_message_free_unpacked(&mp->base, NULL);
        free(s.refs);
        free(s.nodes);
        ir_unmap_file(map);
        return ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
    }
    m->proto = mp;
    m->mappings = map;
    struct stat st;
    if (dir && stat(path, &st) == 0) {
        m->source_dev = st.st_dev;
        m->source_ino = st.st_ino;
    }
    m->source_path = dir ? ir_strdup(path) : NULL;
    m->graph = ir_graph_new(m, NULL, mp->graph);
    if (!m->graph || (dir && !m->source_path)) {
        ph_model_free(m);
        free(s.refs);
        free(s.nodes);
        return ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
    }
    /* every initializer proto of the main graph, in order, for the refs */
    size_t n_inits = mp->graph->n_initializer;
    if (s.buf.n && s.n_refs != n_inits) {
        ph_model_free(m);
        free(s.refs);
        free(s.nodes);
        return ph_error_set(err, PH_EPARSE, "%s: initializer count mismatch while reading", path);
    }
    Onnx__TensorProto **init_protos = n_inits ? malloc(n_inits * sizeof *init_protos) : NULL;
    if (n_inits && !init_protos) {
        ph_model_free(m);
        free(s.refs);
        free(s.nodes);
        return ph_error_set(err, PH_ENOMEM, "%s: out of memory", path);
    }
    if (n_inits)
        memcpy(init_protos, mp->graph->initializer, n_inits * sizeof *init_protos);
    /* The nodes' pages go as the build passes them, unless an initializer's
     * data, read after the build, lies among them (a file that interleaves
     * the graph's fields).  Every other field is read from the skeleton. */
    const ir_mapping *behind = s.n_nodes ? map : NULL;
    const uint8_t *nodes_lo = s.n_nodes ? s.nodes[0].data : NULL;
    const uint8_t *nodes_hi = s.n_nodes ? s.nodes[s.n_nodes - 1].data + s.nodes[s.n_nodes - 1].len : NULL;
    for (size_t k = 0; k < s.n_refs && behind; k++)
        if (s.refs[k].present && s.refs[k].data < nodes_hi && s.refs[k].data + s.refs[k].len > nodes_lo)
            behind = NULL;
    onnx_build_facts facts;
    onnx_main_graph main_graph = {.nodes = s.nodes, .n_nodes = s.n_nodes, .behind = behind,
                                  .raw = s.buf.n ? s.refs : NULL, .n_raw = s.buf.n ? s.n_refs : 0};
    rc = onnx_graph_build_main(m->graph, &main_graph, &facts, err);
    int in_order = facts.in_order; /* every main-graph node reads only values defined before it */
    /* all read in place: no node with a tensor attribute, none with a body */
    int in_place = in_order && !m->bodies_made && facts.in_place;
    free(s.nodes);
    /* bodies come only from the loader's onnx_node_build_subgraphs */
    m->n_nodes_total = m->bodies_made ? ir_graph_count_nodes(m->graph) : m->graph->n_nodes;
    m->order_dirty = 1; /* the file's order is checked by the first toposort */
    m->init_version++;
    /* attach mapped raw data and external data to the main graph's
     * initializers the build did not (a check failed: its message is made
     * here, after any error of the nodes; or external data) */
    for (size_t i = rc ? 0 : facts.inits_ready; i < m->graph->n_inits && !rc; i++) {
        ph_value *v = m->graph->inits[i];
        ph_tensor *t = v->tensor;
        size_t k = i; /* initializers are taken over in order */
        int mapped = s.buf.n && k < s.n_refs && s.refs[k].present;
        size_t len = mapped ? s.refs[k].len : 0;
        char what[300]; /* the messages name the initializer: made only for one */
        if (ir_tensor_check(t->proto, mapped, len, "", NULL)) {
            snprintf(what, sizeof what, "not a valid ONNX model: initializer '%s'", v->name);
            rc = ir_tensor_check(t->proto, mapped, len, what, err);
        }
        if (rc || (k < n_inits && t->proto != init_protos[k]))
            continue;
        if (mapped && ir_tensor_attach(t, s.refs[k].data, len, NULL, "")) {
            snprintf(what, sizeof what, "initializer '%s'", v->name);
            rc = ir_tensor_attach(t, s.refs[k].data, len, err, what);
        } else if (!mapped && t->external) {
            rc = attach_external(m, t, dir, err);
        }
    }
    if (!rc && !in_place) /* (the main graph's initializers are checked above) */
        rc = check_tensors(m->graph, 0, err);
    free(init_protos);
    free(s.refs);
    /* a list out of order is sorted (onnx/order.c); a cycle is refused.  A
     * list the build found in order, without bodies (whose nodes may read
     * a value of the main graph listed after their node), needs neither. */
    if (!rc && !(in_order && !m->bodies_made))
        rc = onnx_model_sort_loaded(m, err);
    /* what loaded must also hold together (e.g. no attribute without a name;
     * names are resolved by the build); of a graph built in order from
     * nodes read in place, only what the file decides can fail */
    ph_error verr = {0};
    if (!rc && (in_place ? ir_graph_verify_loaded(m, facts.failed, &verr) : ir_graph_verify(m->graph, 0, &verr)) != 0)
        rc = ph_error_set(err, PH_EPARSE, "not a valid ONNX model: %.400s", verr.message);
    if (!rc && m->alloc_failures) /* e.g. a declared type that could not be kept */
        rc = ph_error_set(err, PH_ENOMEM, "out of memory");
    /* The verifier refuses a node that reads a value of its own graph
     * defined after it (and a graph built in order has none), so without
     * bodies (whose outer references it does not order) the file's order is
     * known good: the first toposort, a walk of the whole graph, is not
     * needed. */
    if (!rc && !m->bodies_made)
        m->order_dirty = 0;
    /* What the IR needs of the file is in the IR, but for the weights, read
     * in place when used: the file's pages need not stay in the process. */
    if (!rc)
        ir_mapping_release(map);
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
    ir_mapping *map = ir_map_file(path, err);
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
    ir_mapping *map = ir_map_memory(data, size, name, err);
    if (!map)
        return err ? err->code : PH_EIO;
    return load_mapping(map, name, NULL, out, err);
}
