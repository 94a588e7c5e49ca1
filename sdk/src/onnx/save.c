/* sdk/src/onnx/save.c - write a model: the IR is put back into the protobuf tree
 * for the duration of one streaming pack, then the tree is restored.
 *
 * Nothing is serialized to memory first: protobuf-c packs straight into a
 * buffered file writer, and initializer bytes go from their mapping to the
 * file without a copy.  The file is written under a temporary name in the
 * target folder and renamed over the target only when complete. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* --------------------------------------------------------- undo log */

typedef struct undo_entry {
    void *addr;
    size_t size;
    unsigned char old[16]; /* the largest field set: ProtobufCBinaryData */
} undo_entry;

typedef struct save_state {
    undo_entry *undo;
    size_t n_undo, cap_undo;
    void **tmp;
    size_t n_tmp, cap_tmp;
    int oom;
} save_state;

/* Set the field at addr (size bytes) to *val, remembering the old bytes. */
static void set_field(save_state *st, void *addr, const void *val, size_t size)
{
    if (st->oom || phi_grow((void **)&st->undo, &st->cap_undo, st->n_undo + 1, sizeof *st->undo)) {
        st->oom = 1;
        return;
    }
    if (size > sizeof st->undo[0].old) {
        st->oom = 1;
        return;
    }
    undo_entry *e = &st->undo[st->n_undo++];
    e->addr = addr;
    e->size = size;
    memcpy(e->old, addr, size);
    memcpy(addr, val, size);
}

#define SET(st, field, value)                                                  \
    do {                                                                       \
        __typeof__(field) v_ = (value);                                        \
        set_field((st), &(field), &v_, sizeof(field));                         \
    } while (0)

static void *tmp_alloc(save_state *st, size_t size)
{
    if (st->oom || phi_grow((void **)&st->tmp, &st->cap_tmp, st->n_tmp + 1, sizeof *st->tmp)) {
        st->oom = 1;
        return NULL;
    }
    void *p = malloc(size ? size : 1);
    if (!p) {
        st->oom = 1;
        return NULL;
    }
    st->tmp[st->n_tmp++] = p;
    return p;
}

static void restore(save_state *st)
{
    while (st->n_undo) {
        undo_entry *e = &st->undo[--st->n_undo];
        memcpy(e->addr, e->old, e->size);
    }
    for (size_t i = 0; i < st->n_tmp; i++)
        free(st->tmp[i]);
    free(st->undo);
    free(st->tmp);
}

/* ----------------------------------------------------- IR -> protobuf */

/* the name written for an omitted input or output (never modified) */
#define EMPTY_NAME ((char *)"")

static void sync_graph(save_state *st, ph_graph *g);

/* Point the node's name arrays into `names` (the node protos keep empty
 * input/output arrays between saves, so unsync_nodes can clear them without
 * an undo entry per node); returns the next free slot. */
static char **sync_node(save_state *st, ph_node *n, char **names)
{
    Onnx__NodeProto *p = n->proto;
    for (size_t i = 0; i < n->n_inputs; i++)
        names[i] = n->inputs[i] ? n->inputs[i]->name : EMPTY_NAME;
    p->input = names;
    p->n_input = n->n_inputs;
    names += n->n_inputs;
    for (size_t i = 0; i < n->n_outputs; i++)
        names[i] = n->outputs[i] ? n->outputs[i]->name : EMPTY_NAME;
    p->output = names;
    p->n_output = n->n_outputs;
    names += n->n_outputs;
    for (size_t s = 0; s < n->n_subgraphs; s++)
        sync_graph(st, n->subgraphs[s].graph);
    return names;
}

/* Empty the name arrays sync_node set, in g and its subgraphs. */
static void unsync_nodes(ph_graph *g)
{
    for (ph_node *n = g->first; n; n = n->next) {
        n->proto->input = n->proto->output = NULL;
        n->proto->n_input = n->proto->n_output = 0;
        for (size_t s = 0; s < n->n_subgraphs; s++)
            unsync_nodes(n->subgraphs[s].graph);
    }
}

static void sync_tensor(save_state *st, ph_value *v)
{
    ph_tensor *t = v->tensor;
    Onnx__TensorProto *p = t->proto;
    SET(st, p->name, v->name);
    if (t->storage == PHI_DATA_MAPPED || t->storage == PHI_DATA_OWNED) {
        ProtobufCBinaryData raw = {t->nbytes, (uint8_t *)t->data};
        SET(st, p->has_raw_data, 1);
        SET(st, p->raw_data, raw);
        if (t->external) { /* written inline: the output is self-contained */
            SET(st, p->has_data_location, 0);
            SET(st, p->data_location, ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT);
            SET(st, p->n_external_data, 0);
        }
    }
}

