/* sdk/src/onnx/save.c - write a model: the IR is put back into the protobuf tree
 * for the duration of one streaming pack, then the tree is restored.
 *
 * Nodes have no message between saves.  The main graph's nodes are encoded
 * straight from the IR into the writer's buffer (node_measure, node_write:
 * tag, length and bytes of each field, as protobuf-c writes them), as are
 * its initializers that hold only dims, data type, name and raw bytes; an
 * attribute message shared between nodes is packed once a save.  The rest
 * of the model is packed by protobuf-c in pieces around them (pack_model),
 * so the bytes are those of one protobuf-c pack of the whole tree.  A
 * subgraph's node messages are made from the IR (node_message) and live
 * until the save ends.
 *
 * One pass: the main graph's length, which comes before it, is written
 * after it (its width guessed from the first nodes; the file is written
 * again when the guess was wrong, or the graph measured first when it is
 * near a width's bound).  Nothing is serialized to memory first: a 256 KiB
 * buffered writer, initializer bytes from their mapping to the file without
 * a copy, the disk writes started as the file grows (sync_file_range).  The
 * files are written into a staging folder of the save beside the target,
 * fsync'ed and put in place by one commit (commit.c).
 *
 * External data: when the model written whole would pass the threshold
 * (protobuf's 2 GB limit by default), the large raw tensors go to one data
 * file beside the model (NAME.XXXXXX.data, a name unique to the save;
 * 4 KiB-aligned offsets). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "passhost/hashmap.h"
#include "wire.h"

/* --------------------------------------------------------- undo log */

typedef struct undo_entry {
    void *addr;
    size_t size;
    unsigned char old[16]; /* the largest field set: ProtobufCBinaryData */
} undo_entry;

/* A tensor whose raw bytes may go to the data file. */
typedef struct ext_item {
    Onnx__TensorProto *proto;
    const uint8_t *data;
    size_t len;
    uint64_t offset; /* in the data file, once placed */
} ext_item;

typedef struct save_state {
    undo_entry *undo;
    size_t n_undo, cap_undo;
    void **tmp;
    size_t n_tmp, cap_tmp;
    int oom;
    uint64_t min_ext;   /* least bytes of a tensor written as external data */
    uint64_t raw_bytes; /* raw tensor bytes the model holds */
    ext_item *ext;      /* tensors of at least min_ext raw bytes */
    size_t n_ext, cap_ext;
    Onnx__ValueInfoProto **made; /* input entries made for this save (freed after) */
    size_t n_made;
    Onnx__TensorProto **raw_set; /* tensors whose empty raw_data the save set: emptied after */
    size_t n_raw_set, cap_raw_set;
    /* scratch of the node writer (one main-graph node at a time) */
    char **names;       /* its input and output names */
    size_t *lens;       /* and their lengths */
    size_t cap_names;
    const struct attr_bytes **attr_bytes; /* its attributes' packed forms (attr_packed) */
    size_t cap_attrs;
    ph_hmap *attr_seen; /* shared attribute message -> its attr_bytes */
    uint8_t *chunk;     /* where the next attr_bytes goes, chunk_left bytes free */
    size_t chunk_left, attr_kept;
} save_state;