static void sync_graph(save_state *st, ph_graph *g)
{
    Onnx__GraphProto *gp = g->proto;
    phi_graph_compact_inits(g);
    Onnx__NodeProto **nodes = tmp_alloc(st, g->n_nodes * sizeof *nodes);
    Onnx__TensorProto **inits = tmp_alloc(st, g->n_inits * sizeof *inits);
    Onnx__ValueInfoProto **ins = tmp_alloc(st, g->n_inputs * sizeof *ins);
    Onnx__ValueInfoProto **outs = tmp_alloc(st, g->n_outputs * sizeof *outs);
    Onnx__ValueInfoProto **vis = tmp_alloc(st, g->n_value_info * sizeof *vis);
    if (st->oom)
        return;
    size_t k = 0, n_names = 0;
    for (ph_node *n = g->first; n; n = n->next)
        n_names += n->n_inputs + n->n_outputs;
    char **names = tmp_alloc(st, n_names * sizeof *names);
    if (!names)
        return;
    for (ph_node *n = g->first; n; n = n->next) {
        nodes[k++] = n->proto;
        names = sync_node(st, n, names);
    }
    SET(st, gp->node, nodes);
    SET(st, gp->n_node, k);
    for (size_t i = 0; i < g->n_inits; i++) {
        inits[i] = g->inits[i]->tensor->proto;
        sync_tensor(st, g->inits[i]);
    }
    SET(st, gp->initializer, inits);
    SET(st, gp->n_initializer, g->n_inits);
    for (size_t i = 0; i < g->n_inputs; i++) {
        ins[i] = g->input_vi[i];
        if (g->inputs[i]->type_dirty && phi_value_info_refresh(ins[i], g->inputs[i]))
            st->oom = 1;
        SET(st, ins[i]->name, g->inputs[i]->name);
    }
    SET(st, gp->input, ins);
    SET(st, gp->n_input, g->n_inputs);
    for (size_t i = 0; i < g->n_outputs; i++) {
        outs[i] = g->outputs[i].vi;
        if (g->outputs[i].value->type_dirty && g->outputs[i].value->rank >= 0 &&
            phi_value_info_refresh(outs[i], g->outputs[i].value))
            st->oom = 1;
        SET(st, outs[i]->name, g->outputs[i].value->name);
    }
    SET(st, gp->output, outs);
    SET(st, gp->n_output, g->n_outputs);
    /* value_info of values that still exist */
    k = 0;
    for (size_t i = 0; i < g->n_value_info; i++) {
        Onnx__ValueInfoProto *vi = g->value_info[i];
        if (vi->name && phi_graph_value(g, vi->name))
            vis[k++] = vi;
    }
    SET(st, gp->value_info, vis);
    SET(st, gp->n_value_info, k);
}

/* ------------------------------------------------------- file writer */

typedef struct file_writer {
    ProtobufCBuffer base;
    int fd;
    uint8_t *buf;
    size_t len, cap;
    int err; /* errno of the first failure */
} file_writer;

static void write_all(file_writer *w, const uint8_t *p, size_t n)
{
    while (n && !w->err) {
        ssize_t k = write(w->fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            w->err = errno;
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

static void flush_writer(file_writer *w)
{
    write_all(w, w->buf, w->len);
    w->len = 0;
}

static void writer_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    file_writer *w = (file_writer *)b;
    if (w->err)
        return;
    if (w->len + len > w->cap || len >= w->cap / 2)
        flush_writer(w); /* keep order: buffered bytes go before a large write */
    if (len >= w->cap / 2) {
        write_all(w, data, len); /* large tensors go straight from the mapping */
        return;
    }
    memcpy(w->buf + w->len, data, len);
    w->len += len;
}

/* ----------------------------------------------------------- saving */

static mode_t file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

PH_API int ph_model_save(ph_model *m, const char *path, ph_error *err)
{
    if (!path || !*path)
        return ph_error_set(err, PH_EINVAL, "no output path given");
    struct stat st_out;
    if (m->source_path && stat(path, &st_out) == 0 && (uint64_t)st_out.st_dev == m->source_dev &&
        (uint64_t)st_out.st_ino == m->source_ino)
        return ph_error_set(err, PH_EINVAL, "%s: refusing to overwrite the input model", path);
    phi_model_collect_some(m); /* removed nodes are not in the graph: no need to free them first */

    char tmp_path[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    if ((size_t)snprintf(tmp_path, sizeof tmp_path, "%.*s.%s.tmp.XXXXXX", dir_len, path,
                         slash ? slash + 1 : path) >= sizeof tmp_path)
        return ph_error_set(err, PH_EINVAL, "%s: path too long", path);
    int fd = mkstemp(tmp_path);
    if (fd < 0)
        return ph_error_set(err, PH_EIO, "%s: cannot create output: %s", path, strerror(errno));

    save_state st = {0};
    sync_graph(&st, m->graph);
    file_writer w = {.base = {writer_append}, .fd = fd, .cap = 1 << 20};
    w.buf = malloc(w.cap);
    if (st.oom || !w.buf) {
        w.err = ENOMEM;
    } else {
        protobuf_c_message_pack_to_buffer(&m->proto->base, &w.base);
        flush_writer(&w);
    }
    unsync_nodes(m->graph);
    restore(&st);
    free(w.buf);
    if (!w.err && fchmod(fd, file_mode()) != 0)
        w.err = errno;
    if (!w.err && fsync(fd) != 0)
        w.err = errno;
    if (close(fd) != 0 && !w.err)
        w.err = errno;
    if (!w.err && rename(tmp_path, path) != 0)
        w.err = errno;
    if (w.err) {
        unlink(tmp_path);
        return ph_error_set(err, w.err == ENOMEM ? PH_ENOMEM : PH_EIO, "%s: cannot write output: %s", path,
                            strerror(w.err));
    }
    return 0;
}