/* Set the field at addr (size bytes) to *val, remembering the old bytes. */
static void set_field(save_state *st, void *addr, const void *val, size_t size)
{
    if (st->oom || ir_grow((void **)&st->undo, &st->cap_undo, st->n_undo + 1, sizeof *st->undo)) {
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
    if (st->oom || ir_grow((void **)&st->tmp, &st->cap_tmp, st->n_tmp + 1, sizeof *st->tmp)) {
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
    for (size_t i = 0; i < st->n_raw_set; i++) { /* after the log, which restores what it set on top */
        st->raw_set[i]->has_raw_data = 0;
        st->raw_set[i]->raw_data = (ProtobufCBinaryData){0, NULL};
    }
    for (size_t i = 0; i < st->n_made; i++) /* before the tmp blocks: made is one */
        protobuf_c_message_free_unpacked(&st->made[i]->base, NULL);
    for (size_t i = 0; i < st->n_tmp; i++)
        free(st->tmp[i]);
    free(st->undo);
    free(st->tmp);
    free(st->ext);
    free(st->names);
    free(st->lens);
    free(st->attr_bytes);
    ph_hmap_free(st->attr_seen);
}

/* ----------------------------------------------------- IR -> protobuf */

/* the name written for an omitted input or output (never modified) */
#define EMPTY_NAME ((char *)"")

static void sync_graph(save_state *st, ph_graph *g);

/* What a node's message holds, read from the IR here and only here (the
 * node record's layout is the IR's): its input and output names in the
 * caller's array, the other fields borrowed from n. */
typedef struct node_view {
    size_t n_in, n_out; /* names[0, n_in) inputs, then the outputs */
    char *name, *op_type, *domain, *doc_string; /* NULL: absent */
    Onnx__AttributeProto **attrs;
    size_t n_attrs;
    const ProtobufCMessageUnknownField *unknown;
    size_t n_unknown;
    int shared_attrs; /* the attribute messages lie in the model's arena, shared
                         between nodes and unchanged during the save */
    size_t name_len, op_type_len, domain_len, doc_len; /* set by node_measure */
} node_view;

static void node_view_of(const ph_node *n, char **names, node_view *v)
{
    v->n_in = n->n_inputs;
    v->n_out = n->n_outputs;
    for (size_t i = 0; i < n->n_inputs; i++)
        names[i] = n->inputs[i] ? n->inputs[i]->name : EMPTY_NAME;
    names += n->n_inputs;
    for (size_t i = 0; i < n->n_outputs; i++)
        names[i] = n->outputs[i] ? n->outputs[i]->name : EMPTY_NAME;
    v->name = n->name;
    v->op_type = (char *)ir_node_op_type(n);
    v->attrs = n->attrs;
    v->n_attrs = n->n_attrs;
    v->shared_attrs = !n->fields_owned && !ir_node_n_subgraphs(n) && !ir_node_n_attr_tensors(n);
    v->domain = v->doc_string = NULL;
    v->unknown = NULL;
    v->n_unknown = 0;
    if (n->rare) {
        v->domain = n->rare->domain;
        v->doc_string = n->rare->doc_string;
        if (n->rare->unknown) {
            v->n_unknown = n->rare->unknown->base.n_unknown_fields;
            v->unknown = n->rare->unknown->base.unknown_fields;
        }
    }
}

/* n's NodeProto into *p, made from the IR: its input and output names in
 * `names` (room for n_inputs + n_outputs), the rest borrowed from n. */
static void node_message(const ph_node *n, Onnx__NodeProto *p, char **names)
{
    node_view v;
    node_view_of(n, names, &v);
    *p = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
    p->input = names;
    p->n_input = v.n_in;
    p->output = names + v.n_in;
    p->n_output = v.n_out;
    p->name = v.name;
    p->op_type = v.op_type;
    p->attribute = v.attrs;
    p->n_attribute = v.n_attrs;
    p->domain = v.domain;
    p->doc_string = v.doc_string;
    p->base.n_unknown_fields = v.n_unknown;
    p->base.unknown_fields = (ProtobufCMessageUnknownField *)v.unknown;
}

/* Whether t's raw bytes field is empty, as between saves (the IR holds the
 * bytes): the save then sets it through raw_set, not the undo log. */
static int raw_empty(const ph_tensor *t)
{
    const Onnx__TensorProto *p = t->proto;
    return !p->has_raw_data && !p->raw_data.len && !p->raw_data.data && !t->external;
}

static void sync_tensor(save_state *st, ph_value *v)
{
    ph_tensor *t = v->tensor;
    if (!t->proto && !v->graph->parent && t->storage == IR_DATA_OWNED && (t->nbytes < st->min_ext || !t->nbytes)) {
        /* made in memory, in the main graph, too small for the data file:
         * written from the tensor itself (main_graph), no message needed */
        st->raw_bytes += t->nbytes;
        return;
    }
    Onnx__TensorProto *p = ir_tensor_proto(t);
    if (!p) {
        st->oom = 1;
        return;
    }
    /* the name: a main-graph initializer's is set as it is written (main_graph) */
    if (v->graph->parent && (!p->name || (p->name != v->name && strcmp(p->name, v->name) != 0)))
        SET(st, p->name, v->name);
    if (t->storage == IR_DATA_MAPPED || t->storage == IR_DATA_OWNED) {
        ProtobufCBinaryData raw = {t->nbytes, (uint8_t *)t->data};
        if (raw_empty(t) && st->n_raw_set < st->cap_raw_set) {
            /* the usual case, the field empty between saves: a list entry
             * of 8 bytes instead of two undo entries of 32 */
            st->raw_set[st->n_raw_set++] = p;
            p->has_raw_data = 1;
            p->raw_data = raw;
        } else {
            SET(st, p->has_raw_data, 1);
            SET(st, p->raw_data, raw);
        }
        if (t->external) { /* written inline unless placed in the data file */
            SET(st, p->has_data_location, 0);
            SET(st, p->data_location, ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT);
            SET(st, p->n_external_data, 0);
        }
    }
    if (p->has_raw_data) {
        st->raw_bytes += p->raw_data.len;
        if (p->raw_data.len >= st->min_ext && p->raw_data.len > 0) {
            if (ir_grow((void **)&st->ext, &st->cap_ext, st->n_ext + 1, sizeof *st->ext))
                st->oom = 1;
            else
                st->ext[st->n_ext++] = (ext_item){p, p->raw_data.data, p->raw_data.len, 0};
        }
    }
}

/* Models of ir_version 1 to 3 must list every initializer as a graph input
 * (onnx.checker: "in initializer but not in graph input").  The IR keeps the
 * initializers passes add as constants, so they are listed here, after the
 * declared inputs, for the file only: how many such listings main graph g
 * needs. */
static size_t ir3_listings(const ph_graph *g)
{
    int64_t ir = g->model->proto->ir_version;
    size_t n = 0;
    if (g->parent || ir < 1 || ir > 3)
        return 0;
    for (size_t i = 0; i < g->n_inits; i++)
        n += !g->inits[i]->is_input;
    return n;
}

static void sync_graph(save_state *st, ph_graph *g)
{
    Onnx__GraphProto *gp = g->proto;
    ir_graph_compact_inits(g);
    size_t n_list = ir3_listings(g);
    /* the main graph's node messages are made as they are written */
    size_t n_msgs = g->parent ? g->n_nodes : 0;
    Onnx__NodeProto **nodes = tmp_alloc(st, n_msgs * sizeof *nodes);
    Onnx__NodeProto *msgs = tmp_alloc(st, n_msgs * sizeof *msgs);
    Onnx__TensorProto **inits = tmp_alloc(st, g->n_inits * sizeof *inits);
    Onnx__ValueInfoProto **ins = tmp_alloc(st, (g->n_inputs + n_list) * sizeof *ins);
    if (n_list) /* the main graph only */
        st->made = tmp_alloc(st, n_list * sizeof *st->made);
    Onnx__ValueInfoProto **outs = tmp_alloc(st, g->n_outputs * sizeof *outs);
    Onnx__ValueInfoProto **vis = tmp_alloc(st, g->n_value_info * sizeof *vis);
    if (st->oom)
        return;
    size_t k = 0, n_names = 0;
    for (ph_node *n = g->first; n && n_msgs; n = n->next)
        n_names += n->n_inputs + n->n_outputs;
    char **names = tmp_alloc(st, n_names * sizeof *names);
    if (!names)
        return;
    /* the main graph's nodes are walked only for their bodies: not at all
     * in a graph without one */
    for (ph_node *n = n_msgs || ph_graph_has_bodies(g) ? g->first : NULL; n; n = n->next) {
        if (n_msgs) {
            node_message(n, &msgs[k], names);
            nodes[k] = &msgs[k];
            k++;
            names += n->n_inputs + n->n_outputs;
        }
        for (size_t s = 0; s < ir_node_n_subgraphs(n); s++)
            sync_graph(st, ir_node_subgraphs(n)[s].graph);
    }
    SET(st, gp->node, nodes);
    SET(st, gp->n_node, k);
    /* the raw bytes of a tensor whose field is empty go to raw_set (the
     * main graph's: one list), others to the log */
    if (!g->parent && !st->raw_set) {
        if (!(st->raw_set = tmp_alloc(st, g->n_inits * sizeof *st->raw_set)))
            return;
        st->cap_raw_set = g->n_inits;
    }
    for (size_t i = 0; i < g->n_inits; i++) {
        sync_tensor(st, g->inits[i]);
        inits[i] = g->inits[i]->tensor->proto; /* NULL for one main_graph writes from the tensor */
    }
    SET(st, gp->initializer, inits);
    SET(st, gp->n_initializer, g->n_inits);
    for (size_t i = 0; i < g->n_inputs; i++) {
        ins[i] = g->input_vi[i];
        if (g->inputs[i]->type_dirty && ir_value_info_refresh(ins[i], g->inputs[i]))
            st->oom = 1;
        SET(st, ins[i]->name, g->inputs[i]->name);
    }
    size_t n_in = g->n_inputs;
    for (size_t i = 0; i < g->n_inits && n_list && !st->oom; i++) {
        if (g->inits[i]->is_input)
            continue;
        if (!(ins[n_in++] = st->made[st->n_made++] = ir_value_info_new(g->inits[i]))) {
            st->n_made--;
            st->oom = 1;
        }
    }
    SET(st, gp->input, ins);
    SET(st, gp->n_input, n_in);
    for (size_t i = 0; i < g->n_outputs; i++) {
        outs[i] = g->outputs[i].vi;
        /* a known dtype is written even when the rank is not (Squeeze with
           axes as an input) */
        const ph_value *ov = g->outputs[i].value;
        if (ov->type_dirty && (ov->rank >= 0 || ov->dtype) && ir_value_info_refresh(outs[i], ov))
            st->oom = 1;
        SET(st, outs[i]->name, g->outputs[i].value->name);
    }
    SET(st, gp->output, outs);
    SET(st, gp->n_output, g->n_outputs);
    /* value_info of values that still exist */
    k = 0;
    for (size_t i = 0; i < g->n_value_info; i++) {
        Onnx__ValueInfoProto *vi = g->value_info[i];
        if (vi->name && ir_graph_value(g, vi->name))
            vis[k++] = vi;
    }
    SET(st, gp->value_info, vis);
    SET(st, gp->n_value_info, k);
}

/* ------------------------------------------------------- file writer */

enum { WRITEBACK_STEP = 8 << 20, RELEASE_STEP = 1 << 20 };

typedef struct file_writer {
    ProtobufCBuffer base;
    int fd;
    uint8_t *buf;
    size_t len, cap;
    int err; /* errno of the first failure */
    uint64_t off; /* bytes written to the file so far (the buffer's not counted) */
    uint64_t synced; /* bytes whose writeback has been started */
    uint64_t released; /* bytes written when the input's pages were last given back */
    const ph_model *model; /* whose mappings large writes may come from */
} file_writer;

/* Bytes [p, p + len) were just written from the model's read-only mapping of
 * a file: let the process drop those pages (MADV_DONTNEED on a private
 * mapping never written to: the kernel reads them from the file again if
 * they are needed), so writing a model of many GB does not make the
 * process hold all of it.  Anything not inside a mapping is left alone. */
static void release_mapped(const ph_model *m, const uint8_t *p, size_t len)
{
    for (const ir_mapping *map = m ? m->mappings : NULL; map; map = map->next) {
        if (!map->data || p < map->data || len > map->size || p > map->data + map->size - len)
            continue;
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + len) & ~(page - 1);
        if (hi > lo)
            madvise((void *)lo, hi - lo, MADV_DONTNEED);
        return;
    }
}

/* Bytes [p, p + len) are about to be written from the model's mapping of
 * a file: map their pages in one call first (MADV_POPULATE_READ, Linux
 * 5.14).  write(2) from pages not yet mapped copies until the first missing
 * one, zeroes the rest of the page cache folio it was filling, faults the
 * page in and starts again, page by page: about half of a large save's
 * time.  Older kernels refuse the advice and the write works as before. */
static void populate_mapped(const ph_model *m, const uint8_t *p, size_t len)
{
#ifdef MADV_POPULATE_READ
    for (const ir_mapping *map = m ? m->mappings : NULL; map; map = map->next) {
        if (!map->data || p < map->data || len > map->size || p > map->data + map->size - len)
            continue;
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t lo = (uintptr_t)p & ~(page - 1), hi = ((uintptr_t)p + len + page - 1) & ~(page - 1);
        madvise((void *)lo, hi - lo, MADV_POPULATE_READ);
        return;
    }
#else
    (void)m, (void)p, (void)len;
#endif
}

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
        w->off += (uint64_t)k;
    }
    /* start the disk writes of what is written so far, without waiting
     * for them: the fsync that ends the save then waits for the last
     * pieces only, not for the whole file */
    if (!w->err && w->off - w->synced >= WRITEBACK_STEP) {
        sync_file_range(w->fd, (off_t)w->synced, (off_t)(w->off - w->synced), SYNC_FILE_RANGE_WRITE);
        w->synced = w->off;
    }
    /* Give back the input's pages read so far, every MiB written: small
     * weights are copied from the mapping into the buffer, a few bytes of
     * a page each, so 1 MiB of output can touch many MiB of input. */
    if (!w->err && w->off - w->released >= RELEASE_STEP) {
        for (const ir_mapping *map = w->model ? w->model->mappings : NULL; map; map = map->next)
            ir_mapping_release(map);
        w->released = w->off;
    }
}

/* A large tensor's bytes, written straight from where they are: pages of
 * the model's mapping are mapped in before and dropped after each piece of
 * at most 64 MiB, so a save never holds more of the input than that. */
static void write_tensor_bytes(file_writer *w, const uint8_t *p, size_t n)
{
    const size_t piece = (size_t)64 << 20;
    for (size_t at = 0; at < n && !w->err; at += piece) {
        size_t len = n - at < piece ? n - at : piece;
        populate_mapped(w->model, p + at, len);
        write_all(w, p + at, len);
        release_mapped(w->model, p + at, len);
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
    if (w->err || len == 0) /* empty bytes fields come with data NULL */
        return;
    if (w->len + len > w->cap || len >= w->cap / 2)
        flush_writer(w); /* keep order: buffered bytes go before a large write */
    if (len >= w->cap / 2) {
        write_tensor_bytes(w, data, len); /* large tensors go straight from the mapping */
        return;
    }
    memcpy(w->buf + w->len, data, len);
    w->len += len;
}

/* ------------------------------------------------ the model, in pieces */

/* The model is written as protobuf-c would pack the whole tree, but the
 * main graph's nodes and plain initializers are encoded here, straight from
 * the IR into the writer's buffer: protobuf-c would walk each message twice
 * (its size, then its bytes) through its descriptors.  protobuf-c writes a
 * message's fields in the order of their numbers, each repeated element
 * with its own tag, a string or bytes field as tag, length and bytes, then
 * the message's unknown fields (tag and the bytes kept); this writes the
 * same.  Every field number here is below 16, so each tag is one byte. */

enum {
    MODEL_GRAPH_TAG = 7 << 3 | 2,
    GRAPH_NODE_TAG = 1 << 3 | 2,
    GRAPH_NAME_TAG = 2 << 3 | 2,
    GRAPH_INIT_TAG = 5 << 3 | 2,
    NODE_INPUT_TAG = 1 << 3 | 2,
    NODE_OUTPUT_TAG = 2 << 3 | 2,
    NODE_NAME_TAG = 3 << 3 | 2,
    NODE_OP_TYPE_TAG = 4 << 3 | 2,
    NODE_ATTR_TAG = 5 << 3 | 2,
    NODE_DOC_TAG = 6 << 3 | 2,
    NODE_DOMAIN_TAG = 7 << 3 | 2,
    TENSOR_DIMS_TAG = 1 << 3 | 0,
    TENSOR_TYPE_TAG = 2 << 3 | 0,
    TENSOR_NAME_TAG = 8 << 3 | 2,
    TENSOR_RAW_TAG = 9 << 3 | 2,
};

/* Bytes of a length-delimited field of len bytes (one-byte tag). */
static inline uint64_t field_size(uint64_t len) { return 1 + onnx_wire_varint_size(len) + len; }

/* Room for n bytes at the end of w's buffer (n well below its size). */
static inline uint8_t *writer_room(file_writer *w, size_t n)
{
    if (w->cap - w->len < n)
        flush_writer(w);
    return w->buf + w->len;
}

/* A length-delimited field's tag and length. */
static void put_header(file_writer *w, uint8_t tag, uint64_t len)
{
    uint8_t *p = writer_room(w, 11);
    p[0] = tag;
    w->len += 1 + onnx_wire_put_varint(p + 1, len);
}

/* A varint field (protobuf-c writes a negative int32 as its 64-bit
 * two's complement, as int64). */
static void put_varint_field(file_writer *w, uint8_t tag, uint64_t v)
{
    uint8_t *p = writer_room(w, 11);
    p[0] = tag;
    w->len += 1 + onnx_wire_put_varint(p + 1, v);
}

enum { SMALL_FIELD = 4096 }; /* larger ones go through writer_append */

/* A string or bytes field: tag, length, bytes. */
static inline void put_bytes(file_writer *w, uint8_t tag, const void *data, size_t len)
{
    if (len > SMALL_FIELD) {
        put_header(w, tag, len);
        writer_append(&w->base, len, data);
        return;
    }
    uint8_t *p = writer_room(w, 11 + len);
    p[0] = tag;
    size_t k = 1 + onnx_wire_put_varint(p + 1, len);
    if (len)
        memcpy(p + k, data, len);
    w->len += k + len;
}

/* A message's unknown fields: their size, and their bytes. */
static uint64_t unknown_size(const ProtobufCMessageUnknownField *u, size_t n)
{
    uint64_t size = 0;
    for (size_t i = 0; i < n; i++)
        size += onnx_wire_varint_size((uint64_t)u[i].tag << 3 | u[i].wire_type) + u[i].len;
    return size;
}

static void put_unknown(file_writer *w, const ProtobufCMessageUnknownField *u, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t *p = writer_room(w, 10);
        w->len += onnx_wire_put_varint(p, (uint64_t)u[i].tag << 3 | u[i].wire_type);
        writer_append(&w->base, u[i].len, u[i].data);
    }
}

/* --- attributes: each shared message packed once */

/* An attribute message's packed size, with its bytes when they are kept. */
typedef struct attr_bytes {
    uint32_t len;
    uint32_t kept; /* bytes[] holds the message */
    uint8_t bytes[];
} attr_bytes;

enum {
    ATTR_KEEP_MAX = 1024,        /* bytes of a message kept whole */
    ATTR_KEPT_BUDGET = 8 << 20,  /* bytes the save keeps in all */
    ATTR_CHUNK = 64 << 10
};

/* The packed form of attribute message a, shared between nodes: packed once
 * a save, then copied.  NULL when it is not kept (the budget spent: the
 * caller packs it) or out of memory (st->oom: the save fails, as any other
 * allocation of the save that fails). */
static const attr_bytes *attr_packed(save_state *st, const Onnx__AttributeProto *a)
{
    if (st->attr_kept >= ATTR_KEPT_BUDGET || st->oom)
        return NULL;
    if (!st->attr_seen && !(st->attr_seen = ph_hmap_new(NULL, NULL))) {
        st->oom = 1;
        return NULL;
    }
    uint64_t h = ph_hash_ptr(a);
    int created;
    void **slot = ph_hmap_slot(st->attr_seen, h, a, &created);
    if (!slot) {
        st->oom = 1;
        return NULL;
    }
    if (!created)
        return *slot;
    size_t len = protobuf_c_message_get_packed_size(&a->base);
    size_t need = (sizeof(attr_bytes) + (len <= ATTR_KEEP_MAX ? len : 0) + 7) & ~(size_t)7;
    if (need > st->chunk_left) {
        if (!(st->chunk = tmp_alloc(st, ATTR_CHUNK))) { /* sets st->oom */
            st->chunk_left = 0;
            *slot = NULL; /* (the map is freed with the save) */
            return NULL;
        }
        st->chunk_left = ATTR_CHUNK;
    }
    attr_bytes *b = (attr_bytes *)st->chunk;
    st->chunk += need;
    st->chunk_left -= need;
    st->attr_kept += need;
    b->len = (uint32_t)len;
    b->kept = len <= ATTR_KEEP_MAX;
    if (b->kept)
        protobuf_c_message_pack(&a->base, b->bytes);
    *slot = b;
    return b;
}

/* --- nodes */

/* Room in the node writer's scratch for a node's names and attributes; 0
 * or -1 (out of memory). */
static int node_room(save_state *st, size_t n_names, size_t n_attrs)
{
    if (n_names > st->cap_names) {
        size_t cap = st->cap_names;
        if (ir_grow((void **)&st->names, &cap, n_names, sizeof *st->names) ||
            ir_grow((void **)&st->lens, &st->cap_names, n_names, sizeof *st->lens))
            return -1;
    }
    if (n_attrs > st->cap_attrs &&
        ir_grow((void **)&st->attr_bytes, &st->cap_attrs, n_attrs, sizeof *st->attr_bytes))
        return -1;
    return 0;
}

/* Main-graph node n: its view in *v, its names' lengths and attributes'
 * packed forms in the scratch; returns its message's size (0 with st->oom
 * when out of memory). */
static uint64_t node_measure(save_state *st, const ph_node *n, node_view *v)
{
    if (node_room(st, (size_t)n->n_inputs + n->n_outputs, n->n_attrs)) {
        st->oom = 1;
        return 0;
    }
    node_view_of(n, st->names, v);
    uint64_t size = 0;
    for (size_t i = 0, k = v->n_in + v->n_out; i < k; i++)
        size += field_size(st->lens[i] = strlen(st->names[i]));
    if (v->name)
        size += field_size(v->name_len = strlen(v->name));
    if (v->op_type)
        size += field_size(v->op_type_len = strlen(v->op_type));
    for (size_t i = 0; i < v->n_attrs; i++) {
        const attr_bytes *b = v->shared_attrs ? attr_packed(st, v->attrs[i]) : NULL;
        st->attr_bytes[i] = b;
        size += field_size(b ? b->len : protobuf_c_message_get_packed_size(&v->attrs[i]->base));
    }
    if (v->doc_string)
        size += field_size(v->doc_len = strlen(v->doc_string));
    if (v->domain)
        size += field_size(v->domain_len = strlen(v->domain));
    return size + unknown_size(v->unknown, v->n_unknown);
}

/* The node node_measure just measured (size bytes), as a GraphProto.node
 * element. */
static void node_write(save_state *st, file_writer *w, const node_view *v, uint64_t size)
{
    put_header(w, GRAPH_NODE_TAG, size);
    for (size_t i = 0; i < v->n_in; i++)
        put_bytes(w, NODE_INPUT_TAG, st->names[i], st->lens[i]);
    for (size_t i = v->n_in; i < v->n_in + v->n_out; i++)
        put_bytes(w, NODE_OUTPUT_TAG, st->names[i], st->lens[i]);
    if (v->name)
        put_bytes(w, NODE_NAME_TAG, v->name, v->name_len);
    if (v->op_type)
        put_bytes(w, NODE_OP_TYPE_TAG, v->op_type, v->op_type_len);
    for (size_t i = 0; i < v->n_attrs; i++) {
        const attr_bytes *b = st->attr_bytes[i];
        if (b && b->kept) {
            put_bytes(w, NODE_ATTR_TAG, b->bytes, b->len);
            continue;
        }
        put_header(w, NODE_ATTR_TAG, b ? b->len : protobuf_c_message_get_packed_size(&v->attrs[i]->base));
        protobuf_c_message_pack_to_buffer(&v->attrs[i]->base, &w->base);
    }
    if (v->doc_string)
        put_bytes(w, NODE_DOC_TAG, v->doc_string, v->doc_len);
    if (v->domain)
        put_bytes(w, NODE_DOMAIN_TAG, v->domain, v->domain_len);
    put_unknown(w, v->unknown, v->n_unknown);
}

/* --- initializers */

/* The fields of a plain tensor (below), from its message or, for a tensor
 * made in memory, from the tensor itself (as its message would hold them). */
typedef struct tensor_view {
    const int64_t *dims;
    size_t n_dims;
    int has_type, dtype, has_raw;
    const uint8_t *raw;
    size_t raw_len;
} tensor_view;

static tensor_view view_of(const ph_tensor *t)
{
    const Onnx__TensorProto *p = t->proto;
    if (p)
        return (tensor_view){p->dims, p->n_dims, p->has_data_type, p->data_type, p->has_raw_data, p->raw_data.data,
                             p->raw_data.len};
    return (tensor_view){t->dims, t->rank, 1, t->dtype, 1, t->data, t->nbytes};
}

/* Whether tensor p has only the fields an initializer the IR holds has
 * (dims, data type, name, raw bytes): those are encoded here, others by
 * protobuf-c. */
static int tensor_plain(const Onnx__TensorProto *p)
{
    return !p->segment && !p->n_float_data && !p->n_int32_data && !p->n_string_data && !p->n_int64_data &&
           !p->doc_string && !p->n_external_data && !p->has_data_location && !p->n_double_data &&
           !p->n_uint64_data && !p->base.n_unknown_fields;
}

/* A plain tensor's message size, named name (name_len bytes: the value's
 * name, which the proto may not hold). */
static uint64_t tensor_size(const tensor_view *p, size_t name_len)
{
    uint64_t size = p->n_dims; /* a tag a dim */
    for (size_t i = 0; i < p->n_dims; i++)
        size += onnx_wire_varint_size((uint64_t)p->dims[i]);
    if (p->has_type)
        size += 1 + onnx_wire_varint_size((uint64_t)(int64_t)p->dtype);
    size += field_size(name_len);
    if (p->has_raw)
        size += field_size(p->raw_len);
    return size;
}

static void tensor_write(file_writer *w, const tensor_view *p, const char *name, size_t name_len)
{
    for (size_t i = 0; i < p->n_dims; i++)
        put_varint_field(w, TENSOR_DIMS_TAG, (uint64_t)p->dims[i]);
    if (p->has_type)
        put_varint_field(w, TENSOR_TYPE_TAG, (uint64_t)(int64_t)p->dtype);
    put_bytes(w, TENSOR_NAME_TAG, name, name_len);
    if (p->has_raw)
        put_bytes(w, TENSOR_RAW_TAG, p->raw, p->raw_len);
}

/* --- the main graph and the model */

/* The main graph's message (its nodes are not in it during the save: they
 * are written from the IR), written through w or, with w NULL, only
 * measured; returns its size. */
static uint64_t main_graph(save_state *st, const ph_graph *g, file_writer *w)
{
    const Onnx__GraphProto *gp = g->proto;
    uint64_t size = 0;
    for (const ph_node *n = g->first; n && !st->oom && !(w && w->err); n = n->next) {
        node_view v;
        uint64_t s = node_measure(st, n, &v);
        size += field_size(s);
        if (w && !st->oom)
            node_write(st, w, &v, s);
    }
    if (gp->name) {
        size_t len = strlen(gp->name);
        size += field_size(len);
        if (w)
            put_bytes(w, GRAPH_NAME_TAG, gp->name, len);
    }
    for (size_t i = 0; i < g->n_inits && !(w && w->err); i++) { /* gp->initializer's protos */
        const ph_value *iv = g->inits[i];
        Onnx__TensorProto *p = iv->tensor->proto; /* NULL: made in memory, plain */
        int plain = !p || tensor_plain(p);
        size_t name_len = plain ? strlen(iv->name) : 0;
        if (!plain && (!p->name || (p->name != iv->name && strcmp(p->name, iv->name) != 0)))
            SET(st, p->name, iv->name); /* for protobuf-c */
        tensor_view tv = view_of(iv->tensor);
        uint64_t s = plain ? tensor_size(&tv, name_len) : protobuf_c_message_get_packed_size(&p->base);
        size += field_size(s);
        if (!w)
            continue;
        put_header(w, GRAPH_INIT_TAG, s);
        if (plain)
            tensor_write(w, &tv, iv->name, name_len);
        else
            protobuf_c_message_pack_to_buffer(&p->base, &w->base);
    }
    /* the fields after the initializers (9 and up), and the unknown ones */
    Onnx__GraphProto rest = *gp;
    rest.n_node = rest.n_initializer = 0;
    rest.node = NULL;
    rest.initializer = NULL;
    rest.name = NULL;
    size += protobuf_c_message_get_packed_size(&rest.base);
    if (w)
        protobuf_c_message_pack_to_buffer(&rest.base, &w->base);
    return size;
}

/* The model's fields numbered before its graph (1 to 6), and those after
 * it with its unknown fields, as two messages that borrow them. */
static void model_split(const Onnx__ModelProto *mp, Onnx__ModelProto *before, Onnx__ModelProto *after)
{
    *before = (Onnx__ModelProto)ONNX__MODEL_PROTO__INIT;
    before->has_ir_version = mp->has_ir_version;
    before->ir_version = mp->ir_version;
    before->producer_name = mp->producer_name;
    before->producer_version = mp->producer_version;
    before->domain = mp->domain;
    before->has_model_version = mp->has_model_version;
    before->model_version = mp->model_version;
    before->doc_string = mp->doc_string;
    *after = *mp;
    after->has_ir_version = after->has_model_version = 0;
    after->producer_name = after->producer_version = after->domain = after->doc_string = NULL;
    after->graph = NULL;
}

/* The packed size of the whole model, its main graph's in *graph. */
static uint64_t model_size(save_state *st, const ph_model *m, uint64_t *graph)
{
    Onnx__ModelProto before, after;
    model_split(m->proto, &before, &after);
    uint64_t g = *graph = main_graph(st, m->graph, NULL);
    return protobuf_c_message_get_packed_size(&before.base) + field_size(g) +
           protobuf_c_message_get_packed_size(&after.base);
}

/* How many bytes the main graph's length takes, guessed from a measure of
 * its first nodes: 0 when the guess could be wrong (a graph near a size
 * where its length takes one more byte). */
static size_t graph_length_guess(save_state *st, const ph_graph *g)
{
    enum { SAMPLE = 256 };
    uint64_t sampled = 0, k = 0;
    for (const ph_node *n = g->first; n && k < SAMPLE && !st->oom; n = n->next, k++) {
        node_view v;
        sampled += field_size(node_measure(st, n, &v));
    }
    uint64_t est = (k ? sampled * (uint64_t)g->n_nodes / k : 0) + st->raw_bytes + 32 * (uint64_t)g->n_inits;
    size_t lo = onnx_wire_varint_size(est / 2), hi = onnx_wire_varint_size(est * 2);
    return lo == hi && est > 0 ? lo : 0;
}

/* Write the model: the bytes of one protobuf-c pack of the whole tree.  The
 * main graph's length comes before it: graph is that length when known
 * (else UINT64_MAX), or its size in bytes is guessed, the graph written
 * after room for it and its length put there at the end; when the guess
 * was wrong, the file is written again. */
static void pack_model(save_state *st, const ph_model *m, file_writer *w, uint64_t graph)
{
    size_t width = graph != UINT64_MAX ? 0 : graph_length_guess(st, m->graph);
    if (graph == UINT64_MAX && !width)
        model_size(st, m, &graph);
    if (st->oom) {
        w->err = ENOMEM;
        return;
    }
    Onnx__ModelProto before, after;
    model_split(m->proto, &before, &after);
    protobuf_c_message_pack_to_buffer(&before.base, &w->base);
    uint64_t at = 0;
    if (width) { /* the length goes at `at` once known */
        uint8_t *p = writer_room(w, 1 + width);
        p[0] = MODEL_GRAPH_TAG;
        memset(p + 1, 0, width);
        at = w->off + w->len + 1;
        w->len += 1 + width;
    } else {
        put_header(w, MODEL_GRAPH_TAG, graph);
    }
    uint64_t g = main_graph(st, m->graph, w);
    protobuf_c_message_pack_to_buffer(&after.base, &w->base);
    flush_writer(w);
    if (st->oom && !w->err)
        w->err = ENOMEM;
    if (w->err || !width)
        return;
    if (onnx_wire_varint_size(g) == width) {
        uint8_t b[10];
        onnx_wire_put_varint(b, g);
        if (pwrite(w->fd, b, width, (off_t)at) != (ssize_t)width)
            w->err = errno ? errno : EIO;
        return;
    }
    /* the guess was wrong: again, with the length now known */
    if (ftruncate(w->fd, 0) != 0 || lseek(w->fd, 0, SEEK_SET) != 0) {
        w->err = errno;
        return;
    }
    w->off = w->synced = 0;
    pack_model(st, m, w, g);
}

/* ----------------------------------------------------------- saving */

static mode_t file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

#define EXT_ALIGN 4096u

/* A file the save writes in the staging folder. */
typedef struct out_file {
    char path[PATH_MAX];
    int fd; /* -1 when closed */
    int live; /* exists on disk under path */
} out_file;

static int out_make(out_file *f, const char *folder, const char *name)
{
    f->fd = -1;
    f->live = 0;
    if ((size_t)snprintf(f->path, sizeof f->path, "%s/%s", folder, name) >= sizeof f->path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    f->fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (f->fd < 0)
        return -1;
    f->live = 1;
    return 0;
}

/* Close the file (errno of a failure into *werr unless set). */
static void out_close(out_file *f, int *werr)
{
    if (f->fd >= 0) {
        if (!*werr && fchmod(f->fd, file_mode()) != 0)
            *werr = errno;
        if (!*werr && fsync(f->fd) != 0)
            *werr = errno;
        if (close(f->fd) != 0 && !*werr)
            *werr = errno;
        f->fd = -1;
    }
}

static void out_drop(out_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    if (f->live)
        unlink(f->path);
    f->live = 0;
}

/* Six characters that make a data file's name unique to its save. */
static void unique_tag(char tag[7])
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char r[6];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)getpid() << 20 ^ (uint64_t)ts.tv_sec;
        for (int i = 0; i < 6; i++, x >>= 8)
            r[i] = (unsigned char)x;
    }
    for (int i = 0; i < 6; i++)
        tag[i] = digits[r[i] % (sizeof digits - 1)];
    tag[6] = 0;
}

PH_API int ph_model_reads_file(const ph_model *m, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (m->source_path && (uint64_t)st.st_dev == m->source_dev && (uint64_t)st.st_ino == m->source_ino)
        return 1;
    for (const ir_mapping *map = m->mappings; map; map = map->next)
        if ((uint64_t)st.st_dev == map->dev && (uint64_t)st.st_ino == map->ino)
            return 1;
    return 0;
}

PH_API size_t ph_model_files(const ph_model *m, uint64_t *dev, uint64_t *ino, size_t max)
{
    size_t n = 0;
    if (m->source_path) {
        if (n < max)
            dev[n] = m->source_dev, ino[n] = m->source_ino;
        n++;
    }
    for (const ir_mapping *map = m->mappings; map; map = map->next) {
        if (m->source_path && map->dev == m->source_dev && map->ino == m->source_ino)
            continue; /* the model's own file */
        if (n < max)
            dev[n] = map->dev, ino[n] = map->ino;
        n++;
    }
    return n;
}

static const char *write_error(int e)
{
    if (e == EFAULT) /* write(2) from a mapping of a file that shrank */
        return "the input changed while it was being copied (was the file truncated?)";
    return strerror(e);
}

/* Move the tensors of st->ext into the data file: offsets 4 KiB-aligned,
 * the protos pointing at DATA_NAME.  Returns the data file's size. */
static uint64_t place_external(save_state *st, const char *data_name)
{
    uint64_t off = 0;
    for (size_t i = 0; i < st->n_ext && !st->oom; i++) {
        ext_item *x = &st->ext[i];
        off = (off + EXT_ALIGN - 1) / EXT_ALIGN * EXT_ALIGN;
        x->offset = off;
        off += x->len;
        Onnx__StringStringEntryProto *e = tmp_alloc(st, 3 * sizeof *e);
        Onnx__StringStringEntryProto **arr = tmp_alloc(st, 3 * sizeof *arr);
        char *num = tmp_alloc(st, 48);
        if (!e || !arr || !num)
            return 0;
        snprintf(num, 48, "%llu", (unsigned long long)x->offset);
        snprintf(num + 24, 24, "%llu", (unsigned long long)x->len);
        const char *keys[3] = {"location", "offset", "length"};
        const char *vals[3] = {data_name, num, num + 24};
        for (int k = 0; k < 3; k++) {
            onnx__string_string_entry_proto__init(&e[k]);
            e[k].key = (char *)keys[k];
            e[k].value = (char *)vals[k];
            arr[k] = &e[k];
        }
        Onnx__TensorProto *p = x->proto;
        SET(st, p->has_raw_data, 0);
        SET(st, p->raw_data, ((ProtobufCBinaryData){0, NULL}));
        SET(st, p->has_data_location, 1);
        SET(st, p->data_location, ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
        SET(st, p->external_data, arr);
        SET(st, p->n_external_data, 3);
    }
    return off;
}

/* Write the data file's bytes (zeros between tensors). */
static void write_external(file_writer *w, const save_state *st)
{
    static const uint8_t zeros[EXT_ALIGN];
    uint64_t at = 0;
    for (size_t i = 0; i < st->n_ext && !w->err; i++) {
        const ext_item *x = &st->ext[i];
        write_all(w, zeros, (size_t)(x->offset - at));
        write_tensor_bytes(w, x->data, x->len);
        at = x->offset + x->len;
    }
}

PH_API int ph_model_save(ph_model *m, const char *path, ph_error *err)
{
    return ph_model_save_with(m, path, NULL, err);
}

PH_API int ph_model_save_staged(ph_model *m, const char *folder, const char *name, const ph_save_options *opts,
                                ph_error *err)
{
    if (!folder || !name || !*name || strchr(name, '/'))
        return ph_error_set(err, PH_EINVAL, "no output name given");
    const ph_save_options *o = opts && opts->size >= sizeof *opts ? opts : NULL;
    uint64_t threshold = o && o->external_threshold ? o->external_threshold : PH_PROTOBUF_LIMIT;
    if (threshold > PH_PROTOBUF_LIMIT)
        threshold = PH_PROTOBUF_LIMIT;
    ir_model_collect_some(m); /* removed nodes are not in the graph: no need to free them first */

    out_file fm = {.fd = -1}, fd_ = {.fd = -1};
    if (out_make(&fm, folder, name) != 0)
        return ph_error_set(err, PH_EIO, "%s: cannot create output: %s", name, strerror(errno));

    save_state st = {.min_ext = o && o->external_min_bytes ? o->external_min_bytes : 1024};
    sync_graph(&st, m->graph);
    file_writer w = {.base = {writer_append}, .fd = fm.fd, .cap = 256 << 10, .model = m};
    w.buf = malloc(w.cap);
    int code = PH_EIO;
    const char *what = NULL;
    char tag[7], data_name[NAME_MAX + 1]; /* the protos point at data_name until they are packed */
    if (st.oom || !w.buf)
        w.err = ENOMEM;
    /* external data: only when the whole model would pass the threshold
     * (the packed size is only computed when that is possible at all) */
    uint64_t graph = UINT64_MAX; /* the main graph's length, once measured */
    if (!w.err && (threshold < (64u << 20) || st.raw_bytes >= threshold / 2) &&
        model_size(&st, m, &graph) > threshold) {
        unique_tag(tag);
        if ((size_t)snprintf(data_name, sizeof data_name, "%s.%s.data", name, tag) >= sizeof data_name) {
            w.err = ENAMETOOLONG;
        } else {
            place_external(&st, data_name);
            if (st.oom)
                w.err = ENOMEM;
            else if (model_size(&st, m, &graph) > PH_PROTOBUF_LIMIT) {
                code = PH_EUNSUPPORTED;
                what = "the model is larger than protobuf's 2 GB limit even with its large tensors as external data";
            } else if (out_make(&fd_, folder, data_name) != 0) {
                w.err = errno;
            } else {
                file_writer dw = {.base = {writer_append}, .fd = fd_.fd, .model = m};
                write_external(&dw, &st);
                w.err = dw.err;
                out_close(&fd_, &w.err);
            }
        }
    }
    if (!w.err && !what) {
        pack_model(&st, m, &w, graph);
    }
    restore(&st);
    free(w.buf);
    out_close(&fm, &w.err);
    if (!w.err && !what)
        return 0;
    out_drop(&fm);
    out_drop(&fd_);
    if (what)
        return ph_error_set(err, code, "%s: cannot write output: %s", name, what);
    return ph_error_set(err, w.err == ENOMEM ? PH_ENOMEM : PH_EIO, "%s: cannot write output: %s", name,
                        write_error(w.err));
}

/* ph_model_commit's keep: a file the model reads is never removed. */
static int model_reads(void *user, const char *path) { return ph_model_reads_file(user, path); }

PH_API int ph_model_save_with(ph_model *m, const char *path, const ph_save_options *opts, ph_error *err)
{
    if (!path || !*path)
        return ph_error_set(err, PH_EINVAL, "no output path given");
    const ph_save_options *o = opts && opts->size >= sizeof *opts ? opts : NULL;
    if (ph_model_reads_file(m, path))
        return ph_error_set(err, PH_EINVAL, "%s: refusing to overwrite the input model", path);
    char folder[PATH_MAX], target[PATH_MAX];
    int rc = ph_staging_make(path, 0, folder, sizeof folder, err);
    if (rc)
        return rc;
    if (o && o->temp_file)
        o->temp_file(o->user, folder, 1);
    const char *name = onnx_output_target(path, target, sizeof target) == 0 && strrchr(target, '/')
                           ? strrchr(target, '/') + 1 : target;
    ph_error e = {0};
    rc = ph_model_save_staged(m, folder, name, o, &e);
    if (rc) /* the message names the file as the output's name */
        rc = ph_error_set(err, rc, "%s%s", path, strncmp(e.message, name, strlen(name)) == 0
                                                     ? e.message + strlen(name) : e.message);
    char staged[PATH_MAX];
    if (!rc && (size_t)snprintf(staged, sizeof staged, "%s/%s", folder, name) >= sizeof staged)
        rc = ph_error_set(err, PH_EINVAL, "%s: path too long", path);
    if (!rc)
        rc = ph_model_commit(staged, path, model_reads, m, err);
    ph_staging_remove(folder);
    if (o && o->temp_file)
        o->temp_file(o->user, folder, 0);
    return rc;
}
